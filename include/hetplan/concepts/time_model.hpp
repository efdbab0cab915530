#pragma once
/// Concept `time_model`: predicts the duration of one training iteration of a plan.
///
/// Purpose: prices candidates for planners; each paper brings its own schedule model (Sailor:
/// 1F1B, Zorse: interleaved ministages, Cephalo: layered gradient accumulation).
/// Minimal definition: `t.estimate(problem, plan)` -> time_report (hetplan/plan/estimate.hpp).
/// Laws: iteration time > 0 and finite for a valid plan; removing a data-parallel replica never
/// makes the iteration faster when the others keep their batch shares.
/// Refinement `stage_time_model` (what Sailor's stage DP prices stages with, so that a model of
/// one's own changes compute, boundaries and synchronisation alike):
///   `t.compute(problem, worker_probe)` -> worker_times   one microbatch through a worker
///   `t.p2p_time(problem, endpoint from, endpoint to, bytes)` -> seconds   one message
///   `t.sync_time(problem, span<const endpoint> ring, bytes)` -> seconds   a stage's all-reduce
/// combined by the 1F1B formula (cost/time/one_f_one_b.hpp); estimate() must agree with them.
/// Searches fall back to estimate() on probe plans for compute times, and to the network's
/// links for the rest, when the refinement is missing.
/// Models shipped: sailor_time_model (refined), zorse_time_model, cephalo_time_model.
#include <concepts>
#include <span>

#include "hetplan/core/endpoint.hpp"
#include "hetplan/core/fwd.hpp"
#include "hetplan/core/units.hpp"

namespace hetplan::concepts {

template <class T>
concept has_time_estimate = requires(const T& t, const problem& p, const plan& pl) {
    { t.estimate(p, pl) } -> std::same_as<time_report>;
};

template <class T>
concept time_model = has_time_estimate<T>;

template <class T>
concept has_worker_compute = requires(const T& t, const problem& p, const worker_probe& w) {
    { t.compute(p, w) } -> std::same_as<worker_times>;
};
template <class T>
concept has_p2p_time = requires(const T& t, const problem& p, endpoint a, endpoint b, bytes n) {
    { t.p2p_time(p, a, b, n) } -> std::same_as<seconds>;
};
template <class T>
concept has_sync_time = requires(const T& t, const problem& p, std::span<const endpoint> ring, bytes n) {
    { t.sync_time(p, ring, n) } -> std::same_as<seconds>;
};

template <class T>
concept stage_time_model = time_model<T> && has_worker_compute<T> && has_p2p_time<T> && has_sync_time<T>;

template <class T>
constexpr bool check_time_model() {
    static_assert(has_time_estimate<T>,
                  "hetplan::time_model: needs `estimate(const problem&, const plan&) const` "
                  "returning hetplan::time_report");
    return time_model<T>;
}

}  // namespace hetplan::concepts
