#pragma once
// H3 (Sailor §4.2.1): when maximising throughput, try data-parallel degrees from the largest
// feasible one downwards and stop once throughput stops improving: below that point the
// pipelines get longer faster than the all-reduce gets cheaper.
#include <optional>
#include <vector>

namespace hetplan::search {

struct h3_decreasing_dp {
    /// Calls `solve(D)` -> optional<double> (throughput, nullopt when D has no valid plan) for
    /// the degrees in decreasing order until a result is no better than the best so far.
    template <class Solve>
    void scan(const std::vector<int>& increasing, Solve&& solve) const {
        std::optional<double> best;
        for (auto it = increasing.rbegin(); it != increasing.rend(); ++it) {
            const std::optional<double> r = solve(*it);
            if (!r) continue;  // too many replicas for the pool: keep shrinking
            if (best && *r <= *best) return;
            best = r;
        }
    }
};

}  // namespace hetplan::search
