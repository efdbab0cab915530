#include <doctest/doctest.h>

#include "hetplan/hardware/collectives.hpp"
#include "hetplan/hardware/links.hpp"

using namespace hetplan;

TEST_CASE("ring collectives: (n-1)/n factors and the slowest edge") {
    const alpha_beta_link fast{seconds{0}, bytes_per_second{1e9}};
    const alpha_beta_link slow{seconds{0}, bytes_per_second{0.5e9}};
    // 4 participants, 400 MB: all-reduce 2*3 steps of 100 MB at 1 GB/s = 0.6 s.
    CHECK(collective::ring_all_reduce(4, megabytes(400), fast).value == doctest::Approx(0.6));
    CHECK(collective::ring_all_gather(4, megabytes(400), fast).value == doctest::Approx(0.3));
    CHECK(collective::ring_reduce_scatter(4, megabytes(400), fast).value == doctest::Approx(0.3));
    CHECK(collective::ring_all_reduce(1, megabytes(400), fast).value == 0.0);
    // One slow edge in the ring sets every step: 6 x 100 MB / 0.5 GB/s = 1.2 s.
    auto edge = [&](int k) -> const alpha_beta_link& { return k == 2 ? slow : fast; };
    CHECK(collective::ring_all_reduce(4, megabytes(400), edge).value == doctest::Approx(1.2));
    CHECK(collective::point_to_point(fast, megabytes(10)).value == doctest::Approx(0.01));
}

TEST_CASE("bucketed all-reduce pays the latency once per bucket") {
    const alpha_beta_link l{seconds{1e-3}, bytes_per_second{1e9}};
    auto same = [&](int) -> const alpha_beta_link& { return l; };
    // 1000 MB, n = 4: unbucketed 6 x (1 ms + 250 MB / 1 GB/s) = 1.506 s; buckets 400, 400, 200
    // are three all-reduces: 18 x 1 ms + 1.5 s = 1.518 s.
    CHECK(collective::ring_all_reduce(4, megabytes(1000), l).value == doctest::Approx(1.506));
    CHECK(collective::bucketed_ring_all_reduce(4, megabytes(1000), megabytes(400), same).value == doctest::Approx(1.518));
}
