#pragma once
// Everything a cost model reads besides the plan: hardware, model, job and profiles, and the GPUs
// available now. Held by reference; the caller owns the inputs (read once, never copied in a
// search). Availability is kept apart from the hardware: a scheduler re-plans on a new pool with
// `with_pool`, which copies no cluster, and caches keyed on the cluster's identity stay valid.
#include <string>

#include "hetplan/core/error.hpp"
#include "hetplan/hardware/cluster.hpp"
#include "hetplan/workload/job.hpp"
#include "hetplan/workload/model.hpp"
#include "hetplan/workload/profile.hpp"

namespace hetplan {

struct problem {
    const cluster& hw;
    const model_spec& model;
    const job_spec& job;
    const profile_table& profiles;
    const resource_pool* available = nullptr;  ///< GPUs available now; null: the cluster's own pool

    [[nodiscard]] const resource_pool& pool() const { return available ? *available : hw.pool; }
    /// The same problem on another availability (same GPU types and zones as the cluster).
    [[nodiscard]] problem with_pool(const resource_pool& p) const {
        if (p.gpu_types() != hw.gpus.size() || p.zones() != hw.zones.size())
            throw input_error("pool: " + std::to_string(p.gpu_types()) + " GPU types x " + std::to_string(p.zones()) +
                              " zones, the cluster has " + std::to_string(hw.gpus.size()) + " x " + std::to_string(hw.zones.size()));
        return {hw, model, job, profiles, &p};
    }
};

}  // namespace hetplan
