// The in-process communicator: the concept's laws on 2-5 threads, failures that end every
// rank instead of hanging, misuse named.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <span>
#include <string>
#include <vector>

#include "communicator_laws.hpp"
#include "hetplan/exec/thread_communicator.hpp"

namespace hetplan::test {

TEST_CASE("exec_thread_communicator: the communicator laws on 2 to 5 ranks") {
    for (int n = 2; n <= 5; ++n) {
        CAPTURE(n);
        exec::thread_world::run(n, [](exec::thread_communicator c) { check_communicator_laws(c); });
    }
}

TEST_CASE("exec_thread_communicator: all-reduce sums in rank order, bit for bit on every rank") {
    // 1e8 + 1 + (-1e8) in fp32: rank order gives 0 + ... ; every rank must hold the same bits.
    std::vector<float> seen(3);
    exec::thread_world::run(3, [&](exec::thread_communicator c) {
        const float mine[] = {1e8f, 1.0f, -1e8f};
        std::vector<float> v{mine[c.rank()]};
        c.all_reduce(v);
        seen[static_cast<std::size_t>(c.rank())] = v[0];
    });
    CHECK(seen[0] == ((1e8f + 1.0f) + -1e8f));
    CHECK(seen[1] == seen[0]);
    CHECK(seen[2] == seen[0]);
}

TEST_CASE("exec_thread_communicator: a rank that throws ends the others' waits with an error") {
    std::atomic<int> saw_peer_failure{0};
    CHECK_THROWS_WITH_AS(exec::thread_world::run(3,
                                                 [&](exec::thread_communicator c) {
                                                     if (c.rank() == 1) throw input_error("rank 1 gave up");
                                                     std::vector<float> v(1);
                                                     try {
                                                         c.recv(v, 1, 0);  // never sent
                                                     } catch (const exec::comm_error&) {
                                                         ++saw_peer_failure;
                                                         throw;
                                                     }
                                                 }),
                         doctest::Contains("rank 1 gave up"), input_error);
    CHECK(saw_peer_failure == 2);
}

TEST_CASE("exec_thread_communicator: misuse is named") {
    CHECK_THROWS_WITH_AS(exec::thread_world::run(2,
                                                 [](exec::thread_communicator c) {
                                                     std::vector<float> v(static_cast<std::size_t>(1 + c.rank()));
                                                     c.all_reduce(v);
                                                 }),
                         doctest::Contains("all_reduce: rank"), exec::comm_error);
    CHECK_THROWS_WITH_AS(exec::thread_world::run(2,
                                                 [](exec::thread_communicator c) {
                                                     std::vector<float> v(2);
                                                     if (c.rank() == 0) c.send(v, 1, 3);
                                                     else {
                                                         std::vector<float> w(3);
                                                         c.recv(w, 0, 3);
                                                     }
                                                 }),
                         doctest::Contains("expected 3 floats from rank 0 (tag 3), got 2"), exec::comm_error);
    CHECK_THROWS_WITH_AS(exec::thread_world::run(2, [](exec::thread_communicator c) { c.send(std::vector<float>{1}, 2, 0); }),
                         doctest::Contains("send to rank 2 of a group of 2"), exec::comm_error);
    CHECK_THROWS_WITH_AS(exec::thread_world::run(2,
                                                 [](exec::thread_communicator c) {
                                                     std::vector<float> all(3), mine(1);
                                                     const int counts[] = {1, 1};
                                                     c.all_gather(mine, all, counts);
                                                 }),
                         doctest::Contains("counts sum to 2"), exec::comm_error);
    exec::thread_communicator outside;
    CHECK(outside.size() == 0);
    CHECK_THROWS_WITH_AS(outside.barrier(), doctest::Contains("outside the group"), exec::comm_error);
}

}  // namespace hetplan::test

namespace hetplan::test {
namespace {
/// Archetype: the least a communicator must offer (one rank, nothing to exchange).
struct solo {
    [[nodiscard]] int rank() const { return 0; }
    [[nodiscard]] int size() const { return 1; }
    void send(std::span<const float>, int, int) {}
    void recv(std::span<float>, int, int) {}
    void all_reduce(std::span<float>) {}
    void all_gather(std::span<const float> mine, std::span<float> all, std::span<const int>) { std::copy(mine.begin(), mine.end(), all.begin()); }
    void reduce_scatter(std::span<const float> all, std::span<float> mine, std::span<const int>) { std::copy(all.begin(), all.end(), mine.begin()); }
    void broadcast(std::span<float>, int) {}
    void barrier() {}
    [[nodiscard]] solo split(int, int) const { return {}; }
};
static_assert(concepts::check_communicator<solo>());
static_assert(!concepts::communicator<int>);
}  // namespace
}  // namespace hetplan::test
