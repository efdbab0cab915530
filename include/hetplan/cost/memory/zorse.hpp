#pragma once
// Zorse's memory model (Zorse §3.3.5 with §3.1.1-§3.1.3 and Table 1), per GPU of a group whose
// ministages hold P parameters in all, the GPU holding `share` of the group's sharded state:
//   weights     the two largest consecutive ministages, materialised in the compute precision
//               (current and prefetched: Table 1's 2 x L/S x P_layer); the rest offloaded
//   gradients   the largest ministage's, accumulated over the microbatches until its
//               ReduceScatter and optimizer update free them (§3.1.2)
//   optimizer   share x P x (fp32 master copy under mixed precision + moments): ZeRO within the
//               group, kept on the GPU, as the public implementation does
//   activations the boundary activations of the current and the next microbatch and one
//               gradient of them (§3.1.3: the others offloaded), plus one layer's working set
//               while its forward is recomputed
//   overhead    framework and communication buffers, `reserved` (2 GiB, the public default)
// Memory is checked per GPU against its own capacity (the public implementation checks a group
// against its smallest GPU). Host memory per GPU: its share of the offloaded weights and every
// boundary activation of its microbatches (§3.1.3: "the host machine must have sufficient
// memory to store all ministages and boundary activations").
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "hetplan/concepts/memory_model.hpp"
#include "hetplan/cost/time/zorse.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/problem.hpp"

namespace hetplan {

/// What the per-GPU formula reads of a group (parameters and activation elements per sample).
struct zorse_group_shape {
    double params = 0;            ///< P: every layer of the group
    double materialised = 0;      ///< the two largest consecutive ministages
    double largest_ministage = 0;
    double boundary_elems = 0;    ///< one boundary activation, per sample
    double working_elems = 0;     ///< one layer's activations while recomputed, per sample
    double boundaries = 0;        ///< all the group's boundary activations, per sample

    /// Adds the group's next ministage (in the order it runs them).
    void add(const model_spec& model, layer_range r) {
        const double p = model.params_in(r.begin, r.end);
        for (int l = r.begin; l < r.end; ++l) {
            const auto& spec = model.layers.at(static_cast<std::size_t>(l));
            boundary_elems = std::max(boundary_elems, spec.act_output_elems);
            working_elems = std::max(working_elems, spec.act_mem_elems);
            boundaries += spec.act_output_elems;
        }
        params += p;
        largest_ministage = std::max(largest_ministage, p);
        materialised = std::max(materialised, p + last_);
        last_ = p;
    }

    /// From the group's ministages in the order it runs them.
    template <class Ranges>
    static zorse_group_shape of(const model_spec& model, const Ranges& ministages) {
        zorse_group_shape g;
        for (const layer_range& r : ministages) g.add(model, r);
        return g;
    }

private:
    double last_ = 0;  ///< parameters of the previous ministage
};

struct zorse_memory_model {
    bytes reserved = gibibytes(2);

    /// One GPU: `share` of the group's state, microbatches of `mbs` samples, `microbatches` of them.
    [[nodiscard]] worker_memory per_gpu(const job_spec& job, const zorse_group_shape& g, double share, int mbs, int microbatches,
                                        bytes capacity) const {
        worker_memory m;
        const double a = job.activation_bytes() * mbs;
        m.weights = bytes{g.materialised * job.weight_bytes()};
        m.gradients = bytes{g.largest_ministage * job.gradient_bytes()};
        m.optimizer = bytes{share * g.params * (job.master_bytes() + job.optimizer_bytes())};
        m.activations = bytes{3 * g.boundary_elems * a + g.working_elems * a};
        m.overhead = reserved;
        m.total = m.weights + m.gradients + m.optimizer + m.activations + m.overhead;
        m.capacity = capacity;
        m.host = bytes{share * g.params * job.weight_bytes() + g.boundaries * a * microbatches};
        return m;
    }

    [[nodiscard]] memory_report estimate(const problem& pb, const plan& pl) const {
        zorse_time_model::check_shape(pl);
        memory_report r;
        const auto& stages = pl.pipelines[0].stages;
        for (std::size_t s = 0; s < stages.size(); ++s) {
            std::vector<layer_range> ministages(stages[s].layers.begin(), stages[s].layers.end());
            std::sort(ministages.begin(), ministages.end(), [](const layer_range& x, const layer_range& y) { return x.begin < y.begin; });
            const zorse_group_shape g = zorse_group_shape::of(pb.model, ministages);
            for (std::size_t w = 0; w < stages[s].workers.size(); ++w) {
                const auto& wg = stages[s].workers[w];
                worker_memory m = per_gpu(pb.job, g, wg.state_share, wg.microbatch_size, wg.num_microbatches,
                                          pb.hw.gpu(wg.gpu).memory() * pl.memory.usable_fraction);
                m.pipeline = 0, m.stage = s, m.worker = w;
                r.workers.push_back(m);
            }
        }
        return r;
    }

    /// Host memory each machine needs: the sum over its GPUs.
    [[nodiscard]] std::map<std::tuple<std::size_t, std::size_t, int>, bytes> host_per_machine(const problem& pb, const plan& pl) const {
        const auto machines = zorse_time_model::worker_machines(pb, pl);
        const auto rep = estimate(pb, pl);
        std::map<std::tuple<std::size_t, std::size_t, int>, bytes> out;  // (GPU type, zone, node) -> bytes
        for (const auto& w : rep.workers) {
            const machine& m = machines[w.stage][w.worker];
            out[{m.gpu.index(), m.zone.index(), m.index}] += w.host;
        }
        return out;
    }
};

static_assert(concepts::check_memory_model<zorse_memory_model>());

}  // namespace hetplan
