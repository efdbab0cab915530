#pragma once
// Zorse's planner (Zorse §3.3) as a composition of hetplan pieces:
//   Phase 1  search::cluster_partitions    GPU groups from min-k-cuts of the bandwidth graph
//   Phase 2  search::proportional_split     microbatches by GPU speed within a group, layers
//                                           by group speed (§3.3.3)
//            search::interleaved_layout     S equal ministages per group, dealt round-robin
//            for every partition, microbatch size m and S: the latency and memory models
//   latency  zorse_time_model::latency      §3.3.4, the formulas the simulator uses
//   memory   zorse_memory_model::per_gpu    §3.3.5, every GPU against its own capacity
//   check    validate()
// Groups run in descending order of intra-group bandwidth (§3.3.3: the first ministage's
// AllGather is the one nothing hides). The result is a validated plan: groups as stages holding
// their ministages' layer ranges, one worker per GPU with its microbatch count, ZeRO shares
// 1/n within a group.
//
// Speed: every group's per-layer collectives are computed once per distinct group; per GPU type
// and m the layer times are prefix sums; a configuration is priced from them without
// allocating, and its memory is checked only when its latency would beat the best so far; a
// (partition, m) whose pure compute already reaches the best is skipped.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/cost/memory/zorse.hpp"
#include "hetplan/cost/money/sailor.hpp"
#include "hetplan/cost/simulator.hpp"
#include "hetplan/cost/time/zorse.hpp"
#include "hetplan/plan/validator.hpp"
#include "hetplan/planners/progress.hpp"
#include "hetplan/search/partition/gpu_groups.hpp"
#include "hetplan/search/pipeline/ministages.hpp"
#include "hetplan/search/pipeline/proportional_split.hpp"

namespace hetplan {

using zorse_simulator = simulator<zorse_memory_model, zorse_time_model, sailor_money_model>;

struct zorse_options {
    search::partition_options partition{};
    /// Non-empty: plan over these groupings (machine indices of machines_of) instead of Phase 1's,
    /// e.g. to price a grouping given by hand.
    std::vector<search::cluster_partition> partitions;
    std::vector<int> microbatch_sizes;        ///< empty: every divisor of the global batch
    int min_ministages = 1;                   ///< ministages per group, at least
    int max_ministages = 0;                   ///< 0: up to the smallest group's layer count
    double usable_fraction = 1.0;             ///< share of each GPU's memory a plan may use
    zorse_memory_model memory{};              ///< `reserved`: framework and buffers per GPU
    const std::atomic<bool>* stop = nullptr;  ///< set to stop early and keep the best so far
    progress_callback progress;               ///< optional: told after every Phase 1 partition
};

struct zorse_result {
    std::optional<plan> pl;                ///< empty when nothing fits
    estimate est;
    std::vector<machine> machines;         ///< of the pool
    search::cluster_partition groups;      ///< the plan's groups in pipeline order (machine indices)
    int microbatch_size = 0, ministages = 0;
    seconds predicted{};                   ///< the planner's latency (equals est's)
    std::size_t partitions = 0;            ///< Phase 1 candidates
    std::size_t configurations = 0;        ///< (partition, m, S) priced
    bool stopped = false;
    seconds elapsed{};
    std::vector<std::string> notes;

    [[nodiscard]] double throughput() const { return pl && est.time.iteration.value > 0 ? 1.0 / est.time.iteration.value : 0.0; }
};

class zorse_planner {
public:
    explicit zorse_planner(zorse_options opt = {}) : opt_(std::move(opt)) {}
    [[nodiscard]] const zorse_options& options() const { return opt_; }

    [[nodiscard]] zorse_result plan(const problem& pb) const {
        const auto t0 = std::chrono::steady_clock::now();
        pb.model.check();
        pb.job.check();
        if (!(opt_.usable_fraction > 0 && opt_.usable_fraction <= 1)) throw input_error("zorse options: usable_fraction must be in (0, 1]");
        if (opt_.min_ministages < 1 || opt_.max_ministages < 0) throw input_error("zorse options: min_ministages must be >= 1, max_ministages >= 0");
        zorse_result out;
        out.machines = machines_of(pb.hw);
        const auto& ms = out.machines;
        const int L = pb.model.num_layers(), B = pb.job.global_batch;
        if (ms.empty()) {
            out.notes.push_back("no GPU in the pool");
            return finish(out, t0);
        }
        const auto cands = opt_.partitions.empty() ? search::cluster_partitions(pb.hw, ms, opt_.partition)
                                                   : search::partition_candidates{checked(opt_.partitions, ms.size()), false};
        out.partitions = cands.partitions.size();
        if (cands.truncated) out.notes.push_back("Phase 1: candidate partitions capped at " + std::to_string(opt_.partition.max_candidates));
        std::vector<int> mbs = opt_.microbatch_sizes;
        if (mbs.empty())
            for (int m = 1; m <= B; ++m)
                if (B % m == 0) mbs.push_back(m);
        const auto times = layer_prefixes(pb, ms, mbs);

        best_config best;
        zorse_load ld;  // reused: no allocation once warm
        std::map<search::machine_group, group_comm> comm;
        for (std::size_t pi = 0; pi < cands.partitions.size(); ++pi) {
            if (opt_.stop && opt_.stop->load()) {
                out.stopped = true;
                break;
            }
            if (opt_.progress && pi > 0) opt_.progress({out.configurations, best.latency, "s/iteration"});
            // Pipeline order: descending intra-group bandwidth, ties in Phase 1's order.
            std::vector<const group_comm*> groups;
            for (const auto& g : cands.partitions[pi]) {
                auto it = comm.find(g);
                if (it == comm.end()) it = comm.emplace(g, group_comm(pb, ms, g)).first;
                groups.push_back(&it->second);
            }
            std::stable_sort(groups.begin(), groups.end(), [](const group_comm* a, const group_comm* b) { return a->ring_bandwidth > b->ring_bandwidth; });
            const std::size_t G = groups.size();
            if (static_cast<int>(G) > L) continue;
            for (std::size_t mi = 0; mi < mbs.size(); ++mi) {
                const int m = mbs[mi], M = B / m;
                // Microbatches by GPU speed within each group; layers by group speed (§3.3.3).
                std::vector<std::vector<int>> n(G);
                std::vector<double> speed(G);
                bool ok = true;
                double compute_floor = 0;
                for (std::size_t g = 0; g < G && ok; ++g) {
                    std::vector<double> rate;
                    for (int t : groups[g]->gpu_types) rate.push_back(1.0 / times.whole(t, mi));
                    n[g] = search::proportional_split(M, rate, 1);
                    ok = !n[g].empty();
                    if (!ok) break;
                    double slowest = 0;
                    for (std::size_t i = 0; i < n[g].size(); ++i) slowest = std::max(slowest, n[g][i] * times.whole(groups[g]->gpu_types[i], mi));
                    speed[g] = 1.0 / slowest;
                }
                if (!ok) continue;
                const auto layers = search::proportional_split(L, speed, 1);
                if (layers.empty()) continue;
                for (std::size_t g = 0; g < G; ++g) compute_floor = std::max(compute_floor, group_compute(*groups[g], n[g], times, mi, layers[g]));
                if (compute_floor >= best.latency) continue;
                const int S_max = std::min(*std::min_element(layers.begin(), layers.end()), opt_.max_ministages > 0 ? opt_.max_ministages : L);
                for (int S = opt_.min_ministages; S <= S_max; ++S) {
                    price(pb, groups, n, layers, S, m, mi, times, ld);
                    ++out.configurations;
                    const double lat = zorse_time_model::latency(ld).total;
                    if (!(lat < best.latency) || !fits(pb, groups, n, layers, S, m)) continue;
                    best = {lat, pi, m, S, layers, n, {}};
                    for (const auto* g : groups) best.order.push_back(g->machines);
                }
            }
        }
        if (!std::isfinite(best.latency)) {
            out.notes.push_back("no partition, microbatch size and ministage count fits in memory (Zorse §3.3.3)");
            return finish(out, t0);
        }
        out.groups = best.order;
        out.microbatch_size = best.m;
        out.ministages = best.S;
        out.predicted = seconds{best.latency};
        hetplan::plan pl = build(ms, best);
        const zorse_simulator sim{opt_.memory, {}, {}};
        out.est = sim.run(pb, pl);
        const auto report = validate(pb, pl, sim.memory);
        if (!report.ok()) throw model_error("zorse planner: its plan fails validation (a bug): " + report.summary());
        if (std::abs(out.est.time.iteration.value - best.latency) > 1e-9 * best.latency)
            throw model_error("zorse planner: its latency differs from the simulator's (a bug)");
        out.pl = std::move(pl);
        return finish(out, t0);
    }

private:
    /// Given groupings must use every machine exactly once; returned in Phase 1's normal form.
    static std::vector<search::cluster_partition> checked(std::vector<search::cluster_partition> ps, std::size_t machines) {
        for (std::size_t p = 0; p < ps.size(); ++p) {
            std::vector<int> uses(machines, 0);
            for (const auto& g : ps[p]) {
                if (g.empty()) throw input_error("zorse options: partitions[" + std::to_string(p) + "] has an empty group");
                for (int k : g) {
                    if (k < 0 || static_cast<std::size_t>(k) >= machines)
                        throw input_error("zorse options: partitions[" + std::to_string(p) + "] names machine " + std::to_string(k) +
                                          "; the pool has " + std::to_string(machines));
                    ++uses[static_cast<std::size_t>(k)];
                }
            }
            for (std::size_t k = 0; k < machines; ++k)
                if (uses[k] != 1)
                    throw input_error("zorse options: partitions[" + std::to_string(p) + "] uses machine " + std::to_string(k) + " " +
                                      std::to_string(uses[k]) + " times, not once");
            ps[p] = search::detail::normalised(std::move(ps[p]));
        }
        return ps;
    }

    /// Per GPU type and microbatch size: prefix sums over layers of one microbatch's forward,
    /// backward (the forward recomputed, §3.1.3) and optimizer step.
    struct prefixes {
        std::size_t types = 0, sizes = 0, layers = 0;
        std::vector<double> f, b, u;  ///< [(type x sizes + m index) x (layers + 1) + l]
        [[nodiscard]] std::size_t at(int t, std::size_t mi, int l) const {
            return (static_cast<std::size_t>(t) * sizes + mi) * (layers + 1) + static_cast<std::size_t>(l);
        }
        [[nodiscard]] double fwd(int t, std::size_t mi, layer_range r) const { return f[at(t, mi, r.end)] - f[at(t, mi, r.begin)]; }
        [[nodiscard]] double bwd(int t, std::size_t mi, layer_range r) const { return b[at(t, mi, r.end)] - b[at(t, mi, r.begin)]; }
        [[nodiscard]] double upd(int t, std::size_t mi, layer_range r) const { return u[at(t, mi, r.end)] - u[at(t, mi, r.begin)]; }
        /// Forward and backward of one microbatch through every layer.
        [[nodiscard]] double whole(int t, std::size_t mi) const {
            return fwd(t, mi, {0, static_cast<int>(layers)}) + bwd(t, mi, {0, static_cast<int>(layers)});
        }
    };

    static prefixes layer_prefixes(const problem& pb, const std::vector<machine>& ms, const std::vector<int>& mbs) {
        prefixes p;
        p.types = pb.hw.gpus.size(), p.sizes = mbs.size(), p.layers = pb.model.layers.size();
        p.f.assign(p.types * p.sizes * (p.layers + 1), 0.0);
        p.b = p.u = p.f;
        const double state = pb.job.weight_bytes() + pb.job.gradient_bytes() + pb.job.master_bytes() + pb.job.optimizer_bytes();
        for (std::size_t t = 0; t < p.types; ++t) {
            if (std::none_of(ms.begin(), ms.end(), [&](const machine& x) { return x.gpu.index() == t; })) continue;
            for (std::size_t mi = 0; mi < mbs.size(); ++mi)
                for (std::size_t l = 0; l < p.layers; ++l) {
                    const layer_timing lt =
                        pb.profiles.lookup(pb.hw.gpu(gpu_type_id{t}), 1, mbs[mi], pb.model, l, pb.job.compute_dtype(), state).first;
                    const auto k = p.at(int(t), mi, int(l));
                    p.f[k + 1] = p.f[k] + lt.fwd.value;
                    p.b[k + 1] = p.b[k] + lt.backward_pass(true).value;
                    p.u[k + 1] = p.u[k] + lt.update.value;
                }
        }
        return p;
    }

    /// A GPU group: its GPUs in ring order (machine by machine) and per-layer collectives.
    struct group_comm {
        search::machine_group machines;
        std::vector<machine> ring;       ///< one entry per GPU
        std::vector<int> gpu_types;      ///< per GPU
        std::vector<machine> distinct;   ///< its machines
        double ring_bandwidth = 0;       ///< slowest ring edge for a 64 MB message
        std::vector<double> ag, rs;      ///< prefix sums over layers

        group_comm(const problem& pb, const std::vector<machine>& ms, const search::machine_group& g) : machines(g) {
            for (int i : g) {
                const machine& x = ms[static_cast<std::size_t>(i)];
                distinct.push_back(x);
                for (int k = 0; k < x.gpus; ++k) ring.push_back(x), gpu_types.push_back(static_cast<int>(x.gpu.index()));
            }
            ring_bandwidth = std::numeric_limits<double>::infinity();
            for (std::size_t k = 0; k < ring.size(); ++k)
                ring_bandwidth = std::min(ring_bandwidth, gpu_link(pb.hw, ring[k], ring[(k + 1) % ring.size()]).bandwidth(megabytes(64)).value);
            ag.assign(pb.model.layers.size() + 1, 0.0);
            rs = ag;
            for (std::size_t l = 0; l < pb.model.layers.size(); ++l) {
                const auto [a, r] = zorse_time_model::layer_collectives(pb, ring, l);
                ag[l + 1] = ag[l] + a.value;
                rs[l + 1] = rs[l] + r.value;
            }
        }
    };

    /// Busiest GPU's compute over all the group's layers: a floor of its ministages' time.
    static double group_compute(const group_comm& g, const std::vector<int>& n, const prefixes& times, std::size_t mi, int layers) {
        double worst = 0;
        for (std::size_t i = 0; i < n.size(); ++i) worst = std::max(worst, n[i] * times.whole(g.gpu_types[i], mi));
        return worst * layers / double(times.layers);
    }

    /// Visits the interleaved layout without building it: f(group, ministage, range).
    template <class F>
    static void for_each_ministage(const std::vector<int>& layers, int S, F&& f) {
        int at = 0;
        for (int r = 0; r < S; ++r)
            for (std::size_t g = 0; g < layers.size(); ++g) {
                const int len = layers[g] / S + (r < layers[g] % S ? 1 : 0);
                f(g, static_cast<std::size_t>(r), layer_range{at, at + len});
                at += len;
            }
    }

    /// The latency model's load for one configuration.
    static void price(const problem& pb, const std::vector<const group_comm*>& groups, const std::vector<std::vector<int>>& n,
                      const std::vector<int>& layers, int S, int m, std::size_t mi, const prefixes& times, zorse_load& ld) {
        const std::size_t G = groups.size();
        const bool interleaved = S > 1;
        // Boundary activation of one microbatch: the widest last layer of a ministage (as the time model).
        std::vector<double> act(G, 0.0);
        for_each_ministage(layers, S, [&](std::size_t g, std::size_t, layer_range r) {
            act[g] = std::max(act[g], pb.model.layers[static_cast<std::size_t>(r.end - 1)].act_output_elems);
        });
        ld.clear();
        for (std::size_t g = 0; g < G; ++g) {
            const bytes boundary{act[g] * m * pb.job.activation_bytes()};
            seconds p2p{0};
            if (G > 1) {
                if (g + 1 < G || interleaved) p2p = max(p2p, zorse_time_model::boundary_time(pb, groups[g]->distinct, groups[(g + 1) % G]->distinct, boundary));
                if (g > 0 || interleaved) p2p = max(p2p, zorse_time_model::boundary_time(pb, groups[(g + G - 1) % G]->distinct, groups[g]->distinct, boundary));
            }
            ld.add_group(static_cast<std::size_t>(S), p2p.value, 0.0);
            for (std::size_t i = 0; i < n[g].size(); ++i) {
                // One class per GPU with a distinct (type, count) from the previous ones.
                bool seen = false;
                for (std::size_t j = 0; j < i && !seen; ++j) seen = groups[g]->gpu_types[j] == groups[g]->gpu_types[i] && n[g][j] == n[g][i];
                if (!seen) ld.add_class(n[g][i]);
            }
        }
        for_each_ministage(layers, S, [&](std::size_t g, std::size_t s, layer_range r) {
            const auto& gr = ld.groups[g];
            ld.all_gather[gr.first_ministage + s] = groups[g]->ag[static_cast<std::size_t>(r.end)] - groups[g]->ag[static_cast<std::size_t>(r.begin)];
            ld.reduce_scatter[gr.first_ministage + s] = groups[g]->rs[static_cast<std::size_t>(r.end)] - groups[g]->rs[static_cast<std::size_t>(r.begin)];
            std::size_t c = gr.first_class;
            double upd = 0;
            for (std::size_t i = 0; i < n[g].size(); ++i) {
                const int t = groups[g]->gpu_types[i];
                if (s == 0) upd = std::max(upd, times.upd(t, mi, r) / double(n[g].size()));
                bool seen = false;
                for (std::size_t j = 0; j < i && !seen; ++j) seen = groups[g]->gpu_types[j] == t && n[g][j] == n[g][i];
                if (seen) continue;
                ld.fwd[ld.row[c] + s] = times.fwd(t, mi, r);
                ld.bwd[ld.row[c] + s] = times.bwd(t, mi, r);
                ++c;
            }
            if (s == 0) ld.groups[g].update = upd;
        });
    }

    /// Every GPU of every group within its usable memory (§3.3.5).
    [[nodiscard]] bool fits(const problem& pb, const std::vector<const group_comm*>& groups, const std::vector<std::vector<int>>& n,
                            const std::vector<int>& layers, int S, int m) const {
        std::vector<zorse_group_shape> shape(groups.size());
        for_each_ministage(layers, S, [&](std::size_t g, std::size_t, layer_range r) { shape[g].add(pb.model, r); });
        for (std::size_t g = 0; g < groups.size(); ++g)
            for (std::size_t i = 0; i < n[g].size(); ++i) {
                const gpu_type_id t{static_cast<std::size_t>(groups[g]->gpu_types[i])};
                const auto mem = opt_.memory.per_gpu(pb.job, shape[g], 1.0 / double(n[g].size()), m, n[g][i],
                                                     pb.hw.gpu(t).memory() * opt_.usable_fraction);
                if (!mem.fits()) return false;
            }
        return true;
    }

    struct best_config {
        double latency = std::numeric_limits<double>::infinity();
        std::size_t partition = 0;
        int m = 0, S = 0;
        std::vector<int> layers;
        std::vector<std::vector<int>> n;
        search::cluster_partition order;  ///< groups in pipeline order
    };

    [[nodiscard]] hetplan::plan build(const std::vector<machine>& ms, const best_config& b) const {
        hetplan::plan pl;
        pl.schedule = schedule_kind::interleaved_ministages;
        pl.memory.zero_stage = 3;
        pl.memory.recompute = true;
        pl.memory.offload_params = true;
        pl.memory.offload_activations = true;
        pl.memory.usable_fraction = opt_.usable_fraction;
        pipeline pipe;
        pipe.stages.resize(b.order.size());
        for_each_ministage(b.layers, b.S, [&](std::size_t g, std::size_t, layer_range r) { pipe.stages[g].layers.push_back(r); });
        for (std::size_t g = 0; g < b.order.size(); ++g) {
            std::size_t i = 0;
            int gpus = 0;
            for (int k : b.order[g]) gpus += ms[static_cast<std::size_t>(k)].gpus;
            for (int k : b.order[g]) {
                const machine& x = ms[static_cast<std::size_t>(k)];
                for (int j = 0; j < x.gpus; ++j, ++i)
                    pipe.stages[g].workers.push_back({x.gpu, x.zone, 1, b.m, b.n[g][i], 1.0 / double(gpus), x.index});
            }
        }
        pl.pipelines.push_back(std::move(pipe));
        return pl;
    }

    static zorse_result& finish(zorse_result& out, std::chrono::steady_clock::time_point t0) {
        out.elapsed = seconds{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
        return out;
    }

    zorse_options opt_;
};

}  // namespace hetplan
