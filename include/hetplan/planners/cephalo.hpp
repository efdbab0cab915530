#pragma once
// Cephalo's optimizer (Cephalo §2.4, §3.2) as a composition of hetplan pieces:
//   latency   profile_table (measured microbatch sizes, linear beyond; §2.3)
//   memory    cephalo_memory_model (M_state + M_compute(m), 80% usable; §2.3, §3.2)
//   compute   search::fast_batch_dp / straightforward_batch_dp (Eq. 4, constraints I-III)
//   state     even when it fits, else search::water_fill (greedy partition; §2.4), and
//             unit_shards (§3.3)
//   time      cephalo_time_model (FSDP layered gradient accumulation, Eqs. 2-3)
//   check     validate(), in search::search_run, which also ranks by the request's objective
// The plan: one stage holding every layer, one worker per GPU with its own microbatch size,
// microbatch count and share of the (ZeRO-3) state.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/cost/memory/cephalo.hpp"
#include "hetplan/cost/money/sailor.hpp"
#include "hetplan/cost/simulator.hpp"
#include "hetplan/cost/time/cephalo.hpp"
#include "hetplan/concepts/planner.hpp"
#include "hetplan/cost/fsdp_units.hpp"
#include "hetplan/plan/validator.hpp"
#include "hetplan/planners/instances.hpp"
#include "hetplan/search/run.hpp"
#include "hetplan/search/fsdp/batch_dp.hpp"
#include "hetplan/search/fsdp/cephalo_instance.hpp"
#include "hetplan/search/fsdp/state_partition.hpp"

namespace hetplan {

using cephalo_simulator = simulator<cephalo_memory_model, cephalo_time_model, sailor_money_model>;

template <class Solver = search::eq4_batch_dp>
class cephalo_planner {
public:
    explicit cephalo_planner(cephalo_options opt = {}) : opt_(std::move(opt)) { solver_.straightforward = opt_.straightforward; }

    [[nodiscard]] static constexpr std::string_view name() { return "cephalo"; }
    [[nodiscard]] const cephalo_options& options() const { return opt_; }
    /// The models its plans are priced with on `pb` (the compute-memory fit depends on it).
    [[nodiscard]] cephalo_simulator models(const problem& pb) const {
        return {cephalo_memory_model{opt_.compute_memory ? *opt_.compute_memory : compute_memory_fit::analytical(pb)}, opt_.time, {}};
    }

    /// One candidate, the pool: Eq. 4's assignment (and, with alike units, the exact Eqs. 2-3
    /// optimum), each with its state split, priced and offered; the objective ranks them.
    template <concepts::objective O, class... Hooks>
    [[nodiscard]] plan_result plan(const problem& pb, const plan_request<O, Hooks...>& rq);
    [[nodiscard]] plan_result plan(const problem& pb) { return plan(pb, plan_request<>{}); }

private:
    template <class Run>
    [[nodiscard]] plan_result run_search(const problem& pb, Run& run) {
        std::vector<std::string> notes;
        cephalo_inputs in = make_cephalo_inputs(pb, opt_, notes);
        const int B = in.dp.batch, g = in.granularity, all = in.dp.gpus();
        if (g > 1)
            run.note("global batch " + std::to_string(pb.job.global_batch) + " > " + std::to_string(search::max_dp_batch) + ": the batch DP (Eq. 4) runs on " +
                     std::to_string(B) + " units of " + std::to_string(g) + " samples, so microbatch counts are multiples of " + std::to_string(g));
        resource_pool kept;
        if (all > B) {
            // Every GPU of Eq. 4 takes at least one sample (I): with fewer samples (units) than
            // GPUs, plan on the B GPUs fastest at one sample and leave the rest out.
            kept = fastest_gpus(pb, in, B);
            notes.clear();
            in = make_cephalo_inputs(pb.with_pool(kept), opt_, notes, g);
            run.note("global batch " + std::to_string(pb.job.global_batch) + (g > 1 ? " (" + std::to_string(B) + " units)" : std::string()) + " < " +
                     std::to_string(all) + " GPUs: every GPU needs a " + (g > 1 ? "unit" : "sample") + " (Cephalo §2.4), so " +
                     std::to_string(all - B) + " of them, the slowest per sample, are left out");
        }
        for (auto& n : notes) run.note(std::move(n));
        if (in.dp.gpus() == 0) {
            run.note("no GPU in the pool can take part");
            return run.finish(std::string(name()));
        }
        run.candidate(in.dp);
        const auto a = solver_.solve(pb, in.dp, run.objective(), {std::numeric_limits<double>::infinity(), &run.stop()});
        const auto first = a ? offer(run, in, a->assignment, seconds{a->terms.iteration}, "Eq. 4's assignment") : std::nullopt;
        run.solved(in.dp, a);
        if (!a) {
            if (run.stopping()) return run.finish(std::string(name()));
            run.note("no assignment meets the memory constraints (Cephalo §2.4, I-III)");
            return run.finish(std::string(name()));
        }
        if (opt_.separate_maxima && in.units) {
            const double eq4 = search::separate_maxima_time(in.dp, *in.units, a->assignment);
            if (const auto b = search::separate_maxima_batch_search(in.dp, *in.units, eq4, &run.stop())) {
                const auto second = offer(run, in, *b, seconds{b->makespan}, "Eqs. 2-3's assignment");
                const double before = first.value_or(0), after = second.value_or(0);
                if (first && second && after < before)
                    run.note("Eqs. 2-3 minimised exactly: " + std::to_string(100.0 * (before / after - 1.0)) + "% faster than Eq. 4's assignment");
            }
        }
        if (run.stop().requested()) run.halt();
        return run.finish(std::string(name()));
    }

    /// The `keep` GPUs of `in` fastest at microbatch size 1 (ties: GPU type, then zone order).
    [[nodiscard]] static resource_pool fastest_gpus(const problem& pb, const cephalo_inputs& in, int keep) {
        std::vector<std::pair<double, std::size_t>> order;  // (T(1, 1), index into in.types)
        for (std::size_t t = 0; t < in.types.size(); ++t) order.emplace_back(in.dp.types[t].at(1, 1), t);
        std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        resource_pool out(pb.hw.gpus.size(), pb.hw.zones.size());
        for (const auto& [time, t] : order)
            for (std::size_t z = 0; z < pb.hw.zones.size() && keep > 0; ++z) {
                const int n = std::min(keep, pb.pool().available(in.types[t], zone_id{z}));
                out.set(in.types[t], zone_id{z}, n);
                keep -= n;
            }
        return out;
    }

    /// The plan of a batch assignment with its state split (§2.4: water-filling, to minimise
    /// the highest memory utilisation; its uneven units cost 15 % more communication, §2.3, which
    /// shows only where communication is exposed, so the even split, where it fits, is kept when
    /// it is faster), priced and offered.
    template <class Run>
    std::optional<double> offer(Run& run, const cephalo_inputs& in, const search::batch_assignment& a, seconds predicted,
                                const std::string& what) const {
        const problem& pb = run.pb();
        std::vector<double> used, cap;
        for (std::size_t i = 0; i < in.workers.size(); ++i) {
            used.push_back(in.memory.at(a.gpus[i].mbs).value);
            cap.push_back(pb.hw.gpu(in.workers[i].first).memory().value * opt_.usable_fraction);
        }
        const double state = cephalo_memory_model::state(pb).value;
        const double even = state / double(used.size());
        bool even_fits = true;
        for (std::size_t i = 0; i < used.size(); ++i) even_fits = even_fits && used[i] + even <= cap[i];
        const cephalo_simulator sim{cephalo_memory_model{in.memory}, opt_.time, {}};
        std::vector<search::gpu_share> gpus = a.gpus;  // units of the DP's batch back to microbatches
        for (auto& x : gpus) x.microbatches *= in.granularity;
        hetplan::plan pl = make_fsdp_plan(pb, in.workers, gpus, search::water_fill(used, cap, state).shares, opt_.usable_fraction);
        estimate est = sim.run(pb, pl);
        if (even_fits) {
            hetplan::plan flat = make_fsdp_plan(pb, in.workers, gpus, std::vector<double>(used.size(), 1.0 / double(used.size())), opt_.usable_fraction);
            estimate e = sim.run(pb, flat);
            if (e.time.iteration < est.time.iteration) pl = std::move(flat), est = std::move(e);
        }
        return run.offer(std::move(pl), est, predicted, sim.memory, what);
    }

    cephalo_options opt_;
    Solver solver_;
};

// Outside the class so that HETPLAN_SEPARATE_COMPILATION can keep it from being instantiated
// (planners/instances.hpp).
template <class Solver>
template <concepts::objective O, class... Hooks>
plan_result cephalo_planner<Solver>::plan(const problem& pb, const plan_request<O, Hooks...>& rq) {
    search::search_run run(pb, rq, 2);
    if (dp_granularity(pb.job.global_batch, pb.pool().total()) == 0) {
        run.note("global batch " + std::to_string(pb.job.global_batch) + ": Cephalo's batch DP (Eq. 4) takes at most " +
                 std::to_string(search::max_dp_batch) + " units, and no divisor up to " + std::to_string(max_granularity) +
                 " makes units of it (a batch with small factors, e.g. 10^6 = 16 x 62,500, does)");
        return run.finish(std::string(name()));
    }
    // Every GPU is in the FSDP ring: it needs every link.
    return search::until_missing_link(run, std::string(name()), [&] { return run_search(pb, run); });
}

/// FSDP units of a one-stage plan sharded unevenly (§3.3).
[[nodiscard]] inline int cephalo_uneven_units(const problem& pb, const plan& pl) {
    std::vector<double> shares;
    for (const auto& w : pl.pipelines.at(0).stages.at(0).workers) shares.push_back(w.state_share);
    return unit_shards(shares, pb.model.num_layers()).uneven;
}

/// The highest memory use over usable memory of a priced plan.
[[nodiscard]] inline double peak_utilisation(const estimate& e) {
    double u = 0;
    for (const auto& w : e.memory.workers) u = std::max(u, w.total / w.capacity);
    return u;
}

static_assert(concepts::check_planner<cephalo_planner<>>());
#ifdef HETPLAN_SEPARATE_COMPILATION
HETPLAN_PLANNER_INSTANCES(extern, cephalo_planner<>);  // made in src/cephalo_instances.cpp
#endif

}  // namespace hetplan
