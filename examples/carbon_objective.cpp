// Example 4: an objective of your own — grams of CO2 per iteration, from each GPU's power draw and
// the grid's carbon intensity of its zone — passed into the search: the stage DP carries the
// measure (rate per GPU-second x iteration time) next to time and money, so the cleanest plan is
// found, not filtered out of a list. On a small instance the stage DP's optimum equals
// exhaustive search's.
#include <cstdio>
#include <map>
#include <string>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/sailor.hpp"

using namespace hetplan;

/// Grams of CO2 per iteration, under an optional minimum throughput.
struct carbon_per_iteration {
    std::map<std::string, double> watts{{"A100-40", 400}, {"V100-16", 300}};
    std::map<std::string, double> grams_per_kwh{{"us-central1-a", 450}, {"us-central1-b", 450}};
    constraints limits{};
    [[nodiscard]] double value(const objective_terms& t) const { return t.measure; }
    [[nodiscard]] bool admits(const objective_terms& t) const { return limits.admit(t); }
    /// Grams one GPU of type g in zone z emits per second.
    [[nodiscard]] double gpu_rate(const problem& pb, gpu_type_id g, zone_id z) const {
        return watts.at(pb.hw.gpu(g).type_name) * grams_per_kwh.at(pb.hw.zone(z).name) / 3.6e6;
    }
    [[nodiscard]] static constexpr const char* unit() { return "g CO2/iteration"; }
};
static_assert(hetplan::concepts::check_objective<carbon_per_iteration>());
static_assert(hetplan::concepts::measured_objective<carbon_per_iteration>);

int main() {
    // The built-in 128-GPU problem: the cleanest plan at no less than 0.1 iterations/s.
    const auto big = fixtures::default_planning_example();
    plan_request<carbon_per_iteration> rq;
    rq.objective.limits.min_throughput = 0.1;
    const auto r = sailor_planner<>().plan(big.as_problem(), rq);
    const auto fast = sailor_planner<>().plan(big.as_problem());
    if (!r.best() || !fast.best()) return 1;
    const double batch = big.job.global_batch;
    std::printf("fastest: %d GPUs, %.4f iterations/s, %.3f g CO2 per sample\n", fast.best()->gpus(), fast.best()->throughput(),
                search::terms_of(rq.objective, big.as_problem(), fast.best()->pl, fast.best()->est).measure / batch);
    std::printf("cleanest at >= 0.1 it/s: %d GPUs, %.4f iterations/s, %.3f g CO2 per sample\n", r.best()->gpus(), r.best()->throughput(),
                r.best()->terms.measure / batch);
    // A small instance (OPT-350 on 8 A100 + 8 V100): the stage DP against exhaustive search.
    const auto small = fixtures::default_example();
    sailor_options two_stages;
    two_stages.space.max_pipeline_degree = 2;
    auto exact = exact_sailor_planner(two_stages);
    const plan_request<carbon_per_iteration> any{};
    const auto dp = exact.plan(small.as_problem(), any), brute = exact.exhaustive().plan(small.as_problem(), any);
    if (!dp.best() || !brute.best()) return 1;
    std::printf("small instance: stage DP %.4f g, exhaustive %.4f g per iteration: %s\n", dp.best()->value, brute.best()->value,
                dp.best()->value <= brute.best()->value * (1 + 1e-9) ? "same optimum" : "DIFFERENT");
}
