// Zorse's pipeline pieces (Zorse §3.2, §3.3.3): shares by speed, the interleaved layout, and the
// cross-stage microbatch routing, on hand-worked cases.
#include <doctest/doctest.h>

#include "hetplan/search/pipeline/microbatch_routing.hpp"
#include "hetplan/search/pipeline/ministages.hpp"
#include "hetplan/search/pipeline/proportional_split.hpp"

using namespace hetplan;
using namespace hetplan::search;

TEST_CASE("proportional split: largest remainders, then the minimum") {
    // Thirds of 10: 3.33 each; the unit left goes to the earliest.
    CHECK(proportional_split(10, std::vector<double>{1, 1, 1}) == std::vector<int>{4, 3, 3});
    // 7 as 3:1 is 5.25 : 1.75; floors 5, 1; the unit left to the larger remainder.
    CHECK(proportional_split(7, std::vector<double>{3, 1}) == std::vector<int>{5, 2});
    // 5 as 100:1:1 is 4.8 : 0.05 : 0.05 -> 5, 0, 0; at least 1 each takes two from the first.
    CHECK(proportional_split(5, std::vector<double>{100, 1, 1}, 1) == std::vector<int>{3, 1, 1});
    CHECK(proportional_split(2, std::vector<double>{1, 1, 1}, 1).empty());
    CHECK_THROWS_AS((void)proportional_split(4, std::vector<double>{1, 0}), input_error);
}

TEST_CASE("interleaved layout: ministages dealt round-robin (Fig. 3)") {
    // 3 and 2 layers in 2 ministages: round 0 gives group 0 two layers, group 1 one; round 1 one each.
    const auto l = interleaved_layout({3, 2}, 2);
    REQUIRE(l.size() == 2);
    CHECK(l[0] == std::vector<layer_range>{{0, 2}, {3, 4}});
    CHECK(l[1] == std::vector<layer_range>{{2, 3}, {4, 5}});
    // One ministage each: contiguous stages.
    CHECK(interleaved_layout({2, 2}, 1) == std::vector<std::vector<layer_range>>{{{0, 2}}, {{2, 4}}});
    // A group with fewer layers than ministages: no layout.
    CHECK(interleaved_layout({1, 2}, 2).empty());
}

TEST_CASE("microbatch routing: the i-th finished goes to the i-th most remaining work (§3.2)") {
    // Senders: GPU 0 two microbatches of 1 s (done at 1, 2), GPU 1 one of 3 s (done at 3).
    // Receivers: GPU 0 one microbatch of 5 s (5 left), GPU 1 two of 1 s (2, then 1 left).
    const std::vector<stage_gpu> from{{2, 1.0}, {1, 3.0}}, to{{1, 5.0}, {2, 1.0}};
    const auto r = route_microbatches(from, to);
    REQUIRE(r.size() == 3);
    CHECK(r[0].sender == 0);
    CHECK(r[0].sent_at == doctest::Approx(1.0));
    CHECK(r[0].receiver == 0);  // the most work left
    CHECK(r[1].sender == 0);
    CHECK(r[1].sender_local == 1);
    CHECK(r[1].receiver == 1);
    CHECK(r[1].receiver_local == 0);
    CHECK(r[2].sender == 1);
    CHECK(r[2].receiver == 1);
    CHECK(r[2].receiver_local == 1);
    // Every receiving slot is served once and in its own order.
    const std::vector<stage_gpu> a{{3, 0.7}, {5, 0.3}, {1, 2.0}}, b{{4, 1.1}, {4, 0.4}, {1, 3.0}};
    const auto s = route_microbatches(a, b);
    std::vector<int> next(3, 0);
    for (const auto& x : s) CHECK(x.receiver_local == next[std::size_t(x.receiver)]++);
    CHECK(next == std::vector<int>{4, 4, 1});
    CHECK_THROWS_AS((void)route_microbatches(a, std::vector<stage_gpu>{{2, 1.0}}), input_error);
}
