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
    [[nodiscard]] plan_result plan(const problem& pb, const plan_request<O, Hooks...>& rq) {
        pb.model.check();
        pb.job.check();
        search::search_run run(pb, rq);
        // Zorse prices links between every pair of machines.
        return search::until_missing_link(run, std::string(name()), [&] { return run_search(pb, run); });
    }
    [[nodiscard]] plan_result plan(const problem& pb) { return plan(pb, plan_request<>{}); }

private:
    template <class Run>
    [[nodiscard]] plan_result run_search(const problem& pb, Run& run) {
        const search::zorse_space space{opt_.partition, opt_.partitions, opt_.microbatch_sizes};
        const auto data = space.prepare(pb);
        if (data->machines.empty()) run.note("no GPU in the pool");
        if (data->phase1.truncated) run.note("Phase 1: candidate partitions capped at " + std::to_string(data->phase1.partitions.size()) + " (partition_options::max_candidates, max_stored_machines)");
        state st(pb, data->machines);
        const std::size_t priced = solver_.configurations, refused = solver_.refused;
        for (const search::zorse_choice& c : search::zorse_space::over(data)) {
            if (run.stopping()) break;
            candidate(run, st, c);
        }
        run.stats().counters = {{"partitions", data->phase1.partitions.size()}, {"configurations", solver_.configurations - priced}};
        if (run.best() == std::numeric_limits<double>::infinity() && !data->machines.empty() && !run.stopping())
            run.note(solver_.refused > refused ? "no configuration is admitted by the objective's constraints (budget, minimum throughput)"
                                               : "no partition, microbatch size and ministage count fits in memory (Zorse §3.3.3)");
        return run.finish(std::string(name()));
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
    void candidate(Run& run, state& st, const search::zorse_choice& c) {
        const problem& pb = run.pb();
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
            for (const machine& m : g->ring) rows_.back().push_back(st.table.add(pb, m.gpu, c.m, true));
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

}  // namespace hetplan
