// The metis planner's plan() for the plain requests, instantiated and optimised once for every
// consumer that links hetplan::compiled (planners/instances.hpp).
#include "hetplan/planners/metis.hpp"

namespace hetplan {
HETPLAN_PLANNER_INSTANCES(, metis_planner<>);
}  // namespace hetplan
