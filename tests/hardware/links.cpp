#include <doctest/doctest.h>

#include <vector>

#include "hetplan/hardware/links.hpp"

using namespace hetplan;

TEST_CASE("alpha-beta link: t = alpha + n / beta") {
    const alpha_beta_link l{seconds{10e-6}, gigabits_per_second(100)};
    CHECK(l.transfer_time(gigabytes(1)).value == doctest::Approx(0.08001));  // 10 us + 1e9 / 1.25e10
    CHECK(l.transfer_time(bytes{0}).value == 0.0);
    CHECK(l.bandwidth(gigabytes(1)).value < 1.25e10);
    CHECK_THROWS_AS(alpha_beta_link(seconds{0}, bytes_per_second{0}), input_error);
    CHECK_THROWS_AS(alpha_beta_link(seconds{0}, bytes_per_second{-5}), input_error);
}

TEST_CASE("polynomial link: Sailor's fit in log2(MB), with ceiling and clamped range") {
    // bw(x) = x + 2 GB/s with x = log2(n / 1 MB).
    const polynomial_link lin(std::vector<double>{1.0, 2.0}, bytes_per_second::infinity());
    CHECK(lin.bandwidth(megabytes(4)).value == doctest::Approx(4e9));          // x = 2
    CHECK(lin.transfer_time(megabytes(4)).value == doctest::Approx(1e-3));     // 4e6 / 4e9
    CHECK(lin.bandwidth(megabytes(0.5)).value == doctest::Approx(2e9));        // x = -1 clamped to 0
    const polynomial_link capped(std::vector<double>{1.0, 2.0}, bytes_per_second{3e9});
    CHECK(capped.transfer_time(megabytes(4)).value == doctest::Approx(4e6 / 3e9));
    // Concave quadratic -x^2 + 4x: held at its vertex (x = 2, 4 GB/s) beyond it.
    const polynomial_link concave(std::vector<double>{-1.0, 4.0, 0.5}, bytes_per_second::infinity());
    CHECK(concave.bandwidth(megabytes(8)).value == doctest::Approx(4.5e9));    // x = 3 -> vertex value
    // Bandwidth never decreases with message size.
    double prev = 0;
    for (double mb = 0.001; mb < 1e5; mb *= 1.7) {
        const double bw = concave.bandwidth(megabytes(mb)).value;
        CHECK(bw >= prev - 1e-6);
        prev = bw;
    }
    // A fit that is negative inside its range is rejected with a message.
    CHECK_THROWS_WITH_AS(polynomial_link(std::vector<double>{-1.0}, bytes_per_second{1e9}),
                         doctest::Contains("not positive"), input_error);
    CHECK_THROWS_AS(polynomial_link(std::vector<double>{1.0}, bytes_per_second{0}), input_error);
}

TEST_CASE("builtin_link dispatches to either model") {
    builtin_link a = alpha_beta_link{seconds{0}, bytes_per_second{1e9}};
    builtin_link p = polynomial_link(std::vector<double>{1.0, 2.0}, bytes_per_second::infinity());
    CHECK(a.transfer_time(bytes{1e9}).value == doctest::Approx(1.0));
    CHECK(p.transfer_time(megabytes(4)).value == doctest::Approx(1e-3));
    CHECK(a.get_if<alpha_beta_link>() != nullptr);
    CHECK(a.get_if<polynomial_link>() == nullptr);
}
