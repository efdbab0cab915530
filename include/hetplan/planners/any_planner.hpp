#pragma once
// A type-erased front end over the reference planners, for embedding and for the `hetplan`
// command: one call plans a problem with a planner chosen by name at run time. The searches
// behind it stay templates; the erasure costs one indirect call per plan() call, none inside
// a search. Every returned plan is simulated with the planner's own models and validated.
//
//   auto p = hetplan::planner_named("zorse");
//   auto out = p.plan(problem, {.top = 3});
//   for (auto& c : out.plans) ... c.est.time.iteration ...
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/planners/cephalo.hpp"
#include "hetplan/planners/sailor.hpp"
#include "hetplan/planners/zorse.hpp"

namespace hetplan {

struct planning_request {
    objective target = objective::throughput;
    std::optional<usd> max_cost{};          ///< per iteration
    std::optional<double> min_throughput{}; ///< iterations per second
    std::size_t top = 1;                    ///< plans wanted, best first
    const std::atomic<bool>* stop = nullptr;
    progress_callback progress{};           ///< where the planner supports it
};

struct plan_choice {
    plan pl;
    estimate est;
};

struct planning_outcome {
    std::string planner;
    std::vector<plan_choice> plans;  ///< best first; empty when nothing fits the request
    seconds elapsed{};
    bool stopped = false;            ///< the stop flag ended the search early
    std::vector<std::string> notes;
};

class any_planner {
public:
    using plan_fn = std::function<planning_outcome(const problem&, const planning_request&)>;
    using price_fn = std::function<estimate(const problem&, const plan&)>;
    using check_fn = std::function<validation_report(const problem&, const plan&)>;

    any_planner(std::string name, std::string paper, plan_fn plan, price_fn price, check_fn check)
        : name_(std::move(name)), paper_(std::move(paper)), plan_(std::move(plan)), price_(std::move(price)), check_(std::move(check)) {}

    [[nodiscard]] const std::string& name() const { return name_; }
    [[nodiscard]] const std::string& paper() const { return paper_; }
    /// Plans; then drops plans over the request's cost or under its throughput, with a note.
    [[nodiscard]] planning_outcome plan(const problem& pb, const planning_request& req = {}) const {
        const auto t0 = std::chrono::steady_clock::now();
        planning_outcome out = plan_(pb, req);
        out.planner = name_;
        const std::size_t before = out.plans.size();
        std::erase_if(out.plans, [&](const plan_choice& c) {
            return (req.max_cost && c.est.money.total.value > req.max_cost->value * (1 + 1e-12)) ||
                   (req.min_throughput && c.est.time.throughput() < *req.min_throughput * (1 - 1e-12));
        });
        if (out.plans.size() < before)
            out.notes.push_back(std::to_string(before - out.plans.size()) + " plan(s) dropped: over --max-cost or under --min-throughput");
        if (out.plans.size() > req.top) out.plans.resize(req.top);
        out.elapsed = seconds{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
        return out;
    }
    /// Prices a plan with this planner's models.
    [[nodiscard]] estimate price(const problem& pb, const hetplan::plan& pl) const { return price_(pb, pl); }
    /// Validates a plan against this planner's memory model.
    [[nodiscard]] validation_report check(const problem& pb, const hetplan::plan& pl) const { return check_(pb, pl); }

private:
    std::string name_, paper_;
    plan_fn plan_;
    price_fn price_;
    check_fn check_;
};

/// Sailor (SOSP '25): joint resource allocation and 3D parallelism, throughput or cost.
inline any_planner sailor_any_planner() {
    return {"sailor", "Sailor (shared/papers/000), §4.2",
            [](const problem& pb, const planning_request& req) {
                sailor_options opt;
                opt.target = req.target;
                opt.max_cost = req.max_cost;
                opt.min_throughput = req.min_throughput;
                opt.keep = std::max<std::size_t>(req.top, 1);
                opt.stop = req.stop;
                opt.progress = req.progress;
                sailor_planner<> p(opt);
                auto r = p.plan(pb);
                planning_outcome out;
                for (auto& c : r.ranked) out.plans.push_back({std::move(c.pl), c.est});
                out.stopped = r.stats.stopped;
                out.notes = std::move(r.notes);
                return out;
            },
            [](const problem& pb, const plan& pl) { return simulator<>{}.run(pb, pl); },
            [](const problem& pb, const plan& pl) { return validate(pb, pl); }};
}

/// Planners that maximise throughput only say so when asked for the cheapest plan.
inline void note_throughput_only(planning_outcome& out, const planning_request& req, const char* name) {
    if (req.target == objective::cost)
        out.notes.push_back(std::string(name) + " maximises throughput only; its plan's cost is reported, not minimised");
}

/// Cephalo: FSDP with per-GPU batch and state shares (analytical compute memory).
inline any_planner cephalo_any_planner() {
    return {"cephalo", "Cephalo (shared/papers/004), §2-3",
            [](const problem& pb, const planning_request& req) {
                auto r = cephalo_planner().plan(pb);
                planning_outcome out;
                if (r.pl) out.plans.push_back({std::move(*r.pl), r.est});
                out.notes = std::move(r.notes);
                note_throughput_only(out, req, "cephalo");
                return out;
            },
            [](const problem& pb, const plan& pl) { return cephalo_simulator{}.run(pb, pl); },
            [](const problem& pb, const plan& pl) { return validate(pb, pl, cephalo_memory_model{}); }};
}

/// Zorse: GPU groups from min-k-cuts, heterogeneous pipeline over Pipeline-Efficient ZeRO DP.
inline any_planner zorse_any_planner() {
    return {"zorse", "Zorse (shared/papers/001), §3",
            [](const problem& pb, const planning_request& req) {
                zorse_options opt;
                opt.stop = req.stop;
                opt.progress = req.progress;
                auto r = zorse_planner(opt).plan(pb);
                planning_outcome out;
                if (r.pl) out.plans.push_back({std::move(*r.pl), r.est});
                out.stopped = r.stopped;
                out.notes = std::move(r.notes);
                note_throughput_only(out, req, "zorse");
                return out;
            },
            [](const problem& pb, const plan& pl) { return zorse_simulator{}.run(pb, pl); },
            [](const problem& pb, const plan& pl) { return validate(pb, pl, zorse_memory_model{}); }};
}

/// Every reference planner, in the order of the papers' index.
inline std::vector<any_planner> builtin_planners() { return {sailor_any_planner(), zorse_any_planner(), cephalo_any_planner()}; }

inline any_planner planner_named(const std::string& name) {
    std::string known;
    for (auto& p : builtin_planners()) {
        if (p.name() == name) return p;
        known += (known.empty() ? "" : ", ") + p.name();
    }
    throw input_error("unknown planner '" + name + "' (known: " + known + ")");
}

}  // namespace hetplan
