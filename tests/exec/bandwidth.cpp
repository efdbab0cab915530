// Link profiling: the fits recover the links they were sampled from; the sweep runs over the
// thread communicator (its times are memcpy's and not checked).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "hetplan/exec/bandwidth.hpp"
#include "hetplan/exec/thread_communicator.hpp"

namespace hetplan::test {

TEST_CASE("exec_bandwidth: the alpha-beta fit recovers latency and bandwidth from exact samples") {
    std::vector<exec::bandwidth_point> pts;
    for (double n = 1e3; n <= 1e9; n *= 4) pts.push_back({n, 2e-5 + n / 12.5e9});
    const alpha_beta_link l = exec::fit_alpha_beta(pts);
    CHECK(l.latency.value == doctest::Approx(2e-5).epsilon(1e-6));
    CHECK(l.peak.value == doctest::Approx(12.5e9).epsilon(1e-9));
    CHECK_THROWS_WITH_AS(exec::fit_alpha_beta({{1e3, 1e-5}}), doctest::Contains("two message sizes"), exec::comm_error);
}

TEST_CASE("exec_bandwidth: Sailor's quadratic fit recovers a concave curve over log2(MB)") {
    // GB/s = -0.05 x^2 + 1.2 x + 3, x = log2(MB) for 1 MB .. 4 GB (hand-picked, concave, peak at x = 12)
    std::vector<exec::bandwidth_point> pts{{1e5, 1e-4}};  // below 1 MB: ignored by the fit
    for (int x = 0; x <= 12; ++x) {
        const double gbs = -0.05 * x * x + 1.2 * x + 3, bytes = std::exp2(x) * 1e6;
        pts.push_back({bytes, bytes / (gbs * 1e9)});
    }
    const polynomial_link p = exec::fit_sailor_polynomial(pts);
    REQUIRE(p.degree_plus_one == 3);
    CHECK(p.coeff[0] == doctest::Approx(-0.05).epsilon(1e-6));
    CHECK(p.coeff[1] == doctest::Approx(1.2).epsilon(1e-6));
    CHECK(p.coeff[2] == doctest::Approx(3.0).epsilon(1e-6));
    CHECK(p.ceiling.value == doctest::Approx((-0.05 * 144 + 1.2 * 12 + 3) * 1e9));
    CHECK_THROWS_WITH_AS(exec::fit_sailor_polynomial({{2e6, 1e-3}, {4e6, 2e-3}}), doctest::Contains("at least three"), exec::comm_error);
}

TEST_CASE("exec_bandwidth: a ping-pong sweep over threads gives one point per size on every rank") {
    const std::vector<double> sizes{4e3, 1e6, 4e6};
    std::vector<std::vector<exec::bandwidth_point>> got(3);
    exec::thread_world::run(3, [&](exec::thread_communicator c) { got[static_cast<std::size_t>(c.rank())] = exec::ping_pong_sweep(c, sizes, 3, 0, 2); });
    for (const auto& g : got) {
        REQUIRE(g.size() == 3);
        CHECK(g[1].bytes == 1e6);
        CHECK(g[2].seconds == got[0][2].seconds);  // rank 0's median, on every rank
        for (const auto& p : g) CHECK(p.seconds > 0);
    }
    CHECK_THROWS_WITH_AS(exec::thread_world::run(2, [&](exec::thread_communicator c) { (void)exec::ping_pong_sweep(c, sizes, 3, 0, 0); }),
                         doctest::Contains("two distinct ranks"), exec::comm_error);
}

}  // namespace hetplan::test
