#pragma once
// Umbrella header: the core, the models and the plan vocabulary; everything except the JSON layer
// (hetplan/io.hpp), the search pieces (hetplan/search.hpp) and the planners (hetplan/planners.hpp).
#include "hetplan/core/dtype.hpp"
#include "hetplan/core/endpoint.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/core/fwd.hpp"
#include "hetplan/core/ids.hpp"
#include "hetplan/core/units.hpp"

#include "hetplan/concepts/cost_model.hpp"
#include "hetplan/concepts/device.hpp"
#include "hetplan/concepts/link.hpp"
#include "hetplan/concepts/memory_model.hpp"
#include "hetplan/concepts/network.hpp"
#include "hetplan/concepts/time_model.hpp"

#include "hetplan/hardware/cluster.hpp"
#include "hetplan/hardware/collectives.hpp"
#include "hetplan/hardware/gpu.hpp"
#include "hetplan/hardware/links.hpp"
#include "hetplan/hardware/machines.hpp"
#include "hetplan/hardware/network_model.hpp"
#include "hetplan/hardware/resource_pool.hpp"
#include "hetplan/hardware/topology.hpp"

#include "hetplan/workload/job.hpp"
#include "hetplan/workload/model.hpp"
#include "hetplan/workload/profile.hpp"

#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/problem.hpp"
#include "hetplan/plan/validator.hpp"

#include "hetplan/cost/memory/sailor.hpp"
#include "hetplan/cost/money/sailor.hpp"
#include "hetplan/cost/simulator.hpp"
#include "hetplan/cost/time/sailor.hpp"

#include "hetplan/fixtures/example.hpp"
#include "hetplan/fixtures/gpus.hpp"
