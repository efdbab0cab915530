// The stage pattern search (search/solve/pattern_search.hpp) and its pieces: the extras flow, the
// small integer program solver, the pooled floors — each against brute force or the stage DP.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "../plan_checks.hpp"
#include "../layouts.hpp"
#include "../random_pool.hpp"
#include "../support.hpp"
#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/sailor.hpp"
#include "hetplan/search/solve/extras_flow.hpp"
#include "hetplan/search/solve/pattern_search.hpp"
#include "hetplan/search/solve/small_ilp.hpp"

using namespace hetplan;
using namespace hetplan::search;

namespace {

/// What the checking solvers below share: they price with, and prepare instances by, the
/// solver `Self::lead()` names (the solver concept's time_model() and prepare()).
template <class Self>
struct prepared_by {
    [[nodiscard]] const auto& time_model() const { return static_cast<const Self&>(*this).lead().time_model(); }
    template <class Pr>
    void prepare(stage_problem<Pr>& sp) const {
        static_cast<const Self&>(*this).lead().prepare(sp);
    }
};

/// The random pools of tests/random_pool.hpp (2-max_types types), this test's family.
struct pool_world : test::random_pool {
    pool_world(unsigned seed, int max_types, int extra) : random_pool(seed, max_types, extra, 99) {}
};

/// A solver that solves every instance with the stage DP and the pattern search, with no
/// cut-off, and checks that they agree: the same objective value (or both none), and pattern
/// compositions of D replicas per stage within every cell's GPUs.
struct both_solvers : prepared_by<both_solvers> {
    both_solvers() : dp(sailor_time_model{}), ps(sailor_time_model{}) { ps.always_patterns(); }
    stage_dp<> dp;
    pattern_search<> ps;
    std::size_t compared = 0, solutions = 0;
    static constexpr const char* name() { return "stage DP and pattern search"; }
    [[nodiscard]] const auto& lead() const { return dp; }
    template <class Pr, class O>
    std::optional<dp_solution> solve(const problem& pb, const stage_problem<Pr>& sp, const O& o, const solve_limits&) {
        // No cut-off (every instance solved in full); the DP gets 50 ms, and instances it cannot
        // finish in that time or in its memory are left out.
        const stop_condition second = stop_condition::after(std::chrono::milliseconds(50));
        const auto gave_up = dp.stats().abandoned;
        auto want = dp.solve(pb, sp, o, {std::numeric_limits<double>::infinity(), &second});
        if (dp.stopped() || dp.stats().abandoned != gave_up) return std::nullopt;
        const auto got = ps.solve(pb, sp, o, {});
        ++compared;
        CAPTURE(sp.P);
        CAPTURE(sp.D);
        CAPTURE(sp.mbs);
        REQUIRE(bool(got) == bool(want));
        if (!got) return want;
        ++solutions;
        CHECK(o.value(got->terms) == doctest::Approx(o.value(want->terms)).epsilon(1e-9));
        std::array<int, max_cells> used{};
        for (const composition& c : got->stages) {
            int n = 0;
            for (std::size_t q = 0; q < sp.cells->cells.size(); ++q) n += c.n[q], used[q] += c.n[q] * c.tp[sp.cells->cells[q].type];
            CHECK(n == sp.D);
        }
        for (std::size_t q = 0; q < sp.cells->cells.size(); ++q) CHECK(used[q] <= sp.cells->cells[q].capacity);
        return want;
    }
};

/// A solver that solves every instance without a limit and again with a few efforts, checking
/// the effort's law: out of it, the pattern search hands back its best so far (never better than
/// the optimum) and says so; within it, the optimum. The stage DP out of effort has nothing. The
/// same law with the patterns priced capped too (compositions_per_node), which runs out wherever
/// the nodes alone do, and sooner where a node prices many.
struct effort_solver : prepared_by<effort_solver> {
    effort_solver() : ps(sailor_time_model{}), capped(sailor_time_model{}), dp(sailor_time_model{}) {
        ps.always_patterns();
        capped.always_patterns().compositions_per_node(2);
    }
    pattern_search<> ps, capped;
    stage_dp<> dp;
    std::size_t exhausted = 0, with_best_so_far = 0, within = 0, capped_sooner = 0;
    static constexpr const char* name() { return "pattern search with and without effort"; }
    [[nodiscard]] const auto& lead() const { return ps; }
    template <class Pr, class O>
    std::optional<dp_solution> solve(const problem& pb, const stage_problem<Pr>& sp, const O& o, const solve_limits&) {
        const auto full = ps.solve(pb, sp, o, {});
        REQUIRE_FALSE(ps.exhausted());
        for (std::uint64_t effort : {1, 3, 20, 400}) {
            CAPTURE(effort);
            const std::uint64_t before = ps.stats().compositions;
            const auto part = ps.solve(pb, sp, o, {std::numeric_limits<double>::infinity(), nullptr, effort});
            const std::uint64_t priced = capped.stats().compositions;
            const auto short_of = capped.solve(pb, sp, o, {std::numeric_limits<double>::infinity(), nullptr, effort});
            // The same nodes in the same order, stopped no later.
            CHECK(capped.stats().compositions - priced <= ps.stats().compositions - before);
            if (ps.exhausted()) CHECK(capped.exhausted());
            if (capped.exhausted()) {
                if (!ps.exhausted()) {
                    ++capped_sooner;
                    CHECK(capped.stats().compositions - priced >= 2 * effort);  // it reached the cap
                }
                if (short_of) CHECK(o.value(short_of->terms) >= o.value(full->terms) * (1 - 1e-12));
            } else {
                REQUIRE(bool(short_of) == bool(full));
                if (short_of) CHECK(o.value(short_of->terms) == doctest::Approx(o.value(full->terms)).epsilon(1e-12));
            }
            if (!ps.exhausted()) {
                ++within;
                REQUIRE(bool(part) == bool(full));
                if (part) CHECK(o.value(part->terms) == doctest::Approx(o.value(full->terms)).epsilon(1e-12));
                continue;
            }
            ++exhausted;
            if (!part) continue;
            ++with_best_so_far;
            REQUIRE(full);  // a complete sequence was found, so the full search has one too
            CHECK(o.value(part->terms) >= o.value(full->terms) * (1 - 1e-12));
            CHECK(part->stages.size() == static_cast<std::size_t>(sp.P));
        }
        const auto none = dp.solve(pb, sp, o, {std::numeric_limits<double>::infinity(), nullptr, 1});
        if (dp.exhausted()) CHECK_FALSE(none);
        return full;
    }
};

/// A solver that solves every instance in rounds of growing effort, twice: each round
/// continuing the last one's suspension (pattern_search::suspend/resume), and each round
/// afresh. The later rounds get a lower cut-off (a run's cut-off only falls): above, just below
/// or 2 % below the instance's optimum in turn, so that the best a suspension holds is sometimes
/// one the lower cut-off refuses (its optimistic price above it), and the answer must then come
/// from a solve that does not start from it. Both chains end with the value of an unlimited
/// solve under that last cut-off; the continued rounds take fewer nodes in all. A suspension
/// offered under a higher cut-off than its own, or to another instance, is not taken up.
struct resume_solver : prepared_by<resume_solver> {
    resume_solver() : ps(sailor_time_model{}), fresh(sailor_time_model{}) {
        ps.always_patterns();
        fresh.always_patterns();
    }
    pattern_search<> ps, fresh;
    std::size_t chains = 0, rounds = 0, refused = 0, foreign = 0;
    std::uint64_t nodes_continued = 0, nodes_afresh = 0;
    std::optional<pattern_search<>::suspension> other;  ///< the last instance's, offered to the next
    static constexpr const char* name() { return "pattern search in rounds, continued and afresh"; }
    [[nodiscard]] const auto& lead() const { return ps; }
    template <class Pr, class O>
    std::optional<dp_solution> solve(const problem& pb, const stage_problem<Pr>& sp, const O& o, const solve_limits&) {
        constexpr double inf = std::numeric_limits<double>::infinity();
        // Another instance's suspension offered first: not taken, the answer the unlimited one.
        std::optional<double> want;
        if (other) {
            const std::uint64_t before = ps.resumed();
            ps.resume(std::move(other));
            other.reset();
            if (const auto full = ps.solve(pb, sp, o, {})) want = o.value(full->terms);
            CHECK(ps.resumed() == before);
            ++foreign;
        }
        if (const auto full = fresh.solve(pb, sp, o, {})) {
            if (foreign > 0 && want) CHECK(*want == doctest::Approx(o.value(full->terms)).epsilon(1e-12));
            want = o.value(full->terms);
        } else {
            CHECK_FALSE(want);
        }
        REQUIRE_FALSE(fresh.exhausted());
        auto value = [&](const std::optional<dp_solution>& x) { return x ? std::optional(o.value(x->terms)) : std::nullopt; };
        // Rounds of effort 1, 2, 4, ... under no cut-off up to round `drop`, then under `low`;
        // continued from each round's suspension or each afresh. The answer, and the round it came in.
        auto rounds_of = [&](pattern_search<>& solver, double low, int drop, bool continued) {
            std::optional<double> got;
            std::uint64_t effort = 1;
            bool tried = false;
            int round = 0;
            for (;; ++round, effort *= 2) {
                const double cut = round < drop ? inf : low;
                got = value(solver.solve(pb, sp, o, {cut, nullptr, effort}));
                ++rounds;
                if (!solver.exhausted()) break;
                auto s = solver.suspend();
                REQUIRE(s);
                CHECK_FALSE(solver.suspend());  // taken once
                if (!continued) continue;
                if (cut < inf && !tried) {
                    tried = true;
                    // Offered under a higher cut-off than its own (low): refused.
                    const std::uint64_t before = solver.resumed();
                    solver.resume(std::move(s));
                    (void)solver.solve(pb, sp, o, {inf, nullptr, 1});
                    refused += solver.resumed() == before;
                    CHECK(solver.resumed() == before);
                    s = solver.suspend();
                    if (!s) break;  // that one-node solve finished the instance
                }
                solver.resume(std::move(s));
            }
            return std::pair{got, round};
        };
        const std::uint64_t taken = ps.resumed();
        for (const double below : {1 + 1e-3, 1 - 1e-3, 0.99, 0.98, 0.95}) {
            const double low = want ? *want * below : inf;
            std::optional<double> under_low;  // the unlimited solve's under it
            if (const auto r = fresh.solve(pb, sp, o, {low, nullptr, 0})) under_low = o.value(r->terms);
            for (const int drop : {1, 2, 4}) {
                CAPTURE(below);
                CAPTURE(drop);
                const std::uint64_t a = ps.stats().states, b = fresh.stats().states;
                const auto [got, round] = rounds_of(ps, low, drop, true);
                const auto [alone, alone_round] = rounds_of(fresh, low, drop, false);
                nodes_continued += ps.stats().states - a, nodes_afresh += fresh.stats().states - b;
                // Each equals the unlimited solve's under the cut-off of its last round.
                const std::optional<double> ref = round < drop ? want : under_low, ref_alone = alone_round < drop ? want : under_low;
                REQUIRE(got.has_value() == ref.has_value());
                if (got) CHECK(*got == doctest::Approx(*ref).epsilon(1e-12));
                REQUIRE(alone.has_value() == ref_alone.has_value());
                if (alone) CHECK(*alone == doctest::Approx(*ref_alone).epsilon(1e-12));
            }
        }
        if (ps.resumed() > taken) ++chains;
        // A suspension of this instance (one node), offered to the next.
        (void)ps.solve(pb, sp, o, {inf, nullptr, 1});
        other = ps.suspend();
        return ps.solve(pb, sp, o, {});
    }
};

/// A solver that solves every instance with and without the LP floor of the stages left at
/// each node (pattern_search::rest_lp), with no cut-off, checks that both give the same value, and
/// counts the nodes each takes.
struct rest_lp_on_off : prepared_by<rest_lp_on_off> {
    rest_lp_on_off() : on(sailor_time_model{}), off(sailor_time_model{}) {
        on.always_patterns();
        off.always_patterns().rest_lp(false);
    }
    pattern_search<> on, off;
    std::size_t compared = 0, fewer = 0;
    static constexpr const char* name() { return "pattern search with and without the LP of the stages left"; }
    [[nodiscard]] const auto& lead() const { return on; }
    template <class Pr, class O>
    std::optional<dp_solution> solve(const problem& pb, const stage_problem<Pr>& sp, const O& o, const solve_limits&) {
        const auto a = on.stats().states, b = off.stats().states;
        const auto with = on.solve(pb, sp, o, {});
        const auto without = off.solve(pb, sp, o, {});
        CAPTURE(sp.P);
        CAPTURE(sp.D);
        REQUIRE(bool(with) == bool(without));
        ++compared;
        // Not fewer on every instance: other floors order the children otherwise, and the
        // first good leaf can come later.
        if (on.stats().states - a < off.stats().states - b) ++fewer;
        if (with) CHECK(o.value(with->terms) == doctest::Approx(o.value(without->terms)).epsilon(1e-12));
        return with;
    }
};

/// A solver that solves every instance twice under the run's cut-off, with a floor of the
/// pattern search and without it (`Off` turns it off): the same answer (or none) both ways.
template <class Off>
struct floor_on_off : prepared_by<floor_on_off<Off>> {
    floor_on_off() : on(sailor_time_model{}), off(sailor_time_model{}) {
        on.always_patterns();
        Off{}(off.always_patterns());
    }
    pattern_search<> on, off;
    std::size_t compared = 0, solutions = 0;
    static constexpr const char* name() { return "pattern search with and without one of its floors"; }
    [[nodiscard]] const auto& lead() const { return on; }
    template <class Pr, class O>
    std::optional<dp_solution> solve(const problem& pb, const stage_problem<Pr>& sp, const O& o, const solve_limits& lim) {
        const auto with = on.solve(pb, sp, o, {lim.cutoff, nullptr});
        const auto without = off.solve(pb, sp, o, {lim.cutoff, nullptr});
        CAPTURE(sp.P);
        CAPTURE(sp.D);
        REQUIRE(bool(with) == bool(without));
        ++compared;
        if (with) {
            ++solutions;
            CHECK(o.value(with->terms) == doctest::Approx(o.value(without->terms)).epsilon(1e-12));
        }
        return with;
    }
};
struct without_one_change {
    void operator()(pattern_search<>& s) const { s.one_change(false); }
};
struct without_shares {
    void operator()(pattern_search<>& s) const { s.shares(false); }
};
struct without_child_pool {
    void operator()(pattern_search<>& s) const { s.child_pool(false); }
};
struct without_rest_memo {
    void operator()(pattern_search<>& s) const { s.rest_memo(false); }
};

/// A solver that solves every instance three ways with no cut-off: the pattern search whose stage
/// DP (for the instances counts_are_few hands it) has almost no memory, the patterns alone, and
/// the stage DP alone with that memory. Where the DP gives up, the first must still return the
/// patterns' value (it hands over), and say nothing was given up.
struct dp_out_of_memory : prepared_by<dp_out_of_memory> {
    static constexpr std::size_t tiny = 2048;  // bytes: the DP gives up on all but the smallest instances
    dp_out_of_memory() : first(sailor_time_model{}), patterns(sailor_time_model{}), dp(sailor_time_model{}) {
        first.set_memory_limit(tiny);
        patterns.always_patterns();
        dp.set_memory_limit(tiny);
    }
    pattern_search<> first, patterns;
    stage_dp<> dp;
    std::size_t compared = 0, given_up = 0;
    static constexpr const char* name() { return "pattern search whose stage DP runs out of memory"; }
    [[nodiscard]] const auto& lead() const { return first; }
    template <class Pr, class O>
    std::optional<dp_solution> solve(const problem& pb, const stage_problem<Pr>& sp, const O& o, const solve_limits&) {
        const auto a = first.solve(pb, sp, o, {});
        const auto b = patterns.solve(pb, sp, o, {});
        const std::size_t before = dp.stats().abandoned;
        (void)dp.solve(pb, sp, o, {});
        given_up += dp.stats().abandoned > before;
        CAPTURE(sp.P);
        CAPTURE(sp.D);
        REQUIRE(bool(a) == bool(b));
        ++compared;
        if (a) CHECK(o.value(a->terms) == doctest::Approx(o.value(b->terms)).epsilon(1e-12));
        CHECK(first.stats().abandoned == 0);
        return a;
    }
};

/// A pattern search with a memory limit of `limit` bytes on every instance, next to stage DPs
/// with that limit and with an eighth of it, and the patterns alone: where counts_are_few hands
/// the instance to the DP, the DP gives up at an eighth of the limit and the patterns solve it.
struct dp_handover : prepared_by<dp_handover> {
    explicit dp_handover(std::size_t limit) : ps(sailor_time_model{}), patterns(sailor_time_model{}), full(sailor_time_model{}), eighth(sailor_time_model{}) {
        ps.set_memory_limit(limit);
        patterns.always_patterns();
        full.set_memory_limit(limit);
        eighth.set_memory_limit(limit / ps.dp_share());  // the default share, an eighth
    }
    pattern_search<> ps, patterns;
    stage_dp<> full, eighth;
    std::size_t dp_first = 0, between = 0;
    static constexpr const char* name() { return "pattern search with its stage DP's hand-over"; }
    [[nodiscard]] const auto& lead() const { return ps; }
    template <class Pr, class O>
    std::optional<dp_solution> solve(const problem& pb, const stage_problem<Pr>& sp, const O& o, const solve_limits&) {
        CAPTURE(sp.P);
        CAPTURE(sp.D);
        const std::size_t before = ps.recovered();
        const auto got = ps.solve(pb, sp, o, {});
        const auto want = patterns.solve(pb, sp, o, {});
        REQUIRE(bool(got) == bool(want));
        if (got) CHECK(o.value(got->terms) == doctest::Approx(o.value(want->terms)).epsilon(1e-12));
        CHECK(ps.stats().abandoned == 0);
        if (!pattern_search<>::counts_are_few(sp)) return got;
        ++dp_first;
        auto gives_up = [&](stage_dp<>& dp) {
            const std::size_t n = dp.stats().abandoned;
            (void)dp.solve(pb, sp, o, {});
            return dp.stats().abandoned > n;
        };
        const bool out_of_eighth = gives_up(eighth), out_of_full = gives_up(full);
        between += out_of_eighth && !out_of_full;
        CHECK(ps.recovered() == before + (out_of_eighth ? 1 : 0));  // handed over exactly where an eighth gives up
        return got;
    }
};

/// The fastest plan of a list (its best may be a cheaper one within the 0.1 % tie band).
double fastest(const plan_result& r) {
    double t = std::numeric_limits<double>::infinity();
    for (const auto& p : r.plans) t = std::min(t, p.iteration().value);
    return t;
}

/// Plans `rq` with a copy of `planner` (its solver both_solvers) and adds up what it compared.
template <class Planner, class Request>
void plan_both(const Planner& planner, const problem& pb, const Request& rq, std::size_t& compared, std::size_t& solutions) {
    auto p = planner;
    (void)p.plan(pb, rq);
    compared += p.solver().compared, solutions += p.solver().solutions;
}

}  // namespace

TEST_CASE("pattern search: the stage DP's value on every instance of random pools (issue 15)") {
    std::size_t compared = 0, solutions = 0;
    for (unsigned seed = 1; seed <= 16; ++seed) {
        CAPTURE(seed);
        const pool_world w(seed, seed % 3 == 0 ? 4 : 3, seed % 4 == 0 ? 1 : 0);
        const problem pb = w.pb();
        sailor_options opt;
        opt.space.max_pipeline_degree = 4;
        auto planner = sailor_planner<>(opt).with_solver(both_solvers());
        plan_both(planner, pb, plan_request<max_throughput>{}, compared, solutions);
        plan_both(planner, pb, plan_request<min_cost>{}, compared, solutions);
        plan_request<max_throughput> budget;  // money inside the search
        budget.objective.limits.max_usd = 0.01;
        plan_both(planner, pb, budget, compared, solutions);
        if (seed % 2 == 0)  // every TP degree and zones apart: TPs that differ per stage, more cells
            plan_both(planner.with_typing(free_tp{}).with_zones(keep_zones{}), pb, plan_request<max_throughput>{}, compared, solutions);
    }
    MESSAGE(compared << " instances compared, " << solutions << " with a solution");
    CHECK(solutions > 500);
}

/// Links between zones 20-100 times slower than the random pools': a stage's transfers and ring
/// across zones cost more than its compute, so the floors of where replicas can sit (zone_floor,
/// and the pattern search's per-node test) cut most of the search.
void far_apart(pool_world& w) {
    for (std::size_t a = 0; a < w.hw.zones.size(); ++a)
        for (std::size_t b = 0; b < w.hw.zones.size(); ++b)
            if (a != b) w.hw.network.set_zone_default(zone_id{a}, zone_id{b}, alpha_beta_link{seconds{1e-3}, bytes_per_second{1e7 * (1 + double(a + b))}});
}

TEST_CASE("pattern search: the LP floor of the stages left at each node keeps every value and prunes (issue 15)") {
    // Both objectives, zones merged and apart; every instance solved to its end twice (no
    // cut-off), so pipelines of up to four stages (six took 13 minutes).
    std::size_t compared = 0, fewer = 0;
    for (unsigned seed = 1; seed <= 10; ++seed) {
        CAPTURE(seed);
        const pool_world w(seed, 3, seed % 2);
        const problem pb = w.pb();
        sailor_options opt;
        opt.space.max_pipeline_degree = 4;
        auto planner = sailor_planner<>(opt).with_solver(rest_lp_on_off());
        auto both = [&](auto p) {
            (void)p.plan(pb, plan_request<max_throughput>{});
            (void)p.plan(pb, plan_request<min_cost>{});
            compared += p.solver().compared, fewer += p.solver().fewer;
        };
        both(planner);
        both(planner.with_zones(keep_zones{}));
    }
    MESSAGE(compared << " instances compared; the LP floor took fewer nodes on " << fewer);
    CHECK(compared > 200);
    CHECK(fewer > 0);
}

/// Pipelines of up to six stages over pools whose zones are far apart and small, so that a
/// pipeline must change zone or keep runs of stages in one; each instance solved under the run's
/// cut-off with a floor and without it (floor_on_off<Off>: a floor above a leaf under the
/// cut-off would lose that leaf), both objectives, zones merged and apart. `count(solver)`
/// reads the counters of the floor's effect after each plan. Returns the instances compared and
/// those with a solution. `far` false: the random pools as they are; seeds 1 to `seeds`.
template <class Off, class Count>
std::pair<std::size_t, std::size_t> far_apart_on_off(const Count& count, bool far = true, unsigned seeds = 16) {
    std::size_t compared = 0, solutions = 0;
    for (unsigned seed = 1; seed <= seeds; ++seed) {
        CAPTURE(seed);
        pool_world w(seed, 3, seed % 2);
        if (far && w.hw.zones.size() < 2) continue;
        if (far) far_apart(w);
        const problem pb = w.pb();
        sailor_options opt;
        opt.space.max_pipeline_degree = 6;
        auto run = [&](auto p) {
            (void)p.plan(pb, plan_request<max_throughput>{});
            (void)p.plan(pb, plan_request<min_cost>{});
            compared += p.solver().compared, solutions += p.solver().solutions;
            count(p.solver().on);
        };
        run(sailor_planner<>(opt).with_solver(floor_on_off<Off>()).with_zones(keep_zones{}));
        run(sailor_planner<>(opt).with_solver(floor_on_off<Off>()));
    }
    return {compared, solutions};
}

TEST_CASE("pattern search: the one-change straggler and the kept group's later crossing keep every value under the cut-off (issue 15)") {
    std::uint64_t raised = 0, dropped = 0;
    const auto [compared, solutions] = far_apart_on_off<without_one_change>([&](const pattern_search<>& s) {
        raised += s.one_change_raised();
        dropped += s.kept_children_dropped();
    });
    MESSAGE(compared << " instances compared, " << solutions << " with a solution; the one-change straggler raised " << raised
                     << " node floors; the later crossing dropped " << dropped << " children that kept to their group");
    CHECK(solutions > 100);
    CHECK(raised > 0);
    CHECK(dropped > 0);
}

TEST_CASE("pattern search: the groups' shares of each run's replicas keep every value under the cut-off (issue 15)") {
    // Boundaries between zone groups that no pipeline can cross within the straggler join runs
    // of stages, whose every stage holds the same share of its replicas in each group.
    std::uint64_t raised = 0;
    const auto [compared, solutions] = far_apart_on_off<without_shares>([&](const pattern_search<>& s) { raised += s.shares_raised(); });
    MESSAGE(compared << " instances compared, " << solutions << " with a solution; the shares raised " << raised << " node floors");
    CHECK(solutions > 100);
    CHECK(raised > 0);
}

TEST_CASE("pattern search: the pooled straggler below each child, taken before the child is visited, keeps every value under the cut-off (issue 15)") {
    // Random pools (zones merged and apart) and the far-apart ones, both objectives, pipelines of
    // up to six stages: a child whose GPUs leave the stages after it too slow a pool is dropped
    // at its parent.
    std::uint64_t dropped = 0;
    auto count = [&](const pattern_search<>& s) { dropped += s.children_pooled_out(); };
    const auto [compared, solutions] = far_apart_on_off<without_child_pool>(count, false, 8);
    const auto [far, far_solutions] = far_apart_on_off<without_child_pool>(count);
    MESSAGE((compared + far) << " instances compared, " << (solutions + far_solutions) << " with a solution; " << dropped << " children dropped at their parent");
    CHECK(solutions + far_solutions > 100);
    CHECK(dropped > 0);
}

TEST_CASE("pattern search: rest_floor's answers kept per solve are the LP's at every node (issue 15)") {
    // Keyed by the stage and the GPUs left of each type: a key that missed something the LP
    // reads would hand a node another node's floor.
    std::uint64_t hits = 0;
    const auto [compared, solutions] = far_apart_on_off<without_rest_memo>([&](const pattern_search<>& s) { hits += s.rest_memo_hits(); }, false, 8);
    MESSAGE(compared << " instances compared, " << solutions << " with a solution; " << hits << " floors read from the memo");
    CHECK(solutions > 50);
    CHECK(hits > 0);
}

TEST_CASE("pattern search: where its stage DP runs out of memory, the patterns solve the instance (issue 15)") {
    // Zones apart (many small cells: the instances counts_are_few hands the DP). Before, such an
    // instance had no solution and the planner noted it as given up (4 types over 4 zones: 3 s
    // of DP for nothing, where the patterns found a plan in 1 s).
    std::size_t compared = 0, given_up = 0;
    for (unsigned seed = 1; seed <= 4; ++seed) {
        CAPTURE(seed);
        const pool_world w(seed, 3, 1);
        const problem pb = w.pb();
        sailor_options opt;
        opt.space.max_pipeline_degree = 4;
        auto p = sailor_planner<>(opt).with_solver(dp_out_of_memory()).with_zones(keep_zones{}).with_bound(no_bound{});  // every instance
        (void)p.plan(pb, plan_request<max_throughput>{});
        compared += p.solver().compared, given_up += p.solver().given_up;
    }
    MESSAGE(compared << " instances compared; the stage DP alone gave up " << given_up);
    CHECK(given_up > 0);
}

TEST_CASE("pattern search: the stage DP that counts_are_few chose hands over at an eighth of the memory limit (issue 15)") {
    // Where the DP only goes first, an eighth of the limit before the patterns take over: 128
    // GPUs of 4 types over 4 zones in 0.84x the time (docs/reproduction.md, stop 62).
    std::size_t dp_first = 0, between = 0;
    for (unsigned seed = 1; seed <= 4; ++seed) {
        CAPTURE(seed);
        const pool_world w(seed, 3, 1);
        const problem pb = w.pb();
        sailor_options opt;
        opt.space.max_pipeline_degree = 4;
        auto p = sailor_planner<>(opt).with_solver(dp_handover(std::size_t{16} << 10)).with_zones(keep_zones{}).with_bound(no_bound{});  // every instance
        (void)p.plan(pb, plan_request<max_throughput>{});
        dp_first += p.solver().dp_first, between += p.solver().between;
    }
    MESSAGE(dp_first << " instances the stage DP took first; " << between << " within the limit but not within an eighth of it");
    CHECK(between > 0);
}

TEST_CASE("pattern search: the stage DP's value where zones are far apart (zone floors prune; issue 15)") {
    std::size_t compared = 0, solutions = 0;
    for (unsigned seed = 1; seed <= 24; ++seed) {
        CAPTURE(seed);
        pool_world w(seed, 3, seed % 3 == 0 ? 1 : 0);
        if (w.hw.zones.size() < 2) continue;
        far_apart(w);
        const problem pb = w.pb();
        sailor_options opt;
        opt.space.max_pipeline_degree = 4;
        auto planner = sailor_planner<>(opt).with_solver(both_solvers()).with_zones(keep_zones{});
        plan_both(planner, pb, plan_request<max_throughput>{}, compared, solutions);
        plan_both(planner, pb, plan_request<min_cost>{}, compared, solutions);
    }
    MESSAGE(compared << " instances compared, " << solutions << " with a solution");
    CHECK(solutions > 200);
}

TEST_CASE("branch and bound where zones are far apart returns the straightforward search's plans (issue 15)") {
    // The zone floors prune whole instances against the run's cut-off (bounded_solve) and nodes
    // against it: a floor above some plan's price would change the list.
    int lists = 0;
    for (unsigned seed = 1; seed <= 24 && lists < 8; ++seed) {
        CAPTURE(seed);
        pool_world w(seed, 3, 0);
        if (w.hw.zones.size() < 2) continue;
        far_apart(w);
        const problem pb = w.pb();
        sailor_options opt;
        opt.space.max_pipeline_degree = 3;
        for (bool apart : {false, true}) {
            CAPTURE(apart);
            auto check = [&](auto bnb) {
                const auto plain = bnb.straightforward().plan(pb);
                const auto got = bnb.plan(pb);
                REQUIRE(plain.plans.size() == got.plans.size());
                for (std::size_t k = 0; k < plain.plans.size(); ++k) CHECK(plain.plans[k].pl == got.plans[k].pl);
                lists += plain.plans.empty() ? 0 : 1;
            };
            if (apart) check(sailor_planner<>(opt).with_zones(keep_zones{}));
            else check(sailor_planner<>(opt));
        }
    }
    CHECK(lists >= 8);
}

TEST_CASE("pattern search: a 400-replica stage over four cells is solved without its compositions (issue 15)") {
    // Two types in two zones of one region (H6 merges them) and a third zone in another: 512
    // GPUs per type. The stage DP enumerates C(D + 3, 3) compositions per typing for a stage of
    // D replicas over four cells; the pattern search enumerates which cells hold one or more.
    fixtures::planning_example in;
    const auto a = in.hw.add_gpu(fixtures::a100_40(), 8), v = in.hw.add_gpu(fixtures::v100_16(), 8);
    for (auto z : {in.hw.add_zone("r1-a", "r1"), in.hw.add_zone("r1-b", "r1"), in.hw.add_zone("r2-a", "r2"), in.hw.add_zone("r2-b", "r2")}) {
        in.hw.pool.set(a, z, 128);
        in.hw.pool.set(v, z, 128);
    }
    in.hw.network.set_default(alpha_beta_link{seconds{1e-5}, gigabits_per_second(100)});
    in.model = fixtures::opt_350m();
    in.job.global_batch = 1024;
    in.job.sequence_length = 2048;
    in.profiles.enable_analytical({});
    const problem pb = in.as_problem();
    sailor_options opt;
    opt.space.max_pipeline_degree = 2;
    opt.space.microbatch_sizes = {1};
    auto p = sailor_planner<>(opt);
    const auto r = p.plan(pb);
    REQUIRE(r.best());
    test::check_all_valid(pb, r);
    CHECK(r.best()->gpus() > 512);  // more than any one type holds
    CHECK_FALSE(r.stopped);
}

TEST_CASE("extras flow: feasibility and least cost equal brute force, with one weight per cell or several") {
    test::xorshift gen(7);
    int feasible = 0, mixed = 0;
    for (int round = 0; round < 400; ++round) {
        const std::size_t C = 2 + static_cast<std::size_t>(gen.below(3)), K = 1 + static_cast<std::size_t>(gen.below(3));
        const bool one_weight = round % 2 == 0;
        std::vector<extras_demand> d(K);
        for (auto& x : d) {
            x.extras = 1 + gen.below(5);
            while (x.cells == 0) x.cells = static_cast<std::uint32_t>(gen.below(1 << C));
            for (std::size_t c = 0; c < C; ++c) {
                x.weight[c] = static_cast<std::uint8_t>(one_weight ? 1 + (c % 2) : 1 << gen.below(2));
                x.price[c] = x.weight[c] * (1 + gen.below(4));
            }
        }
        extras_flow::room_t room{};
        for (std::size_t c = 0; c < C; ++c) room[c] = gen.below(9);
        // Brute force: every way to spread each demand's extras over its cells.
        std::optional<double> best;
        std::vector<cell_counts> y(K);
        auto rec = [&](auto&& self, std::size_t k, std::size_t c, int rest, double cost, extras_flow::room_t left) -> void {
            if (k == K) {
                if (!best || cost < *best) best = cost;
                return;
            }
            if (c == C) {
                if (rest == 0) self(self, k + 1, 0, k + 1 < K ? d[k + 1].extras : 0, cost, left);
                return;
            }
            if (!(d[k].cells >> c & 1u)) return self(self, k, c + 1, rest, cost, left);
            for (int v = 0; v <= rest && v * d[k].weight[c] <= left[c]; ++v) {
                auto l2 = left;
                l2[c] -= v * d[k].weight[c];
                self(self, k, c + 1, rest - v, cost + v * d[k].price[c], l2);
            }
        };
        rec(rec, 0, 0, d[0].extras, 0.0, room);
        extras_flow flow;
        std::vector<cell_counts> out(K);
        const auto got = flow.solve(d, room, C, true, out);
        CAPTURE(round);
        REQUIRE(bool(got) == bool(best));
        if (best) CHECK(flow.may_fit(d, room, C));  // necessary: never says no to what fits
        if (!got) continue;
        ++feasible;
        mixed += !one_weight;
        CHECK(*got == doctest::Approx(*best));
        // The assignment it returns is one: every demand's extras, within every cell's room.
        std::array<int, max_cells> used{};
        for (std::size_t k = 0; k < K; ++k) {
            int n = 0;
            for (std::size_t c = 0; c < C; ++c) {
                if (out[k][c] > 0) CHECK((d[k].cells >> c & 1u));
                n += out[k][c];
                used[c] += out[k][c] * d[k].weight[c];
            }
            CHECK(n == d[k].extras);
        }
        for (std::size_t c = 0; c < C; ++c) CHECK(used[c] <= room[c]);
    }
    CHECK(feasible > 100);
    CHECK(mixed > 30);
}

TEST_CASE("extras flow: with one weight per cell the quick test is exact, for many demands over few cell sets and over more than 12") {
    // Hall's condition over unions of the demands' cell sets against the min-cost flow.
    test::xorshift gen(19);
    int fits = 0, not_fits = 0, many_sets = 0;
    for (int round = 0; round < 600; ++round) {
        const std::size_t C = 2 + static_cast<std::size_t>(gen.below(4)), K = 1 + static_cast<std::size_t>(gen.below(20));
        const bool few_sets = round % 2 == 0;
        std::vector<extras_demand> d(K);
        // Few sets: three of two cells each, so sets overlap without one holding another.
        std::uint32_t masks[3] = {};
        for (auto& m : masks)
            while (std::popcount(m) != 2) m = static_cast<std::uint32_t>(gen.below(1 << C));
        for (std::size_t k = 0; k < K; ++k) {
            extras_demand& x = d[k];
            x.extras = gen.below(4);  // 0: a demand with nothing open is ignored
            if (few_sets) x.cells = masks[gen.below(3)];
            else if (C == 5 && k < 15) x.cells = static_cast<std::uint32_t>(k + 1);  // 15 distinct sets
            while (x.cells == 0) x.cells = static_cast<std::uint32_t>(gen.below(1 << C));
            for (std::size_t c = 0; c < C; ++c) x.weight[c] = static_cast<std::uint8_t>(1 + (c % 2)), x.price[c] = 1;
        }
        std::vector<std::uint32_t> sets;
        for (const auto& x : d)
            if (x.extras > 0) sets.push_back(x.cells);
        std::sort(sets.begin(), sets.end());
        many_sets += std::unique(sets.begin(), sets.end()) - sets.begin() > 12;
        extras_flow::room_t room{};
        for (std::size_t c = 0; c < C; ++c) room[c] = gen.below(3 + 3 * static_cast<int>(K) / static_cast<int>(C));
        extras_flow flow;
        std::vector<cell_counts> out(K);
        const bool got = flow.solve(d, room, C, false, out).has_value();
        CAPTURE(round);
        CHECK(flow.may_fit(d, room, C) == got);
        (got ? fits : not_fits)++;
    }
    CHECK(fits > 100);
    CHECK(not_fits > 100);
    CHECK(many_sets > 0);
    // More than 12 sets, and the last demand the only one on its cells (the flow then needs
    // every demand's weights, not those seen before the 13th set). From a review.
    std::vector<extras_demand> d;
    for (std::uint32_t m = 1; m < 32 && d.size() < 13; ++m)
        if (std::popcount(m) >= 2) d.push_back({m, 1, {}, {}});
    d.push_back({0b1100000, 1, {}, {}});
    for (auto& x : d) x.weight.fill(1);
    extras_flow::room_t room{100, 100, 100, 100, 100, 1, 0};
    extras_flow flow;
    std::vector<cell_counts> out(d.size());
    REQUIRE(flow.solve(d, room, 7, false, out).has_value());
    CHECK(flow.may_fit(d, room, 7));
}

TEST_CASE("small ILP: the optimum of random small integer programs equals enumeration") {
    test::xorshift gen(11);
    int solved = 0;
    for (int round = 0; round < 300; ++round) {
        const std::size_t n = 2 + static_cast<std::size_t>(gen.below(3)), m = 1 + static_cast<std::size_t>(gen.below(3));
        small_ilp ilp;
        ilp.reset(n, 4);
        std::vector<double> cost(n);
        for (std::size_t j = 0; j < n; ++j) ilp.set_cost(j, cost[j] = gen.below(7) - 2);
        std::vector<std::vector<double>> a(m, std::vector<double>(n));
        std::vector<double> b(m);
        std::vector<small_ilp::sense> sense(m);
        for (std::size_t r = 0; r < m; ++r) {
            sense[r] = static_cast<small_ilp::sense>(gen.below(3));
            b[r] = gen.below(9);
            const std::size_t row = ilp.add_row(sense[r], b[r]);
            for (std::size_t j = 0; j < n; ++j) ilp.coef(row, j, a[r][j] = gen.below(5) - 1);
        }
        std::optional<double> best;
        std::vector<int> x(n, 0);
        for (;;) {
            bool ok = true;
            for (std::size_t r = 0; r < m && ok; ++r) {
                double lhs = 0;
                for (std::size_t j = 0; j < n; ++j) lhs += a[r][j] * x[j];
                ok = sense[r] == small_ilp::sense::le ? lhs <= b[r] + 1e-9 : sense[r] == small_ilp::sense::ge ? lhs >= b[r] - 1e-9 : std::abs(lhs - b[r]) < 1e-9;
            }
            if (ok) {
                double v = 0;
                for (std::size_t j = 0; j < n; ++j) v += cost[j] * x[j];
                if (!best || v < *best) best = v;
            }
            std::size_t j = 0;
            while (j < n && ++x[j] > 4) x[j++] = 0;
            if (j == n) break;
        }
        CAPTURE(round);
        const auto got = ilp.solve();
        REQUIRE(bool(got) == bool(best));
        if (!got) continue;
        ++solved;
        CHECK(*got == doctest::Approx(*best));
        const auto sol = ilp.solution();
        for (std::size_t j = 0; j < n; ++j) CHECK((sol[j] >= 0 && sol[j] <= 4 && sol[j] == std::round(sol[j])));
    }
    CHECK(solved > 100);
}

TEST_CASE("small ILP: shadow prices of the LP relaxation are subgradients of its value (weak duality)") {
    // v(b) of a minimisation is convex in the right-hand sides, and the rows' shadow prices y
    // a subgradient: v(b') >= v(b) + y . (b' - b) for every b' (equality rows left as they are).
    test::xorshift gen(23);
    int checked = 0, priced = 0;
    for (int round = 0; round < 300; ++round) {
        const std::size_t n = 2 + static_cast<std::size_t>(gen.below(4)), m = 1 + static_cast<std::size_t>(gen.below(4));
        std::vector<double> cost(n), b(m);
        std::vector<std::vector<double>> a(m, std::vector<double>(n));
        std::vector<small_ilp::sense> sense(m);
        for (std::size_t j = 0; j < n; ++j) cost[j] = gen.below(9) - 3;
        for (std::size_t r = 0; r < m; ++r) {
            sense[r] = static_cast<small_ilp::sense>(gen.below(3));
            b[r] = gen.below(9);
            for (std::size_t j = 0; j < n; ++j) a[r][j] = gen.below(5) - 1;
        }
        auto value = [&](const std::vector<double>& rhs, small_ilp& lp) {
            lp.reset(n, 4);
            for (std::size_t j = 0; j < n; ++j) lp.set_cost(j, cost[j]);
            for (std::size_t r = 0; r < m; ++r) {
                const std::size_t row = lp.add_row(sense[r], rhs[r]);
                for (std::size_t j = 0; j < n; ++j) lp.coef(row, j, a[r][j]);
            }
            return lp.relaxation();
        };
        small_ilp lp, other;
        const auto v = value(b, lp);
        if (!v) continue;
        std::vector<double> y(m);
        for (std::size_t r = 0; r < m; ++r) {
            y[r] = lp.shadow_price(r);
            if (sense[r] == small_ilp::sense::le) CHECK(y[r] <= 1e-9);
            if (sense[r] == small_ilp::sense::ge) CHECK(y[r] >= -1e-9);
            if (sense[r] == small_ilp::sense::eq) CHECK(y[r] == 0);
            priced += y[r] != 0;
        }
        for (int trial = 0; trial < 8; ++trial) {
            std::vector<double> moved = b;
            double predicted = *v;
            for (std::size_t r = 0; r < m; ++r) {
                if (sense[r] == small_ilp::sense::eq) continue;
                moved[r] += gen.below(7) - 3;
                predicted += y[r] * (moved[r] - b[r]);
            }
            CAPTURE(round);
            CAPTURE(trial);
            if (const auto w = value(moved, other)) {
                CHECK(*w >= predicted - 1e-7 * (1 + std::abs(predicted)));
                ++checked;
            }
        }
    }
    CHECK(checked > 500);
    CHECK(priced > 50);
}

TEST_CASE("instance floors with the pooled sum never exceed the instance's optimum") {
    // The solver prices a merged cell at its region's first zone; the packing floor
    // (zone_packing_floor) counts the real zones behind it, so it is checked against the
    // simulator's price of the solution's layouts over the real zones, the rest against the
    // solver's own price.
    const simulator<> sim;
    int packed = 0;
    for (unsigned seed = 1; seed <= 6; ++seed) {
        CAPTURE(seed);
        const pool_world w(seed, 3, 1);
        const problem pb = w.pb();
        const sailor_domain d = make_sailor_domain(pb, h6_merge_zones{}, h1_tp_within_node{});  // Sailor's cells and TP degrees
        const cell_set& cells = d.cells;
        const auto& tps = d.tps;
        const prune::all pruners{h2_memory_fit<>{}, h5_one_region{}};
        pruners.begin(pb);
        pattern_search<> ps;
        ps.always_patterns();
        stage_problem<prune::all<h2_memory_fit<>, h5_one_region>> sp;
        boost::hana::tuple<> hooks;
        for (int P = 1; P <= std::min(4, pb.model.num_layers()); ++P) {
            const auto part = even_partition(pb.model.num_layers(), P);
            const auto times = time_stages(pb, cells, part, 1, tps, ps.time_model(), {}, schedule_kind::one_f_one_b);
            for (int D = 1; D <= 5; ++D) {
                build_stage_problem(sp, pb, cells, part, 1, D, times, pruners, tp_level{}, {}, hooks);
                ps.prepare(sp);
                const auto sol = ps.solve(pb, sp, max_throughput{}, {});
                if (!sol) continue;
                instance_bound unpacked = sp.bound;
                unpacked.packed = 0;
                CHECK(unpacked.iteration(sp.per_replica) <= sol->terms.iteration * (1 + 1e-9));
                const double simulated = test::least_simulated_iteration(sim, pb, sp, sol->stages);
                CHECK(sp.bound.iteration(sp.per_replica) <= simulated * (1 + 1e-9));
                if (sp.bound.iteration(sp.per_replica) > unpacked.iteration(sp.per_replica)) ++packed;
                CHECK(sp.bound.sum >= sp.bound.prefix.sum[static_cast<std::size_t>(P)]);
            }
        }
    }
    MESSAGE("the packing floor raised " << packed << " floors");
    CHECK(packed > 0);
}

TEST_CASE("best-first over (P, mbs, D) finds the exhaustive walk's best, never worse than H3") {
    for (unsigned seed = 1; seed <= 10; ++seed) {
        CAPTURE(seed);
        const pool_world w(seed, 3, seed % 2);
        const problem pb = w.pb();
        sailor_options whole;
        whole.effort = 0;  // every solve to its end: no best-so-far offered on the way
        // No solves over the real zones: whether an instance gets one depends on the solver's
        // answer, which depends on the cut-off of the moment, so on the walk's order (seed 10:
        // the walk below gets a merged-zone answer the simulator prices above the solver's price,
        // and its solve over the real zones finds 0.1832 s; the rounds get another answer of the
        // same instance, priced right, and stop at 0.1859 s). This test is about the walks.
        whole.real_zones_effort = 0;
        sailor_options in_rounds;  // solves in rounds of effort (the default)
        in_rounds.real_zones_effort = 0;
        const auto best_first = sailor_planner<>(whole).plan(pb);
        const auto every = sailor_planner<>(whole).with_scan(exhaustive_walk{}).plan(pb);
        const auto h3 = sailor_planner<>(whole).with_scan(sailor_dp_order{}).plan(pb);
        const auto rounds = sailor_planner<>(in_rounds).plan(pb);
        REQUIRE(bool(best_first.best()) == bool(every.best()));
        REQUIRE(bool(rounds.best()) == bool(every.best()));
        if (!every.best()) continue;
        test::check_all_valid(pb, best_first);
        test::check_all_valid(pb, rounds);
        CHECK(fastest(best_first) == doctest::Approx(fastest(every)).epsilon(1e-9));
        if (h3.best()) CHECK(fastest(best_first) <= fastest(h3) * (1 + 1e-9));
        // Rounds also offer an instance's best so far, which the simulator may price under the
        // solver's optimum (zones merged by H6 are priced at the region's first zone in the
        // solver, at the real zones of a layout in the simulator). Not a theorem (the path
        // differs), but no worse on these pools (seed 10: 0.2168 s against 0.2262 s, a best so
        // far in a stage-blocked layout).
        CHECK(fastest(rounds) <= fastest(every) * (1 + 1e-9));
    }
}

/// Plans random pools 1-6 (pipelines up to `most_P` stages) with a checking solver S, and
/// hands each plan's solver to `add`.
template <class S, class F>
void plan_pools_with(int most_P, F&& add) {
    for (unsigned seed = 1; seed <= 6; ++seed) {
        CAPTURE(seed);
        const pool_world w(seed, 3, seed % 2);
        sailor_options opt;
        opt.space.max_pipeline_degree = most_P;
        auto p = sailor_planner<>(opt).with_solver(S());
        (void)p.plan(w.pb(), plan_request<max_throughput>{});
        add(p.solver());
    }
}

TEST_CASE("pattern search out of effort: its best so far, never better than the optimum; the stage DP: nothing (issue 15)") {
    std::size_t exhausted = 0, with_best = 0, within = 0, capped_sooner = 0;
    plan_pools_with<effort_solver>(4, [&](const effort_solver& s) {
        exhausted += s.exhausted, with_best += s.with_best_so_far, within += s.within;
        capped_sooner += s.capped_sooner;
    });
    MESSAGE(exhausted << " solves out of effort (" << with_best << " with a best so far), " << within << " within it; " << capped_sooner
                      << " more out of it with 2 patterns priced per node");
    CHECK(with_best > 0);
    CHECK(within > 0);
    CHECK(capped_sooner > 0);
}

TEST_CASE("pattern search: rounds that continue the last one's suspension end with the unlimited solve's value under their cut-off, in fewer nodes (issue 15)") {
    resume_solver total;
    plan_pools_with<resume_solver>(6, [&](const resume_solver& r) {
        total.chains += r.chains, total.rounds += r.rounds, total.refused += r.refused, total.foreign += r.foreign;
        total.nodes_continued += r.nodes_continued, total.nodes_afresh += r.nodes_afresh;
    });
    MESSAGE(total.chains << " instances continued over " << total.rounds << " rounds: " << total.nodes_continued << " nodes, against "
                         << total.nodes_afresh << " afresh; " << total.refused << " suspensions refused for a higher cut-off, "
                         << total.foreign << " offered to another instance");
    CHECK(total.chains > 0);
    CHECK(total.refused > 0);
    CHECK(total.foreign > 0);
    CHECK(total.nodes_continued < total.nodes_afresh);
}

TEST_CASE("best-first with solves out of effort (solved again, eight times more each round, continued or afresh) returns the unlimited search's plans (issue 15)") {
    std::size_t resumed = 0;
    for (unsigned seed = 1; seed <= 8; ++seed) {
        CAPTURE(seed);
        const pool_world w(seed, 3, seed % 2);
        const problem pb = w.pb();
        sailor_options tiny, none;
        tiny.effort = 1;  // every instance that needs more than a node goes round again, up to the unlimited round
        none.effort = 0;
        plan_request<> top;
        top.top = 5;  // a deferred instance's best so far is withdrawn when superseded: the same list
        const auto a = sailor_planner<>(tiny).plan(pb, top), b = sailor_planner<>(none).plan(pb, top), c = sailor_planner<>().plan(pb, top);
        sailor_options afresh = tiny, scarce = tiny;
        afresh.suspended_memory = 0;         // each round begun again, not continued from the last one's suspension
        scarce.suspended_memory = 64 << 10;  // room for a few: the others begun again, the bounded-out ones swept
        const auto d = sailor_planner<>(afresh).plan(pb, top), e = sailor_planner<>(scarce).plan(pb, top);
        resumed += a.stats.counter("of them resumed");
        CHECK(d.stats.counter("of them resumed") == 0);
        for (const auto* x : {&d, &e}) {
            REQUIRE(x->plans.size() == a.plans.size());
            for (std::size_t k = 0; k < a.plans.size(); ++k) CHECK(x->plans[k].value == doctest::Approx(a.plans[k].value).epsilon(1e-12));
        }
        REQUIRE(bool(a.best()) == bool(b.best()));
        REQUIRE(bool(c.best()) == bool(b.best()));
        if (!b.best()) continue;
        test::check_all_valid(pb, a);
        CHECK(fastest(a) == doctest::Approx(fastest(b)).epsilon(1e-9));
        CHECK(fastest(c) == doctest::Approx(fastest(b)).epsilon(1e-9));
        CHECK(a.stats.solved >= b.stats.solved);  // the deferred ones are solved again
        REQUIRE(a.plans.size() == b.plans.size());
        for (std::size_t k = 0; k < a.plans.size(); ++k) CHECK(a.plans[k].value == doctest::Approx(b.plans[k].value).epsilon(1e-12));
    }
    MESSAGE(resumed << " deferred solves continued from their last round");
    CHECK(resumed > 0);
}
