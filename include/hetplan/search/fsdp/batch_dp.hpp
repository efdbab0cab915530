#pragma once
// Cephalo's compute partition (Cephalo §2.4, Eq. 4): give every GPU i a microbatch size m_i and
// a number of microbatches l_i so that
//   (I)   sum_i m_i l_i = B, l_i >= 1,
//   (II)  M(m_i) <= capacity_i                    (compute memory alone fits),
//   (III) M_state + sum_i M(m_i) <= sum_i capacity_i, i.e. sum_i m_i <= K (M linear in m),
// minimising the slowest GPU's time max_i T_i(m_i, l_i), where T_i is Algorithm 1's
// T_{i,l,m}: Eqs. 2-3 for GPU i alone, its l microbatches of size m overlapped with the
// AllGather and ReduceScatter (the uneven, slower ones when an even share of the state does not
// fit next to M(m) on that GPU). The DP only reads T from a table (fsdp_gpu_type).
//
// straightforward_batch_dp is Eq. 4 as written: D(i, j, k), the best makespan of the first i
// GPUs with batch j and microbatch-size sum k; O(N B^2 K log B) time.
// fast_batch_dp gives the same optimum another way: the makespan is monotone in feasibility, so
// it binary-searches it over the values T(m, l) can take; for a candidate T, each GPU type's
// cheapest microbatch size for every batch b is read off once (identical GPUs share it), and a
// min-plus pass over the GPUs finds the least sum of m for batch B, to compare with K.
// O(log(#candidates) x N x B x b_max) with b_max the largest batch one GPU can take within T.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "hetplan/core/error.hpp"

namespace hetplan::search {

/// GPUs of one type as the DP sees them: T(m, l), the time of l microbatches of size m on one
/// of them (Algorithm 1's T_{i,l,m}: Eqs. 2-3 for that GPU alone), for m up to the largest
/// size whose compute memory fits (II) and l = 1, 2, ... Non-decreasing in l.
struct fsdp_gpu_type {
    int count = 1;
    /// Row m (1-based) is cost[start[m-1] .. start[m]) for l = 1, 2, ...; start[0] = 0.
    std::vector<std::size_t> start{0};
    std::vector<double> cost;

    [[nodiscard]] int max_mbs() const { return static_cast<int>(start.size()) - 1; }
    /// Largest l tabulated for microbatch size m.
    [[nodiscard]] int max_microbatches(int m) const {
        return static_cast<int>(start[static_cast<std::size_t>(m)] - start[static_cast<std::size_t>(m - 1)]);
    }
    [[nodiscard]] double at(int m, int l) const { return cost[start[static_cast<std::size_t>(m - 1)] + static_cast<std::size_t>(l - 1)]; }

    /// T(m, l) = time(m, l) for m <= max_mbs and l m <= batch.
    template <class F>
    [[nodiscard]] static fsdp_gpu_type tabulate(int count, int max_mbs, int batch, F&& time) {
        fsdp_gpu_type t;
        t.count = count;
        for (int m = 1; m <= std::min(max_mbs, batch); ++m) {
            for (int l = 1; l * m <= batch; ++l) t.cost.push_back(time(m, l));
            t.start.push_back(t.cost.size());
        }
        return t;
    }
    /// Compute only, linear in the number of microbatches: T(m, l) = l t[m - 1] (§2.3).
    [[nodiscard]] static fsdp_gpu_type proportional(int count, std::span<const double> t, int batch) {
        return tabulate(count, static_cast<int>(t.size()), batch, [&](int m, int l) { return l * t[static_cast<std::size_t>(m - 1)]; });
    }
};

struct batch_problem {
    std::vector<fsdp_gpu_type> types;  ///< GPUs in type order, each type's GPUs consecutive
    int batch = 1;                     ///< B
    /// K: the largest sum of microbatch sizes the aggregate memory allows (III); -1 = no limit.
    long long max_mbs_sum = -1;

    [[nodiscard]] int gpus() const {
        int n = 0;
        for (const auto& t : types) n += t.count;
        return n;
    }
};

struct gpu_share {
    int mbs = 0, microbatches = 0;
    [[nodiscard]] int batch() const { return mbs * microbatches; }
};

struct batch_assignment {
    double makespan = 0;            ///< max_i T_i(m_i, l_i)
    std::vector<gpu_share> gpus;    ///< in type order
    long long mbs_sum = 0;
};

namespace detail {
inline void check_batch_problem(const batch_problem& bp) {
    if (bp.batch < 1) throw input_error("cephalo DP: global batch must be >= 1");
    for (const auto& t : bp.types) {
        if (t.count < 0) throw input_error("cephalo DP: negative GPU count");
        if (t.start.empty() || t.start.front() != 0 || t.start.back() != t.cost.size() ||
            !std::is_sorted(t.start.begin(), t.start.end()))
            throw input_error("cephalo DP: malformed T(m, l) table");
        for (int m = 1; m <= t.max_mbs(); ++m)
            for (int l = 1; l <= t.max_microbatches(m); ++l) {
                const double v = t.at(m, l);
                if (!(v > 0) || !std::isfinite(v)) throw input_error("cephalo DP: times must be finite and > 0");
                if (l > 1 && v < t.at(m, l - 1)) throw input_error("cephalo DP: T(m, l) must not decrease as l grows");
            }
    }
}
/// Largest l usable with microbatch size m at global batch `batch`.
inline int usable_microbatches(const fsdp_gpu_type& t, int m, int batch) { return std::min(t.max_microbatches(m), batch / m); }
}  // namespace detail

/// Eq. 4 literally, one GPU at a time. nullopt when no assignment meets (I)-(III).
[[nodiscard]] inline std::optional<batch_assignment> straightforward_batch_dp(const batch_problem& bp) {
    detail::check_batch_problem(bp);
    constexpr double inf = std::numeric_limits<double>::infinity();
    std::vector<const fsdp_gpu_type*> gpu;
    for (const auto& t : bp.types)
        for (int c = 0; c < t.count; ++c) gpu.push_back(&t);
    const int N = static_cast<int>(gpu.size()), B = bp.batch;
    if (N == 0 || N > B) return std::nullopt;
    int K = 0;
    for (const auto* g : gpu) K += std::min(g->max_mbs(), B);
    if (bp.max_mbs_sum >= 0) K = static_cast<int>(std::min<long long>(K, bp.max_mbs_sum));
    const auto W = static_cast<std::size_t>(K + 1), H = static_cast<std::size_t>(B + 1);
    // D[i] over (j, k), with the choice that reached it.
    std::vector<std::vector<double>> D(static_cast<std::size_t>(N + 1), std::vector<double>(H * W, inf));
    std::vector<std::vector<std::pair<int, int>>> how(static_cast<std::size_t>(N + 1), std::vector<std::pair<int, int>>(H * W));
    D[0][0] = 0;
    for (int i = 1; i <= N; ++i) {
        const fsdp_gpu_type& g = *gpu[static_cast<std::size_t>(i - 1)];
        auto& cur = D[static_cast<std::size_t>(i)];
        const auto& prev = D[static_cast<std::size_t>(i - 1)];
        for (int j = 1; j <= B; ++j)
            for (int k = 1; k <= K; ++k) {
                double best = inf;
                std::pair<int, int> arg{0, 0};
                for (int m = 1; m <= std::min({g.max_mbs(), j, k}); ++m)
                    for (int l = 1; l <= detail::usable_microbatches(g, m, j); ++l) {
                        const double before = prev[std::size_t(j - l * m) * W + std::size_t(k - m)];
                        const double v = std::max(before, g.at(m, l));
                        if (v < best) best = v, arg = {m, l};
                    }
                cur[std::size_t(j) * W + std::size_t(k)] = best;
                how[static_cast<std::size_t>(i)][std::size_t(j) * W + std::size_t(k)] = arg;
            }
    }
    double best = inf;
    int kbest = -1;
    for (int k = 0; k <= K; ++k)
        if (D[static_cast<std::size_t>(N)][std::size_t(B) * W + std::size_t(k)] < best)
            best = D[static_cast<std::size_t>(N)][std::size_t(B) * W + std::size_t(k)], kbest = k;
    if (kbest < 0) return std::nullopt;
    batch_assignment out;
    out.makespan = best;
    out.gpus.resize(static_cast<std::size_t>(N));
    int j = B, k = kbest;
    for (int i = N; i >= 1; --i) {
        const auto [m, l] = how[static_cast<std::size_t>(i)][std::size_t(j) * W + std::size_t(k)];
        out.gpus[static_cast<std::size_t>(i - 1)] = {m, l};
        out.mbs_sum += m;
        j -= m * l;
        k -= m;
    }
    return out;
}

/// The same optimum by binary search on the makespan (see the header comment). Among
/// assignments reaching it, the one with the least sum of microbatch sizes (least compute
/// memory), ties broken towards larger batches on earlier GPUs.
[[nodiscard]] inline std::optional<batch_assignment> fast_batch_dp(const batch_problem& bp) {
    detail::check_batch_problem(bp);
    const int N = bp.gpus(), B = bp.batch;
    if (N == 0 || N > B) return std::nullopt;
    constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max() / 4;
    const auto H = static_cast<std::size_t>(B + 1);

    // Every value l T(m) can take: the candidate makespans.
    std::vector<double> candidates;
    for (const auto& t : bp.types) {
        if (t.count == 0) continue;
        for (int m = 1; m <= std::min(t.max_mbs(), B); ++m)
            for (int l = 1; l <= detail::usable_microbatches(t, m, B); ++l) candidates.push_back(t.at(m, l));
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

    // Per type: least m for each batch b within makespan T (0 = impossible). Divisors of b are
    // visited through multiples of m, so one pass costs O(B log B).
    std::vector<std::vector<int>> cheapest(bp.types.size(), std::vector<int>(H, 0));
    auto prepare = [&](double T) {
        for (std::size_t ti = 0; ti < bp.types.size(); ++ti) {
            auto& c = cheapest[ti];
            std::fill(c.begin(), c.end(), 0);
            const auto& t = bp.types[ti];
            for (int m = std::min(t.max_mbs(), B); m >= 1; --m)  // descending: smaller m overwrites
                for (int l = 1, lmax = detail::usable_microbatches(t, m, B); l <= lmax && t.at(m, l) <= T; ++l) c[std::size_t(l * m)] = m;
        }
    };
    std::vector<std::int64_t> g(H), next(H);
    std::vector<std::vector<std::uint16_t>> pick;  // [gpu][j] batch given to that GPU
    // Least sum of m reaching batch B within T; records choices when `record`.
    auto least_sum = [&](double T, bool record) {
        prepare(T);
        std::fill(g.begin(), g.end(), none);
        std::fill(next.begin(), next.end(), none);
        g[0] = 0;
        if (record) pick.assign(static_cast<std::size_t>(N), std::vector<std::uint16_t>(H, 0));
        int reach = 0, gi = 0;
        for (std::size_t ti = 0; ti < bp.types.size(); ++ti) {
            const auto& c = cheapest[ti];
            int bmax = 0;
            for (int b = 1; b <= B; ++b)
                if (c[std::size_t(b)] > 0) bmax = b;
            if (bmax == 0 && bp.types[ti].count > 0) return none;  // this type cannot take one sample
            for (int copy = 0; copy < bp.types[ti].count; ++copy, ++gi) {
                const int upto = std::min(B, reach + bmax);
                for (int j = 1; j <= upto; ++j) {
                    std::int64_t best = none;
                    std::uint16_t arg = 0;
                    for (int b = std::min(j, bmax); b >= 1; --b) {  // larger batches first on ties
                        const int m = c[std::size_t(b)];
                        if (m == 0 || g[std::size_t(j - b)] >= none) continue;
                        const std::int64_t v = g[std::size_t(j - b)] + m;
                        if (v < best) best = v, arg = static_cast<std::uint16_t>(b);
                    }
                    next[std::size_t(j)] = best;
                    if (record) pick[static_cast<std::size_t>(gi)][std::size_t(j)] = arg;
                }
                next[0] = none;  // every GPU takes at least one sample
                reach = upto;
                std::swap(g, next);
                std::fill(next.begin(), next.end(), none);
            }
        }
        return g[std::size_t(B)];
    };
    auto fits = [&](std::int64_t sum) { return sum < none && (bp.max_mbs_sum < 0 || sum <= bp.max_mbs_sum); };

    // Smallest feasible candidate.
    std::size_t lo = 0, hi = candidates.size();
    while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        if (fits(least_sum(candidates[mid], false))) hi = mid;
        else lo = mid + 1;
    }
    if (lo == candidates.size()) return std::nullopt;
    const double T = candidates[lo];
    batch_assignment out;
    out.mbs_sum = least_sum(T, true);
    out.gpus.resize(static_cast<std::size_t>(N));
    int j = B, gi = N - 1;
    for (std::size_t ti = bp.types.size(); ti-- > 0;)
        for (int copy = 0; copy < bp.types[ti].count; ++copy, --gi) {
            const int b = pick[static_cast<std::size_t>(gi)][std::size_t(j)];
            const int m = cheapest[ti][std::size_t(b)];
            out.gpus[static_cast<std::size_t>(gi)] = {m, b / m};
            out.makespan = std::max(out.makespan, bp.types[ti].at(m, b / m));
            j -= b;
        }
    return out;
}

}  // namespace hetplan::search
