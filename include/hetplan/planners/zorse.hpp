#pragma once
// Zorse's planner (Zorse §3.3) as a composition of search pieces:
//   space    search::zorse_space       Phase 1 partitions (min-k-cuts of the bandwidth graph,
//                                      or groupings given by hand) x microbatch sizes
//   order    groups by descending intra-group bandwidth (§3.3.3: the first ministage's
//            AllGather is the one nothing hides)
//   solver   search::zorse_phase2      layers by group speed, S interleaved ministages, the
//                                      microbatch split (exact by default: search::microbatch_split)
//   pruners  search::zorse_memory_fit  every GPU within its own memory (§3.3.5)
//   pricing  zorse_simulator           the latency model (§3.3.4) the solver prices with
// The plan: groups as stages holding their ministages' layer ranges, one worker per GPU with its
// microbatch count, ZeRO shares 1/n within a group.
#include <map>
#include <string>
#include <vector>

#include "hetplan/concepts/planner.hpp"
#include "hetplan/cost/memory/zorse.hpp"
#include "hetplan/cost/money/sailor.hpp"
#include "hetplan/cost/simulator.hpp"
#include "hetplan/cost/time/zorse.hpp"
#include "hetplan/planners/instances.hpp"
#include "hetplan/search/partition/zorse_space.hpp"
#include "hetplan/search/pipeline/zorse_phase2.hpp"
#include "hetplan/search/prune/all.hpp"
#include "hetplan/search/run.hpp"

namespace hetplan {

using zorse_simulator = simulator<zorse_memory_model, zorse_time_model, sailor_money_model>;

struct zorse_options {
    search::partition_options partition{};
    /// Non-empty: plan over these groupings (machine indices of machines_of) instead of Phase 1's.
    std::vector<search::cluster_partition> partitions{};
    std::vector<int> microbatch_sizes{};      ///< empty: every divisor of the global batch
    int min_ministages = 1;                   ///< ministages per group, at least
    int max_ministages = 0;                   ///< 0: up to the smallest group's layer count
    double usable_fraction = 1.0;             ///< share of each GPU's memory a plan may use
    zorse_memory_model memory{};              ///< `reserved`: framework and buffers per GPU
};

template <class Split = search::microbatch_split, class Pruners = search::prune::all<search::zorse_memory_fit>>
class zorse_planner {
public:
    explicit zorse_planner(zorse_options opt = {})
        : zorse_planner(opt, Pruners(search::zorse_memory_fit{opt.memory, opt.usable_fraction})) {}
    zorse_planner(zorse_options opt, Pruners pruners) : opt_(std::move(opt)), pruners_(std::move(pruners)) {
        if (!(opt_.usable_fraction > 0 && opt_.usable_fraction <= 1)) throw input_error("zorse options: usable_fraction must be in (0, 1]");
        if (opt_.min_ministages < 1 || opt_.max_ministages < 0) throw input_error("zorse options: min_ministages must be >= 1, max_ministages >= 0");
        solver_.min_ministages = opt_.min_ministages;
        solver_.max_ministages = opt_.max_ministages;
    }

    [[nodiscard]] static constexpr std::string_view name() { return "zorse"; }
    [[nodiscard]] const zorse_options& options() const { return opt_; }
    [[nodiscard]] zorse_simulator models() const { return {opt_.memory, {}, {}}; }

    template <concepts::objective O, class... Hooks>
    [[nodiscard]] plan_result plan(const problem& pb, const plan_request<O, Hooks...>& rq);
    [[nodiscard]] plan_result plan(const problem& pb) { return plan(pb, plan_request<>{}); }

private:
    template <class Run>
    [[nodiscard]] plan_result run_search(const problem& pb, Run& run) {
        const std::size_t priced = solver_.configurations;
        const pass first = search_pool(pb, run);
        std::size_t partitions = first.partitions;
        bool found = run.best() < std::numeric_limits<double>::infinity();
        // Zorse plans on every GPU (§3.3); when that finds nothing, on fewer: the pools of
        // leave_out, each tried until one has a plan.
        if (!found && !first.empty && !run.stopping())
            for (const auto& [pool, why] : leave_out(pb)) {
                const pass p = search_pool(pb.with_pool(pool), run);
                partitions += p.partitions;
                if (run.best() < std::numeric_limits<double>::infinity()) {
                    run.note(why);
                    found = true;
                    break;
                }
                if (run.stopping()) break;
            }
        run.stats().counters = {{"partitions", partitions}, {"configurations", solver_.configurations - priced}};
        if (!found && !first.empty && !run.stopping())
            run.note(first.refused ? "no configuration is admitted by the objective's constraints (budget, minimum throughput)"
                     : first.fits_shape ? "no partition, microbatch size and ministage count fits in memory (Zorse §3.3.3), on the whole pool or on fewer GPUs"
                                        : "every partition has a group with more GPUs than microbatches (global batch " + std::to_string(pb.job.global_batch) +
                                              "): each GPU of a group takes at least one (Zorse §3.3.3), on the whole pool or on fewer GPUs");
        return run.finish(std::string(name()));
    }

    /// What one search over a pool saw.
    struct pass {
        bool empty = false;       ///< no GPU in the pool
        std::size_t partitions = 0;
        bool refused = false;     ///< the objective refused a configuration
        bool fits_shape = false;  ///< some candidate had a microbatch for every GPU of its groups
    };

    /// Phase 1 on `pb`'s pool, then Phase 2 on each candidate; plans go to `run`.
    template <class Run>
    pass search_pool(const problem& pb, Run& run) {
        const search::zorse_space space{opt_.partition, opt_.partitions, opt_.microbatch_sizes};
        const auto data = space.prepare(pb, &run.stop());
        pass out;
        out.empty = data->machines.empty();
        if (out.empty) run.note("no GPU in the pool");
        if (data->phase1.truncated) run.note("Phase 1: candidate partitions capped at " + std::to_string(data->phase1.partitions.size()) + " (partition_options::max_candidates, max_stored_machines)");
        state st(pb, data->machines);
        const std::size_t refused = solver_.refused, shaped = solver_.shaped;
        for (const search::zorse_choice& c : search::zorse_space::over(data)) {
            if (run.stopping()) break;
            candidate(run, pb, st, c);
        }
        out.partitions = data->phase1.partitions.size();
        out.refused = solver_.refused > refused;
        out.fits_shape = solver_.shaped > shaped;
        return out;
    }

    /// Smaller pools to plan on when the whole pool has no plan, in the order tried:
    /// - with more GPUs than samples per iteration, the B GPUs fastest per sample (microbatch
    ///   size 1; ties by GPU type, then zone): one group of them can take the batch;
    /// - without the GPU type of least memory, then the two least, ...: a GPU too small for
    ///   any configuration sinks every partition it is in (and fewer GPUs may meet a budget).
    [[nodiscard]] std::vector<std::pair<resource_pool, std::string>> leave_out(const problem& pb) const {
        std::vector<std::pair<resource_pool, std::string>> out;
        const resource_pool& all = pb.pool();
        std::vector<gpu_type_id> types;
        for (std::size_t t = 0; t < pb.hw.gpus.size(); ++t)
            if (all.total(gpu_type_id{t}) > 0) types.push_back(gpu_type_id{t});
        const int B = pb.job.global_batch, gpus = all.total();
        if (gpus > B) {
            zorse_layer_table table;
            std::vector<std::pair<double, gpu_type_id>> order;
            for (gpu_type_id t : types) order.emplace_back(table.whole(table.add(pb, t, 1, true)), t);
            std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
            resource_pool kept(pb.hw.gpus.size(), pb.hw.zones.size());
            int keep = B;
            for (const auto& [time, t] : order)
                for (std::size_t z = 0; z < pb.hw.zones.size() && keep > 0; ++z) {
                    const int n = std::min(keep, all.available(t, zone_id{z}));
                    kept.set(t, zone_id{z}, n);
                    keep -= n;
                }
            out.emplace_back(kept, "global batch " + std::to_string(B) + " < " + std::to_string(gpus) + " GPUs: planned on the " + std::to_string(B) +
                                       " fastest per sample, the other " + std::to_string(gpus - B) + " left out (no plan on all of them)");
        }
        std::stable_sort(types.begin(), types.end(), [&](gpu_type_id a, gpu_type_id b) { return pb.hw.gpu(a).memory().value < pb.hw.gpu(b).memory().value; });
        resource_pool pool = all;
        std::string names;
        for (std::size_t i = 0; i + 1 < types.size(); ++i) {
            for (std::size_t z = 0; z < pb.hw.zones.size(); ++z) pool.set(types[i], zone_id{z}, 0);
            names += (i ? ", " : "") + std::string(pb.hw.gpu(types[i]).name());
            out.emplace_back(pool, "no plan on all " + std::to_string(gpus) + " GPUs: planned without the " + std::to_string(gpus - pool.total()) +
                                       " GPUs of least memory (" + names + ")");
        }
        return out;
    }

    /// What candidates share: machines, each group's collectives (per distinct group), the layer
    /// table (per GPU type and microbatch size) and the pool's price per second.
    struct state {
        const std::vector<machine>& machines;
        std::map<search::machine_group, zorse_group_comm> comm;
        zorse_layer_table table;
        double usd_per_second = 0;
        state(const problem& pb, const std::vector<machine>& ms) : machines(ms) {
            for (const machine& m : ms) usd_per_second += m.gpus * pb.hw.gpu(m.gpu).price_per_hour().value / 3600.0;
        }
    };

    template <class Run>
    void candidate(Run& run, const problem& pb, state& st, const search::zorse_choice& c) {
        run.candidate(c);
        groups_.clear();
        rows_.clear();
        for (const auto& g : *c.partition) {
            auto it = st.comm.find(g);
            if (it == st.comm.end()) it = st.comm.emplace(g, zorse_group_comm(pb, ring_of(st.machines, g))).first;
            groups_.push_back(&it->second);
        }
        std::stable_sort(groups_.begin(), groups_.end(), [](const auto* a, const auto* b) { return a->ring_bandwidth > b->ring_bandwidth; });
        for (const zorse_group_comm* g : groups_) {
            rows_.emplace_back();
            std::size_t row = 0;
            for (std::size_t i = 0; i < g->ring.size(); ++i) {  // one lookup per run of alike GPUs
                if (i == 0 || g->ring[i].gpu != g->ring[i - 1].gpu) row = st.table.add(pb, g->ring[i].gpu, c.m, true);
                rows_.back().push_back(row);
            }
        }
        const search::zorse_candidate<Pruners> cand{groups_, rows_, c.m, st.usd_per_second, &st.table, &pruners_};
        const auto sol = solver_.solve(pb, cand, run.objective(), run.limits());
        if (sol) {
            hetplan::plan pl = build(*sol, c.m);
            const estimate est = models().run(pb, pl);
            run.offer(std::move(pl), est, seconds{sol->terms.iteration}, opt_.memory,
                      "partition " + std::to_string(c.index) + " m=" + std::to_string(c.m));
        }
        run.solved(c, sol);
    }

    static std::vector<machine> ring_of(const std::vector<machine>& ms, const search::machine_group& g) {
        std::vector<machine> ring;
        for (int i : g)
            for (int k = 0; k < ms[std::size_t(i)].gpus; ++k) ring.push_back(ms[std::size_t(i)]);
        return ring;
    }

    [[nodiscard]] hetplan::plan build(const search::zorse_configuration& b, int m) const {
        hetplan::plan pl;
        pl.schedule = schedule_kind::interleaved_ministages;
        pl.memory.zero_stage = 3;
        pl.memory.recompute = pl.memory.offload_params = pl.memory.offload_activations = true;
        pl.memory.usable_fraction = opt_.usable_fraction;
        pipeline pipe;
        pipe.stages.resize(groups_.size());
        search::for_each_ministage(b.layers, b.S, [&](std::size_t g, std::size_t, layer_range r) { pipe.stages[g].layers.push_back(r); });
        for (std::size_t g = 0; g < groups_.size(); ++g) {
            const auto& ring = groups_[g]->ring;
            for (std::size_t i = 0; i < ring.size(); ++i)
                pipe.stages[g].workers.push_back({ring[i].gpu, ring[i].zone, 1, m, b.n[g][i], 1.0 / double(ring.size()), ring[i].index});
        }
        pl.pipelines.push_back(std::move(pipe));
        return pl;
    }

    zorse_options opt_;
    Pruners pruners_;
    search::zorse_phase2<Split> solver_;
    std::vector<const zorse_group_comm*> groups_;  ///< the current candidate's, in pipeline order
    std::vector<std::vector<std::size_t>> rows_;
};

// Outside the class so that HETPLAN_SEPARATE_COMPILATION can keep it from being instantiated
// (planners/instances.hpp).
template <class Split, class Pruners>
template <concepts::objective O, class... Hooks>
plan_result zorse_planner<Split, Pruners>::plan(const problem& pb, const plan_request<O, Hooks...>& rq) {
    pb.model.check();
    pb.job.check();
    search::search_run run(pb, rq);
    // Zorse prices links between every pair of machines.
    return search::until_missing_link(run, std::string(name()), [&] { return run_search(pb, run); });
}

/// A Zorse plan's groups in pipeline order, as machine indices of machines_of(pool): what its
/// stages' workers run on (node-pinned workers).
[[nodiscard]] inline search::cluster_partition zorse_groups(const problem& pb, const plan& pl) {
    const auto ms = machines_of(pb.hw, pb.pool());
    search::cluster_partition out;
    for (const auto& st : pl.pipelines.at(0).stages) {
        search::machine_group g;
        for (const auto& w : st.workers) {
            const machine at = machine_at(pb.hw, pb.pool(), w.gpu, w.zone, w.node);
            const int k = static_cast<int>(std::find(ms.begin(), ms.end(), at) - ms.begin());
            if (std::find(g.begin(), g.end(), k) == g.end()) g.push_back(k);
        }
        out.push_back(std::move(g));
    }
    return out;
}

static_assert(concepts::check_planner<zorse_planner<>>());
#ifdef HETPLAN_SEPARATE_COMPILATION
HETPLAN_PLANNER_INSTANCES(extern, zorse_planner<>);  // made in src/zorse_instances.cpp
#endif

}  // namespace hetplan
