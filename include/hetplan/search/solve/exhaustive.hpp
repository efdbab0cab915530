#pragma once
// Exhaustive search over the same plan space as the stage DP (a concepts::solver): every
// sequence of per-stage compositions that fits the pool and the pruners, each built into a plan
// and priced by the full simulator; on H6's merged cells, in every layout over the real zones
// that Sailor's planner prices (zone_layout.hpp), none where no layout fits them. Exponential;
// for checking the DP's optimality on small instances (<= 16 GPUs) and nothing else. A visitor
// sees every plan it prices (the tests' enumeration of a whole space, e.g. for the Pareto front).
#include <functional>
#include <optional>
#include <vector>

#include "hetplan/cost/simulator.hpp"
#include "hetplan/search/build_plan.hpp"
#include "hetplan/search/zone_layout.hpp"

namespace hetplan::search {

template <class Simulator = simulator<>>
class exhaustive_solver {
public:
    using visitor = std::function<void(const plan&, const estimate&)>;
    explicit exhaustive_solver(Simulator sim = {}, visitor visit = {}) : sim_(std::move(sim)), visit_(std::move(visit)) {}
    [[nodiscard]] static constexpr const char* name() { return "exhaustive"; }
    [[nodiscard]] const auto& time_model() const { return sim_.time; }
    template <class Pr>
    void prepare(stage_problem<Pr>& sp) const {
        make_instance_bound(sp.bound, sp, sim_.time);
    }

    template <class Pr, concepts::objective O>
    [[nodiscard]] std::optional<dp_solution> solve(const problem& pb, const stage_problem<Pr>& sp, const O& o, const solve_limits& lim) {
        std::optional<dp_solution> best;
        double best_v = 0;
        std::vector<composition> chosen(static_cast<std::size_t>(sp.P));
        cell_counts left{};
        for (std::size_t c = 0; c < sp.cells->cells.size(); ++c) left[c] = static_cast<std::uint16_t>(sp.cells->cells[c].capacity);
        stop_poll poll(lim.stop, 64);
        stopped_ = false;
        auto rec = [&](auto&& self, int i, const cell_counts& rest) -> void {
            if (stopped_ || (poll() && (stopped_ = true))) return;
            if (i == sp.P) {
                // Every layout over the real zones behind H6's merged cells that the planner
                // prices (none: the replicas do not fit them, no plan).
                for (const plan& pl : zone_layouts(sp, std::span<const composition>{chosen})) {
                    const estimate e = sim_.run(pb, pl);
                    ++plans_;
                    if (visit_) visit_(pl, e);
                    const objective_terms t = terms_of(o, pb, pl, e);  // GPUs and measure too: every limit is exact
                    if (!o.admits(t)) continue;
                    const double v = o.value(t);
                    if (v > lim.cutoff) continue;
                    const bool better = !best || v < best_v || (v == best_v && (t.usd < best->terms.usd ||
                                                                                (t.usd == best->terms.usd && t.iteration < best->terms.iteration)));
                    if (better) best = dp_solution{t, e.time.iteration, e.money.total, {}}, best_chosen_ = chosen, best_v = v;
                }
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
        if (stopped_) return std::nullopt;
        if (best) best->stages = best_chosen_;
        return best;
    }

    [[nodiscard]] bool stopped() const { return stopped_; }
    [[nodiscard]] std::size_t plans() const { return plans_; }  ///< complete plans simulated

private:
    Simulator sim_;
    visitor visit_;
    std::vector<composition> best_chosen_;
    std::size_t plans_ = 0;
    bool stopped_ = false;
};

static_assert(concepts::check_solver<exhaustive_solver<>, stage_problem<>, max_throughput>());

}  // namespace hetplan::search
