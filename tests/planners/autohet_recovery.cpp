// AutoHet's elastic recovery (AutoHet §IV): the transfer plans of scenarios A, B and C of §V-C
// (GPT-3 6.7B on 8-GPU A100 and H20 nodes), TP split and concatenation, and bad input.
#include <doctest/doctest.h>

#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/planners/autohet_recovery.hpp"

using namespace hetplan;

namespace {

/// §V-C's platform: node N0 8 A100, N1 8 H20 (one zone, 400 Gb/s RoCE); N2 2 A100, N3 2 H20
/// join in scenario C (they are node 1 of their GPU type). GPT-3 6.7B.
struct recovery_world {
    cluster hw;
    model_spec model = make_transformer({"GPT-3-6.7B", 32, 4096, 32, 50257, 2048});
    job_spec job;
    profile_table profiles;
    gpu_type_id a100, h20;
    zone_id z;
    recovery_world() {
        z = hw.add_zone("cluster");
        a100 = hw.add_gpu(fixtures::a100_80(), 8);
        h20 = hw.add_gpu(fixtures::h20(), 8);
        hw.pool.set(a100, z, 10);
        hw.pool.set(h20, z, 10);
        hw.network.set_default(alpha_beta_link{seconds{5e-6}, gigabits_per_second(400)});
        job.global_batch = 64;
    }
    problem pb() const { return {hw, model, job, profiles}; }

    /// `groups` DP groups of 2 stages (A100 pair then H20 pair, TP 2, layers split in half);
    /// group g on A100 node a_node(g) and H20 node h_node(g).
    plan two_stage(int groups, int first_on_second_nodes = 99) const {
        const int L = model.num_layers();
        plan pl;
        for (int g = 0; g < groups; ++g) {
            const int n = g >= first_on_second_nodes ? 1 : 0;
            pl.pipelines.push_back({{stage{{layer_range{0, L / 2}}, {worker_group{a100, z, 2, 1, 64 / groups, 1.0, n}}},
                                     stage{{layer_range{L / 2, L}}, {worker_group{h20, z, 2, 1, 64 / groups, 1.0, n}}}}});
        }
        return pl;
    }
};

}  // namespace

TEST_CASE("recovery, scenario A (§V-C): two of four DP groups preempted, every piece on a local disk") {
    const recovery_world w;
    const recovery_plan r = plan_recovery(w.pb(), w.two_stage(4), w.two_stage(2));
    CHECK(r.cloud.value == 0);
    CHECK(r.peer.value == 0);
    for (const auto& t : r.transfers) {
        CHECK(t.source == piece_source::local_disk);
        CHECK(t.op == "load");
    }
    // By hand: each node reads its stage's state (14 B/param) for 2 groups at 3.5 GB/s; the
    // cloud-only baseline downloads the whole state twice (one copy per group) at 1.2 GB/s.
    const int L = w.model.num_layers();
    const double F = w.model.params_in(0, L) * 14;
    const double half = std::max(w.model.params_in(0, L / 2), w.model.params_in(L / 2, L)) * 14;
    CHECK(r.time.value == doctest::Approx(2 * half / 3.5e9));
    CHECK(r.cloud_only_time.value == doctest::Approx(2 * F / 1.2e9));
}

TEST_CASE("recovery, scenario B (§V-C): node N0 preempted, two groups of 4 H20 in TP 4") {
    const recovery_world w;
    const int L = w.model.num_layers();
    plan after;
    for (int g = 0; g < 2; ++g) after.pipelines.push_back({{stage{{layer_range{0, L}}, {worker_group{w.h20, w.z, 4, 1, 32, 1.0, 0}}}}});
    const recovery_plan r = plan_recovery(w.pb(), w.two_stage(4), after);
    // The H20 node kept the second half (TP 2, split to TP 4, from disk); the first half was on
    // N0, gone: from the cloud, once per node.
    int split_local = 0, cloud = 0;
    for (const auto& t : r.transfers) {
        CHECK(t.op == "split");
        if (t.layer >= L / 2) {
            CHECK(t.source == piece_source::local_disk);
            ++split_local;
        } else {
            CHECK(t.source == piece_source::cloud);
            ++cloud;
        }
    }
    CHECK(split_local > 0);
    CHECK(cloud > 0);
    const double F = w.model.params_in(0, L) * 14, first_half = w.model.params_in(0, L / 2) * 14;
    CHECK(r.cloud.value == doctest::Approx(first_half));
    CHECK(r.cloud_only_time.value == doctest::Approx(2 * F / 1.2e9));
    CHECK(r.speedup() > 1);
}

TEST_CASE("recovery, scenario C (§V-C): N2 and N3 join, a fifth DP group from its peers over RDMA") {
    const recovery_world w;
    const recovery_plan r = plan_recovery(w.pb(), w.two_stage(4), w.two_stage(5, 4));
    CHECK(r.cloud.value == 0);
    int peer = 0;
    for (const auto& t : r.transfers)
        if (t.pipeline == 4) {
            CHECK(t.source == piece_source::peer);
            REQUIRE(t.from);
            CHECK(t.from->node == 0);  // from N0 / N1
            ++peer;
        } else CHECK(t.source == piece_source::local_disk);
    CHECK(peer > 0);
    // Direction of §V-C: all three faster than cloud-only; B, which needs the cloud, least.
    const recovery_plan a = plan_recovery(w.pb(), w.two_stage(4), w.two_stage(2));
    const int L = w.model.num_layers();
    plan after_b;
    for (int g = 0; g < 2; ++g) after_b.pipelines.push_back({{stage{{layer_range{0, L}}, {worker_group{w.h20, w.z, 4, 1, 32, 1.0, 0}}}}});
    const recovery_plan b = plan_recovery(w.pb(), w.two_stage(4), after_b);
    MESSAGE("predicted speed-up over cloud-only: A " << a.speedup() << "x, B " << b.speedup() << "x, C " << r.speedup() << "x (paper: 4.38, 1.49, 3.59)");
    CHECK(b.speedup() > 1);
    CHECK(b.speedup() < a.speedup());
    CHECK(b.speedup() < r.speedup());
}

TEST_CASE("recovery: TP lowered concatenates shards; unpinned workers are refused") {
    const recovery_world w;
    const int L = w.model.num_layers();
    plan one;  // a single A100 at TP 1 on node 0 holding everything: TP 2 -> 1 for the A100 half
    one.pipelines.push_back({{stage{{layer_range{0, L}}, {worker_group{w.a100, w.z, 1, 1, 64, 1.0, 0}}}}});
    const recovery_plan r = plan_recovery(w.pb(), w.two_stage(1), one);
    int concat = 0;
    for (const auto& t : r.transfers)
        if (t.layer < L / 2) {
            CHECK(t.op == "concat");
            CHECK(t.shards == 2);
            ++concat;
        }
    CHECK(concat == 2 * (L / 2));  // both shards of every layer of the first half
    plan loose = one;
    loose.pipelines[0].stages[0].workers[0].node = -1;
    CHECK_THROWS_WITH_AS((void)plan_recovery(w.pb(), w.two_stage(1), loose), doctest::Contains("new plan"), input_error);
}
