#pragma once
// Plan shapes the execution module's tests run (threads and MPI), and the check that one rank's
// run of a plan equals the single-process reference: the same loss at every step and the same
// weights (fp32, relative error <= 1e-5).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "hetplan/concepts/communicator.hpp"
#include "hetplan/exec/plan_runner.hpp"

namespace hetplan::test::exec_shapes {

inline const exec::gpt_shape shape{16, 16, 4, 4, 4};  // layers: embedding, 4 blocks, head
inline const exec::synthetic_data data{16, 4, 3};
inline constexpr int steps = 3;

inline worker_group wg(int tp, int mbs, int n) { return worker_group{gpu_type_id{0}, zone_id{0}, tp, mbs, n, 1.0, -1}; }
inline stage st(std::vector<layer_range> layers, std::vector<worker_group> workers) {
    stage s;
    for (auto r : layers) s.layers.push_back(r);
    s.workers = std::move(workers);
    return s;
}
inline plan one_pipeline(std::vector<stage> stages, schedule_kind k = schedule_kind::one_f_one_b) {
    plan pl;
    pl.pipelines.push_back(pipeline{std::move(stages)});
    pl.schedule = k;
    return pl;
}

/// Largest |a - b| / largest |b| over one tensor.
inline double relative_error(std::span<const float> a, std::span<const float> b) {
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(double(a[i]) - b[i])), scale = std::max(scale, std::abs(double(b[i])));
    return diff / std::max(scale, 1e-30);
}

/// The single-process reference's losses, step by step, and its final weights.
template <class W = exec::gpt_worker>
struct reference {
    std::vector<double> losses;
    exec::reference_trainer<W> trainer{shape, data};
    explicit reference(const plan& pl) {
        const int batch = exec::layout_step(pl, shape.layers()).global_batch;
        for (int t = 0; t < steps; ++t) losses.push_back(trainer.step(t, batch));
    }
};

/// Runs this rank of `pl` for `steps` steps on compute W; checks its losses and weights against
/// `ref` (relative error <= `tolerance`). Returns the weights' relative error.
template <concepts::communicator C, class W = exec::gpt_worker, class R>
double check_rank(const plan& pl, C world, R& ref, double tolerance = 1e-5) {
    exec::plan_runner<C, W> run(pl, shape, data, world);
    std::vector<double> mine;
    for (int t = 0; t < steps; ++t) mine.push_back(run.step(t));
    for (int t = 0; t < steps; ++t) {
        const double want = ref.losses[static_cast<std::size_t>(t)];
        CHECK(std::abs(mine[static_cast<std::size_t>(t)] - want) <= tolerance * want);
    }
    double worst = 0;
    run.compute().pull();
    ref.trainer.compute().pull();
    for (const auto& [id, tensor] : run.compute().tensors()) {
        const auto& full = ref.trainer.compute().tensors().at(id);
        const std::size_t from = static_cast<std::size_t>(tensor.first_unit) * tensor.info.unit_size;
        worst = std::max(worst, relative_error(tensor.param, std::span<const float>(full.param).subspan(from, tensor.param.size())));
    }
    CHECK(worst <= tolerance);
    return worst;
}

// Eight-rank plans, one per shape (the MPI test runs each on 8 processes; the thread tests too).
/// Sailor / Metis: stages with different replica counts, TP per stage and within a stage,
/// microbatches that straddle the next stage's.
inline plan sailor_8() { return one_pipeline({st({{0, 3}}, {wg(1, 2, 2), wg(1, 1, 4), wg(2, 4, 1)}), st({{3, 6}}, {wg(2, 3, 2), wg(2, 2, 3)})}); }
/// AutoHet: two pipelines of 2 and 3 stages, layer-wise gradient sync across them.
inline plan autohet_8() {
    plan pl = one_pipeline({st({{0, 2}}, {wg(2, 2, 2)}), st({{2, 6}}, {wg(2, 2, 2)})});
    pl.pipelines.push_back(pipeline{{st({{0, 3}}, {wg(1, 2, 1)}), st({{3, 4}}, {wg(1, 1, 2)}), st({{4, 6}}, {wg(2, 2, 1)})}});
    return pl;
}
/// Zorse: ministages (each stage two non-contiguous layer ranges).
inline plan zorse_8() {
    return one_pipeline({st({{0, 2}, {3, 5}}, {wg(2, 2, 3), wg(2, 3, 2)}), st({{2, 3}, {5, 6}}, {wg(4, 4, 3)})}, schedule_kind::interleaved_ministages);
}

/// Cephalo / Zorse: FSDP over one stage with uneven state shares and batch shares, TP 1 and 2.
inline plan fsdp_8() {
    plan pl = one_pipeline({st({{0, 6}}, {wg(1, 1, 3), wg(1, 2, 2), wg(1, 1, 1), wg(1, 3, 1), wg(2, 2, 2), wg(2, 1, 2)})},
                           schedule_kind::layered_gradient_accumulation);
    const double shares[] = {0.3, 0.25, 0.05, 0.1, 0.2, 0.1};
    for (std::size_t w = 0; w < 6; ++w) pl.pipelines[0].stages[0].workers[w].state_share = shares[w];
    pl.memory.zero_stage = 3;
    return pl;
}

}  // namespace hetplan::test::exec_shapes
