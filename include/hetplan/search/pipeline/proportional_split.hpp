#pragma once
// An integer total shared in proportion to weights, as Zorse shares layers among GPU groups by
// their aggregate speed and microbatches among a group's GPUs by their speed (Zorse §3.3.3):
// the largest-remainder method (floors first, the units left to the largest fractional parts,
// ties to the earlier), then every share raised to a minimum by taking from the shares furthest
// above their exact value. Deterministic.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <vector>

#include "hetplan/core/error.hpp"

namespace hetplan::search {

/// Buffers proportional_split_into reuses, so that a warm one allocates nothing.
struct split_scratch {
    std::vector<double> exact;
    std::vector<std::size_t> order;
};

/// Shares of `total` in proportion to `weights` (all > 0), each at least `at_least`, written to
/// `out`; false, and `out` empty, when total < weights.size() x at_least. `out` and `scratch`
/// keep their capacity.
inline bool proportional_split_into(int total, std::span<const double> weights, int at_least, std::vector<int>& out,
                                    split_scratch& scratch) {
    const std::size_t n = weights.size();
    out.clear();
    if (n == 0 || total < 0 || at_least < 0) throw input_error("proportional split: need weights and non-negative amounts");
    for (double w : weights)
        if (!(w > 0) || !std::isfinite(w)) throw input_error("proportional split: weights must be finite and > 0");
    if (static_cast<long long>(total) < static_cast<long long>(n) * at_least) return false;
    const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    auto& exact = scratch.exact;
    exact.resize(n);
    out.resize(n);
    int given = 0;
    for (std::size_t i = 0; i < n; ++i) {
        exact[i] = total * weights[i] / sum;
        out[i] = static_cast<int>(std::floor(exact[i]));
        given += out[i];
    }
    auto& order = scratch.order;
    order.resize(n);
    std::iota(order.begin(), order.end(), 0);
    // Larger fractional part first, ties to the earlier (std::sort with the index as the last
    // key: what a stable sort gives, without its buffer).
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const double fa = exact[a] - out[a], fb = exact[b] - out[b];
        return fa > fb || (fa == fb && a < b);
    });
    for (std::size_t k = 0; given < total; ++k, ++given) ++out[order[k % n]];
    // Raise every share to the minimum, taking from the one most above its exact value.
    for (std::size_t i = 0; i < n; ++i)
        while (out[i] < at_least) {
            std::size_t donor = n;
            for (std::size_t j = 0; j < n; ++j)
                if (out[j] > at_least && (donor == n || out[j] - exact[j] > out[donor] - exact[donor])) donor = j;
            --out[donor];  // exists: total >= n x at_least
            ++out[i];
        }
    return true;
}

/// Shares of `total` in proportion to `weights` (all > 0), each at least `at_least`; empty when
/// total < weights.size() x at_least.
[[nodiscard]] inline std::vector<int> proportional_split(int total, std::span<const double> weights, int at_least = 0) {
    std::vector<int> out;
    split_scratch scratch;
    proportional_split_into(total, weights, at_least, out, scratch);
    return out;
}

}  // namespace hetplan::search
