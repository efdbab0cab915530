#pragma once
// H4 (Sailor §4.2.1): when minimising cost, try data-parallel degrees from the smallest
// upwards: doubling D doubles the GPUs but does not halve the iteration time, so cost per
// iteration grows with D once the throughput constraint is met. Stops at the first degree whose
// cost is no lower than the best constraint-meeting cost so far.
#include <optional>
#include <vector>

namespace hetplan::search {

struct h4_increasing_dp {
    /// `solve(D)` -> optional<double> (cost of D's best plan that meets the constraint,
    /// nullopt when none does).
    template <class Solve>
    void scan(const std::vector<int>& increasing, Solve&& solve) const {
        std::optional<double> best;
        for (int d : increasing) {
            const std::optional<double> r = solve(d);
            if (!r) continue;  // constraint not met yet: more replicas
            if (best && *r >= *best) return;
            best = r;
        }
    }
};

/// No ordering heuristic: every degree is solved (the exact search and the Table 3 ablation).
struct all_dp_degrees {
    template <class Solve>
    void scan(const std::vector<int>& increasing, Solve&& solve) const {
        for (int d : increasing) (void)solve(d);
    }
};

}  // namespace hetplan::search
