// The zone floor (search/bound/instance_floors.hpp, zone_floor) where the pruners keep a stage's
// replicas in one region (Sailor's H5): with H6 each region is one zone group, so no case of the
// floor may put one stage in two groups. The floors stay at or below what the solver and the
// simulator charge the instance's best solution, with H5 and without it (where a stage may span
// the groups and the floor must keep those cases).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "../layouts.hpp"
#include "../random_pool.hpp"
#include "../support.hpp"
#include "hetplan/planners/sailor.hpp"
#include "hetplan/search/solve/stage_dp.hpp"

using namespace hetplan;
using namespace hetplan::search;

namespace {

struct floors_seen {
    int instances = 0, raised = 0, closed = 0;
};

/// Every instance of P <= 4 stages and D <= 4 replicas: the floor of `sp` (its pruners) at or
/// below the stage DP's price of its best solution (the DP without floors), and the floor with
/// the packing of real zones at or below the simulator's price of that solution's layouts; an
/// infinite floor only where the DP finds no solution. `other`: the same instance
/// under other pruners, whose floor is compared (`raised` counts where `sp`'s is higher).
template <class Pr, class Other>
void check_floors(const problem& pb, const sailor_domain& d, const Pr& pruners, const Other& other, floors_seen& seen) {
    const simulator<> sim;
    stage_dp<> dp(sailor_time_model{}, false);  // no floors: the reference owes the bound nothing
    dp.set_memory_limit(std::size_t{1} << 20);
    stage_problem<Pr> sp;
    stage_problem<Other> op;
    boost::hana::tuple<> hooks;
    for (int P = 1; P <= std::min(4, pb.model.num_layers()); ++P) {
        const auto part = even_partition(pb.model.num_layers(), P);
        const auto times = time_stages(pb, d.cells, part, 1, d.tps, sailor_time_model{}, {}, schedule_kind::one_f_one_b);
        for (int D = 1; D <= 4; ++D) {
            CAPTURE(P);
            CAPTURE(D);
            build_stage_problem(sp, pb, d.cells, part, 1, D, times, pruners, tp_level{}, {}, hooks);
            build_stage_problem(op, pb, d.cells, part, 1, D, times, other, tp_level{}, {}, hooks);
            sp.exact_boundaries = op.exact_boundaries = false;  // the planner's default: the patterns solve it
            make_instance_bound(sp.bound, sp, sailor_time_model{});
            make_instance_bound(op.bound, op, sailor_time_model{});
            // Instances the DP cannot finish within its memory are left out (a limit in bytes,
            // not in time: the same instances on every machine).
            const auto gave_up = dp.stats().abandoned;
            const auto sol = dp.solve(pb, sp, max_throughput{}, {});
            if (dp.stats().abandoned != gave_up) continue;
            if (!std::isfinite(sp.bound.iteration(sp.per_replica))) {  // no placement: no plan
                CHECK_FALSE(sol);
                seen.closed += sol ? 0 : 1;
            }
            if (!sol) continue;
            ++seen.instances;
            instance_bound unpacked = sp.bound;
            unpacked.packed = 0;
            CHECK(unpacked.iteration(sp.per_replica) <= sol->terms.iteration * (1 + 1e-9));
            const double simulated = test::least_simulated_iteration(sim, pb, sp, sol->stages);
            CHECK(sp.bound.iteration(sp.per_replica) <= simulated * (1 + 1e-9));
            if (sp.bound.iteration(sp.per_replica) > op.bound.iteration(op.per_replica) * (1 + 1e-9)) ++seen.raised;
        }
    }
}

}  // namespace

TEST_CASE("zone floor: where H5 keeps each stage in one region no case spans two groups; the floors stay at or below the optimum (issue 15)") {
    // Random pools of three zones over two regions (r1: z0, z1; r2: z2), merged by H6 into two
    // groups; half of them with an extra node per cell.
    floors_seen h5, free;
    int pools = 0;
    for (unsigned seed = 1; seed <= 200 && pools < 60; ++seed) {
        CAPTURE(seed);
        const test::random_pool w(seed, 3, seed % 2, 7);
        if (w.hw.zones.size() < 3) continue;
        ++pools;
        const problem pb = w.pb();
        const sailor_domain d = make_sailor_domain(pb, h6_merge_zones{}, h1_tp_within_node{});
        const prune::all with_h5{h2_memory_fit<>{}, h5_one_region{}};
        const prune::all without{h2_memory_fit<>{}};
        with_h5.begin(pb);
        without.begin(pb);
        check_floors(pb, d, with_h5, without, h5);
        check_floors(pb, d, without, with_h5, free);  // stages may span the regions: the floors keep those cases
    }
    MESSAGE(pools << " pools; with H5 " << h5.instances << " instances, " << h5.raised << " floors above those without it, " << h5.closed
                  << " with no placement; without H5 " << free.instances << " instances");
    CHECK(pools >= 8);
    CHECK(h5.raised > 0);
    CHECK(free.raised == 0);  // keeping a stage in one region never lowers a floor
    CHECK(free.instances > h5.instances / 2);
}
