#pragma once
/// Concept `pruner`: a pure, cheap predicate that keeps or drops a candidate of some kind.
///
/// Purpose: searches ask pruners before they spend work on a candidate: Sailor's H2 (a worker
/// fits in memory), H5 (a stage's replicas stay in one region), a user's "never two GPU types in
/// one stage". A search takes a Boost.Hana tuple of pruners (search::prune::all) and, at each
/// kind of candidate it generates, folds with && over the pruners that accept that kind — at
/// compile time, short-circuiting, with no virtual call and no allocation.
/// Minimal definition: `p(problem, candidate)` -> bool, true to keep.
/// Laws: pure (the same candidate, the same answer; a memo is allowed); cheap next to the work
/// it saves; on a partial candidate (a stage's cells chosen so far) monotone: once it drops a
/// partial candidate it drops every extension of it.
/// Models shipped: search/prune/h2_memory_fit.hpp, h5_one_region.hpp, single_gpu_type.hpp.
#include <concepts>

#include "hetplan/core/fwd.hpp"

namespace hetplan::concepts {

template <class P, class C>
concept has_keep = requires(const P& p, const problem& pb, const C& c) {
    { p(pb, c) } -> std::convertible_to<bool>;
};

template <class P, class C>
concept pruner = std::copy_constructible<P> && has_keep<P, C>;

template <class P, class C>
constexpr bool check_pruner() {
    static_assert(std::copy_constructible<P>, "hetplan::pruner: must be copy-constructible");
    static_assert(has_keep<P, C>,
                  "hetplan::pruner: needs `operator()(const problem&, const Candidate&) const` returning bool "
                  "(true: keep) for this kind of candidate");
    return pruner<P, C>;
}

}  // namespace hetplan::concepts
