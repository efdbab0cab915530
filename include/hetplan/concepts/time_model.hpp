#pragma once
/// Concept `time_model`: predicts the duration of one training iteration of a plan.
///
/// Purpose: prices candidates for planners; each paper brings its own schedule model (Sailor:
/// 1F1B, Zorse: interleaved ministages, Cephalo: layered gradient accumulation).
/// Minimal definition: `t.estimate(problem, plan)` -> time_report (hetplan/cost/breakdown.hpp).
/// Laws: iteration time > 0 and finite for a valid plan; removing a data-parallel replica never
/// makes the iteration faster when the others keep their batch shares.
/// Models shipped: sailor_time_model.
#include <concepts>

#include "hetplan/cost/breakdown.hpp"
#include "hetplan/cost/problem.hpp"
#include "hetplan/plan/plan.hpp"

namespace hetplan::concepts {

template <class T>
concept has_time_estimate = requires(const T& t, const problem& p, const plan& pl) {
    { t.estimate(p, pl) } -> std::same_as<time_report>;
};

template <class T>
concept time_model = has_time_estimate<T>;

template <class T>
constexpr bool check_time_model() {
    static_assert(has_time_estimate<T>,
                  "hetplan::time_model: needs `estimate(const problem&, const plan&) const` "
                  "returning hetplan::time_report");
    return time_model<T>;
}

}  // namespace hetplan::concepts
