#pragma once
// The microbatches of one Zorse GPU group, exactly (a concepts::solver). Zorse §3.3.3 shares the
// group's M microbatches in proportion to GPU speed; under the latency model (§3.3.4) the counts
// n_i >= 1, sum M, enter the group's term
//   sum over ministages s of  max(max_i n_i a_is, AG_s) + max(max_i n_i b_is, AG_s + RS_s)
// (a = forward, b = backward, each at least the point-to-point time), and the proportional split
// is not optimal: on Zorse's 4-GPU example it gives 18/18/26/2 where 18/18/27/1 is faster
// (tests/published/zorse_planner.cpp). This solver finds the optimum.
//
// GPUs of one kind (GPU type and microbatch size) are interchangeable and the term reads only
// the largest count of each kind, so it suffices to choose u_k, the most microbatches a GPU of
// kind k takes: the term is monotone in every u_k, and any u with sum_k c_k u_k >= M (c_k GPUs
// of kind k) can be trimmed to exactly M without raising any u_k. The search walks u depth-first
// in increasing order, the last kind taking what is left, from a greedy incumbent (raise the
// kind whose step costs least until M is covered). Two admissible bounds prune it: the chosen
// kinds alone (unchosen ones at 1), which only grows with u_k, so a branch stops there; and the
// demand R the unchosen kinds must still cover, which in each ministage needs at least
// R / sum_k (c_k / a_ks) of forward time (and the same of backward: the fractional relaxation).
// Since u microbatches of kind k take at least u times one microbatch's time through every
// ministage, no u_k at or beyond best / that is useful: that limits each u_k, and what later
// kinds can still cover limits u_k from below.
// One kind: u = ceil(M / c), closed form. Deterministic: the first optimum in that order.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>

#include "hetplan/concepts/solver.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/search/objective.hpp"

namespace hetplan::search {

/// One group's split: `counts[k]` GPUs of kind k; per kind and ministage (kind-major, K x S)
/// the forward and backward times a, b (already at least the point-to-point time); per ministage
/// the AllGather and AllGather + ReduceScatter times; M microbatches.
struct microbatch_split_problem {
    int microbatches = 0;
    std::span<const int> counts;
    std::span<const double> a, b;
    std::span<const double> all_gather, gather_scatter;

    [[nodiscard]] std::size_t kinds() const { return counts.size(); }
    [[nodiscard]] std::size_t ministages() const { return all_gather.size(); }
    /// The group's term for the largest counts u (per kind).
    [[nodiscard]] double term(std::span<const int> u) const {
        const std::size_t K = kinds(), S = ministages();
        double sum = 0;
        for (std::size_t s = 0; s < S; ++s) {
            double f = 0, w = 0;
            for (std::size_t k = 0; k < K; ++k) {
                f = std::max(f, u[k] * a[k * S + s]);
                w = std::max(w, u[k] * b[k * S + s]);
            }
            sum += std::max(f, all_gather[s]) + std::max(w, gather_scatter[s]);
        }
        return sum;
    }
};

inline constexpr std::size_t max_split_kinds = 16;

struct microbatch_split_solution {
    objective_terms terms;              ///< iteration: the group's term
    std::array<int, max_split_kinds> most{};   ///< u_k: the most microbatches of a GPU of kind k
    std::array<int, max_split_kinds> total{};  ///< N_k: the kind's microbatches, sum M

    /// Microbatches of the j-th GPU of kind k: N_k spread evenly, the first ones taking one more.
    [[nodiscard]] int of(std::size_t k, int j, int count) const { return total[k] / count + (j < total[k] % count ? 1 : 0); }
};

struct microbatch_split {
    [[nodiscard]] static constexpr const char* name() { return "exact microbatch split"; }

    /// One microbatch of kind k through every ministage, forward and backward.
    [[nodiscard]] static double per_microbatch(const microbatch_split_problem& p, std::size_t k) {
        const std::size_t S = p.ministages();
        double t = 0;
        for (std::size_t s = 0; s < S; ++s) t += p.a[k * S + s] + p.b[k * S + s];
        return t;
    }

    /// A floor of the term when kinds from `first` on must still cover `left` microbatches: per
    /// ministage, the chosen kinds' times (u fixed, later kinds at 1) against the time the later
    /// kinds need for `left` even fractionally.
    [[nodiscard]] static double demand_bound(const microbatch_split_problem& p, const std::array<int, max_split_kinds>& u,
                                             std::size_t first, long long left) {
        const std::size_t K = p.kinds(), S = p.ministages();
        double sum = 0;
        for (std::size_t s = 0; s < S; ++s) {
            double f = 0, w = 0, rate_f = 0, rate_b = 0;
            for (std::size_t k = 0; k < K; ++k) {
                f = std::max(f, u[k] * p.a[k * S + s]);
                w = std::max(w, u[k] * p.b[k * S + s]);
                if (k >= first) rate_f += p.counts[k] / p.a[k * S + s], rate_b += p.counts[k] / p.b[k * S + s];
            }
            f = std::max(f, double(left) / rate_f);
            w = std::max(w, double(left) / rate_b);
            sum += std::max(f, p.all_gather[s]) + std::max(w, p.gather_scatter[s]);
        }
        return sum;
    }

    template <concepts::objective O>
    [[nodiscard]] std::optional<microbatch_split_solution> solve(const problem&, const microbatch_split_problem& p, const O& o,
                                                                 const solve_limits& lim) const {
        const std::size_t K = p.kinds();
        if (K == 0 || K > max_split_kinds) throw input_error("microbatch split: 1 to " + std::to_string(max_split_kinds) + " kinds of GPU per group");
        long long gpus = 0;
        for (int c : p.counts) gpus += c;
        if (p.microbatches < gpus) return std::nullopt;  // every GPU needs a microbatch
        std::array<int, max_split_kinds> u{}, best{};
        const int M = p.microbatches;
        if (K == 1) {  // closed form: spread evenly
            microbatch_split_solution out;
            out.most[0] = (M + p.counts[0] - 1) / p.counts[0];
            out.total[0] = M;
            out.terms.iteration = p.term({out.most.data(), 1});
            if (o.value(out.terms) > lim.cutoff) return std::nullopt;
            return out;
        }
        auto value = [&](std::span<const int> x) { return o.value(objective_terms{p.term(x), 0, 0, 0, 0}); };
        // Greedy incumbent: from Zorse's share by speed (rounded down, at least one each), raise
        // the kind whose step raises the term least until M is covered.
        double rate = 0;
        for (std::size_t k = 0; k < K; ++k) rate += p.counts[k] / per_microbatch(p, k);
        long long have = 0;
        for (std::size_t k = 0; k < K; ++k) {
            u[k] = std::max(1, static_cast<int>(M / (rate * per_microbatch(p, k))));
            have += static_cast<long long>(p.counts[k]) * u[k];
        }
        while (have < M) {
            std::size_t pick = 0;
            double least = std::numeric_limits<double>::infinity();
            for (std::size_t k = 0; k < K; ++k) {
                ++u[k];
                const double v = value({u.data(), K});
                --u[k];
                if (v < least) least = v, pick = k;
            }
            ++u[pick];
            have += p.counts[pick];
        }
        best = u;
        double best_v = value({u.data(), K}), best_t = p.term({u.data(), K});
        u.fill(1);
        // Depth-first over u_0 .. u_{K-2}; the last kind covers the rest.
        auto rec = [&](auto&& self, std::size_t k, long long covered) -> void {
            const int c = p.counts[k];
            if (k + 1 == K) {
                u[k] = std::max<long long>(1, (M - covered + c - 1) / c);
                const double v = value({u.data(), K});
                if (v < best_v) best_v = v, best_t = p.term({u.data(), K}), best = u;
                u[k] = 1;
                return;
            }
            // A kind's count u costs at least u x (its time through every ministage), so none is
            // useful at or beyond best / that: later kinds can cover at most so much, which
            // bounds u_k from below, and u_k itself from above.
            // Capped at M (no kind needs more), so extreme times do not overflow the count.
            auto most = [&](std::size_t j) {
                const double x = std::ceil(best_t * (1 + 1e-9) / per_microbatch(p, j));
                return x < double(M) ? static_cast<long long>(x) : static_cast<long long>(M);
            };
            long long later = 0;
            for (std::size_t j = k + 1; j < K; ++j) later += p.counts[j] * std::max(1LL, most(j));
            const long long need = M - covered - later;
            const int lo = static_cast<int>(std::max<long long>(1, (need + c - 1) / c));
            const int top = static_cast<int>(std::min<long long>(std::max<long long>(1, (M + c - 1) / c), std::max(1LL, most(k))));
            for (int x = lo; x <= top; ++x) {
                u[k] = x;
                if (value({u.data(), K}) >= best_v) break;  // monotone: a larger u_k only costs more
                const long long left = M - covered - static_cast<long long>(c) * x;
                if (left > 0 && demand_bound(p, u, k + 1, left) >= best_v) continue;
                self(self, k + 1, covered + static_cast<long long>(c) * x);
            }
            u[k] = 1;
        };
        rec(rec, 0, 0);
        if (!std::isfinite(best_v) || best_v > lim.cutoff) return std::nullopt;
        microbatch_split_solution out;
        out.terms.iteration = p.term({best.data(), K});
        out.most = best;
        // Trim sum_k c_k u_k down to M, from the last kind back, each kind keeping one per GPU.
        long long surplus = -M;
        for (std::size_t k = 0; k < K; ++k) {
            out.total[k] = p.counts[k] * best[k];
            surplus += out.total[k];
        }
        for (std::size_t k = K; k-- > 0 && surplus > 0;) {
            const long long cut = std::min<long long>(surplus, out.total[k] - p.counts[k]);
            out.total[k] -= static_cast<int>(cut);
            surplus -= cut;
        }
        return out;
    }
};

static_assert(concepts::check_solver<microbatch_split, microbatch_split_problem, max_throughput>());

}  // namespace hetplan::search
