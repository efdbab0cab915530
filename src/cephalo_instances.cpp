// The cephalo planner's plan() for the plain requests, instantiated and optimised once for every
// consumer that links hetplan::compiled (planners/instances.hpp).
#include "hetplan/planners/cephalo.hpp"

namespace hetplan {
HETPLAN_PLANNER_INSTANCES(, cephalo_planner<>);
}  // namespace hetplan
