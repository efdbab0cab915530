#pragma once
// Exhaustive search over the same plan space as the stage DP: every sequence of per-stage
// compositions that fits the pool, each built into a plan and priced by the full simulator.
// Exponential; for checking the DP's optimality on small instances (≤ 16 GPUs) and nothing else.
#include <optional>
#include <vector>

#include "hetplan/cost/simulator.hpp"
#include "hetplan/search/build_plan.hpp"

namespace hetplan::search {

struct exhaustive_stats {
    std::size_t plans = 0;  ///< complete plans simulated
};

template <class Simulator>
[[nodiscard]] std::optional<dp_solution> exhaustive_solve(const stage_problem& sp, const dp_goal& goal, const Simulator& sim,
                                                          exhaustive_stats* stats = nullptr) {
    const problem& pb = *sp.pb;
    std::optional<dp_solution> best;
    std::vector<composition> chosen(static_cast<std::size_t>(sp.P));
    cell_counts left{};
    for (std::size_t c = 0; c < sp.cells->cells.size(); ++c) left[c] = static_cast<std::uint16_t>(sp.cells->cells[c].capacity);
    auto rec = [&](auto&& self, int i, const cell_counts& rest) -> void {
        if (i == sp.P) {
            const plan pl = build_plan(sp, chosen);
            const estimate e = sim.run(pb, pl);
            if (stats) ++stats->plans;
            const double t = e.time.iteration.value, c = e.money.total.value;
            if (goal.max_cost && c > *goal.max_cost) return;
            if (goal.min_throughput && 1.0 / t < *goal.min_throughput) return;
            const bool better = !best || (goal.target == objective::throughput
                                              ? (t < best->iteration.value || (t == best->iteration.value && c < best->cost.value))
                                              : (c < best->cost.value || (c == best->cost.value && t < best->iteration.value)));
            if (better) best = dp_solution{e.time.iteration, e.money.total, chosen};
            return;
        }
        for_each_composition(sp, i, rest, [&](const composition& comp, const tp_choice&) {
            cell_counts next = rest;
            for (std::size_t q = 0; q < sp.cells->cells.size(); ++q)
                next[q] = static_cast<std::uint16_t>(next[q] - comp.n[q] * comp.tp[sp.cells->cells[q].type]);
            chosen[static_cast<std::size_t>(i)] = comp;
            self(self, i + 1, next);
        });
    };
    rec(rec, 0, left);
    return best;
}

}  // namespace hetplan::search
