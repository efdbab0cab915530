// The zorse planner's plan() for the plain requests, instantiated and optimised once for every
// consumer that links hetplan::compiled (planners/instances.hpp).
#include "hetplan/planners/zorse.hpp"

namespace hetplan {
HETPLAN_PLANNER_INSTANCES(, zorse_planner<>);
}  // namespace hetplan
