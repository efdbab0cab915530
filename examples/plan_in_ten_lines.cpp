// Example 1: plan with a reference planner in ten lines (Zorse, on the built-in GPT-Neo-2.7
// problem: 32 A100-40 + 96 V100-16 over two zones).
#include <cstdio>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/zorse.hpp"

static_assert(hetplan::concepts::check_memory_model<hetplan::zorse_memory_model>());
static_assert(hetplan::concepts::check_time_model<hetplan::zorse_time_model>());

int main() {
    const auto in = hetplan::fixtures::default_planning_example();
    const auto r = hetplan::zorse_planner().plan(in.as_problem());
    if (!r.pl) return 1;
    std::printf("%zu GPU groups, %d ministages each, microbatch %d\n", r.groups.size(), r.ministages, r.microbatch_size);
    std::printf("iteration %.3f s, %.4f USD, fits: %s\n", r.est.time.iteration.value, r.est.money.total.value,
                r.est.memory.fits() ? "yes" : "no");
}
