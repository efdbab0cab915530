#pragma once
// Search strategies (concepts::search_strategy): the order in which a range of candidates is
// walked and when the walk stops. Each step reports the objective value its candidate reached
// (lower is better; none when it had no admitted plan, or could not enter the ranked list).
//   exhaustive_walk         every candidate, in order (exact; Sailor's Table 3 "DP only")
//   descending_until_worse  Sailor's H3 (§4.2.1): data-parallel degrees from the largest down,
//                           stopping at the first value no better than the best so far
//   ascending_until_worse   Sailor's H4: from the smallest up, the same stopping rule
//   best_first              candidates that carry a floor of their value, cheapest floor first;
//                           the step stops the walk once a floor is above the cut-off (exact:
//                           branch and bound over the whole range)
// H3/H4 assume the value is unimodal along the range; they may miss the optimum where it is not.
#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <vector>

#include "hetplan/concepts/search_strategy.hpp"

namespace hetplan::search {

struct exhaustive_walk {
    template <class Range, class Step>
    void walk(const Range& r, Step&& step) const {
        for (const auto& c : r)
            if (step(c).stop) return;
    }
};

namespace detail {
template <class It, class Step>
void until_worse(It first, It last, Step& step) {
    std::optional<double> best;
    for (; first != last; ++first) {
        const step_outcome r = step(*first);
        if (r.stop) return;
        if (!r.value) continue;  // nothing here (too few GPUs, or bounded out): go on
        if (best && *r.value >= *best) return;
        best = r.value;
    }
}
}  // namespace detail

struct descending_until_worse {
    template <class Range, class Step>
    void walk(const Range& r, Step&& step) const {
        detail::until_worse(std::rbegin(r), std::rend(r), step);
    }
};

struct ascending_until_worse {
    template <class Range, class Step>
    void walk(const Range& r, Step&& step) const {
        detail::until_worse(std::begin(r), std::end(r), step);
    }
};

/// Branch and bound's order: elements with a `floor` member (a lower bound of what their step
/// can reach) in increasing floor, ties in the range's order; other elements in order. The step
/// ends the walk (stop) when a floor is above its cut-off: every later floor is too.
struct best_first {
    template <class Range, class Step>
    void walk(const Range& r, Step&& step) const {
        std::vector<std::reference_wrapper<const std::ranges::range_value_t<Range>>> order(std::begin(r), std::end(r));
        if constexpr (requires { order.front().get().floor < order.front().get().floor; })
            std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.get().floor < b.get().floor; });
        for (const auto& c : order)
            if (step(c.get()).stop) return;
    }
};

/// Sailor's default (§4.2.1): H3 for throughput-first objectives, H4 otherwise. A tag the Sailor
/// planner resolves per objective (search::prefers_throughput).
struct sailor_dp_order {};

static_assert(concepts::check_search_strategy<exhaustive_walk>());
static_assert(concepts::check_search_strategy<descending_until_worse>());
static_assert(concepts::check_search_strategy<ascending_until_worse>());
static_assert(concepts::check_search_strategy<best_first>());

}  // namespace hetplan::search
