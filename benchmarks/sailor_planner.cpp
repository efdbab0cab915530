// Sailor planner search times. Always: the built-in small instance, stage DP against exhaustive
// search over the same plan space. With HETPLAN_DATA_DIR set: the scenarios at full
// depth, each including reading Sailor's files; the branch-and-bound search against the
// straightforward one (same plans, no floors) where the latter finishes; and 256 GPUs per type
// with 1, 2 and 3 types. Run with e.g. `--benchmark-samples 10`.
#define CATCH_CONFIG_ENABLE_BENCHMARKING
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/io.hpp"
#include "hetplan/planners/sailor.hpp"
#include "peak_memory.hpp"
#include "pools.hpp"

using namespace hetplan;

namespace {

/// 4 A100 + 4 V100 per zone, two zones, OPT-350 at global batch 64 with analytical times.
struct small {
    cluster hw;
    model_spec model = fixtures::opt_350m();
    job_spec job;
    profile_table profiles;
    small() {
        const auto a = hw.add_gpu(fixtures::a100_80(), 4);
        const auto v = hw.add_gpu(fixtures::v100_16(), 4);
        for (const char* z : {"us-central1-a", "us-central1-b"}) {
            const auto zid = hw.add_zone(z);
            hw.pool.set(a, zid, 4);
            hw.pool.set(v, zid, 4);
        }
        hw.network.set_default(alpha_beta_link{seconds{1e-5}, gigabits_per_second(100)});
        hw.network.set_zone_default(zone_id{0}, zone_id{1}, alpha_beta_link{seconds{1e-3}, gigabits_per_second(10)});
        hw.network.set_zone_default(zone_id{1}, zone_id{0}, alpha_beta_link{seconds{1e-3}, gigabits_per_second(10)});
        job.global_batch = 64;
        job.sequence_length = 2048;
        profiles.enable_analytical({});
    }
    [[nodiscard]] problem pb() const { return {hw, model, job, profiles}; }
};

}  // namespace

TEST_CASE("Sailor planner: DP vs exhaustive search, 16 GPUs, heuristics off") {
    const small s;
    sailor_options opt;
    opt.space.max_pipeline_degree = 2;
    opt.space.microbatch_sizes = {1, 2};
    BENCHMARK("stage DP (exact)") { return exact_sailor_planner(opt).plan(s.pb()).plans.size(); };
    BENCHMARK("exhaustive") { return exact_sailor_planner(opt).exhaustive().plan(s.pb()).plans.size(); };
}

namespace {

std::filesystem::path sailor_root() {
    const char* dir = std::getenv("HETPLAN_DATA_DIR");
    return dir && *dir ? std::filesystem::path(dir) / "sailor" : std::filesystem::path{};
}

/// Reads the scenario's files, sets the pool (GPUs per (type, zone), in the order given) and
/// plans: what a scheduler does on each availability change.
template <class O = max_throughput>
std::size_t load_and_plan(const std::string& model, const std::vector<std::string>& gpus, const std::vector<std::string>& zones,
                          const std::vector<int>& per_type_zone, O objective = {}) {
    auto w = io::sailor::load_world(sailor_root(), model, gpus, zones);
    std::size_t k = 0;
    for (std::size_t z = 0; z < zones.size(); ++z)
        for (std::size_t g = 0; g < gpus.size(); ++g) w.hw.pool.set(gpu_type_id{g}, zone_id{z}, per_type_zone[k++ % per_type_zone.size()]);
    return sailor_planner<>().plan(w.pb(), plan_request<O>{objective}).plans.size();
}

}  // namespace

TEST_CASE("Sailor planner: the issue's scenarios, full depth, reading the inputs included") {
    if (sailor_root().empty()) return;
    const std::vector<std::string> av{"A100-40", "V100-16"};
    BENCHMARK("item 1: OPT-350, 128 A100 + 128 V100") { return load_and_plan("OPT-350", av, {"us-central1-a"}, {128, 128}); };
    for (auto [a, v] : {std::pair{32, 96}, std::pair{80, 240}, std::pair{128, 384}})
        BENCHMARK("item 2: GPT-Neo-2.7, " + std::to_string(a) + " A100 + " + std::to_string(v) + " V100") {
            return load_and_plan("GPT-Neo-2.7", av, {"us-central1-a"}, {a, v});
        };
    BENCHMARK("item 3: OPT-350, 32 A100 in each of 5 zones, 2 regions") {
        return load_and_plan("OPT-350", {"A100-40"}, {"us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f", "us-west1-b"},
                             {32});
    };
    BENCHMARK("item 4: OPT-350, 2 zones x (128 A100 + 128 V100), min cost, >= 0.2 it/s") {
        return load_and_plan("OPT-350", av, {"us-central1-a", "us-central1-b"}, {128}, min_cost{{{}, 0.2}});
    };
    BENCHMARK("item 4: OPT-350, 2 zones x (128 A100 + 128 V100), max throughput, <= 1.2 USD/it") {
        return load_and_plan("OPT-350", av, {"us-central1-a", "us-central1-b"}, {128}, max_throughput{{1.2, {}}});
    };
}

TEST_CASE("Sailor planner: branch and bound vs the straightforward search (same plans)") {
    if (sailor_root().empty()) return;
    for (int max_P : {4, 8}) {
        auto w = io::sailor::load_world(sailor_root(), "OPT-350", {"A100-40", "V100-16"}, {"us-central1-a"});
        w.hw.pool.set(gpu_type_id{0}, zone_id{0}, 128);
        w.hw.pool.set(gpu_type_id{1}, zone_id{0}, 128);
        sailor_options opt;
        opt.space.max_pipeline_degree = max_P;
        const std::string name = "item 1, P <= " + std::to_string(max_P);
        BENCHMARK(name + ": branch and bound") { return sailor_planner<>(opt).plan(w.pb()).plans.size(); };
        BENCHMARK(name + ": straightforward") { return sailor_planner<>(opt).straightforward().plan(w.pb()).plans.size(); };
    }
}

TEST_CASE("Sailor planner: 256 GPUs per type in one zone, 1, 2 and 3 types") {
    if (sailor_root().empty()) return;
    const std::vector<std::string> all{"A100-40", "V100-16", "GH-96"};  // the types with measured links
    for (std::size_t n = 1; n <= 3; ++n) {
        const std::vector<std::string> types(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
        BENCHMARK("OPT-350, " + std::to_string(n) + " x 256") { return load_and_plan("OPT-350", types, {"us-central1-a"}, {256}); };
        if (n < 3)  // Sailor's GH-96 profile of GPT-Neo-2.7 has 26 layers, not 34: unusable
            BENCHMARK("GPT-Neo-2.7, " + std::to_string(n) + " x 256") {
                return load_and_plan("GPT-Neo-2.7", types, {"us-central1-a"}, {256});
            };
    }
}

TEST_CASE("Sailor planner: Table 3 ablation, OPT-350 on 32 A100 + 32 V100") {
    if (sailor_root().empty()) return;
    auto w = io::sailor::load_world(sailor_root(), "OPT-350", {"A100-40", "V100-16"}, {"us-central1-a"});
    w.hw.pool.set(gpu_type_id{0}, zone_id{0}, 32);
    w.hw.pool.set(gpu_type_id{1}, zone_id{0}, 32);
    BENCHMARK("DP only (exact)") { return exact_sailor_planner().plan(w.pb()).plans.size(); };
    BENCHMARK("+ heuristics H2-H6") { return sailor_planner<>().plan(w.pb()).plans.size(); };
    BENCHMARK("+ heuristics, + cost limit 0.5 USD/it") {
        return sailor_planner<>().plan(w.pb(), plan_request<>{max_throughput{{0.5, {}}}}).plans.size();
    };
}

TEST_CASE("Sailor planner: stage patterns vs the stage DP as the solver, same plans (issue 15)") {
    // Each (P, mbs, D) searched the paper's way (H3), solved by the pattern search (the
    // default) and by the stage DP, on the built-in example and, with the data, item 2.
    const auto in = fixtures::default_planning_example();
    const auto patterns = sailor_planner<>().with_scan(search::sailor_dp_order{});
    const auto dp = patterns.with_solver(search::stage_dp<>(patterns.models().time));
    BENCHMARK("built-in example: pattern search") {
        auto p = patterns;
        return p.plan(in.as_problem()).plans.size();
    };
    BENCHMARK("built-in example: stage DP") {
        auto p = dp;
        return p.plan(in.as_problem()).plans.size();
    };
    if (sailor_root().empty()) return;
    auto w = io::sailor::load_world(sailor_root(), "GPT-Neo-2.7", {"A100-40", "V100-16"}, {"us-central1-a"});
    w.hw.pool.set(gpu_type_id{0}, zone_id{0}, 128);
    w.hw.pool.set(gpu_type_id{1}, zone_id{0}, 384);
    BENCHMARK("GPT-Neo-2.7, 128 A100 + 384 V100: pattern search") {
        auto p = patterns;
        return p.plan(w.pb()).plans.size();
    };
    BENCHMARK("GPT-Neo-2.7, 128 A100 + 384 V100: stage DP") {
        auto p = dp;
        return p.plan(w.pb()).plans.size();
    };
}

/// A max-throughput request with a deadline 10 s from now (each benchmark run makes its own).
plan_request<max_throughput> within_10_s() {
    plan_request<max_throughput> rq;
    rq.stop = stop_condition::after(std::chrono::seconds(10));
    return rq;
}

/// The default planner against `other` on bench::random_pool seeds, each run under a deadline
/// 10 s from its start: the same plans where both finish; each pool's plans, whether each run
/// finished and its nodes are printed.
template <class Other>
void against_default(const Other& other, std::initializer_list<std::uint64_t> seeds, const std::string& on, const std::string& off) {
    const auto planner = sailor_planner<>();
    for (std::uint64_t seed : seeds) {
        const auto in = bench::random_pool(seed);
        plan_result a, b;
        BENCHMARK("pool " + std::to_string(seed) + ": " + on + " (default)") {
            auto p = planner;
            a = p.plan(in.as_problem(), within_10_s());
            return a.plans.size();
        };
        BENCHMARK("pool " + std::to_string(seed) + ": " + off) {
            auto p = other;
            b = p.plan(in.as_problem(), within_10_s());
            return b.plans.size();
        };
        if (a.best() && b.best())
            std::printf("pool %llu: %.6f s/iteration (%s, gap %.2f %%, %zu nodes) against %.6f (%s, gap %.2f %%, %zu nodes)\n",
                        static_cast<unsigned long long>(seed), a.best()->iteration().value, a.stopped ? "stopped" : "complete",
                        100 * a.gap().value_or(1), a.stats.counter("dp states"), b.best()->iteration().value, b.stopped ? "stopped" : "complete",
                        100 * b.gap().value_or(1), b.stats.counter("dp states"));
        if (!a.stopped && !b.stopped && a.best() && b.best()) CHECK(a.best()->value == b.best()->value);
    }
}

TEST_CASE("Sailor planner: the LP floor of the stages left at each node, on and off (random pools; issue 15)") {
    // The default planner against the same planner whose pattern search floors the stages left
    // by their own floors only (pattern_search::rest_lp(false)). Pools 109 and 163 (three
    // types, two regions) and 42 (P = 14 over 208 GPUs, whose proof the LP floor makes
    // possible; without it the search stops at the 10 s deadline). Run with
    // --benchmark-samples 3.
    const auto planner = sailor_planner<>();
    against_default(planner.with_solver(search::pattern_search<>(planner.models().time).rest_lp(false)), {109, 163, 42}, "LP floor of the stages left",
                    "stages' own floors");
}

TEST_CASE("Sailor planner: each child's pooled straggler tested at its parent, and at the child (random pools; issue 15)") {
    // The default planner against the same planner whose pattern search takes the pooled
    // straggler of the stages below a child only once it visits the child
    // (pattern_search::child_pool(false)). Pools 152 (412,000 nodes against 939,000), 42, and
    // 75 (P = 12 over 280 GPUs: both stop at the deadline; the test finds the better plan).
    // Run with --benchmark-samples 3.
    const auto planner = sailor_planner<>();
    against_default(planner.with_solver(search::pattern_search<>(planner.models().time).child_pool(false)), {152, 42, 75}, "at the parent",
                    "at the child");
}

TEST_CASE("Sailor planner: rest_floor's LP kept per solve, and solved at every node (random pools; issue 15)") {
    // The default planner against one whose pattern search solves the LP of the stages left at
    // every node that asks (pattern_search::rest_memo(false)): the same nodes and plans. Run
    // with --benchmark-samples 3.
    const auto planner = sailor_planner<>();
    against_default(planner.with_solver(search::pattern_search<>(planner.models().time).rest_memo(false)), {152, 42}, "kept per solve",
                    "solved at every node");
}

TEST_CASE("Sailor planner: the memo of nodes up to the whole memory limit, and up to a quarter (random pools; issue 15)") {
    // The default planner against one whose pattern search remembers nodes up to a quarter of
    // sailor_options::dp_memory (pattern_search::memo_share(4), the share before 2026-12-07).
    // Pool 54's proof needs ~200,000 entries (a quarter holds ~84,000: it stopped at 10 s, where
    // the whole limit finishes in ~7 s); pool 75 stops either way. Run with --benchmark-samples 3.
    const auto planner = sailor_planner<>();
    against_default(planner.with_solver(search::pattern_search<>(planner.models().time).memo_share(4)), {54, 75}, "whole limit", "a quarter");
}

TEST_CASE("Sailor planner: deferred solves continued from their last round's suspension, and begun again (random pools; issue 15)") {
    // The default planner (sailor_options::suspended_memory, 64 MiB) against one whose deferred
    // solves start afresh each round (0, the way before 2026-12-07): the same plans. Pools of
    // three zones over two regions whose level solves run out of effort often (152: 34 % of
    // their time in solves that ran out; 54: 35 %; 128: 43 %). Run with --benchmark-samples 3.
    sailor_options afresh;
    afresh.suspended_memory = 0;
    against_default(sailor_planner<>(afresh), {152, 54, 128}, "continued", "begun again");
}

TEST_CASE("Sailor planner: the dive to a first plan, and the A* order alone (random pools; issue 15)") {
    // The default planner (sailor_options::dive: until a plan sets a cut-off, each instance is
    // solved as soon as its floor is tightened, and the tight floors after it stop their
    // placement searches past the cut-off) against the A* order alone: the same plans. Pools
    // whose tight floors, made before any plan, led the run (128: 861 of them, 780 above its
    // answer; 118 and 24). Run with --benchmark-samples 3.
    sailor_options queued;
    queued.dive = false;
    against_default(sailor_planner<>(queued), {128, 118, 24}, "dive", "A* order alone");
}

TEST_CASE("Sailor planner: rings no real zone holds priced across zones, and at H6's merged links (random pools; issue 15)") {
    // The default solvers charge a stage that no real zone behind H6's merged cells can hold at
    // least a ring across zones (stage_pricer::spread_floor); off, at the merged cells' links
    // (pattern_search::spread_rings(false)), as before 2026-12-07. A change of the solvers'
    // prices, so the plans may differ: both are printed. Pool 14 spent 5.3 of its 8.6 s proving
    // that no solution of one instance beat 0.5177 s/iteration at merged prices, where the
    // simulator priced that solution at 0.5878 (every ring across two zones). Run with
    // --benchmark-samples 3.
    const auto planner = sailor_planner<>();
    for (std::uint64_t seed : {14, 54, 128}) {
        const auto in = bench::random_pool(seed);
        plan_result a, b;
        BENCHMARK("pool " + std::to_string(seed) + ": across zones (default)") {
            auto p = planner;
            a = p.plan(in.as_problem(), within_10_s());
            return a.plans.size();
        };
        BENCHMARK("pool " + std::to_string(seed) + ": merged links") {
            auto p = planner.with_solver(search::pattern_search<>(planner.models().time).spread_rings(false));
            b = p.plan(in.as_problem(), within_10_s());
            return b.plans.size();
        };
        REQUIRE(a.best());
        REQUIRE(b.best());
        std::printf("pool %llu: %.6f s/iteration, %.6f USD (%s) against %.6f, %.6f USD (%s)\n", static_cast<unsigned long long>(seed),
                    a.best()->iteration().value, a.best()->cost().count(), a.stopped ? "stopped" : "complete", b.best()->iteration().value,
                    b.best()->cost().count(), b.stopped ? "stopped" : "complete");
    }
}

TEST_CASE("Sailor planner: zone floors that ask the pruners which groups a stage may span, and floors that let any case span (random pools; issue 15)") {
    // With H5 a stage's replicas stay in one region, and H6 makes each region one zone group:
    // the default floors (sailor_options::spans_from_pruners) drop the cases that put a stage
    // over two groups, which priced pool 152's P = 17, D = 14 at 1.543 s/iteration where its
    // plans take over 1.7, and held pool 100 at 10 s. The same plans. Run with
    // --benchmark-samples 3.
    sailor_options spanning;
    spanning.spans_from_pruners = false;
    against_default(sailor_planner<>(spanning), {152, 100, 54}, "spans from the pruners", "any case spans");
}

TEST_CASE("Sailor planner: a stage over two real zones in each of the zone floor's cases, and at the pool-wide straggler (random pools; issue 15)") {
    // Where a merged cell's zones cannot hold every stage whole, some stage's ring crosses two
    // zones: the default floors (sailor_options::spanning_on_zone_cases) take that ring in each
    // of the zone floor's cases (where the replicas sit by region), not only at the pool-wide
    // straggler. Pools 100 and 54 (three zones over two regions; 100's P = 9, D = 20 is no
    // longer solved) and 191 (both stop at the deadline; its gap falls). The same plans. Run
    // with --benchmark-samples 3.
    sailor_options pool_wide;
    pool_wide.spanning_on_zone_cases = false;
    against_default(sailor_planner<>(pool_wide), {100, 54, 191}, "in the zone floor's cases", "at the pool-wide straggler");
}

TEST_CASE("Sailor planner: every stage in one zone with the stages shared out among the zones, and by the classes' counts (random pools; issue 15)") {
    // The packing floor's case of every stage whole in one real zone counts each class of
    // stages on every zone alone; where that leaves the case at or below the other floors, the
    // default (sailor_options::share_out_zones) also places the stages on the zones together
    // (threshold_placed). Pool 100's P = 12, D = 16: 12 stages of 16 replicas pack by classes
    // but its three zones hold 3, 3 and 5 of them whole; 54 and 135 for the cost elsewhere. The
    // same plans. Run with --benchmark-samples 3.
    sailor_options by_class;
    by_class.share_out_zones = false;
    against_default(sailor_planner<>(by_class), {100, 54, 135}, "shared out", "by the classes' counts");
}

TEST_CASE("Sailor planner: solves over the real zones queued under their floors, and at once (random pools; issue 15)") {
    // The default planner (sailor_options::queue_real_zones) against one that solves each
    // mispriced instance over the real zones as soon as its merged solve ends: the same plans.
    // Pools of bench::random_pool where those solves led the profile (118: 87 of them, 43 % of
    // its time) and 31, 93. Run with --benchmark-samples 3.
    sailor_options at_once;
    at_once.queue_real_zones = false;
    for (std::uint64_t seed : {118, 31, 93}) {
        const auto in = bench::random_pool(seed);
        plan_result queued, direct;
        BENCHMARK("pool " + std::to_string(seed) + ": queued (default)") {
            queued = sailor_planner<>().plan(in.as_problem());
            return queued.plans.size();
        };
        BENCHMARK("pool " + std::to_string(seed) + ": at once") {
            direct = sailor_planner<>(at_once).plan(in.as_problem());
            return direct.plans.size();
        };
        std::printf("pool %llu: %zu solves over the real zones queued, %zu at once\n", static_cast<unsigned long long>(seed),
                    queued.stats.counter("solves over the real zones"), direct.stats.counter("solves over the real zones"));
        REQUIRE(queued.best());
        REQUIRE(direct.best());
        CHECK(queued.best()->value == direct.best()->value);
    }
}

TEST_CASE("Sailor planner: solves over the real zones with their patterns priced capped, and by nodes alone (4 types over 4 zones; issue 15)") {
    // 8 GPUs of each of 4 types in each of 4 zones over 2 regions (128 GPUs, bench::mixed_pool):
    // over the real zones an instance has 16 cells, and a node of those solves prices thousands
    // of the next stage's patterns. The default (sailor_options::real_zones_priced_per_node, 64
    // per node of the 1,024) against nodes alone (0). ~20 s a run: --benchmark-samples 1.
    const auto in = bench::mixed_pool(4, 8, 8, 1024);
    sailor_options nodes_only;
    nodes_only.real_zones_priced_per_node = 0;
    plan_result capped, uncapped;
    BENCHMARK("64 patterns priced per node (default)") {
        capped = sailor_planner<>().plan(in.as_problem());
        return capped.plans.size();
    };
    BENCHMARK("nodes alone") {
        uncapped = sailor_planner<>(nodes_only).plan(in.as_problem());
        return uncapped.plans.size();
    };
    REQUIRE(capped.best());
    REQUIRE(uncapped.best());
    std::printf("4 x 4 x 8 GPUs: %.4f s/iteration capped, %.4f by nodes alone; %zu and %zu solves over the real zones\n",
                capped.best()->iteration().value, uncapped.best()->iteration().value, capped.stats.counter("solves over the real zones"),
                uncapped.stats.counter("solves over the real zones"));
    CHECK(capped.best()->value == uncapped.best()->value);
}

TEST_CASE("Instance floors of every TP level: extreme prices kept by their ties, and for the last ties only (4 types over 4 zones; issue 15)") {
    // 16 GPUs of each of 4 types in each of 4 zones over 2 regions (bench::mixed_pool): Sailor's
    // 256 TP levels at P = 6 and 8, mbs 2, D = 12-16, each level's instance built and floored as
    // plan_best_first does. Each level has its own ties, which come back at the next (P, mbs, D):
    // a cache of the last ties alone (price_cache(0), the cache before stop 68) grows the prices
    // at every level.
    const auto in = bench::mixed_pool(4, 16, 8, 1024);
    const problem pb = in.as_problem();
    const search::sailor_domain d = search::make_sailor_domain(pb, search::h6_merge_zones{}, search::h1_tp_within_node{});
    const search::prune::all pruners{search::h2_memory_fit<>{}, search::h5_one_region{}};
    pruners.begin(pb);
    const sailor_time_model tm;
    const auto levels = search::pinned_tp{}.levels(d.tps);
    boost::hana::tuple<> hooks;
    auto floors = [&](std::size_t most_vectors) {
        search::stage_problem<std::remove_const_t<decltype(pruners)>> sp;
        sp.bound.prices = search::price_cache(most_vectors);
        double sum = 0;
        for (int P : {6, 8}) {
            const auto part = search::even_partition(pb.model.num_layers(), P);
            const auto times = search::time_stages(pb, d.cells, part, 2, d.tps, tm, {}, schedule_kind::one_f_one_b);
            for (int D = 12; D <= 16; ++D)
                for (const search::tp_level& level : levels) {
                    search::build_stage_problem(sp, pb, d.cells, part, 2, D, times, pruners, level, {}, hooks);
                    search::make_instance_bound(sp.bound, sp, tm, false);
                    if (sp.bound.feasible()) sum += sp.bound.iteration(sp.per_replica);
                }
        }
        return sum;
    };
    double kept = 0, last = 0;
    BENCHMARK("kept by their ties (default)") { return kept = floors(std::size_t{1} << 17); };
    BENCHMARK("the last ties only") { return last = floors(0); };
    std::printf("%zu TP levels x 10 (P, D), their floors summed: %.9g s\n", levels.size(), kept);
    CHECK(levels.size() == 256);
    CHECK(kept > 0);
    CHECK(kept == last);
}

TEST_CASE("Sailor planner: the stage DP hands over at an eighth of its memory limit, and at the whole limit (4 types over 4 zones; issue 15)") {
    // The same pool: its merged cells (8 of 16 GPUs) make counts_are_few hand instances of D = 7
    // to the stage DP first, whose states pass its memory limit before it gives up. The default
    // (pattern_search::dp_share 8) against the whole limit (1, before 2026-12-03). ~15 s a run:
    // --benchmark-samples 1.
    const auto in = bench::mixed_pool(4, 8, 8, 1024);
    auto whole = sailor_planner<>().with_solver(search::pattern_search<>(sailor_time_model{}).dp_share(1));
    plan_result eighth, all;
    BENCHMARK("an eighth (default)") {
        eighth = sailor_planner<>().plan(in.as_problem());
        return eighth.plans.size();
    };
    BENCHMARK("the whole limit") {
        all = whole.plan(in.as_problem());
        return all.plans.size();
    };
    REQUIRE(eighth.best());
    REQUIRE(all.best());
    std::printf("4 x 4 x 8 GPUs: %.4f s/iteration with an eighth, %.4f with the whole limit\n", eighth.best()->iteration().value,
                all.best()->iteration().value);
    CHECK(eighth.best()->value == all.best()->value);
}

namespace {

/// 2,048 GPUs: 128 of each of 4 types in each of four zones over two regions, 8-GPU nodes,
/// GPT-Neo-2.7 at global batch 2048 (bench::mixed_pool).
fixtures::planning_example large_pool() { return bench::mixed_pool(4, 128, 8, 2048); }

}  // namespace

TEST_CASE("Sailor planner: 2,048 GPUs of 4 types over 4 zones in 2 regions, 10 s deadline (issue 15)") {
    // The search does not finish at this size: what it has at the deadline is the answer. Run
    // with --benchmark-samples 1; the plan it reaches is printed.
    // The memory limit (200 MB) is on the plan: the peak resident set from just before
    // plan() to just after (peak_memory.hpp; not the process's, which Catch2's clock estimate
    // sets at ~324 MB before the first run). The largest over the runs.
    const auto in = large_pool();
    plan_result last;
    std::optional<std::size_t> peak;
    bool measured = true;
    BENCHMARK("best plan at a 10 s deadline") {
        plan_request<max_throughput> rq;
        rq.stop = stop_condition::after(std::chrono::seconds(10));
        measured = bench::reset_peak_resident() && measured;
        last = sailor_planner<>().plan(in.as_problem(), rq);
        if (const auto p = bench::peak_resident()) peak = std::max(peak.value_or(0), *p);
        return last.plans.size();
    };
    if (const auto* b = last.best())
        std::printf("2,048 GPUs: %.4f s/iteration on %d GPUs, %zu stages, %.3f USD/iteration; search %s; within %.1f %% of the finished "
                    "search's answer (bound %.4f s/iteration)\n",
                    b->iteration().value, b->gpus(), b->pl.pipelines.front().stages.size(), b->cost().value,
                    last.stopped ? "stopped at the deadline" : "complete", 100 * last.gap().value_or(1), last.bound.value_or(0));
    if (peak)
        std::printf("2,048 GPUs: peak resident set %s %.1f MB (issue 15: <= 200 MB)\n",
                    measured ? "during plan(), the whole process's," : "of the process since its start (could not reset it)", double(*peak) / 1e6);
}

TEST_CASE("Stage DP memo tables: flat open addressing vs std::unordered_map (search/memo.hpp)") {
    // The built-in 128-GPU problem with exact boundaries (large memo tables): the same search
    // with each table; the plans are the same.
    const auto in = fixtures::default_planning_example();
    sailor_options opt;
    opt.exact_boundaries = true;
    opt.space.max_pipeline_degree = 8;
    const auto flat = sailor_planner<>(opt);
    const auto node = flat.with_solver(search::stage_dp<sailor_time_model, search::node_memo>(flat.models().time));
    BENCHMARK("flat_memo (default)") {
        auto p = flat;
        return p.plan(in.as_problem()).plans.size();
    };
    BENCHMARK("node_memo (std::unordered_map)") {
        auto p = node;
        return p.plan(in.as_problem()).plans.size();
    };
}

TEST_CASE("Sailor planner: planning time over random pools, p50 / p90 / p99 (issue 15)") {
    // Not a BENCHMARK loop: each instance is planned once (max throughput, a 10 s deadline: the
    // law asks for p99 <= 1 s, so a stopped search only says "over 10 s") and the distribution
    // printed with the slowest pools, for the default planner and, in the same run, for one
    // that proves a 16-plan band (sailor_options::keep = 16, the default before 2026-11-27).
    // HETPLAN_RANDOM_INSTANCES sets the count (default 100); bench::random_pool describes the
    // instances. Where both finish the best values must agree (a difference could only come from
    // a solver whose answer depends on the cut-off it is given; none on these pools).
    const char* env = std::getenv("HETPLAN_RANDOM_INSTANCES");
    const int n = env ? std::max(1, std::atoi(env)) : 100;
    struct run {
        double ms;
        std::uint64_t seed;
        int gpus, types, zones;
        bool stopped;
        double best, gap;  ///< gap: plan_result::gap (1 without one)
    };
    auto plan_all = [n](std::size_t keep) {
        std::vector<run> runs;
        for (int i = 0; i < n; ++i) {
            const std::uint64_t seed = static_cast<std::uint64_t>(i) + 1;
            const auto in = bench::random_pool(seed);
            plan_request<max_throughput> rq;
            rq.stop = stop_condition::after(std::chrono::seconds(10));
            sailor_options opt;
            opt.keep = keep;
            const auto t0 = std::chrono::steady_clock::now();
            const plan_result r = sailor_planner<>(opt).plan(in.as_problem(), rq);
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            int types = 0;
            for (std::size_t g = 0; g < in.hw.gpus.size(); ++g) {
                int k = 0;
                for (std::size_t z = 0; z < in.hw.zones.size(); ++z) k += in.hw.pool.available(gpu_type_id{g}, zone_id{z});
                types += k > 0 ? 1 : 0;
            }
            runs.push_back({ms, seed, in.hw.pool.total(), types, static_cast<int>(in.hw.zones.size()), r.stopped,
                            r.best() ? r.best()->value : std::numeric_limits<double>::infinity(), r.gap().value_or(1)});
        }
        return runs;
    };
    auto report = [n](const char* what, std::vector<run> runs) {
        std::sort(runs.begin(), runs.end(), [](const run& a, const run& b) { return a.ms < b.ms; });
        auto q = [&](double p) { return runs[std::min(runs.size() - 1, static_cast<std::size_t>(p * static_cast<double>(runs.size())))].ms; };
        int stopped = 0, none = 0;
        double total = 0;
        for (const run& r : runs) stopped += r.stopped ? 1 : 0, none += std::isinf(r.best) ? 1 : 0, total += r.ms;
        std::printf("Sailor planner (%s) on %d random pools: p50 %.1f ms, p80 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms, total %.1f s; "
                    "%d stopped at 10 s, %d without a plan\n",
                    what, n, q(0.5), q(0.8), q(0.9), q(0.99), runs.back().ms, total / 1000, stopped, none);
        for (std::size_t k = runs.size() > 5 ? runs.size() - 5 : 0; k < runs.size(); ++k)
            std::printf("  seed %llu: %.1f ms, %d GPUs of %d type(s) over %d zone(s)%s\n", static_cast<unsigned long long>(runs[k].seed), runs[k].ms,
                        runs[k].gpus, runs[k].types, runs[k].zones, runs[k].stopped ? " (stopped)" : "");
        // What the stopped searches proved: how far their answers may be from the finished ones.
        std::vector<double> gaps;
        for (const run& r : runs)
            if (r.stopped) gaps.push_back(100 * r.gap);
        std::sort(gaps.begin(), gaps.end());
        if (!gaps.empty())
            std::printf("  stopped searches: their best within %.1f-%.1f %% (median %.1f %%) of the finished search's answer\n", gaps.front(), gaps.back(),
                        gaps[gaps.size() / 2]);
    };
    const std::vector<run> now = plan_all(sailor_options{}.keep), band = plan_all(16);
    report("default", now);
    report("keep = 16", band);
    for (std::size_t i = 0; i < now.size(); ++i)
        if (!now[i].stopped && !band[i].stopped) CHECK(now[i].best == band[i].best);
    CHECK(now.size() == static_cast<std::size_t>(n));
}
