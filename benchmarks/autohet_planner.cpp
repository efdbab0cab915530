// AutoHet's device grouping (Eqs. 2-3), which the paper solves with SCIP in 1.23 / 5.72 / 16.96 /
// 159 s for 16 / 24 / 32 / 64 GPUs (§V-B), and the whole planner (grouping + mapping +
// partition at every TP degree and microbatch size). Pools: A100 / H800 / H20 in ratio 2:1:1 at
// TP 1 (datasheet powers 312 / 989 / 148; one GPU cannot hold the model, so groups need two),
// the batch's microbatches shared by the groups. The exact solver against brute force over
// every set partition where that finishes (12 GPUs). Run with e.g. `--benchmark-samples 10`.
#define CATCH_CONFIG_ENABLE_BENCHMARKING
#include <catch2/catch.hpp>

#include <span>
#include <string>

#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/planners/autohet.hpp"

using namespace hetplan;
using namespace hetplan::search;

namespace {

grouping_problem pool(int n, int microbatches) {
    grouping_problem in;
    const int a = n / 2, h = n / 4;
    in.classes = {{a, 312, 80}, {h, 989, 80}, {n - a - h, 148, 96}};
    in.min_memory = 150;
    in.microbatches.total = microbatches;
    return in;
}

auto any_group = [](std::span<const int>) { return true; };

/// LLaMA 6.7B on the same ratio of A100-80 / H800 / H20, 8-GPU nodes, analytical timings.
struct planner_pool {
    cluster hw;
    model_spec model = make_transformer({"LLaMA-6.7B", 32, 4096, 32, 32000, 2048});
    job_spec job;
    profile_table profiles;
    explicit planner_pool(int n) {
        const zone_id z = hw.add_zone("cluster");
        hw.network.set_default(alpha_beta_link{seconds{5e-6}, gigabits_per_second(400)});
        const int a = n / 2, h = n / 4;
        hw.pool.set(hw.add_gpu(fixtures::a100_80(), 8), z, a);
        hw.pool.set(hw.add_gpu(fixtures::h800(), 8), z, h);
        hw.pool.set(hw.add_gpu(fixtures::h20(), 8), z, n - a - h);
        job.global_batch = 512;
        job.sequence_length = 2048;
        job.prec = precision::fp16_mixed;
        job.optimizer = optimizer_kind::adam;
        profiles.enable_analytical({});
    }
    problem pb() const { return {hw, model, job, profiles}; }
};

}  // namespace

TEST_CASE("AutoHet device grouping (Eqs. 2-3), exact", "[autohet]") {
    for (int n : {12, 16, 24, 32, 64, 128, 256}) {
        grouping_solver<> s;
        BENCHMARK("exact, " + std::to_string(n) + " GPUs") { return s.solve(pool(n, 512), any_group); };
    }
    BENCHMARK("brute force (every set partition), 12 GPUs") { return brute_force_grouping(pool(12, 512), any_group); };
}

TEST_CASE("AutoHet planner: grouping + mapping + partition, every TP degree and microbatch size", "[autohet]") {
    for (int n : {16, 24, 32, 64, 128, 256}) {
        const planner_pool in(n);
        autohet_planner<> p;
        BENCHMARK("AutoHet planner, " + std::to_string(n) + " GPUs") { return p.plan(in.pb()); };
    }
}
