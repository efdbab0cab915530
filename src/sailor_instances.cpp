// The sailor planner's plan() for the plain requests, instantiated and optimised once for every
// consumer that links hetplan::compiled (planners/instances.hpp).
#include "hetplan/planners/sailor.hpp"

namespace hetplan {
HETPLAN_PLANNER_INSTANCES(, sailor_planner<>);
}  // namespace hetplan
