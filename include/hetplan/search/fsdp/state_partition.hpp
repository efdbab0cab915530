#pragma once
// Cephalo's training-state partition (Cephalo §2.4 "Training State Partition", §3.3 "Uneven
// Parameter Sharding").
//
// water_fill: once each GPU's compute memory is fixed, give it a share of the state so that
// the highest memory utilisation is as low as possible. The paper's greedy hands out state in
// small pieces to the least-utilised GPU; in the limit that is water-filling: a level u with
// sum_i max(0, u cap_i - used_i) = state, computed here exactly.
// How shares become per-unit shards (§3.3) is cost/fsdp_units.hpp: the time model prices it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "hetplan/core/error.hpp"
#include "hetplan/cost/fsdp_units.hpp"

namespace hetplan::search {

struct water_level {
    std::vector<double> shares;  ///< of the whole state, sum 1
    double utilisation = 0;      ///< highest (used + state) / capacity
};

/// `used[i]` and `capacity[i]` in bytes (capacity > 0), `state` bytes to place (>= 0).
[[nodiscard]] inline water_level water_fill(const std::vector<double>& used, const std::vector<double>& capacity, double state) {
    const std::size_t n = used.size();
    if (n == 0 || capacity.size() != n) throw input_error("water_fill: need one capacity per GPU");
    for (std::size_t i = 0; i < n; ++i)
        if (!(capacity[i] > 0) || !(used[i] >= 0)) throw input_error("water_fill: capacities must be > 0, usage >= 0");
    water_level out;
    out.shares.assign(n, 0.0);
    // GPUs in increasing order of utilisation before any state.
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return used[a] / capacity[a] < used[b] / capacity[b]; });
    // Raise the level across breakpoints: with the first k GPUs under water, placing up to the
    // next breakpoint costs (next level - level) x (capacity of those k).
    double level = used[order[0]] / capacity[order[0]], cap_under = 0, left = state;
    std::size_t k = 0;
    for (; k < n; ++k) {
        cap_under += capacity[order[k]];
        const double next = k + 1 < n ? used[order[k + 1]] / capacity[order[k + 1]] : std::numeric_limits<double>::infinity();
        const double room = (next - level) * cap_under;
        if (left <= room) {
            level += left / cap_under;
            left = 0;
            break;
        }
        left -= room;
        level = next;
    }
    out.utilisation = state > 0 ? level : 0.0;
    for (std::size_t i = 0; i < n; ++i) out.utilisation = std::max(out.utilisation, used[i] / capacity[i]);
    if (state > 0)
        for (std::size_t i = 0; i < n; ++i) out.shares[i] = std::max(0.0, level * capacity[i] - used[i]) / state;
    // Normalise away rounding so the shares add up to exactly the state.
    const double sum = std::accumulate(out.shares.begin(), out.shares.end(), 0.0);
    if (sum > 0)
        for (auto& s : out.shares) s /= sum;
    else
        out.shares.assign(n, 1.0 / double(n));
    return out;
}

}  // namespace hetplan::search
