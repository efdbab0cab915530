#pragma once
// Sailor's stage assignment (§4.2.2) searched by stage patterns: a concepts::solver for the same
// instances and the same prices as the stage DP (stage_dp.hpp), exact, and independent of how
// many GPUs each cell holds.
//
// With pipeline boundaries bounded by their slowest cell pair (sailor_options::exact_boundaries
// off, the default) a stage's terms depend on its pattern only: its typing, the cells it uses and
// which of them hold more than one replica (the all-reduce ring's edges); the counts change the
// rate (USD/s, linear in them) and whether the pool can hold the plan. The stage DP carries the
// GPUs left in every cell through every stage, so its states grow as (GPUs per cell)^cells: a
// 410-replica stage over four cells has 12 M compositions. Here a depth-first branch and bound
// chooses one pattern per stage; counts follow from the pattern where they can (every cell one
// replica, or all but one cell one), and where two or more cells hold several the stage's
// remaining replicas ("extras") are left open and assigned at the end by a min-cost flow
// (extras_flow.hpp), which also decides whether they fit. A node's floor is its exact prefix and
// the instance's floors for the rest (bound/instance_floors.hpp: the fastest typing per stage,
// the resource-aware straggler), the stage-time sum of the rest floored by the LP of their
// typings over the GPUs the prefix left (rest_floor); children are visited cheapest floor
// first, so the first leaves are good and the cut-off tightens early. Every leaf is priced and
// checked exactly, so the search returns a solution of the DP's value (tests: against the stage
// DP and exhaustive search).
//
// With exact boundary pairing or a measured objective (a per-cell rate besides money) the counts
// matter to more than the rate: those instances go to the stage DP, as do instances with fewer
// ways to spread a stage's replicas over the cells than patterns (counts_are_few). Allocation-free once warm;
// the stop condition is polled every 256 nodes. Stopped, or out of the nodes `solve_limits::effort`
// allows (exhausted()), it returns the best sequence found so far: a deep pipeline over a tight
// pool can take minutes to prove, and the planner comes back to it with more effort once the
// other instances have tightened the cut-off.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "hetplan/concepts/solver.hpp"
#include "hetplan/search/bound/price_vectors.hpp"
#include "hetplan/search/memo.hpp"
#include "hetplan/search/objective.hpp"
#include "hetplan/search/solve/composition.hpp"
#include "hetplan/search/solve/extras_flow.hpp"
#include "hetplan/search/solve/stage_dp.hpp"
#include "hetplan/search/solve/stage_pricer.hpp"

namespace hetplan::search {

/// One stage's pattern: its typing, fixed counts and open extras, and its own terms.
struct stage_pattern {
    composition least;        ///< 1 replica per cell, 2 where more; the exact counts when at most one cell holds more
    cell_counts gpus{};       ///< GPUs `least` takes per cell
    extras_demand open;       ///< replicas beyond `least` over the cells holding more (extras 0: none open)
    double compute = 0, update = 0;
    ring_price sync;
    double sync_lo = 0;       ///< a floor of the all-reduce over the real zones behind its cells
    double rate = 0;          ///< USD/s of `least`
    double extra_rate = 0;    ///< USD/s of one extra replica on its cheapest cell
    std::uint32_t order = 0;  ///< enumeration order (ties of the search's order)
    std::uint8_t groups = 0;  ///< the zone groups its cells are in (instance_bound::cell_group)
};

template <concepts::time_model Time = sailor_time_model>
class pattern_search {
public:
    explicit pattern_search(Time tm = {}) : price_(tm), dp_(std::move(tm)) {}

    [[nodiscard]] static constexpr const char* name() { return "stage patterns, branch and bound"; }
    [[nodiscard]] const Time& time_model() const { return price_.time_model(); }
    /// The memory limit of the stage DP that solves exact-boundary and measured instances, and
    /// those with a GPU limit, and of the patterns' memo (transposition table).
    void set_memory_limit(std::size_t bytes) { dp_.set_memory_limit(bytes); }
    [[nodiscard]] std::size_t memory_limit() const { return dp_.memory_limit(); }
    /// Patterns even where the counts are few (counts_are_few hands those to the stage DP):
    /// for tests and comparisons.
    pattern_search& always_patterns(bool on = true) {
        always_ = on;
        return *this;
    }
    /// The LP floor of the stages left at every node (rest_floor); off: their own floors only,
    /// the same answers after more nodes (for tests and benchmarks).
    pattern_search& rest_lp(bool on = true) {
        rest_lp_ = on;
        return *this;
    }
    /// The straggler of the stages left where they must change zone group once
    /// (one_change_straggler), and below a child that keeps to the previous stage's one group
    /// (crossing_straggler over the later boundaries); off: the pool-wide crossing floors only,
    /// the same answers after more nodes (for tests and benchmarks).
    pattern_search& one_change(bool on = true) {
        one_change_ = on;
        return *this;
    }
    /// The straggler of the stages left where each run of them joined by boundaries no
    /// replica's pipeline can cross holds the same share of its replicas in every zone group
    /// (run_straggler with shares), at the nodes where some run cannot sit whole in one group;
    /// off: that case's crossing ring only, the same answers after more nodes (for tests and
    /// benchmarks).
    pattern_search& shares(bool on = true) {
        shares_ = on;
        return *this;
    }
    /// A ring no real zone behind H6's cells can hold priced across zones, here and in the
    /// stage DP it hands instances to (stage_pricer::stage_sync; on by default); off: at the
    /// merged cells' links, as before 2026-12-07 (for tests and benchmarks).
    pattern_search& spread_rings(bool on = true) {
        price_.spread_rings(on);
        dp_.spread_rings(on);
        return *this;
    }
    /// Nodes whose straggler floor the shares raised, since construction.
    [[nodiscard]] std::uint64_t shares_raised() const { return shares_raised_; }
    /// Nodes whose floor one_change_straggler raised, since construction.
    [[nodiscard]] std::uint64_t one_change_raised() const { return one_change_raised_; }
    /// Children that keep to the previous stage's group dropped by their later crossing, since construction.
    [[nodiscard]] std::uint64_t kept_children_dropped() const { return kept_dropped_; }
    /// The pooled straggler of the stages after a child, tested before the child is visited
    /// (child_pooled); off: at the child, the same answers after more nodes (for tests and
    /// benchmarks).
    pattern_search& child_pool(bool on = true) {
        child_pool_ = on;
        return *this;
    }
    /// Children dropped by child_pool's test, since construction.
    [[nodiscard]] std::uint64_t children_pooled_out() const { return child_dropped_; }
    /// rest_floor's answers kept per solve by (stage, GPUs left of each type); off: its LP solved
    /// at every node that asks, the same answers (for tests and benchmarks).
    pattern_search& rest_memo(bool on = true) {
        rest_memo_on_ = on;
        return *this;
    }
    /// rest_floor's answers read from that memo, since construction.
    [[nodiscard]] std::uint64_t rest_memo_hits() const { return rest_hits_; }
    /// The share of memory_limit() the memo of nodes may take: 1/k (default 1, the whole limit;
    /// 4 before 2026-12-07). For benchmarks.
    pattern_search& memo_share(std::size_t k) {
        memo_share_ = std::max<std::size_t>(k, 1);
        return *this;
    }
    /// With an effort of E nodes a solve also runs out after E x `k` patterns priced (0: nodes
    /// only). A node prices the next stage's patterns until their floors miss: a few over
    /// merged cells, thousands over sixteen real zones (a solve of 1,024 nodes: 4 million).
    pattern_search& compositions_per_node(std::uint64_t k) {
        per_node_ = k;
        return *this;
    }

    template <class Pr>
    void prepare(stage_problem<Pr>& sp) const {
        make_instance_bound(sp.bound, sp, time_model());
    }

    template <class Pr, concepts::objective O>
    [[nodiscard]] std::optional<dp_solution> solve(const problem& pb, const stage_problem<Pr>& sp, const O& o, const solve_limits& lim) {
        exhausted_ = suspendable_ = false;
        std::optional<suspension> from = std::exchange(armed_, std::nullopt);
        // The stage DP also takes measured objectives and GPU limits: it carries those terms in
        // its fronts; the patterns do not.
        const bool dp_only = sp.exact_boundaries || concepts::measured_objective<O> || counts_gpus(o);
        if (dp_only || (!always_ && counts_are_few(sp))) {
            // Without exact boundaries the DP's prices are pessimistic (a boundary at its slowest
            // pair of cells), so the run's cut-off, a simulator price, is not for it: it would
            // drop solutions the simulator prices under it (a larger budget lowered throughput).
            solve_limits own = lim;
            if (!sp.exact_boundaries) own.cutoff = std::numeric_limits<double>::infinity();
            own.effort = lim.effort > std::numeric_limits<std::uint64_t>::max() / 8 ? 0 : lim.effort * 8;  // a DP composition is a few times cheaper than a node
            // Over its memory limit the DP gives up; the patterns take little memory and are
            // exact, so they solve what counts_are_few misjudged (8 cells of 16 GPUs, D = 7:
            // 3,432 ways against 3^8 patterns, yet the DP's GPUs-left states passed 128 MiB in
            // ~3 s, where the patterns found the optimum in 1 s; docs/reproduction.md). Where
            // only counts_are_few chose it, the DP gets an eighth of the limit: it gives up that
            // much sooner (128 GPUs of 4 types over 4 zones: 0.84x the time, the same plan;
            // random pools 0-199: the same plans, 0.99x).
            const std::size_t abandoned = dp_.stats().abandoned;
            std::optional<dp_solution> r;
            {
                struct restore {  // the whole limit again, however the solve ends
                    stage_dp<Time>& dp;
                    std::size_t limit;
                    ~restore() { dp.set_memory_limit(limit); }
                } whole{dp_, dp_.memory_limit()};
                if (!dp_only) dp_.set_memory_limit(whole.limit / share_);
                r = dp_.solve(pb, sp, o, own);
            }
            stopped_ = dp_.stopped();
            exhausted_ = dp_.exhausted();
            const bool gave_up = dp_.stats().abandoned > abandoned;
            if (stopped_ || dp_only || (!exhausted_ && !gave_up)) return r;
            recovered_ += gave_up;
            exhausted_ = false;  // more counts than this effort walks, or than memory holds: the patterns, which keep a best so far
        }
        stopped_ = false;
        if (!sp.bound.feasible()) return std::nullopt;  // exact: the floors' resource test is necessary
        begin(sp, o, lim);
        patterns(sp);
        // Its best must be one this cut-off admits too: the subtrees it finished dropped what
        // could not beat that best, which a lower cut-off might have refused (a fresh solve
        // would then find another). Where it is admitted, the bests before it were worse.
        if (from && lim.cutoff <= from->cutoff_ && (!from->found_ || from->best_lo_ <= lim.cutoff) && from->digest_ == digest(sp)) {
            for (const auto& [k, v] : from->memo_) memo_.insert(k, v);
            for (const auto& [k, v] : from->rest_) rest_memo_.insert(k, v);
            found_ = from->found_;
            best_v_ = from->best_v_, best_usd_ = from->best_usd_, best_t_ = from->best_t_, best_lo_ = from->best_lo_;
            std::copy(from->best_.begin(), from->best_.end(), best_.begin());
            ++resumed_;
        }
        node root;
        dfs(sp, o, 0, root);
        suspendable_ = exhausted_ && !stopped_;
        if (suspendable_) digest_ = digest(sp);
        if (!found_) return std::nullopt;  // stopped or exhausted too: the best so far is complete
        dp_solution out;
        out.terms = best_t_;
        out.iteration = seconds{best_t_.iteration};
        out.cost = usd{best_t_.usd};
        out.stages = {best_.data(), static_cast<std::size_t>(sp.P)};
        return out;
    }

    /// The share of the memory limit the stage DP gets where only counts_are_few chose it: 1/k
    /// (default 8; 1: the whole limit, as before 2026-12-03). Over it the patterns take over.
    pattern_search& dp_share(std::size_t k) {
        share_ = std::max<std::size_t>(k, 1);
        return *this;
    }
    [[nodiscard]] std::size_t dp_share() const { return share_; }
    /// Instances the stage DP gave up at its memory limit (limit / dp_share() where only
    /// counts_are_few chose it) and the patterns solved, since construction.
    [[nodiscard]] std::size_t recovered() const { return recovered_; }

    /// Whether a stage has fewer ways to spread its replicas over the cells than patterns (each
    /// cell unused, one replica or several: 3^cells) and every cell is small, so the stage DP's
    /// states (GPUs left per cell) stay few: many cells of one or two nodes (zones kept apart,
    /// small nodes). There the DP, which walks the counts, is the faster of the two (seconds
    /// against minutes on 9 cells of 2-10 GPUs with D = 8). Cells of up to 64 GPUs were "small"
    /// once: six of them at D = 4-6 take the DP 0.5-2 s (400,000 states) where the patterns, which
    /// take the run's cut-off, finish sooner (100 random pools: p80 1.4 s -> 0.7 s). With an
    /// effort the DP gets eight compositions per node and hands over to the patterns when out, and
    /// over an eighth of its memory limit (dp_share) it hands over too. The stage DP takes
    /// such an instance first (unless always_patterns()).
    template <class SP>
    [[nodiscard]] static bool counts_are_few(const SP& sp) {
        constexpr int small_cell = 16;  // GPUs
        const std::size_t C = sp.cells->cells.size();
        double ways = 1, patterns = 1;  // C(D + C - 1, C - 1), 3^C
        for (std::size_t k = 1; k < C; ++k) ways = ways * double(sp.D + k) / double(k);
        for (std::size_t k = 0; k < C; ++k) patterns *= 3;
        for (const auto& c : sp.cells->cells)
            if (c.capacity > small_cell) return false;
        return ways <= patterns;
    }

    [[nodiscard]] bool stopped() const { return stopped_; }
    /// Whether the last solve ran out of `solve_limits::effort` (its solution, if any, may not be the best).
    [[nodiscard]] bool exhausted() const { return exhausted_; }

    /// What a solve that ran out of effort leaves to a later solve of the same instance with
    /// more: the nodes it searched to the end (the memo of nodes, less those on its path when
    /// it ran out), the LP floors it solved, its best so far and the cut-off it searched under.
    /// Every node left in that memo had its subtree searched under that cut-off and best, so
    /// a solve under no higher a cut-off that still admits that best (its optimistic price)
    /// and starts from it skips those subtrees and loses nothing; a deferred instance's next
    /// round then continues instead of repeating the rounds before (random pool 100: 41 % of
    /// its level solves' time was in solves that ran out and were begun again).
    class suspension;
    /// After a solve that ran out of effort over the patterns (not stopped): its suspension,
    /// with a copy of the memos' entries (the memos keep their tables); otherwise none.
    [[nodiscard]] std::optional<suspension> suspend() {
        if (!suspendable_) return std::nullopt;
        suspendable_ = false;
        std::optional<suspension> s(std::in_place);
        s->memo_.reserve(memo_.size());
        memo_.for_each([&](const memo_key& k, const seen& v) {
            if (v.n > 0) s->memo_.emplace_back(k, v);
        });
        s->rest_.reserve(rest_memo_.size());
        rest_memo_.for_each([&](const rest_key& k, const rest_answer& v) { s->rest_.emplace_back(k, v); });
        s->best_ = best_;
        s->best_t_ = best_t_;
        s->best_v_ = best_v_, s->best_usd_ = best_usd_, s->best_lo_ = best_lo_, s->cutoff_ = cutoff_;
        s->found_ = found_;
        s->digest_ = digest_;
        return s;
    }
    /// The next solve starts from `s` where it is the instance `s` was left by (the same
    /// patterns, caps and microbatches) under a cut-off no higher than `s`'s that admits its
    /// best; otherwise, as without it, afresh. Either way a solve that finishes returns what a
    /// fresh solve with no effort limit would (continued, it may finish sooner). The caller
    /// vouches for the objective and its limits being those `s` was searched for; none: the
    /// next solve starts afresh.
    void resume(std::optional<suspension> s) { armed_ = std::move(s); }
    /// Solves that started from a suspension, since construction.
    [[nodiscard]] std::uint64_t resumed() const { return resumed_; }
    /// Nodes ("states") and patterns tried ("compositions"), plus the stage DP's.
    [[nodiscard]] dp_stats stats() const {
        dp_stats s = dp_.stats();
        s.states += stats_.states;
        s.compositions += stats_.compositions;
        s.abandoned -= recovered_;  // the patterns solved those
        return s;
    }

private:
    /// What a node knows: the terms of stages [0, i-1) complete, the own time of stage i-1
    /// (its activations to stage i not yet known), maxima and money of [0, i), GPUs taken.
    /// The pipeline boundaries are known from cells only: `t`/`open` take each at its slowest
    /// pair of cells (the stage DP's price, which ranks solutions: pessimistic), `lo`/`open_lo`
    /// at what no pairing goes below (optimistic, stage_pricer's boundary). The simulator's
    /// pairing lies between, so the run's cut-off is compared with the optimistic side (nothing
    /// the simulator might price under it is dropped) and the best solution so far with the
    /// pessimistic side (what ranks solutions here).
    struct node {
        suffix_terms t, lo;
        double open = 0, open_lo = 0;
        double extra_floor = 0;  ///< USD/s of the open extras at their cheapest cells
        cell_counts used{};
        std::uint32_t prev = 0;
        double pooled = -1;  ///< pooled_straggler of the stages from this one, where the parent took it (child_pooled); -1: not taken
    };
    /// A node's terms grown by one stage (extend).
    struct grown {
        suffix_terms t, lo;
        double own = 0, own_lo = 0;
    };
    struct child {
        double value;
        std::uint32_t k;
        double pooled;  ///< node::pooled
    };
    /// A (GPU type, TP) a stage can use and the least time it takes with it (pooled_straggler, crossing_straggler).
    struct option {
        double time;
        std::uint8_t type, tp;
    };
    /// rest_floor's answer at a node: the LP's floor of the stages after it and its shadow
    /// price per GPU of each type (off: the stages' own floors only).
    struct priced_rest {
        bool on = false;
        double value = 0;
        std::array<double, max_types> price{};
    };
    /// rest_floor's memo: the stage and the GPUs left of each type, and its answer.
    struct rest_key {
        std::uint32_t from = 0;
        std::array<std::int32_t, max_types> left{};
        friend bool operator==(const rest_key&, const rest_key&) = default;
    };
    static_assert(std::has_unique_object_representations_v<rest_key>, "rest key must have no padding");
    struct rest_answer {
        bool served = false;
        priced_rest rest;
    };
    /// A stage's least all-reduce, update and USD/s over its patterns.
    struct stage_least {
        double sync = 0, update = 0, rate = 0;
    };
    /// Transposition table: the same stage, previous pattern, GPUs taken and open extras (in
    /// any order of the stages before) leave the same completions, so a node no completion of
    /// which beats the same completion of a node already searched with that key is dropped
    /// (searched, no_slower).
    /// It removes the orderings of the same stages (the stage DP's memo does it by its state).
    struct open_sig {
        std::uint32_t cells = 0, extras = 0;
        std::uint64_t weights = 0;  ///< per cell, log2(GPUs per replica) + 1, four bits each
        friend auto operator<=>(const open_sig&, const open_sig&) = default;
    };
    static constexpr std::size_t memo_open = 6;  ///< nodes with more open stages are not memoised
    struct memo_key {
        std::uint16_t stage = 0, prev = 0;
        std::uint32_t opened = 0;
        cell_counts used{};
        std::array<open_sig, memo_open> open{};
        friend bool operator==(const memo_key& a, const memo_key& b) { return std::memcmp(&a, &b, sizeof(memo_key)) == 0; }
    };
    static_assert(std::has_unique_object_representations_v<memo_key>, "memo key must have no padding");
    /// What a node has paid so far, pessimistic and optimistic (what ranks solutions, what the
    /// cut-off reads): done sum and straggler, all-reduce, update, the open stage's own time
    /// (paid_side), and USD/s and the two sides' egress.
    struct paid_side {
        double sum = 0, strag = 0, sync = 0, upd = 0, open = 0;
    };
    struct paid {
        paid_side t, lo;
        double rate = 0, comm = 0, comm_lo = 0;
    };
    struct seen {
        std::array<paid, 2> v{};
        std::uint32_t n = 0;
    };
    using node_memo_t = flat_memo<memo_key, seen, bytes_hash<memo_key>>;
    using rest_memo_t = flat_memo<rest_key, rest_answer, bytes_hash<rest_key>>;

public:
    class suspension {
    public:
        /// What it holds, about (the memos' entries and the best so far).
        [[nodiscard]] std::size_t bytes() const {
            return sizeof(suspension) + memo_.size() * sizeof(memo_.front()) + rest_.size() * sizeof(rest_.front()) + best_.size() * sizeof(composition);
        }

    private:
        friend class pattern_search;
        // The entries alone (the live memos keep their warm tables; copied back on resume).
        std::vector<std::pair<memo_key, seen>> memo_;
        std::vector<std::pair<rest_key, rest_answer>> rest_;
        std::vector<composition> best_;
        objective_terms best_t_;
        double best_v_ = 0, best_usd_ = 0, best_lo_ = 0, cutoff_ = 0;
        bool found_ = false;
        std::uint64_t digest_ = 0;
    };

private:

    template <class SP, class O>
    void begin(const SP& sp, const O& o, const solve_limits& lim) {
        money_ = uses_money(o);
        per_replica_ = sp.per_replica;
        types_ = sp.cells->types.size();
        cutoff_ = lim.cutoff;
        poll_ = stop_poll(lim.stop, 256);
        effort_end_ = lim.effort == 0 || lim.effort > std::numeric_limits<std::uint64_t>::max() - stats_.states ? std::numeric_limits<std::uint64_t>::max()
                                                                                                                : stats_.states + lim.effort;
        const std::uint64_t priced = per_node_ > 0 && lim.effort > 0 && lim.effort <= std::numeric_limits<std::uint64_t>::max() / per_node_ ? lim.effort * per_node_ : 0;
        priced_end_ = priced == 0 || priced > std::numeric_limits<std::uint64_t>::max() - stats_.compositions ? std::numeric_limits<std::uint64_t>::max()
                                                                                                            : stats_.compositions + priced;
        found_ = false;
        memo_.clear();
        rest_memo_.clear();
        bound_ = &sp.bound;
        price_.begin(sp, money_);
        const auto P = static_cast<std::size_t>(sp.P);
        const std::size_t C = sp.cells->cells.size();
        if (patterns_.size() < P) patterns_.resize(P), children_.resize(P), least_.resize(P), options_.resize(P), demand_.resize(P);
        chosen_.assign(P, 0);
        best_.resize(P);
        open_.clear();
        open_stage_.clear();
        open_.reserve(P);
        open_stage_.reserve(P);
        assigned_.resize(P);
        flow_.reserve(P, C);
        cap_.fill(0);
        for (std::size_t c = 0; c < C; ++c) cap_[c] = sp.cells->cells[c].capacity;
    }

    /// What identifies the instance a suspension belongs to (resume): its shape, objective
    /// kind, caps and every stage's patterns with their terms (their bytes, 8 at a time).
    /// Taken only where a solve runs out of effort or starts from a suspension.
    template <class SP>
    [[nodiscard]] std::uint64_t digest(const SP& sp) const {
        std::uint64_t h = 14695981039346656037ull;
        auto mix = [&h](const auto& v) {
            constexpr std::size_t words = (sizeof v + 7) / 8;
            std::uint64_t w[words] = {};
            std::memcpy(w, &v, sizeof v);
            for (const std::uint64_t x : w) h = (h ^ x) * 1099511628211ull, h ^= h >> 29;
        };
        mix(sp.P), mix(sp.D), mix(per_replica_), mix(money_), mix(cap_);
        for (int i = 0; i < sp.P; ++i)
            for (const stage_pattern& p : patterns_[static_cast<std::size_t>(i)]) {
                mix(p.least.n), mix(p.least.tp), mix(p.gpus), mix(p.open.cells), mix(p.open.extras);
                mix(p.compute), mix(p.update), mix(p.sync.time), mix(p.sync_lo), mix(p.rate);
            }
        return h;
    }

    /// Every stage's patterns within the pool, with their terms.
    template <class SP>
    void patterns(const SP& sp) {
        const auto& cells = sp.cells->cells;
        const std::size_t C = cells.size();
        cell_counts all{};
        for (std::size_t c = 0; c < C; ++c) all[c] = static_cast<std::uint16_t>(cap_[c]);
        for (int i = 0; i < sp.P; ++i) {
            auto& ps = patterns_[static_cast<std::size_t>(i)];
            ps.clear();
            for_each_pattern(sp, i, all, [&](const composition& least, const tp_choice& choice, const detail::typed_cells&, int low) {
                stage_pattern p;
                p.least = least;
                std::uint32_t multi = 0;
                for (std::size_t c = 0; c < C; ++c) multi |= std::uint32_t(least.n[c] == 2) << c;
                const int m = std::popcount(multi), extras = sp.D - low;
                if (m == 0 && extras != 0) return;
                composition full = least;  // one way to place the extras: the ring's edges are the same for all
                if (m >= 1) full.n[static_cast<std::size_t>(std::countr_zero(multi))] += static_cast<std::uint16_t>(extras);
                if (m == 1) p.least = full;
                else if (extras > 0) p.open = {multi, extras, {}, {}};
                p.extra_rate = std::numeric_limits<double>::infinity();
                for (std::size_t c = 0; c < C; ++c) {
                    const int tp = least.tp[cells[c].type];
                    p.gpus[c] = static_cast<std::uint16_t>(p.least.n[c] * tp);
                    if (p.gpus[c] > cap_[c]) return;
                    const double per = tp * sp.usd_per_gpu_second[cells[c].type];
                    p.rate += p.least.n[c] * per;
                    if (p.open.cells >> c & 1u) {
                        p.open.weight[c] = static_cast<std::uint8_t>(tp);
                        p.open.price[c] = per;
                        p.extra_rate = std::min(p.extra_rate, per);
                    }
                }
                if (p.open.extras == 0) p.extra_rate = 0;
                for (std::size_t c = 0; c < C; ++c)
                    if (p.least.n[c] > 0) p.groups |= static_cast<std::uint8_t>(1u << sp.bound.cell_group[c]);
                p.compute = choice.compute.value;
                p.update = choice.update.value;
                p.sync = price_.stage_sync(sp, i, full);
                ends_.clear();
                for (std::size_t c = 0; c < C; ++c)
                    if (full.n[c] > 0)
                        for (const auto& [z, n] : cells[c].zones) ends_.push_back({z, cells[c].gpu, full.tp[cells[c].type]});
                // (A ring that must cross real zones takes that crossing on both sides.)
                p.sync_lo = sp.D > 1 ? std::max(p.sync.spread, std::min(p.sync.time, sp.bound.sync_memo(price_.time_model(), *sp.pb, ends_, sp.D, sp.stages[static_cast<std::size_t>(i)].gradients))) : 0.0;
                p.order = static_cast<std::uint32_t>(ps.size());
                ps.push_back(p);
            });
            // Fastest first (dfs stops at the first pattern whose floor misses).
            std::sort(ps.begin(), ps.end(), [](const stage_pattern& a, const stage_pattern& b) {
                return a.compute < b.compute || (a.compute == b.compute && a.order < b.order);
            });
            single_options(sp, i);
            stage_least& l = least_[static_cast<std::size_t>(i)];
            l.sync = l.update = l.rate = std::numeric_limits<double>::infinity();
            for (const stage_pattern& p : ps) {
                l.sync = std::min(l.sync, p.sync_lo);
                l.update = std::min(l.update, p.update);
                l.rate = std::min(l.rate, p.rate + p.open.extras * p.extra_rate);
            }
        }
        make_prices();
        lp_classes(sp);
        thresholds_.clear();
        for (int i = 0; i < sp.P; ++i)
            for (const option& o : options_[static_cast<std::size_t>(i)]) thresholds_.push_back(o.time);
        std::sort(thresholds_.begin(), thresholds_.end());
        thresholds_.erase(std::unique(thresholds_.begin(), thresholds_.end()), thresholds_.end());
        column_at_.assign(thresholds_.size(), unbuilt);
        column_span_.clear();
        column_rows_.clear();
        column_prices_.clear();
        // A threshold at which a stage beside a crossing gains an option (only crossing_straggler
        // reads them, with two zone groups or more).
        const instance_bound& b = *bound_;
        cross_thresholds_.clear();
        if (b.groups >= 2) cross_thresholds_.assign(thresholds_.begin(), thresholds_.end());
        for (std::size_t k = 0; b.groups >= 2 && k + 1 < static_cast<std::size_t>(sp.P); ++k) {
            if (!(b.cross_fwd[k] < std::numeric_limits<double>::infinity())) continue;
            for (const option& o : options_[k]) cross_thresholds_.push_back(o.time + std::max(0.0, b.cross_fwd[k] - b.stages[k].p2p_out));
            for (const option& o : options_[k + 1]) cross_thresholds_.push_back(o.time + std::max(0.0, b.cross_bwd[k] - b.stages[k + 1].p2p_in));
        }
        std::sort(cross_thresholds_.begin(), cross_thresholds_.end());
        cross_thresholds_.erase(std::unique(cross_thresholds_.begin(), cross_thresholds_.end()), cross_thresholds_.end());
        // Per stage k, the least all-reduce of a stage from k on whose ring crosses groups
        // (zone_floor's ring floors; run_straggler's other case). Empty: not used.
        spans_.clear();
        const auto P = static_cast<std::size_t>(sp.P);
        // Per boundary k, the least a crossing at k or later adds to the sum: both transfers
        // across groups in place of the stages' p2p floors (infinity where none can cross).
        // And the least two crossings at distinct boundaries from k on add (cross_twice_).
        cross_sums_.clear();
        cross_twice_.clear();
        if (b.groups >= 2 && b.cross_fwd.size() == P && b.cross_bwd.size() == P) {
            constexpr double inf = std::numeric_limits<double>::infinity();
            cross_sums_.assign(P, inf);
            cross_twice_.assign(P, inf);
            double second = inf;  // the second least from k on
            for (std::size_t k = P - 1; k-- > 0;) {
                cross_sums_[k] = cross_sums_[k + 1];
                if (b.cross_fwd[k] < inf && b.cross_bwd[k] < inf) {
                    const double here = std::max(0.0, b.cross_fwd[k] - b.stages[k].p2p_out) + std::max(0.0, b.cross_bwd[k] - b.stages[k + 1].p2p_in);
                    second = std::min(second, std::max(here, cross_sums_[k]));
                    cross_sums_[k] = std::min(cross_sums_[k], here);
                }
                cross_twice_[k] = cross_sums_[k] + second;
            }
        }
        if (b.groups >= 2 && sp.D >= 2 && b.cross_ring.size() >= P * b.groups * b.groups) {
            const std::size_t G = b.groups;
            spans_.assign(P + 1, std::numeric_limits<double>::infinity());
            for (std::size_t k = P; k-- > 0;) {
                spans_[k] = spans_[k + 1];
                for (std::size_t g = 0; g < G; ++g)
                    for (std::size_t h = 0; h < G; ++h)
                        if (g != h) spans_[k] = std::min(spans_[k], b.cross_ring[(k * G + g) * G + h]);
            }
        }
    }

    /// The prices the node tests try after Hall's 0/1 ones (priced_fits): the extreme ones of
    /// ties between two options of one stage (bound/price_vectors.hpp), which include the ties
    /// of every row a test builds from them. Up to four types (more: Hall's only, a weaker
    /// test, still a floor).
    void make_prices() {
        priced_ = false;
        if (types_ < 2 || types_ > 4) return;
        price_ties ties;
        for (const auto& os : options_)
            for (const option& a : os)
                for (const option& b : os) ties.tie(a.type, a.tp, b.type, b.tp);
        priced_ = !price_memo_(ties, types_, false).empty();
    }

    /// The stages' classes for rest_floor's LP: stages with the same options (a pipeline's
    /// middle stages) share its variables, as in bound/instance_floors.hpp's pooled_sum_floor
    /// (averaging an optimum over them keeps it feasible and optimal). An option no faster than
    /// one of the same type at a smaller TP is left out (it only takes more GPUs).
    template <class SP>
    void lp_classes(const SP& sp) {
        const auto P = static_cast<std::size_t>(sp.P);
        lp_class_.assign(P, 0);
        if (lp_options_.size() < P) lp_options_.resize(P);
        for (std::size_t k = 0; k < P; ++k) {
            auto& kept = lp_options_[k];
            kept.clear();
            for (const option& o : options_[k]) {  // fastest first
                const bool dominated = std::any_of(kept.begin(), kept.end(), [&](const option& x) { return x.type == o.type && x.tp <= o.tp; });
                if (!dominated) kept.push_back(o);
            }
            lp_class_[k] = static_cast<std::uint16_t>(k);
            for (std::size_t j = 0; j < k; ++j)
                if (lp_class_[j] == j && same_options(lp_options_[j], kept)) {
                    lp_class_[k] = static_cast<std::uint16_t>(j);
                    break;
                }
        }
    }
    [[nodiscard]] static bool same_options(const std::vector<option>& a, const std::vector<option>& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const option& x, const option& y) { return x.time == y.time && x.type == y.type && x.tp == y.tp; });
    }

    /// A floor of the stage-time sum of stages [from, P) (own floors, p2p included) for the
    /// children of a node that has taken `used`: the LP relaxation of their typings over the GPUs
    /// left (instance_floors.hpp's pooled_sum_floor, over the stages left and what the prefix
    /// left), solved once per node; a child that takes more GPUs pays for them at the LP's
    /// shadow prices (Lagrangian relaxation: each stage at its least time plus its GPUs' price,
    /// less the price of the GPUs left, is a floor at any prices >= 0, and the LP's own value at
    /// these). The instance's LP floors the sum only as a whole; a prefix that took the GPUs
    /// the stages left wanted is only seen here (random pool 42, P = 14, D = 8: 775,000 nodes
    /// without it, 23,000 with it). Open extras are not counted as taken: a weaker floor, still
    /// a floor. False when the stages left cannot be served even fractionally. It depends on
    /// the stage and the GPUs left of each type only, which many prefixes share: kept per solve
    /// (rest_memo_).
    template <class SP>
    bool rest_floor(const SP& sp, std::size_t from, const cell_counts& used, priced_rest& rest) {
        const auto P = static_cast<std::size_t>(sp.P);
        const std::size_t C = sp.cells->cells.size();
        rest.on = false;
        if (from >= P) return true;
        std::array<long, max_types> left{};
        for (std::size_t c = 0; c < C; ++c) left[sp.cells->cells[c].type] += cap_[c] - used[c];
        if (!rest_memo_on_) return solve_rest(sp, from, left, rest);
        rest_key key;
        key.from = static_cast<std::uint32_t>(from);
        for (std::size_t t = 0; t < max_types; ++t) key.left[t] = static_cast<std::int32_t>(left[t]);
        if (const rest_answer* a = rest_memo_.find(key)) {
            ++rest_hits_;
            rest = a->rest;
            return a->served;
        }
        const bool served = solve_rest(sp, from, left, rest);
        if (rest_memo_.size() * decltype(rest_memo_)::entry_bytes * 8 < memory_limit()) rest_memo_.insert(key, {served, rest});
        return served;
    }
    /// rest_floor's LP over the GPUs left of each type.
    template <class SP>
    bool solve_rest(const SP& sp, std::size_t from, const std::array<long, max_types>& left, priced_rest& rest) {
        const auto P = static_cast<std::size_t>(sp.P);
        // Variables: each class's options, cost and GPUs scaled by its stages in [from, P).
        auto& count = lp_count_;
        count.assign(P, 0);
        for (std::size_t k = from; k < P; ++k) ++count[lp_class_[k]];
        std::size_t vars = 0, rows = 0;
        for (std::size_t r = 0; r < P; ++r)
            if (count[r] > 0) vars += lp_options_[r].size(), ++rows;
        lp_.reset(vars);
        for (std::size_t r = 0, j = 0; r < P; ++r) {
            if (count[r] == 0) continue;
            const std::size_t row = lp_.add_row(small_ilp::sense::eq, 1.0);
            for (const option& o : lp_options_[r]) lp_.set_cost(j, o.time * count[r]), lp_.coef(row, j++, 1.0);
        }
        for (std::size_t t = 0; t < types_; ++t) {
            const std::size_t row = lp_.add_row(small_ilp::sense::le, double(left[t]));
            for (std::size_t r = 0, j = 0; r < P; ++r) {
                if (count[r] == 0) continue;
                for (const option& o : lp_options_[r]) {
                    if (o.type == t) lp_.coef(row, j, double(sp.D) * o.tp * count[r]);
                    ++j;
                }
            }
        }
        if (!lp_.relaxation()) return false;
        // The Lagrangian at the shadow prices, computed rather than taken from the LP's value:
        // a floor at whatever prices the simplex reports.
        double total = 0;
        for (std::size_t t = 0; t < types_; ++t) rest.price[t] = std::max(0.0, -lp_.shadow_price(rows + t)), total -= rest.price[t] * double(left[t]);
        for (std::size_t r = 0; r < P; ++r) {
            if (count[r] == 0) continue;
            double least = std::numeric_limits<double>::infinity();
            for (const option& o : lp_options_[r]) least = std::min(least, o.time + rest.price[o.type] * double(sp.D) * o.tp);
            total += least * count[r];
        }
        rest.value = total - std::abs(total) * 1e-9;
        rest.on = true;
        return true;
    }
    /// rest_floor's for a child whose pattern takes `gpus`: at least the stages' own floors.
    template <class SP>
    [[nodiscard]] double rest_for(const SP& sp, std::size_t from, const cell_counts& gpus, const priced_rest& rest) const {
        double v = bound_->suffix.sum[from];
        if (!rest.on) return v;
        double taken = 0;
        for (std::size_t c = 0; c < sp.cells->cells.size(); ++c) taken += rest.price[sp.cells->cells[c].type] * gpus[c];
        return std::max(v, rest.value + taken);
    }

    /// What the sum pays at the least crossing from boundary `from` on (cross_sums_) when stage
    /// `from`, of groups `mine`, keeps to groups `kept` that the stages after it cannot stay in:
    /// the first stage with a replica outside them receives from one whose every replica is
    /// inside, across groups both ways. 0 otherwise (kept 0xff: they can stay).
    [[nodiscard]] double crossing_sum(std::size_t from, std::uint8_t kept, std::uint8_t mine) const {
        if (kept == 0xff || (mine & ~kept) != 0 || cross_sums_.empty()) return 0.0;
        return cross_sums_[from];
    }

    /// Stage i's (type, TP) options, each at the fastest compute of a typing that has it, plus
    /// the stage's p2p floors: a stage served by a typing with type t at TP k takes at least
    /// that long. Sorted by time.
    template <class SP>
    void single_options(const SP& sp, int i) {
        const auto at = static_cast<std::size_t>(i);
        auto& os = options_[at];
        os.clear();
        const stage_floor& f = bound_->stages[at];
        for (const tp_choice& ch : sp.stages[at].choices)
            for (std::size_t t = 0; t < sp.cells->types.size(); ++t) {
                if (!(ch.types >> t & 1u)) continue;
                const double time = ch.compute.value + f.p2p_in + f.p2p_out;
                auto o = std::find_if(os.begin(), os.end(), [&](const option& x) { return x.type == t && x.tp == ch.tp[t]; });
                if (o == os.end()) os.push_back({time, static_cast<std::uint8_t>(t), ch.tp[t]});
                else o->time = std::min(o->time, time);
            }
        std::sort(os.begin(), os.end(), [](const option& a, const option& b) { return a.time < b.time || (a.time == b.time && a.type < b.type); });
    }

    /// Whether the plans below a node with optimistic floors `lo` and pessimistic floors `t`
    /// are all out: `lo` above the run's cut-off (what the simulator might price them at), or
    /// `t` not admitted or above the best solution's own price (what ranks solutions here).
    template <class O>
    [[nodiscard]] bool misses(const O& o, const suffix_terms& lo, const suffix_terms& t) const {
        return floors_miss(o, lo, per_replica_, money_, false, cutoff_) ||
               floors_miss(o, t, per_replica_, money_, false, found_ ? best_v_ : std::numeric_limits<double>::infinity());
    }

    /// Per set of types: GPUs left in them (have), or what the stages and open extras that may
    /// use only those types need (need, before the Hall test). Only the first 2^T entries are
    /// used (and copied).
    using per_types = std::array<long, std::size_t{1} << max_types>;
    static void copy(const per_types& from, per_types& to, std::size_t T) { std::copy_n(from.begin(), std::size_t{1} << T, to.begin()); }
    /// A stage's options no slower than a threshold: their types, least GPUs per replica, and
    /// least GPUs per replica of each type (0: that type is not allowed).
    struct demand {
        std::size_t types = 0;
        int w = 0;
        std::array<std::uint8_t, max_types> tp{};
    };
    /// What the stages and open extras need, for the test at prices beyond Hall's
    /// (fits_at_prices): rows of the least TP each type serves a replica at, and how many
    /// replicas; equal rows are merged (a pipeline's middle stages repeat).
    struct need_rows {
        static constexpr std::size_t most = 32;
        struct row_t {  // trivial: rows start unset (only [0, size) are read)
            std::array<std::uint8_t, max_types> tp;
            long n;
        };
        std::array<row_t, most> row;
        std::size_t size = 0;
        bool full = false;  ///< more distinct rows than kept: the test is skipped (still a floor)
        void add(const demand& d, long replicas) {
            for (std::size_t q = 0; q < size; ++q)
                if (row[q].tp == d.tp) {
                    row[q].n += replicas;
                    return;
                }
            if (size == most) {
                full = true;
                return;
            }
            row[size++] = {d.tp, replicas};
        }
        void assign(const need_rows& o) {
            std::copy_n(o.row.begin(), o.size, row.begin());
            size = o.size, full = o.full;
        }
        [[nodiscard]] auto begin() const { return row.begin(); }
        [[nodiscard]] auto end() const { return row.begin() + static_cast<std::ptrdiff_t>(size); }
    };
    /// Stage k's options whose time plus `shift` is within `theta`.
    [[nodiscard]] demand allowed(std::size_t k, double theta, double shift) const {
        demand d;
        for (const option& o : options_[k]) {
            if (o.time + shift > theta) break;
            d.types |= std::size_t{1} << o.type;
            d.w = d.w == 0 ? o.tp : std::min<int>(d.w, o.tp);
            d.tp[o.type] = d.tp[o.type] == 0 ? o.tp : std::min(d.tp[o.type], o.tp);
        }
        return d;
    }
    /// The GPUs left in the cells of `within` (per type: left; per set of types: have), and
    /// the open extras that may only use those (per set of types: need; as rows: extras).
    template <class SP>
    void left_and_open(const SP& sp, const cell_counts& used, std::uint32_t within, per_types& have, per_types& need, std::array<long, max_types>& left,
                       need_rows& extras) const {
        const std::size_t T = sp.cells->types.size(), U = std::size_t{1} << T;
        left.fill(0);
        extras.size = 0, extras.full = false;
        for (std::size_t c = 0; c < sp.cells->cells.size(); ++c)
            if (within >> c & 1u) left[sp.cells->cells[c].type] += cap_[c] - used[c];
        have[0] = need[0] = 0;
        for (std::size_t u = 1; u < U; ++u) have[u] = have[u & (u - 1)] + left[static_cast<std::size_t>(std::countr_zero(u))], need[u] = 0;
        for (const extras_demand& x : open_) {
            if ((x.cells & ~within) != 0) continue;
            demand d;
            for (std::size_t c = 0; c < sp.cells->cells.size(); ++c) {
                if (!(x.cells >> c & 1u)) continue;
                const std::size_t t = sp.cells->cells[c].type;
                d.types |= std::size_t{1} << t;
                d.w = d.w == 0 ? x.weight[c] : std::min<int>(d.w, x.weight[c]);
                d.tp[t] = d.tp[t] == 0 ? x.weight[c] : std::min(d.tp[t], x.weight[c]);
            }
            need[d.types] += long(x.extras) * d.w;
            if (!no_prices()) extras.add(d, x.extras);
        }
    }
    /// Per set of types U, what may only use types in U: the sums over U's subsets of `need`
    /// (what needs exactly those types), in place.
    static void within_sets(per_types& need, std::size_t T) {
        const std::size_t U = std::size_t{1} << T;
        for (std::size_t b = 0; b < T; ++b)
            for (std::size_t u = 0; u < U; ++u)
                if (u >> b & 1u) need[u] += need[u ^ (std::size_t{1} << b)];
    }
    /// Per zone group, the GPUs left of each type below a node (left) and in each set of types
    /// (have; only the first bound_->groups groups' first 2^T entries are set).
    using group_left = std::array<std::array<long, max_types>, 8>;  // zone_floor keeps at most 6 groups
    template <class SP>
    void left_by_group(const SP& sp, const node& nd, group_left& left, std::array<per_types, 8>& have) const {
        const std::size_t U = std::size_t{1} << types_;
        for (auto& l : left) l.fill(0);
        for (std::size_t c = 0; c < sp.cells->cells.size(); ++c) left[bound_->cell_group[c]][sp.cells->cells[c].type] += cap_[c] - nd.used[c];
        for (std::size_t g = 0; g < bound_->groups; ++g) {
            have[g][0] = 0;
            for (std::size_t u = 1; u < U; ++u) have[g][u] = have[g][u & (u - 1)] + left[g][static_cast<std::size_t>(std::countr_zero(u))];
        }
    }
    /// Hall's condition over sets of types: what may only use types in U fits in U's GPUs.
    [[nodiscard]] static bool fits(per_types& need, const per_types& have, std::size_t T) {
        const std::size_t U = std::size_t{1} << T;
        within_sets(need, T);
        for (std::size_t u = 1; u < U; ++u)
            if (need[u] > have[u]) return false;
        return true;
    }
    [[nodiscard]] bool no_prices() const { return !priced_; }
    /// The same question at the extreme prices beyond Hall's (price_memo_): Hall's 0/1 prices see a
    /// stage that may take type a at TP 1 or type b at TP 2 as needing one GPU per replica of a
    /// or b; prices 2 on a and 1 on b see it needs two of b's worth.
    [[nodiscard]] bool priced_fits(const need_rows& rows, const std::array<long, max_types>& left) const {
        return rows.full || no_prices() || fits_at_prices(price_memo_.last(), rows, left, types_);
    }

    /// A floor of the slowest of stages [i, P) given the GPUs the stages before took and the
    /// extras they left open, when it is at least `from`: the least threshold at which options
    /// no slower could serve them all, even fractionally (or `from` when that is more). The test
    /// is LP duality: prices 0 or 1 per GPU type first (Hall's condition over sets of types U:
    /// the stages, and open extras, that can only use types in U need no more of U's GPUs than
    /// are left), then the other extreme price vectors (fits_at_prices, the stages summed once per
    /// threshold by suffix_demand). Infinity when none can.
    /// With `within` (a mask of cells), the stages left draw only on those cells' GPUs, and the
    /// open extras that may use other cells are left out (a weaker test, still a floor).
    template <class SP>
    [[nodiscard]] double pooled_straggler(const SP& sp, int i, const cell_counts& used, double from, std::uint32_t within = ~0u) const {
        const std::size_t T = sp.cells->types.size();
        per_types have, fixed, need;
        std::array<long, max_types> left;
        need_rows extras;
        left_and_open(sp, used, within, have, fixed, left, extras);
        // Allowed options change only at thresholds: start at the last one not above `from`
        // (the answer is then at least `from`, and exactly it if that one fits).
        auto it = std::upper_bound(thresholds_.begin(), thresholds_.end(), from);
        if (it != thresholds_.begin()) --it;
        const std::size_t Y = no_prices() ? 0 : price_memo_.last().size();
        if (!room_at_prices(left, extras, T)) return std::numeric_limits<double>::infinity();
        for (; it != thresholds_.end(); ++it) {
            const auto stages = suffix_demand(sp, static_cast<std::size_t>(it - thresholds_.begin()), static_cast<std::size_t>(i));
            if (!stages.all) continue;
            copy(fixed, need, T);
            for (const auto& [d, n] : stages.rows) need[d.types] += n * d.w;
            bool priced = fits(need, have, T);
            for (std::size_t q = 0; q < Y && priced; ++q) priced = stages.at_prices[q] <= room_at_[q];
            if (priced) return std::max(*it, from);
        }
        return std::numeric_limits<double>::infinity();
    }
    /// At each price vector beyond Hall's, the GPUs left less what the open extras take
    /// (room_at_); false where an extra no type serves.
    bool room_at_prices(const std::array<long, max_types>& left, const need_rows& extras, std::size_t T) const {
        const std::size_t Y = no_prices() ? 0 : price_memo_.last().size();
        room_at_.resize(Y);
        for (std::size_t q = 0; q < Y; ++q) {
            const price_vector& y = price_memo_.last()[q];
            std::int64_t room = 0;
            for (std::size_t t = 0; t < T; ++t) room += y[t] * left[t];
            for (const auto& [row, n] : extras) {
                const std::int64_t cheapest = cheapest_at(y, row, T);
                if (cheapest == std::numeric_limits<std::int64_t>::max()) return false;
                room -= cheapest * n;
            }
            room_at_[q] = room;
        }
        return true;
    }
    /// What stages [i, P) need at thresholds_[j]: their demands, equal ones merged, each with its
    /// replicas (D per stage), and what those weigh at each of the solve's price vectors beyond
    /// Hall's (their cheapest types; fits_at_prices); `all` false where one of them has no option
    /// within it. Built for every i on a threshold's first use (a solve reads few of them) and
    /// kept until patterns(): pooled_straggler read them stage by stage at every node (random
    /// pool 191: a fifth of its time, most of it pricing the same rows again).
    struct suffix_column {
        bool all = false;
        std::span<const std::pair<demand, long>> rows;
        const std::int64_t* at_prices = nullptr;
    };
    template <class SP>
    [[nodiscard]] suffix_column suffix_demand(const SP& sp, std::size_t j, std::size_t i) const {
        const auto P = static_cast<std::size_t>(sp.P);
        const std::size_t T = sp.cells->types.size(), Y = no_prices() ? 0 : price_memo_.last().size();
        if (column_at_[j] == unbuilt) {
            column_at_[j] = column_span_.size();
            column_span_.resize(column_span_.size() + P + 1, {unbuilt, 0, 0});
            column_span_.back() = {column_rows_.size(), 0, column_prices_.size()};  // no stages: nothing
            column_prices_.resize(column_prices_.size() + Y, 0);
            merged_.clear();
            for (std::size_t k = P; k-- > 0;) {
                const demand d = allowed(k, thresholds_[j], 0);
                if (d.types == 0) break;
                auto same = std::find_if(merged_.begin(), merged_.end(), [&](const auto& r) { return r.first.tp == d.tp; });
                if (same == merged_.end()) merged_.push_back({d, long(sp.D)});
                else same->second += sp.D;
                const std::size_t at = column_prices_.size();
                column_span_[column_at_[j] + k] = {column_rows_.size(), merged_.size(), at};
                column_rows_.insert(column_rows_.end(), merged_.begin(), merged_.end());
                column_prices_.resize(at + Y);
                for (std::size_t q = 0; q < Y; ++q)
                    column_prices_[at + q] = column_prices_[at - Y + q] + cheapest_at(price_memo_.last()[q], d.tp, T) * sp.D;
            }
        }
        const column_span& c = column_span_[column_at_[j] + i];
        if (c.first == unbuilt) return {};
        return {true, std::span<const std::pair<demand, long>>(column_rows_.data() + c.first, c.count), column_prices_.data() + c.prices};
    }

    /// pooled_straggler of the stages after i below the child whose stage i takes pattern p (its
    /// GPUs and open extras added to the node's), from where the child takes it (its straggler
    /// so far `from`).
    template <class SP>
    double child_pooled(const SP& sp, int i, const cell_counts& used, const stage_pattern& p, double from) {
        const std::size_t C = sp.cells->cells.size();
        cell_counts next = used;
        for (std::size_t c = 0; c < C; ++c) next[c] = static_cast<std::uint16_t>(next[c] + p.gpus[c]);
        if (p.open.extras > 0) open_.push_back(p.open);
        const double v = pooled_straggler(sp, i + 1, next, std::max(from, bound_->suffix.strag[static_cast<std::size_t>(i) + 1]));
        if (p.open.extras > 0) open_.pop_back();
        return v;
    }

    /// The same floor for the plans below a node (stage i next) where some boundary k >= i-1
    /// crosses zone groups (bound/instance_floors.hpp, zone_floor): the stages beside it take
    /// the fastest transfer across groups instead of the fastest of all, so at a threshold only
    /// their options that are fast enough with it serve them, and stage i-1, whose own time is
    /// `prev`, takes it too where k = i-1. The pool left serves every stage as in
    /// pooled_straggler. It answers `until` once the threshold reaches it (the caller takes the
    /// least of the two). Zone groups are not told apart here (a weaker test, still a floor).
    /// i > 0 (a node with a previous stage). `before` false: boundaries k >= i only (the
    /// children whose stage i keeps to the previous stage's group).
    template <class SP>
    [[nodiscard]] double crossing_straggler(const SP& sp, int i, const cell_counts& used, double from, double prev, double until, bool before = true) {
        const instance_bound& b = *bound_;
        const auto P = static_cast<std::size_t>(sp.P), first = static_cast<std::size_t>(i);
        const std::size_t T = sp.cells->types.size();
        per_types have, fixed, all, need;
        std::array<long, max_types> left;
        need_rows extras;
        left_and_open(sp, used, ~0u, have, fixed, left, extras);
        auto it = std::upper_bound(cross_thresholds_.begin(), cross_thresholds_.end(), from);
        if (it != cross_thresholds_.begin()) --it;
        double best = until;
        const std::size_t Y = no_prices() ? 0 : price_memo_.last().size();
        if (!room_at_prices(left, extras, T)) return best;
        for (; it != cross_thresholds_.end(); ++it) {
            const double theta = std::max(*it, from);
            if (theta >= best) break;
            copy(fixed, all, T);
            bool any = true;
            for (std::size_t k = first; k < P && any; ++k) {
                demand_[k] = allowed(k, theta, 0);
                any = demand_[k].types != 0;
                all[demand_[k].types] += long(sp.D) * demand_[k].w;
            }
            if (!any) continue;
            // The stages' sums at the prices (the threshold's column: no option lies between
            // the last threshold not above theta and theta); a boundary swaps the two beside it.
            const std::int64_t* at_prices =
                Y == 0 ? nullptr : suffix_demand(sp, static_cast<std::size_t>(std::upper_bound(thresholds_.begin(), thresholds_.end(), theta) - thresholds_.begin()) - 1, first).at_prices;
            for (std::size_t k = before ? first - 1 : first; k + 1 < P; ++k) {
                if (!(b.cross_fwd[k] < std::numeric_limits<double>::infinity())) continue;
                copy(all, need, T);
                std::array<demand, 2> beside{k + 1 == first ? demand{} : demand_[k], demand_[k + 1]};  // stages k, k+1 with the crossing
                auto limit = [&](std::size_t s, double shift) {
                    const demand d = allowed(s, theta, std::max(0.0, shift));
                    need[demand_[s].types] -= long(sp.D) * demand_[s].w;
                    need[d.types] += long(sp.D) * d.w;
                    beside[s - k] = d;
                    return d.types != 0;
                };
                if (k + 1 != first && !limit(k, b.cross_fwd[k] - b.stages[k].p2p_out)) continue;
                if (!limit(k + 1, b.cross_bwd[k] - b.stages[k + 1].p2p_in) || !fits(need, have, T)) continue;
                bool priced = true;
                for (std::size_t q = 0; q < Y && priced; ++q) {
                    const price_vector& y = price_memo_.last()[q];
                    std::int64_t need_at = at_prices[q];
                    for (std::size_t s = std::max(k, first); s <= k + 1; ++s) need_at += (cheapest_at(y, beside[s - k].tp, T) - cheapest_at(y, demand_[s].tp, T)) * sp.D;
                    priced = need_at <= room_at_[q];
                }
                if (!priced) continue;
                if (k + 1 != first) return theta;
                // Stage i-1 sends across at its own time plus the transfer, which need not be a
                // threshold: a later threshold may still come first.
                best = std::min(best, std::max(theta, prev + b.cross_fwd[k]));
            }
        }
        return best;
    }

    /// The least candidate v >= `from` at which `ok(v)` holds (monotone in v), the candidates
    /// being the crossing thresholds (cross_thresholds_, the first taken up to `from`) and
    /// `extra`, a time that is not one of them (infinity: none). Infinity where none holds.
    template <class Ok>
    [[nodiscard]] double least_crossing_threshold(double from, double extra, const Ok& ok) const {
        constexpr double inf = std::numeric_limits<double>::infinity();
        bool extra_tried = !(extra >= from && extra < inf);
        auto it = std::upper_bound(cross_thresholds_.begin(), cross_thresholds_.end(), from);
        if (it != cross_thresholds_.begin()) --it;
        for (; it != cross_thresholds_.end(); ++it) {
            const double v = std::max(*it, from);
            if (!extra_tried && extra < v) {
                extra_tried = true;
                if (ok(extra)) return extra;
            }
            if (ok(v)) return v;
        }
        if (!extra_tried && ok(extra)) return extra;
        return inf;
    }

    /// The least straggler threshold v >= `from` at which the stages left, each whole in one
    /// zone group, change group exactly once after the previous stage's group `g`: stages
    /// [i, k] stay in g and [k+1, P) sit in one other group h, for some crossable boundary
    /// k >= i-1 (k = i-1: stage i-1, of own time nd.open_lo, sends across). Stage k sends and
    /// stage k+1 receives across groups (crossing_straggler's times); g's GPUs left serve the
    /// first run and h's the second, even fractionally (Hall's test, then the prices beyond
    /// it). The pool-wide tests (pooled_straggler, crossing_straggler) pool the groups' GPUs;
    /// a prefix that filled g sees here that the stages left cannot fit in what g and one other
    /// group have (random pool 191, P = 16: every node at stage 11 failed that way, after
    /// 10^6 nodes above it). Open extras are left out (a weaker test, still a floor). Thresholds
    /// are tried while `worth(v)`; past them v itself is returned. Infinity: never.
    template <class SP, class Worth>
    [[nodiscard]] double one_change_straggler(const SP& sp, int i, const node& nd, std::size_t g, double from, const Worth& worth) {
        constexpr double inf = std::numeric_limits<double>::infinity();
        const instance_bound& b = *bound_;
        const auto P = static_cast<std::size_t>(sp.P), first = static_cast<std::size_t>(i);
        const std::size_t T = types_, G = b.groups, U = std::size_t{1} << T;
        group_left left;
        std::array<per_types, 8> have;
        left_by_group(sp, nd, left, have);
        auto crossable = [&](std::size_t k) { return b.cross_fwd[k] < inf && b.cross_bwd[k] < inf; };
        per_types need;
        need_rows& rows = one_rows_;  // scratch (zeroing a fresh one per test led this function's cost)
        // Whether stages [lo, hi] fit group h at v, the first receiving across (in) and the last
        // sending across (out).
        auto serves = [&](std::size_t lo, std::size_t hi, std::size_t h, double v, bool in, bool out) {
            std::fill_n(need.begin(), U, 0L);
            rows.size = 0, rows.full = false;
            for (std::size_t k = lo; k <= hi; ++k) {
                double shift = 0;
                if (in && k == lo) shift = std::max(shift, b.cross_bwd[k - 1] - b.stages[k].p2p_in);
                if (out && k == hi) shift = std::max(shift, b.cross_fwd[k] - b.stages[k].p2p_out);
                const demand d = allowed(k, v, shift);
                if (d.types == 0) return false;
                need[d.types] += long(sp.D) * d.w;
                if (!no_prices()) rows.add(d, sp.D);
            }
            return fits(need, have[h], T) && priced_fits(rows, left[h]);
        };
        auto placed = [&](double v) {
            for (std::size_t k = first - 1; k + 1 < P; ++k) {
                if (!crossable(k)) continue;
                if (k + 1 == first ? nd.open_lo + b.cross_fwd[k] > v : !serves(first, k, g, v, false, true)) continue;
                for (std::size_t h = 0; h < G; ++h)
                    if (h != g && serves(k + 1, P - 1, h, v, true, false)) return true;
            }
            return false;
        };
        // Candidates: the thresholds, and where stage i-1 can send across (its own time is not
        // one).
        const double at_prev = crossable(first - 1) ? nd.open_lo + b.cross_fwd[first - 1] : inf;
        return least_crossing_threshold(from, at_prev, [&](double v) { return !worth(v) || placed(v); });
    }

    /// The least straggler threshold v >= from at which every run of the stages left fits the
    /// zone groups' GPUs left. At v, a boundary whose two stages cannot take the fastest
    /// transfer across groups within v (crossing_straggler's times) is crossed by no replica's
    /// pipeline, so the stages it joins keep each replica in its group: a run of them holds the
    /// same number d_g of every stage's replicas in each group g, the d_g summing to D (the
    /// first run, after a boundary i-1 that cannot be crossed, over the previous stage's
    /// groups). `shares` false: runs whole in one group only (d_g = D), the plans with no ring
    /// across groups (the caller's other case takes a crossing ring's all-reduce); true: any
    /// shares, a floor of every plan below the node (the pooled tests let a run take all its
    /// replicas from one group at one stage and from another at the next; random pool 163:
    /// 39,093 -> 29,812 nodes). Each run is tested alone against the groups' GPUs left (a
    /// weaker test, still a floor), each group's largest share in closed form (Hall's test and
    /// the prices beyond it are linear in it). Monotone in v; infinity when no v serves. Needs
    /// two zone groups or more.
    template <class SP>
    [[nodiscard]] double run_straggler(const SP& sp, int i, const node& nd, double from, bool shares) const {
        constexpr double inf = std::numeric_limits<double>::infinity();
        const instance_bound& b = *bound_;
        const auto P = static_cast<std::size_t>(sp.P), first0 = static_cast<std::size_t>(i);
        const std::size_t T = types_, G = b.groups, U = std::size_t{1} << T;
        group_left left;
        std::array<per_types, 8> have;
        left_by_group(sp, nd, left, have);
        auto fastest = [&](std::size_t k) { return options_[k].empty() ? inf : options_[k].front().time; };
        const std::uint8_t prev = i > 0 ? patterns_[first0 - 1][nd.prev].groups : 0;
        auto send = [&](std::size_t k) {  // stage k's least time sending across boundary k
            return k + 1 == first0 ? nd.open_lo + b.cross_fwd[k] : fastest(k) + std::max(0.0, b.cross_fwd[k] - b.stages[k].p2p_out);
        };
        auto crossable = [&](std::size_t k, double v) {
            return b.cross_fwd[k] < inf && b.cross_bwd[k] < inf && send(k) <= v &&
                   fastest(k + 1) + std::max(0.0, b.cross_bwd[k] - b.stages[k + 1].p2p_in) <= v;
        };
        // Per group, the most replicas of every stage of [first, last] its GPUs left serve at
        // v (at most D); -1 where a stage has no option within v.
        per_types need;
        need_rows rows;
        auto most = [&](std::size_t first, std::size_t last, std::size_t g, double v) -> long {
            std::fill_n(need.begin(), U, 0L);
            rows.size = 0, rows.full = false;
            for (std::size_t k = first; k <= last; ++k) {
                const demand d = allowed(k, v, 0);
                if (d.types == 0) return -1;
                need[d.types] += d.w;
                if (!no_prices()) rows.add(d, 1);
            }
            within_sets(need, T);
            long n = sp.D;
            for (std::size_t u = 1; u < U && n > 0; ++u)
                if (need[u] > 0) n = std::min(n, have[g][u] / need[u]);
            if (n > 0 && !rows.full && !no_prices()) n = most_at_prices(price_memo_.last(), rows, left[g], T, n);
            return n;
        };
        auto every_run_fits = [&](double v) {
            for (std::size_t first = first0; first < P;) {
                std::size_t last = first;
                while (last + 1 < P && !crossable(last, v)) ++last;
                std::uint32_t groups = (1u << G) - 1;
                if (first == first0 && i > 0 && !crossable(first0 - 1, v)) {
                    if (!shares && !single_type(prev)) return false;  // the run keeps the previous stage's split: it spans
                    groups = prev;
                }
                long held = 0;
                for (std::size_t g = 0; g < G && held < sp.D; ++g) {
                    if (!(groups >> g & 1u)) continue;
                    const long n = most(first, last, g, v);
                    if (n < 0) return false;
                    held = shares ? held + n : std::max(held, n);
                }
                if (held < sp.D) return false;
                first = last + 1;
            }
            return true;
        };
        // Candidates: the thresholds, and where boundary i-1 becomes crossable (stage i-1's own
        // time is not a threshold).
        const double at_prev = i > 0 && b.cross_fwd[first0 - 1] < inf && b.cross_bwd[first0 - 1] < inf
                                   ? std::max(send(first0 - 1), fastest(first0) + std::max(0.0, b.cross_bwd[first0 - 1] - b.stages[first0].p2p_in))
                                   : inf;
        return least_crossing_threshold(from, at_prev, every_run_fits);
    }

    /// Floors of every plan below a node whose stage i has pattern p (own time `own`), with the
    /// instance's floors for the stages after it.
    [[nodiscard]] suffix_terms floors(int i, const suffix_terms& t, double own, double extra_floor, double rest = -1) const {
        const instance_bound& b = *bound_;
        const auto at = static_cast<std::size_t>(i);
        const double mine = own + b.stages[at].p2p_out;
        suffix_terms f = t;
        f.sum = std::max(f.sum + mine + std::max(rest, b.suffix.sum[at + 1]), b.sum);
        f.strag = std::max({f.strag, mine, b.suffix.strag[at + 1], b.straggler});
        f.sync = std::max(f.sync, b.suffix.sync[at + 1]);
        f.upd = std::max({f.upd, b.suffix.update[at + 1], b.prefix.update.back()});  // the last: the whole plan's (pooled)
        f.rate += extra_floor + b.suffix.rate[at + 1];
        return f;
    }

    template <class SP, class O>
    void dfs(const SP& sp, const O& o, int i, const node& nd) {
        if (stopped_ || exhausted_ || (poll_() && (stopped_ = true))) return;
        if (stats_.states >= effort_end_ || stats_.compositions >= priced_end_) {
            exhausted_ = true;
            return;
        }
        ++stats_.states;
        const auto at = static_cast<std::size_t>(i);
        const std::size_t C = sp.cells->cells.size();
        const bool last = i + 1 == sp.P;
        const auto& ps = patterns_[at];
        auto& kids = children_[at];
        kids.clear();
        const std::size_t pending = open_.size();
        // The slowest of the stages left is at least what the GPUs left allow.
        double pooled = nd.pooled >= 0 ? nd.pooled : pooled_straggler(sp, i, nd.used, std::max(nd.lo.strag, bound_->suffix.strag[at]));
        if (pooled == std::numeric_limits<double>::infinity()) return;
        const double pooled_all = pooled;
        // Either the stages left keep the previous stage's zone groups (and their GPUs), or
        // some boundary from here on crosses groups (bound/instance_floors.hpp, zone_floor):
        // the least crossing floor, and the pool left with the stages beside a crossing.
        // Where the stages left cannot stay in the previous stage's groups at all, a child that
        // keeps to them leaves the crossing to a later boundary, whose transfers the sum pays
        // (crossing_sum; a child that leaves them pays at this boundary, which extend prices).
        std::uint8_t kept = 0xff;  // the previous stage's groups, when the rest cannot stay in them
        std::uint8_t prev_groups = 0;
        double stay = pooled;  // the straggler of the stages left in the previous stage's groups
        bool kept_due = false;   // whether kept_straggler applies
        double kept_floor = -1;  // the straggler below a child that keeps to the previous stage's one group (-1: not taken yet)
        auto kept_straggler = [&] {
            if (kept_floor < 0)
                kept_floor = std::min(stay, crossing_straggler(sp, i, nd.used, std::max(pooled, bound_->cross_suffix[at]), nd.open_lo, stay, false));
            return kept_floor;
        };
        if (i > 0 && bound_->groups >= 2) {
            const std::uint8_t g = prev_groups = patterns_[at - 1][nd.prev].groups;
            std::uint32_t within = 0;
            for (std::size_t c = 0; c < C; ++c)
                if (g >> bound_->cell_group[c] & 1u) within |= 1u << c;
            // Where the previous stage spans every group, keeping them is the pool as a whole.
            stay = within == (C >= 32 ? ~0u : (1u << C) - 1) ? pooled : pooled_straggler(sp, i, nd.used, pooled, within);
            if (stay == std::numeric_limits<double>::infinity()) kept = g;
            if (stay > pooled) {
                const double cross = crossing_straggler(sp, i, nd.used, std::max(pooled, bound_->cross_suffix[at - 1]), nd.open_lo, stay);
                pooled = std::min(stay, cross);
                if (pooled == std::numeric_limits<double>::infinity()) return;
                // A child whose stage i keeps to g's one group leaves any crossing to a boundary
                // k >= i: its subtree's straggler is at least the lesser of staying and that
                // (kept_straggler, taken when the first such child passes its other floors).
                kept_due = one_change_ && single_type(g) && i + 1 < sp.P;
            }
        }
        // Below `alone` some run of the stages left has replicas in two groups at every stage
        // (run_straggler): those plans take a crossing ring's all-reduce (spanning), the others
        // the straggler `alone`.
        double alone = pooled, spanning = 0;
        if (!spans_.empty() && i + 1 < sp.P) {
            alone = run_straggler(sp, i, nd, pooled, false);
            if (shares_ && alone > pooled) {  // (shares include each run alone in one group: at most `alone`)
                const double shared = run_straggler(sp, i, nd, pooled, true);
                if (shared == std::numeric_limits<double>::infinity()) return;
                shares_raised_ += shared > pooled;
                pooled = shared;
            }
            spanning = alone > pooled ? spans_[at] : 0;
        }
        // The stages after this one over the GPUs this node leaves (rest_floor), solved at the
        // first pattern the other floors keep (most nodes keep none); none can serve them: no
        // child completes.
        priced_rest rest;
        bool rest_due = !last && rest_lp_;
        double rest_least = -1;  // a child's, before its own GPUs
        // Patterns come fastest first, so once a pattern's floor — its compute with every other
        // term of this stage at the stage's least — misses, so do all after it.
        const stage_least& least = least_[at];
        suffix_terms base = nd.lo, base_t = nd.t, base_span;
        for (auto [b, open] : {std::pair{&base, nd.open_lo}, std::pair{&base_t, nd.open}}) {
            b->strag = std::max(b->strag, pooled);
            if (i > 0) {
                const double done = open + bound_->stages[at - 1].p2p_out;
                b->sum += done;
                b->strag = std::max(b->strag, done);
            }
            b->sync = std::max(b->sync, least.sync);
            b->upd = std::max({b->upd, least.update, bound_->prefix.update.back()});
            if (money_) b->rate += least.rate;
        }
        bool span_case = alone > pooled, twice_case = false;
        base_span = base;
        if (span_case) {
            base_span.sync = std::max(base_span.sync, spanning);
            base.strag = std::max(base.strag, alone);
        }
        // Where staying in the previous stage's one group g is slower than crossing (stay), the
        // plans whose stages left each sit whole in one group (base's case) either stay in g
        // (the straggler `stay`), or change group once (one_change_straggler's straggler, and one
        // crossing's transfers in the sum), or twice or more (two crossings' transfers). Those
        // with a stage in two groups take a crossing ring (base_span).
        suffix_terms base_twice, base_stay;
        bool stay_case = false;
        if (one_change_ && single_type(prev_groups) && stay > pooled_all && !last && !cross_twice_.empty() && cross_sums_[at - 1] < std::numeric_limits<double>::infinity()) {
            const double own0 = ps.empty() ? 0.0 : ps.front().compute + bound_->stages[at].p2p_in;
            auto worth = [&](double v) {
                suffix_terms f = base;
                f.strag = std::max(f.strag, v);
                f.sum += cross_sums_[at - 1];
                return !floors_miss(o, floors(i, f, own0, nd.extra_floor), per_replica_, money_, false, cutoff_);
            };
            const double one = one_change_straggler(sp, i, nd, static_cast<std::size_t>(std::countr_zero(prev_groups)), base.strag, worth);
            if (one > base.strag) {
                ++one_change_raised_;
                if (!span_case && !spans_.empty()) base_span.sync = std::max(base_span.sync, spans_[at]);
                span_case = true;
                twice_case = true;
                base_twice = base;
                base_twice.sum += cross_twice_[at - 1];
                if (stay < std::numeric_limits<double>::infinity()) {
                    stay_case = true;
                    base_stay = base;
                    base_stay.strag = std::max(base_stay.strag, stay);
                }
                base.strag = one;
                base.sum += cross_sums_[at - 1];
            }
        }
        for (std::uint32_t k = 0; k < ps.size(); ++k) {
            const stage_pattern& p = ps[k];
            ++stats_.compositions;
            const double own = p.compute + bound_->stages[at].p2p_in;
            auto missed = [&] {
                auto with_stage = [&](suffix_terms f) {
                    if (last) f.sum += own, f.strag = std::max(f.strag, own), f.rate += nd.extra_floor;
                    else f = floors(i, f, own, nd.extra_floor, rest_least);
                    return f;
                };
                return misses(o, with_stage(base), with_stage(base_t)) && (!twice_case || misses(o, with_stage(base_twice), with_stage(base_t))) &&
                       (!stay_case || misses(o, with_stage(base_stay), with_stage(base_t))) && (!span_case || misses(o, with_stage(base_span), with_stage(base_t)));
            };
            if (missed()) break;
            bool fits = true;
            for (std::size_t c = 0; c < C && fits; ++c) fits = nd.used[c] + p.gpus[c] <= cap_[c];
            if (!fits) continue;
            if (rest_due) {
                rest_due = false;
                if (!rest_floor(sp, at + 1, nd.used, rest)) return;
                if (rest.on) rest_least = std::max(rest.value, bound_->suffix.sum[at + 1]);
                if (missed()) break;
            }
            const grown g = extend(sp, i, nd, p);
            const double extra = nd.extra_floor + p.open.extras * p.extra_rate;
            if (last) {
                leaf(sp, o, g, extra, nd, k);
                continue;
            }
            const double after = rest_for(sp, at + 1, p.gpus, rest) + crossing_sum(at, kept, p.groups);
            const suffix_terms f = floors(i, g.t, g.own, extra, after);
            suffix_terms lo = floors(i, g.lo, g.own_lo, extra, after);
            if (misses(o, lo, f)) continue;
            if (kept_due && (p.groups & ~prev_groups) == 0 && kept_straggler() > lo.strag) {
                lo.strag = kept_floor;
                if (misses(o, lo, f)) {
                    ++kept_dropped_;
                    continue;
                }
            }
            // The child's own first test, taken here (from where the child takes it: the same
            // answer, handed down): the stages after it over the GPUs and open extras it leaves,
            // pooled. A prefix that took the fast GPUs the last stages need (random pool 75,
            // P = 12: two nodes in three below stage 8 died so, each after its memo, flow and
            // zone tests) is dropped before those.
            const double pooled_below = child_pool_ ? child_pooled(sp, i, nd.used, p, g.lo.strag) : -1;
            if (pooled_below > lo.strag) {
                suffix_terms lo_c = lo, f_c = f;
                lo_c.strag = pooled_below;
                f_c.strag = std::max(f.strag, pooled_below);
                if (misses(o, lo_c, f_c)) {
                    ++child_dropped_;
                    continue;
                }
            }
            kids.push_back({o.value(complete_terms(f, per_replica_, money_, false)), k, pooled_below});
        }
        if (last) return;
        std::sort(kids.begin(), kids.end(), [](const child& a, const child& b) { return a.value < b.value || (a.value == b.value && a.k < b.k); });
        for (const child& ch : kids) {
            if (stopped_ || exhausted_) return;
            const stage_pattern& p = ps[ch.k];
            const grown g = extend(sp, i, nd, p);
            const double extra = nd.extra_floor + p.open.extras * p.extra_rate;
            const double after = rest_for(sp, at + 1, p.gpus, rest) + crossing_sum(at, kept, p.groups);
            if (misses(o, floors(i, g.lo, g.own_lo, extra, after), floors(i, g.t, g.own, extra, after))) continue;  // the best fell
            node next;
            next.t = g.t;
            next.lo = g.lo;
            next.open = g.own;
            next.open_lo = g.own_lo;
            next.extra_floor = extra;
            next.prev = ch.k;
            next.pooled = ch.pooled;
            for (std::size_t c = 0; c < C; ++c) next.used[c] = static_cast<std::uint16_t>(nd.used[c] + p.gpus[c]);
            // The open extras still fit (unchanged unless this stage opens more or takes from
            // their cells).
            bool check = p.open.extras > 0;
            for (const extras_demand& x : open_)
                for (std::size_t c = 0; c < C && !check; ++c) check = (x.cells >> c & 1u) && p.gpus[c] > 0;
            if (p.open.extras > 0) open_.push_back(p.open), open_stage_.push_back(static_cast<std::uint16_t>(i));
            if ((!check || flow_.may_fit(open_, room(next.used, C), C)) && !searched(i + 1, ch.k, next)) {
                chosen_[at] = ch.k;
                dfs(sp, o, i + 1, next);
                if (exhausted_) forget(i + 1, ch.k, next);  // its subtree is not searched to the end (suspend)
            }
            open_.resize(pending);
            open_stage_.resize(pending);
        }
    }

    /// The node's terms once stage i takes pattern p: stage i-1 completed by the boundary's
    /// activations, and stage i's own time (compute and the gradients it sends back), both sides.
    template <class SP>
    grown extend(const SP& sp, int i, const node& nd, const stage_pattern& p) {
        boundary b;
        if (i > 0) b = price_.bound_boundary(sp, i - 1, patterns_[static_cast<std::size_t>(i - 1)][nd.prev].least, p.least);
        grown g{nd.t, nd.lo, p.compute + b.bwd, p.compute + b.bwd_lo};
        if (i > 0) {
            const double done = nd.open + b.fwd, done_lo = nd.open_lo + b.fwd_lo;
            g.t.sum += done;
            g.t.strag = std::max(g.t.strag, done);
            g.lo.sum += done_lo;
            g.lo.strag = std::max(g.lo.strag, done_lo);
        }
        for (suffix_terms* t : {&g.t, &g.lo}) {
            t->upd = std::max(t->upd, p.update);
            t->rate += p.rate;  // USD: the objective's, or the tie-break's
        }
        g.t.sync = std::max(g.t.sync, p.sync.time);
        g.lo.sync = std::max(g.lo.sync, p.sync_lo);
        g.t.comm += p.sync.egress + b.egress;
        g.lo.comm += b.egress_lo + p.sync.spread_egress;  // a ring may stay in one zone, unless no zone holds its stage
        return g;
    }

    [[nodiscard]] extras_flow::room_t room(const cell_counts& used, std::size_t C) const {
        extras_flow::room_t r{};
        for (std::size_t c = 0; c < C; ++c) r[c] = cap_[c] - used[c];
        return r;
    }

    /// A complete sequence (the last stage's pattern `k`): its extras assigned, priced, and kept
    /// when it is admitted, under the cut-off and better than the best so far (ties: cheaper,
    /// then faster).
    template <class SP, class O>
    void leaf(const SP& sp, const O& o, grown g, double extra_floor, const node& nd, std::uint32_t k) {
        const stage_pattern& p = patterns_[static_cast<std::size_t>(sp.P - 1)][k];
        g.t.sum += g.own;
        g.t.strag = std::max(g.t.strag, g.own);
        g.lo.sum += g.own_lo;
        g.lo.strag = std::max(g.lo.strag, g.own_lo);
        suffix_terms floor = g.lo, floor_t = g.t;
        floor.rate += extra_floor;
        floor_t.rate += extra_floor;
        if (misses(o, floor, floor_t)) return;
        const std::size_t C = sp.cells->cells.size();
        cell_counts used = nd.used;
        for (std::size_t c = 0; c < C; ++c) used[c] = static_cast<std::uint16_t>(used[c] + p.gpus[c]);
        const std::size_t pending = open_.size();
        if (p.open.extras > 0) open_.push_back(p.open), open_stage_.push_back(static_cast<std::uint16_t>(sp.P - 1));
        record(sp, o, g.t, g.lo, used, k);
        open_.resize(pending);
        open_stage_.resize(pending);
    }

    /// The leaf's extras assigned (least cost: the objective's money, or else its tie-break's:
    /// equal throughput, cheaper). Kept when its price is admitted and better than the best so
    /// far, and its optimistic price is under the cut-off. Without money the terms are exact
    /// before the assignment, which is made only for a leaf that is kept.
    template <class SP, class O>
    void record(const SP& sp, const O& o, suffix_terms f, suffix_terms lo, const cell_counts& used, std::uint32_t k) {
        const std::size_t C = sp.cells->cells.size();
        const auto r = room(used, C);
        auto keeps = [&](const objective_terms& t, double v, const objective_terms& t_lo) {
            return o.admits(t) && o.value(t_lo) <= cutoff_ && (!found_ || v <= best_v_);
        };
        if (!money_) {  // the terms are exact already: most leaves end here
            const objective_terms t = complete_terms(f, per_replica_, false, false);
            if (!keeps(t, o.value(t), complete_terms(lo, per_replica_, false, false))) return;
        }
        if (!open_.empty()) {
            if (!flow_.may_fit(open_, r, C)) return;
            const auto extra_rate = flow_.solve(open_, r, C, true, {assigned_.data(), open_.size()});
            if (!extra_rate) return;
            f.rate += *extra_rate;
            lo.rate += *extra_rate;
        }
        const objective_terms t = complete_terms(f, per_replica_, money_, false);
        const double v = o.value(t), usd = f.rate * t.iteration + f.comm;
        const bool better = !found_ || v < best_v_ || (v == best_v_ && (usd < best_usd_ || (usd == best_usd_ && t.iteration < best_t_.iteration)));
        const objective_terms t_lo = complete_terms(lo, per_replica_, money_, false);
        if (!keeps(t, v, t_lo) || !better) return;
        best_lo_ = o.value(t_lo);
        best_usd_ = usd;
        found_ = true;
        best_v_ = v;
        best_t_ = t;
        chosen_[static_cast<std::size_t>(sp.P - 1)] = k;
        for (std::size_t s = 0; s < static_cast<std::size_t>(sp.P); ++s) best_[s] = patterns_[s][chosen_[s]].least;
        for (std::size_t q = 0; q < open_.size(); ++q)
            for (std::size_t c = 0; c < C; ++c)
                best_[open_stage_[q]].n[c] = static_cast<std::uint16_t>(best_[open_stage_[q]].n[c] + assigned_[q][c]);
    }

    /// Whether every completion of a node that has paid `old` is no slower than the same
    /// completion of one that has paid `mine` (same key: the same completions). Term by term, or
    /// by the iteration's shape (one_f_one_b_iteration, Sailor §4.3's 1F1B), sum + (m - 1)
    /// straggler + all-reduce + update: the last three are maxima with the completion's, which
    /// make them at least `least` (the instance's floors of the plan's straggler and of the
    /// stages left's all-reduce and update), so a straggler under that floor costs nothing, and a
    /// sum smaller by more than m - 1 times the straggler's excess wins. That one only by a margin
    /// above the rounding of the whole iteration (its scale counts the completion's sum at its
    /// floor, least.sum), so what it drops is slower, not tied.
    [[nodiscard]] bool no_slower(const paid_side& old, const paid_side& mine, const paid_side& least) const {
        if (old.sum <= mine.sum && old.strag <= mine.strag && old.sync <= mine.sync && old.upd <= mine.upd && old.open <= mine.open) return true;
        const double m1 = double(std::max(per_replica_ - 1, 0));
        const double strag = std::max({0.0, std::max(old.strag, least.strag) - std::max(mine.strag, least.strag), old.open - mine.open});
        const double gain = (mine.sum + mine.open) - (old.sum + old.open) - m1 * strag - std::max(0.0, std::max(old.sync, least.sync) - std::max(mine.sync, least.sync)) -
                            std::max(0.0, std::max(old.upd, least.upd) - std::max(mine.upd, least.upd));
        const double scale = mine.sum + mine.open + least.sum + m1 * std::max(mine.strag, least.strag) + std::max(mine.sync, least.sync) + std::max(mine.upd, least.upd);
        return gain > 1e-12 * scale;
    }

    /// The node's key in the memo (searched); false where it has none.
    [[nodiscard]] bool memo_key_of(int i, std::uint32_t prev, const node& nd, memo_key& key) const {
        if (open_.size() > memo_open || prev > 0xffff) return false;
        key.stage = static_cast<std::uint16_t>(i);
        key.prev = static_cast<std::uint16_t>(prev);
        key.used = nd.used;
        key.opened = static_cast<std::uint32_t>(open_.size());
        for (std::size_t q = 0; q < open_.size(); ++q) {
            open_sig& g = key.open[q];
            g.cells = open_[q].cells;
            g.extras = static_cast<std::uint32_t>(open_[q].extras);
            for (std::size_t c = 0; c < max_cells; ++c)
                if (g.cells >> c & 1u) g.weights |= std::uint64_t(std::bit_width(unsigned(open_[q].weight[c]))) << (4 * c);
        }
        std::sort(key.open.begin(), key.open.begin() + static_cast<std::ptrdiff_t>(open_.size()));
        return true;
    }
    [[nodiscard]] static paid paid_of(const node& nd) {
        return {{nd.t.sum, nd.t.strag, nd.t.sync, nd.t.upd, nd.open}, {nd.lo.sum, nd.lo.strag, nd.lo.sync, nd.lo.upd, nd.open_lo}, nd.t.rate, nd.t.comm, nd.lo.comm};
    }
    /// Whether a node (stage i next, after `prev`) searched before with the same key has no
    /// completion slower than this node's same one (no_slower); remembers it otherwise.
    bool searched(int i, std::uint32_t prev, const node& nd) {
        memo_key key;
        if (!memo_key_of(i, prev, nd, key)) return false;
        const paid mine = paid_of(nd);
        const instance_bound& b = *bound_;
        const auto at = static_cast<std::size_t>(i);
        const paid_side least{b.stages[at - 1].p2p_out + b.suffix.sum[at], std::max(b.suffix.strag[at], b.straggler), b.suffix.sync[at], b.suffix.update[at], 0};
        auto no_better = [&](const paid& old) {
            return old.rate <= mine.rate && old.comm <= mine.comm && old.comm_lo <= mine.comm_lo && no_slower(old.t, mine.t, least) && no_slower(old.lo, mine.lo, least);
        };
        if (seen* s = memo_.find(key)) {
            for (std::uint32_t q = 0; q < s->n; ++q)
                if (no_better(s->v[q])) return true;
            s->v[s->n < s->v.size() ? s->n++ : s->v.size() - 1] = mine;  // keep the newest when full
            return false;
        }
        // Up to the memory limit; beyond it nodes are not remembered, which costs time, never a
        // plan. (A quarter of it, before: random pool 54 stopped at 10 s, its proof 58 s; with
        // the whole limit it finishes in 7 s, ~200,000 entries. Replacing entries once full, the
        // shallower kept, did not: what finishes it is entries held, not which.)
        if (memo_.size() * decltype(memo_)::entry_bytes * memo_share_ < memory_limit()) memo_.insert(key, seen{{mine}, 1});
        return false;
    }
    /// Takes back what searched() remembered of a node whose subtree the solve left unfinished
    /// (it ran out of effort below it), so that the memo holds subtrees searched to the end
    /// only (suspend). A node of the same key it dropped meanwhile would lie in its subtree,
    /// which has none (keys hold the stage).
    void forget(int i, std::uint32_t prev, const node& nd) {
        memo_key key;
        if (!memo_key_of(i, prev, nd, key)) return;
        seen* s = memo_.find(key);
        if (!s) return;
        const paid mine = paid_of(nd);
        for (std::uint32_t q = 0; q < s->n; ++q)
            if (std::memcmp(&s->v[q], &mine, sizeof(paid)) == 0) {
                std::copy(s->v.begin() + q + 1, s->v.begin() + s->n, s->v.begin() + q);
                --s->n;
                return;
            }
    }

    stage_pricer<Time> price_;
    stage_dp<Time> dp_;
    node_memo_t memo_{};
    rest_memo_t rest_memo_{};
    std::optional<suspension> armed_;  ///< resume()'s, for the next solve
    bool suspendable_ = false;         ///< the last solve ran out of effort over the patterns
    std::uint64_t digest_ = 0, resumed_ = 0;
    const instance_bound* bound_ = nullptr;
    bool money_ = false, stopped_ = false, exhausted_ = false, found_ = false, always_ = false, rest_lp_ = true, one_change_ = true, shares_ = true, child_pool_ = true;
    std::uint64_t one_change_raised_ = 0, kept_dropped_ = 0, shares_raised_ = 0, child_dropped_ = 0, rest_hits_ = 0;
    bool rest_memo_on_ = true;
    std::size_t memo_share_ = 1;  ///< memo_share
    std::uint64_t effort_end_ = 0;  ///< stats_.states at which the effort runs out
    std::uint64_t per_node_ = 0;    ///< compositions_per_node
    std::size_t recovered_ = 0;     ///< instances the stage DP gave up at its memory limit and the patterns solved
    std::size_t share_ = 8;         ///< dp_share
    std::uint64_t priced_end_ = 0;  ///< stats_.compositions at which it runs out
    int per_replica_ = 1;
    double cutoff_ = std::numeric_limits<double>::infinity(), best_v_ = 0, best_usd_ = 0;
    double best_lo_ = 0;  ///< the best's optimistic value (what the cut-off admitted)
    objective_terms best_t_;
    stop_poll poll_{nullptr};
    std::array<int, max_cells> cap_{};
    std::vector<std::vector<stage_pattern>> patterns_;
    std::vector<std::vector<child>> children_;
    std::vector<stage_least> least_;
    std::vector<std::vector<option>> options_;
    std::size_t types_ = 0;           ///< GPU types of the instance
    price_cache price_memo_;
    bool priced_ = false;  ///< price_memo_ holds this solve's prices beyond Hall's (make_prices)
    std::vector<double> thresholds_;  ///< every option's time, sorted, distinct
    /// suffix_demand's: per threshold, where its stages' spans start (unbuilt: not yet); per
    /// (threshold, i), its rows in column_rows_ (first unbuilt: some stage has no option).
    static constexpr std::size_t unbuilt = std::numeric_limits<std::size_t>::max();
    mutable std::vector<std::size_t> column_at_;
    struct column_span {
        std::size_t first, count, prices;  ///< rows [first, first + count), prices at column_prices_[prices]
    };
    mutable std::vector<column_span> column_span_;
    mutable std::vector<std::pair<demand, long>> column_rows_, merged_;
    mutable std::vector<std::int64_t> column_prices_, room_at_;
    std::vector<double> cross_thresholds_;  ///< and the times beside a crossing (crossing_straggler)
    std::vector<double> spans_;             ///< per stage, the least crossing ring from it on (run_straggler)
    std::vector<double> cross_sums_;        ///< per boundary k, the least the sum gains from a crossing at k or later (crossing_sum)
    std::vector<double> cross_twice_;       ///< and from two crossings at distinct boundaries (one_change_straggler's other case)
    /// rest_floor's LP, its classes of stages and their options, and its answer at the node.
    small_ilp lp_;
    std::vector<std::uint16_t> lp_class_, lp_count_;
    std::vector<std::vector<option>> lp_options_;
    std::vector<demand> demand_;            ///< scratch: each stage's options at a threshold
    need_rows one_rows_;                    ///< scratch of one_change_straggler
    std::vector<endpoint> ends_;      ///< scratch: a pattern's endpoints in every real zone
    std::vector<std::uint32_t> chosen_;
    std::vector<composition> best_;
    std::vector<extras_demand> open_;
    std::vector<std::uint16_t> open_stage_;
    std::vector<cell_counts> assigned_;
    extras_flow flow_;
    dp_stats stats_;
};

static_assert(concepts::check_solver<pattern_search<>, stage_problem<>, max_throughput>());
static_assert(concepts::check_solver<pattern_search<>, stage_problem<>, min_cost>());

}  // namespace hetplan::search
