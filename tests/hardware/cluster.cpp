#include <doctest/doctest.h>

#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/hardware/cluster.hpp"

using namespace hetplan;

TEST_CASE("cluster: ids, regions from zone names, pool, network fallbacks") {
    cluster hw;
    const auto a = hw.add_gpu(fixtures::a100_40(), 4);
    const auto z1 = hw.add_zone("us-central1-a");
    const auto z2 = hw.add_zone("us-west1-b");
    const auto z3 = hw.add_zone("us-central1-b");
    CHECK(hw.regions.size() == 2);
    CHECK(hw.region_of(z1) == hw.region_of(z3));
    CHECK(hw.region_of(z1) != hw.region_of(z2));
    CHECK(hw.gpu_id("A100-40") == a);
    CHECK_THROWS_WITH_AS((void)hw.gpu_id("H200"), doctest::Contains("unknown GPU type 'H200'"), input_error);
    CHECK_THROWS_AS(hw.add_gpu(fixtures::a100_40(), 4), input_error);  // duplicate
    auto zero = fixtures::t4();
    zero.memory_capacity = bytes{0};
    CHECK_THROWS_WITH_AS(hw.add_gpu(zero, 4), doctest::Contains("memory must be positive"), input_error);

    hw.pool.set(a, z1, 16);
    hw.pool.set(a, z2, 4);
    CHECK(hw.pool.total(a) == 20);
    CHECK_THROWS_AS(hw.pool.set(a, z1, -1), input_error);

    const alpha_beta_link slow{seconds{0}, bytes_per_second{1e8}}, fast{seconds{0}, bytes_per_second{1e10}};
    CHECK_THROWS_AS((void)hw.network.between({z1, a, 4}, {z2, a, 4}), model_error);
    hw.network.set_default(fast);
    hw.network.set_zone_default(z1, z2, slow);
    CHECK(hw.network.between({z1, a, 4}, {z2, a, 4}).transfer_time(bytes{1e8}).value == doctest::Approx(1.0));
    CHECK(hw.network.between({z2, a, 4}, {z1, a, 4}).transfer_time(bytes{1e8}).value == doctest::Approx(0.01));
    hw.network.set_link({z1, a, 4}, {z2, a, 4}, fast);
    CHECK(hw.network.between({z1, a, 4}, {z2, a, 4}).transfer_time(bytes{1e8}).value == doctest::Approx(0.01));
    CHECK(hw.network.egress_price(z1, z1).value == 0.0);
}

TEST_CASE("built-in GPU catalogue: a price exactly where a source is named") {
    // fixtures/gpus.hpp: the papers' prices (Sailor §5) or a dated list price; none invented.
    for (const char* n : {"A100-40", "A100-80", "V100-16", "H100-80", "H100-NVL", "GH-96", "H800", "H20", "T4", "A10G", "L4", "A6000", "P40", "P100"}) {
        CAPTURE(n);
        const auto g = fixtures::gpu_named(n);
        REQUIRE(g);
        CHECK((g->price.value > 0) == !fixtures::gpu_price_source(n).empty());
        CHECK(g->peak_flops(dtype::fp32).value > 0);
        const auto node = fixtures::gpu_node(n);
        REQUIRE(node);
        CHECK_FALSE(node->interconnect.empty());
        CHECK((node->gpus_per_node > 0) == (std::string_view(n) != "P40"));  // no P40 offer found
    }
    CHECK(fixtures::gpu_named("A100-40")->price.value == 3.74);  // Sailor §5
    CHECK(fixtures::gpu_named("T4")->price.value == 0.35);       // GCP us-central1, the GPU alone
    CHECK(fixtures::gpu_price_source("H800").empty());           // no on-demand offer found
}
