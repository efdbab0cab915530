// What the stage solvers charge a stage (search/solve/stage_pricer.hpp): where no real zone
// behind H6's merged cells can hold a stage, its ring's price is at least the floors of a ring
// across real zones, time and egress, and those floors are below what the simulator charges the
// stage in every layout of it over the real zones.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "../random_pool.hpp"
#include "../support.hpp"
#include "hetplan/planners/sailor.hpp"
#include "hetplan/search/solve/stage_pricer.hpp"

using namespace hetplan;
using namespace hetplan::search;

namespace {

/// Every way to spread `D` replicas over the cells whose type `choice` uses, each cell holding at
/// most `room(cell)` replicas (depth-first, cell by cell).
template <class Room, class Visit>
void each_composition(const cell_set& cells, const tp_choice& choice, int D, const Room& room, const Visit& visit) {
    composition c;
    c.tp = choice.tp;
    auto rec = [&](auto& self, std::size_t q, int left) -> void {
        if (q == cells.cells.size()) {
            if (left == 0) visit(c);
            return;
        }
        const int tp = choice.tp[cells.cells[q].type];
        const int most = tp == 0 ? 0 : std::min(left, room(q, tp));
        for (int n = 0; n <= most; ++n) {
            c.n[q] = static_cast<std::uint16_t>(n);
            self(self, q + 1, left - n);
        }
        c.n[q] = 0;
    };
    rec(rec, 0, D);
}

}  // namespace

TEST_CASE("stage pricer: a stage no real zone holds pays a ring across zones, time and egress, never more than the simulator charges (issue 15)") {
    // Random pools of two zones in one region (merged by H6) and a third in another; every
    // stage takes the same composition, P of them within the cells' GPUs, laid out over the
    // real zones as the planner lays them out (zone_layouts) and simulated.
    const simulator<> sim;
    const prune::all pruners{h2_memory_fit<>{}, h5_one_region{}};
    int spread = 0, held = 0, layouts = 0, paid = 0;
    for (unsigned seed = 1; seed <= 16; ++seed) {
        CAPTURE(seed);
        const test::random_pool w(seed, 3, 1, 17);
        const problem pb = w.pb();
        const sailor_domain d = make_sailor_domain(pb, h6_merge_zones{}, h1_tp_within_node{});
        const bool merged = std::ranges::any_of(d.cells.cells, [](const auto& c) { return c.zones.size() > 1; });
        pruners.begin(pb);
        stage_problem<prune::all<h2_memory_fit<>, h5_one_region>> sp;
        boost::hana::tuple<> hooks;
        stage_pricer<sailor_time_model> price;
        for (int P = 1; P <= std::min(3, pb.model.num_layers()); ++P) {
            const auto part = even_partition(pb.model.num_layers(), P);
            const auto times = time_stages(pb, d.cells, part, 1, d.tps, sailor_time_model{}, {}, schedule_kind::one_f_one_b);
            for (int D = 2; D <= 5; ++D) {
                build_stage_problem(sp, pb, d.cells, part, 1, D, times, pruners, tp_level{}, {}, hooks);
                make_instance_bound(sp.bound, sp, sailor_time_model{});
                price.begin(sp, true);
                // Typings every stage may take (H2 keeps per stage what fits its memory).
                for (const tp_choice& choice : sp.menus()[0].choices) {
                    const bool everywhere = std::ranges::all_of(sp.menus(), [&](const stage_menu& m) {
                        return std::ranges::any_of(m.choices, [&](const tp_choice& o) { return o.tp == choice.tp; });
                    });
                    if (!everywhere) continue;
                    auto room = [&](std::size_t q, int tp) { return d.cells.cells[q].capacity / (tp * P); };
                    each_composition(d.cells, choice, D, room, [&](const composition& c) {
                        const std::vector<composition> stages(static_cast<std::size_t>(P), c);
                        std::vector<double> floor(static_cast<std::size_t>(P));
                        double egress = 0;  // the stages' rings' egress floors, summed
                        for (int s = 0; s < P; ++s) {
                            const ring_price r = price.stage_sync(sp, s, c);
                            CHECK(r.time >= r.spread);
                            CHECK(r.egress >= r.spread_egress);
                            floor[static_cast<std::size_t>(s)] = r.spread;
                            egress += r.spread_egress;
                        }
                        if (egress > 0) ++paid;
                        if (floor[0] > 0) ++spread;
                        else if (merged) ++held;
                        if (!merged) CHECK(floor[0] == 0);
                        for (const plan& pl : zone_layouts(sp, stages)) {
                            const estimate e = sim.run(pb, pl);
                            ++layouts;
                            for (const stage_time& st : e.time.stages) CHECK(st.sync.value >= floor[st.stage] * (1 - 1e-9));
                            CHECK(e.money.communication.value >= egress * (1 - 1e-9));
                        }
                    });
                }
            }
        }
    }
    MESSAGE(spread << " compositions no zone holds (" << paid << " with egress), " << held << " over merged cells that one holds; " << layouts << " layouts simulated");
    CHECK(spread > 0);
    CHECK(paid > 0);
    CHECK(held > 0);
}
