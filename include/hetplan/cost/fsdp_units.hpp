#pragma once
// Cephalo §3.3 "Uneven Parameter Sharding": shares of the training state apply to the whole
// model, but FSDP shards each unit (layer) separately, and an unevenly sharded unit pays the
// generalised collectives' overhead (§2.3: up to 15%). So as many units as possible are sharded
// evenly (1/N each) and only the rest absorb the differences: with L identical units and smallest
// share s_min, floor(N L s_min) units can be even; the remaining ones are filled GPU after GPU
// (the paper's example: two units split 3:1 over two GPUs become one 1:1 unit and one 1:0 unit).
// The time model prices plans with it; the planner reports it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "hetplan/core/error.hpp"

namespace hetplan {

struct unit_sharding {
    std::vector<std::vector<double>> unit;  ///< [unit][gpu] fraction of that unit, each row sums to 1
    int uneven = 0;                         ///< units not sharded 1/N each
    [[nodiscard]] bool is_uneven(std::size_t u) const { return u >= unit.size() - static_cast<std::size_t>(uneven); }
};

/// Splits `units` identical FSDP units so that GPU i holds shares[i] of the whole; even units
/// first, the uneven ones last.
[[nodiscard]] inline unit_sharding unit_shards(const std::vector<double>& shares, int units) {
    const std::size_t n = shares.size();
    if (n == 0 || units < 1) throw input_error("unit_shards: need GPUs and at least one unit");
    const double smin = *std::min_element(shares.begin(), shares.end());
    if (!(smin >= 0)) throw input_error("unit_shards: shares must be >= 0");
    const double L = units, N = double(n);
    // Tolerance: equal shares of 1/N must give all units even despite rounding.
    const int even = std::min(units, static_cast<int>(std::floor(N * L * smin + 1e-9)));
    unit_sharding out;
    out.unit.assign(static_cast<std::size_t>(units), std::vector<double>(n, 0.0));
    for (int u = 0; u < even; ++u) out.unit[static_cast<std::size_t>(u)].assign(n, 1.0 / N);
    std::vector<double> rest(n);
    for (std::size_t i = 0; i < n; ++i) rest[i] = std::max(0.0, L * shares[i] - double(even) / N);
    std::size_t g = 0;
    for (int u = even; u < units; ++u) {
        auto& row = out.unit[static_cast<std::size_t>(u)];
        double room = 1.0;
        while (room > 1e-12 && g < n) {
            const double take = std::min(room, rest[g]);
            row[g] += take;
            rest[g] -= take;
            room -= take;
            if (rest[g] <= 1e-12) ++g;
        }
        if (room > 1e-12) row[n - 1] += room;  // rounding: the last GPU takes the crumbs
        const double even_share = 1.0 / N;
        const bool all_even = std::all_of(row.begin(), row.end(), [&](double x) { return std::abs(x - even_share) < 1e-9; });
        out.uneven += all_even ? 0 : 1;
    }
    // Even rows past `even` (possible when residuals happen to be equal) are still even.
    if (out.uneven < units - even) {
        std::stable_partition(out.unit.begin() + even, out.unit.end(), [&](const std::vector<double>& row) {
            return std::all_of(row.begin(), row.end(), [&](double x) { return std::abs(x - 1.0 / N) < 1e-9; });
        });
    }
    return out;
}

}  // namespace hetplan
