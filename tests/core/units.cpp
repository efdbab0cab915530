#include <doctest/doctest.h>

#include <functional>
#include <type_traits>

#include "hetplan/core/units.hpp"

using namespace hetplan;

TEST_CASE("units: physically meaningful arithmetic only") {
    // 1 GB over 12.5 GB/s (100 Gb/s) takes 0.08 s.
    CHECK((gigabytes(1) / gigabits_per_second(100)).value == doctest::Approx(0.08));
    // 3.6 USD per hour for 1000 s is 1 USD.
    CHECK((usd_per_hour{3.6} * seconds{1000}).value == doctest::Approx(1.0));
    // 0.01 USD per GB for 5 GB is 0.05 USD.
    CHECK((usd_per_gigabyte(0.01) * gigabytes(5)).value == doctest::Approx(0.05));
    CHECK((flop{1e12} / teraflops(2)).value == doctest::Approx(0.5));
    CHECK(gibibytes(1).value == 1073741824.0);
    CHECK(max(seconds{1}, seconds{2}) == seconds{2});
    CHECK(gigabytes(2) / gigabytes(1) == doctest::Approx(2.0));
    // Mixing units does not compile.
    static_assert(!std::is_invocable_v<std::plus<>, bytes, seconds>);
    static_assert(!std::is_invocable_v<std::plus<>, usd, usd_per_hour>);
    static_assert(!std::is_convertible_v<double, bytes>);
}
