// Sailor §5.2.2-§5.2.4 scenarios (shared/data/sailor-scenarios: hetplan JSON converted from
// Sailor's published data, with the public Sailor planner's best plan as peer.json). Issue 15:
// hetplan's best plan is at least as good as the public planner's, both priced by hetplan's own
// simulator; each case prints both numbers.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "data_dir.hpp"
#include "hetplan/fixtures/example.hpp"
#include "hetplan/io/cluster_json.hpp"
#include "hetplan/io/job_json.hpp"
#include "hetplan/io/model_json.hpp"
#include "hetplan/io/plan_json.hpp"
#include "hetplan/io/profile_json.hpp"
#include "hetplan/planners/sailor.hpp"
#include "../plan_checks.hpp"

using namespace hetplan;

namespace {

struct scenario {
    fixtures::planning_example in;
    plan peer;
    [[nodiscard]] problem pb() const { return in.as_problem(); }
};

scenario load_scenario(const std::string& name) {
    const auto dir = test::data_dir() / "sailor-scenarios" / name;
    scenario s;
    s.in.hw = io::read_cluster_file(dir / "cluster.json");
    s.in.model = io::read_model_file(dir / "model.json");
    s.in.job = io::read_job_file(dir / "job.json");
    s.in.profiles = io::read_profiles_file(dir / "profiles.json");
    s.peer = io::read_plan_file(dir / "peer.json", s.in.hw);
    return s;
}

/// Plans with Sailor's default planner under `rq`; checks every plan and returns the best with
/// the peer's plan priced by the same simulator.
template <class O>
std::pair<estimate, estimate> plan_and_peer(const scenario& s, const plan_request<O>& rq) {
    sailor_planner<> planner;
    const problem pb = s.pb();
    const auto r = planner.plan(pb, rq);
    REQUIRE(r.best());
    test::check_all_valid(pb, r);
    const estimate peer = planner.models().run(pb, s.peer);
    REQUIRE(validate(pb, s.peer, planner.models().memory).ok());
    return {r.best()->est, peer};
}

}  // namespace

TEST_CASE("Sailor scenarios, maximum throughput: hetplan's best plan is at least as fast as the public planner's (§5.2.2)") {
    for (const std::string name : {"opt_a32", "opt_a128_v384", "neo_a32_v96", "neo_a80_v240", "neo_a128_v384"}) {
        CAPTURE(name);
        const auto [ours, peer] = plan_and_peer(load_scenario(name), plan_request<>{});
        MESSAGE(name << ": hetplan " << ours.time.iteration.value << " s, " << ours.money.total.value << " USD; public planner "
                     << peer.time.iteration.value << " s, " << peer.money.total.value << " USD");
        CHECK(ours.time.iteration.value <= peer.time.iteration.value * (1 + 1e-9));
    }
}

TEST_CASE("Sailor scenarios, two zones: minimum cost at >= 0.2 it/s, and maximum throughput at <= 1.2 USD/it (§5.2.4)") {
    {
        const scenario s = load_scenario("opt_2z_mincost");
        plan_request<min_cost> rq;
        rq.objective.limits.min_throughput = 0.2;
        const auto [ours, peer] = plan_and_peer(s, rq);
        MESSAGE("opt_2z_mincost: hetplan " << ours.money.total.value << " USD at " << 1 / ours.time.iteration.value
                                           << " it/s; public planner " << peer.money.total.value << " USD at " << 1 / peer.time.iteration.value << " it/s");
        CHECK(1 / ours.time.iteration.value >= 0.2);
        CHECK(ours.money.total.value <= peer.money.total.value * (1 + 1e-9));
    }
    {
        const scenario s = load_scenario("opt_2z_budget");
        plan_request<> rq;
        rq.objective.limits.max_usd = 1.2;
        const auto [ours, peer] = plan_and_peer(s, rq);
        MESSAGE("opt_2z_budget: hetplan " << ours.time.iteration.value << " s at " << ours.money.total.value << " USD; public planner "
                                          << peer.time.iteration.value << " s at " << peer.money.total.value << " USD");
        CHECK(ours.money.total.value <= 1.2);
        CHECK(ours.time.iteration.value <= peer.time.iteration.value * (1 + 1e-9));
    }
}
