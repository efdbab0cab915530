// The fractional-assignment test by extreme prices (search/bound/price_vectors.hpp) against the
// LP it stands for, solved by small_ilp's simplex: the same answer on random rows, with Hall's
// 0/1 prices included (the instance floors' use) and with them tested apart (the pattern
// search's nodes); its memo as a number of replicas (search/bound/floor_memo.hpp); and the
// capped list (four types, TP ratios of 32).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include "../support.hpp"
#include "hetplan/search/bound/floor_memo.hpp"
#include "hetplan/search/bound/price_vectors.hpp"
#include "hetplan/search/solve/small_ilp.hpp"

using namespace hetplan;
using namespace hetplan::search;

namespace {

using row = std::array<int, max_types>;
using rows_t = std::vector<std::pair<row, long>>;

/// Whether x[r][t] >= 0 exist with sum_t x[r][t] = n_r and sum_r row_r[t] x[r][t] <= left[t].
bool lp_fits(const rows_t& rows, const std::array<long, max_types>& left, std::size_t T) {
    std::vector<std::pair<std::size_t, std::size_t>> var;
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::size_t t = 0; t < T; ++t)
            if (rows[r].first[t] > 0) var.emplace_back(r, t);
    small_ilp lp;
    lp.reset(var.size());
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::size_t k = lp.add_row(small_ilp::sense::eq, double(rows[r].second));
        for (std::size_t j = 0; j < var.size(); ++j)
            if (var[j].first == r) lp.coef(k, j, 1);
    }
    for (std::size_t t = 0; t < T; ++t) {
        const std::size_t k = lp.add_row(small_ilp::sense::le, double(left[t]));
        for (std::size_t j = 0; j < var.size(); ++j)
            if (var[j].second == t) lp.coef(k, j, rows[var[j].first].first[t]);
    }
    return lp.relaxation().has_value();
}

/// 1-4 GPU types, 1..most_rows rows (each allows some type, at TP 1-8) with 1..most_n replicas,
/// 0..most_gpus-1 GPUs of each type, and the rows' ties.
struct fit_case {
    std::size_t T;
    rows_t rows;
    std::array<long, max_types> left;
    price_ties ties;
};
fit_case random_case(test::xorshift& gen, int most_rows, int most_n, int most_gpus) {
    fit_case c{1 + static_cast<std::size_t>(gen.below(4)), {}, {}, {}};
    c.rows.resize(static_cast<std::size_t>(1 + gen.below(most_rows)));
    for (auto& [r, n] : c.rows) {
        r.fill(0);
        while (std::all_of(r.begin(), r.begin() + std::ptrdiff_t(c.T), [](int w) { return w == 0; }))
            for (std::size_t t = 0; t < c.T; ++t) r[t] = gen.below(3) ? 1 << gen.below(4) : 0;
        n = 1 + gen.below(most_n);
    }
    for (std::size_t t = 0; t < c.T; ++t) c.left[t] = gen.below(most_gpus);
    for (const auto& [r, n] : c.rows) c.ties.add_row(r, c.T);
    return c;
}

/// Every tie between TP degrees 1..most of any two of four types.
price_ties every_tie(int most) {
    price_ties ties;
    for (std::size_t t = 0; t < 4; ++t)
        for (std::size_t u = 0; u < 4; ++u)
            for (int a = 1; a <= most; a *= 2)
                for (int b = 1; b <= most; b *= 2) ties.tie(t, a, u, b);
    return ties;
}

/// Hall's condition over sets of types, the pattern search's first test.
bool hall_fits(const rows_t& rows, const std::array<long, max_types>& left, std::size_t T) {
    for (std::size_t u = 1; u < (std::size_t{1} << T); ++u) {
        long need = 0, have = 0;
        for (std::size_t t = 0; t < T; ++t)
            if (u >> t & 1u) have += left[t];
        for (const auto& [r, n] : rows) {
            bool inside = true;
            int w = 0;
            for (std::size_t t = 0; t < T; ++t)
                if (r[t] > 0) inside = inside && (u >> t & 1u), w = w == 0 ? r[t] : std::min(w, r[t]);
            if (inside) need += n * w;
        }
        if (need > have) return false;
    }
    return true;
}

}  // namespace

TEST_CASE("extreme prices: the fractional-assignment test equals the LP on random rows") {
    test::xorshift gen(0x9e3779b97f4a7c15ull);
    int tight = 0, beyond_hall = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        const auto [T, rows, left, ties] = random_case(gen, 5, 20, 120);
        std::vector<price_vector> all, beyond;
        extreme_prices(ties, T, true, all);
        extreme_prices(ties, T, false, beyond);
        const bool lp = lp_fits(rows, left, T), hall = hall_fits(rows, left, T);
        CAPTURE(trial);
        CHECK(fits_at_prices(all, rows, left, T) == lp);
        CHECK((hall && fits_at_prices(beyond, rows, left, T)) == lp);
        tight += lp ? 0 : 1;
        beyond_hall += hall && !lp ? 1 : 0;
    }
    // The cases must exercise both answers and the prices beyond Hall's.
    CHECK(tight > 300);
    CHECK(beyond_hall > 30);
    MESSAGE(tight << " of 3000 random cases do not fit; Hall's sets miss " << beyond_hall << " of them");
}

TEST_CASE("extreme prices: a hand case and the count with every tie") {
    // Hand calculation: a stage row allows type 0 at TP 1 or type 1 at TP 2; 40 GPUs of type 0,
    // 14 of type 1, so at most 40 + 7 = 47 replicas. 39 fit; 52 do not, which prices 2 (type 0)
    // and 1 (type 1) show: 52 x 2 = 104 > 2 x 40 + 14 = 94. Hall's sets count 52 <= 54 GPUs.
    const rows_t three{{{1, 2, 0, 0}, 39}}, four{{{1, 2, 0, 0}, 52}};
    const std::array<long, max_types> left{40, 14, 0, 0};
    price_ties ties;
    ties.add_row(three.front().first, 2);
    std::vector<price_vector> p;
    extreme_prices(ties, 2, true, p);
    CHECK(fits_at_prices(p, three, left, 2));
    CHECK_FALSE(fits_at_prices(p, four, left, 2));
    CHECK(hall_fits(four, left, 2));  // 52 <= 54: Hall's sets alone would let it through
    // Four types, every TP ratio up to 8 tied between every pair: the vectors equal a brute
    // force over all exponents 0..9 per type (or a price of 0) whose tight ties join the priced
    // types, normalised to a least exponent of 0. Nothing is cut (the cap counts distinct ones).
    const price_ties every = every_tie(8);
    extreme_prices(every, 4, false, p);
    std::vector<price_vector> brute;
    for (int code = 0; code < 11 * 11 * 11 * 11; ++code) {
        std::array<int, 4> e{};
        int c = code, lo = 99, n = 0;
        for (int& x : e) x = c % 11 - 1, c /= 11;  // -1: price 0
        for (int x : e)
            if (x >= 0) lo = std::min(lo, x), ++n;
        if (n < 2 || lo != 0) continue;
        // Joined by ties (every exponent difference up to 3 ties here), and not all equal.
        std::array<bool, 4> seen{};
        int first = 0;
        while (e[static_cast<std::size_t>(first)] < 0) ++first;
        seen[static_cast<std::size_t>(first)] = true;
        for (int round = 0; round < 4; ++round)
            for (std::size_t t = 0; t < 4; ++t)
                for (std::size_t u = 0; u < 4; ++u)
                    if (seen[t] && e[u] >= 0 && std::abs(e[t] - e[u]) <= 3) seen[u] = true;
        bool joined = true, equal = true;
        for (std::size_t t = 0; t < 4; ++t) joined = joined && (e[t] < 0 || seen[t]), equal = equal && (e[t] <= 0);
        if (!joined || equal) continue;
        price_vector y{};
        for (std::size_t t = 0; t < 4; ++t) y[t] = e[t] < 0 ? 0 : std::int64_t{1} << e[t];
        brute.push_back(y);
    }
    std::sort(p.begin(), p.end());
    std::sort(brute.begin(), brute.end());
    CHECK(p.size() == brute.size());
    CHECK(p == brute);
    MESSAGE(p.size() << " extreme price vectors beyond Hall's with every tie among four types");
    // A case those prices decide and Hall's sets do too: prices (0, 1, 0, 1) need 14 GPUs' worth
    // of types 1 and 3 (7 replicas at TP 2) where 9 are left (hand calculation).
    const rows_t dense{{{1, 2, 0, 0}, 10}, {{0, 2, 0, 2}, 7}, {{1, 4, 0, 0}, 9}};
    const std::array<long, max_types> few{60, 7, 19, 2};
    extreme_prices(every, 4, true, p);
    CHECK_FALSE(fits_at_prices(p, dense, few, 4));
    CHECK_FALSE(lp_fits(dense, few, 4));
    // Hall's 0/1 vectors come first with `hall`, all of them, whatever the cap.
    extreme_prices(every, 4, true, p, 15);
    CHECK(p.size() == 15);
    for (const price_vector& y : p) CHECK(std::all_of(y.begin(), y.end(), [](std::int64_t v) { return v <= 1; }));
}

TEST_CASE("replicas memo: the most replicas the LP fits, the same from any instance's prices, kept per (rows, pool)") {
    // The straggler floor asks whether D replicas of every stage fit; instances differing only
    // in D share one answer: the largest D the LP admits. Checked against the LP at D and D + 1,
    // with the rows' own prices and with every tie's (an instance whose other stages add ties),
    // and asked again after other keys (hits) and after a clear.
    test::xorshift gen(0x51ed270b27a4f3c1ull);
    const price_ties every = every_tie(8);
    replicas_memo memo;
    struct asked {
        rows_t rows;
        std::array<long, max_types> pool;
        std::size_t T;
        std::int64_t most;
    };
    std::vector<asked> seen;
    int none = 0, several = 0;
    for (int trial = 0; trial < 1500; ++trial) {
        const fit_case c = random_case(gen, 4, 4, 160);  // rows: (row, stages)
        const std::size_t T = c.T;
        const rows_t& rows = c.rows;
        const auto& pool = c.left;
        const price_ties& ties = c.ties;
        std::vector<price_vector> own, all;
        extreme_prices(ties, T, true, own);
        extreme_prices(every, T, true, all);
        const std::int64_t most = memo(rows, pool, T, own);
        CAPTURE(trial);
        REQUIRE(most >= 0);
        REQUIRE(most < 1000);  // every row takes a GPU per replica at least
        auto times = [&](std::int64_t D) {
            rows_t scaled = rows;
            for (auto& [r, n] : scaled) n *= D;
            return scaled;
        };
        if (most > 0) CHECK(lp_fits(times(most), pool, T));
        CHECK_FALSE(lp_fits(times(most + 1), pool, T));
        replicas_memo fresh;
        CHECK(fresh(rows, pool, T, all) == most);
        none += most == 0 ? 1 : 0;
        several += most >= 3 ? 1 : 0;
        seen.push_back({rows, pool, T, most});
    }
    for (const asked& a : seen) CHECK(memo(a.rows, a.pool, a.T, {}) == a.most);  // hits: no price is read
    memo.clear();
    std::vector<price_vector> p;
    price_ties ties;
    for (const auto& [r, n] : seen.front().rows) ties.add_row(r, seen.front().T);
    extreme_prices(ties, seen.front().T, true, p);
    CHECK(memo(seen.front().rows, seen.front().pool, seen.front().T, p) == seen.front().most);
    CHECK(none > 50);
    CHECK(several > 300);
}

TEST_CASE("extreme prices: TP ratios of 32 among four types reach the cap, the cache reports the list cut, and a cut list's memo can exceed the LP's") {
    // Every tie among four types gives 2,711 vectors (Hall's 15 included) up to ratio 16, under
    // price_cap: the cache calls the list complete and replicas_memo may keep its answer. Up to
    // ratio 32 there are 4,765, over it: the list is cut, the cache says so, and the instance
    // floors test those prices directly instead of through the memo (instance_floors.hpp).
    price_cache cache;
    (void)cache(every_tie(16), 4, true);
    CHECK(cache.complete());
    CHECK(cache.last().size() == 2711);
    const price_ties to32 = every_tie(32);
    (void)cache(to32, 4, true);
    CHECK_FALSE(cache.complete());
    CHECK(cache.last().size() == price_cap);
    const std::vector<price_vector> cut = cache.last();
    std::vector<price_vector> uncut;
    extreme_prices(to32, 4, true, uncut, 1'000'000);
    CHECK(uncut.size() == 4765);
    CHECK(std::equal(cut.begin(), cut.end(), uncut.begin()));  // the cut keeps a prefix: Hall's first
    // Why the memo needs complete(): here the cut list admits 14 replicas, the LP 13 (found by a
    // random search; the LP's answers by small_ilp). The memo keeps one number per (rows, pool),
    // so a cut list's answer would stand for later instances whose list is complete.
    const rows_t rows{{{2, 0, 0, 4}, 9}, {{1, 16, 32, 0}, 10}, {{0, 2, 8, 32}, 4}};
    const std::array<long, max_types> pool{56, 1103, 565, 1526};
    auto times = [&](long D) {
        rows_t scaled = rows;
        for (auto& [r, n] : scaled) n *= D;
        return scaled;
    };
    CHECK(lp_fits(times(13), pool, 4));
    CHECK_FALSE(lp_fits(times(14), pool, 4));
    CHECK(fits_at_prices(cut, times(14), pool, 4));
    CHECK_FALSE(fits_at_prices(uncut, times(14), pool, 4));
    CHECK(replicas_memo{}(rows, pool, 4, cut) == 14);
    CHECK(replicas_memo{}(rows, pool, 4, uncut) == 13);
}

TEST_CASE("price cache: each ties' prices kept, the same as grown afresh, until the vectors kept pass the bound") {
    // Ties asked in turn, as a scan over TP levels asks them: each answer equals extreme_prices
    // grown for those ties alone, and asking again finds it kept (no new entry).
    std::vector<price_ties> asked;
    for (int a : {1, 2, 4})
        for (int b : {1, 2, 8}) {
            price_ties t;
            t.tie(0, a, 1, b);
            t.tie(1, b, 2, 2);
            asked.push_back(t);
        }
    asked.push_back(every_tie(16));
    price_cache cache;
    for (int round = 0; round < 2; ++round)
        for (std::size_t k = 0; k < asked.size(); ++k)
            for (bool hall : {true, false}) {
                std::vector<price_vector> fresh;
                extreme_prices(asked[k], 4, hall, fresh);
                CHECK(cache(asked[k], 4, hall) == fresh);
                CHECK(cache.last() == fresh);
                CHECK(cache.complete());
            }
    std::vector<price_ties> distinct = asked;
    std::sort(distinct.begin(), distinct.end(), [](const price_ties& x, const price_ties& y) { return x.diff < y.diff; });
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    CHECK(cache.size() == 2 * distinct.size());  // with and without Hall's, kept from the first round
    // A bound of 2,000 vectors: every_tie(16)'s 2,711 pass it, so the next new ties start afresh.
    price_cache small(2000);
    (void)small(asked[0], 4, true);
    (void)small(every_tie(16), 4, true);
    CHECK(small.size() == 2);
    (void)small(asked[1], 4, true);
    CHECK(small.size() == 1);
    std::vector<price_vector> fresh;
    extreme_prices(asked[1], 4, true, fresh);
    CHECK(small.last() == fresh);
}

TEST_CASE("price cache: a copy answers from its own entries, a move keeps them") {
    // instance_bound holds a price_cache and is copied (a cache that pointed into the original's
    // entries would read freed memory once the original is gone; the sanitizer build checks).
    price_ties t;
    t.tie(0, 1, 1, 4);
    std::vector<price_vector> fresh;
    extreme_prices(t, 3, true, fresh);
    std::optional<price_cache> original(std::in_place);
    (void)(*original)(every_tie(8), 4, true);
    (void)(*original)(t, 3, true);
    price_cache copy = *original;
    price_cache assigned;
    assigned = *original;
    CHECK(copy.last().data() != original->last().data());  // its own entries
    CHECK(assigned.last().data() != original->last().data());
    original.reset();
    CHECK(copy.last() == fresh);
    CHECK(copy.complete());
    CHECK(copy.size() == 2);
    CHECK(assigned.last() == fresh);
    price_cache moved = std::move(copy);
    CHECK(moved.last() == fresh);
    CHECK(moved(t, 3, true) == fresh);
    CHECK(moved.size() == 2);
}
