#pragma once
/// Concept `planner`: a problem and a request in, ranked and validated plans out.
///
/// Purpose: what a scheduler embeds and what any_planner erases: the reference planners (Sailor,
/// Zorse, Cephalo) and any composition of search pieces a user builds.
/// Minimal definition: `p.name()` -> string_view and `p.plan(problem, plan_request<O, Hooks...>)`
/// -> plan_result for the default request (maximum throughput, no hooks) and, by convention, any
/// objective and hooks.
/// Laws: every plan returned passes the validator under the planner's memory model and is priced
/// by its simulator; same problem and request, same plans (deterministic); honours the request's
/// stop condition and returns the best plans found so far with `stopped` set.
/// Models shipped: sailor_planner, zorse_planner, cephalo_planner (planners/).
#include <concepts>
#include <string_view>

#include "hetplan/core/fwd.hpp"

namespace hetplan::concepts {

template <class P>
concept has_planner_name = requires(const P& p) { { p.name() } -> std::convertible_to<std::string_view>; };
template <class P>
concept has_plan = requires(P& p, const problem& pb, const plan_request<>& rq) {
    { p.plan(pb, rq) } -> std::same_as<plan_result>;
};

template <class P>
concept planner = has_planner_name<P> && has_plan<P>;

template <class P>
constexpr bool check_planner() {
    static_assert(has_planner_name<P>, "hetplan::planner: needs `name() const` returning a string_view");
    static_assert(has_plan<P>, "hetplan::planner: needs `plan(const problem&, const plan_request<O, Hooks...>&)` returning hetplan::plan_result");
    return planner<P>;
}

}  // namespace hetplan::concepts
