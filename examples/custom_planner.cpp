// Example 3: a planner of your own from hetplan's pieces: an enumeration (pipeline degrees with
// Sailor's even layer split, microbatch sizes, data-parallel degrees), two pruning heuristics
// (H1: TP within a node; H2: the smallest TP that fits in memory) and Sailor's stage DP, which
// assigns GPU types, counts and TP per stage. Every plan is simulated and validated.
#include <cstdio>
#include <optional>

#include "hetplan/hetplan.hpp"
#include "hetplan/search/build_plan.hpp"
#include "hetplan/search/prune/h1_tp_within_node.hpp"
#include "hetplan/search/prune/h2_min_tp.hpp"
#include "hetplan/search/prune/h5_stage_in_one_region.hpp"
#include "hetplan/search/solve/stage_dp.hpp"
#include "hetplan/search/space.hpp"

static_assert(hetplan::concepts::check_memory_model<hetplan::sailor_memory_model>());
static_assert(hetplan::concepts::check_time_model<hetplan::sailor_time_model>());
static_assert(hetplan::concepts::check_cost_model<hetplan::sailor_money_model>());

int main() {
    using namespace hetplan;
    const auto in = fixtures::default_example();  // OPT-350 on 8 A100-40 + 8 V100-16
    const problem pb = in.as_problem();
    const simulator<> sim{};
    const search::h1_tp_within_node h1{};                  // heuristic 1
    search::h2_min_tp<> h2{};                              // heuristic 2 (memoised)
    const auto cells = search::make_cells(pb.hw, pb.hw.pool, [&](gpu_type_id g) { return !h1(pb, g).empty(); });
    std::vector<std::vector<int>> tps;
    for (gpu_type_id g : cells.types) tps.push_back(h1(pb, g));
    const auto groups = search::all_cells_group(cells.cells);
    search::stage_dp dp;
    std::optional<std::pair<plan, estimate>> best;
    int solved = 0;
    for (int P : {1, 2, 4}) {                              // the enumeration
        const auto part = search::even_partition(pb.model.num_layers(), P);
        for (int mbs : {1, 2, 4}) {
            const auto times = search::time_stages(pb, cells, part, mbs, tps, sim.time);
            for (int D : search::data_parallel_degrees(pb.job.global_batch / mbs, pb.hw.pool.total() / P)) {
                const auto sp = search::make_stage_problem(pb, cells, part, mbs, D, times, h2, groups, {}, sim.time.bucket);
                const auto sol = dp.solve(sp, {});             // fastest assignment of this instance
                if (!sol) continue;
                ++solved;
                plan pl = search::build_plan(sp, sol->stages);
                if (!validate(pb, pl).ok()) return 1;          // never happens: the DP respects memory and the pool
                const estimate e = sim.run(pb, pl);
                if (!best || e.time.iteration < best->second.time.iteration) best.emplace(std::move(pl), e);
            }
        }
    }
    if (!best) return 1;
    std::printf("instances solved: %d\n", solved);
    std::printf("best: %zu stages, %d GPUs, %.3f s/iteration, %.4f USD\n", best->first.pipelines[0].stages.size(),
                best->first.total_gpus(), best->second.time.iteration.value, best->second.money.total.value);
}
