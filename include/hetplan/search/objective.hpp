#pragma once
// The objectives a search minimises (concepts::objective), their constraints, and how a priced
// plan becomes objective_terms. Sailor §4.2.3: maximum throughput, or minimum cost, either under
// a budget (USD per iteration) or a minimum throughput; a user's own objective models the same
// concept (examples/carbon_objective.cpp).
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "hetplan/concepts/objective.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/problem.hpp"

namespace hetplan {

/// Constraints every objective checks in admits(): a budget, a minimum throughput and a most
/// GPUs. A search honours max_gpus exactly only where it counts the GPUs of its partial plans
/// (search::counts_gpus); floors of the count (0 where not counted) are admitted as floors.
struct constraints {
    std::optional<double> max_usd{};         ///< USD per iteration
    std::optional<double> min_throughput{};  ///< iterations per second
    std::optional<int> max_gpus{};           ///< GPUs the plan uses, all replicas and TP groups

    [[nodiscard]] bool admit(const objective_terms& t) const {
        if (max_usd && t.usd > *max_usd) return false;
        if (min_throughput && t.iteration * *min_throughput > 1.0) return false;
        if (max_gpus && t.gpus > *max_gpus) return false;
        return true;
    }
};

/// Fastest plan: seconds per iteration. Ties within 0.1 %: cheaper, then fewer cross-zone
/// boundaries, then fewer GPUs.
struct max_throughput {
    constraints limits{};
    static constexpr bool prefers_throughput = true;
    [[nodiscard]] double value(const objective_terms& t) const { return t.iteration; }
    [[nodiscard]] bool admits(const objective_terms& t) const { return limits.admit(t); }
    [[nodiscard]] bool uses_money() const { return limits.max_usd.has_value(); }
    [[nodiscard]] static auto tie_break(const objective_terms& t) { return std::tuple(t.usd, t.cross_zone, t.gpus, t.iteration); }
    [[nodiscard]] static constexpr const char* unit() { return "s/iteration"; }
};

/// Cheapest plan: USD per iteration (Sailor §4.2.3). Ties within 0.1 %: faster, then fewer
/// cross-zone boundaries, then fewer GPUs.
struct min_cost {
    constraints limits{};
    static constexpr bool prefers_throughput = false;
    [[nodiscard]] double value(const objective_terms& t) const { return t.usd; }
    [[nodiscard]] bool admits(const objective_terms& t) const { return limits.admit(t); }
    [[nodiscard]] static constexpr bool uses_money() { return true; }
    [[nodiscard]] static auto tie_break(const objective_terms& t) { return std::tuple(t.iteration, t.cross_zone, t.gpus, t.usd); }
    [[nodiscard]] static constexpr const char* unit() { return "USD/iteration"; }
};

static_assert(concepts::check_objective<max_throughput>());
static_assert(concepts::check_objective<min_cost>());

namespace search {

/// Whether a search must carry USD for `o` (a cost objective or a budget).
template <concepts::objective O>
[[nodiscard]] bool uses_money(const O& o) {
    if constexpr (requires { o.uses_money(); }) return o.uses_money();
    else return false;
}

/// Whether a search must count the GPUs of partial plans for `o` (a GPU limit).
template <concepts::objective O>
[[nodiscard]] bool counts_gpus(const O& o) {
    if constexpr (requires { o.limits.max_gpus; }) return o.limits.max_gpus.has_value();
    else return false;
}

/// Whether walks over data-parallel degrees should start from the largest (throughput-first,
/// Sailor's H3) rather than the smallest (cost-first, H4).
template <class O>
inline constexpr bool prefers_throughput = [] {
    if constexpr (requires { O::prefers_throughput; }) return bool(O::prefers_throughput);
    else return false;
}();

/// The unit of `o`'s value, for progress lines.
template <class O>
[[nodiscard]] constexpr const char* unit_of(const O&) {
    if constexpr (requires { O::unit(); }) return O::unit();
    else return "objective";
}

/// The tie-break key of `o` (default: cheaper, fewer cross-zone boundaries, fewer GPUs).
template <class O>
[[nodiscard]] auto tie_break(const O& o, const objective_terms& t) {
    if constexpr (requires { o.tie_break(t); }) return o.tie_break(t);
    else return std::tuple(t.usd, t.cross_zone, t.gpus, t.iteration);
}

/// Pipeline boundaries whose two stages share no zone: what H6-free placements try to avoid.
[[nodiscard]] inline int cross_zone_boundaries(const plan& pl) {
    int n = 0;
    for (const auto& pipe : pl.pipelines)
        for (std::size_t s = 0; s + 1 < pipe.stages.size(); ++s) {
            bool shared = false;
            for (const auto& a : pipe.stages[s].workers)
                for (const auto& b : pipe.stages[s + 1].workers) shared = shared || a.zone == b.zone;
            n += shared ? 0 : 1;
        }
    return n;
}

/// The terms of a complete, priced plan; the measure from `o.gpu_rate` when `o` has one.
template <concepts::objective O>
[[nodiscard]] objective_terms terms_of(const O& o, const problem& pb, const plan& pl, const estimate& e) {
    objective_terms t;
    t.iteration = e.time.iteration.value;
    t.usd = e.money.total.value;
    t.gpus = pl.total_gpus();
    t.cross_zone = cross_zone_boundaries(pl);
    if constexpr (concepts::measured_objective<O>) {
        double rate = 0;
        pl.for_each_worker([&](std::size_t, std::size_t, std::size_t, const worker_group& w) { rate += w.tp * o.gpu_rate(pb, w.gpu, w.zone); });
        t.measure = rate * t.iteration;
    }
    return t;
}

/// Objective value of terms that are floors, as a floor (objectives are monotone); +inf when the
/// floors are not admitted.
template <concepts::objective O>
[[nodiscard]] double value_floor(const O& o, const objective_terms& floors) {
    if (!std::isfinite(floors.iteration) || !o.admits(floors)) return std::numeric_limits<double>::infinity();
    return o.value(floors);
}

}  // namespace search
}  // namespace hetplan
