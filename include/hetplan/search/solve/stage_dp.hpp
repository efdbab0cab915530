#pragma once
// Sailor's stage-assignment dynamic program (§4.2.2, Eq. 1, Listing 1) for one stage_problem: a
// concepts::solver.
//
//   T[i][R][prev] = best over compositions r of stage i drawn from the remaining resources R
//                   of combine(stage i with r, T[i+1][R - r][r])
//
// r gives each (GPU type, zone) cell a replica count (D in total) and each type one TP degree.
// The memo key is explicit and hashable: stage index, remaining GPUs per cell, and what the
// next stage needs to know about this one to price the pipeline boundary. Two exact departures
// from the paper's scalar DP, both needed to match the simulator on every instance:
//  - values are Pareto fronts of suffix_terms (see pareto_front.hpp), not one number;
//  - the boundary between stages i-1 and i is priced from both stages' compositions, pairing
//    replica k with replica k in worker order, exactly as the simulator does. With
//    `exact_boundaries` off, the key keeps only which cells the previous stage used and the
//    boundary is bounded by its slowest cell pair (fewer states; plans are re-priced exactly).
// Prices come from the time model (concepts::stage_time_model: p2p_time, sync_time; compute in
// the instance), combined by the one 1F1B formula (cost/time/one_f_one_b.hpp); money (§4.2.3) and
// an objective's own measure are carried as more terms, so budgets and any objective are exact
// at the root instead of the paper's assume-the-straggler loop (docs/reproduction.md).
// The objective enters the search: the root picks its best admitted entry, and partial solutions
// whose floors (bound/instance_floors.hpp) cannot beat the cut-off or meet the constraints are
// dropped. Placements are judged by the instance's pruners as the compositions are enumerated.
//
// Hot loop: after warm-up no allocation (flat memo tables keep their capacity, fronts and the
// entry pool are reused) and no virtual call; the stop condition is polled every 4096
// compositions.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "hetplan/concepts/solver.hpp"
#include "hetplan/cost/time/one_f_one_b.hpp"
#include "hetplan/search/bounded_solve.hpp"
#include "hetplan/search/memo.hpp"
#include "hetplan/search/objective.hpp"
#include "hetplan/search/solve/pareto_front.hpp"
#include "hetplan/search/stage_problem.hpp"

namespace hetplan::search {

using cell_counts = std::array<std::uint16_t, max_cells>;

/// One stage's replica set: replicas per cell and TP per type (0 = absent).
struct composition {
    cell_counts n{};
    std::array<std::uint8_t, max_types> tp{};
    friend bool operator==(const composition&, const composition&) = default;
};

/// A solution: its terms and one composition per stage. `stages` views the solver's own storage
/// (so that solving allocates nothing): valid until the solver's next solve.
struct dp_solution {
    objective_terms terms;  ///< the DP's own pricing: iteration, USD, measure
    seconds iteration{};
    usd cost{};
    std::span<const composition> stages;
};

struct dp_stats {
    std::size_t states = 0;        ///< memoised subproblems
    std::size_t compositions = 0;  ///< (state, composition) pairs evaluated
    std::size_t entries = 0;       ///< front entries stored
    std::size_t abandoned = 0;     ///< instances given up at the memory limit
};

namespace detail {

/// The cells one typing of a stage can draw replicas from, in cell order, with how many
/// replicas each could hold (`left` / the type's TP) and their price per replica.
struct typed_cells {
    std::array<std::uint16_t, max_cells> cap{};
    std::array<std::uint8_t, max_cells> order{};  ///< cell index of each position
    std::array<double, max_cells> price{};        ///< USD/s per replica
    std::size_t k = 0;
};

template <class SP>
[[nodiscard]] bool type_cells(const SP& sp, const tp_choice& choice, const cell_counts& left, typed_cells& out) {
    const auto& cells = sp.cells->cells;
    out.k = 0;
    std::uint8_t reachable = 0;
    int total = 0;
    for (std::size_t c = 0; c < cells.size(); ++c) {
        if (!(choice.types >> cells[c].type & 1u)) continue;
        const int tp = choice.tp[cells[c].type];
        const auto cap = static_cast<std::uint16_t>(left[c] / tp);
        if (cap == 0) continue;
        reachable |= static_cast<std::uint8_t>(1u << cells[c].type);
        out.cap[out.k] = cap;
        out.price[out.k] = tp * sp.usd_per_gpu_second[cells[c].type];
        out.order[out.k++] = static_cast<std::uint8_t>(c);
        total += cap;
    }
    return reachable == choice.types && total >= sp.D;
}

/// What may still join a placement `used` from position `from` on: the positions the pruners
/// keep with it (pruners of placements are monotone, so a position refused now stays refused),
/// and per position the replicas and types that those from it on could add. The enumerations
/// below stop a branch that cannot reach D replicas or every type of the typing: without it a
/// stage whose cells span two regions (H5) explores every way to under-fill the first (a
/// 2,048-GPU pool: seconds per instance, none of it a composition).
struct reach {
    std::uint32_t joinable = 0;  ///< bit j: position j may join
    std::array<int, max_cells + 1> replicas{};
    std::array<std::uint8_t, max_cells + 1> types{};
};

template <class SP>
void reach_from(const SP& sp, int stage, const typed_cells& tc, std::uint8_t typing, std::uint32_t used, std::size_t from,
                std::uint32_t candidates, reach& out) {
    const auto& cells = sp.cells->cells;
    out.joinable = 0;
    out.replicas[tc.k] = 0;
    out.types[tc.k] = 0;
    for (std::size_t j = tc.k; j-- > from;) {
        out.replicas[j] = out.replicas[j + 1];
        out.types[j] = out.types[j + 1];
        if (!(candidates >> j & 1u) || !sp.keeps(stage, used | std::uint32_t{1} << tc.order[j], typing)) continue;
        out.joinable |= std::uint32_t{1} << j;
        out.replicas[j] += tc.cap[j];
        out.types[j] = static_cast<std::uint8_t>(out.types[j] | 1u << cells[tc.order[j]].type);
    }
}

}  // namespace detail

/// Calls f(composition, choice) for every replica set of `stage` that fits in `left` and whose
/// placement the instance's pruners keep, in a fixed order (typings, then counts
/// lexicographically over the cells, first cell largest).
template <class SP, class F>
void for_each_composition(const SP& sp, int stage, const cell_counts& left, F&& f) {
    const auto& cells = sp.cells->cells;
    detail::typed_cells tc;
    std::array<detail::reach, max_cells + 1> reach;  // per number of cells joined (depth-first)
    for (const tp_choice& choice : sp.stages[static_cast<std::size_t>(stage)].choices) {
        if (!detail::type_cells(sp, choice, left, tc)) continue;
        detail::reach_from(sp, stage, tc, choice.types, 0u, 0, ~std::uint32_t{0}, reach[0]);
        composition comp;
        comp.tp = choice.tp;
        // Depth-first over the positions, largest count first; `used` is the placement so far,
        // judged by the pruners whenever a cell joins it.
        auto rec = [&](auto&& self, std::size_t j, int rest, std::uint32_t used, std::uint8_t seen, std::size_t joined) -> void {
            const detail::reach& r = reach[joined];
            if (rest > r.replicas[j] || (choice.types & ~(seen | r.types[j])) != 0) return;
            if (j == tc.k) {
                if (rest == 0) f(comp, choice);
                return;
            }
            const std::size_t c = tc.order[j];
            if (r.joinable >> j & 1u) {
                const std::uint32_t with = used | std::uint32_t{1} << c;
                const auto typed = std::uint8_t(seen | 1u << cells[c].type);
                detail::reach_from(sp, stage, tc, choice.types, with, j + 1, r.joinable, reach[joined + 1]);
                const int lo = std::max(1, rest - reach[joined + 1].replicas[j + 1]);
                for (int v = std::min<int>(rest, tc.cap[j]); v >= lo; --v) {
                    comp.n[c] = static_cast<std::uint16_t>(v);
                    self(self, j + 1, rest - v, with, typed, joined + 1);
                }
            }
            comp.n[c] = 0;
            self(self, j + 1, rest, used, seen, joined);
        };
        rec(rec, 0, sp.D, 0u, std::uint8_t{0}, 0);
    }
}

/// The last stage's compositions as far as its price can tell them apart. With boundaries
/// bounded by cell pairs, a last stage's terms depend on its typing, the cells it uses and
/// which of them hold more than one replica (the ring's edges); only the rate is linear in the
/// counts. So per (typing, pattern) one composition stands for all: the cheapest (money) and,
/// among equals, the first in for_each_composition's order, the one that order's Pareto front
/// keeps. They are called in that order too, so the fronts are the same entry for entry, and
/// C(D-1, k-1) compositions over k cells become at most 3^k patterns. `reps` is the caller's
/// scratch.
template <class SP, class F>
void for_each_last_pattern(const SP& sp, int stage, const cell_counts& left, bool money, std::vector<composition>& reps, F&& f) {
    const auto& cells = sp.cells->cells;
    detail::typed_cells tc;
    std::array<detail::reach, max_cells + 1> reach;
    std::array<std::uint8_t, max_cells> fill{};
    for (const tp_choice& choice : sp.stages[static_cast<std::size_t>(stage)].choices) {
        if (!detail::type_cells(sp, choice, left, tc)) continue;
        detail::reach_from(sp, stage, tc, choice.types, 0u, 0, ~std::uint32_t{0}, reach[0]);
        reps.clear();
        composition comp;
        comp.tp = choice.tp;
        // The replicas beyond each cell's least count (1, or 2 where it holds more than one) go
        // to the cells that hold more: cheapest first (money), else first in order; earlier
        // cells first among equals.
        auto place = [&](int low) {
            std::size_t m = 0;
            for (std::size_t j = 0; j < tc.k; ++j)
                if (comp.n[tc.order[j]] == 2) fill[m++] = static_cast<std::uint8_t>(j);
            if (money)  // stable insertion sort: at most 16 cells, and std::stable_sort may allocate a buffer
                for (std::size_t a = 1; a < m; ++a)
                    for (std::size_t b = a; b > 0 && tc.price[fill[b]] < tc.price[fill[b - 1]]; --b) std::swap(fill[b], fill[b - 1]);
            composition r = comp;
            int rest = sp.D - low;
            for (std::size_t q = 0; q < m && rest > 0; ++q) {
                const int more = std::min(rest, tc.cap[fill[q]] - 2);
                r.n[tc.order[fill[q]]] = static_cast<std::uint16_t>(2 + more);
                rest -= more;
            }
            reps.push_back(r);
        };
        // Depth-first over the positions: absent, one replica, or more. `low`/`high`: the least
        // and most replicas the pattern so far can hold.
        auto rec = [&](auto&& self, std::size_t j, int low, int high, std::uint32_t used, std::uint8_t seen, std::size_t joined) -> void {
            const detail::reach& r = reach[joined];
            if (low > sp.D || high + r.replicas[j] < sp.D || (choice.types & ~(seen | r.types[j])) != 0) return;
            if (j == tc.k) return place(low);
            const std::size_t c = tc.order[j];
            if (r.joinable >> j & 1u) {
                const std::uint32_t with = used | std::uint32_t{1} << c;
                const auto typed = std::uint8_t(seen | 1u << cells[c].type);
                detail::reach_from(sp, stage, tc, choice.types, with, j + 1, r.joinable, reach[joined + 1]);
                if (tc.cap[j] >= 2) {
                    comp.n[c] = 2;
                    self(self, j + 1, low + 2, high + tc.cap[j], with, typed, joined + 1);
                }
                comp.n[c] = 1;
                self(self, j + 1, low + 1, high + 1, with, typed, joined + 1);
            }
            comp.n[c] = 0;
            self(self, j + 1, low, high, used, seen, joined);
        };
        rec(rec, 0, 0, 0, 0u, std::uint8_t{0}, 0);
        // for_each_composition's order: counts lexicographically over the cells, largest first.
        std::sort(reps.begin(), reps.end(), [](const composition& a, const composition& b) { return a.n > b.n; });
        for (const composition& r : reps) f(r, choice);
    }
}

/// `Memo` is the memo table (search::memo_table): flat_memo by default, node_memo (a std::
/// unordered_map) for comparison.
template <concepts::time_model Time = sailor_time_model, template <class, class, class> class Memo = flat_memo>
class stage_dp {
public:
    explicit stage_dp(Time tm = {}, bool floors = true) : tm_(std::move(tm)), floors_(floors) {}

    /// Memory one instance's tables may take (memo and fronts, estimated); an instance that
    /// needs more is given up (solve returns none, stats().abandoned counts it), so a large pool
    /// degrades to the plans of the instances that fit rather than to gigabytes.
    void set_memory_limit(std::size_t bytes) { max_bytes_ = bytes; }
    [[nodiscard]] std::size_t memory_limit() const { return max_bytes_; }

    [[nodiscard]] static constexpr const char* name() { return "stage DP"; }
    [[nodiscard]] const Time& time_model() const { return tm_; }
    /// Whether partial solutions are pruned with the instance's floors (off: the straightforward DP).
    [[nodiscard]] bool floors() const { return floors_; }

    /// Fills the instance's floors with this solver's time model (the planner calls it once per
    /// instance, before asking the bound).
    template <class Pr>
    void prepare(stage_problem<Pr>& sp) const {
        make_instance_bound(sp.bound, sp, tm_);
    }

    /// Solves one instance: the entry that minimises the objective among those it admits, under
    /// the cut-off; nullopt when none (or when stopped: stopped() says so).
    template <class Pr, concepts::objective O>
    [[nodiscard]] std::optional<dp_solution> solve(const problem& pb, const stage_problem<Pr>& sp, const O& o, const solve_limits& lim) {
        (void)pb;
        begin(sp, o, lim);
        if (!bound_->feasible()) return std::nullopt;  // exact: the floors' resource test is necessary
        cell_counts left{};
        for (std::size_t c = 0; c < sp.cells->cells.size(); ++c) left[c] = static_cast<std::uint16_t>(sp.cells->cells[c].capacity);
        const auto [off, len] = solve_state(sp, o, 0, left, composition{});
        stats_.states += memo_.size();
        stats_.entries += pool_.size();
        if (over_) ++stats_.abandoned;
        if (stopped_ || over_) return std::nullopt;
        return root(sp, o, off, len);
    }

    [[nodiscard]] bool stopped() const { return stopped_; }
    [[nodiscard]] const dp_stats& stats() const { return stats_; }
    void reset_stats() { stats_ = {}; }

private:
    static constexpr std::uint32_t none = ~std::uint32_t{0};

    struct entry {
        suffix_terms terms;
        std::uint32_t child = none;  ///< index in pool_ of the next stage's entry
        composition comp;
    };

    // Explicit key: stage, remaining GPUs per cell, and the previous stage's composition (or only
    // its cells, with inexact boundaries). All 16-bit fields, so no padding bytes.
    struct key {
        std::uint16_t stage = 0;
        cell_counts left{};
        cell_counts prev{};
        std::array<std::uint8_t, max_types> prev_tp{};
        friend bool operator==(const key& a, const key& b) { return std::memcmp(&a, &b, sizeof(key)) == 0; }
    };
    static_assert(std::has_unique_object_representations_v<key>, "dp key must have no padding");
    struct span {
        std::uint32_t off = 0, len = 0;
    };
    struct boundary {
        double fwd = 0, bwd = 0;  ///< activations a -> b, gradients b -> a (slowest pair)
        double egress = 0;        ///< USD
    };
    struct ring_price {
        double time = 0, egress = 0;
    };
    /// Cache keys: (stage, x, y) in two 64-bit words, no padding, hashed bytewise.
    struct key3 {
        std::uint64_t a = 0, b = 0;
        key3() = default;
        key3(std::uint64_t stage, std::uint64_t x, std::uint64_t y) : a(stage | x << 16), b(y) {}  // stage < 2^16, x < 2^48
        friend bool operator==(const key3&, const key3&) = default;
    };

    template <class SP, class O>
    void begin(const SP& sp, const O& o, const solve_limits& lim) {
        cutoff_ = lim.cutoff;
        poll_ = stop_poll(lim.stop);
        stopped_ = over_ = false;
        money_ = uses_money(o);
        measure_ = concepts::measured_objective<O>;
        per_replica_ = sp.per_replica;
        if (!floors_) {
            if (zero_.stages.size() != static_cast<std::size_t>(sp.P)) zero_ = instance_bound::zero(static_cast<std::size_t>(sp.P));
            // Feasibility is still decided by the floors' resource test when they exist.
            zero_.straggler = sp.bound.feasible() ? 0.0 : std::numeric_limits<double>::infinity();
            bound_ = &zero_;
        } else {
            bound_ = &sp.bound;
        }
        measure_rate_.fill(0);
        if constexpr (concepts::measured_objective<O>)
            for (std::size_t c = 0; c < sp.cells->cells.size(); ++c)
                measure_rate_[c] = o.gpu_rate(*sp.pb, sp.cells->cells[c].gpu, sp.cells->cells[c].zone);
        memo_.clear();
        pool_.clear();
        sync_cache_.clear();
        bound_cache_.clear();
        p2p_cache_.clear();
        if (scratch_.size() < static_cast<std::size_t>(sp.P) + 1) scratch_.resize(static_cast<std::size_t>(sp.P) + 1);
        if (ring_.capacity() < static_cast<std::size_t>(sp.D)) ring_.reserve(static_cast<std::size_t>(sp.D));
    }

    /// Root: the admitted entry with the least objective value; ties: cheaper, then faster, then
    /// earlier (deterministic).
    template <class SP, class O>
    [[nodiscard]] std::optional<dp_solution> root(const SP&, const O& o, std::uint32_t off, std::uint32_t len) {
        std::optional<std::uint32_t> best;
        objective_terms best_t;
        double best_v = 0;
        for (std::uint32_t k = off; k < off + len; ++k) {
            const objective_terms t = terms_at(pool_[k].terms);
            if (!o.admits(t)) continue;
            const double v = o.value(t);
            if (!best || v < best_v || (v == best_v && (t.usd < best_t.usd || (t.usd == best_t.usd && t.iteration < best_t.iteration))))
                best = k, best_t = t, best_v = v;
        }
        if (!best) return std::nullopt;
        dp_solution out;
        out.terms = best_t;
        out.iteration = seconds{best_t.iteration};
        out.cost = usd{best_t.usd};
        chosen_.clear();
        for (std::uint32_t k = *best; k != none; k = pool_[k].child) chosen_.push_back(pool_[k].comp);
        out.stages = chosen_;
        return out;
    }

    /// The terms of a complete plan from its root entry.
    [[nodiscard]] objective_terms terms_at(const suffix_terms& e) const {
        objective_terms t;
        t.iteration = one_f_one_b_iteration(e.sum, e.strag, per_replica_, e.sync, e.upd);
        t.usd = money_ ? e.rate * t.iteration + e.comm : 0.0;
        t.measure = measure_ ? e.mrate * t.iteration : 0.0;
        return t;
    }

    /// Whether a plan whose stages from `i` on have (at best) these terms misses the objective:
    /// the stages before `i` are taken at their floors (bound/instance_floors.hpp), which hold
    /// for any prefix, so the memo stays exact. Floors are shrunk by the slack first.
    template <class O>
    [[nodiscard]] bool beyond(const O& o, int i, const suffix_terms& e) const {
        const instance_bound& b = *bound_;
        const auto at = static_cast<std::size_t>(i);
        const double strag = std::max({e.strag, b.straggler, b.prefix.strag[at]});
        objective_terms f;
        f.iteration = one_f_one_b_iteration(b.prefix.sum[at] + e.sum, strag, per_replica_, std::max(e.sync, b.prefix.sync[at]),
                                            std::max(e.upd, b.prefix.update[at]));
        if (money_) f.usd = (b.prefix.rate[at] + e.rate) * f.iteration + e.comm;
        if (measure_) f.measure = e.mrate * f.iteration;
        constexpr double over = 1 + bound_slack;
        f.iteration /= over, f.usd /= over, f.measure /= over;
        return !o.admits(f) || o.value(f) > cutoff_;
    }

    /// The same for stage `i` alone, known by its terms except the activations it will send
    /// on, with every later stage at its floors.
    template <class O>
    [[nodiscard]] bool beyond_stage(const O& o, int i, suffix_terms e) const {
        const instance_bound& b = *bound_;
        const auto at = static_cast<std::size_t>(i);
        const double own = e.sum + b.stages[at].p2p_out;
        e.sum = own + b.suffix.sum[at + 1];
        e.strag = std::max(own, b.suffix.strag[at + 1]);
        e.sync = std::max(e.sync, b.suffix.sync[at + 1]);
        e.upd = std::max(e.upd, b.suffix.update[at + 1]);
        e.rate += b.suffix.rate[at + 1];
        return beyond(o, i, e);
    }

    /// Endpoint of cell `c` at the composition's TP for its type.
    template <class SP>
    [[nodiscard]] static endpoint at(const SP& sp, std::size_t c, const composition& comp) {
        const auto& rc = sp.cells->cells[c];
        return {rc.zone, rc.gpu, comp.tp[rc.type]};
    }

    /// The time model's p2p time for one message of stage `s`'s activations, both ways,
    /// memoised per instance.
    template <class SP>
    std::pair<double, double> p2p(const SP& sp, int s, endpoint a, endpoint b) {
        const key3 k{std::uint32_t(s), a.key(), b.key()};
        if (const auto* hit = p2p_cache_.find(k)) return *hit;
        const bytes size = sp.stages[static_cast<std::size_t>(s)].activations;
        const std::pair<double, double> v{p2p_time_of(tm_, *sp.pb, a, b, size).value, p2p_time_of(tm_, *sp.pb, b, a, size).value};
        p2p_cache_.insert(k, v);
        return v;
    }

    /// Boundary between stage `s` (composition a) and stage s+1 (composition b): replica k of
    /// one pairs with replica k of the other in worker order, as the simulator pairs them.
    template <class SP>
    boundary exact_boundary(const SP& sp, int s, const composition& a, const composition& b) {
        const auto& net = sp.pb->hw.network;
        const bytes size = sp.stages[static_cast<std::size_t>(s)].activations;
        boundary out;
        std::size_t ca = 0, cb = 0;
        int left_a = 0, left_b = 0, pos = 0;
        while (pos < sp.D) {
            while (left_a == 0) left_a = a.n[ca++];
            while (left_b == 0) left_b = b.n[cb++];
            const int run = std::min(left_a, left_b);
            const endpoint ea = at(sp, ca - 1, a), eb = at(sp, cb - 1, b);
            const auto [f, w] = p2p(sp, s, ea, eb);
            out.fwd = std::max(out.fwd, f);
            out.bwd = std::max(out.bwd, w);
            if (money_ && ea.zone != eb.zone) {
                double mb = 0;
                for (int q = pos; q < pos + run; ++q) mb += sp.microbatches_at(q);
                const bytes moved = size * mb;
                out.egress += (net.egress_price(ea.zone, eb.zone) * moved + net.egress_price(eb.zone, ea.zone) * moved).value;
            }
            left_a -= run;
            left_b -= run;
            pos += run;
        }
        return out;
    }

    /// Which cells a composition uses and each type's TP, packed (cache keys).
    template <class SP>
    [[nodiscard]] static std::uint64_t shape(const SP& sp, const composition& c) {
        static_assert(max_cells + 3 * max_types <= 64, "cell mask and TP exponents must pack into 64 bits");
        std::uint64_t mask = 0, tps = 0;
        for (std::size_t q = 0; q < sp.cells->cells.size(); ++q) mask |= std::uint64_t(c.n[q] > 0) << q;
        for (std::size_t t = 0; t < max_types; ++t) tps |= std::uint64_t(std::bit_width(unsigned(c.tp[t]))) << (3 * t);
        return mask | tps << max_cells;
    }

    /// Upper bound on the boundary from the cells each side uses: the slowest pair of cells, and
    /// all traffic at the dearest cross-zone price when any pair crosses zones. Depends only on
    /// the two shapes: memoised per instance.
    template <class SP>
    boundary bound_boundary(const SP& sp, int s, const composition& a, const composition& b) {
        const key3 k{std::uint32_t(s), shape(sp, a), shape(sp, b)};
        if (const auto* hit = bound_cache_.find(k)) return *hit;
        const auto& net = sp.pb->hw.network;
        const bytes size = sp.stages[static_cast<std::size_t>(s)].activations;
        const std::size_t C = sp.cells->cells.size();
        boundary out;
        usd_per_byte fwd_price{0}, bwd_price{0};
        for (std::size_t x = 0; x < C; ++x) {
            if (a.n[x] == 0) continue;
            for (std::size_t y = 0; y < C; ++y) {
                if (b.n[y] == 0) continue;
                const endpoint ea = at(sp, x, a), eb = at(sp, y, b);
                const auto [f, w] = p2p(sp, s, ea, eb);
                out.fwd = std::max(out.fwd, f);
                out.bwd = std::max(out.bwd, w);
                fwd_price = max(fwd_price, net.egress_price(ea.zone, eb.zone));
                bwd_price = max(bwd_price, net.egress_price(eb.zone, ea.zone));
            }
        }
        if (money_) out.egress = ((fwd_price + bwd_price) * (size * double(sp.microbatches))).value;
        bound_cache_.insert(k, out);
        return out;
    }

    /// The stage's all-reduce over its replicas in worker order, priced by the time model, and
    /// the egress of its cross-zone ring edges (§4.3). It depends on which cells take part, which
    /// hold more than one replica (edges inside a cell) and the TPs: memoised on those.
    template <class SP>
    ring_price stage_sync(const SP& sp, int stage, const composition& c) {
        std::uint32_t multi = 0;
        for (std::size_t q = 0; q < sp.cells->cells.size(); ++q) multi |= std::uint32_t(c.n[q] > 1) << q;
        const key3 k{std::uint32_t(stage), multi, shape(sp, c)};
        if (const auto* hit = sync_cache_.find(k)) return *hit;
        const bytes size = sp.stages[static_cast<std::size_t>(stage)].gradients;
        ring_price out;
        if (sp.D > 1 && size.value > 0) {
            ring_.clear();
            for (std::size_t q = 0; q < sp.cells->cells.size(); ++q)
                for (int r = 0; r < c.n[q]; ++r) ring_.push_back(at(sp, q, c));
            out.time = sync_time_of(tm_, *sp.pb, ring_, size).value;
            if (money_) {
                const bytes per_edge = collective::ring_all_reduce_bytes_per_edge(sp.D, size);
                std::array<std::uint8_t, max_cells> present{};
                std::size_t n = 0;
                for (std::size_t q = 0; q < sp.cells->cells.size(); ++q)
                    if (c.n[q] > 0) present[n++] = static_cast<std::uint8_t>(q);
                for (std::size_t j = 0; j < n && n >= 2; ++j) {
                    const zone_id za = sp.cells->cells[present[j]].zone, zb = sp.cells->cells[present[(j + 1) % n]].zone;
                    if (za != zb) out.egress += (sp.pb->hw.network.egress_price(za, zb) * per_edge).value;
                }
            }
        }
        sync_cache_.insert(k, out);
        return out;
    }

    /// Returns the span of the front of state (i, left, prev) in pool_.
    template <class SP, class O>
    span solve_state(const SP& sp, const O& o, int i, const cell_counts& left, const composition& prev) {
        key k;
        k.stage = static_cast<std::uint16_t>(i);
        k.left = left;
        if (i > 0) {
            for (std::size_t q = 0; q < max_cells; ++q) k.prev[q] = sp.exact_boundaries ? prev.n[q] : static_cast<std::uint16_t>(prev.n[q] > 0);
            k.prev_tp = prev.tp;
        }
        if (const span* hit = memo_.find(k)) return *hit;

        auto& front = scratch_[static_cast<std::size_t>(i)];  // filled below, copied to pool_ at the end
        front.clear();
        const bool last = i + 1 == sp.P;
        const auto& cells = sp.cells->cells;
        // The boundary is priced from the key's view of the previous stage, so equal keys always
        // get equal fronts.
        composition seen_prev;
        seen_prev.n = k.prev;
        seen_prev.tp = k.prev_tp;

        auto visit = [&](const composition& comp, const tp_choice& choice) {
            ++stats_.compositions;
            if (stopped_ || over_ || (poll_() && (stopped_ = true)) || ((stats_.compositions & 4095) == 0 && (over_ = footprint() > max_bytes_)))
                return;
            const ring_price sync = stage_sync(sp, i, comp);
            double rate = 0, mrate = 0;
            cell_counts rest = left;
            for (std::size_t q = 0; q < cells.size(); ++q) {
                const int gpus = comp.n[q] * comp.tp[cells[q].type];
                rest[q] = static_cast<std::uint16_t>(rest[q] - gpus);
                rate += gpus * sp.usd_per_gpu_second[cells[q].type];
                mrate += gpus * measure_rate_[q];
            }
            boundary b;
            if (i > 0) b = sp.exact_boundaries ? exact_boundary(sp, i - 1, seen_prev, comp) : bound_boundary(sp, i - 1, seen_prev, comp);
            const double own = choice.compute.value + b.bwd;
            const double egress = sync.egress + b.egress;
            const suffix_terms mine{own, own, sync.time, choice.update.value, b.fwd, money_ ? rate : 0.0, money_ ? egress : 0.0,
                                    measure_ ? mrate : 0.0};
            if (last) {
                if (!beyond(o, i, mine)) pareto_insert(front, entry{mine, none, comp}, money_, measure_);
                return;
            }
            // Skip the subtree when even floors for every later stage miss the objective.
            suffix_terms alone = mine;
            alone.extra = 0;
            if (beyond_stage(o, i, alone)) return;
            const span next = solve_state(sp, o, i + 1, rest, comp);
            for (std::uint32_t c = next.off; c < next.off + next.len; ++c) {
                const suffix_terms& s = pool_[c].terms;
                const double t = own + s.extra;
                entry e{{s.sum + t, std::max(s.strag, t), std::max(s.sync, mine.sync), std::max(s.upd, mine.upd), b.fwd,
                         s.rate + mine.rate, s.comm + mine.comm, s.mrate + mine.mrate},
                        c, comp};
                if (!beyond(o, i, e.terms)) pareto_insert(front, e, money_, measure_);
            }
        };
        // A last stage's rate is its only term linear in the counts (unless a measure weighs cells).
        if (last && !sp.exact_boundaries && !measure_) for_each_last_pattern(sp, i, left, money_, reps_, visit);
        else for_each_composition(sp, i, left, visit);

        const span out{static_cast<std::uint32_t>(pool_.size()), static_cast<std::uint32_t>(front.size())};
        pool_.insert(pool_.end(), front.begin(), front.end());
        memo_.insert(k, out);
        return out;
    }

    /// Estimated bytes of this instance's tables (an open-addressing memo at most half full).
    [[nodiscard]] std::size_t footprint() const { return memo_.size() * 2 * (sizeof(key) + sizeof(span) + 8) + pool_.size() * sizeof(entry); }

    Time tm_;
    bool floors_ = true;
    std::size_t max_bytes_ = std::size_t{128} << 20;
    bool over_ = false;
    const instance_bound* bound_ = nullptr;
    instance_bound zero_;
    double cutoff_ = std::numeric_limits<double>::infinity();
    stop_poll poll_{nullptr};
    bool stopped_ = false, money_ = false, measure_ = false;
    int per_replica_ = 1;
    std::array<double, max_cells> measure_rate_{};
    Memo<key, span, bytes_hash<key>> memo_{};
    flat_memo<key3, ring_price, bytes_hash<key3>> sync_cache_{256};
    flat_memo<key3, boundary, bytes_hash<key3>> bound_cache_{256};
    flat_memo<key3, std::pair<double, double>, bytes_hash<key3>> p2p_cache_{256};
    std::vector<entry> pool_;
    std::vector<std::vector<entry>> scratch_;
    std::vector<endpoint> ring_;
    std::vector<composition> chosen_;  ///< the last solution's compositions
    std::vector<composition> reps_;    ///< the last stage's patterns (for_each_last_pattern)
    dp_stats stats_;
};

static_assert(concepts::check_solver<stage_dp<>, stage_problem<>, max_throughput>());
static_assert(concepts::check_solver<stage_dp<>, stage_problem<>, min_cost>());

}  // namespace hetplan::search
