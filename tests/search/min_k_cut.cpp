// SPLIT min-k-cut (Zorse §3.3.2; Saran & Vazirani 1995) against hand examples and brute force.
#include <doctest/doctest.h>

#include <functional>
#include <limits>
#include <set>

#include "../support.hpp"
#include "hetplan/search/partition/boost_min_cut.hpp"
#include "hetplan/search/partition/min_k_cut.hpp"

using namespace hetplan;
using namespace hetplan::search;

TEST_CASE("min-k-cut: two machines of three GPUs, fast inside, slow between") {
    // Weight 10 inside each triangle, 1 across: the 2-cut separates them (9 cross edges of 1).
    weighted_graph g(6);
    for (int i = 0; i < 6; ++i)
        for (int j = i + 1; j < 6; ++j) g.set(i, j, (i < 3) == (j < 3) ? 10.0 : 1.0);
    const k_cut_sequence s(g);
    CHECK(s.first_k() == 1);
    CHECK(s.last_k() == 6);
    CHECK(s.partition(1) == std::vector<int>(6, 0));
    CHECK(s.partition(2) == std::vector<int>{0, 0, 0, 1, 1, 1});
    CHECK(s.cut_weight(2) == doctest::Approx(9.0));
    // Then a vertex leaves a triangle: 2 x 10 more.
    CHECK(s.cut_weight(3) == doctest::Approx(29.0));
    CHECK(s.partition(6) == std::vector<int>{0, 1, 2, 3, 4, 5});
    CHECK_THROWS_AS((void)s.partition(7), input_error);
}

TEST_CASE("min-k-cut: disconnected graphs start from their components") {
    weighted_graph g(5);
    g.set(0, 1, 2.0);
    g.set(3, 4, 1.0);  // vertex 2 alone
    const k_cut_sequence s(g);
    CHECK(s.first_k() == 3);
    CHECK(s.partition(3) == std::vector<int>{0, 0, 1, 2, 2});
    CHECK(s.cut_weight(3) == doctest::Approx(0.0));
    // The lighter edge goes first.
    CHECK(s.partition(4) == std::vector<int>{0, 0, 1, 2, 3});
    CHECK(s.cut_weight(4) == doctest::Approx(1.0));
    CHECK_THROWS_AS(g.set(0, 1, -1.0), input_error);
}

namespace {
/// Every partition of n vertices into exactly k non-empty parts: the least cut.
double brute_min_k_cut(const weighted_graph& g, int k) {
    const int n = g.size();
    std::vector<int> part(static_cast<std::size_t>(n), 0);
    double best = std::numeric_limits<double>::infinity();
    std::function<void(int, int)> rec = [&](int v, int used) {
        if (v == n) {
            if (used != k) return;
            double c = 0;
            for (int i = 0; i < n; ++i)
                for (int j = i + 1; j < n; ++j)
                    if (part[std::size_t(i)] != part[std::size_t(j)]) c += g.weight(i, j);
            best = std::min(best, c);
            return;
        }
        for (int p = 0; p <= std::min(used, k - 1); ++p) {  // canonical labelling
            part[std::size_t(v)] = p;
            rec(v + 1, std::max(used, p + 1));
        }
    };
    rec(0, 0);
    return best;
}
}  // namespace

TEST_CASE("min-k-cut: SPLIT on random small graphs — minimum 2-cuts, nested, within 2 - 2/k") {
    test::xorshift gen(0x5DEECE66Dull);
    for (int trial = 0; trial < 40; ++trial) {
        CAPTURE(trial);
        const int n = 2 + gen.below(6);
        weighted_graph g(n);
        for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j) g.set(i, j, gen.below(4) == 0 ? 0.0 : 1.0 + gen.below(9));
        const k_cut_sequence s(g);
        for (int k = s.first_k(); k <= s.last_k(); ++k) {
            const auto& p = s.partition(k);
            CHECK(std::set<int>(p.begin(), p.end()).size() == std::size_t(k));
            // The recorded weight is the cut of the partition.
            double c = 0;
            for (int i = 0; i < n; ++i)
                for (int j = i + 1; j < n; ++j)
                    if (p[std::size_t(i)] != p[std::size_t(j)]) c += g.weight(i, j);
            CHECK(s.cut_weight(k) == doctest::Approx(c));
            // SPLIT's guarantee (Saran & Vazirani): at most (2 - 2/k) times the optimum.
            const double opt = brute_min_k_cut(g, k);
            CHECK(c <= (2.0 - 2.0 / k) * opt + 1e-9);
            if (k == s.first_k() + 1) CHECK(c == doctest::Approx(opt));  // the first step is an exact minimum cut
            if (k < s.last_k()) {
                // Nested: the next partition refines this one.
                const auto& q = s.partition(k + 1);
                for (int i = 0; i < n; ++i)
                    for (int j = 0; j < n; ++j)
                        if (q[std::size_t(i)] == q[std::size_t(j)]) CHECK(p[std::size_t(i)] == p[std::size_t(j)]);
            }
        }
    }
}

TEST_CASE("minimum 2-cut: the dense Stoer-Wagner agrees with Boost.Graph's, on subsets too") {
    test::xorshift gen(0xC0FFEEull);
    for (int trial = 0; trial < 60; ++trial) {
        CAPTURE(trial);
        const int n = 2 + gen.below(30);
        weighted_graph g(n);
        for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j) g.set(i, j, 1.0 + gen.below(20) + (i / 4 == j / 4 ? 50.0 : 0.0));
        std::vector<int> vs;
        for (int v = 0; v < n; ++v)
            if (trial % 2 == 0 || gen.below(3) != 0) vs.push_back(v);
        if (vs.size() < 2) continue;
        const auto ours = minimum_two_cut(g, vs), ref = boost_minimum_two_cut(g, vs);
        CHECK(ours.weight == doctest::Approx(ref.weight));
        // Our sides are a cut of that weight, of the given vertices.
        std::vector<bool> side(static_cast<std::size_t>(n));
        for (int v : ours.side_a) side[std::size_t(v)] = true;
        double c = 0;
        for (int a : ours.side_a)
            for (int b : ours.side_b) c += g.weight(a, b);
        CHECK(c == doctest::Approx(ours.weight));
        CHECK(ours.side_a.size() + ours.side_b.size() == vs.size());
        CHECK_FALSE(ours.side_b.empty());
        CHECK(ours.side_a.front() == vs.front());
    }
}
