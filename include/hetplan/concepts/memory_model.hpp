#pragma once
/// Concept `memory_model`: predicts the peak memory of every GPU of a plan.
///
/// Purpose: the validator and every planner ask it whether a plan fits; each paper brings its
/// own (Sailor §4.3, Zorse §3.3.5, Cephalo §2.3).
/// Minimal definition: `m.estimate(problem, plan)` -> memory_report (hetplan/plan/estimate.hpp),
/// with one worker_memory entry per worker group, in plan order.
/// Laws: every entry is finite and >= 0; peak memory does not grow when a worker's TP degree
/// grows or its microbatch size shrinks (all else equal).
/// Refinement `worker_memory_model`: `m.worker(problem, worker_probe)` -> worker_memory, one
/// worker without building a plan (Sailor's H2 asks it thousands of times); it must agree with
/// estimate(). Searches fall back to estimate() on a one-worker probe plan when it is missing.
/// Models shipped: sailor_memory_model (refined), zorse_memory_model, cephalo_memory_model.
#include <concepts>

#include "hetplan/core/fwd.hpp"

namespace hetplan::concepts {

template <class M>
concept has_memory_estimate = requires(const M& m, const problem& p, const plan& pl) {
    { m.estimate(p, pl) } -> std::same_as<memory_report>;
};

template <class M>
concept memory_model = has_memory_estimate<M>;

template <class M>
concept has_worker_memory = requires(const M& m, const problem& p, const worker_probe& w) {
    { m.worker(p, w) } -> std::same_as<worker_memory>;
};

template <class M>
concept worker_memory_model = memory_model<M> && has_worker_memory<M>;

template <class M>
constexpr bool check_memory_model() {
    static_assert(has_memory_estimate<M>,
                  "hetplan::memory_model: needs `estimate(const problem&, const plan&) const` "
                  "returning hetplan::memory_report");
    return memory_model<M>;
}

}  // namespace hetplan::concepts
