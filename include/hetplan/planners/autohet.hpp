#pragma once
// AutoHet's 3D parallel planning (AutoHet §III, Algorithm 1) as a composition of hetplan pieces:
//   TP degrees   symmetric, dividing every used node's GPU count (§III-D, Alg. 1 line 2)
//   grouping     search::grouping_solver: Eqs. 2-3 exactly (each TP group one unit, §III-B)
//   pruners      the exact layer-partition fit of a group (a model of the memory model), and a
//                user's pruners on `device_group` candidates
//   mapping      within a group, lower-power and then memory-rich units first (§III-C); stage s
//                of every group on neighbouring nodes (DP traffic on NVLink, §III-C)
//   partition    search::min_max_layer_partition (Eq. 4) with the memory model's worker check
//   time         autohet_time_model (Eq. 1; layer-wise sync across asymmetric pipelines)
//   memory       sailor_memory_model with Megatron-LM's 16 bytes per parameter (AutoHet runs
//                on Megatron-LM, §V): weights, gradients, fp32 master copy and Adam's moments
//   check        validate(), in search::search_run, which also ranks by the request's objective
// The plan: one pipeline per DP group (they may differ in depth), one worker per stage; the
// groups share the batch's microbatches as evenly as they divide.
#include <algorithm>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hetplan/concepts/planner.hpp"
#include "hetplan/cost/memory/sailor.hpp"
#include "hetplan/cost/money/sailor.hpp"
#include "hetplan/cost/simulator.hpp"
#include "hetplan/cost/time/autohet.hpp"
#include "hetplan/plan/validator.hpp"
#include "hetplan/planners/instances.hpp"
#include "hetplan/search/partition/device_grouping.hpp"
#include "hetplan/search/pipeline/layer_partition.hpp"
#include "hetplan/search/prune/all.hpp"
#include "hetplan/search/run.hpp"

namespace hetplan {

/// Megatron-LM's state per parameter under mixed precision with Adam: what AutoHet plans with.
[[nodiscard]] inline sailor_memory_model megatron_memory_model() {
    sailor_memory_model m;
    m.comm_buffer_bytes = 0;     // gradients are all-reduced in place (bucketed views)
    m.framework_copy_bytes = 0;  // no second fp32 copy
    return m;
}

using autohet_simulator = simulator<sailor_memory_model, autohet_time_model, sailor_money_model>;

/// A candidate device group (§III-B) for pruners: units per GPU type at one TP degree.
struct device_group {
    std::span<const int> counts;          ///< units per entry of `types`
    std::span<const gpu_type_id> types;
    int tp = 1;
    int microbatch_size = 1;
};

struct autohet_options {
    /// Microbatch sizes tried; empty: 1, 2, 4 and 8 (those that divide the global batch).
    std::vector<int> microbatch_sizes{};
    /// K of Eq. 1 in the grouping; 0: the batch's microbatches shared by the D groups (K = M / D,
    /// which makes D x z the throughput at a fixed global batch). docs/reproduction.md.
    int grouping_microbatches = 0;
    /// TP degrees allowed (empty: every valid one, Alg. 1 line 2).
    std::vector<int> tp_degrees{};
    /// Branch-and-bound nodes per grouping before its best so far is taken unproven, with a
    /// note (0: none). 64 GPUs of three types need about 10^4-10^6.
    std::size_t grouping_budget = 20'000'000;
};

template <class Pruners = search::prune::all<>, class Bubble = search::balanced_bubble>
class autohet_planner {
public:
    explicit autohet_planner(autohet_options opt = {}, Pruners pruners = {}) : opt_(std::move(opt)), pruners_(std::move(pruners)) {}

    [[nodiscard]] static constexpr std::string_view name() { return "autohet"; }
    [[nodiscard]] const autohet_options& options() const { return opt_; }
    [[nodiscard]] autohet_simulator models() const { return {megatron_memory_model(), {}, {}}; }

    /// TP degrees t such that every node in use holds a multiple of t GPUs (Alg. 1 line 2) and
    /// every GPU type in the pool has timings at t.
    [[nodiscard]] static std::vector<int> valid_tp_degrees(const problem& pb) {
        std::vector<int> node_sizes;
        std::vector<gpu_type_id> types;
        for (std::size_t g = 0; g < pb.hw.gpus.size(); ++g) {
            const gpu_type_id id{g};
            const int per = pb.hw.gpus_per_node(id);
            bool any = false;
            for (std::size_t z = 0; z < pb.hw.zones.size(); ++z) {
                const int c = pb.pool().available(id, zone_id{z});
                if (c <= 0) continue;
                any = true;
                if (c >= per) node_sizes.push_back(per);
                if (c % per) node_sizes.push_back(c % per);
            }
            if (any) types.push_back(id);
        }
        std::vector<int> out;
        if (node_sizes.empty()) return out;
        const int most = *std::min_element(node_sizes.begin(), node_sizes.end());
        for (int t = 1; t <= most; ++t) {
            const bool divides = std::all_of(node_sizes.begin(), node_sizes.end(), [t](int n) { return n % t == 0; });
            const bool timed = std::all_of(types.begin(), types.end(), [&](gpu_type_id g) { return pb.profiles.can_answer(pb.hw.gpu(g).type_name, t); });
            if (divides && timed) out.push_back(t);
        }
        return out;
    }

    template <concepts::objective O, class... Hooks>
    [[nodiscard]] plan_result plan(const problem& pb, const plan_request<O, Hooks...>& rq);
    [[nodiscard]] plan_result plan(const problem& pb) { return plan(pb, plan_request<>{}); }

private:
    /// One unit class of the grouping: a GPU type at the TP degree, with its physical units.
    struct unit_type {
        gpu_type_id gpu;
        std::vector<double> prefix;  ///< forward+backward time of layers [0, l) at (tp, mbs)
        std::vector<std::pair<zone_id, int>> slots;  ///< (zone, node) per unit, in node order
    };

    template <class Run>
    [[nodiscard]] plan_result run_search(const problem& pb, Run& run) {
        if (pb.job.memory.zero_stage != 0)
            run.note("AutoHet replicates the training state in every DP group (Megatron-LM, §V): the job's zero_stage " +
                     std::to_string(pb.job.memory.zero_stage) + " is not used");
        if (pb.pool().total() == 0) {
            run.note("no GPU in the pool");
            return run.finish(std::string(name()));
        }
        std::vector<int> tps = valid_tp_degrees(pb);
        if (!opt_.tp_degrees.empty())
            std::erase_if(tps, [&](int t) { return std::find(opt_.tp_degrees.begin(), opt_.tp_degrees.end(), t) == opt_.tp_degrees.end(); });
        if (tps.empty()) {
            run.note("no TP degree divides every node's GPU count with timings for every GPU type (AutoHet §III-D, Alg. 1)");
            return run.finish(std::string(name()));
        }
        std::vector<int> sizes = opt_.microbatch_sizes.empty() ? std::vector<int>{1, 2, 4, 8} : opt_.microbatch_sizes;
        std::erase_if(sizes, [&](int m) { return m < 1 || pb.job.global_batch % m != 0; });
        if (sizes.empty()) {
            run.note("no microbatch size divides the global batch " + std::to_string(pb.job.global_batch));
            return run.finish(std::string(name()));
        }
        int groupings = 0;
        too_deep_ = 0;
        for (int tp : tps)
            for (int mbs : sizes) {
                if (run.stopping()) return run.finish(std::string(name()));
                groupings += plan_at(pb, run, tp, mbs) ? 1 : 0;
            }
        if (groupings == 0 && too_deep_ == static_cast<int>(tps.size() * sizes.size()))
            run.note("AutoHet uses every GPU (Eq. 3e) with one pipeline stage per TP group, and a stage needs a layer: the pool's " +
                     std::to_string(units_) + " units need more DP groups than the batch has microbatches at any TP degree and "
                     "microbatch size (" + std::to_string(pb.model.num_layers()) + " layers, global batch " + std::to_string(pb.job.global_batch) + ")");
        else if (groupings == 0)
            run.note("no grouping of the pool holds the model at any TP degree and microbatch size (MIN_mem, Eq. 3b, and the "
                     "layer partition's memory fit, Eq. 4c)");
        return run.finish(std::string(name()));
    }

    /// Grouping, mapping and partition at one (TP, microbatch size); offers the plan. Returns
    /// whether a grouping existed.
    template <class Run>
    bool plan_at(const problem& pb, Run& run, int tp, int mbs) {
        const sailor_memory_model mm = megatron_memory_model();
        memory_options mem = pb.job.memory;
        mem.zero_stage = 0;
        const int L = pb.model.num_layers();
        const long long M = pb.job.global_batch / mbs;

        std::vector<unit_type> types;
        search::grouping_problem in;
        for (std::size_t g = 0; g < pb.hw.gpus.size(); ++g) {
            const gpu_type_id id{g};
            unit_type u{id, {}, {}};
            const int per = pb.hw.gpus_per_node(id);
            for (std::size_t z = 0; z < pb.hw.zones.size(); ++z) {
                const int c = pb.pool().available(id, zone_id{z});
                for (int node = 0; node * per < c; ++node)
                    for (int k = 0; k < std::min(per, c - node * per) / tp; ++k) u.slots.emplace_back(zone_id{z}, node);
            }
            if (u.slots.empty()) continue;
            u.prefix.assign(static_cast<std::size_t>(L) + 1, 0.0);
            const gpu_spec& gpu = pb.hw.gpu(id);
            for (int l = 0; l < L; ++l) {
                const auto [t, src] = pb.profiles.lookup(gpu, tp, mbs, pb.model, static_cast<std::size_t>(l), pb.job.compute_dtype(), 16.0);
                u.prefix[static_cast<std::size_t>(l) + 1] = u.prefix[static_cast<std::size_t>(l)] + t.fwd_bwd().value;
            }
            const worker_group w{id, zone_id{0}, tp, mbs, 1, 1.0, -1};
            const layer_range all{0, L};
            const bytes overhead = mm.worker(pb, {{}, 0, 1, w, mem, schedule_kind::one_f_one_b}).total;
            const bytes whole = mm.worker(pb, {{&all, 1}, 0, 1, w, mem, schedule_kind::one_f_one_b}).total;
            const double usable = gpu.memory().value * mem.usable_fraction - overhead.value;
            // g_i: model passes per second of one unit, from the timings (AutoHet §II-D
            // measures power; datasheet peaks mislead, issue 17); m_i: what a unit brings.
            in.classes.push_back({static_cast<int>(u.slots.size()), 1.0 / std::max(u.prefix.back(), 1e-30), tp * std::max(usable, 0.0)});
            in.min_memory = std::max(in.min_memory, tp * (whole - overhead).value);  // MIN_mem (3b)
            types.push_back(std::move(u));
        }
        if (types.empty()) return false;
        units_ = 0;
        for (const auto& c : in.classes) units_ += c.count;
        if (static_cast<long long>(units_) > M * L) {  // D <= M groups of <= L stages cannot hold them all
            ++too_deep_;
            return false;
        }
        in.microbatches = opt_.grouping_microbatches > 0 ? search::microbatch_rule{0, opt_.grouping_microbatches} : search::microbatch_rule{M, 0};

        std::vector<gpu_type_id> ids;
        for (const auto& u : types) ids.push_back(u.gpu);
        auto order_of = [&](std::span<const int> counts) {  // unit classes in stage order (§III-C)
            std::vector<std::size_t> stages;
            for (std::size_t t = 0; t < counts.size(); ++t)
                for (int k = 0; k < counts[t]; ++k) stages.push_back(t);
            std::stable_sort(stages.begin(), stages.end(), [&](std::size_t a, std::size_t b) {
                if (in.classes[a].power != in.classes[b].power) return in.classes[a].power < in.classes[b].power;
                return in.classes[a].memory > in.classes[b].memory;
            });
            return stages;
        };
        // A group's partition, with every microbatch of the batch in flight where 1F1B allows
        // (P - i): the fit then holds whatever share of the batch the group gets.
        auto partition = [&](std::span<const int> counts, int microbatches) {
            const std::vector<std::size_t> st = order_of(counts);
            const int P = static_cast<int>(st.size());
            return search::min_max_layer_partition(
                P, L, [&](int i, int b, int e) { const auto& pre = types[st[std::size_t(i)]].prefix; return pre[std::size_t(e)] - pre[std::size_t(b)]; },
                [&](int i, int b, int e) {
                    const layer_range r{b, e};
                    const worker_group w{types[st[std::size_t(i)]].gpu, zone_id{0}, tp, mbs, microbatches, 1.0, -1};
                    return mm.worker(pb, {{&r, 1}, i, P, w, mem, schedule_kind::one_f_one_b}).fits();
                },
                &run.stop());
        };
        auto admits = [&](std::span<const int> counts) {
            if constexpr (Pruners::template judges<device_group>)
                if (!pruners_(pb, device_group{counts, ids, tp, mbs})) return false;
            return partition(counts, static_cast<int>(std::min<long long>(M, 1 << 20))).has_value();
        };

        search::grouping_solver<Bubble> solver;
        solver.node_budget = opt_.grouping_budget;
        const auto g = solver.solve(in, admits, &run.stop());
        if (solver.stats.budget_spent)
            run.note("AutoHet TP " + std::to_string(tp) + ", microbatch " + std::to_string(mbs) + ": the grouping search spent its " +
                     std::to_string(opt_.grouping_budget) + " nodes (autohet_options::grouping_budget); its best grouping so far is not proven optimal");
        else if (solver.stats.stopped) run.halt();
        run.candidate(in);
        run.solved(in, g);
        if (!g) return false;

        // Map units to stages and nodes: stage s of every group in turn (§III-C), so the
        // replicas of a stage sit side by side.
        const int D = g->size();
        hetplan::plan pl;
        pl.memory = mem;
        pl.pipelines.resize(static_cast<std::size_t>(D));
        std::vector<std::vector<std::size_t>> stage_types;
        std::size_t deepest = 0;
        for (const auto& counts : g->groups) {
            stage_types.push_back(order_of(counts));
            deepest = std::max(deepest, stage_types.back().size());
        }
        std::vector<std::size_t> next_slot(types.size(), 0);
        for (std::size_t s = 0; s < deepest; ++s)
            for (std::size_t j = 0; j < stage_types.size(); ++j) {
                if (s >= stage_types[j].size()) continue;
                const std::size_t t = stage_types[j][s];
                const auto [zone, node] = types[t].slots.at(next_slot[t]++);
                const int k = static_cast<int>(M / D + (static_cast<long long>(j) < M % D ? 1 : 0));
                pl.pipelines[j].stages.push_back({{}, {worker_group{types[t].gpu, zone, tp, mbs, k, 1.0, node}}});
            }
        for (std::size_t j = 0; j < stage_types.size(); ++j) {
            auto& pipe = pl.pipelines[j];
            const auto part = partition(g->groups[j], pipe.stages.front().workers.front().num_microbatches);
            if (!part) {  // stopped (the grouping admitted only groups whose partition fits)
                if (!run.stopping())
                    run.note("AutoHet TP " + std::to_string(tp) + ", microbatch " + std::to_string(mbs) + ": a group's layers do not fit (internal error)");
                return true;
            }
            for (std::size_t s = 0; s < pipe.stages.size(); ++s) pipe.stages[s].layers.push_back({part->bounds[s], part->bounds[s + 1]});
        }
        const autohet_simulator sim = models();
        const estimate est = sim.run(pb, pl);
        (void)run.offer(std::move(pl), est, est.time.iteration, sim.memory,
                        "AutoHet TP " + std::to_string(tp) + ", microbatch " + std::to_string(mbs) + ", " + std::to_string(D) + " DP groups");
        return true;
    }

    autohet_options opt_;
    Pruners pruners_;
    int too_deep_ = 0;  ///< (TP, microbatch) pairs with more units than groups x layers
    int units_ = 0;
};

// Outside the class so that HETPLAN_SEPARATE_COMPILATION can keep it from being instantiated
// (planners/instances.hpp).
template <class Pruners, class Bubble>
template <concepts::objective O, class... Hooks>
plan_result autohet_planner<Pruners, Bubble>::plan(const problem& pb, const plan_request<O, Hooks...>& rq) {
    search::search_run run(pb, rq, 4);
    return search::until_missing_link(run, std::string(name()), [&] { return run_search(pb, run); });
}

static_assert(concepts::check_planner<autohet_planner<>>());
#ifdef HETPLAN_SEPARATE_COMPILATION
HETPLAN_PLANNER_INSTANCES(extern, autohet_planner<>);  // made in src/autohet_instances.cpp
#endif

}  // namespace hetplan
