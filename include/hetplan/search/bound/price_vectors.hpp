#pragma once
// Whether replicas can be drawn from the GPUs left, even fractionally: row r needs n_r replicas,
// each on one GPU type t it allows at tp_r[t] GPUs (0: not that type), and type t has left[t]
// GPUs. By LP duality the answer is no exactly when some prices y >= 0 per GPU make serving
// every row at its cheapest type dearer than the GPUs left are worth:
//   sum_r n_r min_t y_t tp_r[t] > sum_t y_t left[t].
// The left side is concave and piecewise linear, so the worst prices are extreme ones, fixed by
// ties: some types priced 0, the others joined by a tree of ties y_t tp_a = y_u tp_b between two
// options of one row. TP degrees are powers of two, so every such y is a power of two per type.
// Hall's condition (prices 0 or 1 on sets of types) is the special case of equal prices; a row
// that may take type a at TP 1 or type b at TP 2 needs prices 2 and 1 to be counted right.
// Used by the instance floors (the whole pool, instance_floors.hpp) and by the pattern search's
// nodes (the GPUs a partial solution leaves, solve/pattern_search.hpp).
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetplan/search/cells.hpp"
#include "hetplan/search/memo.hpp"

namespace hetplan::search {

/// Prices per GPU type (powers of two, 0: free).
using price_vector = std::array<std::int64_t, max_types>;

/// Which ties two options of one row can make: for each ordered pair of types (t, u), the
/// exponent differences log2 y_t - log2 y_u at which an option of t and one of u cost the same
/// (bit d + 16 for difference d).
struct price_ties {
    std::array<std::array<std::uint32_t, max_types>, max_types> diff{};
    friend bool operator==(const price_ties&, const price_ties&) = default;

    /// Type t at TP a and type u at TP b in one row.
    void tie(std::size_t t, int a, std::size_t u, int b) {
        if (t == u) return;
        const int d = std::bit_width(unsigned(b)) - std::bit_width(unsigned(a));  // y_t a = y_u b
        if (d < -15 || d > 15) return;  // beyond any TP ratio (a tie left out only weakens the test)
        diff[t][u] |= 1u << (d + 16);
        diff[u][t] |= 1u << (16 - d);
    }
    /// Every pair of types a row allows (row[t]: its TP for type t, 0: not allowed).
    template <class Row>
    void add_row(const Row& row, std::size_t T) {
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t u = t + 1; u < T; ++u)
                if (row[t] > 0 && row[u] > 0) tie(t, row[t], u, row[u]);
    }
};

/// extreme_prices' cap on distinct vectors.
inline constexpr std::size_t price_cap = 4096;

/// The extreme price vectors the ties allow, replacing `out`: trees of ties grown a type at a
/// time (each vector normalised to a least nonzero price of 1 and kept once per level). With
/// `hall`, every 0/1 vector comes first (Hall's sets: with five or more types they are not all
/// trees of ties, and the cap must not drop them); without it, vectors whose nonzero prices are
/// all equal are left out (a caller that tests Hall's sets itself). At most `most` distinct
/// vectors are kept: fewer only weaken the test (it may answer "fits" more often), so a floor
/// built on it stays a floor; with up to four types and TP ratios up to 16 the cap is not reached
/// (2,711 vectors with every tie and Hall's; 4,765 with ratios to 32, tests/search/price_vectors.cpp).
inline void extreme_prices(const price_ties& ties, std::size_t T, bool hall, std::vector<price_vector>& out, std::size_t most = price_cap) {
    out.clear();
    constexpr int span = 16;  // largest price ratio kept: 2^16
    constexpr std::int8_t none = std::numeric_limits<std::int8_t>::min();
    using exponents = std::array<std::int8_t, max_types>;
    auto price_of = [&](const exponents& e) {
        price_vector y{};
        for (std::size_t t = 0; t < T; ++t) y[t] = e[t] == none ? 0 : std::int64_t{1} << e[t];
        return y;
    };
    if (hall)
        for (std::size_t u = 1; u < (std::size_t{1} << T) && out.size() < most; ++u) {
            price_vector y{};
            for (std::size_t t = 0; t < T; ++t) y[t] = u >> t & 1u;
            out.push_back(y);
        }
    std::vector<exponents> level, next;
    for (std::size_t r = 0; r < T; ++r) {
        exponents e;
        e.fill(none);
        e[r] = 0;
        level.push_back(e);
    }
    for (std::size_t k = 2; k <= T && !level.empty(); ++k) {
        next.clear();
        // (A level grown from part of the last only weakens the test, as the cap does.)
        for (std::size_t n = 0; n < level.size() && next.size() < 16 * most; ++n) {
            const exponents& e = level[n];
            for (std::size_t u = 0; u < T; ++u) {
                if (e[u] != none) continue;
                for (std::size_t t = 0; t < T; ++t) {
                    if (e[t] == none) continue;
                    for (std::uint32_t m = ties.diff[t][u]; m != 0; m &= m - 1) {
                        exponents g = e;
                        int v = e[t] - (std::countr_zero(m) - 16), lo = std::min(v, 0), hi = v;
                        for (std::size_t q = 0; q < T; ++q)
                            if (g[q] != none) hi = std::max(hi, int(g[q]));
                        if (hi - lo > span) continue;
                        g[u] = static_cast<std::int8_t>(v);
                        for (std::size_t q = 0; q < T; ++q)
                            if (g[q] != none) g[q] = static_cast<std::int8_t>(g[q] - lo);
                        next.push_back(g);
                    }
                }
            }
        }
        std::sort(next.begin(), next.end());
        next.erase(std::unique(next.begin(), next.end()), next.end());
        for (const exponents& e : next) {
            if (out.size() >= most) return;
            bool equal = true;
            for (std::size_t q = 0; q < T; ++q) equal = equal && (e[q] == none || e[q] == 0);
            if (!equal) out.push_back(price_of(e));  // all equal: a 0/1 vector, Hall's (above, with `hall`)
        }
        level.swap(next);
    }
}

/// extreme_prices kept by their ties, up to `most_vectors` vectors in all (then forgotten and
/// begun again): instances of one search repeat their ties (the same TP degrees per type), and
/// growing the trees was a tenth of a planning run. Kept for the last ties alone, a scan over
/// 256 TP levels (four types) grew them again at nearly every instance: 35,342 times for 895
/// distinct ties (4 zones x 16 GPUs of 4 types, 40,000 candidates), 8 % of the run.
class price_cache {
public:
    explicit price_cache(std::size_t most_vectors = std::size_t{1} << 17) : most_(most_vectors) {}
    // A copy points at its own entries (instance_bound, which holds one, is copied); a move
    // keeps the entries where they are (flat_memo's blocks never move).
    price_cache(const price_cache& o) : kept_(o.kept_), now_key_(o.now_key_), most_(o.most_), vectors_(o.vectors_) {
        if (o.now_ != nullptr) now_ = kept_.find(now_key_);
    }
    price_cache(price_cache&& o) noexcept
        : kept_(std::move(o.kept_)), now_(std::exchange(o.now_, nullptr)), now_key_(o.now_key_), most_(o.most_), vectors_(std::exchange(o.vectors_, 0)) {}
    price_cache& operator=(const price_cache& o) {
        if (this != &o) *this = price_cache(o);
        return *this;
    }
    price_cache& operator=(price_cache&& o) noexcept {
        if (this != &o) {
            kept_ = std::move(o.kept_);
            now_ = std::exchange(o.now_, nullptr);
            now_key_ = o.now_key_, most_ = o.most_, vectors_ = std::exchange(o.vectors_, 0);
        }
        return *this;
    }
    ~price_cache() = default;

    [[nodiscard]] const std::vector<price_vector>& operator()(const price_ties& ties, std::size_t T, bool hall) {
        const key k{ties, static_cast<std::uint32_t>(T), hall ? 1u : 0u};
        if (now_ != nullptr && now_key_ == k) return now_->prices;
        now_ = kept_.find(k);
        if (now_ == nullptr) {
            if (vectors_ > most_) kept_.clear(), vectors_ = 0;  // (no address handed out survives a new ask)
            now_ = kept_.insert(k, entry{});
            extreme_prices(ties, T, hall, now_->prices);
            now_->complete = now_->prices.size() < price_cap;  // extreme_prices' cap not reached
            vectors_ += now_->prices.size();
        }
        now_key_ = k;
        return now_->prices;
    }
    /// The prices of the last ties asked.
    [[nodiscard]] const std::vector<price_vector>& last() const { return now_ != nullptr ? now_->prices : none_; }
    /// Whether last() holds every extreme vector of its ties (the cap was not reached): only
    /// then is a test's answer the LP's, whatever list found it (replicas_memo).
    [[nodiscard]] bool complete() const { return now_ != nullptr && now_->complete; }
    /// Distinct ties kept.
    [[nodiscard]] std::size_t size() const { return kept_.size(); }

private:
    struct key {
        price_ties ties;
        std::uint32_t T = 0, hall = 0;
        friend bool operator==(const key&, const key&) = default;
    };
    static_assert(std::has_unique_object_representations_v<key>, "price cache key must have no padding");
    struct entry {
        bool complete = false;
        std::vector<price_vector> prices;
    };
    flat_memo<key, entry, bytes_hash<key>> kept_{64};
    entry* now_ = nullptr;
    key now_key_{};
    std::size_t most_, vectors_ = 0;
    std::vector<price_vector> none_;
};

/// What one replica of a row costs at prices y: its cheapest allowed type (row[t], the TP for
/// type t; 0: not allowed). The largest int64 where the row allows no type.
template <class Row>
[[nodiscard]] std::int64_t cheapest_at(const price_vector& y, const Row& row, std::size_t T) {
    std::int64_t cheapest = std::numeric_limits<std::int64_t>::max();
    for (std::size_t t = 0; t < T; ++t)
        if (row[t] > 0) cheapest = std::min<std::int64_t>(cheapest, y[t] * row[t]);
    return cheapest;
}

/// Whether the rows fit the GPUs left at every one of the prices: `rows` a range of (row, n)
/// pairs, row[t] the row's TP for type t (0: not allowed), n its replicas.
template <class Rows, class Left>
[[nodiscard]] bool fits_at_prices(const std::vector<price_vector>& prices, const Rows& rows, const Left& left, std::size_t T) {
    for (const price_vector& y : prices) {
        std::int64_t have = 0, need = 0;
        for (std::size_t t = 0; t < T; ++t) have += y[t] * left[t];
        for (const auto& [row, n] : rows) {
            const std::int64_t cheapest = cheapest_at(y, row, T);
            if (cheapest == std::numeric_limits<std::int64_t>::max()) return false;  // a row no type serves
            need += cheapest * n;
        }
        if (need > have) return false;
    }
    return true;
}

/// The most times `most` at most that the rows fit the GPUs left at every one of the prices
/// (fits_at_prices' test is linear in a common factor of the rows' replicas: s * need <= have
/// at each price); -1 where a row no type serves.
template <class Rows, class Left>
[[nodiscard]] long most_at_prices(const std::vector<price_vector>& prices, const Rows& rows, const Left& left, std::size_t T, long most) {
    for (const price_vector& y : prices) {
        std::int64_t have = 0, need = 0;
        for (std::size_t t = 0; t < T; ++t) have += y[t] * left[t];
        for (const auto& [row, n] : rows) {
            const std::int64_t cheapest = cheapest_at(y, row, T);
            if (cheapest == std::numeric_limits<std::int64_t>::max()) return -1;
            need += cheapest * n;
        }
        if (need > 0) most = std::min<long>(most, static_cast<long>(have / need));
    }
    return most;
}

}  // namespace hetplan::search
