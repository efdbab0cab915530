// Example 3: a planner of your own, composed from hetplan's search pieces without writing a
// search loop: Sailor's space (pipelines of at most 8 stages), every data-parallel degree (no
// H3/H4 stopping rule), the H2 memory pruner plus one of your own, the stage DP, branch and
// bound on the instance floors, and the cheapest plan above a minimum throughput as the
// objective. Plans are priced and validated.
#include <cstdio>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/sailor.hpp"

using namespace hetplan;

/// Your pruner: no TP group wider than 4 GPUs (it judges stage typings).
struct tp_at_most_4 {
    bool operator()(const problem&, const search::stage_typing& t) const {
        for (auto tp : t.tp) if (tp > 4) return false;
        return true;
    }
};
static_assert(hetplan::concepts::check_pruner<tp_at_most_4, search::stage_typing>());

int main() {
    const auto in = fixtures::default_planning_example();  // GPT-Neo-2.7 on 32 A100 + 96 V100, two zones
    sailor_options opt;
    opt.space.max_pipeline_degree = 8;
    auto planner = sailor_planner<>(opt)
                       .with_scan(search::exhaustive_walk{})
                       .with_pruners(search::prune::all{search::h2_memory_fit<>{}, tp_at_most_4{}});
    static_assert(hetplan::concepts::check_planner<decltype(planner)>());
    plan_request<min_cost> rq;
    rq.objective.limits.min_throughput = 0.1;  // iterations per second
    const auto r = planner.plan(in.as_problem(), rq);
    if (!r.best()) return 1;
    const auto& b = *r.best();
    std::printf("instances solved: %zu\n", r.stats.solved);
    std::printf("best: %zu stages, %d GPUs, %.3f s/iteration, %.4f USD\n", b.pl.pipelines[0].stages.size(), b.gpus(),
                b.iteration().value, b.cost().value);
}
