#include <doctest/doctest.h>

#include <functional>

#include "../support.hpp"
#include "hetplan/planners/cephalo.hpp"
#include "hetplan/planners/zorse.hpp"

using namespace hetplan;
using test::worker;

namespace {
plan one_stage(const test::small_world& w, int tp = 1) {
    plan pl;
    pipeline p;
    p.stages.push_back({{layer_range{0, 4}}, {worker(w.a, w.z1, tp, 2, 8, 0.5), worker(w.a, w.z1, tp, 2, 8, 0.5)}});
    pl.pipelines.push_back(p);
    return pl;
}
}  // namespace

TEST_CASE("validator accepts a sound plan and the built-in example") {
    const test::small_world w;
    CHECK(validate(w.pb(), one_stage(w), sailor_memory_model{}).ok());
    const auto ex = fixtures::default_example();
    const auto rep = validate(ex.as_problem(), ex.example_plan, sailor_memory_model{});
    CHECK_MESSAGE(rep.ok(), rep.summary());
}

TEST_CASE("validator reports every violation precisely") {
    const test::small_world w;
    SUBCASE("layer coverage") {
        plan pl = one_stage(w);
        pl.pipelines[0].stages[0].layers = {{0, 2}, {1, 3}};
        const auto rep = validate(w.pb(), pl, sailor_memory_model{});
        CHECK(rep.has(violation_kind::layer_coverage));
        CHECK(rep.summary().find("layer 1 is held by 2 stages") != std::string::npos);
        CHECK(rep.summary().find("layer 3 is held by no stage") != std::string::npos);
    }
    SUBCASE("batch conservation") {
        plan pl = one_stage(w);
        pl.pipelines[0].stages[0].workers[1].num_microbatches = 7;
        const auto rep = validate(w.pb(), pl, sailor_memory_model{});
        CHECK(rep.has(violation_kind::batch));
        CHECK(rep.summary().find("add up to 30 samples, the global batch is 32") != std::string::npos);
    }
    SUBCASE("stages of one pipeline disagree on the batch") {
        plan pl = one_stage(w);
        pl.pipelines[0].stages[0].layers = {{0, 2}};
        pl.pipelines[0].stages.push_back({{layer_range{2, 4}}, {worker(w.a, w.z1, 1, 2, 8)}});
        CHECK(validate(w.pb(), pl, sailor_memory_model{}).has(violation_kind::batch));
    }
    SUBCASE("GPUs beyond the pool") {
        plan pl = one_stage(w, 4);
        pl.pipelines[0].stages[0].workers.push_back(worker(w.a, w.z1, 4, 2, 8));
        pl.pipelines[0].stages[0].workers[0].num_microbatches = 4;
        pl.pipelines[0].stages[0].workers[1].num_microbatches = 4;
        const auto rep = validate(w.pb(), pl, sailor_memory_model{});
        CHECK(rep.has(violation_kind::capacity));
        CHECK(rep.summary().find("uses 12 A in r1-a, the pool offers 8") != std::string::npos);
    }
    SUBCASE("TP group larger than a node") {
        plan pl = one_stage(w, 8);
        CHECK(validate(w.pb(), pl, sailor_memory_model{}).has(violation_kind::tp_span));
    }
    SUBCASE("TP groups that do not pack into nodes") {
        test::small_world w6;
        w6.hw.pool.set(w6.a, w6.z1, 6);  // nodes of 4 + 2: two TP-3 groups fit in GPUs but not in nodes
        plan pl = one_stage(w6, 3);
        const auto rep = validate(w6.pb(), pl, sailor_memory_model{});
        CHECK(rep.has(violation_kind::tp_span));
        CHECK(!rep.has(violation_kind::capacity));
    }
    SUBCASE("empty stage and bad values") {
        plan pl = one_stage(w);
        pl.pipelines[0].stages.push_back({});
        pl.pipelines[0].stages[0].workers[0].tp = 0;
        const auto rep = validate(w.pb(), pl, sailor_memory_model{});
        CHECK(rep.has(violation_kind::empty));
        CHECK(rep.has(violation_kind::bad_value));
    }
    SUBCASE("ZeRO shares") {
        plan pl = one_stage(w);
        pl.memory.zero_stage = 2;
        pl.pipelines[0].stages[0].workers[0].state_share = 0.7;
        CHECK(validate(w.pb(), pl, sailor_memory_model{}).has(violation_kind::state_share));
    }
    SUBCASE("out of memory") {
        test::small_world big;
        for (auto& l : big.model.layers) l.params = 2e8;  // 4 x 2e8 x 24 B = 19.2 GB > 10 GB
        const auto rep = validate(big.pb(), one_stage(big), sailor_memory_model{});
        CHECK(rep.has(violation_kind::memory));
        CHECK(rep.summary().find("needs 21.") != std::string::npos);
    }
    SUBCASE("unknown GPU type id") {
        plan pl = one_stage(w);
        pl.pipelines[0].stages[0].workers[0].gpu = gpu_type_id{9};
        CHECK(validate(w.pb(), pl, sailor_memory_model{}).has(violation_kind::bad_reference));
    }
    SUBCASE("no pipeline") { CHECK(validate(w.pb(), plan{}, sailor_memory_model{}).has(violation_kind::empty)); }
}

TEST_CASE("what no model can price is refused before any model runs, by every simulator (issue 16)") {
    // Each case crashed `hetplan simulate` before: SIGFPE (a stage without workers), SIGSEGV or
    // a raw vector::_M_range_check (a layer range past the model's end, [0, 0)), signed overflow
    // (65536 x 65536 samples), a node the zone does not have accepted as valid.
    const auto ex = fixtures::default_example();
    const problem pb = ex.as_problem();
    REQUIRE(validate_structure(pb, ex.example_plan).priceable);
    const int L = pb.model.num_layers();
    struct mutation {
        const char* name;
        std::function<void(plan&)> apply;
        const char* says;
    };
    const std::vector<mutation> cases{
        {"stage without workers", [](plan& pl) { pl.pipelines[0].stages[0].workers.clear(); }, "has no worker group"},
        {"layers past the end", [L](plan& pl) { pl.pipelines[0].stages.back().layers = {{L - 2, L + 5}}; }, "outside the model's"},
        {"empty layer range", [](plan& pl) { pl.pipelines[0].stages[0].layers = {{0, 0}}; }, "layer range [0, 0)"},
        {"batch overflow", [](plan& pl) { for (auto& w : pl.pipelines[0].stages[0].workers) w.microbatch_size = w.num_microbatches = 65536; }, "exceeds the global batch"},
        {"node out of range", [](plan& pl) { pl.pipelines[0].stages[0].workers[0].node = 1000000; }, "node 1000000 of"},
        {"state share out of range", [](plan& pl) { pl.pipelines[0].stages[0].workers[0].state_share = 5; }, "is not in [0, 1]"},
        {"unknown GPU type", [](plan& pl) { pl.pipelines[0].stages[0].workers[0].gpu = gpu_type_id{99}; }, "does not have"},
    };
    for (const mutation& m : cases) {
        CAPTURE(m.name);
        plan pl = ex.example_plan;
        m.apply(pl);
        const validation_report rep = validate_structure(pb, pl);
        CHECK_FALSE(rep.priceable);
        CHECK_FALSE(rep.ok());
        CHECK_MESSAGE(rep.summary().find(m.says) != std::string::npos, rep.summary());
        CHECK_FALSE(validate(pb, pl, sailor_memory_model{}).ok());
        auto refused = [&](const auto& sim) {
            try {
                (void)sim.run(pb, pl);
            } catch (const input_error& e) {
                return std::string(e.what()).find(m.says) != std::string::npos;
            }
            return false;
        };
        CHECK(refused(simulator<>{}));
        CHECK(refused(zorse_simulator{}));
        CHECK(refused(cephalo_simulator{}));
    }
}
