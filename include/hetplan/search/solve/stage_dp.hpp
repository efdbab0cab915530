#pragma once
// Sailor's stage-assignment dynamic program (§4.2.2, Eq. 1, Listing 1) for one stage_problem.
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
// Money (§4.2.3) is carried as two more terms, so budgets and the cost objective are exact
// at the root instead of the paper's assume-the-straggler loop (documented in
// docs/reproduction.md).
#include <algorithm>
#include <array>
#include <cstdint>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include "hetplan/hardware/collectives.hpp"
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

enum class objective { throughput, cost };

/// Relative slack on every bound test: floors and the DP's sums may round differently, and a
/// partial solution is only dropped when it is clearly above the bound.
inline constexpr double bound_slack = 1e-9;

/// What the root of the DP optimises, and the optional constraint (§4.2.3).
struct dp_goal {
    objective target = objective::throughput;
    std::optional<double> max_cost;        ///< USD per iteration
    std::optional<double> min_throughput;  ///< iterations per second
    /// Branch and bound: partial solutions whose objective (iteration seconds or USD) can only
    /// end above this are dropped. Exact: every term only grows as stages are added.
    double bound = std::numeric_limits<double>::infinity();
    /// Prune with the instance's floors (prune/instance_bound.hpp); off, only the terms a
    /// partial solution already has are compared (the straightforward DP).
    bool floors = true;
};

struct dp_solution {
    seconds iteration{};
    usd cost{};
    std::vector<composition> stages;
};

struct dp_stats {
    std::size_t states = 0;        ///< memoised subproblems
    std::size_t compositions = 0;  ///< (state, composition) pairs evaluated
    std::size_t entries = 0;       ///< front entries stored
};

/// Calls f(composition) for every replica set of `stage` that fits in `left`, drawing from one
/// cell group, in a fixed order (groups, typings, then counts lexicographically, first cell
/// largest).
template <class F>
void for_each_composition(const stage_problem& sp, int stage, const cell_counts& left, F&& f) {
    const auto& cells = sp.cells->cells;
    const std::size_t C = cells.size();
    for (std::uint32_t group : sp.groups)
        for (const tp_choice& choice : sp.stages[static_cast<std::size_t>(stage)].choices) {
            std::array<std::uint16_t, max_cells> cap{};
            std::array<std::uint8_t, max_cells> order{};
            std::size_t k = 0;
            std::uint8_t reachable = 0;
            for (std::size_t c = 0; c < C; ++c) {
                if (!(group >> c & 1u) || !(choice.types >> cells[c].type & 1u)) continue;
                cap[k] = static_cast<std::uint16_t>(left[c] / choice.tp[cells[c].type]);
                if (cap[k] == 0) continue;
                reachable |= static_cast<std::uint8_t>(1u << cells[c].type);
                order[k++] = static_cast<std::uint8_t>(c);
            }
            if (reachable != choice.types) continue;
            std::array<int, max_cells + 1> suffix{};
            for (std::size_t j = k; j-- > 0;) suffix[j] = suffix[j + 1] + cap[j];
            if (suffix[0] < sp.D) continue;
            composition comp;
            comp.tp = choice.tp;
            // Depth-first over the cells in `order`, largest count first.
            auto rec = [&](auto&& self, std::size_t j, int rest) -> void {
                if (j + 1 == k) {
                    if (rest > cap[j]) return;
                    comp.n[order[j]] = static_cast<std::uint16_t>(rest);
                    std::uint8_t seen = 0;
                    for (std::size_t q = 0; q < k; ++q)
                        if (comp.n[order[q]] > 0) seen |= static_cast<std::uint8_t>(1u << cells[order[q]].type);
                    if (seen == choice.types) f(comp, choice);
                    comp.n[order[j]] = 0;
                    return;
                }
                const int lo = std::max(0, rest - suffix[j + 1]);
                for (int v = std::min<int>(rest, cap[j]); v >= lo; --v) {
                    comp.n[order[j]] = static_cast<std::uint16_t>(v);
                    self(self, j + 1, rest - v);
                }
                comp.n[order[j]] = 0;
            };
            rec(rec, 0, sp.D);
        }
}

/// The links and the all-reduce of one stage's replica set, priced as the simulator does.
struct stage_pricing {
    [[nodiscard]] static endpoint at(const stage_problem& sp, std::size_t cell, const composition& c) {
        const auto& rc = sp.cells->cells[cell];
        return {rc.zone, rc.gpu, c.tp[rc.type]};
    }

    /// Ring all-reduce over the replicas in worker order, and the egress it pays (§4.3).
    /// Only distinct ring edges matter: within a cell, between consecutive cells, and the wrap.
    [[nodiscard]] static std::pair<seconds, usd> sync(const stage_problem& sp, int stage, const composition& c) {
        const auto& net = sp.pb->hw.network;
        const bytes size = sp.stages[static_cast<std::size_t>(stage)].gradients;
        const int n = sp.D;
        if (n <= 1 || size.value <= 0) return {seconds{0}, usd{0}};
        std::array<std::uint8_t, max_cells> present{};
        std::size_t k = 0;
        for (std::size_t q = 0; q < sp.cells->cells.size(); ++q)
            if (c.n[q] > 0) present[k++] = static_cast<std::uint8_t>(q);
        // Replica k sits in present[cell_of(k)]; the shared collective prices the ring.
        std::array<int, max_cells + 1> starts{};
        for (std::size_t j = 0; j < k; ++j) starts[j + 1] = starts[j] + c.n[present[j]];
        auto cell_of = [&](int pos) {
            std::size_t j = 0;
            while (starts[j + 1] <= pos) ++j;
            return present[j];
        };
        const seconds t = collective::bucketed_ring_all_reduce(n, size, sp.bucket, [&](int pos) -> decltype(auto) {
            return net.between(at(sp, cell_of(pos), c), at(sp, cell_of((pos + 1) % n), c));
        });
        usd egress{0};
        if (sp.track_money && k >= 2) {
            const bytes per_edge = size * (2.0 * double(n - 1) / double(n));
            for (std::size_t j = 0; j < k; ++j) {
                const auto& a = sp.cells->cells[present[j]];
                const auto& b = sp.cells->cells[present[(j + 1) % k]];
                if (a.zone != b.zone) egress += net.egress_price(a.zone, b.zone) * per_edge;
            }
        }
        return {t, egress};
    }

    struct boundary {
        seconds fwd{}, bwd{};  ///< activations a -> b, gradients b -> a (slowest pair)
        usd egress{};
    };

    /// Boundary between stage `s` (composition a) and stage s+1 (composition b): replica k of
    /// one pairs with replica k of the other in worker order.
    [[nodiscard]] static boundary exact(const stage_problem& sp, int s, const composition& a, const composition& b) {
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
            out.fwd = max(out.fwd, net.between(ea, eb).transfer_time(size));
            out.bwd = max(out.bwd, net.between(eb, ea).transfer_time(size));
            if (sp.track_money && ea.zone != eb.zone) {
                double mb = 0;
                for (int q = pos; q < pos + run; ++q) mb += sp.microbatches_at(q);
                const bytes moved = size * mb;
                out.egress += net.egress_price(ea.zone, eb.zone) * moved + net.egress_price(eb.zone, ea.zone) * moved;
            }
            left_a -= run;
            left_b -= run;
            pos += run;
        }
        return out;
    }

    /// Upper bound on the boundary from the cells each side uses: the slowest pair of cells,
    /// and all traffic at the dearest cross-zone price when any pair crosses zones.
    [[nodiscard]] static boundary bound(const stage_problem& sp, int s, const composition& a, const composition& b) {
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
                out.fwd = max(out.fwd, net.between(ea, eb).transfer_time(size));
                out.bwd = max(out.bwd, net.between(eb, ea).transfer_time(size));
                fwd_price = max(fwd_price, net.egress_price(ea.zone, eb.zone));
                bwd_price = max(bwd_price, net.egress_price(eb.zone, ea.zone));
            }
        }
        if (sp.track_money) out.egress = (fwd_price + bwd_price) * (size * double(sp.microbatches));
        return out;
    }
};

class stage_dp {
public:
    /// Solves one instance; nullopt when no composition of every stage fits (or none meets the
    /// constraint). Reuses its tables across calls without reallocating.
    [[nodiscard]] std::optional<dp_solution> solve(const stage_problem& sp, const dp_goal& goal) {
        sp_ = &sp;
        goal_ = goal;
        // make_stage_problem fills the floors; a hand-built instance gets them here.
        const bool has_bound = sp.bound.prefix.sum.size() == sp.stages.size() + 1;
        if (!goal.floors) own_bound_ = instance_bound::zero(sp.stages.size());
        else if (!has_bound) own_bound_ = make_instance_bound(sp);
        bound_ = goal.floors && has_bound ? &sp.bound : &own_bound_;
        if (!bound_->feasible()) return std::nullopt;  // exact: the floors' resource test is necessary
        memo_.clear();
        pool_.clear();
        sync_cache_.clear();
        boundary_cache_.clear();
        if (scratch_.size() < static_cast<std::size_t>(sp.P) + 1) scratch_.resize(static_cast<std::size_t>(sp.P) + 1);
        cell_counts left{};
        for (std::size_t c = 0; c < sp.cells->cells.size(); ++c)
            left[c] = static_cast<std::uint16_t>(sp.cells->cells[c].capacity);
        const auto [off, len] = solve_state(0, left, composition{});
        stats_.states += memo_.size();
        stats_.entries += pool_.size();

        // Root: pick the best entry under the goal; ties keep the earlier (deterministic).
        const double m1 = double(sp.per_replica - 1);
        std::optional<std::uint32_t> best;
        double best_t = 0, best_c = 0;
        for (std::uint32_t k = off; k < off + len; ++k) {
            const suffix_terms& e = pool_[k].terms;
            const double t = e.sum + m1 * e.strag + e.sync + e.upd;
            const double c = e.rate * t + e.comm;
            if (goal.max_cost && (!sp.track_money || c > *goal.max_cost)) continue;
            if (goal.min_throughput && 1.0 / t < *goal.min_throughput) continue;
            const bool better = !best || (goal.target == objective::throughput ? (t < best_t || (t == best_t && c < best_c))
                                                                               : (c < best_c || (c == best_c && t < best_t)));
            if (better) best = k, best_t = t, best_c = c;
        }
        if (!best) return std::nullopt;
        dp_solution out;
        out.iteration = seconds{best_t};
        out.cost = usd{best_c};
        for (std::uint32_t k = *best; k != none; k = pool_[k].child) out.stages.push_back(pool_[k].comp);
        return out;
    }

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
    static_assert(sizeof(key) == 2 + 2 * sizeof(cell_counts) + max_types, "dp key must have no padding");
    struct key_hash {
        std::size_t operator()(const key& k) const noexcept {
            const auto* p = reinterpret_cast<const unsigned char*>(&k);
            std::uint64_t h = 1469598103934665603ull;  // FNV-1a
            for (std::size_t i = 0; i < sizeof(key); ++i) h = (h ^ p[i]) * 1099511628211ull;
            return static_cast<std::size_t>(h ^ (h >> 29));
        }
    };

    /// The same for stage `i` alone, known by its terms except the activations it will send
    /// on, with every later stage at its floors.
    [[nodiscard]] bool beyond_stage(int i, suffix_terms e) const {
        const instance_bound& b = *bound_;
        const auto at = static_cast<std::size_t>(i);
        const double own = e.sum + b.stages[at].p2p_out;
        e.sum = own + b.suffix.sum[at + 1];
        e.strag = std::max(own, b.suffix.strag[at + 1]);
        e.sync = std::max(e.sync, b.suffix.sync[at + 1]);
        e.upd = std::max(e.upd, b.suffix.update[at + 1]);
        e.rate += b.suffix.rate[at + 1];
        return beyond(i, e);
    }

    /// Whether a plan whose stages from `i` on have (at best) these terms misses the goal; the
    /// stages before `i` are taken at their floors (prune/instance_bound.hpp), which hold for
    /// any prefix, so the memo stays exact.
    [[nodiscard]] bool beyond(int i, const suffix_terms& e) const {
        const instance_bound& b = *bound_;
        const auto at = static_cast<std::size_t>(i);
        const double strag = std::max({e.strag, b.straggler, b.prefix.strag[at]});
        const double t = b.prefix.sum[at] + e.sum + double(sp_->per_replica - 1) * strag + std::max(e.sync, b.prefix.sync[at]) +
                         std::max(e.upd, b.prefix.update[at]);
        constexpr double over = 1 + bound_slack;
        if (goal_.min_throughput && t * *goal_.min_throughput > over) return true;
        if (!sp_->track_money) return goal_.target == objective::throughput && t > goal_.bound * over;
        const double c = (b.prefix.rate[at] + e.rate) * t + e.comm;
        if (goal_.max_cost && c > *goal_.max_cost * over) return true;
        return (goal_.target == objective::throughput ? t : c) > goal_.bound * over;
    }

    /// Which cells a composition uses and each type's TP, packed (cache keys).
    [[nodiscard]] std::uint32_t shape(const composition& c) const {
        std::uint32_t mask = 0, tps = 0;
        for (std::size_t q = 0; q < sp_->cells->cells.size(); ++q) mask |= std::uint32_t(c.n[q] > 0) << q;
        for (std::size_t t = 0; t < max_types; ++t) tps |= std::uint32_t(std::bit_width(unsigned(c.tp[t]))) << (3 * t);
        return mask | tps << 16;
    }

    /// stage_pricing::bound depends only on the two shapes: cached per instance.
    stage_pricing::boundary boundary_bound(int s, const composition& a, const composition& b) {
        if (s > 255) return stage_pricing::bound(*sp_, s, a, b);  // beyond the key's 8 bits
        const std::uint64_t k = std::uint64_t(s) << 56 | std::uint64_t(shape(a)) << 28 | shape(b);
        if (auto it = boundary_cache_.find(k); it != boundary_cache_.end()) return it->second;
        const auto v = stage_pricing::bound(*sp_, s, a, b);
        boundary_cache_.emplace(k, v);
        return v;
    }

    /// The ring depends on which cells take part, which hold more than one replica (edges
    /// inside a cell) and the TPs: cached per instance on those.
    std::pair<seconds, usd> stage_sync(int stage, const composition& c) {
        if (stage > 255) return stage_pricing::sync(*sp_, stage, c);  // beyond the key's 8 bits
        std::uint64_t multi = 0;
        for (std::size_t q = 0; q < sp_->cells->cells.size(); ++q) multi |= std::uint64_t(c.n[q] > 1) << q;
        const std::uint64_t k = std::uint64_t(stage) << 56 | multi << 28 | shape(c);
        if (auto it = sync_cache_.find(k); it != sync_cache_.end()) return it->second;
        auto v = stage_pricing::sync(*sp_, stage, c);
        sync_cache_.emplace(k, v);
        return v;
    }

    /// Returns the [offset, length) of the front of state (i, left, prev) in pool_.
    std::pair<std::uint32_t, std::uint32_t> solve_state(int i, const cell_counts& left, const composition& prev) {
        const stage_problem& sp = *sp_;
        key k;
        k.stage = static_cast<std::uint16_t>(i);
        k.left = left;
        if (i > 0) {
            for (std::size_t q = 0; q < max_cells; ++q)
                k.prev[q] = sp.exact_boundaries ? prev.n[q] : static_cast<std::uint16_t>(prev.n[q] > 0);
            k.prev_tp = prev.tp;
        }
        if (auto it = memo_.find(k); it != memo_.end()) return it->second;

        auto& front = scratch_[static_cast<std::size_t>(i)];  // filled below, copied to pool_ at the end
        front.clear();
        const bool last = i + 1 == sp.P;
        const bool money = sp.track_money;
        const auto& cells = sp.cells->cells;
        // The boundary is priced from the key's view of the previous stage, so equal keys
        // always get equal fronts.
        composition seen_prev;
        seen_prev.n = k.prev;
        seen_prev.tp = k.prev_tp;

        for_each_composition(sp, i, left, [&](const composition& comp, const tp_choice& choice) {
            ++stats_.compositions;
            const auto [sync, ring_egress] = stage_sync(i, comp);
            double rate = 0;
            cell_counts rest = left;
            for (std::size_t q = 0; q < cells.size(); ++q) {
                const int gpus = comp.n[q] * comp.tp[cells[q].type];
                rest[q] = static_cast<std::uint16_t>(rest[q] - gpus);
                rate += gpus * sp.usd_per_gpu_second[cells[q].type];
            }
            stage_pricing::boundary b;
            if (i > 0)
                b = sp.exact_boundaries ? stage_pricing::exact(sp, i - 1, seen_prev, comp) : boundary_bound(i - 1, seen_prev, comp);
            const double own = (choice.compute + b.bwd).value;
            const double egress = (ring_egress + b.egress).value;
            if (last) {
                entry e;
                e.terms = {own, own, sync.value, choice.update.value, b.fwd.value, money ? rate : 0.0, money ? egress : 0.0};
                e.comp = comp;
                if (!beyond(i, e.terms)) pareto_insert(front, e, money);
                return;
            }
            // Skip the subtree when even floors for every later stage miss the goal.
            if (beyond_stage(i, {own, own, sync.value, choice.update.value, 0.0, money ? rate : 0.0, money ? egress : 0.0}))
                return;
            const auto [off, len] = solve_state(i + 1, rest, comp);
            for (std::uint32_t c = off; c < off + len; ++c) {
                const suffix_terms& s = pool_[c].terms;
                const double t = own + s.extra;
                entry e;
                e.terms = {s.sum + t,
                           std::max(s.strag, t),
                           std::max(s.sync, sync.value),
                           std::max(s.upd, choice.update.value),
                           b.fwd.value,
                           money ? s.rate + rate : 0.0,
                           money ? s.comm + egress : 0.0};
                e.child = c;
                e.comp = comp;
                if (!beyond(i, e.terms)) pareto_insert(front, e, money);
            }
        });

        const auto off = static_cast<std::uint32_t>(pool_.size());
        pool_.insert(pool_.end(), front.begin(), front.end());
        const std::pair<std::uint32_t, std::uint32_t> span{off, static_cast<std::uint32_t>(front.size())};
        memo_.emplace(k, span);
        return span;
    }

    const stage_problem* sp_ = nullptr;
    const instance_bound* bound_ = nullptr;
    instance_bound own_bound_;
    dp_goal goal_{};
    std::unordered_map<key, std::pair<std::uint32_t, std::uint32_t>, key_hash> memo_;
    std::unordered_map<std::uint64_t, std::pair<seconds, usd>> sync_cache_;
    std::unordered_map<std::uint64_t, stage_pricing::boundary> boundary_cache_;
    std::vector<entry> pool_;
    std::vector<std::vector<entry>> scratch_;
    dp_stats stats_;
};

}  // namespace hetplan::search
