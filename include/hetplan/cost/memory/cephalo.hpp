#pragma once
// Cephalo's memory model (Cephalo §2.3, §3.2): on each GPU
//   M = M_state + M_compute(m),
//   M_state   = (state bytes per parameter) x |shard|: 16 B for fp32 Adam (4 weight + 4 gradient
//               + 8 moments), plus the fp32 master copy under mixed precision;
//   M_compute = a + b m, linear in the microbatch size m and independent of the number of
//               microbatches, since activations are checkpointed and offloaded (§2.2).
// Usable memory is capped at a fraction of capacity (§3.2: 80%, from the plan's memory options).
// The fit comes from profiled points (model_memory.json) or, without them, from the model: the
// current and the prefetched FSDP unit gathered in full, plus one layer's activations per sample.
#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "hetplan/concepts/memory_model.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/problem.hpp"

namespace hetplan {

/// M_compute(m) = intercept + per_sample x m (Cephalo §2.3, Fig. 5 right).
struct compute_memory_fit {
    bytes intercept{};
    bytes per_sample{};

    [[nodiscard]] bytes at(int m) const { return intercept + per_sample * double(m); }

    /// Least-squares line through profiled (microbatch size, bytes) points.
    [[nodiscard]] static compute_memory_fit from_points(std::span<const std::pair<int, bytes>> pts) {
        if (pts.empty()) throw input_error("compute memory fit: no profiled points");
        double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (const auto& [m, b] : pts) {
            if (m < 1 || !(b.value >= 0)) throw input_error("compute memory fit: bad point (mbs " + std::to_string(m) + ")");
            n += 1, sx += m, sy += b.value, sxx += double(m) * m, sxy += m * b.value;
        }
        const double den = n * sxx - sx * sx;
        const double slope = den > 0 ? (n * sxy - sx * sy) / den : 0.0;
        return {bytes{(sy - slope * sx) / n}, bytes{std::max(slope, 0.0)}};
    }

    /// From the model when nothing was profiled: two full units in flight (current + prefetch)
    /// and the widest layer's activations for each sample of a microbatch.
    [[nodiscard]] static compute_memory_fit analytical(const problem& pb) {
        double unit = 0, act = 0;
        for (const auto& l : pb.model.layers) {
            unit = std::max(unit, l.params);
            act = std::max(act, l.act_mem_elems);
        }
        return {bytes{2 * unit * pb.job.weight_bytes()}, bytes{act * pb.job.activation_bytes()}};
    }
};

struct cephalo_memory_model {
    /// Profiled fit; empty: compute_memory_fit::analytical.
    std::optional<compute_memory_fit> compute;

    [[nodiscard]] compute_memory_fit fit(const problem& pb) const { return compute ? *compute : compute_memory_fit::analytical(pb); }

    /// Training-state bytes per parameter (§2.3: 16 for full-precision Adam).
    [[nodiscard]] static double state_bytes_per_param(const job_spec& job) {
        return job.weight_bytes() + job.gradient_bytes() + job.master_bytes() + job.optimizer_bytes();
    }

    /// Bytes of the whole training state.
    [[nodiscard]] static bytes state(const problem& pb) { return bytes{pb.model.total_params() * state_bytes_per_param(pb.job)}; }

    [[nodiscard]] memory_report estimate(const problem& pb, const plan& pl) const {
        const compute_memory_fit f = fit(pb);
        const double per_param = state_bytes_per_param(pb.job);
        memory_report r;
        pl.for_each_worker([&](std::size_t p, std::size_t s, std::size_t w, const worker_group& wg) {
            const stage& st = pl.pipelines[p].stages[s];
            double params = 0;
            for (const auto& range : st.layers) params += pb.model.params_in(range.begin, range.end);
            worker_memory m;
            m.pipeline = p, m.stage = s, m.worker = w;
            const double shard = params * wg.state_share / double(wg.tp);
            m.weights = bytes{shard * pb.job.weight_bytes()};
            m.gradients = bytes{shard * pb.job.gradient_bytes()};
            m.optimizer = bytes{shard * (per_param - pb.job.weight_bytes() - pb.job.gradient_bytes())};
            m.activations = f.per_sample * double(wg.microbatch_size);
            m.overhead = f.intercept;
            m.total = m.weights + m.gradients + m.optimizer + m.activations + m.overhead;
            m.capacity = pb.hw.gpu(wg.gpu).memory() * pl.memory.usable_fraction;
            // Offloaded boundary activations wait in host memory: one per layer and sample.
            double boundary = 0;
            for (const auto& range : st.layers)
                for (int l = range.begin; l < range.end; ++l) boundary += pb.model.layers.at(static_cast<std::size_t>(l)).act_output_elems;
            m.host = bytes{boundary * pb.job.activation_bytes() * wg.batch()};
            r.workers.push_back(m);
        });
        return r;
    }
};

static_assert(concepts::check_memory_model<cephalo_memory_model>());

}  // namespace hetplan
