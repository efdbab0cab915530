// Zorse's models and planner (Zorse §3) on small hand-made inputs.
#include <doctest/doctest.h>

#include "../support.hpp"
#include "hetplan/cost/memory/zorse.hpp"
#include "hetplan/cost/time/zorse.hpp"

using namespace hetplan;

namespace {

/// One machine of 2 fast "F" GPUs (24 GB, 100 GB/s inside) and one of 2 slow "S" GPUs (12 GB,
/// 10 GB/s inside), 1 GB/s between machines, one zone. 4 layers of 1e8 parameters, 1e5 boundary
/// and 2e5 working activation elements per sample; fp32 (weights and gradients 4 B, Adam 8 B).
/// Per layer and microbatch of m: F forward 1 ms x m, backward 2 ms x m; S twice as slow.
struct zorse_world {
    cluster hw;
    model_spec model;
    job_spec job;
    profile_table profiles;
    gpu_type_id f{}, s{};
    zone_id z{};

    explicit zorse_world(int fast_machines = 1, int slow_machines = 1, int batch = 16) {
        gpu_spec gf;
        gf.type_name = "F";
        gf.memory_capacity = gigabytes(24);
        gpu_spec gs = gf;
        gs.type_name = "S";
        gs.memory_capacity = gigabytes(12);
        f = hw.add_gpu(gf, 2);
        s = hw.add_gpu(gs, 2);
        z = hw.add_zone("r1-a");
        hw.pool.set(f, z, 2 * fast_machines);
        hw.pool.set(s, z, 2 * slow_machines);
        hw.network.set_default(alpha_beta_link{seconds{0}, bytes_per_second{1e9}});
        hw.network.set_intra_node(f, 2, alpha_beta_link{seconds{0}, bytes_per_second{1e11}});
        hw.network.set_intra_node(s, 2, alpha_beta_link{seconds{0}, bytes_per_second{1e10}});
        model.name = "four";
        for (int i = 0; i < 4; ++i) {
            layer_spec l;
            l.name = "l" + std::to_string(i);
            l.params = 1e8;
            l.act_input_elems = l.act_output_elems = 1e5;
            l.act_mem_elems = 2e5;
            l.flops_fwd = 1e9;
            model.layers.push_back(l);
        }
        job.global_batch = batch;
        job.sequence_length = 16;
        for (auto [name, k] : {std::pair{"F", 1.0}, std::pair{"S", 2.0}}) {
            profile_curve c;
            for (int m = 1; m <= 4; ++m) c.add_point(m, std::vector<layer_timing>(4, {milliseconds(k * m), milliseconds(2 * k * m), seconds{0}}));
            linear_tail t;
            t.fwd_slope.assign(4, k * 1e-3);
            t.fwd_intercept.assign(4, 0);
            t.bwd_slope.assign(4, 2 * k * 1e-3);
            t.bwd_intercept.assign(4, 0);
            c.tail = t;
            profiles.set_curve(name, 1, c);
        }
    }
    [[nodiscard]] problem pb() const { return {hw, model, job, profiles}; }

    /// Two groups, F's machine then S's, each GPU with `n` microbatches of `m`, state halved.
    [[nodiscard]] plan two_groups(std::vector<layer_range> first, std::vector<layer_range> second, int m, int n) const {
        plan pl;
        pl.schedule = schedule_kind::interleaved_ministages;
        pl.memory.zero_stage = 3;
        pl.memory.recompute = true;
        pl.memory.offload_params = pl.memory.offload_activations = true;
        pipeline p;
        for (auto [gpu, layers] : {std::pair{f, first}, std::pair{s, second}}) {
            stage st;
            st.layers.assign(layers.begin(), layers.end());
            for (int k = 0; k < 2; ++k) st.workers.push_back({gpu, z, 1, m, n, 0.5, 0});
            p.stages.push_back(st);
        }
        pl.pipelines.push_back(p);
        return pl;
    }
};

}  // namespace

TEST_CASE("zorse latency model (§3.3.4) by hand: two groups, one ministage each") {
    const zorse_world w;
    // 16 samples in microbatches of 2: 8 microbatches, 4 per GPU.
    const plan pl = w.two_groups({{0, 2}}, {{2, 4}}, 2, 4);
    const auto t = zorse_time_model{}.estimate(w.pb(), pl);
    // Group F, layers 0-1, one microbatch: forward 2 x 2 ms = 4 ms, backward 2 x (2 + 4) = 12 ms
    // (forward recomputed). AllGather per layer, ring of 2 on one machine: 1 step of 2e8 B at
    // 100 GB/s = 2 ms; ReduceScatter the same; the ministage: 4 ms each. Point-to-point: 1e5 x 2
    // samples x 4 B = 0.8 MB at 1 GB/s = 0.8 ms. Forward max(4 x 4, 4) = 16, backward
    // max(4 x 12, 8) = 48: 64 ms. Group S: 8 and 24 ms per microbatch, collectives 20 ms per
    // layer at 10 GB/s: forward max(32, 40) = 40, backward max(96, 80) = 96: 136 ms, the core.
    // Fill: group F's first AllGather 4 + its forward 4 + send 0.8 = 8.8 ms; drain: its
    // ReduceScatter 4 + backward 12 + send 0.8 = 16.8 ms. Total 161.6 ms.
    CHECK(t.iteration.value == doctest::Approx(0.1616));
    REQUIRE(t.stages.size() == 2);
    CHECK(t.stages[1].bubble.value == doctest::Approx(0.0));
    CHECK(t.stages[0].bubble.value == doctest::Approx(0.136 - 0.064));
    CHECK(t.stages[1].sync.value == doctest::Approx(0.136 - 0.128));  // 8 ms of AllGather exposed in the forward
    CHECK(t.pipelines[0].ramp.value == doctest::Approx(0.0256));
}

TEST_CASE("zorse latency model: interleaving shortens fill and drain, memory drops with smaller ministages") {
    const zorse_world w;
    // Two ministages of one layer per group (Fig. 3): F holds 0 and 2, S holds 1 and 3.
    const plan pl = w.two_groups({{0, 1}, {2, 3}}, {{1, 2}, {3, 4}}, 2, 4);
    const auto t = zorse_time_model{}.estimate(w.pb(), pl);
    // Per ministage, F: max(4 x 2, 2) + max(4 x 6, 4) = 32 ms, twice; S: max(16, 20) + max(48, 40)
    // = 68 ms, twice: core 136 ms as before. Fill 2 + 2 + 0.8, drain 2 + 6 + 0.8: 149.6 ms.
    CHECK(t.iteration.value == doctest::Approx(0.1496));
    // Memory of an F GPU: weights of two ministages materialised 2e8 x 4 B = 0.8 GB; gradients
    // of the largest ministage 1e8 x 4 = 0.4 GB (0.8 GB with one ministage of two layers);
    // optimizer half of 2e8 x 8 B = 0.8 GB; activations 3 x 1e5 x 2 x 4 + 2e5 x 2 x 4 = 4 MB;
    // 2 GiB reserved. Host: half of 2e8 x 4 B + 2 boundaries x 1e5 x 8 B x 4 microbatches.
    const auto m = zorse_memory_model{}.estimate(w.pb(), pl);
    REQUIRE(m.workers.size() == 4);
    CHECK(m.workers[0].weights.value == doctest::Approx(0.8e9));
    CHECK(m.workers[0].gradients.value == doctest::Approx(0.4e9));
    CHECK(m.workers[0].optimizer.value == doctest::Approx(0.8e9));
    CHECK(m.workers[0].activations.value == doctest::Approx(4e6));
    CHECK(m.workers[0].total.value == doctest::Approx(2.004e9 + gibibytes(2).value));
    CHECK(m.workers[0].host.value == doctest::Approx(0.4e9 + 6.4e6));
    const auto whole = zorse_memory_model{}.estimate(w.pb(), w.two_groups({{0, 2}}, {{2, 4}}, 2, 4));
    CHECK(whole.workers[0].gradients.value == doctest::Approx(0.8e9));
    // Host memory per machine: the two GPUs of each.
    const auto host = zorse_memory_model{}.host_per_machine(w.pb(), pl);
    REQUIRE(host.size() == 2);
    CHECK(host.begin()->second.value == doctest::Approx(2 * (0.4e9 + 6.4e6)));
    // Not a pipeline of GPU groups: a clear error.
    plan bad = pl;
    bad.pipelines.push_back(bad.pipelines[0]);
    CHECK_THROWS_AS((void)zorse_time_model{}.estimate(w.pb(), bad), model_error);
}
