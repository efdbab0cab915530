// io::zorse::load_world on a small hand-made folder in Zorse's format.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "hetplan/io/import/zorse_world.hpp"
#include "hetplan/planners/zorse.hpp"
#include "../planner_outcomes.hpp"

using namespace hetplan;

TEST_CASE("zorse world: VMs, interconnects, NICs and regions; missing latencies are priced analytically and said") {
    const auto dir = std::filesystem::temp_directory_path() / "hetplan_zorse_world_test";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "model_stats.json") << R"({"tiny": {"hidden_size": 64, "num_layers": 4,
        "parameters_per_layer": 1000000, "total_parameters": 4000000}})";
    // Only the A100-80 has FP16 latencies at sequence 128: 2 ms x m + 1 ms forward, twice that backward.
    std::ofstream(dir / "model_latencies.json") << R"({"tiny": {"a100x80": {"128": {"float16": [[2, 1], [4, 2]]}}}})";
    io::zorse::world_spec spec{"tiny", 32, 128,
                               {{"A100-80", "a100x80", 2, 4, gigabytes_per_second(100), gigabits_per_second(40), "east"},
                                {"H100-NVL", "h100-nvl", 1, 2, gigabytes_per_second(200), gigabits_per_second(80), "west"}},
                               gigabits_per_second(8)};
    const auto w = io::zorse::load_world(dir, spec);
    CHECK(w.job.prec == precision::fp16_mixed);
    CHECK(w.model.num_layers() == 4);
    const auto a = *w.hw.find_gpu("A100-80"), h = *w.hw.find_gpu("H100-NVL");
    const auto east = *w.hw.find_zone("east"), west = *w.hw.find_zone("west");
    CHECK(w.hw.pool.available(a, east) == 8);
    CHECK(w.hw.pool.available(h, west) == 2);
    CHECK(w.hw.zones[east.index()].region != w.hw.zones[west.index()].region);
    CHECK(w.hw.network.intra_node(a, 4)->bandwidth(megabytes(64)).value == doctest::Approx(100e9));
    // Two A100 VMs: 40 Gbps; A100 to H100 across regions: the 8 Gbps cross-region link.
    const auto ms = machines_of(w.hw);
    REQUIRE(ms.size() == 3);
    CHECK(gpu_link(w.hw, ms[0], ms[1]).bandwidth(megabytes(64)).value == doctest::Approx(5e9));
    CHECK(gpu_link(w.hw, ms[0], ms[2]).bandwidth(megabytes(64)).value == doctest::Approx(1e9));
    CHECK(gpu_link(w.hw, ms[2], ms[2]).bandwidth(megabytes(64)).value == doctest::Approx(200e9));
    // The H100 NVL has no entry: priced analytically, and the world says so.
    REQUIRE(w.notes.size() == 1);
    CHECK(w.notes[0].find("h100-nvl") != std::string::npos);
    CHECK(w.profiles.has_fallback());
    const auto r = test::zorse_run(w.pb());
    CHECK(r.pl);
    // Bad input names what is wrong.
    spec.vms[1].gpu = "H200";
    CHECK_THROWS_WITH_AS((void)io::zorse::load_world(dir, spec), doctest::Contains("no built-in GPU type 'H200'"), input_error);
    spec.vms[1].gpu = "A100-80";
    spec.vms[1].gpus_per_vm = 8;
    CHECK_THROWS_WITH_AS((void)io::zorse::load_world(dir, spec), doctest::Contains("same GPU count"), input_error);
    spec.model = "huge";
    CHECK_THROWS_AS((void)io::zorse::load_world(dir, spec), input_error);
    std::filesystem::remove_all(dir);
}
