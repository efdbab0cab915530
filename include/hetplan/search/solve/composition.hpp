#pragma once
// One stage's replica set in Sailor's stage assignment (§4.2.2): how many replicas each
// (GPU type, zone) cell gives the stage and the TP degree of each type, and the enumerations
// the stage solvers walk: every composition that fits (the stage DP, exhaustive search), and
// every pattern — which cells take part and which hold more than one replica — that the
// pattern search and the DP's last stage price instead of the counts.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "hetplan/search/stage_problem.hpp"

namespace hetplan::search {

/// One stage's replica set: replicas per cell and TP per type (0 = absent).
struct composition {
    cell_counts n{};
    std::array<std::uint8_t, max_types> tp{};
    friend bool operator==(const composition&, const composition&) = default;
};

/// A solution: its terms and one composition per stage. `stages` views the solver's own storage
/// (so that solving allocates nothing): valid until the solver's next solve.
struct dp_solution {
    objective_terms terms;  ///< the solver's own pricing: iteration, USD, measure
    seconds iteration{};
    usd cost{};
    std::span<const composition> stages;
};

struct dp_stats {
    std::size_t states = 0;        ///< memoised subproblems (stage DP) or search nodes (pattern search)
    std::size_t compositions = 0;  ///< (state, composition) or (node, pattern) pairs evaluated
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

/// Every pattern of one typing: per position absent, one replica or more (written as 2), that
/// the pruners keep and that can hold D replicas; calls f(least, low) with the least counts and
/// their sum. Depth first, "more" before "one" before "absent".
template <class SP, class F>
void patterns_of(const SP& sp, int stage, const tp_choice& choice, const typed_cells& tc, F&& f) {
    const auto& cells = sp.cells->cells;
    std::array<reach, max_cells + 1> rs;
    reach_from(sp, stage, tc, choice.types, 0u, 0, ~std::uint32_t{0}, rs[0]);
    composition comp;
    comp.tp = choice.tp;
    // `low`/`high`: the least and most replicas the pattern so far can hold.
    auto rec = [&](auto&& self, std::size_t j, int low, int high, std::uint32_t used, std::uint8_t seen, std::size_t joined) -> void {
        const reach& r = rs[joined];
        if (low > sp.D || high + r.replicas[j] < sp.D || (choice.types & ~(seen | r.types[j])) != 0) return;
        if (j == tc.k) return f(static_cast<const composition&>(comp), low);
        const std::size_t c = tc.order[j];
        if (r.joinable >> j & 1u) {
            const std::uint32_t with = used | std::uint32_t{1} << c;
            const auto typed = std::uint8_t(seen | 1u << cells[c].type);
            reach_from(sp, stage, tc, choice.types, with, j + 1, r.joinable, rs[joined + 1]);
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

/// Calls f(least, choice, cells, low) for every pattern of `stage` within `left`: per typing,
/// which cells take part and which hold more than one replica, with the least counts (1, or 2
/// where more) and their sum. `cells` gives each position's capacity and price.
template <class SP, class F>
void for_each_pattern(const SP& sp, int stage, const cell_counts& left, F&& f) {
    detail::typed_cells tc;
    for (const tp_choice& choice : sp.stages[static_cast<std::size_t>(stage)].choices) {
        if (!detail::type_cells(sp, choice, left, tc)) continue;
        detail::patterns_of(sp, stage, choice, tc, [&](const composition& least, int low) { f(least, choice, tc, low); });
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
    detail::typed_cells tc;
    std::array<std::uint8_t, max_cells> fill{};
    for (const tp_choice& choice : sp.stages[static_cast<std::size_t>(stage)].choices) {
        if (!detail::type_cells(sp, choice, left, tc)) continue;
        reps.clear();
        // The replicas beyond each cell's least count (1, or 2 where it holds more than one) go
        // to the cells that hold more: cheapest first (money), else first in order; earlier
        // cells first among equals.
        detail::patterns_of(sp, stage, choice, tc, [&](const composition& comp, int low) {
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
        });
        // for_each_composition's order: counts lexicographically over the cells, largest first.
        std::sort(reps.begin(), reps.end(), [](const composition& a, const composition& b) { return a.n > b.n; });
        for (const composition& r : reps) f(r, choice);
    }
}

}  // namespace hetplan::search
