// The search hot loops allocate nothing once warm (issue 14): a global operator new that counts,
// around the stage DP on instances it has seen (building the instance, its floors, and solving
// it) and Zorse's Phase 2 on a candidate (every ministage count priced, none better than the cut-off).
// Metis' intra-stage walk on candidates it has walked. AutoHet's grouping search per node.
// Its own binary: replacing operator new is global.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <limits>
#include <cstdlib>
#include <new>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/sailor.hpp"
#include "hetplan/planners/zorse.hpp"
#include "hetplan/fixtures/metis_gpt2.hpp"
#include "hetplan/search/metis/search.hpp"
#include "hetplan/search/partition/device_grouping.hpp"

namespace {
std::atomic<std::size_t> allocations{0};
}  // namespace

void* operator new(std::size_t n) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
// Every form that pairs with free(), so that sanitizers see matching allocation and release (the
// library's std::get_temporary_buffer uses the nothrow form).
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return ::operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

using namespace hetplan;
using namespace hetplan::search;

namespace {
/// Allocations made by f().
template <class F>
std::size_t count(F&& f) {
    const std::size_t before = allocations.load();
    f();
    return allocations.load() - before;
}
}  // namespace

TEST_CASE("stage DP: no allocation per instance once warm (built, bounded, solved)") {
    const auto in = fixtures::default_planning_example();  // GPT-Neo-2.7 on 32 A100 + 96 V100
    const problem pb = in.as_problem();
    const sailor_domain d = make_sailor_domain(pb, h6_merge_zones{}, h1_tp_within_node{});  // Sailor's cells and TP degrees
    const cell_set& cells = d.cells;
    const auto& tps = d.tps;
    const prune::all pruners{h2_memory_fit<>{}, h5_one_region{}};
    pruners.begin(pb);
    stage_dp<> dp;
    stage_problem<prune::all<h2_memory_fit<>, h5_one_region>> sp;
    boost::hana::tuple<> hooks;
    std::size_t solved = 0, states = 0;
    for (int P : {4, 8}) {
        const auto part = even_partition(pb.model.num_layers(), P);
        const auto times = time_stages(pb, cells, part, 2, tps, dp.time_model(), {}, schedule_kind::one_f_one_b);
        for (int D : {4, 8, 16}) {
            auto instance = [&] {
                build_stage_problem(sp, pb, cells, part, 2, D, times, pruners, tp_level{}, {}, hooks);
                dp.prepare(sp);
                const auto sol = dp.solve(pb, sp, max_throughput{}, {});
                solved += sol ? 1 : 0;
            };
            // Warm-up: tables grow to this instance's size. The first one allocates (which shows the
            // counter counts).
            const std::size_t warm = count(instance);
            if (P == 4 && D == 4) CHECK(warm > 0);
            instance();
            const std::size_t states_before = dp.stats().states;
            CAPTURE(P);
            CAPTURE(D);
            CHECK(count(instance) == 0);
            states += dp.stats().states - states_before;
        }
    }
    CHECK(solved > 0);
    CHECK(states > 0);  // the DP did work while nothing was allocated
}

TEST_CASE("pattern search: no allocation per instance once warm (built, bounded, solved)") {
    const auto in = fixtures::default_planning_example();  // GPT-Neo-2.7 on 32 A100 + 96 V100
    const problem pb = in.as_problem();
    // Sailor's cells and TP degrees; with the two zones kept apart, the zone floors' groups too.
    for (bool apart : {false, true}) {
        CAPTURE(apart);
        const sailor_domain d = apart ? make_sailor_domain(pb, keep_zones{}, h1_tp_within_node{})
                                      : make_sailor_domain(pb, h6_merge_zones{}, h1_tp_within_node{});
        const cell_set& cells = d.cells;
        const auto& tps = d.tps;
        const prune::all pruners{h2_memory_fit<>{}, h5_one_region{}};
        pruners.begin(pb);
        pattern_search<> ps;
        ps.always_patterns();  // the instances here have few counts; the stage DP has its own test
        stage_problem<prune::all<h2_memory_fit<>, h5_one_region>> sp;
        boost::hana::tuple<> hooks;
        std::size_t solved = 0, nodes = 0;
        for (int P : {4, 8}) {
            const auto part = even_partition(pb.model.num_layers(), P);
            const auto times = time_stages(pb, cells, part, 2, tps, ps.time_model(), {}, schedule_kind::one_f_one_b);
            for (int D : {4, 8, 16}) {
                for (bool cost : {false, true}) {
                    auto instance = [&] {
                        build_stage_problem(sp, pb, cells, part, 2, D, times, pruners, tp_level{}, {}, hooks);
                        sp.exact_boundaries = false;  // as the planner has it (exact boundaries go to the stage DP)
                        ps.prepare(sp);
                        // A node budget: the deep instances take minutes to prove with no cut-off.
                        const solve_limits lim{std::numeric_limits<double>::infinity(), nullptr, 20000};
                        const auto sol = cost ? ps.solve(pb, sp, min_cost{}, lim) : ps.solve(pb, sp, max_throughput{}, lim);
                        solved += sol ? 1 : 0;
                    };
                    (void)count(instance);  // warm-up: buffers grow to this instance's size
                    instance();
                    const std::size_t before = ps.stats().states;
                    CAPTURE(P);
                    CAPTURE(D);
                    CAPTURE(cost);
                    CHECK(count(instance) == 0);
                    CHECK(sp.bound.groups == (apart && sp.bound.feasible() ? 2u : 0u));  // zone_floor ran where the zones are apart
                    nodes += ps.stats().states - before;
                }
            }
        }
        CHECK(solved > 0);
        CHECK(nodes > 0);  // the search did work while nothing was allocated
    }
}

TEST_CASE("Zorse phase 2: no allocation per candidate once warm") {
    const auto in = fixtures::default_planning_example();
    const problem pb = in.as_problem();
    const auto ms = machines_of(pb.hw, pb.pool());
    const auto partitions = cluster_partitions(pb.hw, ms);
    REQUIRE_FALSE(partitions.partitions.empty());
    const auto& groups = partitions.partitions.front();
    std::vector<zorse_group_comm> comm;
    for (const auto& g : groups) {
        std::vector<machine> ring;
        for (int i : g)
            for (int k = 0; k < ms[std::size_t(i)].gpus; ++k) ring.push_back(ms[std::size_t(i)]);
        comm.emplace_back(pb, ring);
    }
    std::vector<const zorse_group_comm*> order;
    for (const auto& c : comm) order.push_back(&c);
    zorse_layer_table table;
    std::vector<std::vector<std::size_t>> rows;
    for (const auto* g : order) {
        rows.emplace_back();
        for (const machine& m : g->ring) rows.back().push_back(table.add(pb, m.gpu, 4, true));
    }
    const prune::all pruners{zorse_memory_fit{}};
    zorse_phase2<> solver;
    const zorse_candidate<prune::all<zorse_memory_fit>> cand{order, rows, 4, 0.0, &table, &pruners};
    const auto best = solver.solve(pb, cand, max_throughput{}, {});
    REQUIRE(best);
    // The same candidate under its own optimum as the cut-off: every ministage count is priced
    // again, none is better, nothing is returned, nothing allocated.
    const solve_limits cut{best->terms.iteration, nullptr};
    const std::size_t priced = solver.configurations;
    CHECK(count([&] { CHECK_FALSE(solver.solve(pb, cand, max_throughput{}, cut)); }) == 0);
    CHECK(solver.configurations > priced);
}

TEST_CASE("Metis: no allocation per candidate walk once warm (shares, layer balancer, memory check, splits)") {
    // Memory-aware Metis Table 1's 20-layer profiles on 32 + 32 GPUs; every device-group vector of
    // 7 and 8 stages at 8 microbatches, walked twice: the second pass allocates nothing.
    const auto p = fixtures::metis_gpt2_profile(20);
    const auto c = fixtures::metis_table1_cluster(32);
    const metis_layout layout(c, std::vector<int>{0, 1});
    metis::stage_model<> model(p, c, metis_rules::published());
    metis::walk_state w;
    metis::partition_outcome out;
    std::vector<double> shares;
    stop_poll poll(nullptr);
    std::vector<std::vector<int>> candidates;
    for (int S : {7, 8, 13})
        metis::for_each_device_groups(S, 64, {}, [&](std::span<const int> g) {
            candidates.emplace_back(g.begin(), g.end());
            return false;
        });
    REQUIRE(candidates.size() > 100);
    std::size_t steps = 0;
    auto walk_all = [&] {
        for (const auto& g : candidates) {
            model.reset(layout, g, 128, 8);
            (void)metis::walk_strategies(model, g, 128, 8, {}, metis::memory_aware_split_order{}, w, out, shares, poll,
                                         [&](const metis::walk_state&, const metis::partition_outcome&, std::size_t n) {
                                             steps += n;
                                             return false;
                                         });
        }
    };
    (void)count(walk_all);  // warm-up: buffers grow to the largest candidate
    const std::size_t first = steps;
    CHECK(first > 0);
    CHECK(count(walk_all) == 0);
    CHECK(steps == 2 * first);
}

TEST_CASE("AutoHet device grouping: no allocation per search node once warm") {
    // 192 units of A100 / H800 / H20 at TP 1 (the "[autohet]" benchmark's pool: datasheet
    // powers, two units per group for memory). A warm solve allocates for the incumbents it
    // keeps and the grouping it returns (a vector per group), nothing per node: a per-node
    // allocation would count in the hundreds of thousands.
    grouping_problem in;
    in.classes = {{96, 312, 80}, {48, 989, 80}, {48, 148, 96}};
    in.min_memory = 150;
    in.microbatches.total = 512;
    auto any = [](std::span<const int>) { return true; };
    grouping_solver<> solver;
    REQUIRE(solver.solve(in, any));
    std::optional<device_grouping> g;
    const std::size_t n = count([&] { g = solver.solve(in, any); });
    REQUIRE(g);
    CHECK(solver.stats.nodes > 300'000);
    CHECK(n < 1'000);
}
