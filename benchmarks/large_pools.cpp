// Large pools and stopping (issue 16): Zorse on 128 to 512 single-GPU machines and on 10^5 GPUs,
// Cephalo at a batch of 10^6 (the whole planner, against its inputs and DP alone at the finest
// units the DP takes), and how long each reference planner takes to return once its stop
// condition fires (deadline minus the measured return time, printed per planner; the Catch2
// mean includes the deadline).
#define CATCH_CONFIG_ENABLE_BENCHMARKING
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "hetplan/planners/registry.hpp"
#include "pools.hpp"

using namespace hetplan;

namespace {

/// bench::mixed_pool at global batch 1,024.
fixtures::planning_example pool(int zones, int per, int per_node) { return bench::mixed_pool(zones, per, per_node, 1024); }

}  // namespace

TEST_CASE("Zorse on single-GPU machines: 128 to 512, and 10^5 GPUs (issue 16: 512 in <= 1 s)") {
    for (int machines : {128, 256, 512}) {
        const auto in = pool(2, machines / 8, 1);
        BENCHMARK("Zorse, " + std::to_string(machines) + " single-GPU machines, 4 types x 2 zones") {
            return zorse_planner<>().plan(in.as_problem()).plans.size();
        };
    }
    // The ratio: every combination of even runs per cut, as before (capped at 20,000 candidates).
    const auto in = pool(2, 64, 1);
    zorse_options every;
    every.partition.max_run_combinations = every.partition.max_candidates;
    BENCHMARK("Zorse, 512 single-GPU machines, every combination of even runs (before)") {
        return zorse_planner<>(every).plan(in.as_problem()).plans.size();
    };
    const auto huge = pool(2, 12500, 1);
    BENCHMARK("Zorse, 10^5 single-GPU machines (batch 1,024: plans on the fastest 1,024)") {
        return zorse_planner<>().plan(huge.as_problem()).plans.size();
    };
}

TEST_CASE("Cephalo at a global batch of 10^6 (issue 16: <= 1 s), against 62,500 units of 16 samples") {
    for (int per : {1, 16, 64}) {  // 8, 128 and 512 GPUs over 2 zones, 8 per node
        auto in = bench::mixed_pool(2, per, 8, 1'000'000);
        const std::string at = std::to_string(8 * per) + " GPUs";
        plan_result r;
        BENCHMARK("Cephalo, batch 10^6, " + at) {
            r = cephalo_planner<>().plan(in.as_problem());
            return r.plans.size();
        };
        if (per > 16) continue;
        double fine = 0;
        BENCHMARK("Cephalo, batch 10^6, " + at + ", units of 16 samples (the finest the DP takes)") {
            std::vector<std::string> notes;
            const cephalo_inputs ci = make_cephalo_inputs(in.as_problem(), {}, notes, 16);
            const auto a = search::fast_batch_dp(ci.dp);
            fine = a ? a->makespan : 0;
            return a ? 1 : 0;
        };
        // What the coarser units cost: Eq. 4's makespan at the planner's units against at 16.
        if (r.best()) std::printf("%s: Eq. 4 makespan %.4f s at the planner's units, %.4f s at units of 16\n", at.c_str(), r.best()->predicted.value, fine);
    }
}

TEST_CASE("Stop latency: every planner returns within 0.1 s of its deadline (issue 16)") {
    // Large enough that the searches are still running at the deadline: 2,048 GPUs in 8-GPU
    // nodes, 10^5 single-GPU machines, and (for Cephalo's batch DP) 2,048 GPUs at batch 60,000.
    const auto nodes = pool(4, 128, 8), machines = pool(2, 12500, 1), batch = bench::mixed_pool(4, 128, 8, 60000);
    for (const auto* in : {&nodes, &machines, &batch}) {
        const std::string at = in == &nodes ? "2,048 GPUs" : in == &machines ? "10^5 machines" : "2,048 GPUs, batch 60,000";
        for (auto p : builtin_planners()) {
            double worst = 0;
            BENCHMARK(p.name() + ", " + at + ", deadline 100 ms") {
                planning_request rq;
                rq.stop = stop_condition::after(std::chrono::milliseconds(100));
                const auto r = p.plan(in->as_problem(), rq);
                worst = std::max(worst, std::chrono::duration<double>(stop_condition::clock::now() - rq.stop.deadline).count());
                return r.plans.size();
            };
            std::printf("%s, %s: returned at most %.1f ms after the deadline\n", std::string(p.name()).c_str(), at.c_str(), worst * 1e3);
        }
    }
}
