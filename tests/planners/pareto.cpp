// The Pareto front of throughput against cost (planners/pareto.hpp, issue 21): exact against
// every plan of the space on small instances, monotone, and honest about what stopped it.
#include <doctest/doctest.h>

#include <algorithm>
#include <stop_token>
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
