#include <doctest/doctest.h>

#include <cmath>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/workload/job.hpp"
#include "hetplan/workload/model.hpp"

using namespace hetplan;

TEST_CASE("transformer sizes from the architecture") {
    const model_spec m = fixtures::opt_350m();
    CHECK(m.num_layers() == 26);  // embedding + 24 blocks + head, as Sailor's profiles
    // 12 h^2 + 13 h with h = 1024.
    CHECK(m.layers[1].params == 12.0 * 1024 * 1024 + 13 * 1024);
    // ~ 355M parameters in total (the "350M" of the name), from the formula.
    CHECK(m.total_params() == doctest::Approx(12.0 * 1024 * 1024 * 24 + 13.0 * 1024 * 24 + 50272.0 * 1024 + 2048.0 * 1024 + 2048));
    CHECK(m.layers[1].params_at(4) == doctest::Approx(m.layers[1].params / 4));
    layer_spec l = m.layers[1];
    l.per_tp[2] = {100, 7};
    CHECK(l.params_at(2) == 100);
    CHECK(l.act_mem_at(2) == 7);
    model_spec bad = m;
    bad.layers[3].params = std::nan("");
    CHECK_THROWS_WITH_AS(bad.check("m.json"), doctest::Contains("layers[3].params"), input_error);
}

TEST_CASE("job: bytes per parameter by precision and optimizer") {
    job_spec j;
    j.global_batch = 8;
    j.sequence_length = 128;
    CHECK(j.weight_bytes() + j.gradient_bytes() + j.master_bytes() + j.optimizer_bytes() == 16.0);  // fp32 Adam
    j.prec = precision::bf16_mixed;
    // ZeRO paper: 2 + 2 + 12 = 16 bytes per parameter for mixed-precision Adam.
    CHECK(j.weight_bytes() + j.gradient_bytes() + j.master_bytes() + j.optimizer_bytes() == 16.0);
    CHECK(j.activation_bytes() == 2.0);
    j.optimizer = optimizer_kind::sgd;
    CHECK(j.optimizer_bytes() == 0.0);
    j.memory.zero_stage = 4;
    CHECK_THROWS_WITH_AS(j.check("job.json"), doctest::Contains("zero_stage"), input_error);
}
