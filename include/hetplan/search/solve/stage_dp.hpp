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
#include "hetplan/search/solve/composition.hpp"
#include "hetplan/search/solve/pareto_front.hpp"
#include "hetplan/search/solve/stage_pricer.hpp"
#include "hetplan/search/stage_problem.hpp"

namespace hetplan::search {

/// `Memo` is the memo table (search::memo_table): flat_memo by default, node_memo (a std::
/// unordered_map) for comparison.
template <concepts::time_model Time = sailor_time_model, template <class, class, class> class Memo = flat_memo>
class stage_dp {
public:
    explicit stage_dp(Time tm = {}, bool floors = true) : price_(std::move(tm)), floors_(floors) {}

    /// Memory one instance's tables may take (memo and fronts, estimated); an instance that
    /// needs more is given up (solve returns none, stats().abandoned counts it), so a large pool
    /// degrades to the plans of the instances that fit rather than to gigabytes.
    void set_memory_limit(std::size_t bytes) { max_bytes_ = bytes; }
    [[nodiscard]] std::size_t memory_limit() const { return max_bytes_; }
    /// A ring no real zone behind H6's cells can hold priced across zones (stage_pricer::
    /// stage_sync; on by default); off: at the merged cells' links, as before 2026-12-07 (for
    /// tests and benchmarks).
    stage_dp& spread_rings(bool on = true) {
        price_.spread_rings(on);
        return *this;
    }

    [[nodiscard]] static constexpr const char* name() { return "stage DP"; }
    [[nodiscard]] const Time& time_model() const { return price_.time_model(); }
    /// Whether partial solutions are pruned with the instance's floors (off: the straightforward DP).
    [[nodiscard]] bool floors() const { return floors_; }

    /// Fills the instance's floors with this solver's time model (the planner calls it once per
    /// instance, before asking the bound).
    template <class Pr>
    void prepare(stage_problem<Pr>& sp) const {
        make_instance_bound(sp.bound, sp, price_.time_model());
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
        if (stopped_ || over_ || exhausted_) return std::nullopt;
        return root(sp, o, off, len);
    }

    [[nodiscard]] bool stopped() const { return stopped_; }
    /// Whether the last solve walked the compositions `solve_limits::effort` allows and gave up
    /// (no solution: the DP has none before it finishes).
    [[nodiscard]] bool exhausted() const { return exhausted_; }
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
    template <class SP, class O>
    void begin(const SP& sp, const O& o, const solve_limits& lim) {
        cutoff_ = lim.cutoff;
        poll_ = stop_poll(lim.stop);
        stopped_ = over_ = exhausted_ = false;
        effort_end_ = lim.effort == 0 || lim.effort > std::numeric_limits<std::size_t>::max() - stats_.compositions ? std::numeric_limits<std::size_t>::max()
                                                                                                                      : stats_.compositions + lim.effort;
        money_ = uses_money(o);
        measure_ = concepts::measured_objective<O>;
        count_ = counts_gpus(o);
        price_.begin(sp, money_);
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
        if (scratch_.size() < static_cast<std::size_t>(sp.P) + 1) scratch_.resize(static_cast<std::size_t>(sp.P) + 1);
    }

    /// Root: the admitted entry with the least objective value; ties: cheaper, then faster, then
    /// earlier (deterministic).
    template <class SP, class O>
    [[nodiscard]] std::optional<dp_solution> root(const SP&, const O& o, std::uint32_t off, std::uint32_t len) {
        std::optional<std::uint32_t> best;
        objective_terms best_t;
        double best_v = 0, best_usd = 0;
        for (std::uint32_t k = off; k < off + len; ++k) {
            const objective_terms t = terms_at(pool_[k].terms);
            if (!o.admits(t)) continue;
            const double v = o.value(t), usd = pool_[k].terms.rate * t.iteration + pool_[k].terms.comm;  // t.usd is 0 without money
            if (!best || v < best_v || (v == best_v && (usd < best_usd || (usd == best_usd && t.iteration < best_t.iteration))))
                best = k, best_t = t, best_v = v, best_usd = usd;
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
    [[nodiscard]] objective_terms terms_at(const suffix_terms& e) const { return complete_terms(e, per_replica_, money_, measure_); }

    /// Whether a plan whose stages from `i` on have (at best) these terms misses the objective:
    /// the stages before `i` are taken at their floors (bound/instance_floors.hpp), which hold
    /// for any prefix, so the memo stays exact.
    template <class O>
    [[nodiscard]] bool beyond(const O& o, int i, suffix_terms e) const {
        const instance_bound& b = *bound_;
        const auto at = static_cast<std::size_t>(i);
        e.sum = std::max(e.sum + b.prefix.sum[at], b.sum);
        e.strag = std::max({e.strag, b.straggler, b.prefix.strag[at]});
        e.sync = std::max(e.sync, b.prefix.sync[at]);
        e.upd = std::max(e.upd, b.prefix.update[at]);
        e.rate += b.prefix.rate[at];
        return floors_miss(o, e, per_replica_, money_, measure_, cutoff_);
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
            if (stopped_ || over_ || exhausted_ || (poll_() && (stopped_ = true)) || (stats_.compositions >= effort_end_ && (exhausted_ = true)) ||
                ((stats_.compositions & 4095) == 0 && (over_ = footprint() > max_bytes_)))
                return;
            const ring_price sync = price_.stage_sync(sp, i, comp);
            double rate = 0, mrate = 0;
            int used = 0;
            cell_counts rest = left;
            for (std::size_t q = 0; q < cells.size(); ++q) {
                const int gpus = comp.n[q] * comp.tp[cells[q].type];
                rest[q] = static_cast<std::uint16_t>(rest[q] - gpus);
                rate += gpus * sp.usd_per_gpu_second[cells[q].type];
                mrate += gpus * measure_rate_[q];
                used += gpus;
            }
            boundary b;
            if (i > 0) b = sp.exact_boundaries ? price_.exact_boundary(sp, i - 1, seen_prev, comp) : price_.bound_boundary(sp, i - 1, seen_prev, comp);
            const double own = choice.compute.value + b.bwd;
            const double egress = sync.egress + b.egress;
            // The rate always: the objective's money, or its tie-break's (equal throughput: cheaper,
            // as the pattern search breaks ties; without it the two solvers' ties fell apart,
            // docs/reproduction.md, stop 55). Egress only with money (the pricer's).
            const suffix_terms mine{own, own, sync.time, choice.update.value, b.fwd, rate, money_ ? egress : 0.0,
                                    measure_ ? mrate : 0.0, count_ ? used : 0};
            if (last) {
                if (!beyond(o, i, mine)) pareto_insert(front, entry{mine, none, comp}, measure_, count_);
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
                         s.rate + mine.rate, s.comm + mine.comm, s.mrate + mine.mrate, s.gpus + mine.gpus},
                        c, comp};
                if (!beyond(o, i, e.terms)) pareto_insert(front, e, measure_, count_);
            }
        };
        // A last stage's rate is its only term linear in the counts (unless a measure weighs
        // cells, or the GPUs are counted).
        if (last && !sp.exact_boundaries && !measure_ && !count_) for_each_last_pattern(sp, i, left, true, reps_, visit);
        else for_each_composition(sp, i, left, visit);

        const span out{static_cast<std::uint32_t>(pool_.size()), static_cast<std::uint32_t>(front.size())};
        pool_.insert(pool_.end(), front.begin(), front.end());
        memo_.insert(k, out);
        return out;
    }

    /// Estimated bytes of this instance's tables (an open-addressing memo at most half full).
    [[nodiscard]] std::size_t footprint() const { return memo_.size() * 2 * (sizeof(key) + sizeof(span) + 8) + pool_.size() * sizeof(entry); }

    stage_pricer<Time> price_;
    bool floors_ = true;
    std::size_t max_bytes_ = std::size_t{128} << 20;
    bool over_ = false, exhausted_ = false;
    std::size_t effort_end_ = 0;  ///< stats_.compositions at which the effort runs out
    const instance_bound* bound_ = nullptr;
    instance_bound zero_;
    double cutoff_ = std::numeric_limits<double>::infinity();
    stop_poll poll_{nullptr};
    bool stopped_ = false, money_ = false, measure_ = false, count_ = false;
    int per_replica_ = 1;
    std::array<double, max_cells> measure_rate_{};
    Memo<key, span, bytes_hash<key>> memo_{};
    std::vector<entry> pool_;
    std::vector<std::vector<entry>> scratch_;
    std::vector<composition> chosen_;  ///< the last solution's compositions
    std::vector<composition> reps_;    ///< the last stage's patterns (for_each_last_pattern)
    dp_stats stats_;
};

static_assert(concepts::check_solver<stage_dp<>, stage_problem<>, max_throughput>());
static_assert(concepts::check_solver<stage_dp<>, stage_problem<>, min_cost>());

}  // namespace hetplan::search
