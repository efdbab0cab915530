#pragma once
// Separate compilation, opt-in. A header-only planner costs every translation unit that plans
// its whole search: parsed, instantiated and optimised again (about 12 s of CPU at -O2 for
// Zorse's planner, 17 s for Sailor's). With HETPLAN_SEPARATE_COMPILATION defined (linking
// hetplan::compiled defines it), each reference planner's header declares its plan() for the
// plain requests (max_throughput, min_cost; no hooks) as explicit instantiations made elsewhere:
// the hetplan_compiled library (src/) instantiates and optimises them once, and a consumer only
// parses the headers (README, "Compile time"). Other requests, hooks and custom pieces are
// instantiated where used, as in header-only mode; both modes give the same plans.
//
// For the extern declarations to stop the instantiation, plan(problem, plan_request) is defined
// outside its class (a member defined in the class is inline, and GCC instantiates inline
// members even when declared extern, to inline them).
#include "hetplan/search/objective.hpp"
#include "hetplan/search/request.hpp"
#include "hetplan/search/result.hpp"

/// The explicit instantiations of planner class `P` (a type without commas, e.g.
/// `zorse_planner<>`), used inside namespace hetplan: `extern` in its header under
/// HETPLAN_SEPARATE_COMPILATION, empty in src/ where they are defined.
#define HETPLAN_PLANNER_INSTANCES(EXTERN, P)                                                     \
    EXTERN template class P;                                                                     \
    EXTERN template plan_result P::plan(const problem&, const plan_request<max_throughput>&);    \
    EXTERN template plan_result P::plan(const problem&, const plan_request<min_cost>&)
