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

/// Shares of `total` in proportion to `weights` (all > 0), each at least `at_least`, written to
/// `out` (resized; its capacity kept, so a warm buffer allocates nothing); false, and `out`
/// empty, when total < weights.size() x at_least.
inline bool proportional_split_into(int total, std::span<const double> weights, int at_least, std::vector<int>& out) {
    const std::size_t n = weights.size();
    out.clear();
    if (n == 0 || total < 0 || at_least < 0) throw input_error("proportional split: need weights and non-negative amounts");
    for (double w : weights)
        if (!(w > 0) || !std::isfinite(w)) throw input_error("proportional split: weights must be finite and > 0");
    if (static_cast<long long>(total) < static_cast<long long>(n) * at_least) return false;
    const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    out.resize(n);
    int given = 0;
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = static_cast<int>(std::floor(total * weights[i] / sum));
        given += out[i];
    }
    auto excess = [&](std::size_t i) { return total * weights[i] / sum - out[i]; };  // exact share minus given
    // The units left go to the largest fractional parts, ties to the earlier (a stable order
    // without sorting: pick the largest remaining part each time, n is small).
    auto fraction = [&](std::size_t i) { return total * weights[i] / sum - std::floor(total * weights[i] / sum); };
    for (int left = total - given; left > 0;) {
        // Among the parts not yet raised, in order of decreasing fraction, earlier first.
        std::size_t pick = n;
        for (std::size_t i = 0; i < n; ++i)
            if (out[i] == static_cast<int>(std::floor(total * weights[i] / sum)) && (pick == n || fraction(i) > fraction(pick))) pick = i;
        if (pick == n) pick = 0;  // every part raised once: cannot happen (left < n)
        ++out[pick];
        --left;
    }
    // Raise every share to the minimum, taking from the one most above its exact value.
    for (std::size_t i = 0; i < n; ++i)
        while (out[i] < at_least) {
            std::size_t donor = n;
            for (std::size_t j = 0; j < n; ++j)
                if (out[j] > at_least && (donor == n || -excess(j) > -excess(donor))) donor = j;
            --out[donor];  // exists: total >= n x at_least
            ++out[i];
        }
    return true;
}

/// Shares of `total` in proportion to `weights` (all > 0), each at least `at_least`; empty when
/// total < weights.size() x at_least.
[[nodiscard]] inline std::vector<int> proportional_split(int total, std::span<const double> weights, int at_least = 0) {
    std::vector<int> out;
    proportional_split_into(total, weights, at_least, out);
    return out;
}

}  // namespace hetplan::search
