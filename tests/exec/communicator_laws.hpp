#pragma once
// The communicator concept's laws, checked on any model (threads in the unit tests, MPI under
// mpirun): every member calls this with its handle on a world of >= 2 ranks.
#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "hetplan/concepts/communicator.hpp"

namespace hetplan::test {

template <concepts::communicator C>
void check_communicator_laws(C world) {
    const int r = world.rank(), n = world.size();
    REQUIRE(n >= 2);
    // Point to point: a ring, two messages per pair in FIFO order, sent before anything is
    // received (sends are buffered: no deadlock).
    {
        const int next = (r + 1) % n, prev = (r + n - 1) % n;
        std::vector<float> a{float(r), 1.5f}, b(3, float(10 * r));
        world.send(a, next, 7);
        world.send(b, next, 7);
        world.send(std::vector<float>{-1.0f}, prev, 8);
        std::vector<float> got_a(2), got_b(3), got_c(1);
        world.recv(got_c, next, 8);
        world.recv(got_a, prev, 7);
        world.recv(got_b, prev, 7);
        CHECK(got_a == std::vector<float>{float(prev), 1.5f});
        CHECK(got_b == std::vector<float>(3, float(10 * prev)));
        CHECK(got_c == std::vector<float>{-1.0f});
    }
    // All-reduce: the sum, the same on every rank.
    {
        std::vector<float> v{float(r), 1.0f, float(r * r)};
        world.all_reduce(v);
        const float s = float(n * (n - 1) / 2), sq = float((n - 1) * n * (2 * n - 1) / 6);
        CHECK(v == std::vector<float>{s, float(n), sq});
    }
    // Uneven all-gather: rank k contributes k + 1 copies of k (rank 0's one value included).
    {
        std::vector<int> counts(static_cast<std::size_t>(n));
        std::iota(counts.begin(), counts.end(), 1);
        std::vector<float> mine(static_cast<std::size_t>(r + 1), float(r));
        std::vector<float> all(static_cast<std::size_t>(n * (n + 1) / 2), -7.0f);
        world.all_gather(mine, all, counts);
        std::vector<float> want;
        for (int k = 0; k < n; ++k) want.insert(want.end(), static_cast<std::size_t>(k + 1), float(k));
        CHECK(all == want);
        // Uneven reduce-scatter with an empty share: rank 0 gets nothing, rank k > 0 gets k values.
        counts[0] = 0;
        for (int k = 1; k < n; ++k) counts[static_cast<std::size_t>(k)] = k;
        const int total = n * (n - 1) / 2;
        std::vector<float> contrib(static_cast<std::size_t>(total));
        for (int i = 0; i < total; ++i) contrib[static_cast<std::size_t>(i)] = float(i + r);
        std::vector<float> got(static_cast<std::size_t>(r));
        world.reduce_scatter(contrib, got, counts);
        const int first = r * (r - 1) / 2;
        for (int i = 0; i < r; ++i) CHECK(got[static_cast<std::size_t>(i)] == float(n * (first + i) + n * (n - 1) / 2));
    }
    // Broadcast from the last rank.
    {
        std::vector<float> v(4, float(r));
        world.broadcast(v, n - 1);
        CHECK(v == std::vector<float>(4, float(n - 1)));
    }
    world.barrier();
    // Split: even and odd ranks, ordered by descending rank (the key); rank 0 left out of a
    // second split.
    {
        C half = world.split(r % 2, -r);
        CHECK(half.size() == (n + 1 - r % 2) / 2);
        CHECK(half.rank() == (half.size() - 1) - r / 2);
        std::vector<float> v{float(r)};
        half.all_reduce(v);
        float want = 0;
        for (int k = r % 2; k < n; k += 2) want += float(k);
        CHECK(v[0] == want);
        C rest = world.split(r == 0 ? concepts::no_color : 0, r);
        if (r == 0) {
            CHECK(rest.size() == 0);
        } else {
            CHECK(rest.size() == n - 1);
            CHECK(rest.rank() == r - 1);
            std::vector<float> one{1.0f};
            rest.all_reduce(one);
            CHECK(one[0] == float(n - 1));
        }
    }
    world.barrier();
}

}  // namespace hetplan::test
