// Laws of the Sailor planner as property tests on random instances (issue 15): budgets and
// pools change the answer only in the direction they should, and every documented option
// combination plans without throwing.
#include <doctest/doctest.h>

#include <optional>

#include "../plan_checks.hpp"
#include "../support.hpp"
#include "hetplan/planners/sailor.hpp"

using namespace hetplan;

namespace {

/// 2-3 GPU types over 1-3 zones (the third in a second region), 4-8 layers, global batch 16
/// or 32, random prices, memories, speeds and links. `extra` adds one node per (type, zone).
struct law_world {
    cluster hw;
    model_spec model;
    job_spec job;
    profile_table profiles;

    law_world(unsigned seed, int extra) {
        test::xorshift gen(seed * 2654435761u + 777);
        auto rnd = [&](double lo, double hi) { return gen.between(lo, hi); };
        const int T = 2 + gen.below(2), Z = 1 + gen.below(3);
        const char* names[] = {"A", "B", "C"};
        for (int t = 0; t < T; ++t) {
            gpu_spec g;
            g.type_name = names[t];
            g.memory_capacity = gigabytes(rnd(2.4, 6));
            g.price = usd_per_hour{rnd(1, 4)};
            hw.add_gpu(g, 2);
        }
        std::vector<zone_id> zones;
        for (int z = 0; z < Z; ++z) zones.push_back(hw.add_zone("z" + std::to_string(z), z < 2 ? "r1" : "r2"));
        for (int t = 0; t < T; ++t)
            for (zone_id z : zones) hw.pool.set(gpu_type_id{static_cast<std::size_t>(t)}, z, 2 * gen.below(4) + 2 * extra);
        for (zone_id a : zones)
            for (zone_id b : zones) {
                hw.network.set_zone_default(a, b, alpha_beta_link{seconds{rnd(1e-5, 1e-3)}, bytes_per_second{a == b ? rnd(5e9, 2e10) : rnd(1e8, 1e9)}});
                if (a != b) hw.network.set_egress_price(a, b, usd_per_gigabyte(rnd(0.01, 0.08)));
            }
        model.name = "random";
        const int L = 4 + gen.below(5);
        for (int i = 0; i < L; ++i) {
            layer_spec l;
            l.name = "l" + std::to_string(i);
            l.params = rnd(2e6, 8e6);
            l.act_output_elems = l.act_input_elems = rnd(1e5, 1e6);
            l.act_mem_elems = rnd(1e6, 4e6);
            l.flops_fwd = 1e9;
            model.layers.push_back(l);
        }
        job.global_batch = 16 << gen.below(2);
        job.sequence_length = 16;
        for (int t = 0; t < T; ++t) {
            const double speed = t == 0 ? 1.0 : rnd(1.2, 3.0);
            for (int tp : {1, 2}) {
                profile_curve c;
                for (int mbs : {1, 2}) {
                    std::vector<layer_timing> v;
                    for (int l = 0; l < L; ++l) {
                        const double f = rnd(1, 3) * speed * mbs / (tp == 1 ? 1.0 : rnd(1.3, 1.9));
                        v.push_back({milliseconds(f), milliseconds(2 * f), milliseconds(rnd(0.1, 1))});
                    }
                    c.add_point(mbs, v);
                }
                profiles.set_curve(names[t], tp, c);
            }
        }
    }
    [[nodiscard]] problem pb() const { return {hw, model, job, profiles}; }
};

template <class P>
plan_result fastest(P planner, const problem& pb, std::optional<double> budget) {
    return planner.plan(pb, plan_request<max_throughput>{max_throughput{{budget, {}}}});
}

constexpr double tie = 1e-3;  // the ranked list's tie band (search::tie_tolerance)

}  // namespace

TEST_CASE("laws: a budget at or above the unconstrained plan's cost keeps its throughput; more budget never lowers it") {
    // Before: in 14 of 40 of these instances a budget equal to the unconstrained plan's cost
    // returned a slower plan (the DP admitted by its own, merged-zone prices).
    for (unsigned seed = 1; seed <= 24; ++seed) {
        CAPTURE(seed);
        const law_world w(seed, 0);
        const problem pb = w.pb();
        const auto free = fastest(sailor_planner<>(), pb, std::nullopt);
        if (!free.best()) continue;
        const double thr = free.best()->throughput(), usd = free.best()->cost().value;
        for (double f : {1.0, 1.5}) {
            const auto r = fastest(sailor_planner<>(), pb, usd * f);
            REQUIRE(r.best());
            CHECK(r.best()->throughput() >= thr * (1 - tie));
            CHECK(r.best()->cost().value <= usd * f);
            test::check_all_valid(pb, r);
        }
        std::optional<double> last;
        for (double f : {0.6, 0.8, 0.9}) {
            const auto r = fastest(sailor_planner<>(), pb, usd * f);
            if (!r.best()) {
                CHECK_FALSE(last);  // a plan within a smaller budget is within this one
                continue;
            }
            CHECK(r.best()->cost().value <= usd * f);
            if (last) CHECK(r.best()->throughput() >= *last * (1 - tie));
            last = r.best()->throughput();
        }
        // The same law for cost: a throughput floor the unconstrained cheapest plan meets keeps it.
        const auto cheap = sailor_planner<>().plan(pb, plan_request<min_cost>{});
        REQUIRE(cheap.best());
        const auto floored = sailor_planner<>().plan(pb, plan_request<min_cost>{min_cost{{{}, cheap.best()->throughput()}}});
        REQUIRE(floored.best());
        CHECK(floored.best()->cost().value <= cheap.best()->cost().value * (1 + tie));
    }
}

TEST_CASE("laws: more GPUs never lower throughput (zones kept apart)") {
    // With H6 (zones merged, the default) the DP prices a region's zones by its first zone's
    // links and this law failed in 4 of 200 such instances (docs/reproduction.md); with zones
    // kept apart the DP prices the real links.
    for (unsigned seed = 1; seed <= 16; ++seed) {
        CAPTURE(seed);
        const law_world small(seed, 0), big(seed, 1);
        auto keep = sailor_planner<>().with_zones(search::keep_zones{});
        const auto a = fastest(keep, small.pb(), std::nullopt);
        if (!a.best()) continue;
        const auto b = fastest(keep, big.pb(), std::nullopt);
        REQUIRE(b.best());
        CHECK(b.best()->throughput() >= a.best()->throughput() * (1 - tie));
    }
}

TEST_CASE("laws: every documented option combination plans without throwing, and its plans are valid") {
    for (unsigned seed : {2u, 5u}) {
        const law_world w(seed, 0);
        const problem pb = w.pb();
        const auto probe = fastest(sailor_planner<>(), pb, std::nullopt);
        REQUIRE(probe.best());
        const double usd = probe.best()->cost().value, thr = probe.best()->throughput();
        int combos = 0;
        for (int exact : {0, 1})
            for (int objective = 0; objective < 4; ++objective) {
                sailor_options o;
                o.exact_boundaries = exact == 1;
                auto go = [&](auto planner) {
                    CAPTURE(seed);
                    CAPTURE(exact);
                    CAPTURE(objective);
                    CAPTURE(combos);
                    ++combos;
                    plan_result r;
                    switch (objective) {
                        case 0: r = fastest(planner, pb, std::nullopt); break;
                        case 1: r = fastest(planner, pb, usd * 0.8); break;
                        case 2: r = planner.plan(pb, plan_request<min_cost>{}); break;
                        default: r = planner.plan(pb, plan_request<min_cost>{min_cost{{{}, thr * 0.7}}}); break;
                    }
                    test::check_all_valid(pb, r);
                };
                const sailor_planner<> base(o);
                go(base);
                go(base.with_zones(search::keep_zones{}));
                go(base.with_typing(search::free_tp{}));
                go(base.with_scan(search::exhaustive_walk{}));
                go(base.straightforward());
                go(base.with_pruners(search::prune::all{search::h2_memory_fit<sailor_memory_model>(base.models().memory)}));
                go(exact_sailor_planner(o));
            }
        CHECK(combos == 56);
    }
}
