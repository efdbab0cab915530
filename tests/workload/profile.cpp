#include <doctest/doctest.h>

#include <array>

#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/workload/profile.hpp"

using namespace hetplan;

namespace {
profile_curve two_points() {
    profile_curve c;  // 1 layer: mbs 2 -> fwd 2 ms, bwd 4 ms; mbs 4 -> fwd 3 ms, bwd 6 ms
    c.add_point(4, {{milliseconds(3), milliseconds(6), milliseconds(1)}});
    c.add_point(2, {{milliseconds(2), milliseconds(4), milliseconds(1)}});
    return c;
}
}  // namespace

TEST_CASE("profile curve: measured, interpolated, extrapolated") {
    const profile_curve c = two_points();
    CHECK(c.mbs == std::vector<int>{2, 4});
    auto [t2, s2] = c.at(2, 0);
    CHECK(s2 == timing_source::measured);
    CHECK(t2.fwd.value == doctest::Approx(2e-3));
    auto [t3, s3] = c.at(3, 0);  // halfway: 2.5 ms, 5 ms
    CHECK(s3 == timing_source::fitted);
    CHECK(t3.fwd.value == doctest::Approx(2.5e-3));
    CHECK(t3.bwd.value == doctest::Approx(5e-3));
    auto [t8, s8] = c.at(8, 0);  // line through the two points: fwd 2 + 0.5 * (8 - 2) = 5 ms
    CHECK(t8.fwd.value == doctest::Approx(5e-3));
    auto [t1, s1] = c.at(1, 0);  // proportional below the smallest: 1 ms
    CHECK(t1.fwd.value == doctest::Approx(1e-3));
    profile_curve tailed = two_points();
    tailed.tail = linear_tail{{1e-3}, {0.0}, {2e-3}, {0.0}};  // t = 1 ms per sample
    CHECK(tailed.at(10, 0).first.fwd.value == doctest::Approx(10e-3));
    CHECK(tailed.at(10, 0).first.bwd.value == doctest::Approx(20e-3));
}

TEST_CASE("profile table: lookup, missing profiles, analytical fallback") {
    profile_table t;
    t.set_curve("A100-40", 1, two_points());
    model_spec m;
    m.name = "one";
    m.layers.push_back({"l0", 1e6, 1, 1, 1, 1e12, {}});
    const gpu_spec a100 = fixtures::a100_40();
    CHECK(t.lookup(a100, 1, 2, m, 0, dtype::fp32, 24).first.fwd.value == doctest::Approx(2e-3));
    CHECK_THROWS_WITH_AS((void)t.lookup(a100, 2, 2, m, 0, dtype::fp32, 24), doctest::Contains("no profile for GPU type A100-40 at TP 2"),
                         model_error);
    CHECK_THROWS_AS((void)t.lookup(a100, 1, 2, m, 3, dtype::fp32, 24), model_error);  // layer outside the profile
    t.enable_analytical({0.5, gigabytes_per_second(100)});
    // 1e12 FLOP x mbs 2 / (19.5 TFLOP/s x 0.5 x TP 2) = 0.10256 s, backward twice that.
    auto [tt, src] = t.lookup(a100, 2, 2, m, 0, dtype::fp32, 24);
    CHECK(src == timing_source::analytical);
    CHECK(tt.fwd.value == doctest::Approx(2e12 / (19.5e12 * 0.5 * 2)));
    CHECK(tt.bwd.value == doctest::Approx(2 * tt.fwd.value));
    CHECK(tt.update.value == doctest::Approx(0.5e6 * 24 / 100e9));
    CHECK(t.tp_degrees("A100-40") == std::vector<int>{1});
}

TEST_CASE("profile table: the calibrated analytical fallback (issue 21, hardware/compute_efficiency.hpp)") {
    profile_table t;
    t.enable_analytical({});
    model_spec m;
    m.name = "one";
    m.layers.push_back({"l0", 1e6, 1, 1, 1, 1e12, {}});
    m.layers.push_back({"l1", 1e6, 1, 1, 1, 0, {}});
    // A100-40 fp32 (e_max 0.916, w_half 2.33e10 FLOP, backward 2.002x): w = 1e12 x 2 / TP 2, so
    // forward = (1e12 + 2.33e10) / (0.916 x 19.5e12) = 0.057289 s (hand calculation).
    const auto [a, src] = t.lookup(fixtures::a100_40(), 2, 2, m, 0, dtype::fp32, 24);
    CHECK(src == timing_source::analytical);
    CHECK(a.fwd.value == doctest::Approx(0.057289).epsilon(1e-4));
    CHECK(a.bwd.value == doctest::Approx(2.002 * a.fwd.value));
    // Half the work per GPU is more than half the time: the overhead term (w_half) stays.
    const auto half = t.lookup(fixtures::a100_40(), 2, 1, m, 0, dtype::fp32, 24).first;
    CHECK(half.fwd.value > a.fwd.value / 2);
    CHECK(half.fwd.value == doctest::Approx((0.5e12 + 2.33e10) / (0.916 * 19.5e12)));
    // bf16 takes the fp16 fit (e_max 0.607, w_half 1.06e11, backward 2.197x), on the fp16 peak.
    const auto h = t.lookup(fixtures::a100_40(), 1, 1, m, 0, dtype::bf16, 24).first;
    CHECK(h.fwd.value == doctest::Approx((1e12 + 1.06e11) / (0.607 * 312e12)));
    CHECK(h.bwd.value == doctest::Approx(2.197 * h.fwd.value));
    // A layer without FLOPs takes no time (no overhead to scale); a type without a fit: 0.4, 2x.
    CHECK(t.lookup(fixtures::a100_40(), 1, 1, m, 1, dtype::fp32, 24).first.fwd.value == 0.0);
    const auto u = t.lookup(fixtures::h100_80(), 1, 1, m, 0, dtype::fp16, 24).first;
    CHECK(u.fwd.value == doctest::Approx(1e12 / (0.4 * 989e12)));
    CHECK(u.bwd.value == doctest::Approx(2 * u.fwd.value));
    // An explicit efficiency is that fraction of peak for every type, backward 2x.
    t.enable_analytical({0.4});
    CHECK(t.lookup(fixtures::a100_40(), 1, 1, m, 0, dtype::fp32, 24).first.fwd.value == doctest::Approx(1e12 / (0.4 * 19.5e12)));
    CHECK(published_efficiency("A100-40", dtype::tf32) == std::nullopt);
    CHECK(published_efficiency("no such GPU", dtype::fp16) == std::nullopt);
}

TEST_CASE("AutoHet power-of-two composition (Eq. 5)") {
    const std::array<seconds, 3> block{seconds{1}, seconds{1.9}, seconds{3.7}};  // 1, 2, 4 layers
    CHECK(compose_power_of_two(7, block).value == doctest::Approx(6.6));  // 4 + 2 + 1
    CHECK(compose_power_of_two(5, block).value == doctest::Approx(4.7));  // 4 + 1
    CHECK(compose_power_of_two(0, block).value == 0.0);
    CHECK_THROWS_AS(compose_power_of_two(8, block), model_error);
}
