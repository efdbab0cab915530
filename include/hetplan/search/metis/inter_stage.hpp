#pragma once
// Metis' inter-stage space (Metis §4.1): stage counts S = 1..min(G, L) x GPU-type orders x
// device-group vectors x microbatch counts (divisors of the global batch, largest first),
// generated lazily in that order (the public code puts the type order outermost).
//
// Every order of the cluster's GPU types is searched and each candidate is generated once. The
// public code takes the first order from a Python set (so its plan depends on the hash seed) and,
// for every order after the first, skips the single-stage candidates and generates the
// two-stage ones twice (a stage counter reset to 1 while the groups already hold two stages);
// metis_rules::published_enumeration reproduces that, to count its search steps to the unit.
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "hetplan/cost/time/metis_layout.hpp"
#include "hetplan/search/metis/device_groups.hpp"

namespace hetplan::search::metis {

/// One inter-stage candidate.
struct inter_stage_candidate {
    std::size_t order_index = 0;
    std::span<const int> order;   ///< GPU types, first at the lowest ranks
    std::span<const int> groups;  ///< GPUs per stage
    int microbatches = 1;
    bool repeated = false;        ///< the published enumeration's second pass over S = 2
};

/// Every order of `types` (permutations in lexicographic order of the indices).
[[nodiscard]] inline std::vector<std::vector<int>> type_orders(std::vector<int> types) {
    std::vector<std::vector<int>> out;
    std::sort(types.begin(), types.end());
    do out.push_back(types);
    while (std::next_permutation(types.begin(), types.end()));
    return out;
}

/// Divisors of n, largest first.
[[nodiscard]] inline std::vector<int> microbatch_counts(int n) {
    std::vector<int> low, high;
    for (int d = 1; static_cast<long long>(d) * d <= n; ++d)
        if (n % d == 0) {
            low.push_back(d);
            if (d != n / d) high.push_back(n / d);
        }
    std::vector<int> out(high.begin(), high.end());  // n / 1, n / 2, ... decreasing
    out.insert(out.end(), low.rbegin(), low.rend());
    return out;
}

/// Calls f(const inter_stage_candidate&) for each candidate; f returns true to stop. Returns
/// true when f stopped it.
template <class F>
bool for_each_inter_stage(const std::vector<std::vector<int>>& orders, int gpus, int layers, int global_batch,
                          const device_group_rules& rules, bool published, F&& f) {
    const int maxS = std::min(gpus, layers);
    const std::vector<int> counts = microbatch_counts(global_batch);
    auto block = [&](std::size_t oi, int S, bool repeated) {
        return for_each_device_groups(S, gpus, rules, [&](std::span<const int> groups) {
            for (int B : counts)
                if (f(inter_stage_candidate{oi, orders[oi], groups, B, repeated})) return true;
            return false;
        });
    };
    if (!published) {
        // Stage counts outermost, every order at each: a search cut short has seen every order
        // of the shallower pipelines.
        for (int S = 1; S <= maxS; ++S)
            for (std::size_t oi = 0; oi < orders.size(); ++oi)
                if (block(oi, S, false)) return true;
        return false;
    }
    for (std::size_t oi = 0; oi < orders.size(); ++oi) {
        int S = 1;
        if (oi > 0) {
            // The first stage count above 1 with device groups, generated an extra time.
            int dup = 2;
            while (dup <= maxS && !has_device_groups(dup, gpus, rules)) ++dup;
            if (dup <= maxS && block(oi, dup, true)) return true;
            S = 2;
        }
        for (; S <= maxS; ++S)
            if (block(oi, S, false)) return true;
    }
    return false;
}

}  // namespace hetplan::search::metis
