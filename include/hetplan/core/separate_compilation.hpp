#pragma once
// Separate compilation, opt-in (README, "Compile time"). Header-only by default: every function
// is inline and every template is instantiated where it is used. A consumer that defines
// HETPLAN_SEPARATE_COMPILATION (linking hetplan::compiled defines it) sees
//   - the reference planners' plan() for the plain requests as extern template instantiations
//     (planners/instances.hpp), and
//   - the functions marked with it (the JSON file readers, the planner registry, the built-in
//     examples) as declarations only,
// all defined once in the hetplan_compiled library (src/; its *_functions.cpp files define
// HETPLAN_SOURCE, and it is built with HETPLAN_SEPARATE_COMPILATION too).
// A program links hetplan::compiled in every translation unit that uses hetplan, or in none.

/// Whether this translation unit sees the bodies of the functions hetplan_compiled defines.
#if defined(HETPLAN_SEPARATE_COMPILATION) && !defined(HETPLAN_SOURCE)
#define HETPLAN_HEADER_BODIES 0
#else
#define HETPLAN_HEADER_BODIES 1
#endif

/// Linkage of those functions: inline in header-only mode, one definition in hetplan_compiled.
#if defined(HETPLAN_SOURCE)
#define HETPLAN_DECL
#else
#define HETPLAN_DECL inline
#endif
