#pragma once
/// Concept `solver`: turns a candidate into its best concrete solution under the cost models.
///
/// Purpose: the exact core of a planner: Sailor's stage DP (or exhaustive search) over an
/// instance, Cephalo's batch DP over a pool, Zorse's phase 2 over a partition, the integer
/// microbatch split over a GPU group. The search hands it the objective and its limits: a
/// cut-off (solutions whose value exceeds it are not wanted: branch and bound) and a stop
/// condition.
/// Minimal definition: `s.solve(problem, candidate, objective, limits)` -> an optional-like
/// result (tests as bool, `->terms` gives its objective_terms).
/// Laws: exact where it says so: no solution of the candidate has a lower value than the one it
/// returns (tests compare with brute force); returns nothing only when no solution is admitted
/// under the cut-off, or when stopped (then `limits.stopped()` says so). A solver that honours
/// `limits.effort` and runs out of it returns its best solution so far (or nothing) and says so
/// with `exhausted()`; the search solves that candidate again later with more.
/// Models shipped: search/solve/stage_dp.hpp, exhaustive.hpp, search/fsdp/batch_dp.hpp,
/// search/pipeline/microbatch_split.hpp.
#include <concepts>
#include <cstdint>
#include <limits>

#include "hetplan/concepts/objective.hpp"
#include "hetplan/core/stop.hpp"

namespace hetplan {

/// What a solver may spend: the objective value above which nothing is wanted, when to stop,
/// and how many search nodes before it hands back its best so far (0: no limit; a solver that
/// cannot stop early ignores it and is exact).
struct solve_limits {
    double cutoff = std::numeric_limits<double>::infinity();
    const stop_condition* stop = nullptr;
    std::uint64_t effort = 0;
};

}  // namespace hetplan

namespace hetplan::concepts {

template <class S, class C, class O>
concept has_solve = requires(S& s, const problem& pb, const C& c, const O& o, const solve_limits& lim) {
    s.solve(pb, c, o, lim);
    { static_cast<bool>(s.solve(pb, c, o, lim)) };
    { s.solve(pb, c, o, lim)->terms } -> std::convertible_to<objective_terms>;
};

template <class S, class C, class O>
concept solver = objective<O> && has_solve<S, C, O>;

template <class S, class C, class O>
constexpr bool check_solver() {
    static_assert(check_objective<O>());
    static_assert(has_solve<S, C, O>,
                  "hetplan::solver: needs `solve(const problem&, const Candidate&, const Objective&, const solve_limits&)` "
                  "returning an optional-like result whose `->terms` is hetplan::objective_terms");
    return solver<S, C, O>;
}

}  // namespace hetplan::concepts
