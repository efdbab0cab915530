#pragma once
// The Sailor search space (Sailor §4.2) as lazily evaluated range-v3 views, each usable on its
// own: pipeline degrees, Sailor's layer partition, microbatch sizes and data-parallel degrees;
// and sailor_space (a concepts::search_space): pipeline degree x microbatch size, the families
// of instances a planner walks (the data-parallel degree is walked per family by a strategy).
// Nothing is materialised until iterated.
#include <algorithm>
#include <string>
#include <vector>

#include <range/v3/view/cartesian_product.hpp>
#include <range/v3/view/filter.hpp>
#include <range/v3/view/iota.hpp>
#include <range/v3/view/transform.hpp>

#include "hetplan/concepts/search_space.hpp"
#include "hetplan/plan/problem.hpp"
#include "hetplan/search/cells.hpp"
#include "hetplan/search/prune/h1_tp_within_node.hpp"

namespace hetplan::search {

/// Sailor's layer partition for P stages: contiguous, as even as possible, the remainder going
/// to the last stages (their blocks are cheaper than the first stage's embedding).
[[nodiscard]] inline std::vector<layer_range> even_partition(int layers, int P) {
    std::vector<layer_range> out;
    if (P < 1 || P > layers) return out;
    const int base = layers / P, extra = layers % P;
    int at = 0;
    for (int i = 0; i < P; ++i) {
        const int n = base + (i >= P - extra ? 1 : 0);
        out.push_back({at, at + n});
        at += n;
    }
    return out;
}

/// Pipeline degrees 1..min(layers, GPUs), lazily.
[[nodiscard]] inline auto pipeline_degrees(int layers, int gpus) {
    return ranges::views::iota(1, std::max(1, std::min(layers, gpus)) + 1);
}

/// Data-parallel degrees for M = global batch / mbs microbatches and at most `max_d` replicas
/// per stage, increasing. Only degrees where ceil(M / D) (microbatches of the busiest replica)
/// changes are kept, and for each such value the smallest D: a larger D at the same per-replica
/// count only adds GPUs and all-reduce participants (Sailor's public planner does the same).
[[nodiscard]] inline auto data_parallel_degrees(int microbatches, int max_d) {
    return ranges::views::iota(1, std::max(std::min(microbatches, max_d), 0) + 1) | ranges::views::filter([=](int d) {
               return d == 1 || (microbatches + d - 2) / (d - 1) != (microbatches + d - 1) / d;
           });
}

/// Whether every GPU type in `gpus` has measured (or can estimate) microbatch size m.
[[nodiscard]] inline bool profiles_cover(const profile_table& profiles, const std::vector<std::string>& gpus, int m) {
    for (const auto& g : gpus) {
        bool any = profiles.has_fallback();
        for (int tp : profiles.tp_degrees(g)) {
            const auto mbs = profiles.measured_mbs(g, tp);
            any = any || std::find(mbs.begin(), mbs.end(), m) != mbs.end();
        }
        if (!any) return false;
    }
    return true;
}

/// Microbatch sizes (powers of two up to `limit`) that divide the global batch and every GPU
/// type has measured (or can estimate), increasing, lazily.
[[nodiscard]] inline auto microbatch_sizes(const profile_table& profiles, std::vector<std::string> gpus, int global_batch,
                                           int limit = 64) {
    return ranges::views::iota(0, 31) | ranges::views::transform([](int k) { return 1 << k; }) |
           ranges::views::filter([=, &profiles, gpus = std::move(gpus)](int m) {
               return m <= std::min(limit, global_batch) && global_batch % m == 0 && profiles_cover(profiles, gpus, m);
           });
}

/// One family of Sailor instances: a pipeline degree with its layer partition and a microbatch size.
struct sailor_family {
    int P = 1, mbs = 1;
    std::vector<layer_range> partition;
};

/// Pipeline degree x microbatch size over the GPU types H1 can use (concepts::search_space).
struct sailor_space {
    int max_pipeline_degree = 0;       ///< 0: up to the number of layers
    std::vector<int> microbatch_sizes{}; ///< empty: powers of two every type's profiles cover

    [[nodiscard]] auto candidates(const problem& pb) const {
        const h1_tp_within_node h1{};
        const cell_set cells = make_cells(pb.hw, pb.pool(), [&](gpu_type_id g) { return !h1(pb, g).empty(); });
        int total = 0;
        for (const auto& c : cells.cells) total += c.capacity;
        std::vector<std::string> names;
        for (gpu_type_id g : cells.types) names.push_back(pb.hw.gpu(g).type_name);
        const int L = pb.model.num_layers(), B = pb.job.global_batch;
        const int maxP = max_pipeline_degree > 0 ? std::min(max_pipeline_degree, L) : L;
        std::vector<int> sizes = microbatch_sizes;
        if (sizes.empty())
            for (int m : search::microbatch_sizes(pb.profiles, std::move(names), B)) sizes.push_back(m);
        const auto n = static_cast<int>(sizes.size());
        auto mbs = ranges::views::iota(0, n) | ranges::views::transform([sizes = std::move(sizes)](int i) { return sizes[std::size_t(i)]; });
        return ranges::views::cartesian_product(pipeline_degrees(maxP, total), std::move(mbs)) |
               ranges::views::filter([B](const auto& pm) { return B % std::get<1>(pm) == 0; }) |
               ranges::views::transform([L](const auto& pm) {
                   const auto [P, m] = pm;
                   return sailor_family{P, m, even_partition(L, P)};
               });
    }
};

static_assert(concepts::check_search_space<sailor_space>());

}  // namespace hetplan::search
