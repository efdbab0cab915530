// Example 1: plan with a reference planner in ten lines (Zorse, on the built-in GPT-Neo-2.7
// problem: 32 A100-40 + 96 V100-16 over two zones).
#include <cstdio>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/zorse.hpp"

static_assert(hetplan::concepts::check_memory_model<hetplan::zorse_memory_model>());
static_assert(hetplan::concepts::check_planner<hetplan::zorse_planner<>>());

int main() {
    const auto in = hetplan::fixtures::default_planning_example();
    const auto r = hetplan::zorse_planner<>().plan(in.as_problem());  // ranked, validated, priced
    if (!r.best()) return 1;
    const auto& best = *r.best();
    const auto& groups = best.pl.pipelines[0].stages;
    std::printf("%zu GPU groups, %zu ministages each, microbatch %d\n", groups.size(), groups[0].layers.size(),
                groups[0].workers[0].microbatch_size);
    std::printf("iteration %.3f s, %.4f USD, fits: %s\n", best.iteration().value, best.cost().value, best.est.memory.fits() ? "yes" : "no");
}
