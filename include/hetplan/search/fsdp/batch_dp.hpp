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
// it is searched over the values T(m, l) can take, upwards from the smallest and then by
// bisection; for a candidate T, each GPU type's cheapest microbatch size for every batch b is
// read off once (identical GPUs share it), and a min-plus pass over the GPUs, each visiting only
// the batches from which B is still reachable, finds the least sum of m for batch B, to compare
// with K. O(log(#candidates) x N x B x b_max) at worst, b_max the largest batch one GPU can take
// within T; near the optimum the passes are much narrower.
// separate_maxima_batch_search goes beyond the paper: the exact optimum of Eqs. 2-3 themselves
// when all units are alike (see there).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "hetplan/concepts/solver.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/core/stop.hpp"
#include "hetplan/search/objective.hpp"

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

/// The largest global batch the batch DPs take: per-GPU batches are kept in 16 bits.
inline constexpr int max_dp_batch = 65535;

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
    if (bp.batch > max_dp_batch) throw input_error("cephalo DP: global batch above 65535 is not supported (per-GPU batches are 16-bit)");
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

/// Eq. 4 literally, one GPU at a time. nullopt when no assignment meets (I)-(III), or when
/// `stop` asks (checked after every GPU).
[[nodiscard]] inline std::optional<batch_assignment> straightforward_batch_dp(const batch_problem& bp, const stop_condition* stop = nullptr) {
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
        if (stop && stop->requested()) return std::nullopt;
        const fsdp_gpu_type& g = *gpu[static_cast<std::size_t>(i - 1)];
        auto& cur = D[static_cast<std::size_t>(i)];
        const auto& prev = D[static_cast<std::size_t>(i - 1)];
        for (int j = 1; j <= B; ++j)
            for (int k = 1; k <= K; ++k) {
                double best = inf;
                std::pair<int, int> arg{0, 0};
                for (int m = 1; m <= std::min({g.max_mbs(), j, k}); ++m) {
                    const double* T = &g.cost[g.start[static_cast<std::size_t>(m - 1)]];  // T(m, l) = T[l - 1]
                    for (int l = 1, lmax = detail::usable_microbatches(g, m, j); l <= lmax; ++l) {
                        const double before = prev[std::size_t(j - l * m) * W + std::size_t(k - m)];
                        const double v = std::max(before, T[l - 1]);
                        if (v < best) best = v, arg = {m, l};
                    }
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

namespace detail {

/// The test of the fast searches. `allowed(type, m, l)` says which options a GPU may take and
/// is monotone in l (if l is allowed, so is every smaller l); the least sum of microbatch sizes
/// that reaches batch B exactly, one allowed option per GPU, comes from a min-plus pass over the
/// GPUs. The GPUs of a type share one table: their cheapest m for every batch b, built by visiting
/// the multiples of each m, O(B log B). A pass costs O(N B b_max), b_max the largest batch a GPU
/// may take.
class least_mbs_sum {
public:
    static constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max() / 4;

    explicit least_mbs_sum(const batch_problem& bp, const stop_condition* stop = nullptr)
        : bp_(bp), B_(bp.batch), cheapest_(bp.types.size(), std::vector<int>(rows(), 0)), g_(rows()), next_(rows()), stop_(stop) {}

    /// Whether a pass was cut short by the stop condition (its answer then reads as `none`).
    [[nodiscard]] bool stopped() const { return stopped_; }

    /// Least sum of m (`none` when batch B cannot be reached); records the choices when asked.
    /// GPU k only visits the batches j from which B is still reachable: every later GPU takes
    /// at least one sample and at most its b_max; near the optimal makespan that window is
    /// narrow. The values on it are those of the full pass.
    template <class Allowed>
    std::int64_t operator()(Allowed&& allowed, bool record) {
        prepare(allowed);
        const int N = bp_.gpus();
        long long after = 0;  // sum of b_max over the GPUs not yet passed
        for (std::size_t ti = 0; ti < bp_.types.size(); ++ti) {
            if (bmax_[ti] == 0 && bp_.types[ti].count > 0) return none;  // this type cannot take one sample
            after += static_cast<long long>(bmax_[ti]) * bp_.types[ti].count;
        }
        if (after < B_) return none;
        std::fill(g_.begin(), g_.end(), none);
        std::fill(next_.begin(), next_.end(), none);
        g_[0] = 0;
        if (record) pick_.assign(static_cast<std::size_t>(N), std::vector<std::uint16_t>(rows(), 0));
        int plo = 0, phi = 0, gi = 0;  // window of the previous pass
        for (std::size_t ti = 0; ti < bp_.types.size(); ++ti) {
            const auto& c = cheapest_[ti];
            const int bmax = bmax_[ti];
            for (int copy = 0; copy < bp_.types[ti].count; ++copy, ++gi) {
                if (stopped_ || (stop_ && (stopped_ = stop_->requested()))) return none;
                after -= bmax;
                const int lo = static_cast<int>(std::max<long long>(gi + 1, B_ - after));
                const int hi = std::min(B_ - (N - gi - 1), phi + bmax);
                if (lo > hi) return none;
                for (int j = lo; j <= hi; ++j) {
                    std::int64_t best = none;
                    std::uint16_t arg = 0;
                    for (int b = std::min(bmax, j - plo), b_lo = std::max(1, j - phi); b >= b_lo; --b) {  // larger batches first on ties
                        const int m = c[std::size_t(b)];
                        if (m == 0 || g_[std::size_t(j - b)] >= none) continue;
                        const std::int64_t v = g_[std::size_t(j - b)] + m;
                        if (v < best) best = v, arg = static_cast<std::uint16_t>(b);
                    }
                    next_[std::size_t(j)] = best;
                    if (record) pick_[static_cast<std::size_t>(gi)][std::size_t(j)] = arg;
                }
                std::swap(g_, next_);
                std::fill(next_.begin() + plo, next_.begin() + phi + 1, none);
                plo = lo, phi = hi;
            }
        }
        return g_[std::size_t(B_)];
    }

    /// Whether a least sum meets (III).
    [[nodiscard]] bool fits(std::int64_t sum) const { return sum < none && (bp_.max_mbs_sum < 0 || sum <= bp_.max_mbs_sum); }

    /// The assignment of the last recorded pass.
    [[nodiscard]] batch_assignment assignment(std::int64_t sum) const {
        batch_assignment out;
        out.mbs_sum = sum;
        out.gpus.resize(static_cast<std::size_t>(bp_.gpus()));
        int j = B_, gi = bp_.gpus() - 1;
        for (std::size_t ti = bp_.types.size(); ti-- > 0;)
            for (int copy = 0; copy < bp_.types[ti].count; ++copy, --gi) {
                const int b = pick_[static_cast<std::size_t>(gi)][std::size_t(j)];
                const int m = cheapest_[ti][std::size_t(b)];
                out.gpus[static_cast<std::size_t>(gi)] = {m, b / m};
                j -= b;
            }
        return out;
    }

private:
    [[nodiscard]] std::size_t rows() const { return static_cast<std::size_t>(B_ + 1); }

    template <class Allowed>
    void prepare(Allowed& allowed) {
        for (std::size_t ti = 0; ti < bp_.types.size(); ++ti) {
            auto& c = cheapest_[ti];
            std::fill(c.begin(), c.end(), 0);
            const auto& t = bp_.types[ti];
            int& bmax = bmax_[ti] = 0;
            for (int m = std::min(t.max_mbs(), B_); m >= 1; --m)  // descending: smaller m overwrites
                for (int l = 1, lmax = usable_microbatches(t, m, B_); l <= lmax && allowed(ti, m, l); ++l) {
                    c[std::size_t(l * m)] = m;
                    bmax = std::max(bmax, l * m);
                }
        }
    }

    const batch_problem& bp_;
    int B_;
    std::vector<std::vector<int>> cheapest_;  ///< [type][b]: least m, 0 = not allowed
    std::vector<int> bmax_ = std::vector<int>(bp_.types.size(), 0);  ///< [type]: largest allowed batch
    std::vector<std::int64_t> g_, next_;
    std::vector<std::vector<std::uint16_t>> pick_;  ///< [gpu][j]: batch given to that GPU
    const stop_condition* stop_ = nullptr;
    bool stopped_ = false;
};

/// Smallest k in [lo, hi) at which the monotone `holds(k)` is true, or hi. Probes lo, lo + 1,
/// lo + 3, lo + 7, ... before bisecting the last gap: the tests above the answer are the costly
/// ones (large makespans let a GPU take much of the batch), so few of them are made.
template <class Pred>
std::size_t first_true(std::size_t lo, std::size_t hi, Pred&& holds) {
    std::size_t step = 1;
    while (lo < hi) {
        const std::size_t probe = std::min(hi - 1, lo + step - 1);
        if (holds(probe)) {
            hi = probe;
            break;
        }
        lo = probe + 1;
        step *= 2;
    }
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (holds(mid)) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

inline void sort_unique(std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace detail

/// The same optimum by binary search on the makespan (see the header comment). Among
/// assignments reaching it, the one with the least sum of microbatch sizes (least compute
/// memory), ties broken towards larger batches on later GPUs.
[[nodiscard]] inline std::optional<batch_assignment> fast_batch_dp(const batch_problem& bp, const stop_condition* stop = nullptr) {
    detail::check_batch_problem(bp);
    const int N = bp.gpus(), B = bp.batch;
    if (N == 0 || N > B) return std::nullopt;
    // Every value T(m, l) can take: the candidate makespans.
    std::vector<double> candidates;
    for (const auto& t : bp.types) {
        if (t.count == 0) continue;
        for (int m = 1; m <= std::min(t.max_mbs(), B); ++m)
            for (int l = 1; l <= detail::usable_microbatches(t, m, B); ++l) candidates.push_back(t.at(m, l));
    }
    detail::sort_unique(candidates);
    detail::least_mbs_sum test(bp, stop);
    auto within = [&bp](double T) { return [&bp, T](std::size_t ti, int m, int l) { return bp.types[ti].at(m, l) <= T; }; };
    const std::size_t k = detail::first_true(0, candidates.size(), [&](std::size_t i) { return test.fits(test(within(candidates[i]), false)); });
    if (k == candidates.size() || test.stopped()) return std::nullopt;
    // The recording pass may be stopped half-way: its choices are read only when it finished
    // (reading them first divided by a zero microbatch size; found by fuzzing).
    const std::int64_t sum = test(within(candidates[k]), true);
    if (test.stopped() || !test.fits(sum)) return std::nullopt;
    batch_assignment out = test.assignment(sum);
    std::size_t gi = 0;
    for (const auto& t : bp.types)
        for (int c = 0; c < t.count; ++c, ++gi) out.makespan = std::max(out.makespan, t.at(out.gpus[gi].mbs, out.gpus[gi].microbatches));
    return out;
}

/// Cephalo's time model when all L FSDP units are alike (§2.4: "transformer layers are
/// identical"): per GPU type one unit's forward and backward (recomputation included) for one
/// microbatch at each size m, and the largest m at which an even share of the state still fits
/// next to M(m) (beyond it the collectives are the uneven ones, §2.3); per unit the collectives.
struct identical_units {
    int count = 0;                              ///< L
    double all_gather = 0, reduce_scatter = 0;  ///< seconds per unit, evenly sharded
    double uneven_factor = 1.15;                ///< §2.3
    std::vector<std::vector<double>> fwd, bwd;  ///< [type][m - 1], seconds
    std::vector<int> even_mbs;                  ///< [type]
};

/// Eqs. 2-3 for an assignment when all units are alike, with Algorithm 1's rule for the
/// collectives: even when every GPU's microbatch size leaves room for an even share of the
/// state, uneven otherwise.
[[nodiscard]] inline double separate_maxima_time(const batch_problem& bp, const identical_units& u, const batch_assignment& a) {
    double xf = 0, xb = 0;
    bool even = true;
    std::size_t gi = 0;
    for (std::size_t t = 0; t < bp.types.size(); ++t)
        for (int c = 0; c < bp.types[t].count; ++c, ++gi) {
            const auto& g = a.gpus.at(gi);
            const auto i = static_cast<std::size_t>(g.mbs - 1);
            xf = std::max(xf, g.microbatches * u.fwd.at(t).at(i));
            xb = std::max(xb, g.microbatches * u.bwd.at(t).at(i));
            even = even && g.mbs <= u.even_mbs.at(t);
        }
    const double k = even ? 1.0 : u.uneven_factor;
    return u.count * (std::max(xf, u.all_gather * k) + std::max(xb, (u.all_gather + u.reduce_scatter) * k));
}

/// Beyond the paper: Eq. 4 minimises the largest per-GPU forward + backward, while Eqs. 2-3 wait
/// for the slowest forward and, separately, the slowest backward; when GPU types differ in their
/// backward-to-forward ratio the two optima differ. With alike units the iteration is
///   L x ( max(X_f, AG) + max(X_b, AG + RS) ),  X_f = max_i l_i f_i(m_i),  X_b = max_i l_i b_i(m_i),
/// so this minimises it exactly over caps (X_f, X_b): feasibility for given caps is the fast
/// search's test, and the best caps lie on a corner of the monotone frontier, found by walking
/// it with two binary searches per corner. As in Algorithm 1, either every GPU stays within its
/// even-state microbatch size and the collectives are even, or they are uneven. `makespan` of
/// the result is that iteration time. Same constraints (I)-(III) as Eq. 4. Only assignments
/// faster than `upper_bound` are sought (nullopt when there is none): pass the time of a known
/// assignment, e.g. Eq. 4's through separate_maxima_time, to prune.
[[nodiscard]] inline std::optional<batch_assignment> separate_maxima_batch_search(
    const batch_problem& bp, const identical_units& u, double upper_bound = std::numeric_limits<double>::infinity(),
    const stop_condition* stop = nullptr) {
    detail::check_batch_problem(bp);
    if (u.fwd.size() != bp.types.size() || u.bwd.size() != bp.types.size() || u.even_mbs.size() != bp.types.size())
        throw input_error("cephalo search: one row of unit times per GPU type");
    for (std::size_t t = 0; t < bp.types.size(); ++t) {
        const auto need = static_cast<std::size_t>(std::min(bp.types[t].max_mbs(), bp.batch));
        if (u.fwd[t].size() < need || u.bwd[t].size() < need) throw input_error("cephalo search: unit times missing for some microbatch sizes");
        for (std::size_t m = 0; m < need; ++m)
            if (!(u.fwd[t][m] > 0) || !(u.bwd[t][m] > 0) || !std::isfinite(u.fwd[t][m] + u.bwd[t][m]))
                throw input_error("cephalo search: unit times must be finite and > 0");
    }
    if (u.count < 1 || !(u.all_gather >= 0) || !(u.reduce_scatter >= 0) || !(u.uneven_factor >= 1))
        throw input_error("cephalo search: bad unit count or collective times");
    const int N = bp.gpus(), B = bp.batch;
    if (N == 0 || N > B) return std::nullopt;
    detail::least_mbs_sum test(bp, stop);
    struct corner {
        double tf, tb;
        bool even;
    };
    std::optional<corner> found;
    double best = upper_bound;
    auto limit = [&](std::size_t t, bool even) { return std::min({bp.types[t].max_mbs(), B, even ? u.even_mbs[t] : B}); };
    // When an even share fits at every size, the uneven regime only adds to the collectives.
    bool even_everywhere = true;
    for (std::size_t t = 0; t < bp.types.size(); ++t) even_everywhere = even_everywhere && limit(t, true) == limit(t, false);
    auto allowed = [&](double tf, double tb, bool even) {
        return [&, tf, tb, even](std::size_t t, int m, int l) {
            const auto i = static_cast<std::size_t>(m - 1);
            return m <= limit(t, even) && l * u.fwd[t][i] <= tf && l * u.bwd[t][i] <= tb;
        };
    };
    for (const bool even : {true, false}) {
        if (!even && even_everywhere) break;
        const double k = even ? 1.0 : u.uneven_factor, ag = u.all_gather * k, rs = u.reduce_scatter * k;
        auto value = [&](double tf, double tb) { return u.count * (std::max(tf, ag) + std::max(tb, ag + rs)); };
        // Caps worth trying: the values l f and l b can take, none below the collectives
        // (the time is flat there); the largest of each stands for "no cap".
        // Caps at which the time reaches the bound are of no use either.
        const double f_top = best / u.count - (ag + rs), b_top = best / u.count - ag;
        std::vector<double> fc{ag}, bc{ag + rs};
        for (std::size_t t = 0; t < bp.types.size(); ++t) {
            if (bp.types[t].count == 0) continue;
            for (int m = 1; m <= limit(t, even); ++m)
                for (int l = 1; l <= detail::usable_microbatches(bp.types[t], m, B); ++l) {
                    const auto i = static_cast<std::size_t>(m - 1);
                    if (l * u.fwd[t][i] > ag && l * u.fwd[t][i] < f_top) fc.push_back(l * u.fwd[t][i]);
                    if (l * u.bwd[t][i] > ag + rs && l * u.bwd[t][i] < b_top) bc.push_back(l * u.bwd[t][i]);
                }
        }
        detail::sort_unique(fc);
        detail::sort_unique(bc);
        auto feasible = [&](double tf, double tb) { return test.fits(test(allowed(tf, tb, even), false)); };
        const std::size_t nf = fc.size(), nb = bc.size();
        if (!feasible(fc.back(), bc.back())) continue;  // nothing below the bound in this regime
        std::size_t fi = detail::first_true(0, nf, [&](std::size_t i) { return feasible(fc[i], bc.back()); });
        const std::size_t b_floor = detail::first_true(0, nb, [&](std::size_t i) { return feasible(fc.back(), bc[i]); });
        std::size_t b_hi = nb;  // feasible(fc[fi], bc[b_hi - 1]) holds throughout
        while (value(fc[fi], bc[b_floor]) < best) {
            const std::size_t bi = detail::first_true(b_floor, b_hi, [&](std::size_t i) { return feasible(fc[fi], bc[i]); });
            if (value(fc[fi], bc[bi]) < best) best = value(fc[fi], bc[bi]), found = corner{fc[fi], bc[bi], even};
            if (bi == b_floor) break;
            // The next corner: the smallest forward cap at which the backward cap can drop.
            fi = detail::first_true(fi + 1, nf, [&](std::size_t i) { return feasible(fc[i], bc[bi - 1]); });
            if (fi == nf) break;
            b_hi = bi;
        }
    }
    if (!found || test.stopped()) return std::nullopt;
    batch_assignment out = test.assignment(test(allowed(found->tf, found->tb, found->even), true));
    if (test.stopped()) return std::nullopt;
    out.makespan = best;
    return out;
}

/// A batch assignment as a solver's solution: its makespan is the solver's own time.
struct batch_solution {
    objective_terms terms;
    batch_assignment assignment;
};

/// Eq. 4 as a concepts::solver: the fast search, or the straightforward one (the reference),
/// which give the same optimum. The makespan is a time: every objective is monotone in it.
struct eq4_batch_dp {
    bool straightforward = false;
    [[nodiscard]] static constexpr const char* name() { return "Eq. 4 batch DP"; }
    template <concepts::objective O>
    [[nodiscard]] std::optional<batch_solution> solve(const problem&, const batch_problem& bp, const O&, const solve_limits& lim) const {
        auto a = straightforward ? straightforward_batch_dp(bp, lim.stop) : fast_batch_dp(bp, lim.stop);
        if (!a || a->makespan > lim.cutoff) return std::nullopt;
        return batch_solution{{a->makespan, 0, 0, 0, 0}, std::move(*a)};
    }
};

static_assert(concepts::check_solver<eq4_batch_dp, batch_problem, max_throughput>());

}  // namespace hetplan::search
