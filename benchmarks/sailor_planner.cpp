// Sailor planner search times. With HETPLAN_DATA_DIR set, the published scenarios (pipelines of
// at most `max_P` stages); always, the built-in small instance against exhaustive search over the
// same plan space (the straightforward version of the same search).
#define CATCH_CONFIG_ENABLE_BENCHMARKING
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/io.hpp"
#include "hetplan/planners/sailor.hpp"

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
    opt.heuristics = sailor_heuristics::none();
    opt.max_pipeline_degree = 2;
    opt.microbatch_sizes = {1, 2};
    BENCHMARK("stage DP (exact)") { return sailor_planner(opt).plan(s.pb()).ranked.size(); };
    opt.exhaustive = true;
    BENCHMARK("exhaustive") { return sailor_planner(opt).plan(s.pb()).ranked.size(); };
}

TEST_CASE("Sailor planner: published scenarios") {
    const char* dir = std::getenv("HETPLAN_DATA_DIR");
    if (!dir || !*dir) return;
    const auto root = std::filesystem::path(dir) / "sailor";
    for (int max_P : {1, 2, 4}) {
        auto w = io::sailor::load_world(root, "OPT-350", {"A100-40", "V100-16"}, {"us-central1-a"});
        w.hw.pool.set(gpu_type_id{0}, zone_id{0}, 128);
        w.hw.pool.set(gpu_type_id{1}, zone_id{0}, 128);
        sailor_options opt;
        opt.max_pipeline_degree = max_P;
        BENCHMARK("OPT-350 128 A100 + 128 V100, P <= " + std::to_string(max_P)) { return sailor_planner(opt).plan(w.pb()).ranked.size(); };
    }
    for (auto [a, v] : {std::pair{32, 96}, std::pair{80, 240}, std::pair{128, 384}}) {
        auto w = io::sailor::load_world(root, "GPT-Neo-2.7", {"A100-40", "V100-16"}, {"us-central1-a"});
        w.hw.pool.set(gpu_type_id{0}, zone_id{0}, a);
        w.hw.pool.set(gpu_type_id{1}, zone_id{0}, v);
        sailor_options opt;
        opt.max_pipeline_degree = 4;
        BENCHMARK("GPT-Neo-2.7 " + std::to_string(a) + " A100 + " + std::to_string(v) + " V100, P <= 4") {
            return sailor_planner(opt).plan(w.pb()).ranked.size();
        };
    }
}
