// Sailor's cost models on a hand-checkable two-stage plan (support.hpp's small_world):
// 4 layers of 1e6 parameters and 1e5 activation elements per sample, fp32 Adam.
#include <doctest/doctest.h>

#include "../support.hpp"

using namespace hetplan;
using test::worker;

namespace {
// Stage 0: layers 0-1 on two A workers (zone 1). Stage 1: layers 2-3 on one A (zone 1) and one
// B (zone 2). Microbatch 2, 8 microbatches per worker: 2 x 16 = 32 = global batch.
plan two_stage(const test::small_world& w) {
    plan pl;
    pipeline p;
    p.stages.push_back({{layer_range{0, 2}}, {worker(w.a, w.z1, 1, 2, 8, 0.5), worker(w.a, w.z1, 1, 2, 8, 0.5)}});
    p.stages.push_back({{layer_range{2, 4}}, {worker(w.a, w.z1, 1, 2, 8, 0.5), worker(w.b, w.z2, 1, 2, 8, 0.5)}});
    pl.pipelines.push_back(p);
    return pl;
}
}  // namespace

TEST_CASE("sailor memory model, worked by hand") {
    const test::small_world w;
    const plan pl = two_stage(w);
    const memory_report m = sailor_memory_model{}.estimate(w.pb(), pl);
    REQUIRE(m.workers.size() == 4);
    // Stage 0: 2e6 params x 24 B = 48 MB; activations 2 layers x 1e5 x 4 B x mbs 2 x (P - 0 = 2)
    // in flight = 3.2 MB; overhead 2 GB (TP 1).
    CHECK(m.workers[0].weights.value == doctest::Approx(2e6 * 8));
    CHECK(m.workers[0].optimizer.value == doctest::Approx(2e6 * 8));
    CHECK(m.workers[0].activations.value == doctest::Approx(3.2e6));
    CHECK(m.workers[0].total.value == doctest::Approx(48e6 + 3.2e6 + 2e9));
    // Stage 1 keeps one microbatch in flight.
    CHECK(m.workers[2].activations.value == doctest::Approx(1.6e6));
    CHECK(m.workers[2].total.value == doctest::Approx(48e6 + 1.6e6 + 2e9));
    CHECK(m.fits());

    plan zero3 = pl;
    zero3.memory.zero_stage = 3;  // each of two workers keeps half of the 48 MB of state
    CHECK(sailor_memory_model{}.estimate(w.pb(), zero3).workers[0].total.value == doctest::Approx(24e6 + 3.2e6 + 2e9));
    plan gpipe = pl;
    gpipe.schedule = schedule_kind::gpipe;  // all 8 microbatches in flight: 12.8 MB
    CHECK(sailor_memory_model{}.estimate(w.pb(), gpipe).workers[0].activations.value == doctest::Approx(12.8e6));
    plan recompute = pl;
    recompute.memory.recompute = true;  // boundaries 2 x 1e5 x 2 in flight + one layer's 1e5, x 4 B x 2
    CHECK(sailor_memory_model{}.estimate(w.pb(), recompute).workers[0].activations.value == doctest::Approx((4e5 + 1e5) * 8));
    plan offload = pl;
    offload.memory.offload_params = true;
    CHECK_THROWS_AS((void)sailor_memory_model{}.estimate(w.pb(), offload), model_error);
}

TEST_CASE("sailor time model, worked by hand") {
    const test::small_world w;
    const time_report t = sailor_time_model{}.estimate(w.pb(), two_stage(w));
    // Per microbatch: stage 0 computes 2 layers x (1 + 2) ms = 6 ms; stage 1's B worker 12 ms.
    // The boundary moves 1e5 x 4 B x 2 = 0.8 MB at 1 GB/s = 0.8 ms each way.
    REQUIRE(t.stages.size() == 2);
    CHECK(t.stages[0].compute.value == doctest::Approx(6e-3));
    CHECK(t.stages[1].compute.value == doctest::Approx(12e-3));
    CHECK(t.stages[0].p2p.value == doctest::Approx(0.8e-3));
    CHECK(t.stages[1].p2p.value == doctest::Approx(0.8e-3));
    // T_pp = (6 + 0.8) + (12 + 0.8) + (8 - 1) x 12.8 = 109.2 ms.
    CHECK(t.pipelines[0].straggler.value == doctest::Approx(12.8e-3));
    CHECK(t.pipeline.value == doctest::Approx(109.2e-3));
    // Sync: each stage all-reduces 2e6 x 4 B = 8 MB over 2 workers: 2 x 1 x 4 MB / 1 GB/s = 8 ms.
    CHECK(t.stages[0].sync.value == doctest::Approx(8e-3));
    CHECK(t.sync.value == doctest::Approx(8e-3));
    // Update: stage 1's B worker, 2 layers x 1 ms.
    CHECK(t.update.value == doctest::Approx(2e-3));
    CHECK(t.iteration.value == doctest::Approx(119.2e-3));
    // Bubble of stage 0: 109.2 - 8 x 6.8 = 54.8 ms.
    CHECK(t.stages[0].bubble.value == doctest::Approx(54.8e-3));

    // Recomputation runs each layer's forward (1 ms on A, 2 ms on B) again in backward:
    // stage 0 2 x (1 + 1 + 2) = 8 ms, stage 1's B worker 2 x (2 + 2 + 4) = 16 ms.
    plan recompute = two_stage(w);
    recompute.memory.recompute = true;
    const time_report r = sailor_time_model{}.estimate(w.pb(), recompute);
    CHECK(r.stages[0].compute.value == doctest::Approx(8e-3));
    CHECK(r.stages[1].compute.value == doctest::Approx(16e-3));
}

TEST_CASE("sailor money model, worked by hand") {
    const test::small_world w;
    const plan pl = two_stage(w);
    const time_report t = sailor_time_model{}.estimate(w.pb(), pl);
    const money_report m = sailor_money_model{}.estimate(w.pb(), pl, t);
    // 3 A (0.001 USD/s) + 1 B (0.0005 USD/s) for 0.1192 s.
    CHECK(m.compute.value == doctest::Approx(0.0035 * 0.1192));
    // Cross-zone bytes: the A(z1) -> B(z2) pipeline pair, 0.8 MB x 8 microbatches each way
    // (12.8 MB), plus stage 1's ring (A z1 <-> B z2): both edges carry 2 x 1/2 x 8 MB (16 MB).
    CHECK(m.cross_zone.value == doctest::Approx(28.8e6));
    CHECK(m.communication.value == doctest::Approx(28.8e6 * 0.01 / 1e9));
    CHECK(m.total.value == doctest::Approx(m.compute.value + m.communication.value));
}

TEST_CASE("simulator: monotone in replicas and link speed") {
    test::small_world w;
    // One stage holding everything on A workers; D workers split 32 samples at microbatch 2.
    auto replicated = [&](int d) {
        plan pl;
        pipeline p;
        stage s;
        s.layers.push_back({0, 4});
        for (int i = 0; i < d; ++i) s.workers.push_back(worker(w.a, w.z1, 1, 2, 16 / d, 1.0 / d));
        p.stages.push_back(s);
        pl.pipelines.push_back(p);
        return pl;
    };
    const simulator<> sim;
    const double t4 = sim.run(w.pb(), replicated(4)).time.iteration.value;
    const double t2 = sim.run(w.pb(), replicated(2)).time.iteration.value;
    CHECK(t2 > t4);  // removing replicas makes the iteration slower
    const double sync_fast = sim.run(w.pb(), replicated(4)).time.sync.value;
    w.hw.network.set_default(alpha_beta_link{seconds{0}, bytes_per_second{0.25e9}});
    CHECK(sim.run(w.pb(), replicated(4)).time.sync.value > sync_fast);  // slower link, slower sync
}
