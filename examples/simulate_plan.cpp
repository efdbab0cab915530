// Price a plan with Sailor's simulator and check it with the validator.
#include <cstdio>

#include "hetplan/hetplan.hpp"

static_assert(hetplan::concepts::check_device<hetplan::gpu_spec>());
static_assert(hetplan::concepts::check_link<hetplan::builtin_link>());
static_assert(hetplan::concepts::check_memory_model<hetplan::sailor_memory_model>());
static_assert(hetplan::concepts::check_time_model<hetplan::sailor_time_model>());
static_assert(hetplan::concepts::check_cost_model<hetplan::sailor_money_model>());

int main() {
    auto in = hetplan::fixtures::default_example();
    const hetplan::problem pb = in.as_problem();
    const auto report = hetplan::validate(pb, in.example_plan, hetplan::sailor_memory_model{});
    const auto e = hetplan::simulator<>{}.run(pb, in.example_plan);
    std::printf("valid: %s\niteration: %.3f s\ncost: %.4f USD\nworst headroom: %.2f GB\n", report.ok() ? "yes" : "no",
                e.time.iteration.value, e.money.total.value, e.memory.worst_headroom().value / 1e9);
    return report.ok() ? 0 : 1;
}
