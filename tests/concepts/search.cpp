// The search concepts from both sides: archetypes (the least a piece must offer) plug into the
// reference planners; near-misses do not model the concepts; hooks observe and stop searches;
// every planner honours the request's stop condition.
#include <doctest/doctest.h>

#include <chrono>
#include <map>

#include "../plan_checks.hpp"
#include "../support.hpp"
#include "hetplan/planners.hpp"

using namespace hetplan;
using namespace hetplan::search;

namespace {

struct archetype_objective {  // only value() and admits(): the fewest iterations per USD... of time
    [[nodiscard]] double value(const objective_terms& t) const { return t.iteration; }
    [[nodiscard]] bool admits(const objective_terms&) const { return true; }
};
struct objective_not_const {
    double value(const objective_terms& t) { return t.iteration; }
    bool admits(const objective_terms&) { return true; }
};
struct archetype_time {  // only estimate(): Sailor's model behind the minimal interface
    [[nodiscard]] time_report estimate(const problem& pb, const plan& pl) const { return sailor_time_model{}.estimate(pb, pl); }
};
struct archetype_memory {
    [[nodiscard]] memory_report estimate(const problem& pb, const plan& pl) const { return sailor_memory_model{}.estimate(pb, pl); }
};
struct archetype_pruner {  // judges stage typings only
    [[nodiscard]] bool operator()(const problem&, const stage_typing&) const { return true; }
};
struct pruner_wrong_result {
    [[nodiscard]] std::string operator()(const problem&, const stage_typing&) const { return {}; }
};
struct archetype_strategy {  // the least a strategy offers: walk(range, step)
    template <class R, class F>
    void walk(const R& r, F&& step) const {
        for (const auto& c : r)
            if (step(c).stop) return;
    }
};
struct not_a_hook {
    int x = 0;
};

/// 4 A + 4 B per zone, nodes of 4: small enough for every composition.
test::small_world four_by_four() {
    test::small_world w;
    for (auto g : {w.a, w.b})
        for (auto z : {w.z1, w.z2}) w.hw.pool.set(g, z, 4);
    return w;
}

}  // namespace

TEST_CASE("search concepts: the shipped pieces model them, near-misses do not") {
    static_assert(hetplan::concepts::objective<max_throughput> && hetplan::concepts::objective<min_cost> && hetplan::concepts::objective<archetype_objective>);
    static_assert(!hetplan::concepts::objective<objective_not_const>);
    static_assert(hetplan::concepts::pruner<h2_memory_fit<>, worker_probe> && !hetplan::concepts::pruner<h2_memory_fit<>, stage_typing>);
    static_assert(hetplan::concepts::pruner<h5_one_region, stage_placement> && hetplan::concepts::pruner<archetype_pruner, stage_typing>);
    static_assert(!hetplan::concepts::pruner<pruner_wrong_result, stage_typing>);
    static_assert(hetplan::concepts::bound<instance_floors, stage_problem<>> && hetplan::concepts::bound<no_bound, stage_problem<>>);
    static_assert(hetplan::concepts::solver<stage_dp<>, stage_problem<>, archetype_objective>);
    static_assert(hetplan::concepts::solver<exhaustive_solver<>, stage_problem<>, min_cost>);
    static_assert(hetplan::concepts::solver<microbatch_split, microbatch_split_problem, max_throughput>);
    static_assert(hetplan::concepts::solver<eq4_batch_dp, batch_problem, max_throughput>);
    static_assert(!hetplan::concepts::solver<stage_dp<>, microbatch_split_problem, max_throughput>);
    static_assert(hetplan::concepts::search_space<sailor_space> && hetplan::concepts::search_space<zorse_space>);
    static_assert(hetplan::concepts::search_strategy<archetype_strategy> && hetplan::concepts::search_strategy<descending_until_worse>);
    static_assert(hetplan::concepts::planner<sailor_planner<>> && hetplan::concepts::planner<zorse_planner<>> && hetplan::concepts::planner<cephalo_planner<>>);
    static_assert(hetplan::concepts::hook<count_steps> && !hetplan::concepts::hook<not_a_hook>);
    static_assert(hetplan::concepts::worker_memory_model<sailor_memory_model> && !hetplan::concepts::worker_memory_model<archetype_memory>);
    static_assert(hetplan::concepts::stage_time_model<sailor_time_model> && !hetplan::concepts::stage_time_model<archetype_time>);
    static_assert(prune::all<h2_memory_fit<>, archetype_pruner>::judges<stage_typing>);
    static_assert(!prune::all<h2_memory_fit<>>::judges<stage_typing>);
    CHECK(true);
}

TEST_CASE("archetypes plug into Sailor's planner: an objective, a strategy, a pruner, models with only estimate()") {
    const auto w = four_by_four();
    const problem pb = w.pb();
    // Models with only estimate(): H2 asks the memory model through probe plans, the stage DP
    // prices compute through probe plans; plans are priced by the models themselves.
    using minimal = simulator<archetype_memory, archetype_time>;
    auto p = sailor_planner<minimal>()
                 .with_pruners(prune::all{h2_memory_fit<archetype_memory>{}, archetype_pruner{}})
                 .with_scan(archetype_strategy{});
    const auto r = p.plan(pb, plan_request<archetype_objective>{});
    REQUIRE(r.best());
    test::check_all_valid(pb, r);
    // Same models behind the full interface: the same fastest plan's time (the fallback only
    // steers the search; the numbers are the models').
    const auto full = sailor_planner<>().with_pruners(prune::all{h2_memory_fit<>{}, archetype_pruner{}}).with_scan(archetype_strategy{});
    auto again = full;
    const auto f = again.plan(pb, plan_request<archetype_objective>{});
    REQUIRE(f.best());
    CHECK(r.best()->iteration().value == doctest::Approx(f.best()->iteration().value).epsilon(0.05));
}

TEST_CASE("hooks: they see candidates, pruning, solutions and incumbents, and any of them stops the search") {
    auto w = four_by_four();
    w.hw.gpus[w.b.index()].memory_capacity = gigabytes(1.5);  // below the 2 GB overhead: H2 drops every B worker
    const problem pb = w.pb();
    std::size_t steps = 0, incumbents = 0;
    std::map<std::string, std::size_t> pruned;
    struct candidates_seen {
        std::size_t* n;
        void on_candidate(const sailor_instance&) { ++*n; }
    };
    std::size_t seen = 0;
    const auto rq = with_hooks(plan_request<>{}, count_steps{&steps}, count_incumbents{&incumbents}, count_pruned{&pruned},
                               candidates_seen{&seen});
    auto p = exact_sailor_planner();
    const auto r = p.plan(pb, rq);
    REQUIRE(r.best());
    CHECK(steps == r.stats.solved);
    CHECK(seen == r.stats.candidates);
    CHECK(incumbents >= 1);
    CHECK(pruned["H2 memory fit"] > 0);
    r.best()->pl.for_each_worker([&](std::size_t, std::size_t, std::size_t, const worker_group& x) { CHECK(x.gpu == w.a); });
    // A hook that stops after three steps: the search ends there, says so, keeps what it found.
    std::size_t three = 0;
    const auto stopped = p.plan(pb, with_hooks(plan_request<>{}, count_steps{&three, 3}));
    CHECK(stopped.stopped);
    CHECK(stopped.stats.solved == 3);
    CHECK(std::any_of(stopped.notes.begin(), stopped.notes.end(), [](const std::string& n) { return n.find("stopped early") != std::string::npos; }));
}

TEST_CASE("every planner honours the request's stop condition: a deadline already past, a stop token") {
    const auto in = fixtures::default_planning_example();  // 128 GPUs: none of these searches is instant
    const problem pb = in.as_problem();
    plan_request<> late;
    late.stop = stop_condition::after(std::chrono::steady_clock::duration::zero());
    std::stop_source cancel;
    cancel.request_stop();
    plan_request<> cancelled;
    cancelled.stop.token = cancel.get_token();
    for (const auto* rq : {&late, &cancelled}) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto s = sailor_planner<>().plan(pb, *rq);
        const auto z = zorse_planner<>().plan(pb, *rq);
        const auto c = cephalo_planner<>().plan(pb, *rq);
        CHECK(s.stopped);
        CHECK(z.stopped);
        CHECK(c.stopped);
        CHECK(s.stats.solved <= 1);
        CHECK(z.stats.solved <= 1);
        CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    }
}

TEST_CASE("the ranked list: plans within 0.1 % of the best ordered by the objective's tie-break, then by value") {
    // Three valid plans (the built-in example's, and the same with fewer microbatches on one
    // replica moved to another) with estimates made up to test the ranking alone.
    const auto in = fixtures::default_example();
    const problem pb = in.as_problem();
    auto priced = [&](double seconds_per_iteration, double usd_per_iteration) {
        estimate e = simulator<>{}.run(pb, in.example_plan);
        e.time.iteration = seconds{seconds_per_iteration};
        e.money.total = usd{usd_per_iteration};
        return e;
    };
    plan other = in.example_plan, third = in.example_plan;
    other.memory.usable_fraction = 0.99;  // distinct plans, same shape
    third.memory.usable_fraction = 0.98;
    search::search_run run(pb, plan_request<>{.top = 3}, 3);
    run.offer(in.example_plan, priced(1.0, 2.0), {}, sailor_memory_model{}, "fastest, dear");
    run.offer(other, priced(1.0005, 1.0), {}, sailor_memory_model{}, "within 0.1 %, cheaper");
    run.offer(third, priced(1.01, 0.5), {}, sailor_memory_model{}, "1 % slower, cheapest");
    const auto r = run.finish("test");
    REQUIRE(r.plans.size() == 3);
    CHECK(r.plans[0].pl == other);              // tied with the best: the cheaper first
    CHECK(r.plans[1].pl == in.example_plan);
    CHECK(r.plans[2].pl == third);              // outside the tie: by value, however cheap
    // Cost first: within 0.1 % of the cheapest, the faster.
    search::search_run cheap(pb, plan_request<min_cost>{.top = 3}, 3);
    cheap.offer(in.example_plan, priced(2.0, 1.0), {}, sailor_memory_model{}, "slow");
    cheap.offer(other, priced(1.0, 1.0005), {}, sailor_memory_model{}, "fast, within 0.1 %");
    const auto c = cheap.finish("test");
    REQUIRE(c.plans.size() == 2);
    CHECK(c.plans[0].pl == other);
}

TEST_CASE("the cut-off: the list's last value within the rank_within band, never below the tie band") {
    // The tie band's plans are ordered by the tie-break, so any may be returned: a search keeping
    // one plan must still prove them (before, a list of one cut at the best value itself).
    const auto in = fixtures::default_example();
    const problem pb = in.as_problem();
    estimate e = simulator<>{}.run(pb, in.example_plan);
    e.time.iteration = seconds{2.0};
    search::search_run one(pb, plan_request<>{}, 1);
    CHECK(!one.cutoff());
    one.offer(in.example_plan, e, {}, sailor_memory_model{}, "the only plan");
    REQUIRE(one.cutoff());
    CHECK(*one.cutoff() == doctest::Approx(2.0 * (1 + search::tie_tolerance)).epsilon(1e-12));
    search::search_run wide(pb, plan_request<>{}, 16);  // fewer plans than kept: the 5 % band
    wide.offer(in.example_plan, e, {}, sailor_memory_model{}, "the only plan");
    CHECK(*wide.cutoff() == doctest::Approx(2.0 * 1.05).epsilon(1e-12));
}

TEST_CASE("withdrawing a plan: the bound comes from the plans still listed; of two plans of one candidate the better stays") {
    const auto in = fixtures::default_example();
    const problem pb = in.as_problem();
    auto priced = [&](double seconds_per_iteration) {
        estimate e = simulator<>{}.run(pb, in.example_plan);
        e.time.iteration = seconds{seconds_per_iteration};
        return e;
    };
    plan slower = in.example_plan, third = in.example_plan;
    slower.memory.usable_fraction = 0.99;  // distinct plans, same shape
    third.memory.usable_fraction = 0.98;
    search::search_run run(pb, plan_request<>{}, 1);
    run.offer(in.example_plan, priced(1.0), {}, sailor_memory_model{}, "a best so far");
    run.offer(slower, priced(1.5), {}, sailor_memory_model{}, "the longer solve's answer, worse by the simulator");
    CHECK(!run.keep_better(in.example_plan, slower));  // the better one stays
    CHECK(run.best() == 1.0);
    REQUIRE(run.cutoff());
    CHECK(*run.cutoff() == doctest::Approx(1.0 * (1 + search::tie_tolerance)).epsilon(1e-12));
    run.offer(third, priced(1.2), {}, sailor_memory_model{}, "another candidate's plan");
    // A list of one held only 1.0; withdrawing it once emptied the bound with a plan still found.
    run.withdraw(in.example_plan);
    CHECK(run.best() == doctest::Approx(1.2));
    const auto r = run.finish("test");
    REQUIRE(r.plans.size() == 1);
    CHECK(r.plans[0].pl == third);
    search::search_run better(pb, plan_request<>{}, 1);
    better.offer(in.example_plan, priced(1.0), {}, sailor_memory_model{}, "a best so far");
    better.offer(slower, priced(0.9), {}, sailor_memory_model{}, "the longer solve's answer, better");
    CHECK(better.keep_better(in.example_plan, slower));  // the newer is better: the older goes
    CHECK(better.best() == doctest::Approx(0.9));
    CHECK(better.finish("test").plans.size() == 1);
}
