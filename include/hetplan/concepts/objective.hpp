#pragma once
/// Concept `objective`: what a search minimises, and the constraints a plan must meet.
///
/// Purpose: maximum throughput, minimum money, or a user's own measure (grams of CO2 per
/// iteration...), each under constraints (a budget, a minimum throughput). Searches take it as
/// a policy type and use it inside the search — the stage DP's root, branch-and-bound cut-offs,
/// the ranked list — not as a filter after it.
/// Minimal definition: `o.value(terms)` -> double (lower is better) and `o.admits(terms)` ->
/// bool, both reading `objective_terms` (seconds and USD per iteration, the objective's own
/// measure, GPUs, cross-zone boundaries).
/// Laws: both are monotone in the terms: a plan no worse on every term has no larger value and
/// is admitted whenever the worse one is (so floors of the terms give a floor of the value, and
/// a partial plan whose floors are not admitted can be dropped); value is finite for finite
/// terms; same terms, same answers (no state).
/// Refinements: `uses_money()` -> bool asks a search to carry USD exactly (cost objectives and
/// budgets); `measured_objective` adds `gpu_rate(problem, gpu_type_id, zone_id)`, the measure
/// one GPU adds per second, so a search can carry the measure (measure = iteration seconds x
/// the plan's summed rates); `tie_break(terms)` orders plans within 0.1 % of the best.
/// Models shipped: max_throughput, min_cost (search/objective.hpp); a CO2 objective in
/// examples/carbon_objective.cpp.
#include <concepts>

#include "hetplan/core/fwd.hpp"
#include "hetplan/core/ids.hpp"

namespace hetplan {

/// What an objective reads of a plan (complete, or floors of a partial one).
struct objective_terms {
    double iteration = 0;  ///< seconds per iteration
    double usd = 0;        ///< USD per iteration
    double measure = 0;    ///< the objective's own measure per iteration (0 unless measured)
    int gpus = 0;
    int cross_zone = 0;    ///< pipeline boundaries crossed between zones
    [[nodiscard]] double throughput() const { return iteration > 0 ? 1.0 / iteration : 0.0; }
};

}  // namespace hetplan

namespace hetplan::concepts {

template <class O>
concept has_objective_value = requires(const O& o, const objective_terms& t) {
    { o.value(t) } -> std::convertible_to<double>;
};
template <class O>
concept has_admits = requires(const O& o, const objective_terms& t) {
    { o.admits(t) } -> std::convertible_to<bool>;
};

template <class O>
concept objective = std::copy_constructible<O> && has_objective_value<O> && has_admits<O>;

/// Refinement: the objective carries a measure of its own, priced per GPU-second.
template <class O>
concept measured_objective = objective<O> && requires(const O& o, const problem& pb, gpu_type_id g, zone_id z) {
    { o.gpu_rate(pb, g, z) } -> std::convertible_to<double>;
};

template <class O>
constexpr bool check_objective() {
    static_assert(std::copy_constructible<O>, "hetplan::objective: must be copy-constructible (searches keep a copy)");
    static_assert(has_objective_value<O>,
                  "hetplan::objective: needs `value(const objective_terms&) const` returning double (lower is better)");
    static_assert(has_admits<O>, "hetplan::objective: needs `admits(const objective_terms&) const` returning bool (constraints)");
    return objective<O>;
}

}  // namespace hetplan::concepts
