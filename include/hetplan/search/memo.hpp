#pragma once
// Memo tables behind one small interface (concept search::memo_table), so a search can swap a
// node-based hash map for a flat one, or a dense array, without touching its code.
//   find(key) -> Value* (null when absent)    insert(key, value) -> Value*    clear()    size()
// flat_memo is open addressing with linear probing over an array of small slots that point into
// the entries; clear() is O(1) (a generation counter) and keeps the capacity, so a warm table
// allocates nothing: what the stage DP's hot loop needs. A value's address holds until clear().
// node_memo wraps std::unordered_map (one allocation per entry), the straightforward version
// the benchmark compares it with.
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hetplan::search {

template <class T, class K, class V>
concept memo_table = requires(T& t, const K& k, const V& v) {
    { t.find(k) } -> std::same_as<V*>;
    { t.insert(k, v) } -> std::same_as<V*>;
    t.clear();
    { t.size() } -> std::convertible_to<std::size_t>;
};

/// Hash of a key's bytes, for keys without padding: compound memo keys made of integers,
/// compared bytewise. Eight bytes per step (a multiply-xorshift mix); byte-wise FNV cost a
/// multiply per byte on the stage DP's 70-byte keys.
template <class K>
    requires std::has_unique_object_representations_v<K>
struct bytes_hash {
    std::size_t operator()(const K& k) const noexcept {
        unsigned char b[sizeof(K)];
        std::memcpy(b, &k, sizeof(K));
        std::uint64_t h = 0x9E3779B97F4A7C15ull ^ sizeof(K);
        std::size_t i = 0;
        for (; i + 8 <= sizeof(K); i += 8) {
            std::uint64_t w;
            std::memcpy(&w, b + i, 8);
            h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
            h ^= h >> 31;
        }
        std::uint64_t tail = 0;
        std::memcpy(&tail, b + i, sizeof(K) - i);
        h = (h ^ tail) * 0x94D049BB133111EBull;
        return static_cast<std::size_t>(h ^ (h >> 29));
    }
};

template <class K, class V, class Hash = std::hash<K>>
class flat_memo {
    struct slot {
        std::uint32_t gen = 0, tag = 0, at = 0;
    };
    using entry = std::pair<K, V>;

public:
    /// The most bytes an entry takes: its own and four slots (a grown table is a quarter full).
    static constexpr std::size_t entry_bytes = sizeof(entry) + 4 * sizeof(slot);

    flat_memo() : flat_memo(1024) {}
    explicit flat_memo(std::size_t capacity) { rebuild(std::bit_ceil(std::max<std::size_t>(capacity, 16))); }

    [[nodiscard]] V* find(const K& k) {
        const std::size_t h = hash_(k);
        const auto tag = tag_of(h);
        for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
            const slot& s = slots_[i];
            if (s.gen != gen_) return nullptr;
            if (s.tag == tag) {
                entry& e = at(s.at);
                if (e.first == k) return &e.second;
            }
        }
    }
    /// Inserts (k, v); the key must be absent (and the table hold fewer than 2^32 entries: the
    /// memory limits of its users keep them far below).
    V* insert(const K& k, const V& v) {
        if (2 * (size_ + 1) > slots_.size()) grow();
        if (size_ == blocks_.size() * block) blocks_.emplace_back(block);
        place(hash_(k), size_);
        entry& e = at(size_++);
        e = {k, v};
        return &e.second;
    }
    void clear() {
        size_ = 0;
        if (++gen_ == 0) {  // wrapped: every old slot could look current again
            for (auto& s : slots_) s.gen = 0;
            gen_ = 1;
        }
    }
    [[nodiscard]] std::size_t size() const { return size_; }
    [[nodiscard]] std::size_t capacity() const { return slots_.size(); }
    /// f(key, value) for every entry, in the order they were inserted.
    template <class F>
    void for_each(F&& f) const {
        for (std::size_t q = 0; q < size_; ++q) {
            const entry& e = blocks_[q >> block_shift][q & (block - 1)];
            f(e.first, e.second);
        }
    }

private:
    // The table holds 12-byte slots (generation, 32 bits of the hash, where the entry is); the
    // entries lie apart, in insertion order, in blocks that never move. A probe reads slots only
    // and compares a key where the hash bits agree; growth re-slots the entries without copying
    // them, and the entries take the memory of the entries there are, where a table of whole
    // entries stood at most half full (the pattern search's 350-byte entries: their growth and
    // page faults were a tenth of random pool 135, its copies a twentieth of pool 152).
    static constexpr std::size_t block_shift = 10, block = std::size_t{1} << block_shift;
    [[nodiscard]] entry& at(std::size_t q) { return blocks_[q >> block_shift][q & (block - 1)]; }
    [[nodiscard]] static std::uint32_t tag_of(std::size_t h) { return static_cast<std::uint32_t>(std::uint64_t(h) >> 32) ^ static_cast<std::uint32_t>(h); }
    void place(std::size_t h, std::size_t q) {
        std::size_t i = h & mask_;
        while (slots_[i].gen == gen_) i = (i + 1) & mask_;
        slots_[i] = {gen_, tag_of(h), static_cast<std::uint32_t>(q)};
    }
    void rebuild(std::size_t cap) {
        slots_.assign(cap, slot{});
        mask_ = cap - 1;
        gen_ = 1;
    }
    void grow() {
        rebuild(slots_.size() * 2);
        for (std::size_t q = 0; q < size_; ++q) place(hash_(at(q).first), q);
    }
    std::vector<slot> slots_;
    std::vector<std::vector<entry>> blocks_;  // `block` entries each, kept by clear()
    std::size_t mask_ = 0, size_ = 0;
    std::uint32_t gen_ = 1;
    [[no_unique_address]] Hash hash_{};
};

template <class K, class V, class Hash = std::hash<K>>
class node_memo {
public:
    [[nodiscard]] V* find(const K& k) {
        auto it = map_.find(k);
        return it == map_.end() ? nullptr : &it->second;
    }
    V* insert(const K& k, const V& v) { return &map_.emplace(k, v).first->second; }
    void clear() { map_.clear(); }
    [[nodiscard]] std::size_t size() const { return map_.size(); }

private:
    std::unordered_map<K, V, Hash> map_;
};

static_assert(memo_table<flat_memo<int, int>, int, int>);
static_assert(memo_table<node_memo<int, int>, int, int>);

}  // namespace hetplan::search
