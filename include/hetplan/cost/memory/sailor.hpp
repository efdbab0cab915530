#pragma once
// Sailor's per-worker memory model (Sailor §4.3): M_peak = M_model + M_activation.
//   M_model = params of the worker's layers at its TP degree x mul_factor, where mul_factor
//     counts weights, gradients, fp32 master weights, optimizer state, a communication buffer
//     and the framework's extra copy (ZeRO-Infinity [46]); for fp32 Adam that is
//     4 + 4 + 0 + 8 + 4 + 4 = 24 bytes per parameter, the public implementation's constant.
//   M_activation = activation memory of the worker's layers at its TP degree x microbatch size
//     x microbatches in flight, which under 1F1B is (P - i) for stage i of P (0-based) and under
//     GPipe all of them.
//   plus a fixed framework overhead (CUDA context, kernels): 2 GB at TP 1, 3 GB above, as
//   measured by the public implementation.
// Extensions the paper leaves out, each off by default: ZeRO sharding by the worker's state
// share, activation recomputation (only layer-boundary activations stay in flight), and the
// usable-memory cap.
#include <algorithm>

#include "hetplan/concepts/memory_model.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/probe.hpp"
#include "hetplan/plan/problem.hpp"

namespace hetplan {

struct sailor_memory_model {
    bytes overhead_tp1 = gigabytes(2.0);
    bytes overhead_tp_many = gigabytes(3.0);
    double comm_buffer_bytes = 4.0;     ///< per parameter: fp32 gradient bucket
    double framework_copy_bytes = 4.0;  ///< per parameter: DeepSpeed's extra fp32 copy

    /// Training-state bytes per parameter before any sharding.
    [[nodiscard]] double state_bytes_per_param(const job_spec& job) const {
        return job.weight_bytes() + job.gradient_bytes() + job.master_bytes() + job.optimizer_bytes() +
               comm_buffer_bytes + framework_copy_bytes;
    }

    /// One worker in its context (concepts::worker_memory_model): what H2 asks, and what
    /// estimate() sums; one formula for both.
    [[nodiscard]] worker_memory worker(const problem& pb, const worker_probe& probe) const {
        if (probe.memory.offload_params || probe.memory.offload_activations)
            throw model_error("sailor memory model: offloading is not modelled (Sailor §6); use a model "
                              "that does, e.g. Zorse's");
        const worker_group& wg = probe.worker;
        const job_spec& job = pb.job;
        const int zero = probe.memory.zero_stage;

        double params = 0, act_per_sample = 0, boundary_per_sample = 0, widest_layer = 0;
        for (const auto& r : probe.layers)
            for (int l = r.begin; l < r.end; ++l) {
                const auto& layer = pb.model.layers.at(static_cast<std::size_t>(l));
                params += layer.params_at(wg.tp);
                act_per_sample += layer.act_mem_at(wg.tp);
                boundary_per_sample += layer.act_output_elems;
                widest_layer = std::max(widest_layer, layer.act_mem_at(wg.tp));
            }

        const double share = wg.state_share;
        auto sharded = [&](int from_stage) { return zero >= from_stage ? share : 1.0; };
        worker_memory m;
        m.weights = bytes{params * (job.weight_bytes() + framework_copy_bytes) * sharded(3)};
        m.gradients = bytes{params * job.gradient_bytes() * sharded(2)};
        m.optimizer = bytes{params * (job.master_bytes() + job.optimizer_bytes()) * sharded(1)};
        m.buffers = bytes{params * comm_buffer_bytes * sharded(2)};

        int in_flight = 0;
        switch (probe.schedule) {
            case schedule_kind::one_f_one_b: in_flight = std::min(probe.stages - probe.stage, wg.num_microbatches); break;
            case schedule_kind::gpipe: in_flight = wg.num_microbatches; break;
            default:
                throw model_error("sailor memory model: schedule '" + std::string(to_string(probe.schedule)) +
                                  "' is not modelled (Sailor §6: 1F1B only)");
        }
        const double ab = job.activation_bytes() * wg.microbatch_size;
        m.activations = probe.memory.recompute ? bytes{(boundary_per_sample * in_flight + widest_layer) * ab}
                                               : bytes{act_per_sample * in_flight * ab};
        m.overhead = wg.tp == 1 ? overhead_tp1 : overhead_tp_many;
        m.total = m.weights + m.gradients + m.optimizer + m.buffers + m.activations + m.overhead;
        m.capacity = pb.hw.gpu(wg.gpu).memory() * probe.memory.usable_fraction;
        return m;
    }

    [[nodiscard]] memory_report estimate(const problem& pb, const plan& pl) const {
        memory_report r;
        pl.for_each_worker([&](std::size_t p, std::size_t s, std::size_t w, const worker_group&) {
            worker_memory m = worker(pb, worker_probe::of(pl, p, s, w));
            m.pipeline = p, m.stage = s, m.worker = w;
            r.workers.push_back(m);
        });
        return r;
    }
};

static_assert(concepts::check_memory_model<sailor_memory_model>());
static_assert(concepts::worker_memory_model<sailor_memory_model>);

}  // namespace hetplan
