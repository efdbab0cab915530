// The autohet planner's plan() for the plain requests, instantiated and optimised once for every
// consumer that links hetplan::compiled (planners/instances.hpp).
#include "hetplan/planners/autohet.hpp"

namespace hetplan {
HETPLAN_PLANNER_INSTANCES(, autohet_planner<>);
}  // namespace hetplan
