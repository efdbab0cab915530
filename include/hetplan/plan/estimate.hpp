#pragma once
// What the cost models return: totals with their breakdowns (per worker for memory, per stage
// for time), so that a user sees why a plan is slow or does not fit; `estimate` holds all three.
#include <vector>

#include "hetplan/core/units.hpp"

namespace hetplan {

struct worker_memory {
    std::size_t pipeline = 0, stage = 0, worker = 0;
    bytes weights{}, gradients{}, optimizer{}, buffers{};  ///< training state on one GPU
    bytes activations{};
    bytes overhead{};     ///< framework and kernels
    bytes total{};        ///< peak on one GPU of the worker group
    bytes capacity{};     ///< usable memory of that GPU
    bytes host{};         ///< host memory needed for offloaded state, per GPU
    [[nodiscard]] bool fits() const { return total <= capacity; }
    [[nodiscard]] bytes headroom() const { return capacity - total; }
};

struct memory_report {
    std::vector<worker_memory> workers;  ///< one per worker group, plan order
    [[nodiscard]] bool fits() const {
        for (const auto& w : workers)
            if (!w.fits()) return false;
        return true;
    }
    [[nodiscard]] bytes worst_headroom() const {
        bytes worst = bytes::infinity();
        for (const auto& w : workers) worst = min(worst, w.headroom());
        return worst;
    }
};

struct stage_time {
    std::size_t pipeline = 0, stage = 0;
    seconds compute{};   ///< forward+backward of one microbatch on the stage's slowest worker
    seconds forward{};   ///< of which the forward pass (drawn apart in plan pictures)
    seconds p2p{};       ///< sending activations forward and gradients backward, per microbatch
    seconds sync{};      ///< gradient synchronisation of the stage's layers
    seconds update{};    ///< optimizer step
    seconds busy{};      ///< compute + p2p over all microbatches
    seconds bubble{};    ///< idle time inside the pipeline phase
};

struct pipeline_time {
    int microbatches = 0;
    seconds straggler{};    ///< slowest stage per microbatch (compute + p2p)
    seconds ramp{};         ///< warm-up plus cool-down: one pass through every stage
    seconds steady{};       ///< (microbatches - 1) x straggler, where the model has one (Zorse's: its busiest group's batch)
    seconds total{};
};

/// One piece of a stage's work as the time model composes it, where that piece is not one
/// microbatch's forward or backward: a Zorse ministage (§3.1) or a Cephalo FSDP unit (§2.2) run
/// for all of the stage's microbatches. Plan pictures draw these as the stage's timeline.
struct work_span {
    std::size_t pipeline = 0, stage = 0;
    int part = 0;            ///< the ministage or unit, counted in layer order within the stage
    bool backward = false;
    seconds start{}, end{};  ///< from the start of the iteration
    seconds compute{};       ///< of which the busiest GPU computes; the rest is communication not hidden, or waiting for inputs
};

struct time_report {
    std::vector<stage_time> stages;
    std::vector<work_span> spans;  ///< by pipeline, stage, start; empty where the schedule is per microbatch (1F1B, GPipe)
    std::vector<pipeline_time> pipelines;
    seconds pipeline{};   ///< max over pipelines
    seconds sync{};
    seconds update{};
    seconds iteration{};
    [[nodiscard]] double throughput() const { return iteration.value > 0 ? 1.0 / iteration.value : 0.0; }
};

struct money_report {
    usd compute{};
    usd communication{};
    usd total{};
    bytes cross_zone{};   ///< bytes that leave their zone per iteration
};

/// A plan priced by a simulator: memory, time and money.
struct estimate {
    memory_report memory;
    time_report time;
    money_report money;
};

}  // namespace hetplan
