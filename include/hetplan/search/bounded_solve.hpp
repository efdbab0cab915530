#pragma once
// One candidate through a bound and a solver: branch and bound's step, for any planner. The
// bound's floors (shrunk by the slack) give a floor of the objective (objectives are monotone);
// a candidate whose floor is above the run's cut-off is dropped (the hooks hear it); otherwise
// the solver gets the cut-off and the stop condition. What the solver returns is offered: the
// run judges it by the simulator's price, which may be below the solver's own (Sailor's stage
// solvers bound a pipeline boundary by its slowest pair of cells), so a search without a bound
// (search::no_bound: no cut-off for the solver either, the straightforward reference) returns
// the same plans. `offer(solution)` builds, prices and offers the plan and returns its
// objective value. With an `effort` (search nodes) a solver that honours it may hand back its
// best so far; the outcome says so and the planner solves the candidate again later.
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "hetplan/concepts/bound.hpp"
#include "hetplan/concepts/solver.hpp"
#include "hetplan/search/bound/instance_floors.hpp"
#include "hetplan/search/objective.hpp"

namespace hetplan::search {

/// Relative slack on every bound test: floors and sums may round differently, and a candidate
/// is only dropped when it is clearly above the cut-off.
inline constexpr double bound_slack = 1e-9;

/// A bound's floors shrunk by the slack.
[[nodiscard]] inline objective_terms with_slack(objective_terms floor) {
    floor.iteration /= 1 + bound_slack, floor.usd /= 1 + bound_slack, floor.measure /= 1 + bound_slack;
    return floor;
}

/// What bounded_solve did: the offered solution's value, and whether the solver ran out of
/// `effort` (its solution, if any, may not be the candidate's best: solve it again with more).
struct bounded_outcome {
    std::optional<double> value;
    bool exhausted = false;
};

template <class Run, class C, class Bound, class Solver, class Offer>
bounded_outcome bounded_solve(Run& run, const C& c, const Bound& bound, Solver& solver, Offer&& offer, std::uint64_t effort = 0) {
    static_assert(concepts::check_bound<Bound, C>());
    constexpr bool bnb = !std::is_same_v<Bound, no_bound>;
    constexpr double inf = std::numeric_limits<double>::infinity();
    const auto cut = run.cutoff();
    if (value_floor(run.objective(), with_slack(bound.floor(run.pb(), c))) > cut.value_or(inf)) {
        run.pruned(c, bound);
        return {};
    }
    const auto sol = solver.solve(run.pb(), c, run.objective(), {bnb && cut ? *cut : inf, &run.stop(), effort});
    if constexpr (requires { solver.stopped(); })
        if (solver.stopped()) run.halt();
    bounded_outcome out;
    if constexpr (requires { solver.exhausted(); }) out.exhausted = solver.exhausted();
    if (sol) out.value = offer(*sol);
    run.solved(c, sol);
    return out;
}

}  // namespace hetplan::search
