// The fractional-assignment test by extreme prices (search/bound/price_vectors.hpp) against the
// LP it stands for, solved by small_ilp's simplex: the same answer on random rows, with Hall's
// 0/1 prices included (the instance floors' use) and with them tested apart (the pattern
// search's nodes).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "../support.hpp"
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
        const std::size_t T = 1 + static_cast<std::size_t>(gen.below(4));
        rows_t rows(static_cast<std::size_t>(1 + gen.below(5)));
        for (auto& [r, n] : rows) {
            r.fill(0);
            while (std::all_of(r.begin(), r.begin() + std::ptrdiff_t(T), [](int w) { return w == 0; }))
                for (std::size_t t = 0; t < T; ++t) r[t] = gen.below(3) ? 1 << gen.below(4) : 0;
            n = 1 + gen.below(20);
        }
        std::array<long, max_types> left{};
        for (std::size_t t = 0; t < T; ++t) left[t] = gen.below(120);
        price_ties ties;
        for (const auto& [r, n] : rows) ties.add_row(r, T);
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
    // Four types, every TP ratio up to 8 tied between every pair: the vectors stay well under
    // the cap (the test is exact there).
    price_ties every;
    for (std::size_t t = 0; t < 4; ++t)
        for (std::size_t u = 0; u < 4; ++u)
            for (int a = 1; a <= 8; a *= 2)
                for (int b = 1; b <= 8; b *= 2) every.tie(t, a, u, b);
    extreme_prices(every, 4, true, p);
    CHECK(p.size() < 4096);
    MESSAGE(p.size() << " extreme price vectors with every tie among four types");
}
