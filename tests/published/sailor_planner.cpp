// Sailor planner reproduction items (issue 3) on Sailor's published data, full-depth searches
// (every pipeline degree) at the training configs' global batch and at 2048 as in the paper.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "data_dir.hpp"
#include "hetplan/io.hpp"
#include "hetplan/planners/sailor.hpp"
#include "../plan_checks.hpp"

using namespace hetplan;

namespace {

io::sailor::world load(const std::string& model, const std::vector<std::string>& gpus, const std::vector<std::string>& zones,
                       int global_batch = 0) {
    return io::sailor::load_world(test::data_dir() / "sailor", model, gpus, zones, global_batch);
}


bool uses(const ranked_plan& c, gpu_type_id g) {
    bool any = false;
    c.pl.for_each_worker([&](std::size_t, std::size_t, std::size_t, const worker_group& w) { any = any || w.gpu == g; });
    return any;
}

}  // namespace

namespace {

/// The same search with only the first GPU type (A100) available.
plan_result a100_only(const io::sailor::world& w) {
    resource_pool pool = w.hw.pool;
    for (std::size_t z = 0; z < w.hw.zones.size(); ++z)
        for (std::size_t g = 1; g < w.hw.gpus.size(); ++g) pool.set(gpu_type_id{g}, zone_id{z}, 0);
    return sailor_planner<>().plan(w.pb(), pool);
}

/// Pipeline degree, data-parallel degree (stage 0's replicas) and microbatch size of a Sailor plan.
int P_of(const ranked_plan& c) { return static_cast<int>(c.pl.pipelines[0].stages.size()); }
int D_of(const ranked_plan& c) { return static_cast<int>(c.pl.pipelines[0].stages[0].workers.size()); }
int mbs_of(const ranked_plan& c) { return c.pl.pipelines[0].stages[0].workers[0].microbatch_size; }

std::string describe(const io::sailor::world& w, const ranked_plan& c) {
    std::string s = "P" + std::to_string(P_of(c)) + " D" + std::to_string(D_of(c)) + " mbs" + std::to_string(mbs_of(c)) + ", " +
                    std::to_string(c.gpus()) + " GPUs, " + std::to_string(c.throughput()) + " it/s, " +
                    std::to_string(c.cost().value) + " USD/it:";
    for (const auto& st : c.pl.pipelines[0].stages) {
        std::map<std::string, int> n;
        for (const auto& wg : st.workers) n[w.hw.gpu(wg.gpu).type_name + " TP" + std::to_string(wg.tp)]++;
        s += " [";
        for (const auto& [k, v] : n) s += std::to_string(v) + "x" + k + " ";
        s += "]";
    }
    return s;
}

}  // namespace

TEST_CASE("a published profile with the wrong layer count is refused at load time, naming the folder") {
    // Found in calibration: Sailor's GPT-Neo-2.7 profile for GH-96 holds OPT-350's 26 layers
    // (GPT-Neo-2.7 has 34); it was read without a word and failed at planning time, unnamed.
    const auto refused = [] { (void)load("GPT-Neo-2.7", {"GH-96"}, {"us-central1-a"}); };
    CHECK_THROWS_AS(refused(), input_error);
    try {
        refused();
    } catch (const input_error& e) {
        const std::string what = e.what();
        CHECK(what.find("profiles/GPT-Neo-2.7") != std::string::npos);
        CHECK(what.find("26 layers per point") != std::string::npos);
        CHECK(what.find("34") != std::string::npos);
    }
    // The same folder's consistent profiles still load.
    CHECK(load("GPT-Neo-2.7", {"A100-40", "V100-16"}, {"us-central1-a"}).model.layers.size() == 34);
}

TEST_CASE("item 1: OPT-350 on 128 A100 + 128 V100, maximum throughput: at least the public planner's A100-only plan (Sailor §5.2.2)") {
    auto w = load("OPT-350", {"A100-40", "V100-16"}, {"us-central1-a"});
    w.hw.pool.set(gpu_type_id{0}, zone_id{0}, 128);
    w.hw.pool.set(gpu_type_id{1}, zone_id{0}, 128);
    sailor_planner<> planner;
    const auto r = planner.plan(w.pb());
    const auto a = a100_only(w);
    REQUIRE(r.best());
    REQUIRE(a.best());
    test::check_all_valid(w.pb(), r);
    const ranked_plan& best = *r.best();
    MESSAGE("item 1, global batch " << w.job.global_batch << ": " << describe(w, best) << " | A100 only: " << describe(w, *a.best()));
    // The paper and the public implementation (peers.md): A100 only, PP1 TP4 DP32, 2.47 s per
    // iteration. hetplan's A100-only search finds that plan; with V100s it may only do better
    // (per-type TP levels find V100 TP4 on the first layers, 0.7 % faster under these models).
    const ranked_plan& pub = *a.best();
    CHECK(P_of(pub) == 1);
    CHECK(D_of(pub) == 32);
    CHECK(pub.pl.pipelines[0].stages[0].workers[0].tp == 4);
    CHECK(pub.iteration().value == doctest::Approx(2.47).epsilon(0.01));
    CHECK(best.iteration().value <= pub.iteration().value * (1 + 1e-12));

    // The straightforward search (no floors) returns the same plans (pipelines up to 4 stages
    // keep it short).
    sailor_options shallow;
    shallow.space.max_pipeline_degree = 4;
    const auto fast = sailor_planner<>(shallow).plan(w.pb());
    const auto plain = sailor_planner<>(shallow).straightforward().plan(w.pb());
    REQUIRE(fast.plans.size() == plain.plans.size());
    for (std::size_t k = 0; k < fast.plans.size(); ++k) CHECK(fast.plans[k].pl == plain.plans[k].pl);
}

TEST_CASE("item 1 at global batch 2048: adding V100s never lowers throughput") {
    auto w = load("OPT-350", {"A100-40", "V100-16"}, {"us-central1-a"}, 2048);
    w.hw.pool.set(gpu_type_id{0}, zone_id{0}, 128);
    w.hw.pool.set(gpu_type_id{1}, zone_id{0}, 128);
    const auto r = sailor_planner<>().plan(w.pb());
    const auto a = a100_only(w);
    REQUIRE(r.best());
    REQUIRE(a.best());
    test::check_all_valid(w.pb(), r);
    MESSAGE("item 1, global batch 2048: " << describe(w, *r.best()) << " | A100 only: " << describe(w, *a.best()));
    CHECK(r.best()->throughput() >= a.best()->throughput() * (1 - 1e-12));
}

TEST_CASE("item 2: GPT-Neo-2.7 on A100 + V100, maximum throughput, a valid plan each (Sailor §5.2.2)") {
    for (const auto& counts : {std::pair{32, 96}, std::pair{80, 240}, std::pair{128, 384}}) {
        const int na = counts.first, nv = counts.second;  // CAPTURE takes no structured binding in clang 14
        auto w = load("GPT-Neo-2.7", {"A100-40", "V100-16"}, {"us-central1-a"});
        w.hw.pool.set(gpu_type_id{0}, zone_id{0}, na);
        w.hw.pool.set(gpu_type_id{1}, zone_id{0}, nv);
        CAPTURE(na);
        const auto r = sailor_planner<>().plan(w.pb());
        const auto a = a100_only(w);
        REQUIRE(r.best());
        REQUIRE(a.best());
        test::check_all_valid(w.pb(), r);
        MESSAGE("item 2, " << na << " + " << nv << ": " << describe(w, *r.best()) << " | A100 only: " << describe(w, *a.best()));
        // Heterogeneous exactly where the V100s add throughput.
        CHECK(r.best()->throughput() >= a.best()->throughput() * (1 - 1e-12));
        if (uses(*r.best(), gpu_type_id{1})) CHECK(r.best()->throughput() > a.best()->throughput());
    }
}

TEST_CASE("item 3: geo-distributed A100s, 4 zones of us-central1 + us-west1-b (Sailor §5.2.3)") {
    const std::vector<std::string> zones{"us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f", "us-west1-b"};
    for (int per_zone : {8, 32, 128}) {
        auto w = load("OPT-350", {"A100-40"}, zones);
        for (std::size_t z = 0; z < zones.size(); ++z) w.hw.pool.set(gpu_type_id{0}, zone_id{z}, per_zone);
        CAPTURE(per_zone);
        const auto r = sailor_planner<>().plan(w.pb());
        resource_pool central = w.hw.pool;
        central.set(gpu_type_id{0}, zone_id{4}, 0);
        const auto one = sailor_planner<>().plan(w.pb(), central);
        REQUIRE(r.best());
        REQUIRE(one.best());
        test::check_all_valid(w.pb(), r);
        const ranked_plan& best = *r.best();
        MESSAGE("item 3, " << per_zone << " A100 per zone: " << describe(w, best));
        std::set<std::size_t> regions;
        for (const auto& st : best.pl.pipelines[0].stages) {
            std::set<std::size_t> in_stage;
            for (const auto& wg : st.workers) in_stage.insert(w.hw.region_of(wg.zone).index());
            CHECK(in_stage.size() == 1);  // H5: a stage's all-reduce stays in one region
            regions.insert(in_stage.begin(), in_stage.end());
        }
        CHECK(best.throughput() >= one.best()->throughput() * (1 - 1e-12));
        // When the second region adds nothing, the plan stays in one region.
        if (best.throughput() <= one.best()->throughput() * (1 + 1e-12)) CHECK(regions.size() == 1);
    }
}

TEST_CASE("item 4: two zones x (128 A100 + 128 V100), OPT-350, constrained objectives (Sailor §5.2.4)") {
    auto w = load("OPT-350", {"A100-40", "V100-16"}, {"us-central1-a", "us-central1-b"});
    for (std::size_t z = 0; z < 2; ++z)
        for (std::size_t g = 0; g < 2; ++g) w.hw.pool.set(gpu_type_id{g}, zone_id{z}, 128);
    SUBCASE("minimum cost with at least 0.2 iterations/s") {
        const auto r = sailor_planner<>().plan(w.pb(), plan_request<min_cost>{.objective = {{{}, 0.2}}});
        REQUIRE(r.best());
        test::check_all_valid(w.pb(), r);
        const ranked_plan& best = *r.best();
        CHECK(best.throughput() >= 0.2);
        MESSAGE("min cost: " << best.gpus() << " GPUs, P" << P_of(best) << " D" << D_of(best) << ", " << best.throughput() << " it/s, "
                             << best.cost().value << " USD/it (paper: 64 A100 in one zone)");
        // Paper: 64 A100s in a single zone.
        CHECK_FALSE(uses(best, gpu_type_id{1}));
        CHECK(best.gpus() == 64);
        std::set<std::size_t> zones;
        best.pl.for_each_worker([&](std::size_t, std::size_t, std::size_t, const worker_group& wg) { zones.insert(wg.zone.index()); });
        CHECK(zones.size() == 1);
    }
    SUBCASE("maximum throughput with at most 1.2 USD/iteration") {
        const auto r = sailor_planner<>().plan(w.pb(), plan_request<>{.objective = {{1.2, {}}}});
        REQUIRE(r.best());
        test::check_all_valid(w.pb(), r);
        const ranked_plan& best = *r.best();
        CHECK(best.cost().value <= 1.2);
        MESSAGE("max throughput: " << best.gpus() << " GPUs, P" << P_of(best) << " D" << D_of(best) << ", " << best.throughput() << " it/s, "
                                   << best.cost().value << " USD/it (paper: 256 A100, TP4, DP64, both zones)");
    }
}

TEST_CASE("item 4 at global batch 2048: the paper's budgeted plan, 256 A100 over both zones, TP 4, DP 64") {
    auto w = load("OPT-350", {"A100-40", "V100-16"}, {"us-central1-a", "us-central1-b"}, 2048);
    for (std::size_t z = 0; z < 2; ++z)
        for (std::size_t g = 0; g < 2; ++g) w.hw.pool.set(gpu_type_id{g}, zone_id{z}, 128);
    const auto r = sailor_planner<>().plan(w.pb(), plan_request<>{.objective = {{1.2, {}}}});
    REQUIRE(r.best());
    test::check_all_valid(w.pb(), r);
    const ranked_plan& best = *r.best();
    MESSAGE("item 4 budget, global batch 2048: " << describe(w, best));
    CHECK(best.cost().value <= 1.2);
    CHECK_FALSE(uses(best, gpu_type_id{1}));
    CHECK(best.gpus() == 256);
    CHECK(P_of(best) == 1);
    CHECK(D_of(best) == 64);
    CHECK(best.pl.pipelines[0].stages[0].workers[0].tp == 4);
}
