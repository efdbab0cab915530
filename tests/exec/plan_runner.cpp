// The plan runner over threads: one plan of each reference planner's shape, plus an asymmetric
// pipeline, TP that differs per stage and within a stage, and GPipe, trained for 3 steps: the
// same loss and the same weights as the single-process reference (fp32, relative error <= 1e-5).
#include <doctest/doctest.h>

#include <vector>

#include "hetplan/exec/thread_communicator.hpp"
#include "plan_shapes.hpp"

namespace hetplan::test {
namespace {

using namespace exec_shapes;

void check_against_reference(const plan& pl) {
    reference<> ref(pl);
    CHECK(ref.losses.back() < ref.losses.front());  // it learns
    exec::thread_world::run(exec::layout_step(pl, shape.layers()).world_size, [&](exec::thread_communicator c) { (void)check_rank(pl, c, ref); });
}

}  // namespace

TEST_CASE("exec_runner_sailor: stages with different replica counts, TP per stage and within a stage, many-to-many activations") {
    check_against_reference(one_pipeline({st({{0, 3}}, {wg(1, 2, 2), wg(1, 1, 4), wg(2, 4, 1)}), st({{3, 6}}, {wg(2, 3, 2), wg(4, 2, 3)})}));
    check_against_reference(sailor_8());
}

TEST_CASE("exec_runner_cephalo: one stage, data parallel with uneven batch shares and microbatch sizes") {
    check_against_reference(one_pipeline({st({{0, 6}}, {wg(1, 1, 3), wg(1, 2, 2), wg(1, 5, 1)})}, schedule_kind::layered_gradient_accumulation));
}

TEST_CASE("exec_runner_fsdp: uneven FSDP shards (state shares 5-30 %), uneven batches, TP 1 and 2 in one stage") {
    check_against_reference(fsdp_8());
    // The same with two stages and ZeRO-1: shards over replicas of different TP in each stage.
    plan z = sailor_8();
    z.memory.zero_stage = 1;
    z.pipelines[0].stages[0].workers[0].state_share = 0.6;
    z.pipelines[0].stages[1].workers[1].state_share = 0.2;
    check_against_reference(z);
}

TEST_CASE("exec_runner_fsdp: shard sizes follow the state shares, largest remainders first") {
    using sync = exec::gradient_sync<exec::thread_communicator>;
    CHECK(sync::shard_counts({0.5, 0.3, 0.2}, 10) == std::vector<int>{5, 3, 2});
    CHECK(sync::shard_counts({1, 1, 1}, 10) == std::vector<int>{4, 3, 3});
    CHECK(sync::shard_counts({0.05, 0.95}, 7) == std::vector<int>{0, 7});
}

TEST_CASE("exec_runner_autohet: asymmetric pipelines (2 and 3 stages), layer-wise gradient sync across them, uneven batches") {
    plan pl = one_pipeline({st({{0, 2}}, {wg(2, 2, 2)}), st({{2, 6}}, {wg(2, 2, 2)})});
    pl.pipelines.push_back(pipeline{{st({{0, 3}}, {wg(1, 2, 1)}), st({{3, 4}}, {wg(1, 1, 2)}), st({{4, 6}}, {wg(1, 2, 1)})}});
    check_against_reference(pl);
    check_against_reference(autohet_8());
}

TEST_CASE("exec_runner_metis: uneven local batches across replicas of one stage, different TP per stage") {
    check_against_reference(one_pipeline({st({{0, 4}}, {wg(1, 3, 1), wg(2, 5, 1)}), st({{4, 6}}, {wg(4, 2, 4)})}));
}

TEST_CASE("exec_runner_zorse: ministages (each stage holds two non-contiguous layer ranges)") {
    check_against_reference(zorse_8());
}

TEST_CASE("exec_runner_recompute: activation recomputation gives the same training and keeps fewer bytes") {
    for (plan pl : {sailor_8(), zorse_8(), fsdp_8()}) {
        pl.memory.recompute = true;
        check_against_reference(pl);
    }
    // One worker, 4 microbatches under GPipe (all in flight): the layers' inputs plus one layer's
    // caches instead of every layer's caches.
    plan pl = one_pipeline({st({{0, 6}}, {wg(1, 2, 4)})}, schedule_kind::gpipe);
    auto peak = [&](bool recompute) {
        pl.memory.recompute = recompute;
        double bytes = 0;
        exec::thread_world::run(1, [&](exec::thread_communicator c) {
            exec::plan_runner<exec::thread_communicator> run(pl, shape, data, c);
            (void)run.step(0);
            bytes = run.peak_activation_bytes();
        });
        return bytes;
    };
    const double with = peak(true), without = peak(false);
    CAPTURE(with);
    CAPTURE(without);
    CHECK(with < 0.5 * without);
    // Hand count: 4 microbatches x 5 layer inputs (layers 1-5) x 2 samples x 4 tokens x 16 floats.
    CHECK(with >= 4.0 * 5 * 2 * 4 * 16 * sizeof(float));
}

TEST_CASE("exec_runner_gpipe: a four-stage pipeline under GPipe, and the same under 1F1B") {
    std::vector<stage> stages{st({{0, 2}}, {wg(1, 1, 4)}), st({{2, 3}}, {wg(1, 1, 4)}), st({{3, 4}}, {wg(1, 1, 4)}), st({{4, 6}}, {wg(1, 1, 4)})};
    check_against_reference(one_pipeline(stages, schedule_kind::gpipe));
    check_against_reference(one_pipeline(stages, schedule_kind::one_f_one_b));
}

TEST_CASE("exec_runner: the schedule respects 1F1B's in-flight limit where it can") {
    // Four stages, eight microbatches each: stage s holds at most 4 - s microbatches between
    // their first forward and backward.
    std::vector<stage> stages;
    for (int s = 0; s < 4; ++s) stages.push_back(st({{s == 0 ? 0 : s + 1, s == 3 ? 6 : s + 2}}, {wg(1, 1, 8)}));
    const exec::step_layout lay = exec::layout_step(one_pipeline(stages), 6);
    std::vector<int> in_flight(4, 0), peak(4, 0);
    for (const auto& op : lay.order) {
        in_flight[static_cast<std::size_t>(op.worker)] += op.backward ? -1 : 1;
        peak[static_cast<std::size_t>(op.worker)] = std::max(peak[static_cast<std::size_t>(op.worker)], in_flight[static_cast<std::size_t>(op.worker)]);
    }
    CHECK(peak == std::vector<int>{4, 3, 2, 1});
    const exec::step_layout gp = exec::layout_step(one_pipeline(stages, schedule_kind::gpipe), 6);
    int first_backward = 0;
    while (!gp.order[static_cast<std::size_t>(first_backward)].backward) ++first_backward;
    CHECK(first_backward == 4 * 8);  // all 32 forwards before the first backward
}

TEST_CASE("exec_runner: plans that cannot run are named") {
    plan gap = one_pipeline({st({{0, 2}}, {wg(1, 1, 2)}), st({{3, 6}}, {wg(1, 1, 2)})});
    CHECK_THROWS_WITH_AS(exec::layout_step(gap, 6), doctest::Contains("pipeline 0: its layer ranges do not cover"), exec::comm_error);
    plan uneven = gap;
    uneven.pipelines[0].stages[1] = st({{2, 6}}, {wg(1, 1, 3)});
    CHECK_THROWS_WITH_AS(exec::layout_step(uneven, 6), doctest::Contains("stage 1: carries 3 samples, stage 0 carries 2"), exec::comm_error);
    plan bad_tp = gap;
    bad_tp.pipelines[0].stages[1] = st({{2, 6}}, {wg(3, 1, 2)});
    CHECK_THROWS_WITH_AS(exec::thread_world::run(4, [&](exec::thread_communicator c) { exec::plan_runner<exec::thread_communicator> r(bad_tp, shape, data, c); }),
                         doctest::Contains("TP 3 does not divide the model's 4 heads"), exec::comm_error);
    CHECK_THROWS_WITH_AS(exec::thread_world::run(3, [&](exec::thread_communicator c) { exec::plan_runner<exec::thread_communicator> r(bad_tp, shape, data, c); }),
                         doctest::Contains("the plan has 4 GPUs, the world 3 ranks"), exec::comm_error);
    // Six heads: TP 2 and TP 3 replicas of one stage cannot sum head slots rank to rank.
    const exec::gpt_shape six{16, 12, 6, 1, 4};
    const plan mixed = one_pipeline({st({{0, 3}}, {wg(2, 1, 2), wg(3, 1, 2)})});
    CHECK_THROWS_WITH_AS(exec::thread_world::run(5, [&](exec::thread_communicator c) { exec::plan_runner<exec::thread_communicator> r(mixed, six, data, c); }),
                         doctest::Contains("block0.units is held at TP 2 and 3"), exec::comm_error);
}

}  // namespace hetplan::test
