#pragma once
/// Concept `search_strategy`: in which order a range of candidates is walked, and when to stop.
///
/// Purpose: Sailor's H3 (data-parallel degrees from the largest down, stop once throughput stops
/// improving) and H4 (from the smallest up, for cost), the exhaustive walk, Metis' greedy path.
/// Branch and bound is any strategy combined with a bound and the incumbent.
/// Minimal definition: `st.walk(range, step)` where `step(candidate)` -> step_outcome (the
/// objective value the candidate reached, none if it had no admitted plan; `stop` to end the
/// whole search).
/// Laws: visits each candidate at most once, in a deterministic order; returns as soon as a step
/// says stop.
/// Models shipped: search/strategy.hpp (exhaustive_walk, descending_until_worse,
/// ascending_until_worse).
#include <optional>
#include <span>

#include "hetplan/core/fwd.hpp"

namespace hetplan {

/// What one step of a walk reports: the objective value its best plan reached (lower is better),
/// and whether the whole search must stop (a hook asked, or the stop condition).
struct step_outcome {
    std::optional<double> value;
    bool stop = false;
};

}  // namespace hetplan

namespace hetplan::concepts {

template <class St>
concept has_walk = requires(const St& st, std::span<const int> r, step_outcome (*step)(const int&)) { st.walk(r, step); };

template <class St>
concept search_strategy = has_walk<St>;

template <class St>
constexpr bool check_search_strategy() {
    static_assert(has_walk<St>,
                  "hetplan::search_strategy: needs `walk(Range, Step) const` calling step(candidate) -> step_outcome");
    return search_strategy<St>;
}

}  // namespace hetplan::concepts
