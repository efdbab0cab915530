#pragma once
// The Pareto front of throughput against USD per iteration, or against GPUs (issue 21), from any
// planner that takes a budget or a GPU limit, by the epsilon-constraint method (Haimes, Lasdon and
// Wismer 1971): the fastest plan, then the fastest plan strictly cheaper (on strictly fewer GPUs)
// than the last one found, until there is none. Each point is the planner's own answer to a
// limited request, so the front is exact wherever the planner is exact under that limit:
// Sailor's exact search is (its stage DP carries USD, and with a GPU limit the GPU count, in
// its fronts; tests/planners/pareto.cpp checks both fronts against every plan its exhaustive
// solver prices); a planner with heuristics gives the front of what it finds.
//
//   auto front = hetplan::pareto_front(hetplan::sailor_planner<>{}, pb);
//   for (const auto& p : front.points) ...  // fastest first, each cheaper and slower than the one before (over GPUs: on fewer GPUs)
//   auto by_gpus = hetplan::pareto_front(planner, pb, {.axis = hetplan::pareto_axis::gpus});
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetplan/concepts/planner.hpp"
#include "hetplan/planners/any_planner.hpp"
#include "hetplan/search/request.hpp"
#include "hetplan/search/result.hpp"
#include "hetplan/search/run.hpp"

namespace hetplan {

/// What the front trades throughput against.
enum class pareto_axis {
    money,  ///< USD per iteration: each point cheaper than the one before (a budget, max_usd)
    gpus,   ///< GPUs: each point on fewer GPUs than the one before (a GPU limit, max_gpus)
};

struct pareto_options {
    pareto_axis axis = pareto_axis::money;
    std::size_t max_points = 64;  ///< searches at most this many points (the front may be longer: `complete` says)
    /// The next budget is the last point's cost times (1 - step): points closer in cost than
    /// that are one point. Throughputs within the objective's tie tolerance (0.1 %) are one
    /// point too: the cheaper one is kept (max_throughput's tie-break).
    double step = 1e-9;
    constraints limits{};  ///< a range: at most this much per iteration, at least this throughput, at most these GPUs
    stop_condition stop{};  ///< for the whole front; the points so far are returned
};

struct pareto_result {
    std::vector<ranked_plan> points;  ///< fastest first; each cheaper (on fewer GPUs) and slower than the one before (plans within 0.1 % of a point's time are that point)
    std::vector<std::string> notes;   ///< the notes of the searches that found a point (of the first, if none did), once each
    std::size_t searches = 0;
    bool complete = false;  ///< the last search found no cheaper plan (not stopped, not cut at max_points)
    bool stopped = false;
};

/// The front from `plan_within(limits)`, the planner's fastest plan under `limits` (a
/// plan_result whose best() is that plan, or none).
template <class PlanWithin>
    requires std::is_invocable_r_v<plan_result, PlanWithin&, const constraints&>
[[nodiscard]] pareto_result pareto_front_of(PlanWithin&& plan_within, const pareto_options& opt = {}) {
    if (!(opt.step > 0 && opt.step < 1)) throw input_error("pareto front: step must lie in (0, 1)");
    pareto_result out;
    constraints limits = opt.limits;
    double anchor = 0;  // the iteration time of the fastest plan the last point stands for
    auto note = [&](const std::string& n) {
        for (const std::string& m : out.notes)
            if (m == n) return;
        out.notes.push_back(n);
    };
    while (out.points.size() < opt.max_points) {
        if (opt.stop.requested()) {
            out.stopped = true;
            break;
        }
        plan_result r = plan_within(limits);
        ++out.searches;
        if (r.stopped) out.stopped = true;
        const ranked_plan* best = r.best();
        // The search that finds nothing cheaper ends the front; its notes say so at length.
        // Only when there is no point at all do they say why.
        if (best || out.points.empty())
            for (const std::string& n : r.notes) note(n);
        if (!best) {
            out.complete = !out.stopped;
            break;
        }
        const bool by_gpus = opt.axis == pareto_axis::gpus;
        const double price = by_gpus ? best->gpus() : best->cost().value;
        if (!out.points.empty() && !(price < (by_gpus ? out.points.back().gpus() : out.points.back().cost().value)))
            throw model_error("pareto front: a planner returned a plan over its limit (" +
                              (by_gpus ? std::to_string(best->gpus()) + " GPUs)" : std::to_string(price) + " USD)"));
        // A planner's fastest plan need not be the cheapest of those as fast (its solvers break
        // ties their own way): a cheaper one as fast, within the tie of the fastest plan the
        // point stood for (so that ties do not chain away from it), replaces it.
        if (!out.points.empty() && best->iteration().value <= anchor * (1 + search::tie_tolerance)) out.points.back() = *best;
        else anchor = best->iteration().value, out.points.push_back(*best);
        if (out.stopped) break;
        if (!(price > (by_gpus ? 1 : 0))) {  // nothing is cheaper than free, or smaller than one GPU
            out.complete = true;
            break;
        }
        if (by_gpus) limits.max_gpus = best->gpus() - 1;
        else limits.max_usd = price * (1 - opt.step);
    }
    return out;
}

/// The front of a planner (a concepts::planner): max_throughput requests with a budget.
template <concepts::planner P>
[[nodiscard]] pareto_result pareto_front(P& planner, const problem& pb, const pareto_options& opt = {}) {
    return pareto_front_of(
        [&](const constraints& limits) {
            plan_request<max_throughput> rq;
            rq.objective.limits = limits;
            rq.stop = opt.stop;
            return planner.plan(pb, rq);
        },
        opt);
}

/// The front of a type-erased planner (hetplan pareto, the Python module).
[[nodiscard]] inline pareto_result pareto_front(any_planner& planner, const problem& pb, const pareto_options& opt = {},
                                                planning_request base = {}) {
    return pareto_front_of(
        [&](const constraints& limits) {
            planning_request rq = base;
            rq.target = objective_kind::throughput;
            rq.limits = limits;
            rq.top = 1;
            rq.stop = opt.stop;
            return planner.plan(pb, rq);
        },
        opt);
}

}  // namespace hetplan
