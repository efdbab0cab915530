// Example 4: a custom objective — grams of CO2 per sample from each GPU's power draw and the
// grid's carbon intensity — used to choose among a planner's candidates. Sailor's planner
// returns a ranked list of simulated, validated plans; we ask for a wide list and pick the
// cleanest plan that keeps at least 80 % of the best throughput.
#include <cstdio>
#include <map>
#include <string>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/sailor.hpp"

static_assert(hetplan::concepts::check_memory_model<hetplan::sailor_memory_model>());
static_assert(hetplan::concepts::check_time_model<hetplan::sailor_time_model>());

/// Board power under training load (W), by GPU type; grid intensity (g CO2 per kWh) by zone.
struct carbon_objective {
    std::map<std::string, double> watts{{"A100-40", 400}, {"V100-16", 300}};
    std::map<std::string, double> grams_per_kwh{{"us-central1-a", 450}, {"us-central1-b", 450}};
    [[nodiscard]] double grams_per_sample(const hetplan::problem& pb, const hetplan::plan& pl, const hetplan::estimate& e) const {
        double grams = 0;
        pl.for_each_worker([&](std::size_t, std::size_t, std::size_t, const hetplan::worker_group& w) {
            const double kwh = watts.at(pb.hw.gpu(w.gpu).type_name) * w.tp * e.time.iteration.value / 3.6e6;
            grams += kwh * grams_per_kwh.at(pb.hw.zone(w.zone).name);
        });
        return grams / pb.job.global_batch;
    }
};

int main() {
    using namespace hetplan;
    const auto in = fixtures::default_planning_example();  // GPT-Neo-2.7, 32 A100 + 96 V100
    sailor_options opt;
    opt.keep = 32;
    opt.rank_within = 0.5;  // candidates up to 50 % slower than the best
    sailor_planner<> planner(opt);
    const auto r = planner.plan(in.as_problem());
    if (!r.best()) return 1;
    const carbon_objective co2;
    const planned* cleanest = nullptr;
    for (const auto& c : r.ranked)
        if (c.throughput() >= 0.8 * r.best()->throughput() &&
            (!cleanest || co2.grams_per_sample(in.as_problem(), c.pl, c.est) < co2.grams_per_sample(in.as_problem(), cleanest->pl, cleanest->est)))
            cleanest = &c;
    auto show = [&](const char* what, const planned& c) {
        std::printf("%s: %d GPUs, %.4f iterations/s, %.3f g CO2 per sample\n", what, c.gpus(), c.throughput(),
                    co2.grams_per_sample(in.as_problem(), c.pl, c.est));
    };
    std::printf("candidates: %zu\n", r.ranked.size());
    show("fastest", *r.best());
    show("cleanest within 80 %", *cleanest);
}
