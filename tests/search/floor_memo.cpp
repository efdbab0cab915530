// The memos of Sailor's transfer floors (search/bound/floor_memo.hpp): interned endpoint sets,
// the direct-mapped seconds table, the flat hash table (search/memo.hpp) against std::map, the sync floor memo against the model's own floor, and
// instance floors (and stage menus) built with memos warmed by other instances against those built
// afresh.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "../random_pool.hpp"
#include "../support.hpp"
#include "hetplan/planners/sailor.hpp"
#include "hetplan/search/bound/floor_memo.hpp"
#include "hetplan/search/memo.hpp"

using namespace hetplan;
using namespace hetplan::search;

namespace {

std::vector<endpoint> random_set(test::xorshift& gen) {
    std::vector<endpoint> s(static_cast<std::size_t>(gen.below(6)));
    for (auto& e : s) e = {zone_id{static_cast<std::size_t>(gen.below(3))}, gpu_type_id{static_cast<std::size_t>(gen.below(3))}, 1 << gen.below(3)};
    return s;
}

}  // namespace

TEST_CASE("endpoint_sets: one id per sequence, kept through growth") {
    endpoint_sets sets;
    test::xorshift gen(7);
    std::vector<std::vector<endpoint>> seen;
    std::vector<std::uint32_t> ids;
    for (int k = 0; k < 3000; ++k) {
        auto s = random_set(gen);
        const std::uint32_t id = sets.intern(s);
        REQUIRE(id != endpoint_sets::none);
        CHECK(std::ranges::equal(sets.at(id), s));
        const auto same = std::ranges::find(seen, s);
        if (same == seen.end()) {
            CHECK(id == seen.size());  // new sequences get the next id
            seen.push_back(s), ids.push_back(id);
        } else {
            CHECK(id == ids[static_cast<std::size_t>(same - seen.begin())]);
        }
    }
    CHECK(sets.size() == seen.size());
    CHECK(seen.size() > 500);  // the table grew several times
    for (std::size_t i = 0; i < seen.size(); ++i) CHECK(sets.intern(seen[i]) == ids[i]);
    // Order matters: a floor over a ring depends on it for some models.
    const std::vector<endpoint> ab{{zone_id{0}, gpu_type_id{0}, 1}, {zone_id{1}, gpu_type_id{0}, 1}};
    const std::vector<endpoint> ba{ab[1], ab[0]};
    CHECK(sets.intern(ab) != sets.intern(ba));
    sets.clear();
    CHECK(sets.size() == 0);
    CHECK(sets.intern(ba) == 0);
}

TEST_CASE("seconds_memo: a hit is the value priced for that key, on every collision") {
    seconds_memo memo(4);  // 16 slots for 200 keys: most lookups collide
    int priced = 0;
    auto value = [](std::uint64_t key, double bytes) { return double(key) * 1e-3 + bytes; };
    for (int round = 0; round < 3; ++round)
        for (std::uint64_t key = 0; key < 100; ++key)
            for (double bytes : {1.0, 2.5}) {
                const double v = memo(key, bytes, [&] {
                    ++priced;
                    return value(key, bytes);
                });
                CHECK(v == value(key, bytes));
            }
    CHECK(priced > 200);  // collisions re-priced
    priced = 0;
    CHECK(memo(5, 1.0, [&] { return ++priced, value(5, 1.0); }) == value(5, 1.0));
    CHECK(memo(5, 1.0, [&] { return ++priced, -1.0; }) == value(5, 1.0));  // kept: not priced again
    CHECK(priced <= 1);
}

namespace {
// Fifteen hash values for thousands of keys: most probes pass slots that hold other keys with the
// same hash.
struct crowded_hash {
    std::size_t operator()(std::uint64_t k) const { return std::size_t((k % 3) << 32 | (k % 5)); }
};
}  // namespace

TEST_CASE("flat_memo: a key finds its own value through equal hashes, growth and clears") {
    flat_memo<std::uint64_t, std::uint64_t, crowded_hash> memo(16);
    std::map<std::uint64_t, std::uint64_t> want;
    test::xorshift gen(7);
    for (int round = 0; round < 4; ++round) {
        const std::uint64_t* first = nullptr;  // a value's address holds until clear()
        std::uint64_t first_key = 0;
        for (int n = 0; n < 300 + 1000 * round; ++n) {
            const std::uint64_t k = gen.next() % std::uint64_t(1000 + 1500 * round);  // later rounds: entries over several blocks
            if (std::uint64_t* v = memo.find(k)) {
                REQUIRE(want.count(k) == 1);
                CHECK(*v == want[k]);
            } else {
                REQUIRE(want.count(k) == 0);
                want[k] = k * 31 + std::uint64_t(round);
                const std::uint64_t* added = memo.insert(k, want[k]);
                if (first == nullptr) first = added, first_key = k;
            }
        }
        CHECK(memo.find(first_key) == first);
        CHECK(memo.size() == want.size());
        for (const auto& [k, v] : want) {
            const std::uint64_t* got = memo.find(k);
            REQUIRE(got != nullptr);
            CHECK(*got == v);
        }
        CHECK(memo.capacity() >= 2 * memo.size());  // grown from 16 slots, at most half full
        memo.clear();
        want.clear();
        CHECK(memo.size() == 0);
        CHECK(memo.find(0) == nullptr);
    }
}

TEST_CASE("sync_floor_memo gives the time model's own floor") {
    const test::random_pool w(3, 3, 1, 5);
    const problem pb = w.pb();
    const sailor_time_model tm;
    sync_floor_memo memo;
    test::xorshift gen(11);
    std::vector<std::vector<endpoint>> sets;
    for (int k = 0; k < 12; ++k) {
        std::vector<endpoint> s;
        for (int j = 0, n = 1 + gen.below(4); j < n; ++j)
            s.push_back({zone_id{static_cast<std::size_t>(gen.below(static_cast<int>(pb.hw.zones.size())))},
                         gpu_type_id{static_cast<std::size_t>(gen.below(static_cast<int>(pb.hw.gpus.size())))}, 1});
        sets.push_back(s);
    }
    for (int k = 0; k < 2000; ++k) {  // repeats of few keys: mostly hits
        const auto& s = sets[static_cast<std::size_t>(gen.below(12))];
        const int n = 2 + gen.below(6);
        const bytes size{1e6 * (1 + gen.below(3))};
        CHECK(memo(tm, pb, s, n, size) == sync_floor_of(tm, pb, s, n, size));
    }
}

TEST_CASE("instance floors: memos and menus kept from other instances give what a fresh build gives") {
    std::array<int, 3> zone_compared{};  // zone_floor's boundaries, zone_packing_floor's, packed floors
    for (unsigned seed = 1, worlds = 0; worlds < 4; ++seed) {
        CAPTURE(seed);
        test::random_pool w(seed, 4, 1, 23);
        if (w.hw.zones.size() < 2) continue;  // transfers between zones: the memos' keys matter
        ++worlds;
        w.hw.network.set_zone_default(zone_id{1}, zone_id{0}, alpha_beta_link{seconds{1e-6}, bytes_per_second{1e11}});
        const problem pb = w.pb();
        const sailor_domain d = make_sailor_domain(pb, h6_merge_zones{}, h1_tp_within_node{});
        const prune::all pruners{h2_memory_fit<>{}, h5_one_region{}};
        pruners.begin(pb);
        const sailor_time_model tm;
        stage_problem<prune::all<h2_memory_fit<>, h5_one_region>> warm;
        boost::hana::tuple<> hooks;
        int compared = 0;
        for (int mbs : {1, 2})
            for (int P = 1; P <= std::min(4, pb.model.num_layers()); ++P) {
                const auto part = even_partition(pb.model.num_layers(), P);
                const auto times = time_stages(pb, d.cells, part, mbs, d.tps, tm, {}, schedule_kind::one_f_one_b);
                for (int D = 1; D <= 6; ++D) {
                    build_stage_problem(warm, pb, d.cells, part, mbs, D, times, pruners, tp_level{}, {}, hooks);
                    make_instance_bound(warm.bound, warm, tm);
                    stage_problem<prune::all<h2_memory_fit<>, h5_one_region>> fresh;
                    build_stage_problem(fresh, pb, d.cells, part, mbs, D, times, pruners, tp_level{}, {}, hooks);
                    make_instance_bound(fresh.bound, fresh, tm);
                    CAPTURE(mbs);
                    CAPTURE(P);
                    CAPTURE(D);
                    REQUIRE(warm.bound.feasible() == fresh.bound.feasible());
                    if (!fresh.bound.feasible()) continue;
                    ++compared;
                    CHECK(warm.bound.straggler == fresh.bound.straggler);
                    CHECK(warm.bound.sum == fresh.bound.sum);
                    // The zone floors' memos (zone_floor's by group, zone_packing_floor's by real zone).
                    CHECK(warm.bound.zoned == fresh.bound.zoned);
                    CHECK(warm.bound.packed == fresh.bound.packed);
                    CHECK(warm.bound.zoned_per_replica == fresh.bound.zoned_per_replica);
                    if (fresh.bound.groups >= 2) {
                        CHECK(warm.bound.cross_fwd == fresh.bound.cross_fwd);
                        CHECK(warm.bound.cross_bwd == fresh.bound.cross_bwd);
                        zone_compared[0] += 1;
                    }
                    if (fresh.bound.zone_fwd.size() == static_cast<std::size_t>(P)) {  // the packing floor priced real zones
                        CHECK(warm.bound.zone_fwd == fresh.bound.zone_fwd);
                        CHECK(warm.bound.zone_bwd == fresh.bound.zone_bwd);
                        zone_compared[1] += 1;
                    }
                    zone_compared[2] += fresh.bound.packed > 0 ? 1 : 0;
                    for (std::size_t i = 0; i < static_cast<std::size_t>(P); ++i) {
                        CHECK(warm.bound.stages[i].p2p_in == fresh.bound.stages[i].p2p_in);
                        CHECK(warm.bound.stages[i].p2p_out == fresh.bound.stages[i].p2p_out);
                        CHECK(warm.bound.stages[i].sync == fresh.bound.stages[i].sync);
                        CHECK(warm.bound.stages[i].compute == fresh.bound.stages[i].compute);
                        CHECK(warm.bound.stages[i].update == fresh.bound.stages[i].update);
                        CHECK(warm.bound.stages[i].rate == fresh.bound.stages[i].rate);
                        // A menu kept from an earlier instance is the one built afresh.
                        const auto& a = warm.stages[i].choices;
                        const auto& c = fresh.stages[i].choices;
                        REQUIRE(a.size() == c.size());
                        for (std::size_t k = 0; k < a.size(); ++k) {
                            CHECK(a[k].tp == c[k].tp);
                            CHECK(a[k].types == c[k].types);
                            CHECK(a[k].compute == c[k].compute);
                            CHECK(a[k].update == c[k].update);
                        }
                    }
                }
            }
        CHECK(compared > 10);
    }
    MESSAGE("zone floors compared warm against fresh: " << zone_compared[0] << " with zone groups, " << zone_compared[1] << " over real zones, "
                                                     << zone_compared[2] << " packed floors");
}

TEST_CASE("instance floors with an `enough`: the full floor where it is not enough, else a floor past it") {
    // make_instance_bound's `enough` (the Sailor planner's cut-off) lets the zone floor stop
    // raising a crossing's case once it is enough. The floor must then be the full one where
    // the full one is not enough, and enough (and still at most the full one) where it is.
    int exact = 0, cut_short = 0;
    for (unsigned seed = 1, worlds = 0; worlds < 4; ++seed) {
        CAPTURE(seed);
        test::random_pool w(seed, 4, 1, 23);
        if (w.hw.zones.size() < 2) continue;
        ++worlds;
        const problem pb = w.pb();
        const sailor_domain d = make_sailor_domain(pb, h6_merge_zones{}, h1_tp_within_node{});
        const prune::all pruners{h2_memory_fit<>{}, h5_one_region{}};
        pruners.begin(pb);
        const sailor_time_model tm;
        using instance = stage_problem<prune::all<h2_memory_fit<>, h5_one_region>>;
        instance full, early;
        boost::hana::tuple<> hooks;
        for (int mbs : {1, 2})
            for (int P = 2; P <= std::min(6, pb.model.num_layers()); ++P) {
                const auto part = even_partition(pb.model.num_layers(), P);
                const auto times = time_stages(pb, d.cells, part, mbs, d.tps, tm, {}, schedule_kind::one_f_one_b);
                for (int D = 1; D <= 8; ++D) {
                    build_stage_problem(full, pb, d.cells, part, mbs, D, times, pruners, tp_level{}, {}, hooks);
                    make_instance_bound(full.bound, full, tm);
                    if (!full.bound.feasible() || full.bound.groups < 2) continue;
                    const double whole = full.bound.iteration(full.per_replica);
                    if (!std::isfinite(whole)) continue;  // no placement H5 allows (tests/search/zone_floor.cpp)
                    for (double below : {0.0, 0.001, 0.01, 0.05, 0.2}) {
                        CAPTURE(mbs);
                        CAPTURE(P);
                        CAPTURE(D);
                        CAPTURE(below);
                        const double at = whole * (1 - below);  // enough: a floor above it
                        build_stage_problem(early, pb, d.cells, part, mbs, D, times, pruners, tp_level{}, {}, hooks);
                        make_instance_bound(early.bound, early, tm, true, [at](double iteration) { return iteration > at; });
                        const double got = early.bound.iteration(early.per_replica);
                        CHECK(got <= whole);
                        if (below == 0.0) {
                            CHECK(got == whole);  // not enough: the full floor
                            ++exact;
                        } else {
                            CHECK(got > at);
                            cut_short += got < whole ? 1 : 0;
                        }
                    }
                }
            }
    }
    MESSAGE("floors with zone groups: " << exact << " compared at the full floor; " << cut_short << " cut short past an enough below it");
    CHECK(exact > 20);
    CHECK(cut_short > 0);  // the early stop happens on these pools
}

TEST_CASE("Sailor's sync floor over one endpoint per zone equals the floor over every pair") {
    for (bool endpoint_link : {false, true}) {
        CAPTURE(endpoint_link);
        unsigned seed = 5;
        while (test::random_pool(seed, 4, 1, 31).hw.zones.size() < 2) ++seed;
        test::random_pool w(seed, 4, 1, 31);
        // One direction between two zones faster than any link inside a zone: the floor is that
        // cross-zone pair's ring, which a per-zone shortcut must not lose.
        w.hw.network.set_zone_default(zone_id{0}, zone_id{1}, alpha_beta_link{seconds{1e-6}, bytes_per_second{1e11}});
        if (endpoint_link)  // a link for one (zone, GPU type, TP) pair: zones alone no longer decide
            w.hw.network.set_link({zone_id{0}, gpu_type_id{0}, 1}, {zone_id{0}, gpu_type_id{1}, 1}, alpha_beta_link{seconds{1e-6}, bytes_per_second{1e12}});
        const problem pb = w.pb();
        REQUIRE(pb.hw.network.has_endpoint_links() == endpoint_link);
        const sailor_time_model tm;
        test::xorshift gen(13);
        for (int k = 0; k < 300; ++k) {
            std::vector<endpoint> s;
            for (int j = 0, n = 1 + gen.below(8); j < n; ++j)
                s.push_back({zone_id{static_cast<std::size_t>(gen.below(static_cast<int>(pb.hw.zones.size())))},
                             gpu_type_id{static_cast<std::size_t>(gen.below(static_cast<int>(pb.hw.gpus.size())))}, 1 << gen.below(2)});
            const int n = 2 + gen.below(8);
            const bytes size{1e5 * (1 + gen.below(50))};
            seconds every = seconds::infinity();
            for (const endpoint& x : s)
                for (const endpoint& y : s)
                    if (const auto* l = pb.hw.network.find(x, y)) every = min(every, collective::bucketed_ring_all_reduce(n, size, tm.bucket, *l));
            CHECK(tm.sync_floor(pb, s, n, size).value == (is_finite(every) ? every.value : 0.0));
        }
    }
}
