// Two translation units that include everything must link together (no non-inline definitions).
#include "hetplan/hetplan.hpp"
#include "hetplan/io.hpp"

int hetplan_multiple1() { return hetplan::fixtures::default_example().hw.pool.total(); }
