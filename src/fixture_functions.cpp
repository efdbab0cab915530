// The built-in examples (fixtures/example.hpp), defined once for every consumer that links
// hetplan::compiled (core/separate_compilation.hpp).
#define HETPLAN_SOURCE
#include "hetplan/fixtures/example.hpp"
