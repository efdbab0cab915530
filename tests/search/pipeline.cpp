// Zorse's pipeline pieces (Zorse §3.2, §3.3.3): shares by speed, the interleaved layout, and the
// cross-stage microbatch routing, on hand-worked cases.
#include <doctest/doctest.h>

#include "../support.hpp"
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

TEST_CASE("routed timeline: §3.2's routing keeps a heterogeneous pipeline streaming") {
    // Stage 0: a fast GPU (1 s, 6 microbatches) and a slow one (3 s, 2); stage 1: one slow GPU
    // (3 s, 2 microbatches) and a fast one (1 s, 6). Each stage's busiest GPU works 6 s.
    const std::vector<std::vector<stage_gpu>> chain{{{6, 1.0}, {2, 3.0}}, {{2, 3.0}, {6, 1.0}}};
    const auto t = routed_timeline(chain, 0.0);
    REQUIRE(t.busy.size() == 2);
    REQUIRE(t.routes.size() == 1);
    // By hand: stage 0 completes at 1, 2, 3 (fast), 3 (slow), 4, 5, 6 (fast), 6 (slow). Slots by
    // remaining work: slow 6, fast 6, 5, 4, slow 3, fast 3, 2, 1. So the slow GPU of stage 1
    // gets the microbatches done at 1 and 4 and runs 1-4, 4-7; the fast one those done at 2, 3,
    // 3, 5, 6, 6 and runs 2-3, 3-4, 4-5, 5-6, 6-7, 7-8.
    CHECK(t.busy[1][0] == std::vector<std::pair<double, double>>{{1, 4}, {4, 7}});
    CHECK(t.busy[1][1] == std::vector<std::pair<double, double>>{{2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}});
    CHECK(t.makespan == doctest::Approx(8.0));
    // Every microbatch runs once on each stage, after it arrived, one at a time per GPU.
    for (std::size_t s = 0; s < t.busy.size(); ++s)
        for (std::size_t g = 0; g < t.busy[s].size(); ++g) {
            CHECK(t.busy[s][g].size() == std::size_t(chain[s][g].microbatches));
            for (std::size_t j = 1; j < t.busy[s][g].size(); ++j) CHECK(t.busy[s][g][j].first >= t.busy[s][g][j - 1].second - 1e-12);
        }
    // A p2p delay shifts stage 1 by at least that much; mismatched counts are an error.
    CHECK(routed_timeline(chain, 0.5).makespan >= t.makespan + 0.5 - 1e-12);
    const std::vector<std::vector<stage_gpu>> bad{{{2, 1.0}}, {{3, 1.0}}};
    CHECK_THROWS_AS((void)routed_timeline(bad, 0.0), input_error);
}

TEST_CASE("routed timeline: never beats the busiest GPU, stays near the latency model's streaming estimate") {
    test::xorshift gen(77);
    for (int trial = 0; trial < 50; ++trial) {
        CAPTURE(trial);
        const int S = 1 + gen.below(4), M = 4 + gen.below(20);
        std::vector<std::vector<stage_gpu>> chain(static_cast<std::size_t>(S));
        double busiest = 0, fill = 0;
        for (auto& st : chain) {
            // Microbatches by speed, at least one per GPU (as the planner splits them).
            const int G = 1 + gen.below(4);
            std::vector<double> t, rate;
            for (int g = 0; g < G; ++g) t.push_back(0.5 + gen.below(8) * 0.25), rate.push_back(1 / t.back());
            const auto n = proportional_split(M, rate, 1);
            REQUIRE(n.size() == t.size());
            double worst = 0, slowest = 0;
            for (int g = 0; g < G; ++g) {
                st.push_back({n[std::size_t(g)], t[std::size_t(g)]});
                worst = std::max(worst, n[std::size_t(g)] * t[std::size_t(g)]), slowest = std::max(slowest, t[std::size_t(g)]);
            }
            busiest = std::max(busiest, worst);
            fill += slowest;
        }
        const auto t = routed_timeline(chain, 0.0);
        CHECK(t.makespan >= busiest - 1e-9);
        // Streaming (the latency model's shape): the busiest stage's work plus one microbatch
        // on every stage's slowest GPU for filling and draining.
        CHECK(t.makespan <= busiest + fill + 1e-9);
    }
}
