#pragma once
// Everything a cost model reads besides the plan: hardware, model, job and profiles. Held by
// reference; the caller owns the inputs (read once, never copied in a search).
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
};

}  // namespace hetplan
