#pragma once
// Metis' device groups (Metis §4.1): the GPU counts of S pipeline stages, each a power of two,
// none smaller than variance x max(G / S, S / G) (groups much smaller than an even share are
// pruned), summing to G; every distinct order of each such multiset. When S exceeds the
// permutation limit, runs of the smallest size are merged pairwise into blocks that move
// together, so at most `max_permute_len` blocks are permuted (Metis' "max permute length").
//
// Lazy: for_each_device_groups calls f(groups) per vector and stops when f returns true.
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <numeric>
#include <span>
#include <vector>

namespace hetplan::search::metis {

struct device_group_rules {
    int variance = 1;             ///< the public code's min_group_scale_variance
    int max_permute_len = 128;    ///< the public code's max_permute_len
};

/// Powers of two up to `gpus`.
[[nodiscard]] inline std::vector<int> group_shapes(int gpus) {
    std::vector<int> out;
    for (long long s = 1; s <= gpus; s *= 2) out.push_back(int(s));
    return out;
}

namespace detail {
/// Non-decreasing sequences of `left` shapes from shapes[from..] summing to `rest`, in
/// lexicographic order; f(seq) true stops.
template <class F>
bool sorted_groups(std::span<const int> shapes, std::size_t from, int left, int rest, std::vector<int>& seq, F& f) {
    if (left == 0) return rest == 0 ? f(std::span<const int>(seq)) : false;
    for (std::size_t i = from; i < shapes.size(); ++i) {
        const long long s = shapes[i];
        if (s > rest) break;
        if (s * left > rest) break;                       // the smallest choice left already overshoots
        if (rest % s != 0) break;                         // sizes from here are multiples of s: none sums to rest
        if (static_cast<long long>(shapes.back()) * left < rest) return false;  // even the largest cannot reach
        seq.push_back(int(s));
        const bool stop = sorted_groups(shapes, i, left - 1, rest - int(s), seq, f);
        seq.pop_back();
        if (stop) return true;
    }
    return false;
}
}  // namespace detail

/// Calls f(std::span<const int>) for every device-group vector of `stages` stages over `gpus`
/// GPUs; returns true when f stopped it.
template <class F>
bool for_each_device_groups(int stages, int gpus, const device_group_rules& rules, F&& f) {
    if (stages < 1 || gpus < 1) return false;
    const int least = std::max(gpus / stages, stages / gpus) * rules.variance;
    std::vector<int> shapes;
    for (int s : group_shapes(gpus))
        if (s >= least) shapes.push_back(s);
    if (shapes.empty()) return false;
    std::vector<int> seq, out;
    std::vector<std::vector<int>> blocks;
    std::vector<std::size_t> order;
    auto per_multiset = [&](std::span<const int> sorted) {
        // Blocks: one per group; while there are more than the limit, pairs of the first
        // block's size merge, at least as many pairs as half the run of blocks equal to the
        // first (plus one, as the public code counts it).
        blocks.clear();
        for (int g : sorted) blocks.push_back({g});
        auto size_of = [](const std::vector<int>& b) { return std::accumulate(b.begin(), b.end(), 0); };
        for (int excess = int(blocks.size()) - rules.max_permute_len; excess > 0;) {
            std::size_t run = 1;
            while (run < blocks.size() && blocks[run] == blocks.front()) ++run;
            const int want = std::max(excess, int(std::min(run + 1, blocks.size()) / 2));
            const int first = size_of(blocks.front());
            std::vector<std::vector<int>> merged;
            for (std::size_t i = 0; i < blocks.size(); i += 2) {
                if (want <= int(i / 2)) {
                    merged.insert(merged.end(), blocks.begin() + std::ptrdiff_t(i), blocks.end());
                    break;
                }
                if (i + 1 >= blocks.size()) merged.push_back(blocks[i]);
                else if (size_of(blocks[i]) == first && size_of(blocks[i + 1]) == first) {
                    std::vector<int> m = blocks[i];
                    m.insert(m.end(), blocks[i + 1].begin(), blocks[i + 1].end());
                    merged.push_back(std::move(m));
                } else {
                    merged.push_back(blocks[i]);
                    merged.push_back(blocks[i + 1]);
                }
            }
            blocks = std::move(merged);
            if (want == int(blocks.size()) - rules.max_permute_len) break;  // no further reduction
            excess = int(blocks.size()) - rules.max_permute_len;
        }
        // Distinct orders of the blocks, lexicographically (blocks compare by their contents).
        order.resize(blocks.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        auto less = [&](std::size_t a, std::size_t b) { return blocks[a] < blocks[b]; };
        std::sort(order.begin(), order.end(), less);
        do {
            out.clear();
            for (std::size_t b : order) out.insert(out.end(), blocks[b].begin(), blocks[b].end());
            if (f(std::span<const int>(out))) return true;
        } while (std::next_permutation(order.begin(), order.end(), less));
        return false;
    };
    return detail::sorted_groups(shapes, 0, stages, gpus, seq, per_multiset);
}

/// Whether `stages` stages over `gpus` GPUs have any device-group vector (stops at the first).
[[nodiscard]] inline bool has_device_groups(int stages, int gpus, const device_group_rules& rules = {}) {
    return for_each_device_groups(stages, gpus, rules, [](std::span<const int>) { return true; });
}

/// How many device-group vectors `stages` stages have.
[[nodiscard]] inline std::size_t count_device_groups(int stages, int gpus, const device_group_rules& rules = {}) {
    std::size_t n = 0;
    for_each_device_groups(stages, gpus, rules, [&](std::span<const int>) {
        ++n;
        return false;
    });
    return n;
}

}  // namespace hetplan::search::metis
