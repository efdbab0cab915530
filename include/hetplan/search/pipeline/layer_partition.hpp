#pragma once
// AutoHet's layer partition (AutoHet §III-C, Eq. 4), exactly: contiguous layers over P stages in
// pipeline order, minimising the slowest stage's time subject to each stage's memory fit
// (MEM_F(l_i) + MEM_V(l_i, p_i) <= m_i, Eq. 4c), with the memory model a caller's predicate.
// A DP over (stage, first layer): best[i][b] is the smallest possible slowest stage of stages
// i..P-1 holding layers [b, L). A stage's fit is monotone in its range (fewer layers never need
// more memory), so one sweep per stage finds every (i, b)'s longest fitting range, and the DP
// walks the ends that fit: O(P L^2) time evaluations, O(P L) memory checks.
#include <limits>
#include <optional>
#include <vector>

#include "hetplan/core/stop.hpp"

namespace hetplan::search {

/// Stage boundaries: stage i holds layers [bounds[i], bounds[i + 1]).
struct layer_partition {
    std::vector<int> bounds;
    double slowest = 0;  ///< the objective: the slowest stage's time
};

/// `time(i, b, e)`: stage i's time on layers [b, e); `fits(i, b, e)`: whether they fit its
/// memory (monotone in e). Every stage takes at least one layer. No partition fits, or `stop`
/// fired (polled per stage and first layer): nullopt.
template <class Time, class Fits>
[[nodiscard]] std::optional<layer_partition> min_max_layer_partition(int stages, int layers, Time&& time, Fits&& fits,
                                                                      const stop_condition* stop = nullptr) {
    if (stages < 1 || layers < stages) return std::nullopt;
    stop_poll poll(stop, 64);
    constexpr double inf = std::numeric_limits<double>::infinity();
    const auto P = static_cast<std::size_t>(stages), L = static_cast<std::size_t>(layers);
    std::vector<double> best((P + 1) * (L + 1), inf);
    std::vector<int> next((P + 1) * (L + 1), -1);
    auto at = [&](std::size_t i, std::size_t b) -> std::size_t { return i * (L + 1) + b; };
    best[at(P, L)] = 0;
    for (std::size_t i = P; i-- > 0;) {
        const int after = stages - int(i) - 1;  // stages after i, a layer each
        int lo = int(i);                         // longest fitting end so far: never shrinks as b grows
        for (int b = int(i); b + 1 + after <= layers; ++b) {
            if (poll()) return std::nullopt;
            // Fewer layers never need more memory, so stage i's longest fitting range from b + 1
            // ends no earlier than from b: one sweep per stage (two pointers).
            if (lo <= b) {
                if (!fits(int(i), b, b + 1)) continue;
                lo = b + 1;
            }
            while (lo < layers - after && fits(int(i), b, lo + 1)) ++lo;
            double& out = best[at(i, std::size_t(b))];
            for (int e = b + 1; e <= lo; ++e) {
                const double rest = best[at(i + 1, std::size_t(e))];
                if (rest == inf) continue;
                const double t = time(int(i), b, e);
                const double v = t > rest ? t : rest;
                if (v < out) {
                    out = v;
                    next[at(i, std::size_t(b))] = e;
                }
            }
        }
    }
    if (best[at(0, 0)] == inf) return std::nullopt;
    layer_partition out;
    out.slowest = best[at(0, 0)];
    out.bounds.push_back(0);
    for (std::size_t i = 0, b = 0; i < P; ++i) {
        b = std::size_t(next[at(i, b)]);
        out.bounds.push_back(int(b));
    }
    return out;
}

}  // namespace hetplan::search
