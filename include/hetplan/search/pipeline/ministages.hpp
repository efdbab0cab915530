#pragma once
// Zorse's interleaved layout (Zorse §3.1.1, Fig. 3, §3.3.3): each GPU group's layers are cut into
// S equal ministages, and the model's layers are dealt out round-robin: the first ministage of
// every group in pipeline order, then the second of every group, and so on. A group holds S
// non-contiguous layer ranges; a microbatch passes through the groups S times.
#include <vector>

#include "hetplan/core/error.hpp"
#include "hetplan/plan/plan.hpp"

namespace hetplan::search {

/// Per group (in pipeline order) its S layer ranges in model order; empty when some group has
/// fewer than S layers. The first (layers mod S) ministages of a group take one layer more.
[[nodiscard]] inline std::vector<std::vector<layer_range>> interleaved_layout(const std::vector<int>& layers_per_group, int S) {
    if (S < 1) throw input_error("interleaved layout: at least one ministage per group");
    std::vector<std::vector<layer_range>> out(layers_per_group.size());
    for (int l : layers_per_group)
        if (l < S) return {};
    int at = 0;
    for (int r = 0; r < S; ++r)
        for (std::size_t g = 0; g < layers_per_group.size(); ++g) {
            const int n = layers_per_group[g] / S + (r < layers_per_group[g] % S ? 1 : 0);
            out[g].push_back({at, at + n});
            at += n;
        }
    return out;
}

}  // namespace hetplan::search
