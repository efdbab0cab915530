#pragma once
// One plan model for all five systems (design/ARCHITECTURE.md):
//   plan      = pipelines (DP groups; they may differ in their number of stages: AutoHet)
//   pipeline  = ordered stages
//   stage     = one or more layer ranges (non-contiguous ministages: Zorse) served by worker groups
//   worker    = a TP group of one GPU type on one node in one zone, with its own batch share
//               (microbatch size x number of microbatches: Cephalo, Zorse) and its own share of the
//               stage's sharded training state (ZeRO/FSDP: Cephalo, Zorse).
// Sailor: one pipeline, P stages, D workers per stage. Cephalo: one pipeline, one stage, N
// workers. Metis: workers of a stage with uneven batch shares.
#include <string_view>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "hetplan/core/ids.hpp"
#include "hetplan/workload/job.hpp"

namespace hetplan {

struct layer_range {
    int begin = 0;  ///< first layer
    int end = 0;    ///< one past the last layer
    [[nodiscard]] int size() const { return end - begin; }
    friend bool operator==(const layer_range&, const layer_range&) = default;
};

struct worker_group {
    gpu_type_id gpu{};
    zone_id zone{};
    int tp = 1;                ///< GPUs in the TP group, all on one node
    int microbatch_size = 1;
    int num_microbatches = 1;
    double state_share = 1.0;  ///< share of the stage's ZeRO-sharded state held by this group
    int node = -1;             ///< node index inside the zone, -1 when not pinned

    [[nodiscard]] int batch() const { return microbatch_size * num_microbatches; }
    friend bool operator==(const worker_group&, const worker_group&) = default;
};

struct stage {
    boost::container::small_vector<layer_range, 2> layers;
    std::vector<worker_group> workers;

    [[nodiscard]] int num_layers() const {
        int n = 0;
        for (const auto& r : layers) n += r.size();
        return n;
    }
    [[nodiscard]] int batch() const {
        int b = 0;
        for (const auto& w : workers) b += w.batch();
        return b;
    }
    /// Last layer of the stage in model order: its output crosses to the next stage.
    [[nodiscard]] int last_layer() const {
        int last = -1;
        for (const auto& r : layers) last = r.end - 1 > last ? r.end - 1 : last;
        return last;
    }
    friend bool operator==(const stage&, const stage&) = default;
};

struct pipeline {
    std::vector<stage> stages;
    [[nodiscard]] int batch() const { return stages.empty() ? 0 : stages.front().batch(); }
    friend bool operator==(const pipeline&, const pipeline&) = default;
};

/// The worker pairs across the boundary between stages `a` and `b` of a pipeline: worker k of
/// one stage pairs with worker k of the other, modulo the smaller count. Calls
/// f(sender, receiver, pairs the sender takes part in).
template <class F>
void for_each_boundary_pair(const stage& a, const stage& b, F&& f) {
    const std::size_t n = a.workers.size() > b.workers.size() ? a.workers.size() : b.workers.size();
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t j = k % a.workers.size();
        f(a.workers[j], b.workers[k % b.workers.size()], (n - j + a.workers.size() - 1) / a.workers.size());
    }
}

enum class schedule_kind { one_f_one_b, gpipe, interleaved_ministages, layered_gradient_accumulation };

constexpr std::string_view to_string(schedule_kind s) {
    switch (s) {
        case schedule_kind::one_f_one_b: return "1f1b";
        case schedule_kind::gpipe: return "gpipe";
        case schedule_kind::interleaved_ministages: return "interleaved_ministages";
        case schedule_kind::layered_gradient_accumulation: return "layered_gradient_accumulation";
    }
    return "1f1b";
}

struct plan {
    std::vector<pipeline> pipelines;
    schedule_kind schedule = schedule_kind::one_f_one_b;
    memory_options memory{};

    [[nodiscard]] int total_gpus() const {
        int n = 0;
        for (const auto& p : pipelines)
            for (const auto& s : p.stages)
                for (const auto& w : s.workers) n += w.tp;
        return n;
    }
    /// Calls f(pipeline index, stage index, worker index, worker) in plan order.
    template <class F>
    void for_each_worker(F&& f) const {
        for (std::size_t p = 0; p < pipelines.size(); ++p)
            for (std::size_t s = 0; s < pipelines[p].stages.size(); ++s)
                for (std::size_t w = 0; w < pipelines[p].stages[s].workers.size(); ++w)
                    f(p, s, w, pipelines[p].stages[s].workers[w]);
    }
    friend bool operator==(const plan&, const plan&) = default;
};

}  // namespace hetplan
