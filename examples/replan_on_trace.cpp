// Example 5: embedding hetplan in a scheduler that re-plans whenever GPU availability changes.
// The trace gives the number of 8-GPU A100 nodes available over time (Sailor's published A100
// trace when its path is given, e.g. shared/data/sailor/traces/a100_trace.json; a built-in one
// otherwise): us-central1-a fills first, then us-central1-b, two nodes each; the V100s stay. At every change the planner
// re-plans on the new pool, keeping what it learnt about memory.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/io/json_reader.hpp"
#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/sailor.hpp"

static_assert(hetplan::concepts::check_memory_model<hetplan::sailor_memory_model>());
static_assert(hetplan::concepts::check_time_model<hetplan::sailor_time_model>());

/// (seconds, A100 nodes) at each change of availability.
std::vector<std::pair<double, int>> load_trace(int argc, char** argv) {
    std::vector<std::pair<double, int>> events;
    if (argc > 1) {
        const auto j = hetplan::io::parse_file(argv[1]);
        const hetplan::io::cursor root(j, argv[1]);
        for (std::size_t i = 0; i < root.size(); ++i) {
            const int nodes = root.at(i)["GPUs"].integer(0);
            if (events.empty() || events.back().second != nodes) events.emplace_back(root.at(i)["Time"].non_negative(), nodes);
        }
    } else {
        events = {{0, 4}, {300, 3}, {900, 1}, {1500, 4}};
    }
    return events;
}

int main(int argc, char** argv) {
    using namespace hetplan;
    auto in = fixtures::default_planning_example();  // GPT-Neo-2.7 on A100s and V100s, two zones
    const gpu_type_id a100 = *in.hw.find_gpu("A100-40");
    const zone_id zone_a = *in.hw.find_zone("us-central1-a"), zone_b = *in.hw.find_zone("us-central1-b");
    sailor_planner<> planner;
    std::string last;
    for (const auto& [t, nodes] : load_trace(argc, argv)) {
        resource_pool pool = in.hw.pool;
        pool.set(a100, zone_a, 8 * std::clamp(nodes, 0, 2));
        pool.set(a100, zone_b, 8 * std::clamp(nodes - 2, 0, 2));
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = planner.plan(in.as_problem().with_pool(pool));  // nothing copied; memoised memory answers kept
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!r.best()) {
            std::printf("t=%6.0f s: %d A100 nodes -> no plan (%.1f ms)\n", t, nodes, ms);
            continue;
        }
        const auto& b = *r.best();
        const std::string now = std::to_string(b.gpus()) + " GPUs, " + std::to_string(b.pl.pipelines[0].stages.size()) + " stages";
        std::printf("t=%6.0f s: %d A100 nodes -> %s%s, %.4f iterations/s (planned in %.1f ms)\n", t, nodes, now.c_str(),
                    now == last ? " (unchanged)" : "", b.throughput(), ms);
        last = now;
    }
}
