#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "../support.hpp"
#include "hetplan/io.hpp"

using namespace hetplan;

namespace {
const char* cluster_text = R"({
  "gpus": [{"name": "A100-40", "memory_gib": 40, "gpus_per_node": 4, "price_per_hour": 3.74,
            "peak_tflops": {"fp32": 19.5, "fp16": 312}},
           {"name": "V100-16", "memory_bytes": 17179869184, "gpus_per_node": 4, "price_per_hour": 2.8}],
  "zones": [{"name": "us-central1-a"}, {"name": "us-west1-b", "region": "us-west1"}],
  "available": [{"gpu": "A100-40", "zone": "us-central1-a", "count": 8},
                {"gpu": "V100-16", "zone": "us-west1-b", "count": 4}],
  "network": {"default": {"latency_s": 1e-5, "bandwidth_gbit_s": 100},
              "zone_pairs": [{"from": "us-central1-a", "to": "us-west1-b",
                              "link": {"polynomial_gb_s": [0.1, 1.0], "max_bytes_per_s": 2e9}}],
              "egress_usd_per_gb": [{"from": "us-central1-a", "to": "us-west1-b", "price": 0.02}]}
})";

cluster parse_cluster(const std::string& text) {
    const auto j = io::parse_text(text, "cluster.json");
    return io::read_cluster(io::cursor(j, "cluster.json"));
}
}  // namespace

TEST_CASE("cluster JSON") {
    const cluster hw = parse_cluster(cluster_text);
    CHECK(hw.gpus.size() == 2);
    CHECK(hw.gpu(hw.gpu_id("A100-40")).memory().value == gibibytes(40).value);
    CHECK(hw.gpu(hw.gpu_id("A100-40")).peak_flops(dtype::fp16).value == doctest::Approx(312e12));
    CHECK(hw.pool.available(hw.gpu_id("V100-16"), hw.zone_id_of("us-west1-b")) == 4);
    CHECK(hw.regions.size() == 2);
    const endpoint a{hw.zone_id_of("us-central1-a"), hw.gpu_id("A100-40"), 4};
    const endpoint b{hw.zone_id_of("us-west1-b"), hw.gpu_id("V100-16"), 4};
    // 1 MB: x = 0 -> 1 GB/s.
    CHECK(hw.network.between(a, b).transfer_time(megabytes(1)).value == doctest::Approx(1e-3));
    CHECK(hw.network.between(b, a).transfer_time(gigabytes(1.25)).value == doctest::Approx(0.1 + 1e-5));
    CHECK(hw.network.egress_price(a.zone, b.zone).value == doctest::Approx(0.02e-9));
}

TEST_CASE("cluster JSON: write_cluster writes what read_cluster reads (every network entry, intra-node links too)") {
    cluster hw = parse_cluster(cluster_text);
    const gpu_type_id a100 = hw.gpu_id("A100-40"), v100 = hw.gpu_id("V100-16");
    const zone_id za = hw.zone_id_of("us-central1-a"), zb = hw.zone_id_of("us-west1-b");
    hw.network.set_link({za, a100, 2}, {zb, v100, 4}, alpha_beta_link{seconds{2e-4}, gigabits_per_second(7)});
    hw.network.set_intra_node(a100, 4, polynomial_link(std::array{0.5, 60.0}, gigabytes_per_second(150)));
    const auto j = io::write_cluster(hw);
    const cluster back = io::read_cluster(io::cursor(io::parse_text(j.dump(), "written.json"), "written.json"));
    CHECK(io::write_cluster(back) == j);  // a fixed point
    REQUIRE(back.gpus.size() == 2);
    CHECK(back.gpus[1].memory_capacity.value == hw.gpus[1].memory_capacity.value);
    CHECK(back.gpus[0].peak_flops(dtype::fp16).value == doctest::Approx(312e12).epsilon(1e-15));
    CHECK(back.gpus_per_node(v100) == 4);
    CHECK(back.region_of(zb) != back.region_of(za));
    CHECK(back.pool.available(a100, za) == 8);
    CHECK(back.pool.total() == hw.pool.total());
    for (const bytes m : {megabytes(1), megabytes(64), gigabytes(2)}) {
        for (const auto& [x, y] : {std::pair{endpoint{za, a100, 2}, endpoint{zb, v100, 4}}, std::pair{endpoint{za, a100, 4}, endpoint{zb, v100, 4}},
                                   std::pair{endpoint{zb, v100, 1}, endpoint{zb, v100, 1}}})
            CHECK(back.network.between(x, y).transfer_time(m).value == doctest::Approx(hw.network.between(x, y).transfer_time(m).value).epsilon(1e-12));
        REQUIRE(back.network.intra_node(a100, 4));
        CHECK(back.network.intra_node(a100, 4)->transfer_time(m).value == doctest::Approx(hw.network.intra_node(a100, 4)->transfer_time(m).value).epsilon(1e-12));
    }
    CHECK_FALSE(back.network.intra_node(v100, 4));
    CHECK(back.network.egress_price(za, zb).value == doctest::Approx(0.02e-9).epsilon(1e-12));
}

TEST_CASE("model, job and plan JSON round trips") {
    const test::small_world w;
    const auto mj = io::write_model(w.model);
    const model_spec m2 = io::read_model(io::cursor(mj, "model"));
    CHECK(m2.num_layers() == 4);
    CHECK(m2.layers[2].params == w.model.layers[2].params);

    job_spec j = w.job;
    j.prec = precision::bf16_mixed;
    j.memory.zero_stage = 2;
    const auto jj = io::write_job(j);
    const job_spec j2 = io::read_job(io::cursor(jj, "job"));
    CHECK(j2.prec == precision::bf16_mixed);
    CHECK(j2.memory.zero_stage == 2);
    CHECK(j2.global_batch == 32);

    plan pl;
    pipeline p;
    p.stages.push_back({{layer_range{0, 2}, layer_range{3, 4}}, {test::worker(w.a, w.z1, 2, 2, 8, 0.25), test::worker(w.b, w.z2, 1, 2, 8, 0.75)}});
    p.stages.push_back({{layer_range{2, 3}}, {test::worker(w.b, w.z2, 4, 4, 8, 1.0)}});
    pl.pipelines.push_back(p);
    pl.schedule = schedule_kind::interleaved_ministages;
    pl.memory.offload_params = true;
    const auto pj = io::write_plan(pl, w.hw);
    CHECK(io::read_plan(io::cursor(pj, "plan"), w.hw) == pl);

    const auto tj = io::parse_text(R"({"transformer": {"layers": 2, "hidden": 64, "heads": 2, "vocab": 100, "sequence": 32}, "name": "t"})", "t");
    CHECK(io::read_model(io::cursor(tj, "t")).num_layers() == 4);
}

TEST_CASE("profile JSON") {
    const auto j = io::parse_text(R"({"profiles": [{"gpu": "A", "tp": 1, "points": [
        {"microbatch_size": 1, "layers": [[0.001, 0.002, 0.0001], [0.001, 0.002, 0.0001]]},
        {"microbatch_size": 2, "layers": [[0.002, 0.004, 0.0001], [0.002, 0.004, 0.0001]]}]}],
        "analytical_fallback": {"efficiency": 0.5}})", "p.json");
    profile_table t;
    io::read_profiles(io::cursor(j, "p.json"), t);
    CHECK(t.measured_mbs("A", 1) == std::vector<int>{1, 2});
    CHECK(t.find("A", 1)->at(3, 1).first.fwd.value == doctest::Approx(0.003));
    CHECK(t.has_fallback());
    // write_profiles writes the same file back (the JSON's numbers, and the fallback).
    const io::json w = io::write_profiles(t, {"A", "B"});
    profile_table back;
    io::read_profiles(io::cursor(w, "written.json"), back);
    CHECK(io::write_profiles(back, {"A", "B"}) == w);
    CHECK(w["profiles"].size() == 1);
    CHECK(w["analytical_fallback"]["efficiency"] == 0.5);
    CHECK(back.find("A", 1)->at(3, 1).first.fwd.value == doctest::Approx(0.003));
    // Without "efficiency" the fallback is the calibrated one, and is written back so.
    const auto c = io::parse_text(R"({"profiles": [], "analytical_fallback": {}})", "c.json");
    profile_table calibrated;
    io::read_profiles(io::cursor(c, "c.json"), calibrated);
    REQUIRE(calibrated.has_fallback());
    CHECK(!calibrated.fallback()->efficiency);
    CHECK(io::write_profiles(calibrated, {})["analytical_fallback"] == io::json::object());
}

TEST_CASE("files: read from disk") {
    const auto dir = std::filesystem::temp_directory_path() / "hetplan_io_test";
    std::filesystem::create_directories(dir);
    {
        std::ofstream(dir / "cluster.json") << cluster_text;
    }
    CHECK(io::read_cluster_file(dir / "cluster.json").gpus.size() == 2);
    CHECK_THROWS_WITH_AS(io::read_cluster_file(dir / "missing.json"), doctest::Contains("missing.json: cannot open file"), input_error);
    std::filesystem::remove_all(dir);
}
