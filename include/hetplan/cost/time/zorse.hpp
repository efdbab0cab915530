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
//
// One load for the planner and the simulator: both describe a configuration as zorse_group_input
// (each group's GPUs with their microbatch counts, its ministages, its collectives and its
// point-to-point time) over a zorse_layer_table (per GPU type and microbatch size, prefix sums of
// layer times), and build_zorse_load turns that into the zorse_load the latency formula reads.
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hetplan/concepts/time_model.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/hardware/collectives.hpp"
#include "hetplan/hardware/machines.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/problem.hpp"

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

/// Per (GPU type, microbatch size) row: prefix sums over layers of one microbatch's forward,
/// backward (the forward recomputed when the plan recomputes, §3.1.3) and optimizer step.
class zorse_layer_table {
public:
    /// Adds the row of `gpu` at microbatch size `m` (if new) and returns its index.
    std::size_t add(const problem& pb, gpu_type_id gpu, int m, bool recompute) {
        for (std::size_t r = 0; r < keys_.size(); ++r)
            if (keys_[r] == key{gpu, m, recompute}) return r;
        const std::size_t L = pb.model.layers.size(), at = f_.size();
        const double state = pb.job.weight_bytes() + pb.job.gradient_bytes() + pb.job.master_bytes() + pb.job.optimizer_bytes();
        f_.resize(at + L + 1, 0.0), b_.resize(at + L + 1, 0.0), u_.resize(at + L + 1, 0.0);
        for (std::size_t l = 0; l < L; ++l) {
            const layer_timing t = pb.profiles.lookup(pb.hw.gpu(gpu), 1, m, pb.model, l, pb.job.compute_dtype(), state).first;
            f_[at + l + 1] = f_[at + l] + t.fwd.value;
            b_[at + l + 1] = b_[at + l] + t.backward_pass(recompute).value;
            u_[at + l + 1] = u_[at + l] + t.update.value;
        }
        keys_.push_back({gpu, m, recompute});
        layers_ = L;
        return keys_.size() - 1;
    }
    [[nodiscard]] double fwd(std::size_t row, layer_range r) const { return span(f_, row, r); }
    [[nodiscard]] double bwd(std::size_t row, layer_range r) const { return span(b_, row, r); }
    [[nodiscard]] double upd(std::size_t row, layer_range r) const { return span(u_, row, r); }
    /// Forward and backward of one microbatch through every layer.
    [[nodiscard]] double whole(std::size_t row) const {
        const layer_range all{0, static_cast<int>(layers_)};
        return fwd(row, all) + bwd(row, all);
    }
    [[nodiscard]] std::size_t layers() const { return layers_; }

private:
    struct key {
        gpu_type_id gpu{};
        int m = 0;
        bool recompute = true;
        friend bool operator==(const key&, const key&) = default;
    };
    [[nodiscard]] double span(const std::vector<double>& v, std::size_t row, layer_range r) const {
        const std::size_t at = row * (layers_ + 1);
        return v[at + static_cast<std::size_t>(r.end)] - v[at + static_cast<std::size_t>(r.begin)];
    }
    std::vector<key> keys_;
    std::vector<double> f_, b_, u_;
    std::size_t layers_ = 0;
};

/// A GPU group's ring (its GPUs, machine by machine) and per-layer collectives as prefix sums:
/// AllGather of the weights and ReduceScatter of the gradients, rings over the group's GPUs.
struct zorse_group_comm {
    std::vector<machine> ring;      ///< one entry per GPU, in ring order
    std::vector<machine> distinct;  ///< its machines, in order
    double ring_bandwidth = 0;      ///< slowest ring edge for a 64 MB message
    std::vector<double> ag, rs;     ///< prefix sums over layers

    zorse_group_comm(const problem& pb, std::vector<machine> gpus) : ring(std::move(gpus)) {
        // The ring lists its GPUs machine by machine: a machine's GPUs are adjacent.
        for (const machine& m : ring)
            if (distinct.empty() || !(distinct.back() == m)) distinct.push_back(m);
        const int n = static_cast<int>(ring.size());
        // A ring step waits for its slowest edge; edges share few distinct links (the machine's
        // interconnect, the network between machines), so each layer prices those only.
        std::vector<const builtin_link*> links;
        for (int k = 0; k < n; ++k) {
            const builtin_link* l = &gpu_link(pb.hw, ring[std::size_t(k)], ring[std::size_t((k + 1) % n)]);
            if (std::find(links.begin(), links.end(), l) == links.end()) links.push_back(l);
        }
        auto steps = [&](bytes size) { return collective::ring_steps_on<builtin_link>(n, size, double(n - 1), links).value; };
        ring_bandwidth = std::numeric_limits<double>::infinity();
        for (const builtin_link* l : links) ring_bandwidth = std::min(ring_bandwidth, l->bandwidth(megabytes(64)).value);
        ag.assign(pb.model.layers.size() + 1, 0.0);
        rs = ag;
        for (std::size_t l = 0; l < pb.model.layers.size(); ++l) {
            const double params = pb.model.layers[l].params;
            ag[l + 1] = ag[l] + steps(bytes{params * pb.job.weight_bytes()});
            rs[l + 1] = rs[l] + steps(bytes{params * pb.job.gradient_bytes()});
        }
    }
    [[nodiscard]] double all_gather(layer_range r) const { return ag[std::size_t(r.end)] - ag[std::size_t(r.begin)]; }
    [[nodiscard]] double reduce_scatter(layer_range r) const { return rs[std::size_t(r.end)] - rs[std::size_t(r.begin)]; }
};

/// One group of a configuration, as the latency model reads it. Per GPU: its row in the layer
/// table, its microbatches and its share of the group's state.
struct zorse_group_input {
    const zorse_group_comm* comm = nullptr;
    std::span<const std::size_t> rows;
    std::span<const int> microbatches;
    std::span<const double> shares;
    std::span<const layer_range> ministages;  ///< in the order the group runs them
    double p2p = 0;
};

/// One microbatch's activation between two groups: the slowest of their machine pairs.
[[nodiscard]] inline seconds zorse_boundary_time(const problem& pb, const std::vector<machine>& a, const std::vector<machine>& b, bytes size) {
    seconds worst{0};
    for (const auto& x : a)
        for (const auto& y : b) worst = max(worst, gpu_link(pb.hw, x, y).transfer_time(size));
    return worst;
}

/// Point-to-point time of group g of a pipeline (to the next, from the previous; round the
/// pipeline again when ministages interleave): the boundary activation of `m` samples after the
/// widest last layer of its ministages.
[[nodiscard]] inline double zorse_group_p2p(const problem& pb, std::span<const zorse_group_comm* const> groups,
                                            std::span<const layer_range> ministages, std::size_t g, int m, bool interleaved) {
    const std::size_t G = groups.size();
    if (G < 2) return 0;
    double act = 0;
    for (const auto& r : ministages) act = std::max(act, pb.model.layers.at(static_cast<std::size_t>(r.end - 1)).act_output_elems);
    const bytes boundary{act * m * pb.job.activation_bytes()};
    seconds p2p{0};
    if (g + 1 < G || interleaved) p2p = max(p2p, zorse_boundary_time(pb, groups[g]->distinct, groups[(g + 1) % G]->distinct, boundary));
    if (g > 0 || interleaved) p2p = max(p2p, zorse_boundary_time(pb, groups[(g + G - 1) % G]->distinct, groups[g]->distinct, boundary));
    return p2p.value;
}

/// The load of a configuration: one class per distinct (row, microbatches) in a group, each
/// ministage's collectives, and the first ministage's optimizer step on the slowest GPU's share.
inline void build_zorse_load(zorse_load& ld, const zorse_layer_table& times, std::span<const zorse_group_input> groups) {
    ld.clear();
    for (const zorse_group_input& g : groups) {
        const layer_range first = g.ministages.front();
        double update = 0;
        for (std::size_t i = 0; i < g.rows.size(); ++i) update = std::max(update, times.upd(g.rows[i], first) * g.shares[i]);
        ld.add_group(g.ministages.size(), g.p2p, update);
        const std::size_t base = ld.groups.back().first_ministage;
        for (std::size_t s = 0; s < g.ministages.size(); ++s) {
            ld.all_gather[base + s] = g.comm->all_gather(g.ministages[s]);
            ld.reduce_scatter[base + s] = g.comm->reduce_scatter(g.ministages[s]);
        }
        for (std::size_t i = 0; i < g.rows.size(); ++i) {
            bool seen = false;
            for (std::size_t j = 0; j < i && !seen; ++j) seen = g.rows[j] == g.rows[i] && g.microbatches[j] == g.microbatches[i];
            if (seen) continue;
            const std::size_t r = ld.add_class(g.microbatches[i]);
            for (std::size_t s = 0; s < g.ministages.size(); ++s) {
                ld.fwd[r + s] = times.fwd(g.rows[i], g.ministages[s]);
                ld.bwd[r + s] = times.bwd(g.rows[i], g.ministages[s]);
            }
        }
    }
}

struct zorse_time_model {
    /// The latency of one iteration (see the header comment). When `per_group` is given, it
    /// receives each group's sum over its ministages.
    [[nodiscard]] static zorse_latency latency(const zorse_load& ld, std::vector<double>* per_group = nullptr) {
        zorse_latency out;
        if (per_group) per_group->assign(ld.groups.size(), 0.0);
        const std::size_t G = ld.groups.size();
        for (std::size_t g = 0; g < G; ++g) {
            const double sum = group_core(ld, g);
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

    /// Group g's sum over its ministages of max(forward, AllGather) + max(backward, AllGather +
    /// ReduceScatter): the term microbatch counts decide (search/pipeline/microbatch_split.hpp).
    [[nodiscard]] static double group_core(const zorse_load& ld, std::size_t g) {
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
        return sum;
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
                out.back().push_back(machine_at(pb.hw, pb.pool(), w.gpu, w.zone, node));
            }
        }
        return out;
    }

    [[nodiscard]] time_report estimate(const problem& pb, const plan& pl) const {
        check_shape(pl);
        const auto& stages = pl.pipelines[0].stages;
        const std::size_t G = stages.size();
        const auto machines = worker_machines(pb, pl);
        zorse_layer_table table;
        std::vector<zorse_group_comm> comm;
        comm.reserve(G);
        std::vector<std::vector<layer_range>> ministages(G);
        std::vector<std::vector<std::size_t>> rows(G);
        std::vector<std::vector<int>> counts(G);
        std::vector<std::vector<double>> shares(G);
        bool interleaved = false;
        for (std::size_t g = 0; g < G; ++g) {
            comm.emplace_back(pb, machines[g]);
            ministages[g].assign(stages[g].layers.begin(), stages[g].layers.end());
            std::sort(ministages[g].begin(), ministages[g].end(), [](const layer_range& a, const layer_range& b) { return a.begin < b.begin; });
            interleaved = interleaved || ministages[g].size() > 1;
            for (const auto& w : stages[g].workers) {
                rows[g].push_back(table.add(pb, w.gpu, w.microbatch_size, pl.memory.recompute));
                counts[g].push_back(w.num_microbatches);
                shares[g].push_back(w.state_share);
            }
        }
        std::vector<const zorse_group_comm*> order;
        for (const auto& c : comm) order.push_back(&c);
        std::vector<zorse_group_input> in;
        for (std::size_t g = 0; g < G; ++g) {
            int m = 0;
            for (const auto& w : stages[g].workers) m = std::max(m, w.microbatch_size);
            in.push_back({&comm[g], rows[g], counts[g], shares[g], ministages[g], zorse_group_p2p(pb, order, ministages[g], g, m, interleaved)});
        }
        zorse_load ld;
        build_zorse_load(ld, table, in);
        time_report rep = report(ld);
        place_spans(ld, ministages, rep);
        return rep;
    }

private:
    /// Each ministage of each group as one span (all of the group's microbatches through it),
    /// placed by its dependencies for the picture: ministages run in layer order across groups
    /// (interleaved: group 0's second ministage follows the last group's first, §3.1-3.2), a
    /// ministage starts once its predecessor's first microbatch has arrived (from its fastest
    /// GPU; the very first waits for its AllGather) and ends no earlier than the predecessor's
    /// last microbatch plus one of its own; backwards run the same way in reverse, the last
    /// ending with its ReduceScatter. Lengths are the latency formula's terms (max(forward,
    /// AllGather), max(backward, AllGather + ReduceScatter)); the formula charges fill + the
    /// busiest group's sum + drain, which this placement equals where one group is the
    /// bottleneck throughout, and can differ from elsewhere.
    static void place_spans(const zorse_load& ld, const std::vector<std::vector<layer_range>>& ministages, time_report& rep) {
        struct piece {
            std::size_t g, s;
            double len[2], busy[2], one[2];  // [forward, backward]: span length, busiest GPU's compute, one microbatch on its fastest GPU
        };
        std::vector<piece> order;
        for (std::size_t g = 0; g < ld.groups.size(); ++g) {
            const auto& gr = ld.groups[g];
            for (std::size_t s = 0; s < gr.ministages; ++s) {
                piece p{g, s, {0, 0}, {0, 0}, {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()}};
                for (std::size_t c = gr.first_class; c < gr.first_class + gr.classes; ++c) {
                    const double n = ld.microbatches[c], t[2] = {ld.fwd[ld.row[c] + s], ld.bwd[ld.row[c] + s]};
                    for (int k = 0; k < 2; ++k) {
                        p.len[k] = std::max(p.len[k], n * std::max(t[k], gr.p2p));
                        p.busy[k] = std::max(p.busy[k], n * t[k]);
                        if (n > 0) p.one[k] = std::min(p.one[k], std::max(t[k], gr.p2p));  // a GPU without microbatches sends none
                    }
                }
                const double ag = ld.all_gather[gr.first_ministage + s], rs = ld.reduce_scatter[gr.first_ministage + s];
                p.len[0] = std::max(p.len[0], ag), p.len[1] = std::max(p.len[1], ag + rs);
                for (double& one : p.one)
                    if (one == std::numeric_limits<double>::infinity()) one = 0;  // no GPU of the group has a microbatch
                order.push_back(p);
            }
        }
        if (order.empty()) return;
        std::stable_sort(order.begin(), order.end(), [&](const piece& a, const piece& b) {
            return ministages[a.g][a.s].begin < ministages[b.g][b.s].begin;
        });
        std::vector<double> free_at(ld.groups.size(), 0.0);
        std::vector<std::array<double, 2>> start(order.size()), end(order.size());
        auto place = [&](std::size_t i, int k, std::optional<std::size_t> pred, double ready) {
            const piece& p = order[i];
            double finish = 0;
            if (pred) {
                const piece& q = order[*pred];
                if (q.g == p.g) ready = end[*pred][k];  // the same GPUs: after it
                else {
                    const double send = ld.groups[q.g].p2p;
                    ready = start[*pred][k] + q.one[k] + send;
                    finish = end[*pred][k] + send + p.one[k];
                }
            }
            start[i][k] = std::max(free_at[p.g], ready);
            end[i][k] = std::max(start[i][k] + p.len[k], finish);
            free_at[p.g] = end[i][k];
            rep.spans.push_back({0, p.g, int(p.s), k == 1, seconds{start[i][k]}, seconds{end[i][k]}, seconds{p.busy[k]}});
        };
        const std::size_t n = order.size();
        for (std::size_t i = 0; i < n; ++i)  // the first waits for its AllGather, which nothing hides
            place(i, 0, i ? std::optional(i - 1) : std::nullopt, ld.all_gather[ld.groups[order[0].g].first_ministage + order[0].s]);
        for (std::size_t i = n; i-- > 0;) place(i, 1, i + 1 < n ? std::optional(i + 1) : std::nullopt, end[n - 1][0]);
        // The first ministage's ReduceScatter, which nothing hides (the drain's, as the formula has it).
        rep.spans.back().end += seconds{ld.reduce_scatter[ld.groups[order[0].g].first_ministage + order[0].s]};
        std::stable_sort(rep.spans.begin(), rep.spans.end(), [](const work_span& a, const work_span& b) {
            return a.stage != b.stage ? a.stage < b.stage : a.start.value < b.start.value;
        });
    }

    /// The time report of a load: per group its busiest GPU, exposed communication and bubble.
    [[nodiscard]] static time_report report(const zorse_load& ld) {
        std::vector<double> per_group;
        const zorse_latency lat = latency(ld, &per_group);
        time_report rep;
        for (std::size_t g = 0; g < ld.groups.size(); ++g) {
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
        // The drain ends with the first group's optimizer step (Zorse §4.2): said apart, as the
        // iteration's update, so that pipeline + update is the iteration.
        const double update = ld.groups.empty() ? 0.0 : ld.groups[0].update;
        p.ramp = seconds{lat.fill + lat.drain - update};
        p.steady = seconds{lat.core};
        p.total = seconds{lat.total - update};
        // No per-microbatch straggler: with ministages interleaved the core is the busiest
        // group's whole batch (Zorse §4.2), not (microbatches - 1) x one stage's time.
        p.straggler = seconds{0};
        rep.pipelines.push_back(p);
        rep.pipeline = p.total;
        rep.update = seconds{update};
        rep.iteration = seconds{lat.total};
        return rep;
    }
};

static_assert(concepts::check_time_model<zorse_time_model>());

}  // namespace hetplan
