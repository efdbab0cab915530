#pragma once
// The 1F1B iteration (Sailor §4.3 and Eq. 1's T_total, after the formulas of [56]) in one place:
// the time model, the stage DP, its floors and branch-and-bound cut-offs all call it.
//   T_pp   = sum_i t_i + (m - 1) max_i t_i   warm-up and cool-down pass once through every
//                                            stage, then m - 1 microbatches at the straggler's pace
//   T_iter = T_pp + T_sync + T_update
// with t_i a stage's time per microbatch (compute + point-to-point) and m the busiest replica's
// microbatches. GPipe takes the same time (only its memory differs).
#include <algorithm>

namespace hetplan {

[[nodiscard]] constexpr double one_f_one_b_pipeline(double stage_sum, double straggler, int microbatches) {
    return stage_sum + double(std::max(microbatches - 1, 0)) * straggler;
}

[[nodiscard]] constexpr double one_f_one_b_iteration(double stage_sum, double straggler, int microbatches, double sync,
                                                     double update) {
    return one_f_one_b_pipeline(stage_sum, straggler, microbatches) + sync + update;
}

}  // namespace hetplan
