// The planner registry (planners/registry.hpp), every reference planner type-erased once here: a
// consumer of hetplan::compiled that chooses planners at run time (the hetplan command, the
// Python module) compiles none of their searches. Each *_functions.cpp defines the HETPLAN_DECL
// functions of the headers it includes (core/separate_compilation.hpp); their header sets are
// disjoint in what they define, and a function defined twice would fail the link, loudly.
#define HETPLAN_SOURCE
#include "hetplan/planners/registry.hpp"
