#pragma once
// Memos of the transfer floors that Sailor's instance floors and pattern search price on whole
// endpoint sets (bound/instance_floors.hpp), and of the pool test behind its straggler floor. A
// floor over a set tries every pair of its endpoints; the stages of thousands of instances (and
// of the patterns) repeat a few sets, so each set is interned to a small id once and the floors
// are kept per (ids, replicas, bytes). Every key is kept whole, so a hit returns the value the
// model itself gave: the memos change how fast a floor is found, never its value. They belong
// to one problem (endpoints name its zones and GPU types); whoever owns them clears them for
// another.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "hetplan/core/endpoint.hpp"
#include "hetplan/hardware/collectives.hpp"
#include "hetplan/plan/problem.hpp"
#include "hetplan/search/bound/price_vectors.hpp"
#include "hetplan/search/model_probe.hpp"

namespace hetplan::search {

/// Sequences of T (endpoint sets, the keys of replicas_memo), each given a dense id the first
/// time it is seen. Open addressing on the sequence's hash (of each element's 64-bit `word`),
/// the sequences kept back to back; it grows with the sequences, and stops adding at `max_sets`
/// (intern then answers `none`, and a caller prices the sequence directly).
template <class T, class Word>
class interned_sequences {
public:
    static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    static constexpr std::size_t max_sets = std::size_t{1} << 16;

    void clear() {
        items_.clear(), start_.assign(1, 0), hash_.clear();
        std::fill(table_.begin(), table_.end(), none);
    }
    [[nodiscard]] std::size_t size() const { return hash_.size(); }
    [[nodiscard]] std::span<const T> at(std::uint32_t id) const { return {items_.data() + start_[id], items_.data() + start_[id + 1]}; }

    /// The sequence's id, or none where it is not kept (with `add`: added, while there is room).
    [[nodiscard]] std::uint32_t find(std::span<const T> s, bool add = false) {
        std::uint64_t h = 0x9E3779B97F4A7C15ull * (s.size() + 1);
        for (const T& e : s) h = (h ^ (h >> 29) ^ Word{}(e)) * 0xBF58476D1CE4E5B9ull;
        if (table_.empty()) table_.assign(64, none);
        const std::size_t mask = table_.size() - 1;
        for (std::size_t k = (h >> 32) & mask;; k = (k + 1) & mask) {
            const std::uint32_t id = table_[k];
            if (id == none) break;
            if (hash_[id] == h && std::ranges::equal(at(id), s)) return id;
        }
        if (!add || size() >= max_sets) return none;
        const auto id = static_cast<std::uint32_t>(size());
        items_.insert(items_.end(), s.begin(), s.end());
        start_.push_back(static_cast<std::uint32_t>(items_.size()));
        hash_.push_back(h);
        if (2 * size() > table_.size()) rehash(2 * table_.size());
        else place(id);
        return id;
    }
    [[nodiscard]] std::uint32_t intern(std::span<const T> s) { return find(s, true); }

private:
    void place(std::uint32_t id) {
        const std::size_t mask = table_.size() - 1;
        std::size_t k = (hash_[id] >> 32) & mask;
        while (table_[k] != none) k = (k + 1) & mask;
        table_[k] = id;
    }
    void rehash(std::size_t slots) {
        table_.assign(slots, none);
        for (std::uint32_t id = 0; id < size(); ++id) place(id);
    }

    std::vector<T> items_;
    std::vector<std::uint32_t> start_{0};
    std::vector<std::uint64_t> hash_;
    std::vector<std::uint32_t> table_;
};

struct endpoint_word {
    [[nodiscard]] std::uint64_t operator()(const endpoint& e) const { return e.key(); }
};
/// Endpoint sets (a stage's endpoints, as an ordered sequence) by id.
using endpoint_sets = interned_sequences<endpoint, endpoint_word>;

/// fits_at_prices (price_vectors.hpp) as a number, kept: the most replicas D such that `rows`
/// ((row, stages) pairs), each stage taking D replicas, fit `pool` at every price (fits <=>
/// D need(y) <= have(y) at each y), 0 where none do. The caller passes a complete list
/// (price_cache::complete: every tie's extreme prices, so up to four types with TP ratios up to
/// 16), so the answer is the LP's, whichever instance's prices found it, and it is kept per
/// (rows, pool): instances of one (P, mbs) differ in D and repeat their rows at each threshold
/// (2,048 GPUs: 9 in 10 of the straggler floor's tests at start-up). Its caller
/// (fractional_assignment_fits) asks it only then, and with up to four types.
class replicas_memo {
public:
    void clear() { keys_.clear(), most_.clear(); }

    template <class Rows, class Pool>
    [[nodiscard]] std::int64_t operator()(const Rows& rows, const Pool& pool, std::size_t T, const std::vector<price_vector>& prices) {
        if (T > 4) return most(rows, pool, T, prices);
        key_.assign(1, T);
        for (std::size_t t = 0; t < T; ++t) key_.push_back(static_cast<std::uint64_t>(pool[t]));
        for (const auto& [row, n] : rows) {
            std::uint64_t packed = 0;  // TP degrees below 2^16
            for (std::size_t t = 0; t < T; ++t) packed |= std::uint64_t(static_cast<std::uint16_t>(row[t])) << (16 * t);
            key_.push_back(packed), key_.push_back(static_cast<std::uint64_t>(n));
        }
        if (const std::uint32_t id = keys_.find(key_); id != keys_.none) return most_[id];
        const std::int64_t v = most(rows, pool, T, prices);
        if (keys_.intern(key_) != keys_.none) most_.push_back(v);
        return v;
    }

private:
    struct word {
        [[nodiscard]] std::uint64_t operator()(std::uint64_t w) const { return w; }
    };
    template <class Rows, class Pool>
    [[nodiscard]] static std::int64_t most(const Rows& rows, const Pool& pool, std::size_t T, const std::vector<price_vector>& prices) {
        std::int64_t d = std::numeric_limits<std::int64_t>::max();
        for (const price_vector& y : prices) {
            std::int64_t have = 0, need = 0;
            for (std::size_t t = 0; t < T; ++t) have += y[t] * pool[t];
            for (const auto& [row, n] : rows) {
                const std::int64_t cheapest = cheapest_at(y, row, T);
                if (cheapest == std::numeric_limits<std::int64_t>::max()) return 0;  // a row no type serves
                need += cheapest * n;
            }
            if (need > 0) d = std::min(d, have / need);
        }
        return d;
    }

    interned_sequences<std::uint64_t, word> keys_;
    std::vector<std::int64_t> most_;  ///< by key id
    std::vector<std::uint64_t> key_;  ///< scratch: the key being asked
};

/// Seconds kept per (64-bit key, bytes), direct-mapped: a slot is overwritten on collision.
class seconds_memo {
public:
    explicit seconds_memo(unsigned log2_slots) : bits_(log2_slots) {}

    void clear() { slots_.clear(); }

    /// The value for (key, bytes), from `price()` when not kept.
    template <class Price>
    [[nodiscard]] double operator()(std::uint64_t key, double bytes, Price&& price) {
        if (slots_.empty()) slots_.assign(std::size_t{1} << bits_, {});
        std::uint64_t h = key * 0x9E3779B97F4A7C15ull ^ std::bit_cast<std::uint64_t>(bytes);
        h ^= h >> 29;
        slot& s = slots_[static_cast<std::size_t>(h * 0xBF58476D1CE4E5B9ull >> (64 - bits_))];
        if (s.key != key || s.bytes != bytes) {
            const double seconds = price();  // before the key: a throw leaves the slot as it was
            s = {key, bytes, seconds};
        }
        return s.seconds;
    }

private:
    struct slot {
        std::uint64_t key = ~std::uint64_t{0};
        double bytes = -1, seconds = 0;
    };
    unsigned bits_;
    std::vector<slot> slots_;
};

/// A floor of a stage's all-reduce over `n` replicas in a ring with an edge from an endpoint of
/// `from` to one of `to` (replicas in two zone groups): the time model's sync_floor_between; for
/// a model with no sync_time, the network ring the search falls back to (the fastest uniform
/// ring over such edges); else 0.
template <class Time>
[[nodiscard]] double sync_floor_between_of(const Time& tm, const problem& pb, std::span<const endpoint> from, std::span<const endpoint> to,
                                           int n, bytes size) {
    if constexpr (requires { tm.sync_floor_between(pb, from, to, n, size); }) {
        return tm.sync_floor_between(pb, from, to, n, size).value;
    } else if constexpr (!concepts::has_sync_time<Time>) {
        double best = std::numeric_limits<double>::infinity();
        for (const endpoint& x : from)
            for (const endpoint& y : to)
                if (const auto* l = pb.hw.network.find(x, y)) best = std::min(best, collective::ring_all_reduce(n, size, *l).value);
        return best < std::numeric_limits<double>::infinity() ? best : 0.0;
    } else {
        return 0.0;
    }
}

/// A floor of a stage's all-reduce over `n` replicas drawn from the endpoints `ends`: the time
/// model's sync_floor, or any ring's floor above.
template <class Time>
[[nodiscard]] double sync_floor_of(const Time& tm, const problem& pb, std::span<const endpoint> ends, int n, bytes size) {
    if constexpr (requires { tm.sync_floor(pb, ends, n, size); }) return tm.sync_floor(pb, ends, n, size).value;
    else return sync_floor_between_of(tm, pb, ends, ends, n, size);
}

/// Sync floors already priced, (endpoints, replicas, bytes) -> seconds: a floor tries every
/// pair of a stage's endpoints (a ring each; a quarter of a 2-zone search), and the stages of
/// other instances and patterns repeat the endpoint sets, each interned once. It starts afresh
/// for another time model or network.
class sync_floor_memo {
public:
    void clear() { sets_.clear(), memo_.clear(); }

    template <class Time>
    [[nodiscard]] double operator()(const Time& tm, const problem& pb, std::span<const endpoint> ends, int n, bytes size) {
        if (model_ != &tm || network_ != &pb.hw.network) clear(), model_ = &tm, network_ = &pb.hw.network;
        const std::uint32_t id = sets_.intern(ends);
        auto price = [&] { return sync_floor_of(tm, pb, ends, n, size); };
        if (id == endpoint_sets::none) return price();
        return memo_((std::uint64_t{id} << 32) | std::uint32_t(n), size.value, price);
    }

private:
    endpoint_sets sets_;
    seconds_memo memo_{12};
    const void* model_ = nullptr;
    const void* network_ = nullptr;
};

}  // namespace hetplan::search
