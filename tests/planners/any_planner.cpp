// The type-erased front end: the same plans as the planners called directly, requests applied.
#include <doctest/doctest.h>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/any_planner.hpp"

using namespace hetplan;

TEST_CASE("any_planner: by name, same plans as the planners themselves, requests applied") {
    const auto in = fixtures::default_example();  // OPT-350 on 8 A100-40 + 8 V100-16
    const problem pb = in.as_problem();
    const auto direct = sailor_planner<>().plan(pb);
    REQUIRE(direct.best());
    const auto erased = planner_named("sailor").plan(pb, {.top = 3});
    REQUIRE(!erased.plans.empty());
    CHECK(erased.plans.size() <= 3);
    CHECK(erased.plans[0].pl == direct.best()->pl);
    CHECK(erased.plans[0].est.time.iteration == direct.best()->iteration());
    const auto z = planner_named("zorse").plan(pb);
    const auto zd = zorse_planner().plan(pb);
    REQUIRE(zd.pl);
    REQUIRE(z.plans.size() == 1);
    CHECK(z.plans[0].pl == *zd.pl);
    // Each planner prices and checks with its own models.
    CHECK(planner_named("zorse").price(pb, *zd.pl).time.iteration == zd.est.time.iteration);
    CHECK(planner_named("zorse").check(pb, *zd.pl).ok());
    // A budget below every plan's cost leaves none, and says why.
    const auto none = planner_named("zorse").plan(pb, {.max_cost = usd{zd.est.money.total.value * 0.5}});
    CHECK(none.plans.empty());
    REQUIRE_FALSE(none.notes.empty());
    CHECK(none.notes.back().find("--max-cost") != std::string::npos);
    // Throughput-only planners say so when asked for cost.
    const auto c = planner_named("cephalo").plan(pb, {.target = objective::cost});
    CHECK(std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) { return n.find("throughput only") != std::string::npos; }));
    CHECK_THROWS_WITH_AS((void)planner_named("metis"), doctest::Contains("unknown planner 'metis' (known: sailor, zorse, cephalo)"), input_error);
}
