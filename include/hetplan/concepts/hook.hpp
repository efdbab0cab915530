#pragma once
/// Concept `hook`: an observer of a search that may stop it (ensmallen's callbacks, Boost.Graph's
/// visitors).
///
/// Purpose: progress lines, step counting (Metis' Table 1 counts search steps), tracing,
/// deadlines and early stopping, without touching a search.
/// Minimal definition: any of these members (each returns bool, true to stop the search, or
/// void); a search calls those a hook has, detected at compile time, and nothing else:
///   on_candidate(const C&)                    a candidate of kind C was generated
///   on_pruned(const C&, const Pruner&)        a pruner (or a bound) dropped it
///   on_solved(const C&, const Solution&)      a solver returned a solution
///   on_incumbent(const ranked_plan&)          a plan became the best so far
///   on_step(const search_progress&)           a candidate was priced (progress)
///   on_moves(std::size_t n)                   a walk over a candidate's strategies made n moves
///                                             before its next plan (Metis' search steps)
/// Laws: observing changes nothing but stopping; cheap where called from an inner loop.
/// Models shipped: search/hooks.hpp (progress_to, count_steps, stop_after, trace_pruned).
#include <concepts>
#include <cstddef>

#include "hetplan/core/fwd.hpp"

namespace hetplan::concepts {

template <class H>
concept step_hook = requires(H& h, const search_progress& p) { h.on_step(p); };
template <class H>
concept moves_hook = requires(H& h, std::size_t n) { h.on_moves(n); };
template <class H>
concept incumbent_hook = requires(H& h, const ranked_plan& r) { h.on_incumbent(r); };
template <class H, class C>
concept candidate_hook = requires(H& h, const C& c) { h.on_candidate(c); };
template <class H, class C, class P>
concept pruned_hook = requires(H& h, const C& c, const P& p) { h.on_pruned(c, p); };
template <class H, class C, class S>
concept solved_hook = requires(H& h, const C& c, const S& s) { h.on_solved(c, s); };

namespace detail {
struct any_candidate {};  ///< probes hooks whose candidate events are templates
}  // namespace detail

/// A hook observes at least one event: on_step or on_incumbent, or a candidate event for any
/// candidate kind (templates, probed with an archetype; a hook for one kind only is also fine
/// where that kind is searched, but is not detected here).
template <class H>
concept hook = std::copy_constructible<H> &&
               (step_hook<H> || moves_hook<H> || incumbent_hook<H> || candidate_hook<H, detail::any_candidate> ||
                pruned_hook<H, detail::any_candidate, detail::any_candidate> ||
                solved_hook<H, detail::any_candidate, detail::any_candidate>);

template <class H>
constexpr bool check_hook() {
    static_assert(std::copy_constructible<H>, "hetplan::hook: must be copy-constructible");
    static_assert(hook<H>,
                  "hetplan::hook: needs one of on_step(const search_progress&), on_moves(std::size_t), on_incumbent(const ranked_plan&), "
                  "or template members on_candidate / on_pruned / on_solved");
    return hook<H>;
}

}  // namespace hetplan::concepts
