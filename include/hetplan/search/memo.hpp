#pragma once
// Memo tables behind one small interface (concept search::memo_table), so a search can swap a
// node-based hash map for a flat one, or a dense array, without touching its code.
//   find(key) -> Value* (null when absent)    insert(key, value) -> Value*    clear()    size()
// flat_memo is open addressing with linear probing over one array; clear() is O(1) (a
// generation counter) and keeps the capacity, so a warm table allocates nothing: what the stage
// DP's hot loop needs. node_memo wraps std::unordered_map (one allocation per entry), the
// straightforward version the benchmark compares it with.
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <unordered_map>
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
public:
    flat_memo() : flat_memo(1024) {}
    explicit flat_memo(std::size_t capacity) { rebuild(std::bit_ceil(std::max<std::size_t>(capacity, 16))); }

    [[nodiscard]] V* find(const K& k) {
        for (std::size_t i = hash_(k) & mask_;; i = (i + 1) & mask_) {
            slot& s = slots_[i];
            if (s.gen != gen_) return nullptr;
            if (s.key == k) return &s.value;
        }
    }
    /// Inserts (k, v); the key must be absent.
    V* insert(const K& k, const V& v) {
        if (2 * (size_ + 1) > slots_.size()) grow();
        std::size_t i = hash_(k) & mask_;
        while (slots_[i].gen == gen_) i = (i + 1) & mask_;
        slots_[i] = {k, v, gen_};
        ++size_;
        return &slots_[i].value;
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

private:
    struct slot {
        K key{};
        V value{};
        std::uint32_t gen = 0;
    };
    void rebuild(std::size_t cap) {
        slots_.assign(cap, slot{});
        mask_ = cap - 1;
        size_ = 0;
        gen_ = 1;
    }
    void grow() {
        std::vector<slot> old;
        old.swap(slots_);
        const std::uint32_t live = gen_;
        rebuild(old.size() * 2);
        for (const slot& s : old)
            if (s.gen == live) insert(s.key, s.value);
    }
    std::vector<slot> slots_;
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
