// The `ranks` launch format (io/export_ranks.hpp) against the runner's own numbering
// (exec::layout_step) on every plan shape the execution tests run, and its groups on the AutoHet
// shape against a hand count.
#include <doctest/doctest.h>

#include <set>

#include "hetplan/exec/schedule.hpp"
#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/io/export_ranks.hpp"
#include "plan_shapes.hpp"

using namespace hetplan;
namespace shapes = hetplan::test::exec_shapes;

namespace {

struct world {
    cluster hw;
    model_spec model = make_transformer({"tiny", 4, 16, 4, 16, 4});  // embedding, 4 blocks, head: the shapes' 6 layers
    job_spec job;
    world() {
        hw.add_gpu(fixtures::a100_40(), 8);
        hw.add_zone("zone-a", "region-1");
        job.global_batch = 16;
        job.sequence_length = 4;
    }
};

std::vector<int> ints(const io::json& a) { return a.get<std::vector<int>>(); }

}  // namespace

TEST_CASE("exec_ranks: every rank's worker, first rank and first sample are the runner's, on every plan shape") {
    const world w;
    for (const plan& pl : {shapes::sailor_8(), shapes::autohet_8(), shapes::zorse_8(), shapes::fsdp_8()}) {
        const exec::step_layout lay = exec::layout_step(pl, w.model.num_layers());
        const io::json out = io::write_ranks(pl, w.hw, w.model, w.job);
        REQUIRE(out["world_size"].get<int>() == lay.world_size);
        REQUIRE(out["ranks"].size() == static_cast<std::size_t>(lay.world_size));
        CHECK(out["global_batch"].get<int>() == lay.global_batch);
        for (const exec::worker_slot& ws : lay.workers)
            for (int k = 0; k < ws.tp; ++k) {
                const io::json& r = out["ranks"][static_cast<std::size_t>(ws.first_rank + k)];
                CHECK(r["rank"].get<int>() == ws.first_rank + k);
                CHECK(r["pipeline"].get<int>() == ws.pipeline);
                CHECK(r["stage"].get<int>() == ws.stage);
                CHECK(r["worker"].get<int>() == ws.index);
                CHECK(r["tp_rank"].get<int>() == k);
                CHECK(r["first_sample"].get<int>() == ws.first_sample);
                CHECK(r["microbatch_size"].get<int>() == ws.microbatch_size);
                CHECK(r["microbatches"].get<int>() == ws.microbatches);
                CHECK(r["state_share"].get<double>() == ws.state_share);
                CHECK(ints(r["groups"]["tp"]).size() == static_cast<std::size_t>(ws.tp));
            }
        // Every layer of every rank is in exactly one of its gradient-sync pieces, and each
        // piece's group holds the rank itself.
        for (const io::json& r : out["ranks"]) {
            std::set<int> covered;
            for (const io::json& g : r["groups"]["gradient_sync"]) {
                const auto l = ints(g["layers"]);
                for (int x = l[0]; x < l[1]; ++x) CHECK(covered.insert(x).second);
                const auto members = ints(g["ranks"]);
                CHECK(std::find(members.begin(), members.end(), r["rank"].get<int>()) != members.end());
            }
            std::set<int> held;
            for (const io::json& l : r["layers"])
                for (int x = l[0].get<int>(); x < l[1].get<int>(); ++x) held.insert(x);
            CHECK(covered == held);
        }
    }
}

TEST_CASE("exec_ranks: read_ranks gives back the plan written, on every plan shape; out-of-order files are refused by entry") {
    const world w;
    for (const plan& pl : {shapes::sailor_8(), shapes::autohet_8(), shapes::zorse_8(), shapes::fsdp_8()}) {
        const io::json out = io::write_ranks(pl, w.hw, w.model, w.job);
        CHECK(io::read_ranks(io::cursor(out, "ranks.json"), w.hw) == pl);
    }
    io::json swapped = io::write_ranks(shapes::sailor_8(), w.hw, w.model, w.job);
    std::swap(swapped["ranks"][1], swapped["ranks"][2]);
    CHECK_THROWS_WITH_AS((void)io::read_ranks(io::cursor(swapped, "ranks.json"), w.hw), doctest::Contains("ranks.json: $.ranks[1].rank"), input_error);
    io::json torn = io::write_ranks(shapes::autohet_8(), w.hw, w.model, w.job);
    torn["ranks"][1]["tp_rank"] = 0;  // rank 1 should be TP rank 1 of rank 0's worker
    CHECK_THROWS_WITH_AS((void)io::read_ranks(io::cursor(torn, "ranks.json"), w.hw), doctest::Contains("expected TP rank 1"), input_error);
}

TEST_CASE("exec_ranks: ministages exchange activations both ways (the Zorse shape, by hand)") {
    // Stage 0 holds [0,2) and [3,5) on ranks 0-1 and 2-3; stage 1 holds [2,3) and [5,6) on ranks
    // 4-7. Stage 0 gets layer 2's output (for layer 3) from stage 1 and sends layers 1 and 4's
    // outputs to it; stage 1 gets layers 1 and 4's and sends layer 2's back; layer 5 is the last.
    const world w;
    const io::json out = io::write_ranks(shapes::zorse_8(), w.hw, w.model, w.job);
    for (int r : {0, 3}) {
        CHECK(ints(out["ranks"][static_cast<std::size_t>(r)]["groups"]["previous_stage"]) == std::vector<int>{4, 5, 6, 7});
        CHECK(ints(out["ranks"][static_cast<std::size_t>(r)]["groups"]["next_stage"]) == std::vector<int>{4, 5, 6, 7});
    }
    CHECK(ints(out["ranks"][4]["groups"]["previous_stage"]) == std::vector<int>{0, 1, 2, 3});
    CHECK(ints(out["ranks"][4]["groups"]["next_stage"]) == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("exec_ranks: the AutoHet shape's groups, counted by hand") {
    // Pipeline 0: [0,2) on ranks 0-1 (TP 2), [2,6) on ranks 2-3. Pipeline 1: [0,3) on rank 4,
    // [3,4) on rank 5, [4,6) on ranks 6-7. Gradients of a layer are summed over every rank
    // holding it, across both pipelines (AutoHet Observation 2).
    const world w;
    const io::json out = io::write_ranks(shapes::autohet_8(), w.hw, w.model, w.job);
    const io::json& r0 = out["ranks"][0];
    CHECK(ints(r0["groups"]["tp"]) == std::vector<int>{0, 1});
    CHECK(ints(r0["groups"]["next_stage"]) == std::vector<int>{2, 3});
    CHECK(r0["groups"]["previous_stage"].empty());
    REQUIRE(r0["groups"]["gradient_sync"].size() == 1);
    CHECK(ints(r0["groups"]["gradient_sync"][0]["ranks"]) == std::vector<int>{0, 1, 4});
    const io::json& sync2 = out["ranks"][2]["groups"]["gradient_sync"];
    REQUIRE(sync2.size() == 3);
    CHECK(ints(sync2[0]["layers"]) == std::vector<int>{2, 3});
    CHECK(ints(sync2[0]["ranks"]) == std::vector<int>{2, 3, 4});
    CHECK(ints(sync2[1]["layers"]) == std::vector<int>{3, 4});
    CHECK(ints(sync2[1]["ranks"]) == std::vector<int>{2, 3, 5});
    CHECK(ints(sync2[2]["layers"]) == std::vector<int>{4, 6});
    CHECK(ints(sync2[2]["ranks"]) == std::vector<int>{2, 3, 6, 7});
    const io::json& r5 = out["ranks"][5];
    CHECK(ints(r5["groups"]["previous_stage"]) == std::vector<int>{4});
    CHECK(ints(r5["groups"]["next_stage"]) == std::vector<int>{6, 7});
    CHECK(ints(r5["groups"]["stage"]) == std::vector<int>{5});
    CHECK(r5["gpu"] == "A100-40");
    CHECK(r5["zone"] == "zone-a");
    CHECK(r5["node"].is_null());
}
