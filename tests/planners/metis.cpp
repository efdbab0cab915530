// Metis and memory-aware Metis as hetplan planners (planners/metis.hpp): on hetplan problems,
// their plans are valid, deterministic, keep TP groups inside one node of one GPU type, give
// each replica its share of the batch, and honour stop conditions and budgets.
#include <doctest/doctest.h>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/metis.hpp"
#include "hetplan/planners/registry.hpp"

using namespace hetplan;

namespace {
template <class P>
void check_plans(const problem& pb, const plan_result& r, const P& planner) {
    REQUIRE(!r.plans.empty());
    const auto sim = planner.models();
    for (const auto& rp : r.plans) {
        CHECK(validate(pb, rp.pl, sim.memory).ok());
        REQUIRE(rp.pl.pipelines.size() == 1);
        int next = 0;
        for (const auto& st : rp.pl.pipelines[0].stages) {
            REQUIRE(st.layers.size() == 1);
            CHECK(st.layers[0].begin == next);
            next = st.layers[0].end;
            CHECK(st.batch() == pb.job.global_batch);
            for (const auto& w : st.workers) {
                CHECK(w.tp <= pb.hw.gpus_per_node(w.gpu));
                CHECK(w.node >= 0);
                CHECK(w.microbatch_size >= 1);
            }
        }
        CHECK(next == pb.model.num_layers());
        // The estimate is the simulator's on the plan.
        CHECK(sim.run(pb, rp.pl).time.iteration == rp.est.time.iteration);
    }
    for (std::size_t i = 1; i < r.plans.size(); ++i) CHECK(r.plans[i - 1].value <= r.plans[i].value * (1 + 1e-3));
}
}  // namespace

TEST_CASE("metis planner: valid, deterministic plans on the built-in example, both variants") {
    const auto in = fixtures::default_example();  // 8 A100-40 + 8 V100-16 in 4-GPU nodes, OPT-350M
    const problem pb = in.as_problem();
    metis_planner<> m;
    memory_aware_metis_planner a;
    plan_request<> rq;
    rq.top = 5;
    const auto rm = m.plan(pb, rq), ra = a.plan(pb, rq);
    check_plans(pb, rm, m);
    check_plans(pb, ra, a);
    // Same input, same plans.
    const auto again = metis_planner<>().plan(pb, rq);
    REQUIRE(again.plans.size() == rm.plans.size());
    for (std::size_t i = 0; i < rm.plans.size(); ++i) CHECK(again.plans[i].pl == rm.plans[i].pl);
    // The note says how much was searched.
    CHECK(std::any_of(rm.notes.begin(), rm.notes.end(), [](const std::string& n) { return n.find("search steps") != std::string::npos; }));
}

TEST_CASE("metis planner: a mixed stage gives its replicas uneven shares of the batch, by speed") {
    // 4 A100-40 + 4 V100-16 in one 8-GPU node type each; a one-stage plan over all 8 GPUs at DP 8
    // gives each A100 replica at least as many samples as each V100 one, more where the shares are large enough (Metis §5.2, data load balancing).
    auto in = fixtures::default_example();
    in.hw.pool.set(gpu_type_id{0}, zone_id{0}, 4);
    in.hw.pool.set(gpu_type_id{1}, zone_id{0}, 4);
    in.model = fixtures::tiny_gpt();
    in.job.global_batch = 64;
    in.job.prec = precision::fp16_mixed;  // A100 2.5 x V100 at the datasheets' fp16 peaks
    const problem pb = in.as_problem();
    metis_planner_options opt;
    opt.keep = 400;
    plan_request<> rq;
    rq.top = 400;
    rq.rank_within = 1e9;
    const auto r = metis_planner<>(opt).plan(pb, rq);
    REQUIRE(!r.plans.empty());
    bool seen = false, uneven = false;
    for (const auto& rp : r.plans) {
        const auto& stages = rp.pl.pipelines[0].stages;
        if (stages.size() != 1 || stages[0].workers.size() != 8) continue;
        int a100 = 0, v100 = 0;
        for (const auto& w : stages[0].workers) (w.gpu == gpu_type_id{0} ? a100 : v100) = w.microbatch_size;
        CHECK(a100 >= v100);  // small shares can round to equal ones
        uneven = uneven || a100 > v100;
        seen = true;
    }
    CHECK(seen);
    CHECK(uneven);
}

TEST_CASE("metis planner: a stop condition and the candidate budget end the search, with a note") {
    const auto in = fixtures::default_planning_example();  // 128 GPUs, GPT-Neo 2.7B, batch 1024
    const problem pb = in.as_problem();
    plan_request<> rq;
    rq.stop = stop_condition::after(std::chrono::milliseconds(200));
    const auto r = metis_planner<>().plan(pb, rq);
    CHECK(r.stopped);
    metis_planner_options opt;
    opt.candidate_budget = 300;
    const auto b = memory_aware_metis_planner(opt).plan(pb);
    CHECK_FALSE(b.stopped);
    CHECK(std::any_of(b.notes.begin(), b.notes.end(), [](const std::string& n) { return n.find("candidate_budget") != std::string::npos; }));
    for (const auto& rp : b.plans) CHECK(validate(pb, rp.pl, memory_aware_metis_planner().models().memory).ok());
}

TEST_CASE("metis planner: in the registry, by name") {
    CHECK(planner_named("metis").name() == "metis");
    CHECK(planner_named("metis-memory-aware").name() == "metis-memory-aware");
}

TEST_CASE("metis planner: a GPU count with no power-of-two device groups plans on the most GPUs that have some") {
    // 8 A100 + 7 V100, at most 6 layers: 15 GPUs in at most 6 power-of-two groups of at least an
    // even share (>= 2) would be a sum of even numbers; 14 have groups (5 x 2 + 4).
    auto in = fixtures::default_example();
    in.hw.pool.set(gpu_type_id{1}, zone_id{0}, 7);
    in.model = fixtures::tiny_gpt();
    in.job.global_batch = 64;
    const problem pb = in.as_problem();
    REQUIRE(pb.model.num_layers() < 7);
    const auto r = metis_planner<>().plan(pb);
    CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("it plans with 14") != std::string::npos; }));
    REQUIRE(!r.plans.empty());
    CHECK(r.plans[0].pl.total_gpus() <= 14);
    CHECK(validate(pb, r.plans[0].pl, metis_planner<>().models().memory).ok());
}

TEST_CASE("metis time model: Metis' formula on a hetplan plan, by hand") {
    // The built-in example plan: two stages of two TP-4 workers, microbatch 2 x 256. Metis §5.3:
    // (B - 1) max exec + sum exec + p2p + max all-reduce + max update; exec of a worker is the sum
    // over its layers of forward + backward at its microbatch size (2: a power of two, one piece).
    const auto in = fixtures::default_example();
    const problem pb = in.as_problem();
    const auto r = metis_time_model{}.estimate(pb, in.example_plan);
    REQUIRE(r.stages.size() == 2);
    const auto& st0 = in.example_plan.pipelines[0].stages[0];
    seconds exec{0};
    for (int l = st0.layers[0].begin; l < st0.layers[0].end; ++l)
        exec += pb.profiles.lookup(pb.hw.gpu(st0.workers[0].gpu), 4, 2, pb.model, std::size_t(l), pb.job.compute_dtype(), 16.0).first.fwd_bwd();
    CHECK(r.stages[0].compute.value == doctest::Approx(exec.value).epsilon(1e-12));
    const double B = 256;
    const double c0 = r.stages[0].compute.value, c1 = r.stages[1].compute.value;
    CHECK(r.pipeline.value == doctest::Approx((B - 1) * std::max(c0, c1) + c0 + c1 + r.stages[0].p2p.value).epsilon(1e-12));
    CHECK(r.stages[1].p2p.value == 0);
    CHECK(r.sync.value > 0);  // two replicas per stage all-reduce their gradients
    CHECK(r.iteration.value == doctest::Approx(r.pipeline.value + r.sync.value + r.update.value).epsilon(1e-12));
    // And Metis' plans price under any simulator: Sailor's, here.
    const auto m = metis_planner<>().plan(pb);
    REQUIRE(m.best());
    CHECK(simulator<>{}.run(pb, m.best()->pl).time.iteration.value > 0);
}
