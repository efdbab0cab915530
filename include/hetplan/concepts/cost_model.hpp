#pragma once
/// Concept `cost_model`: the money one iteration of a plan costs.
///
/// Purpose: cost objectives and budget constraints (Sailor §4.2.3, §4.3).
/// Minimal definition: `c.estimate(problem, plan, time_report)` -> money_report.
/// Laws: cost >= 0; cost grows with iteration time for a fixed allocation.
/// Models shipped: sailor_money_model (GPU-hours plus cross-zone traffic).
#include <concepts>

#include "hetplan/core/fwd.hpp"

namespace hetplan::concepts {

template <class C>
concept has_money_estimate = requires(const C& c, const problem& p, const plan& pl, const time_report& t) {
    { c.estimate(p, pl, t) } -> std::same_as<money_report>;
};

template <class C>
concept cost_model = has_money_estimate<C>;

template <class C>
constexpr bool check_cost_model() {
    static_assert(has_money_estimate<C>,
                  "hetplan::cost_model: needs `estimate(const problem&, const plan&, const time_report&) const` "
                  "returning hetplan::money_report");
    return cost_model<C>;
}

}  // namespace hetplan::concepts
