#pragma once
// The Sailor search space (Sailor §4.2) as lazily evaluated ranges, each usable on its own:
// pipeline degrees, layer partitions, microbatch sizes and data-parallel degrees. Nothing is
// materialised until iterated.
#include <algorithm>
#include <ranges>
#include <vector>

#include "hetplan/plan/plan.hpp"
#include "hetplan/workload/profile.hpp"

namespace hetplan::search {

/// Sailor's layer partition for P stages: contiguous, as even as possible, the remainder going
/// to the last stages (their blocks are cheaper than the first stage's embedding).
[[nodiscard]] inline std::vector<layer_range> even_partition(int layers, int P) {
    std::vector<layer_range> out;
    if (P < 1 || P > layers) return out;
    const int base = layers / P, extra = layers % P;
    int at = 0;
    for (int i = 0; i < P; ++i) {
        const int n = base + (i >= P - extra ? 1 : 0);
        out.push_back({at, at + n});
        at += n;
    }
    return out;
}

/// Pipeline degrees 1..min(layers, GPUs), lazily.
[[nodiscard]] inline auto pipeline_degrees(int layers, int gpus) {
    return std::views::iota(1, std::max(1, std::min(layers, gpus)) + 1);
}

/// Data-parallel degrees for M = global batch / mbs microbatches and at most `max_d` replicas
/// per stage, increasing. Only degrees where ceil(M / D) (microbatches of the busiest replica)
/// changes are kept, and for each such value the smallest D: a larger D at the same per-replica
/// count only adds GPUs and all-reduce participants (Sailor's public planner does the same).
[[nodiscard]] inline auto data_parallel_degrees(int microbatches, int max_d) {
    return std::views::iota(1, std::max(std::min(microbatches, max_d), 0) + 1) | std::views::filter([=](int d) {
               return d == 1 || (microbatches + d - 2) / (d - 1) != (microbatches + d - 1) / d;
           });
}

/// Microbatch sizes that divide the global batch and every considered GPU type has measured
/// (or can estimate), increasing.
[[nodiscard]] inline std::vector<int> microbatch_sizes(const profile_table& profiles, const std::vector<std::string>& gpus,
                                                       int global_batch, int limit = 64) {
    std::vector<int> out;
    for (int m = 1; m <= std::min(limit, global_batch); m *= 2) {
        if (global_batch % m != 0) continue;
        bool ok = true;
        for (const auto& g : gpus) {
            bool any = profiles.has_fallback();
            for (int tp : profiles.tp_degrees(g)) {
                const auto mbs = profiles.measured_mbs(g, tp);
                any = any || std::find(mbs.begin(), mbs.end(), m) != mbs.end();
            }
            ok = ok && any;
        }
        if (ok) out.push_back(m);
    }
    return out;
}

}  // namespace hetplan::search
