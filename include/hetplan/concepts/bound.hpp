#pragma once
/// Concept `bound`: an admissible lower bound on every plan of a candidate.
///
/// Purpose: branch and bound. A search compares the objective's value of the floors with the
/// best plans so far and skips candidates that cannot enter the ranked list, or hands the cut-off
/// to the solver. Any objective uses any bound, since objectives are monotone in the terms.
/// Minimal definition: `b.floor(problem, candidate)` -> objective_terms (each term a floor).
/// Laws: admissible: every term is at most that term of every plan of the candidate (tests check
/// it against exhaustive search); +inf terms mean "no plan at all".
/// Models shipped: search/bound/instance_floors.hpp (Sailor), search::no_bound.
#include <concepts>

#include "hetplan/concepts/objective.hpp"

namespace hetplan::concepts {

template <class B, class C>
concept has_floor = requires(const B& b, const problem& pb, const C& c) {
    { b.floor(pb, c) } -> std::convertible_to<objective_terms>;
};

template <class B, class C>
concept bound = std::copy_constructible<B> && has_floor<B, C>;

template <class B, class C>
constexpr bool check_bound() {
    static_assert(has_floor<B, C>,
                  "hetplan::bound: needs `floor(const problem&, const Candidate&) const` returning hetplan::objective_terms");
    return bound<B, C>;
}

}  // namespace hetplan::concepts
