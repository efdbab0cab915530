// The Pareto fronts of throughput against cost and against GPUs (planners/pareto.hpp, issue 21):
// exact against every plan of the space on small instances, monotone, and honest about what
// stopped them.
#include <doctest/doctest.h>

#include <algorithm>
#include <stop_token>
#include <string>
#include <vector>

#include "../random_pool.hpp"
#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/pareto.hpp"
#include "hetplan/planners/sailor.hpp"

using namespace hetplan;

namespace {

struct priced {
    double iteration, usd;
};

/// The non-dominated points of `all`: fastest first, each strictly cheaper than every faster one.
std::vector<priced> front_of(std::vector<priced> all) {
    std::sort(all.begin(), all.end(), [](const priced& a, const priced& b) { return a.iteration < b.iteration || (a.iteration == b.iteration && a.usd < b.usd); });
    std::vector<priced> out;
    for (const priced& p : all)
        if (out.empty() || p.usd < out.back().usd) out.push_back(p);
    return out;
}

}  // namespace

TEST_CASE("Pareto front: Sailor's exact search gives the front of every plan its exhaustive solver prices") {
    int fronts = 0, points = 0;
    for (unsigned seed = 1; seed <= 20; ++seed) {
        const test::random_pool w(seed, 2, 0, 4242);
        const problem pb{w.hw, w.model, w.job, w.profiles};
        if (pb.pool().total() > 20) continue;  // the enumeration grows past 10^6 plans (seconds)
        CAPTURE(seed);
        sailor_options opt;
        opt.space.max_pipeline_degree = 2;
        // Every plan of the space: the exhaustive solver under every instance of the scan (no
        // floors), unconstrained; the valid ones are the space's plans.
        std::vector<priced> all;
        auto every = exact_sailor_planner(opt).with_bound(search::no_bound{}).exhaustive([&](const plan& pl, const estimate& e) {
            if (validate(pb, pl, sailor_memory_model{}).ok()) all.push_back({e.time.iteration.value, e.money.total.value});
        });
        plan_request<max_throughput> rq;
        rq.rank_within = 1e9;  // no cut-off: every instance is solved
        (void)every.plan(pb, rq);
        if (all.empty()) continue;
        const std::vector<priced> want = front_of(all);

        auto exact = exact_sailor_planner(opt);
        const pareto_result got = pareto_front(exact, pb);
        REQUIRE(got.complete);
        REQUIRE_FALSE(got.points.empty());
        ++fronts;
        points += int(got.points.size());
        for (std::size_t k = 0; k < got.points.size(); ++k) {
            const ranked_plan& c = got.points[k];
            const auto rep = validate(pb, c.pl, sailor_memory_model{});
            CHECK_MESSAGE(rep.ok(), rep.summary());
            if (k > 0) {  // cheaper and slower than the point before
                CHECK(c.cost().value < got.points[k - 1].cost().value);
                CHECK(c.iteration().value > got.points[k - 1].iteration().value);
            }
            // No plan of the space is faster (beyond the 0.1 % tie) and at most as dear.
            for (const priced& p : all)
                if (p.usd <= c.cost().value * (1 + 1e-12)) CHECK(p.iteration >= c.iteration().value / (1 + 1e-3));
        }
        // Every point of the true front is matched: a point found at most as dear and, within the
        // tie, as fast.
        for (const priced& p : want) {
            const bool covered = std::any_of(got.points.begin(), got.points.end(), [&](const ranked_plan& c) {
                return c.cost().value <= p.usd * (1 + 1e-9) && c.iteration().value <= p.iteration * (1 + 1e-3);
            });
            CAPTURE(p.iteration);
            CAPTURE(p.usd);
            CHECK(covered);
        }
    }
    CHECK(fronts >= 12);
    CHECK(points > fronts);  // fronts of more than one point were checked
}

TEST_CASE("Pareto front over GPUs: Sailor's exact search with a GPU limit gives the front of every plan its exhaustive solver prices") {
    struct counted {
        double iteration;
        int gpus;
    };
    int fronts = 0, points = 0;
    for (unsigned seed = 1; seed <= 20; ++seed) {
        const test::random_pool w(seed, 2, 0, 4242);
        const problem pb{w.hw, w.model, w.job, w.profiles};
        if (pb.pool().total() > 20) continue;
        CAPTURE(seed);
        sailor_options opt;
        opt.space.max_pipeline_degree = 2;
        std::vector<counted> all;
        auto every = exact_sailor_planner(opt).with_bound(search::no_bound{}).exhaustive([&](const plan& pl, const estimate& e) {
            if (validate(pb, pl, sailor_memory_model{}).ok()) all.push_back({e.time.iteration.value, pl.total_gpus()});
        });
        plan_request<max_throughput> rq;
        rq.rank_within = 1e9;
        (void)every.plan(pb, rq);
        if (all.empty()) continue;

        auto exact = exact_sailor_planner(opt);
        pareto_options by_gpus;
        by_gpus.axis = pareto_axis::gpus;
        const pareto_result got = pareto_front(exact, pb, by_gpus);
        REQUIRE(got.complete);
        REQUIRE_FALSE(got.points.empty());
        ++fronts;
        points += int(got.points.size());
        for (std::size_t k = 0; k < got.points.size(); ++k) {
            const ranked_plan& c = got.points[k];
            CAPTURE(k);
            const auto rep = validate(pb, c.pl, sailor_memory_model{});
            CHECK_MESSAGE(rep.ok(), rep.summary());
            if (k > 0) {  // on fewer GPUs and slower than the point before
                CHECK(c.gpus() < got.points[k - 1].gpus());
                CHECK(c.iteration().value > got.points[k - 1].iteration().value);
            }
            // No plan of the space on at most as many GPUs is faster (beyond the 0.1 % tie).
            for (const counted& p : all)
                if (p.gpus <= c.gpus()) CHECK(p.iteration >= c.iteration().value / (1 + 1e-3));
        }
        // Every plan of the space is matched by a point on at most as many GPUs and, within the
        // tie, as fast: the smallest plan included (the front ends there).
        for (const counted& p : all) {
            const bool covered = std::any_of(got.points.begin(), got.points.end(), [&](const ranked_plan& c) {
                return c.gpus() <= p.gpus && c.iteration().value <= p.iteration * (1 + 1e-3);
            });
            CAPTURE(p.iteration);
            CAPTURE(p.gpus);
            CHECK(covered);
        }
    }
    CHECK(fronts >= 12);
    CHECK(points > fronts);
}

TEST_CASE("A GPU limit: the fastest plan within it, or none and a note that says so") {
    const auto in = fixtures::default_planning_example();
    const problem pb = in.as_problem();
    sailor_planner<> p;
    const plan_result free = p.plan(pb);
    REQUIRE(free.best());
    const int used = free.best()->gpus();
    plan_request<max_throughput> rq;
    rq.objective.limits.max_gpus = used;  // not binding: the same plan
    const plan_result same = p.plan(pb, rq);
    REQUIRE(same.best());
    CHECK(same.best()->pl == free.best()->pl);
    rq.objective.limits.max_gpus = used / 2;
    const plan_result half = p.plan(pb, rq);
    REQUIRE(half.best());
    CHECK(half.best()->gpus() <= used / 2);
    CHECK(half.best()->iteration().value > free.best()->iteration().value);
    rq.objective.limits.max_gpus = 1;  // the model fits on no single GPU of the example
    const plan_result none = p.plan(pb, rq);
    CHECK_FALSE(none.best());
    const bool said = std::any_of(none.notes.begin(), none.notes.end(), [](const std::string& n) { return n.find("no plan fits in 1 GPU(s)") != std::string::npos; });
    CHECK_MESSAGE(said, "notes: ", none.notes.size());
}

TEST_CASE("Pareto front: a range, a point cap and a stop are honoured and said") {
    const auto in = fixtures::default_planning_example();
    const problem pb = in.as_problem();
    sailor_planner<> p;
    pareto_options opt;
    opt.max_points = 3;
    const pareto_result capped = pareto_front(p, pb, opt);
    CHECK(capped.points.size() == 3);
    CHECK_FALSE(capped.complete);
    // A range: nothing dearer than the second point, nothing slower than the third.
    pareto_options range;
    range.limits.max_usd = capped.points[1].cost().value;
    range.limits.min_throughput = capped.points[2].throughput() * (1 - 1e-9);
    const pareto_result r = pareto_front(p, pb, range);
    REQUIRE(r.complete);
    REQUIRE(r.points.size() == 2);
    CHECK(r.points[0].pl == capped.points[1].pl);
    CHECK(r.points[1].pl == capped.points[2].pl);
    // A stop before the first search: nothing, and said.
    pareto_options stopped;
    std::stop_source src;
    src.request_stop();
    stopped.stop.token = src.get_token();
    const pareto_result s = pareto_front(p, pb, stopped);
    CHECK(s.points.empty());
    CHECK(s.stopped);
    CHECK_FALSE(s.complete);
    pareto_options bad;
    bad.step = 0;
    CHECK_THROWS_AS((void)pareto_front(p, pb, bad), input_error);
}
