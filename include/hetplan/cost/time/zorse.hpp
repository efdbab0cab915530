#pragma once
// Zorse's latency model (Zorse §3.3.4) for Pipeline-Efficient ZeRO DP (§3.1) over a
// heterogeneous pipeline of GPU groups (§3.2):
//   L_total = fill + max_g sum_{s of g} ( L_fwd(g, s) + L_bwd(g, s) ) + drain
// For ministage s of group g, GPU i processing n_i microbatches (one of them: forward F_i,
// backward B_i with the forward recomputed, §3.1.3), p the time to pass one microbatch's
// boundary activation to or from a neighbouring group, and AG, RS the group's AllGathers and
// ReduceScatters summed over the ministage's layers:
//   L_fwd = max( max_i n_i max(F_i, p), AG )       one AllGather per layer, prefetched (Table 1)
//   L_bwd = max( max_i n_i max(B_i, p), AG + RS )  gathered again, gradients reduce-scattered;
// ReduceScatters and the optimizer updates of finished ministages overlap later compute
// (§3.1.2). fill: the first ministage's AllGather, which nothing hides, and one microbatch's
// forward through the first ministage of every group but the last, with its sends; drain: the
// backward mirror, plus the last ReduceScatter and the optimizer step of the last ministage
// updated. The public implementation has this shape; it leaves the update out and divides
// communication by 1000 twice (peers.md), which hetplan does not.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "hetplan/concepts/time_model.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/hardware/collectives.hpp"
#include "hetplan/hardware/machines.hpp"

namespace hetplan {

/// What the latency model reads: groups in pipeline order, each with its ministages (in the
/// order it runs them) and classes of GPUs (alike GPUs with the same number of microbatches:
/// the maxima need one of each). Seconds throughout. Reused buffers: `clear` keeps capacity.
struct zorse_load {
    struct group {
        std::size_t first_class = 0, classes = 0, first_ministage = 0, ministages = 0;
        double p2p = 0;     ///< one microbatch's activation to or from a neighbour, the slower
        double update = 0;  ///< optimizer step of its first ministage
    };
    std::vector<group> groups;
    std::vector<int> microbatches;            ///< per class
    std::vector<std::size_t> row;             ///< per class: its first entry in fwd / bwd
    std::vector<double> fwd, bwd;             ///< per class and ministage of its group
    std::vector<double> all_gather, reduce_scatter;  ///< per ministage (all groups')

    void clear() {
        groups.clear(), microbatches.clear(), row.clear(), fwd.clear(), bwd.clear(), all_gather.clear(), reduce_scatter.clear();
    }
    /// Starts a group of S ministages (collectives 0 until set).
    void add_group(std::size_t S, double p2p, double update) {
        groups.push_back({microbatches.size(), 0, all_gather.size(), S, p2p, update});
        all_gather.resize(all_gather.size() + S, 0.0);
        reduce_scatter.resize(reduce_scatter.size() + S, 0.0);
    }
    /// Adds a class to the last group; returns its first entry in fwd / bwd.
    std::size_t add_class(int n) {
        group& g = groups.back();
        ++g.classes;
        microbatches.push_back(n);
        row.push_back(fwd.size());
        fwd.resize(fwd.size() + g.ministages, 0.0);
        bwd.resize(bwd.size() + g.ministages, 0.0);
        return row.back();
    }
};

struct zorse_latency {
    double fill = 0, core = 0, drain = 0, total = 0;
    std::size_t bottleneck = 0;  ///< group whose ministages take longest
};

struct zorse_time_model {
    /// The latency of one iteration (see the header comment). When `per_group` is given, it
    /// receives each group's sum over its ministages.
    [[nodiscard]] static zorse_latency latency(const zorse_load& ld, std::vector<double>* per_group = nullptr) {
        zorse_latency out;
        if (per_group) per_group->assign(ld.groups.size(), 0.0);
        const std::size_t G = ld.groups.size();
        for (std::size_t g = 0; g < G; ++g) {
            const auto& gr = ld.groups[g];
            double sum = 0;
            for (std::size_t s = 0; s < gr.ministages; ++s) {
                double f = 0, b = 0;
                for (std::size_t c = gr.first_class; c < gr.first_class + gr.classes; ++c) {
                    const double n = ld.microbatches[c];
                    f = std::max(f, n * std::max(ld.fwd[ld.row[c] + s], gr.p2p));
                    b = std::max(b, n * std::max(ld.bwd[ld.row[c] + s], gr.p2p));
                }
                const double ag = ld.all_gather[gr.first_ministage + s], rs = ld.reduce_scatter[gr.first_ministage + s];
                sum += std::max(f, ag) + std::max(b, ag + rs);
            }
            if (per_group) (*per_group)[g] = sum;
            if (sum > out.core) out.core = sum, out.bottleneck = g;
        }
        if (G == 0) return out;
        // One microbatch through the first ministage of each group: forward to fill, backward to drain.
        auto first = [&](std::size_t g, const std::vector<double>& t) {
            double m = 0;
            const auto& gr = ld.groups[g];
            for (std::size_t c = gr.first_class; c < gr.first_class + gr.classes; ++c) m = std::max(m, t[ld.row[c]]);
            return m;
        };
        out.fill = ld.all_gather[ld.groups[0].first_ministage];
        out.drain = ld.reduce_scatter[ld.groups[0].first_ministage] + ld.groups[0].update;
        for (std::size_t g = 0; g + 1 < G; ++g) {
            out.fill += first(g, ld.fwd) + ld.groups[g].p2p;
            out.drain += first(g, ld.bwd) + ld.groups[g].p2p;
        }
        out.total = out.fill + out.core + out.drain;
        return out;
    }

    /// Checks the plan is what the model prices: one pipeline of GPU groups, TP 1.
    static void check_shape(const plan& pl) {
        if (pl.pipelines.size() != 1) throw model_error("zorse time model: prices one pipeline of GPU groups (Zorse §3.2), got " +
                                                        std::to_string(pl.pipelines.size()));
        for (const auto& st : pl.pipelines[0].stages) {
            if (st.layers.empty() || st.workers.empty()) throw model_error("zorse time model: a group without layers or GPUs");
            for (const auto& w : st.workers)
                if (w.tp != 1) throw model_error("zorse time model: no tensor parallelism in Zorse (TP " + std::to_string(w.tp) + ")");
        }
    }

    /// The machine of every worker, by stage: pinned nodes as given, the others filling the
    /// nodes of their type and zone in plan order.
    [[nodiscard]] static std::vector<std::vector<machine>> worker_machines(const problem& pb, const plan& pl) {
        std::map<std::pair<std::size_t, std::size_t>, int> next;
        std::vector<std::vector<machine>> out;
        for (const auto& st : pl.pipelines.at(0).stages) {
            out.emplace_back();
            for (const auto& w : st.workers) {
                const int k = next[{w.gpu.index(), w.zone.index()}]++;
                const int node = w.node >= 0 ? w.node : k / pb.hw.gpus_per_node(w.gpu);
                out.back().push_back(machine_at(pb.hw, w.gpu, w.zone, node));
            }
        }
        return out;
    }

    /// AllGather of the weights and ReduceScatter of the gradients of `layer` as rings over a
    /// group's GPUs in order.
    [[nodiscard]] static std::pair<seconds, seconds> layer_collectives(const problem& pb, const std::vector<machine>& ring, std::size_t layer) {
        const int n = static_cast<int>(ring.size());
        auto edge = [&](int k) -> const builtin_link& { return gpu_link(pb.hw, ring[std::size_t(k)], ring[std::size_t((k + 1) % n)]); };
        const double params = pb.model.layers.at(layer).params;
        return {collective::ring_all_gather(n, bytes{params * pb.job.weight_bytes()}, edge),
                collective::ring_reduce_scatter(n, bytes{params * pb.job.gradient_bytes()}, edge)};
    }

    /// One microbatch's activation between two groups: the slowest of their machine pairs.
    [[nodiscard]] static seconds boundary_time(const problem& pb, const std::vector<machine>& a, const std::vector<machine>& b, bytes size) {
        seconds worst{0};
        for (const auto& x : a)
            for (const auto& y : b) worst = max(worst, gpu_link(pb.hw, x, y).transfer_time(size));
        return worst;
    }

    [[nodiscard]] time_report estimate(const problem& pb, const plan& pl) const {
        check_shape(pl);
        const auto& stages = pl.pipelines[0].stages;
        const auto machines = worker_machines(pb, pl);
        const double state_bytes = pb.job.weight_bytes() + pb.job.gradient_bytes() + pb.job.master_bytes() + pb.job.optimizer_bytes();
        const std::size_t G = stages.size();
        bool interleaved = false;
        for (const auto& st : stages) interleaved = interleaved || st.layers.size() > 1;
        // Distinct machines per group, for the point-to-point links.
        std::vector<std::vector<machine>> distinct(G);
        for (std::size_t g = 0; g < G; ++g)
            for (const auto& m : machines[g])
                if (std::find(distinct[g].begin(), distinct[g].end(), m) == distinct[g].end()) distinct[g].push_back(m);
        zorse_load ld;
        for (std::size_t g = 0; g < G; ++g) {
            const stage& st = stages[g];
            std::vector<layer_range> ministages(st.layers.begin(), st.layers.end());
            std::sort(ministages.begin(), ministages.end(), [](const layer_range& a, const layer_range& b) { return a.begin < b.begin; });
            // Boundary activation of the widest microbatch, to the next and from the previous group
            // (round the pipeline again when ministages interleave).
            int m = 0;
            double act = 0;
            for (const auto& w : st.workers) m = std::max(m, w.microbatch_size);
            for (const auto& r : ministages) act = std::max(act, pb.model.layers.at(static_cast<std::size_t>(r.end - 1)).act_output_elems);
            const bytes boundary{act * m * pb.job.activation_bytes()};
            seconds p2p{0};
            if (G > 1) {
                if (g + 1 < G || interleaved) p2p = max(p2p, boundary_time(pb, distinct[g], distinct[(g + 1) % G], boundary));
                if (g > 0 || interleaved) p2p = max(p2p, boundary_time(pb, distinct[(g + G - 1) % G], distinct[g], boundary));
            }
            // Optimizer step of the first ministage: the slowest GPU on its share.
            double update = 0;
            for (const auto& w : st.workers) {
                double u = 0;
                for (int l = ministages.front().begin; l < ministages.front().end; ++l)
                    u += lookup(pb, w, static_cast<std::size_t>(l), state_bytes).update.value;
                update = std::max(update, u * w.state_share);
            }
            ld.add_group(ministages.size(), p2p.value, update);
            for (std::size_t s = 0; s < ministages.size(); ++s)
                for (int l = ministages[s].begin; l < ministages[s].end; ++l) {
                    const auto [ag, rs] = layer_collectives(pb, machines[g], static_cast<std::size_t>(l));
                    ld.all_gather[ld.groups.back().first_ministage + s] += ag.value;
                    ld.reduce_scatter[ld.groups.back().first_ministage + s] += rs.value;
                }
            for (const auto& w : st.workers) {
                const std::size_t r = ld.add_class(w.num_microbatches);
                for (std::size_t s = 0; s < ministages.size(); ++s)
                    for (int l = ministages[s].begin; l < ministages[s].end; ++l) {
                        const layer_timing t = lookup(pb, w, static_cast<std::size_t>(l), state_bytes);
                        ld.fwd[r + s] += t.fwd.value;
                        ld.bwd[r + s] += t.backward_pass(pl.memory.recompute).value;
                    }
            }
        }
        std::vector<double> per_group;
        const zorse_latency lat = latency(ld, &per_group);
        time_report rep;
        for (std::size_t g = 0; g < G; ++g) {
            const auto& gr = ld.groups[g];
            stage_time s;
            s.stage = g;
            for (std::size_t c = gr.first_class; c < gr.first_class + gr.classes; ++c) {
                double one = 0, all = 0, fwd = 0;
                for (std::size_t k = 0; k < gr.ministages; ++k) {
                    one += ld.fwd[ld.row[c] + k] + ld.bwd[ld.row[c] + k];
                    fwd += ld.fwd[ld.row[c] + k];
                    all += ld.microbatches[c] * (ld.fwd[ld.row[c] + k] + ld.bwd[ld.row[c] + k]);
                }
                if (one > s.compute.value) s.compute = seconds{one}, s.forward = seconds{fwd};
                s.busy = max(s.busy, seconds{all});
            }
            s.p2p = seconds{gr.p2p};
            s.sync = max(seconds{per_group[g]} - s.busy, seconds{0});  // exposed communication
            s.update = seconds{gr.update};
            s.bubble = seconds{lat.core - per_group[g]};
            rep.stages.push_back(s);
        }
        pipeline_time p;
        int most = 0;
        for (int n : ld.microbatches) most = std::max(most, n);
        p.microbatches = most;
        p.ramp = seconds{lat.fill + lat.drain};
        p.steady = seconds{lat.core};
        p.total = seconds{lat.total};
        p.straggler = seconds{lat.core};
        rep.pipelines.push_back(p);
        rep.pipeline = p.total;
        rep.update = seconds{ld.groups.empty() ? 0.0 : ld.groups[0].update};
        rep.iteration = p.total;
        return rep;
    }

private:
    static layer_timing lookup(const problem& pb, const worker_group& w, std::size_t layer, double state_bytes) {
        return pb.profiles.lookup(pb.hw.gpu(w.gpu), 1, w.microbatch_size, pb.model, layer, pb.job.compute_dtype(), state_bytes).first;
    }
};

static_assert(concepts::check_time_model<zorse_time_model>());

}  // namespace hetplan
