#pragma once
/// Concept `search_space`: the candidates of a problem, as a lazy range.
///
/// Purpose: the enumeration half of a planner (Sailor's pipeline degrees x microbatch sizes,
/// Zorse's GPU partitions x microbatch sizes), never materialised: range-v3 views
/// (cartesian_product, filter, transform) over the problem.
/// Minimal definition: `s.candidates(problem)` -> a range-v3 input range.
/// Laws: finite; deterministic order (the same problem, the same sequence); the range may refer
/// to the problem, which outlives it.
/// Models shipped: search/space.hpp (sailor_space), search/partition/zorse_space.hpp.
#include <range/v3/range/concepts.hpp>

#include "hetplan/core/fwd.hpp"

namespace hetplan::concepts {

template <class S>
concept has_candidates = requires(const S& s, const problem& pb) {
    { s.candidates(pb) } -> ranges::input_range;
};

template <class S>
concept search_space = has_candidates<S>;

template <class S>
constexpr bool check_search_space() {
    static_assert(has_candidates<S>, "hetplan::search_space: needs `candidates(const problem&) const` returning a range-v3 input range");
    return search_space<S>;
}

}  // namespace hetplan::concepts
