// The type-erased front end: any model of concepts::planner (a user's too), the same plans as the
// planners called directly, the request's objective and constraints applied, the planner inside
// reachable (pagmo's extract).
#include <doctest/doctest.h>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/cross_price.hpp"
#include "hetplan/planners/registry.hpp"

using namespace hetplan;

namespace {

/// A user's planner: one fixed plan, priced by Sailor's models (it models concepts::planner).
struct fixed_planner {
    hetplan::plan pl;
    [[nodiscard]] static constexpr std::string_view name() { return "fixed"; }
    [[nodiscard]] simulator<> models() const { return {}; }
    template <class O, class... H>
    plan_result plan(const problem& pb, const plan_request<O, H...>& rq) {
        search::search_run run(pb, rq);
        run.offer(pl, models().run(pb, pl), seconds{0}, sailor_memory_model{}, "the fixed plan");
        return run.finish("fixed");
    }
};
static_assert(hetplan::concepts::check_planner<fixed_planner>());

}  // namespace

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
    auto zorse = planner_named("zorse");
    const auto z = zorse.plan(pb);
    const auto zd = zorse_planner<>().plan(pb);
    REQUIRE(zd.best());
    REQUIRE(z.plans.size() == 1);
    CHECK(z.plans[0].pl == zd.best()->pl);
    // Each planner prices and checks with its own models.
    CHECK(zorse.price(pb, zd.best()->pl).time.iteration == zd.best()->iteration());
    CHECK(zorse.check(pb, zd.best()->pl).ok());
    // A budget below every plan's cost leaves none, and says why.
    const auto none = zorse.plan(pb, {.limits = {zd.best()->cost().value * 0.5, {}}});
    CHECK(none.plans.empty());
    REQUIRE_FALSE(none.notes.empty());
    CHECK(std::any_of(none.notes.begin(), none.notes.end(), [](const std::string& n) { return n.find("admitted by the objective") != std::string::npos; }));
    // The cost objective reaches the planner: Sailor's cheapest plan costs no more than its fastest.
    const auto cheap = planner_named("sailor").plan(pb, {.target = objective_kind::cost});
    REQUIRE(cheap.best());
    CHECK(cheap.best()->cost() <= erased.plans[0].cost());
    CHECK_THROWS_WITH_AS((void)planner_named("alpa"), doctest::Contains("unknown planner 'alpa' (known: sailor, zorse, autohet, metis, metis-memory-aware, cephalo)"), input_error);
}

TEST_CASE("any_planner: a user's planner, copied, extracted, and progress through the request") {
    const auto in = fixtures::default_example();
    const problem pb = in.as_problem();
    any_planner p(fixed_planner{in.example_plan}, "mine");
    CHECK(p.name() == "fixed");
    CHECK(p.is<fixed_planner>());
    CHECK_FALSE(p.is<sailor_planner<>>());
    REQUIRE(p.extract<fixed_planner>());
    CHECK(p.extract<fixed_planner>()->pl == in.example_plan);
    CHECK(p.extract<sailor_planner<>>() == nullptr);
    const any_planner copy = p;
    CHECK(copy.extract<fixed_planner>()->pl == in.example_plan);
    std::size_t steps = 0;
    auto sailor = planner_named("sailor");
    const auto r = sailor.plan(pb, {.progress = [&](const search_progress&) { ++steps; }});
    CHECK(steps == r.stats.solved);
    CHECK(steps > 0);
    const auto mine = p.plan(pb);
    REQUIRE(mine.best());
    CHECK(mine.best()->pl == in.example_plan);
    CHECK(p.price(pb, in.example_plan).time.iteration == mine.best()->iteration());
}

TEST_CASE("price_with: every planner's plan under its own models is what it reported; under the others', a price or a reason") {
    const auto in = fixtures::default_example();
    const problem pb = in.as_problem();
    const auto planners = builtin_planners();
    int priced = 0, refused = 0;
    for (const any_planner& p : planners) {
        auto mine = p;  // plan() is not const
        const auto r = mine.plan(pb);
        if (!r.best()) continue;
        const cross_price own = price_with(p, pb, r.best()->pl);
        CAPTURE(p.name());
        REQUIRE(own.priced());
        CHECK(own.est->time.iteration == r.best()->iteration());
        CHECK(own.est->money.total == r.best()->cost());
        CHECK(own.check.ok());
        for (const any_planner& m : planners) {
            const cross_price c = price_with(m, pb, r.best()->pl);
            CAPTURE(m.name());
            CHECK(c.models == m.name());
            if (c.priced()) {
                ++priced;
                CHECK(c.est->time.iteration.value > 0);
                CHECK(c.refused.empty());
            } else {
                ++refused;
                CHECK_FALSE(c.refused.empty());
            }
        }
    }
    CHECK(priced > static_cast<int>(planners.size()));  // more than the diagonal
    MESSAGE(priced << " priced, " << refused << " refused");
}
