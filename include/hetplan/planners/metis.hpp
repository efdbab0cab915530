#pragma once
// Metis and memory-aware Metis as hetplan planners (Metis, USENIX ATC '24; memory-aware Metis
// §3): one composition, `SplitOrder` the one piece they differ in.
//   world     the problem as Metis sees it: GPU types, nodes, per-layer forward+backward times
//             per (type, TP, microbatch) from the profiles, bandwidths from the network model
//   space     search::metis: type orders x stage counts x device groups x microbatch counts
//   walk      pure DP, then halve DP / double TP of one stage (split order), TP groups on one
//             node (hetplan's worker is a TP group on one node)
//   memory    metis_worker_memory: hetplan's memory model on every replica of a stage (in place of
//             Metis' aggregate check, which treats a stage's memory as one pool)
//   layers    Metis' layer balancer; batches: its data balancer (uneven shares per replica)
//   ranking   Metis' cost model orders the search (§5.3); its best `keep` plans are converted,
//             validated and priced by metis_time_model (the same formula on hetplan's plan,
//             cost/time/metis_plan.hpp) with Sailor's memory and money models
// The plan: one pipeline; stage s holds its layers and one worker per replica (its TP group, its
// node, its share of each microbatch).
#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hetplan/concepts/planner.hpp"
#include "hetplan/core/stop.hpp"
#include "hetplan/cost/memory/sailor.hpp"
#include "hetplan/cost/simulator.hpp"
#include "hetplan/cost/time/metis_plan.hpp"
#include "hetplan/plan/validator.hpp"
#include "hetplan/planners/instances.hpp"
#include "hetplan/search/metis/search.hpp"
#include "hetplan/search/run.hpp"

namespace hetplan {

struct metis_planner_options {
    metis_rules rules = metis_rules::corrected();
    search::metis::device_group_rules groups{};
    std::size_t keep = 16;  ///< Metis' best plans (by its cost model) converted, validated and priced
    /// Inter-stage candidates walked at most, shallow pipelines first (0: all). Metis' space grows
    /// with the multiset orders of the device groups: 66,480 candidates for 256 GPUs and 40 layers,
    /// millions for 128 GPUs and 32 layers with a batch of 1024.
    std::size_t candidate_budget = 20'000;
    /// GPU types at most: Metis searches every order of them (6 types: 720 orders).
    int max_types = 6;
};

/// A hetplan problem as Metis' search sees it, and the way back to hetplan's ids.
struct metis_world {
    metis_profile profile;
    metis_cluster cluster;
    std::vector<gpu_type_id> gpu;  ///< per Metis type
    std::vector<zone_id> zone;     ///< per cluster node
    std::vector<int> node;         ///< per cluster node: its index among its type's nodes in its zone

    bool complete = true;  ///< false when the stop condition ended the construction

    /// Builds it from the pool, the profiles (or their analytical fallback) and the network,
    /// polling `stop` between measurements. Throws missing_link when two nodes of a type have no
    /// link.
    explicit metis_world(const problem& pb, const stop_condition* stop = nullptr) {
        stop_poll poll(stop);
        const int L = pb.model.num_layers(), B = pb.job.global_batch;
        profile.layers = L;
        constexpr double MiB = 1024.0 * 1024.0, GiB = MiB * 1024.0;
        const double grad_bytes = 2.0;  // Metis all-reduces fp16 gradients
        for (std::size_t g = 0; g < pb.hw.gpus.size(); ++g) {
            const gpu_type_id id{g};
            const gpu_spec& spec = pb.hw.gpu(id);
            const int per = pb.hw.gpus_per_node(id);
            zone_id any{};
            int count = 0;
            for (std::size_t z = 0; z < pb.hw.zones.size(); ++z)
                if (const int c = pb.pool().available(id, zone_id{z}); c > 0) {
                    if (count == 0) any = zone_id{z};
                    count += c;
                }
            if (count == 0) continue;
            const int t = int(gpu.size());
            gpu.push_back(id);
            profile.types.push_back(spec.type_name);
            const endpoint one{any, id, 1};
            const double inter = pb.hw.network.between(one, one).bandwidth(bytes{64 * MiB}).value / GiB;
            const auto* nv = pb.hw.network.intra_node(id, per);
            const double intra = nv ? nv->bandwidth(bytes{64 * MiB}).value / GiB : inter;
            cluster.types.push_back({spec.type_name, spec.memory().value * pb.job.memory.usable_fraction / MiB, intra, inter});
            for (std::size_t z = 0; z < pb.hw.zones.size(); ++z) {
                const int c = pb.pool().available(id, zone_id{z});
                for (int n = 0; n * per < c; ++n) {
                    cluster.node_type.push_back(t);
                    cluster.node_gpus.push_back(std::min(per, c - n * per));
                    zone.push_back(zone_id{z});
                    node.push_back(n);
                }
            }
        }
        // Per (type, TP, microbatch): forward + backward of each layer (ms). Memory is checked by
        // hetplan's memory model (metis_worker_memory): the profile holds none.
        for (std::size_t t = 0; t < gpu.size() && complete; ++t) {
            const gpu_spec& spec = pb.hw.gpu(gpu[t]);
            for (int tp = 1; tp <= std::min(pb.hw.gpus_per_node(gpu[t]), metis_max_degree); tp *= 2) {
                if (!pb.profiles.can_answer(spec.type_name, tp)) continue;
                for (int m = 1; m <= std::min(B, metis_max_degree); m *= 2) {
                    if (poll()) {
                        complete = false;
                        break;
                    }
                    std::vector<double> c(static_cast<std::size_t>(L));
                    for (int l = 0; l < L; ++l)
                        c[std::size_t(l)] = pb.profiles.lookup(spec, tp, m, pb.model, std::size_t(l), pb.job.compute_dtype(), 16.0).first.fwd_bwd().value * 1e3;
                    profile.set(t, tp, m, std::move(c), {}, 0.0);
                }
            }
        }
        if (!gpu.empty()) {
            const gpu_spec& first = pb.hw.gpu(gpu.front());
            for (int l = 0; l < L; ++l)
                profile.optimizer_time += pb.profiles.lookup(first, 1, 1, pb.model, std::size_t(l), pb.job.compute_dtype(), 16.0).first.update.value * 1e3;
        }
        const auto& layers = pb.model.layers;
        profile.input_params = layers.front().params * grad_bytes;
        profile.middle_params = layers[std::size_t(std::min(1, L - 1))].params * grad_bytes;
        profile.output_params = layers.back().params * grad_bytes;
        // Metis prices a boundary as microbatch x sequence x hidden elements (the last layer's
        // logits x vocabulary); hetplan's model has each layer's output per sample.
        profile.sequence = 1;
        profile.hidden = int(std::min(layers[std::size_t(L / 2)].act_output_elems, 2e9));
        profile.vocabulary = int(std::min(layers.back().act_output_elems, 2e9));
    }
};

/// The memory check on hetplan's memory model: each replica of a stage (its GPU type, TP degree,
/// share of the microbatch and 1F1B's microbatches in flight) against its GPU's usable memory; the
/// stage's capacity and demand are its tightest replica's (MB), which the split order and the
/// balancer's re-partition read.
template <class MemoryModel = sailor_memory_model>
struct metis_worker_memory {
    const problem* pb = nullptr;
    const metis_world* world = nullptr;
    MemoryModel mm{};
    memory_options memory{};

    template <class Model>
    void operator()(Model& m, std::size_t s, int a, int b, int dp, int tp, double& capacity, double& demand) const {
        constexpr double MiB = 1024.0 * 1024.0;
        const auto types = m.stage_types(s);
        capacity = world->cluster.types[std::size_t(types.front())].memory_mb;
        demand = 0.001;
        if (b <= a) return;
        std::span<const int> shares;
        if (!m.split(types, dp, tp, m.global_batch() / m.microbatches(), shares)) {
            demand = std::numeric_limits<double>::infinity();
            return;
        }
        const layer_range r{a, b};
        const int size = int(types.size()) / dp;
        double worst = std::numeric_limits<double>::infinity();
        int seen_t[4] = {-1, -1, -1, -1}, seen_h[4] = {0, 0, 0, 0}, n_seen = 0;  // replicas alike cost one call
        for (int k = 0; k < dp; ++k) {
            const int h = shares[std::size_t(k)];
            if (h == 0) continue;
            const int t = replica_type(m.profile(), types.subspan(std::size_t(k * size), std::size_t(size)), tp, m.rules());
            bool again = false;
            for (int i = 0; i < n_seen; ++i) again = again || (seen_t[i] == t && seen_h[i] == h);
            if (again) continue;
            if (n_seen < 4) seen_t[n_seen] = t, seen_h[n_seen] = h, ++n_seen;
            const worker_group w{world->gpu[std::size_t(t)], zone_id{0}, tp, h, m.microbatches(), 1.0, -1};
            const double need = mm.worker(*pb, {{&r, 1}, int(s), m.stages(), w, memory, schedule_kind::one_f_one_b}).total.value / MiB;
            const double usable = world->cluster.types[std::size_t(t)].memory_mb;
            if (usable - need < worst) worst = usable - need, capacity = usable, demand = need;
        }
    }
};

template <class SplitOrder = search::metis::metis_split_order, class MemoryModel = sailor_memory_model>
class metis_planner {
public:
    using simulator_type = simulator<MemoryModel, metis_time_model>;

    explicit metis_planner(metis_planner_options opt = {}, MemoryModel mm = {}) : opt_(std::move(opt)), mm_(std::move(mm)) {}

    [[nodiscard]] static constexpr std::string_view name() { return SplitOrder::name; }
    [[nodiscard]] const metis_planner_options& options() const { return opt_; }
    [[nodiscard]] simulator_type models() const { return {mm_, {}, {}}; }

    template <concepts::objective O, class... Hooks>
    [[nodiscard]] plan_result plan(const problem& pb, const plan_request<O, Hooks...>& rq);
    [[nodiscard]] plan_result plan(const problem& pb) { return plan(pb, plan_request<>{}); }

private:
    template <class Run>
    [[nodiscard]] plan_result run_search(const problem& pb, Run& run) {
        const std::string me(name());
        if (pb.job.memory.zero_stage != 0)
            run.note(me + " replicates the training state in every DP replica: the job's zero_stage " + std::to_string(pb.job.memory.zero_stage) +
                     " is not used");
        if (pb.pool().total() == 0) {
            run.note("no GPU in the pool");
            return run.finish(me);
        }
        int types = 0;
        for (std::size_t g = 0; g < pb.hw.gpus.size(); ++g) {
            bool any = false;
            for (std::size_t z = 0; z < pb.hw.zones.size(); ++z) any = any || pb.pool().available(gpu_type_id{g}, zone_id{z}) > 0;
            types += any ? 1 : 0;
        }
        if (types > opt_.max_types) {
            run.note(me + " searches every order of the GPU types: the pool's " + std::to_string(types) + " types exceed " +
                     std::to_string(opt_.max_types) + " (metis_planner_options::max_types)");
            return run.finish(me);
        }
        const metis_world world(pb, &run.stop());
        if (!world.complete) {
            run.halt();
            return run.finish(me);
        }
        if (!world.profile.at(0, 1, 1)) {
            run.note(me + " needs timings of " + world.profile.types.front() + " at TP 1, microbatch 1 (its layer durations)");
            return run.finish(me);
        }
        memory_options mem = pb.job.memory;
        mem.zero_stage = 0;
        search::metis::metis_options opt;
        opt.rules = opt_.rules;
        opt.groups = opt_.groups;
        opt.keep = std::max<std::size_t>(opt_.keep, 1);
        opt.limits.tp_within_node = true;
        opt.candidate_budget = opt_.candidate_budget;
        // Metis covers every GPU with power-of-two groups (none under an even share): a count such
        // as 22 has none at any depth. Then the most GPUs that have some, the first of each order:
        // one of the 64 counts below the pool's, or else the largest power of two (one stage).
        const int G = world.cluster.gpus(), maxS = std::min(G, pb.model.num_layers());
        auto has_groups = [&](int g) {
            for (int S = 1; S <= std::min(g, maxS); ++S)
                if (search::metis::has_device_groups(S, g, opt_.groups)) return true;
            return false;
        };
        int power = 1;
        while (power <= G / 2) power *= 2;
        opt.gpus = G;
        while (opt.gpus > power && opt.gpus > G - 64 && !has_groups(opt.gpus)) --opt.gpus;
        if (!has_groups(opt.gpus)) opt.gpus = power;
        if (opt.gpus < G)
            run.note(me + " covers all its GPUs with power-of-two device groups, and the pool's " + std::to_string(G) +
                     " have none: it plans with " + std::to_string(opt.gpus) + ", the first of each GPU-type order");
        const metis_worker_memory<MemoryModel> check{&pb, &world, mm_, mem};
        const search::metis::metis_search<SplitOrder, metis_worker_memory<MemoryModel>> search(world.profile, world.cluster, pb.job.global_batch,
                                                                                       opt, check);
        const auto res = search.run(&run.stop(), run.hooks());
        if (res.stats.stopped) run.halt();
        run.stats().candidates += res.stats.candidates;
        run.note("searched " + std::to_string(res.stats.candidates) + " candidates, " + std::to_string(res.stats.steps) + " search steps, " +
                 std::to_string(res.stats.plans) + " plans (" + std::to_string(res.stats.unrunnable) +
                 " with an empty stage or a layer in no stage, not priced)");
        if (res.stats.budget_spent)
            run.note(me + " walked its budget of " + std::to_string(opt_.candidate_budget) +
                     " candidates (metis_planner_options::candidate_budget), pipelines of up to " + std::to_string(res.stats.deepest) + " of " +
                     std::to_string(std::min(pb.model.num_layers(), world.cluster.gpus())) + " stages");

        const simulator_type sim = models();
        int starved = 0;
        for (const auto& mp : res.best) {
            auto pl = to_plan(pb, world, mp, mem);
            if (!pl) {
                ++starved;
                continue;
            }
            const estimate est = sim.run(pb, *pl);
            char what[160];
            std::snprintf(what, sizeof what, "%s: %d stages, %d microbatches (Metis' search model: %.1f ms)", me.c_str(), mp.x.stages(),
                          mp.x.microbatches, mp.total);
            (void)run.offer(std::move(*pl), est, est.time.iteration, sim.memory, what);
        }
        if (starved > 0 && starved == int(res.best.size()))
            run.note(me + ": in each of its best plans the data balancer gives a slow replica no sample of a microbatch (too few samples per microbatch for the replicas)");
        if (res.best.empty() && !res.stats.stopped && res.stats.plans == 0)
            run.note(me + " found no plan whose layers fit every replica's memory (hetplan's memory model) with TP groups inside nodes");
        else if (res.best.empty() && !res.stats.stopped)
            run.note(me + ": each of its " + std::to_string(res.stats.plans) +
                     " plans leaves a stage without layers or a layer in no stage (Metis' layer balancer, §5.2) or lacks a measurement");
        return run.finish(me);
    }

    /// Metis' plan as hetplan's: one pipeline, a worker per replica with its share of each
    /// microbatch; nullopt where a replica gets no sample.
    [[nodiscard]] std::optional<hetplan::plan> to_plan(const problem& pb, const metis_world& world, const search::metis::metis_plan& mp,
                                                       const memory_options& mem) const {
        const metis_layout layout(world.cluster, mp.order);
        hetplan::plan pl;
        pl.memory = mem;
        pl.pipelines.resize(1);
        std::vector<int> shares;
        std::vector<double> scratch;
        int first = 0;
        for (int s = 0; s < mp.x.stages(); ++s) {
            const int g = mp.x.groups[std::size_t(s)], dp = mp.x.dp[std::size_t(s)], tp = mp.x.tp[std::size_t(s)];
            const auto types = layout.ranks(first, g);
            if (!metis_split_batch(world.profile, types, dp, tp, pb.job.global_batch / mp.x.microbatches, opt_.rules, shares, scratch))
                return std::nullopt;
            stage st;
            st.layers.push_back({mp.x.partition[std::size_t(s)], mp.x.partition[std::size_t(s) + 1]});
            for (int r = 0; r < dp; ++r) {
                if (shares[std::size_t(r)] == 0) return std::nullopt;
                const int rank = first + r * tp;
                const int n = layout.node_source[std::size_t(layout.node_of(rank))];
                st.workers.push_back({world.gpu[std::size_t(layout.rank_type[std::size_t(rank)])], world.zone[std::size_t(n)], tp,
                                      shares[std::size_t(r)], mp.x.microbatches, 1.0, world.node[std::size_t(n)]});
            }
            pl.pipelines[0].stages.push_back(std::move(st));
            first += g;
        }
        return pl;
    }

    metis_planner_options opt_;
    MemoryModel mm_;
};

// Outside the class so that HETPLAN_SEPARATE_COMPILATION can keep it from being instantiated
// (planners/instances.hpp).
template <class SplitOrder, class MemoryModel>
template <concepts::objective O, class... Hooks>
plan_result metis_planner<SplitOrder, MemoryModel>::plan(const problem& pb, const plan_request<O, Hooks...>& rq) {
    search::search_run run(pb, rq, std::max<std::size_t>(opt_.keep, 1));
    return search::until_missing_link(run, std::string(name()), [&] { return run_search(pb, run); });
}

using memory_aware_metis_planner = metis_planner<search::metis::memory_aware_split_order>;

static_assert(concepts::check_planner<metis_planner<>>());
#ifdef HETPLAN_SEPARATE_COMPILATION
HETPLAN_PLANNER_INSTANCES(extern, metis_planner<>);  // made in src/metis_instances.cpp
#endif

}  // namespace hetplan
