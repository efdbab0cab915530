#pragma once
// AutoHet's device grouping (AutoHet §III-B, Eqs. 2-3), solved exactly without a MINLP solver:
//   maximise D * z,   z = min_j G_j,   G_j = (sum of g_i over the units of group j) * (1 - rho_j)
//   every unit in exactly one group (3e); each group's memory >= MIN_mem (3b).
// Units of one class (a GPU type at the chosen TP degree: a TP group is one unit, §III-D) are
// interchangeable, so a group is a count vector over the classes and a grouping a multiset of
// count vectors. For each D, largest bound first, a depth-first branch and bound splits the
// remaining counts into groups:
//  - the next group holds a unit of the first class left (every partition has such a group);
//  - a floor on z: each group needs S_j >= z / (1 - rho_j), so z <= S / sum_j 1/(1 - rho_j); for
//    Eq. 1's bubble that sum is (D(K-1) + U) / K whatever the group sizes (U units in all);
//  - a memo on (counts left, groups left) holds the exact best, or an upper bound when the
//    subtree could not beat what its caller already had.
// Reading of what the paper leaves out (docs/reproduction.md): rho_j is Eq. 1's bubble with
// balanced stages, P_j = the units of group j (each unit one pipeline stage), K the group's
// microbatches; K is an input (fixed, or the batch's microbatches shared by the D groups).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "hetplan/core/error.hpp"
#include "hetplan/core/stop.hpp"
#include "hetplan/search/memo.hpp"

namespace hetplan::search {

/// Interchangeable units: a GPU type at one TP degree (§III-B's g_i and m_i).
struct unit_class {
    int count = 0;      ///< units in the pool; every one is placed (3e)
    double power = 0;   ///< g_i, e.g. model passes per second of one unit
    double memory = 0;  ///< m_i, bytes one unit brings to a group
};

/// The bubble of a group of P stages running K microbatches, as 1 / (1 - rho) = intercept(K) +
/// slope(K) * P: affine in P, which gives the solver an exact bound (below). Eq. 1 with balanced
/// 1F1B stages: the pipeline takes (K + P - 1) stage times for K microbatches' work, so
/// 1 / (1 - rho) = (K - 1) / K + P / K. A user's bubble model supplies the same two members.
struct balanced_bubble {
    [[nodiscard]] static double intercept(int microbatches) { return double(microbatches - 1) / double(microbatches); }
    [[nodiscard]] static double slope(int microbatches) { return 1.0 / double(microbatches); }
};

/// 1 - rho_j of a group of `stages` units.
template <class Bubble>
[[nodiscard]] double bubble_efficiency(int stages, int microbatches) {
    return 1.0 / (Bubble::intercept(microbatches) + Bubble::slope(microbatches) * stages);
}

/// How many microbatches K a group runs: a fixed K, or the batch's microbatches shared by the
/// D groups (K = total / D, the smaller share where it does not divide).
struct microbatch_rule {
    long long total = 0;  ///< microbatches in the global batch; used when fixed == 0
    int fixed = 0;        ///< > 0: every group runs this many
    [[nodiscard]] int per_group(int groups) const {
        if (fixed > 0) return fixed;
        return groups > 0 ? static_cast<int>(std::min<long long>(total / groups, std::numeric_limits<int>::max())) : 0;
    }
};

struct grouping_problem {
    std::vector<unit_class> classes;
    double min_memory = 0;  ///< MIN_mem (3b)
    microbatch_rule microbatches{};
};

/// A grouping: count vectors (one per group, in the order found), with its objective.
struct device_grouping {
    std::vector<std::vector<int>> groups;
    int microbatches = 0;      ///< K at this number of groups
    double min_power = 0;      ///< z: the smallest effective computing power G_j
    double value = 0;          ///< D * z (3a)
    [[nodiscard]] int size() const { return static_cast<int>(groups.size()); }
};

struct grouping_stats {
    std::size_t nodes = 0;        ///< branch-and-bound nodes expanded
    std::size_t groups_tried = 0; ///< values of D searched (not bounded out)
    bool stopped = false;         ///< the stop condition or the node budget ended the search
    bool budget_spent = false;    ///< the node budget did: the grouping returned is not proven optimal
};

namespace detail {
inline constexpr double grouping_eps = 1e-12;
}

/// Exact solver of Eq. 3. `admits(counts)` is the extra predicate a planner adds on a group
/// (e.g. "its layers fit when partitioned", or a user's pruner); it must be pure.
template <class Bubble = balanced_bubble>
class grouping_solver {
public:
    grouping_stats stats{};
    /// Search nodes before the solver returns its best grouping so far, unproven (0: no limit).
    /// Pools of a few hundred units of three or more classes can need far more than a planner
    /// should spend; a deadline does the same in time.
    std::size_t node_budget = 0;

    template <class Admits>
    [[nodiscard]] std::optional<device_grouping> solve(const grouping_problem& in, Admits&& admits, const stop_condition* stop = nullptr) {
        // The search branches on a unit of the first class left: strongest first, so each group
        // is built around its scarce, decisive units (6x fewer nodes on 256 GPUs of three types
        // than weakest first). Classes are permuted inside; `admits` and the result keep the
        // caller's order.
        order_.resize(in.classes.size());
        for (std::size_t t = 0; t < order_.size(); ++t) order_[t] = t;
        std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return in.classes[a].power > in.classes[b].power; });
        grouping_problem inner = in;
        for (std::size_t t = 0; t < order_.size(); ++t) inner.classes[t] = in.classes[order_[t]];
        caller_.assign(in.classes.size(), 0);
        auto in_caller_order = [&](std::span<const int> v) {
            for (std::size_t t = 0; t < v.size(); ++t) caller_[order_[t]] = v[t];
            return admits(std::span<const int>(caller_));
        };
        auto g = solve_ordered(inner, in_caller_order, stop);
        if (g)
            for (auto& v : g->groups) {
                std::vector<int> w(v.size());
                for (std::size_t t = 0; t < v.size(); ++t) w[order_[t]] = v[t];
                v = std::move(w);
            }
        return g;
    }

    /// Effective computing power of a group (Eq. 2), its counts in the order of `in.classes`.
    [[nodiscard]] static double group_power(const grouping_problem& in, std::span<const int> v, int microbatches) {
        double s = 0;
        int n = 0;
        for (std::size_t t = 0; t < v.size(); ++t) s += v[t] * in.classes[t].power, n += v[t];
        return n > 0 ? s * bubble_efficiency<Bubble>(n, microbatches) : 0.0;
    }

private:
    template <class Admits>
    [[nodiscard]] std::optional<device_grouping> solve_ordered(const grouping_problem& in, Admits&& admits, const stop_condition* stop) {
        stats = {};
        setup(in);
        if (units_ == 0) return std::nullopt;
        stop_poll poll(stop, 256);
        std::optional<device_grouping> best;

        // Every D with its bound (K, hence the bound, changes with D) and the units every
        // admitted group needs at least.
        struct option {
            int d;
            double bound;  ///< upper bound on D x z, lowered as windows fail
            bool done;
        };
        std::vector<option> ds;
        least_ = least_admitted(admits);
        for (int d = 1; d <= units_; ++d) {
            const int k = in.microbatches.per_group(d);
            if (k < 1 || d * least_ > units_) continue;
            ds.push_back({d, double(d) * power_all_ / inverse_sum(d, units_, k), false});
        }
        std::stable_sort(ds.begin(), ds.end(), [](const option& a, const option& b) { return a.bound > b.bound; });
        if (ds.empty()) return std::nullopt;

        // An incumbent first, greedy for every D. It bounds the exact search from the start
        // and is what a search stopped early returns.
        for (const option& o : ds) {
            // A greedy pass costs O(units x D): the clock is read before every one (a poll every
            // 256 let 836 single-GPU nodes run seconds past a 200 ms deadline; found by fuzzing).
            if (stop && stop->requested()) poll.halt();
            if (poll()) break;
            if (best && o.bound <= best->value * (1 + detail::grouping_eps)) continue;
            const int k = in.microbatches.per_group(o.d);
            const double z = greedy(o.d, k, admits);
            if (!(z > 0) || (best && z * o.d <= best->value * (1 + detail::grouping_eps))) continue;
            device_grouping g;
            g.microbatches = k;
            g.min_power = z;
            g.value = z * double(o.d);
            const std::size_t T = classes_.size();
            for (std::size_t j = 0; j < std::size_t(o.d); ++j) g.groups.emplace_back(greedy_.begin() + std::ptrdiff_t(j * T), greedy_.begin() + std::ptrdiff_t((j + 1) * T));
            best = std::move(g);
        }

        // Aspiration on the value, shared by every D: ask each D for a value above V, V from
        // 0.5 % under the largest bound down (doubling the gap) to the incumbent. A search
        // that beats its window is exact for its D; one that fails proves D's value <= V.
        const double top = ds.front().bound;
        for (double gap = 0.005;; gap *= 2) {
            const double incumbent = best ? best->value : 0.0;
            const double V = std::max(incumbent, top * (1 - gap));
            bool open = false;
            for (option& o : ds) {
                if (o.done || o.bound <= incumbent * (1 + detail::grouping_eps)) continue;
                open = true;
                if (o.bound <= V) continue;  // a later, wider window
                if (poll()) break;
                ++stats.groups_tried;
                k_ = in.microbatches.per_group(o.d);
                memo_.clear();
                const double floor = std::max(V, best ? best->value : 0.0) / double(o.d);
                const double z = search(index_of(counts_), counts_, o.d, floor, poll, admits);
                if (poll.stopped()) break;
                if (z > floor && std::isfinite(z)) {
                    device_grouping g;
                    g.microbatches = k_;
                    g.min_power = z;
                    g.value = z * double(o.d);
                    rebuild(counts_, o.d, g.groups);
                    best = std::move(g);
                    o.done = true;
                } else {
                    o.bound = floor * double(o.d);
                }
            }
            if (poll.stopped() || !open || V <= incumbent) break;
        }
        stats.stopped = poll.stopped();
        return best;
    }

    /// Effective computing power of a group (Eq. 2), in the search's class order.
    [[nodiscard]] double group_power(std::span<const int> v, int microbatches) const {
        double s = 0;
        int n = 0;
        for (std::size_t t = 0; t < v.size(); ++t) s += v[t] * classes_[t].power, n += v[t];
        return n > 0 ? s * bubble_efficiency<Bubble>(n, microbatches) : 0.0;
    }

    struct entry {
        double value;            ///< exact best z, or an upper bound
        std::uint64_t first;     ///< index of the first group of the best split (exact only)
        bool exact;
    };

    void setup(const grouping_problem& in) {
        classes_ = in.classes;
        min_memory_ = in.min_memory;
        counts_.assign(classes_.size(), 0);
        radix_.assign(classes_.size(), 1);
        units_ = 0;
        power_all_ = 0;
        std::uint64_t r = 1;
        for (std::size_t t = 0; t < classes_.size(); ++t) {
            const auto& c = classes_[t];
            if (c.count < 0 || !(c.power > 0) || !std::isfinite(c.power) || !(c.memory >= 0))
                throw model_error("device grouping: class " + std::to_string(t) + " needs a count >= 0, a finite power > 0 and memory >= 0");
            counts_[t] = c.count;
            radix_[t] = r;
            if (r > (std::uint64_t{1} << 40) / std::uint64_t(c.count + 1))
                throw model_error("device grouping: too many count vectors (more than 2^40); group fewer GPU types or larger TP units");
            r *= std::uint64_t(c.count + 1);
            units_ += c.count;
            power_all_ += c.count * c.power;
        }
        admitted_.assign(r <= (std::uint64_t{1} << 22) ? r : 0, -1);
        scratch_.assign(classes_.size() * std::size_t(units_ + 2) * 2, 0);
        weights_.assign((3 * classes_.size() + 2) * std::size_t(units_ + 2), 0.0);
    }

    /// A grouping into d groups by largest power first: a unit that raises the weakest group
    /// goes there (ties: fewer units, then the first), one that would lower it (a weak GPU
    /// lengthens the bubble more than it adds, Eq. 1) to the group that stays strongest with
    /// it, so weak units spread instead of piling up. Its z, or -inf if a group misses MIN_mem or the
    /// predicate; the groups stay in `greedy_` (d rows of the classes' counts). Classes are in
    /// the search's order, strongest first. Allocates nothing once warm.
    template <class Admits>
    double greedy(int d, int k, Admits& admits) {
        const std::size_t T = classes_.size(), D = std::size_t(d);
        greedy_.assign(D * T, 0);
        greedy_power_.assign(D, 0.0);
        greedy_size_.assign(D, 0);
        const auto now = [&](std::size_t c) { return greedy_size_[c] ? greedy_power_[c] * bubble_efficiency<Bubble>(greedy_size_[c], k) : 0.0; };
        for (std::size_t t = 0; t < T; ++t)
            for (int i = 0; i < classes_[t].count; ++i) {
                const auto after = [&](std::size_t c) { return (greedy_power_[c] + classes_[t].power) * bubble_efficiency<Bubble>(greedy_size_[c] + 1, k); };
                std::size_t j = 0;
                for (std::size_t c = 1; c < D; ++c)
                    if (now(c) < now(j) || (now(c) == now(j) && greedy_size_[c] < greedy_size_[j])) j = c;
                if (after(j) < now(j))
                    for (std::size_t c = 0; c < D; ++c)
                        if (after(c) > after(j)) j = c;
                ++greedy_[j * T + t];
                greedy_power_[j] += classes_[t].power;
                ++greedy_size_[j];
            }
        double z = std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < D; ++j) {
            const std::span<const int> v(greedy_.data() + j * T, T);
            if (!admitted(index_of(v), v, admits)) return -std::numeric_limits<double>::infinity();
            z = std::min(z, group_power(v, k));
        }
        return z > 0 ? z : -std::numeric_limits<double>::infinity();
    }

    /// The fewest units of `r` that reach MIN_mem (largest memories first): every group has as
    /// many, so D <= U / least.
    [[nodiscard]] int least_units(std::span<const int> r) const {
        if (!(min_memory_ > 0)) return 1;
        std::vector<std::pair<double, int>> by_memory;
        for (std::size_t t = 0; t < r.size(); ++t) by_memory.emplace_back(classes_[t].memory, r[t]);
        std::sort(by_memory.begin(), by_memory.end(), std::greater<>());
        double m = 0;
        int n = 0;
        for (const auto& [mem, count] : by_memory)
            for (int i = 0; i < count; ++i) {
                m += mem, ++n;
                if (m >= min_memory_) return n;
            }
        return units_ + 1;
    }

    /// A lower bound on the units of any admitted group: the memory's (least_units), raised
    /// while every group of that many units is refused by MIN_mem or the predicate (a planner's
    /// "the layers fit" refuses short pipelines). Groups of fewer units then never need
    /// enumerating, and D <= U / least. At most `tries` groups are asked; where they run out,
    /// the size reached is still a bound (every smaller group was refused).
    template <class Admits>
    [[nodiscard]] int least_admitted(Admits& admits, std::size_t tries = 4096) {
        const std::size_t T = counts_.size();
        std::vector<int> v(T, 0);
        for (int size = least_units(counts_); size <= units_; ++size) {
            bool found = false;
            // every v <= counts_ with |v| = size, class by class
            auto walk = [&](auto&& self, std::size_t t, int left) -> void {
                if (found || tries == 0) return;
                if (t + 1 == T) {
                    if (left > counts_[t]) return;
                    v[t] = left;
                    --tries;
                    found = memory_of(v) >= min_memory_ && admitted(index_of(v), v, admits);
                    v[t] = 0;
                    return;
                }
                for (int c = std::min(left, counts_[t]); c >= 0 && !found; --c) {
                    v[t] = c;
                    self(self, t + 1, left - c);
                }
                v[t] = 0;
            };
            walk(walk, 0, size);
            if (found || tries == 0) return size;
        }
        return units_ + 1;
    }

    [[nodiscard]] std::uint64_t index_of(std::span<const int> v) const {
        std::uint64_t i = 0;
        for (std::size_t t = 0; t < v.size(); ++t) i += std::uint64_t(v[t]) * radix_[t];
        return i;
    }
    [[nodiscard]] double memory_of(std::span<const int> v) const {
        double m = 0;
        for (std::size_t t = 0; t < v.size(); ++t) m += v[t] * classes_[t].memory;
        return m;
    }
    void decode(std::uint64_t i, std::span<int> v) const {
        for (std::size_t t = 0; t < v.size(); ++t) v[t] = int(i / radix_[t] % std::uint64_t(classes_[t].count + 1));
    }

    template <class Admits>
    bool admitted(std::uint64_t i, std::span<const int> v, Admits& admits) {
        if (min_memory_ > 0 && memory_of(v) < min_memory_) return false;
        if (i < admitted_.size()) {
            if (admitted_[i] < 0) admitted_[i] = admits(v) ? 1 : 0;
            return admitted_[i] == 1;
        }
        return admits(v);
    }

    /// sum_j 1 / (1 - rho_j) over d groups of u units in all: d * intercept + slope * u, the same
    /// for every split (the bubble is affine in P). Each group needs S_j >= z / (1 - rho_j), so
    /// z <= S / inverse_sum: the bound.
    [[nodiscard]] static double inverse_sum(int groups, int units, int k) {
        return double(groups) * Bubble::intercept(k) + Bubble::slope(k) * double(units);
    }

    /// Whether `r` can make d groups with z > alpha, by bin covering's capped bound: each group
    /// needs W > alpha * intercept over the weights g_t - alpha * slope (see node), and a unit
    /// adds at most that much to its group (more is wasted), so d <= sum_t r_t min(w_t, cap) / cap.
    /// Memory likewise: d <= sum_t r_t min(m_t, MIN_mem) / MIN_mem.
    [[nodiscard]] bool coverable(std::span<const int> r, int d, double alpha) const {
        const double cap = alpha * Bubble::intercept(k_), sl = Bubble::slope(k_);
        double w = 0, m = 0;
        for (std::size_t t = 0; t < r.size(); ++t) {
            w += r[t] * std::clamp(classes_[t].power - alpha * sl, 0.0, cap);
            if (min_memory_ > 0) m += r[t] * std::min(classes_[t].memory, min_memory_);
        }
        if (cap > 0 && w < double(d) * cap * (1 - 1e-12)) return false;
        return !(min_memory_ > 0) || m >= double(d) * min_memory_ * (1 - 1e-12);
    }

    /// One node's enumeration of its next group v (v[t0] >= 1): a group lifts the node above
    /// `a` only if S_v / (i + s P_v) > a and (S_r - S_v) / ((d-1) i + s (U_r - P_v)) > a, i.e.
    /// W(v) = sum_t v_t (g_t - a s) lies in (a i, S_r - a ((d-1) i + s U_r)): a window on a
    /// linear function of v, pruned class by class with the suffix extremes of W.
    struct node {
        std::span<const int> r;
        int* v;
        int* rest;
        std::uint64_t ri;
        int d, ur;
        double sr, a, best;
        std::uint64_t best_first;
        double lo, hi;
        double* w;        ///< g_t - a s
        double* min_add;  ///< smallest W the classes after t can add
        double* max_add;
    };

    void set_window(node& n) const {
        const double i = Bubble::intercept(k_), sl = Bubble::slope(k_);
        const std::size_t T = n.r.size();
        n.lo = n.a * i;
        n.hi = n.sr - n.a * (double(n.d - 1) * i + sl * double(n.ur));
        n.min_add[T] = n.max_add[T] = 0;
        for (std::size_t t = T; t-- > 0;) {
            n.w[t] = classes_[t].power - n.a * sl;
            n.min_add[t] = n.min_add[t + 1] + n.r[t] * std::min(0.0, n.w[t]);
            n.max_add[t] = n.max_add[t + 1] + n.r[t] * std::max(0.0, n.w[t]);
        }
    }

    template <class Admits>
    void enumerate(node& n, std::size_t t, std::size_t t0, int P, stop_poll& poll, Admits& admits) {
        const std::size_t T = n.r.size();
        if (t == T) {
            if (P < least_ || n.ur - P < (n.d - 1) * least_) return;
            double sv = 0;
            for (std::size_t c = 0; c < T; ++c) sv += n.v[c] * classes_[c].power;
            const double g = sv * bubble_efficiency<Bubble>(P, k_);
            const double rest_bound = (n.sr - sv) / inverse_sum(n.d - 1, n.ur - P, k_);
            if (std::min(g, rest_bound) <= n.a) return;
            const std::uint64_t vi = index_of({n.v, T});
            if (!admitted(vi, {n.v, T}, admits)) return;
            for (std::size_t c = 0; c < T; ++c) n.rest[c] = n.r[c] - n.v[c];
            const double child = search(n.ri - vi, {n.rest, T}, n.d - 1, n.a, poll, admits);
            const double z = std::min(g, child);
            if (z > n.best) {
                n.best = z;
                n.best_first = vi;
                if (z > n.a) {
                    n.a = z;
                    set_window(n);
                }
            }
            return;
        }
        const int from = t == t0 ? 1 : 0;
        for (int c = from; c <= n.r[t]; ++c) {
            if (poll()) return;
            // W of the classes before t, at the current weights (a rises as the node improves)
            double Wc = c * n.w[t];
            for (std::size_t b = 0; b < t; ++b) Wc += n.v[b] * n.w[b];
            const int Pc = P + c;
            if (n.ur - Pc < (n.d - 1) * least_) break;  // the other groups need least_ units each
            // W can still end inside the window?
            if (Wc + n.min_add[t + 1] >= n.hi) {
                if (n.w[t] >= 0) break;  // more of class t only raises W
                continue;
            }
            if (Wc + n.max_add[t + 1] <= n.lo) continue;
            n.v[t] = c;
            enumerate(n, t + 1, t0, Pc, poll, admits);
            n.v[t] = 0;
        }
    }

    /// The best z over splits of `r` into `d` admitted groups; exact when above `alpha`, else
    /// some value <= alpha.
    template <class Admits>
    double search(std::uint64_t ri, std::span<const int> r, int d, double alpha, stop_poll& poll, Admits& admits) {
        constexpr double none = -std::numeric_limits<double>::infinity();
        if (++stats.nodes > node_budget && node_budget > 0) {
            stats.budget_spent = true;
            poll.halt();
            return none;
        }
        int ur = 0;
        double sr = 0, mr = 0;
        for (std::size_t t = 0; t < r.size(); ++t) ur += r[t], sr += r[t] * classes_[t].power, mr += r[t] * classes_[t].memory;
        if (ur < d * least_) return none;
        if (min_memory_ > 0 && mr < double(d) * min_memory_) return none;
        if (d == 1) return admitted(ri, r, admits) ? group_power(r, k_) : none;
        const double bound = sr / inverse_sum(d, ur, k_);
        if (bound <= alpha) return bound;
        const std::uint64_t key = ri * std::uint64_t(units_ + 1) + std::uint64_t(d);
        if (const entry* e = memo_.find(key)) {
            if (e->exact || e->value <= alpha) return e->value;
        }
        if (poll()) return none;
        if (!coverable(r, d, alpha)) return alpha;

        const std::size_t T = r.size();
        std::size_t t0 = 0;
        while (r[t0] == 0) ++t0;
        int* v = scratch_.data() + std::size_t(d) * T * 2;  // this depth's buffers
        double* w = weights_.data() + std::size_t(d) * (3 * T + 2);
        std::fill(v, v + T, 0);
        node n{r, v, v + T, ri, d, ur, sr, alpha, none, 0, 0, 0, w, w + T, w + 2 * T + 1};
        set_window(n);
        enumerate(n, 0, t0, 0, poll, admits);
        if (poll.stopped()) return none;
        const bool exact = n.best > alpha;
        const entry e{exact ? n.best : alpha, n.best_first, exact};
        if (entry* old = memo_.find(key)) *old = e;  // a fail-low bound, now exact or re-proved
        else memo_.insert(key, e);
        return e.value;
    }

    /// The groups of the best split of (counts, d), from the memo's exact entries.
    void rebuild(std::vector<int> r, int d, std::vector<std::vector<int>>& out) const {
        out.clear();
        std::vector<int> v(r.size());
        for (; d > 1; --d) {
            const std::uint64_t key = index_of(r) * std::uint64_t(units_ + 1) + std::uint64_t(d);
            const entry* e = memo_.find(key);
            if (!e || !e->exact) throw model_error("device grouping: internal error rebuilding the best split");
            decode(e->first, v);
            out.push_back(v);
            for (std::size_t t = 0; t < r.size(); ++t) r[t] -= v[t];
        }
        out.push_back(r);
    }

    std::vector<std::size_t> order_;  ///< search class t is the caller's order_[t]
    std::vector<int> caller_;         ///< a group in the caller's order, for admits
    std::vector<unit_class> classes_;
    std::vector<int> counts_;
    std::vector<std::uint64_t> radix_;
    std::vector<signed char> admitted_;
    std::vector<int> scratch_;
    std::vector<int> greedy_, greedy_size_;  ///< greedy's groups (rows) and their sizes
    std::vector<double> greedy_power_;
    std::vector<double> weights_;
    mutable flat_memo<std::uint64_t, entry, bytes_hash<std::uint64_t>> memo_{4096};
    double min_memory_ = 0, power_all_ = 0;
    int units_ = 0, k_ = 1;
    int least_ = 1;  ///< units every admitted group has at least (least_admitted)
};

/// The straightforward version: every partition of the units into groups (restricted growth
/// strings), for tests and the benchmark's ratio. Exponential: pools of about a dozen units.
template <class Bubble = balanced_bubble, class Admits>
[[nodiscard]] std::optional<device_grouping> brute_force_grouping(const grouping_problem& in, Admits&& admits) {
    std::vector<int> cls;  // class of each unit
    for (std::size_t t = 0; t < in.classes.size(); ++t)
        for (int i = 0; i < in.classes[t].count; ++i) cls.push_back(int(t));
    const int n = int(cls.size());
    if (n == 0) return std::nullopt;
    if (n > 16) throw model_error("brute_force_grouping: at most 16 units");
    std::vector<int> label(std::size_t(n), 0), high(std::size_t(n), 0);
    std::optional<device_grouping> best;
    const std::size_t T = in.classes.size();
    for (;;) {
        const int d = *std::max_element(label.begin(), label.end()) + 1;
        const int k = in.microbatches.per_group(d);
        std::vector<std::vector<int>> groups(std::size_t(d), std::vector<int>(T, 0));
        for (int i = 0; i < n; ++i) ++groups[std::size_t(label[std::size_t(i)])][std::size_t(cls[std::size_t(i)])];
        bool ok = k >= 1;
        double z = std::numeric_limits<double>::infinity();
        for (const auto& g : groups) {
            if (!ok) break;
            double s = 0, m = 0;
            int p = 0;
            for (std::size_t t = 0; t < T; ++t) s += g[t] * in.classes[t].power, m += g[t] * in.classes[t].memory, p += g[t];
            if ((in.min_memory > 0 && m < in.min_memory) || !admits(std::span<const int>(g))) ok = false;
            else z = std::min(z, s * bubble_efficiency<Bubble>(p, k));
        }
        if (ok && (!best || z * d > best->value * (1 + detail::grouping_eps))) best = device_grouping{groups, k, z, z * d};
        // next restricted growth string
        int i = n - 1;
        for (; i > 0; --i)
            if (label[std::size_t(i)] <= high[std::size_t(i - 1)]) break;
        if (i == 0) break;
        ++label[std::size_t(i)];
        for (int j = i; j < n; ++j) {
            if (j > i) label[std::size_t(j)] = 0;
            high[std::size_t(j)] = std::max(j > 0 ? high[std::size_t(j - 1)] : 0, label[std::size_t(j)]);
        }
    }
    return best;
}

}  // namespace hetplan::search
