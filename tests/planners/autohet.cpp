// AutoHet (AutoHet §III): the two groupings of §V-A.2 on fixtures written from the paper's text,
// valid and deterministic plans, the pieces it is made of, and the time model (Eq. 1).
#include <doctest/doctest.h>

#include "../support.hpp"
#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/io/plan_json.hpp"
#include "hetplan/planners/autohet.hpp"
#include "hetplan/planners/registry.hpp"
#include "hetplan/search/pipeline/layer_partition.hpp"

using namespace hetplan;

namespace {

/// LLaMA 6.7B as §V-A trains it (GPT-style blocks of hidden 4096; sequence 2048).
model_spec llama_6_7b() { return make_transformer({"LLaMA-6.7B", 32, 4096, 32, 32000, 2048}); }

/// A pool of `gpus` with one node per GPU type (§V: one GPU type per node), 400 Gb/s RoCE
/// between nodes (§V), and timings per (type, TP, microbatch): forward at `speed` x 0.4 of
/// A100's 312 TFLOP/s, backward twice the forward, TP t running at t x 0.95 (NVLink).
struct autohet_pool {
    cluster hw;
    model_spec model = llama_6_7b();
    job_spec job;
    profile_table profiles;
    problem pb() const { return {hw, model, job, profiles}; }

    autohet_pool(std::vector<std::tuple<gpu_spec, int, double>> gpus) {
        const zone_id z = hw.add_zone("cluster");
        hw.network.set_default(alpha_beta_link{seconds{5e-6}, gigabits_per_second(400)});
        job.global_batch = 64;
        job.sequence_length = 2048;
        job.prec = precision::fp16_mixed;
        job.optimizer = optimizer_kind::adam;
        for (auto& [spec, count, speed] : gpus) {
            const std::string name = spec.type_name;
            const gpu_type_id id = hw.add_gpu(spec, count);
            hw.pool.set(id, z, count);
            for (int tp : {1, 2, 4})
                for (int mbs : {1, 2, 4, 8}) {
                    std::vector<layer_timing> layers;
                    for (const auto& l : model.layers) {
                        const double fwd = l.flops_fwd * mbs / (312e12 * 0.4 * speed * tp * (tp > 1 ? 0.95 : 1.0));
                        layers.push_back({seconds{fwd}, seconds{2 * fwd}, seconds{l.params_at(tp) * 16 / 1.5e12}});
                    }
                    profiles.curve(name, tp).add_point(mbs, std::move(layers));
                }
        }
    }
};

bool holds(const plan& pl, std::size_t pipeline, const std::vector<std::string>& types, const cluster& hw) {
    const auto& st = pl.pipelines.at(pipeline).stages;
    if (st.size() != types.size()) return false;
    for (std::size_t s = 0; s < st.size(); ++s)
        if (st[s].workers.size() != 1 || hw.gpu(st[s].workers[0].gpu).type_name != types[s]) return false;
    return true;
}

}  // namespace

TEST_CASE("AutoHet: 4 x A100 + 2 x H800, LLaMA 6.7B (§V-A.2): TP 2, the H800 pair alone, the A100 pairs a 2-stage pipeline") {
    // H800 = 2 x A100 per GPU: the paper's measured ratio (§II-D), in the timings; datasheet
    // peaks (989 vs 312 TFLOP/s) give one 3-stage pipeline instead (tests/search/device_grouping.cpp).
    const autohet_pool in({{fixtures::a100_80(), 4, 1.0}, {fixtures::h800(), 2, 2.0}});
    autohet_planner<> tp2({.microbatch_sizes = {1}, .tp_degrees = {2}});
    const plan_result r = tp2.plan(in.pb());
    REQUIRE(r.plans.size() == 1);
    const plan& pl = r.plans[0].pl;
    CHECK(validate(in.pb(), pl, tp2.models().memory).ok());
    REQUIRE(pl.pipelines.size() == 2);
    const bool h800_first = holds(pl, 0, {"H800"}, in.hw);
    CHECK(holds(pl, h800_first ? 0 : 1, {"H800"}, in.hw));
    CHECK(holds(pl, h800_first ? 1 : 0, {"A100-80", "A100-80"}, in.hw));
    for (const auto& p : pl.pipelines)
        for (const auto& s : p.stages) CHECK(s.workers[0].tp == 2);

    // The whole search (TP 1 and 2, microbatches 1-8) keeps a plan at least as fast, valid.
    autohet_planner<> all;
    const plan_result best = all.plan(in.pb());
    REQUIRE(!best.plans.empty());
    CHECK(best.plans[0].est.time.iteration.value <= r.plans[0].est.time.iteration.value * (1 + 1e-9));
    CHECK(validate(in.pb(), best.plans[0].pl, all.models().memory).ok());
    MESSAGE("whole search: TP " << best.plans[0].pl.pipelines[0].stages[0].workers[0].tp << ", " << best.plans[0].pl.pipelines.size()
                                << " DP groups, " << best.plans[0].est.time.iteration.value << " s vs TP 2 alone " << r.plans[0].est.time.iteration.value << " s");
}

TEST_CASE("AutoHet: 1 x A100 + 4 x H20 (§V-A.2): {A100 + H20} and {3 x H20}, pipelines inside each") {
    // Datasheet FP16 peaks for both (312 and 148 TFLOP/s: H20 = 0.474 x A100); Eq. 1's one K for
    // every group (K = 8, our reading of Eq. 3; with the batch's microbatches shared, K = M / D,
    // one 5-stage pipeline scores higher: tests/search/device_grouping.cpp).
    const autohet_pool in({{fixtures::a100_80(), 1, 1.0}, {fixtures::h20(), 4, 148.0 / 312.0}});
    autohet_planner<> p({.microbatch_sizes = {1}, .grouping_microbatches = 8, .tp_degrees = {1}});
    const plan_result r = p.plan(in.pb());
    REQUIRE(r.plans.size() == 1);
    const plan& pl = r.plans[0].pl;
    CHECK(validate(in.pb(), pl, p.models().memory).ok());
    REQUIRE(pl.pipelines.size() == 2);
    const bool mixed_first = pl.pipelines[0].stages.size() == 2;
    // Lower-power GPUs take the earlier stages (§III-C): the H20 before the A100.
    CHECK(holds(pl, mixed_first ? 0 : 1, {"H20", "A100-80"}, in.hw));
    CHECK(holds(pl, mixed_first ? 1 : 0, {"H20", "H20", "H20"}, in.hw));
    // The layers follow the stages' speeds (Eq. 4): the A100 holds more than the H20 before it.
    const auto& mixed = pl.pipelines[mixed_first ? 0 : 1].stages;
    CHECK(mixed[1].num_layers() > mixed[0].num_layers());
}

TEST_CASE("AutoHet: plans are valid, deterministic, and priced by the planner's models") {
    const autohet_pool in({{fixtures::a100_80(), 8, 1.0}, {fixtures::h800(), 4, 2.0}, {fixtures::h20(), 4, 148.0 / 312.0}});
    autohet_planner<> p;
    const plan_result a = p.plan(in.pb(), plan_request<>{{}, 3});
    const plan_result b = p.plan(in.pb(), plan_request<>{{}, 3});
    REQUIRE(!a.plans.empty());
    REQUIRE(a.plans.size() == b.plans.size());
    for (std::size_t i = 0; i < a.plans.size(); ++i) {
        CHECK(io::write_plan(a.plans[i].pl, in.hw).dump() == io::write_plan(b.plans[i].pl, in.hw).dump());
        CHECK(validate(in.pb(), a.plans[i].pl, p.models().memory).ok());
        CHECK(p.models().run(in.pb(), a.plans[i].pl).time.iteration.value == a.plans[i].est.time.iteration.value);
        // Every GPU of the pool is in the plan (Eq. 3e).
        CHECK(a.plans[i].pl.total_gpus() == 16);
    }
    // Through the registry, as the command line reaches it.
    any_planner named = planner_named("autohet");
    CHECK(!named.plan(in.pb()).plans.empty());
}

TEST_CASE("AutoHet: valid TP degrees divide every node's GPU count (Alg. 1 line 2)") {
    // 5 x A100 + 3 x H800 (§V-A.2): odd counts per node, so TP 1 only.
    const autohet_pool odd({{fixtures::a100_80(), 5, 1.0}, {fixtures::h800(), 3, 2.0}});
    CHECK(autohet_planner<>::valid_tp_degrees(odd.pb()) == std::vector<int>{1});
    const autohet_pool even({{fixtures::a100_80(), 4, 1.0}, {fixtures::h800(), 2, 2.0}});
    CHECK(autohet_planner<>::valid_tp_degrees(even.pb()) == std::vector<int>{1, 2});
}

TEST_CASE("AutoHet: no plan says why") {
    autohet_pool in({{fixtures::a100_80(), 1, 1.0}});  // one 80 GB GPU cannot hold 6.7B x 16 bytes
    autohet_planner<> p;
    const plan_result r = p.plan(in.pb());
    CHECK(r.plans.empty());
    REQUIRE(!r.notes.empty());
    CHECK(r.notes.back().find("MIN_mem") != std::string::npos);
}

TEST_CASE("layer partition (Eq. 4): the exact min-max split against every split") {
    // Stage speeds 1, 2, 3 (time per layer 1/speed x layer weight); memory: at most `cap` layers.
    const std::vector<double> weight{3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
    const std::vector<double> speed{1, 2, 3};
    for (int cap : {10, 5, 4}) {
        auto time = [&](int i, int b, int e) {
            double t = 0;
            for (int l = b; l < e; ++l) t += weight[std::size_t(l)] / speed[std::size_t(i)];
            return t;
        };
        auto fits = [&](int, int b, int e) { return e - b <= cap; };
        const auto part = search::min_max_layer_partition(3, 10, time, fits);
        double best = 1e300;
        for (int x = 1; x < 10; ++x)
            for (int y = x + 1; y < 10; ++y)
                if (fits(0, 0, x) && fits(1, x, y) && fits(2, y, 10)) best = std::min(best, std::max({time(0, 0, x), time(1, x, y), time(2, y, 10)}));
        if (best == 1e300) {
            CHECK(!part);
            continue;
        }
        REQUIRE(part);
        CHECK(part->slowest == doctest::Approx(best));
        CHECK(part->bounds.front() == 0);
        CHECK(part->bounds.back() == 10);
    }
    CHECK(!search::min_max_layer_partition(4, 3, [](int, int, int) { return 1.0; }, [](int, int, int) { return true; }));
}

TEST_CASE("AutoHet time model (Eq. 1): Sailor's pipelines, one sync at the slowest link") {
    // Two pipelines of different depths over a fast and a slow link: T_sync is the whole
    // volume through the slow link; the pipeline term equals Sailor's.
    autohet_pool in({{fixtures::a100_80(), 2, 1.0}, {fixtures::h800(), 1, 2.0}});
    in.model = make_transformer({"small", 4, 1024, 16, 1000, 512});
    in.profiles = {};
    in.profiles.enable_analytical({});
    const gpu_type_id a100 = in.hw.gpu_id("A100-80"), h800 = in.hw.gpu_id("H800");
    in.hw.network.set_link(endpoint{zone_id{0}, h800, 1}, endpoint{zone_id{0}, a100, 1}, alpha_beta_link{seconds{0}, gigabits_per_second(8)});
    plan pl;
    pl.pipelines.push_back({{stage{{layer_range{0, 3}}, {worker_group{a100, zone_id{0}, 1, 1, 4, 1.0, 0}}},
                             stage{{layer_range{3, 6}}, {worker_group{a100, zone_id{0}, 1, 1, 4, 1.0, 0}}}}});
    pl.pipelines.push_back({{stage{{layer_range{0, 6}}, {worker_group{h800, zone_id{0}, 1, 1, 4, 1.0, 0}}}}});
    in.job.global_batch = 8;
    const autohet_time_model m;
    const time_report t = m.estimate(in.pb(), pl);
    const time_report s = sailor_time_model{}.estimate(in.pb(), pl);
    CHECK(t.pipeline.value == s.pipeline.value);
    // Two rings of 2 (layers 0-2 and 3-5): each sends 2 x (2-1)/2 = 1 x its gradients; in all
    // the model's gradients, 2 bytes per parameter, over 1 GB/s.
    const double volume = in.model.params_in(0, 6) * in.job.gradient_bytes();
    CHECK(t.sync.value == doctest::Approx(volume / 1e9));
    CHECK(t.iteration.value == doctest::Approx(t.pipeline.value + t.sync.value + t.update.value));
}
