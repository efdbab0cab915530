#pragma once
// Cephalo's time model: FSDP with layered gradient accumulation (Cephalo §2.2-2.4, Eqs. 2-3).
// Every layer is one FSDP unit; all microbatches of a GPU run through a unit before the next,
// and the next unit's AllGather overlaps that compute. Per unit u:
//   forward  = max( max_i T_f^{g_i}(m_i, l_i), AG_u )                     (Eq. 2)
//   backward = max( max_i T_b^{g_i}(m_i, l_i), RS_u + AG_u )              (Eq. 3)
// with T(m, l) = l x T(m) (§2.3: measured per microbatch size, linear beyond, scaled by the
// count); with activations checkpointed (§4.1) the backward recomputes the forward first. AG/RS
// are ring collectives of the unit's parameters over all GPUs from the network model, 15% slower
// for a unit sharded unevenly (§2.3, §3.3). The iteration adds the slowest GPU's optimizer step
// on its share of the state.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/concepts/time_model.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/cost/fsdp_units.hpp"
#include "hetplan/cost/memory/cephalo.hpp"
#include "hetplan/hardware/collectives.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/problem.hpp"

namespace hetplan {

struct cephalo_time_model {
    double uneven_overhead = 0.15;  ///< §2.3: generalised collectives on uneven inputs

    /// One microbatch of `layer` on the worker's GPU type: forward, backward and the optimizer
    /// step of the whole layer (profile or analytical fallback, TP 1).
    [[nodiscard]] static layer_timing layer_time(const problem& pb, const worker_group& w, std::size_t layer) {
        return pb.profiles
            .lookup(pb.hw.gpu(w.gpu), 1, w.microbatch_size, pb.model, layer, pb.job.compute_dtype(),
                    cephalo_memory_model::state_bytes_per_param(pb.job))
            .first;
    }

    /// Checks the plan is what the model prices: one FSDP stage over every layer, TP 1.
    static const stage& fsdp_stage(const problem& pb, const plan& pl) {
        if (pl.pipelines.size() != 1 || pl.pipelines[0].stages.size() != 1)
            throw model_error("cephalo time model: prices one pipeline of one FSDP stage (Cephalo §2), got " +
                              (pl.pipelines.size() != 1 ? std::to_string(pl.pipelines.size()) + " pipelines"
                                                        : "a pipeline of " + std::to_string(pl.pipelines[0].stages.size()) + " stages"));
        const stage& st = pl.pipelines[0].stages[0];
        if (st.num_layers() != pb.model.num_layers())
            throw model_error("cephalo time model: the FSDP stage must hold all " + std::to_string(pb.model.num_layers()) + " layers");
        for (const auto& w : st.workers)
            if (w.tp != 1) throw model_error("cephalo time model: no tensor parallelism in Cephalo (TP " + std::to_string(w.tp) + ")");
        return st;
    }

    /// Eqs. 2-3 for one unit: the slowest GPU's forward overlapped with the AllGather that
    /// prefetches the next unit; its backward with ReduceScatter + AllGather.
    [[nodiscard]] static seconds unit_time(seconds fwd, seconds bwd, seconds all_gather, seconds reduce_scatter) {
        return max(fwd, all_gather) + max(bwd, reduce_scatter + all_gather);
    }

    struct unit_collectives {
        seconds all_gather{}, reduce_scatter{};
        [[nodiscard]] unit_collectives scaled(double k) const { return {all_gather * k, reduce_scatter * k}; }
    };

    /// Even-sharded AllGather of `layer`'s weights and ReduceScatter of its gradients as rings
    /// over n GPUs, `endpoint_of(k)` being the k-th GPU of the ring.
    template <class EndpointOf>
    [[nodiscard]] static unit_collectives collectives(const problem& pb, std::size_t layer, int n, EndpointOf&& endpoint_of) {
        auto edge = [&](int k) -> decltype(auto) { return pb.hw.network.between(endpoint_of(k), endpoint_of((k + 1) % n)); };
        const auto& spec = pb.model.layers.at(layer);
        return {collective::ring_all_gather(n, bytes{spec.params * pb.job.weight_bytes()}, edge),
                collective::ring_reduce_scatter(n, bytes{spec.params * pb.job.gradient_bytes()}, edge)};
    }

    [[nodiscard]] time_report estimate(const problem& pb, const plan& pl) const {
        const stage& st = fsdp_stage(pb, pl);
        const std::size_t n = st.workers.size();
        const int L = pb.model.num_layers();
        std::vector<double> shares;
        for (const auto& w : st.workers) shares.push_back(w.state_share);
        const auto sharding = unit_shards(shares, L);
        auto endpoint_of = [&](int k) {
            const auto& w = st.workers[static_cast<std::size_t>(k)];
            return endpoint{w.zone, w.gpu, 1};
        };

        time_report r;
        stage_time s;
        seconds total{};
        std::vector<seconds> update(n);
        int most = 0;
        for (const auto& w : st.workers) most = std::max(most, w.num_microbatches);
        // Units in order; the sharding lists even units first, so unit u of the model takes
        // row u (which rows are uneven matters only through how many there are).
        std::vector<std::pair<seconds, seconds>> fwd_span(static_cast<std::size_t>(L)), bwd_span = fwd_span;  // (length, compute)
        for (int u = 0; u < L; ++u) {
            const auto layer = static_cast<std::size_t>(u);
            seconds fwd{}, bwd{};
            for (std::size_t k = 0; k < n; ++k) {
                const worker_group& w = st.workers[k];
                const layer_timing t = layer_time(pb, w, layer);
                fwd = max(fwd, t.fwd * double(w.num_microbatches));
                bwd = max(bwd, t.backward_pass(pl.memory.recompute) * double(w.num_microbatches));
                update[k] += t.update * w.state_share;  // each GPU updates its share of the layer
            }
            const double factor = sharding.is_uneven(layer) ? 1.0 + uneven_overhead : 1.0;
            const auto c = collectives(pb, layer, int(n), endpoint_of).scaled(factor);
            s.compute += fwd + bwd;
            s.forward += fwd;
            const seconds unit = unit_time(fwd, bwd, c.all_gather, c.reduce_scatter);
            s.sync += max(unit - fwd - bwd, seconds{0});  // exposed communication
            total += unit;
            fwd_span[layer] = {max(fwd, c.all_gather), fwd};
            bwd_span[layer] = {max(bwd, c.reduce_scatter + c.all_gather), bwd};
        }
        // The order the units run in (§2.2): every unit's forward, then the backwards in reverse.
        seconds t{};
        for (int k = 0; k < 2 * L; ++k) {
            const bool backward = k >= L;
            const int u = backward ? 2 * L - 1 - k : k;
            const auto [len, busy] = (backward ? bwd_span : fwd_span)[std::size_t(u)];
            r.spans.push_back({0, 0, u, backward, t, t + len, busy});
            t += len;
        }
        for (const seconds u : update) s.update = max(s.update, u);
        s.busy = total;
        r.stages.push_back(s);
        pipeline_time p;
        p.microbatches = most;
        p.total = total;
        r.pipelines.push_back(p);
        r.pipeline = total;
        r.update = s.update;
        r.iteration = total + s.update;
        return r;
    }
};

static_assert(concepts::check_time_model<cephalo_time_model>());

}  // namespace hetplan
