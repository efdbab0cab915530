#pragma once
// One request type for every planner: the objective (with its constraints), how many plans,
// when to stop, and the hooks that watch the search (ensmallen's callbacks).
//
//   auto rq = hetplan::plan_request<hetplan::min_cost>{.objective = {{.max_usd = 1.2}}, .top = 3};
//   auto r = planner.plan(pb, hetplan::with_hooks(rq, hetplan::search::progress_to(print)));
#include <cstddef>
#include <utility>

#include <boost/hana/tuple.hpp>

#include "hetplan/core/fwd.hpp"
#include "hetplan/core/stop.hpp"
#include "hetplan/search/objective.hpp"

namespace hetplan {

template <class Objective, class... Hooks>
struct plan_request {
    static_assert(concepts::check_objective<Objective>());
    using objective_type = Objective;

    Objective objective{};
    std::size_t top = 1;           ///< plans wanted, best first (distinct)
    double rank_within = 0.05;     ///< ranked plans lie within this fraction of the best; searches are bounded by it
    stop_condition stop{};         ///< stop token and deadline: the best plans so far are returned
    boost::hana::tuple<Hooks...> hooks{};
};

/// The same request with more hooks.
template <class O, class... Hs, class... More>
[[nodiscard]] plan_request<O, Hs..., More...> with_hooks(const plan_request<O, Hs...>& rq, More... more) {
    return {rq.objective, rq.top, rq.rank_within, rq.stop,
            boost::hana::unpack(rq.hooks, [&](const auto&... h) { return boost::hana::make_tuple(h..., std::move(more)...); })};
}

/// The same request with another objective.
template <class O2, class O, class... Hs>
[[nodiscard]] plan_request<O2, Hs...> with_objective(const plan_request<O, Hs...>& rq, O2 objective) {
    return {std::move(objective), rq.top, rq.rank_within, rq.stop, rq.hooks};
}

}  // namespace hetplan
