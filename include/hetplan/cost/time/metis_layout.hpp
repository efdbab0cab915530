#pragma once
// The vocabulary Metis' models share (Metis §4-5): a cluster of nodes of one GPU type each, a
// GPU-type order that puts all GPUs of the first type at the lowest ranks, stages as contiguous
// rank ranges, (DP, TP) per stage, and the data load balancer that splits a stage's batch
// across replicas of different speed (§5.2, "uneven local batches").
//
// `metis_rules` says whether the public code's defects are reproduced (to count its search steps
// to the unit) or corrected (hetplan's default): a replica priced by its first GPU although its
// TP group mixes types; a mixed stage's memory demand taken from the whole cluster's rank list; the
// inter-node bandwidth lookup returning the intra-node value; and the enumeration that drops the
// single-stage candidate of every GPU-type order after the first (search/metis/inter_stage.hpp).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "hetplan/core/error.hpp"
#include "hetplan/workload/metis_profile.hpp"

namespace hetplan {

struct metis_rules {
    bool first_gpu_speed = false;       ///< a replica's speed is its first GPU's (else its slowest GPU's)
    bool cluster_wide_memory = false;   ///< mixed stages: demand from the cluster's rank list and first type
    bool inter_is_intra = false;        ///< inter-node links priced at the intra-node bandwidth
    bool published_enumeration = false; ///< later type orders lose S = 1 and see the S = 2 groups twice

    /// The public code as it runs (livingshade/Metis, the Table 1 step counts).
    [[nodiscard]] static constexpr metis_rules published() { return {true, true, true, true}; }
    /// hetplan's default: every defect corrected.
    [[nodiscard]] static constexpr metis_rules corrected() { return {}; }
};

/// The ranks of a cluster under a GPU-type order: the first type's GPUs first (Metis §4.1),
/// each type's nodes in cluster order.
struct metis_layout {
    std::vector<int> rank_type;   ///< per rank
    std::vector<int> rank_node;   ///< per rank, an index into node_type / node_source
    std::vector<int> node_type;   ///< per node, in layout order
    std::vector<int> node_source; ///< per node, its index in the cluster

    metis_layout() = default;
    metis_layout(const metis_cluster& c, std::span<const int> order) {
        for (int t : order)
            for (std::size_t n = 0; n < c.node_type.size(); ++n) {
                if (c.node_type[n] != t) continue;
                const int node = int(node_type.size());
                node_type.push_back(t);
                node_source.push_back(int(n));
                rank_type.insert(rank_type.end(), std::size_t(c.gpus_of_node(n)), t);
                rank_node.insert(rank_node.end(), std::size_t(c.gpus_of_node(n)), node);
            }
    }
    [[nodiscard]] int gpus() const { return int(rank_type.size()); }
    [[nodiscard]] int node_of(int rank) const { return rank_node[std::size_t(rank)]; }
    [[nodiscard]] std::span<const int> ranks(int first, int count) const { return {rank_type.data() + first, std::size_t(count)}; }
};

/// Whether a rank range holds more than one GPU type.
[[nodiscard]] inline bool mixed(std::span<const int> types) {
    return std::any_of(types.begin(), types.end(), [&](int t) { return t != types.front(); });
}

/// The type that prices a replica (ranks `types`): its first GPU, or its slowest at (tp, 1).
[[nodiscard]] inline int replica_type(const metis_profile& p, std::span<const int> types, int tp, const metis_rules& rules) {
    if (rules.first_gpu_speed) return types.front();
    int slow = types.front();
    double worst = -1;
    for (int t : types) {
        const metis_entry* e = p.at(std::size_t(t), tp, 1);
        const double v = e ? e->compute_total : std::numeric_limits<double>::infinity();
        if (v > worst) worst = v, slow = t;
    }
    return slow;
}

/// Metis' data load balancer: `batch` samples over `dp` replicas of `types` in proportion to
/// their speed at (tp, 1); the remainder to the largest fractional shares (stable). Writes `out`
/// (dp entries); false when a replica's type has no (tp, 1) measurement.
[[nodiscard]] inline bool metis_split_batch(const metis_profile& p, std::span<const int> types, int dp, int tp, int batch,
                                            const metis_rules& rules, std::vector<int>& out, std::vector<double>& scratch) {
    const int size = int(types.size()) / dp;
    scratch.assign(std::size_t(2 * dp), 0.0);
    double total = 0;
    for (int r = 0; r < dp; ++r) {
        const int t = replica_type(p, types.subspan(std::size_t(r * size), std::size_t(size)), tp, rules);
        const metis_entry* e = p.at(std::size_t(t), tp, 1);
        if (!e) return false;
        scratch[std::size_t(r)] = 1.0 / e->compute_total;
    }
    for (int r = 0; r < dp; ++r) total += scratch[std::size_t(r)];
    out.assign(std::size_t(dp), 0);
    int given = 0;
    for (int r = 0; r < dp; ++r) {
        const double share = batch * (scratch[std::size_t(r)] / total);
        out[std::size_t(r)] = int(share);
        scratch[std::size_t(dp + r)] = share - double(int(share));
        given += out[std::size_t(r)];
    }
    // The remainder (< dp) to the largest fractions, the first on ties (a stable sort).
    thread_local std::vector<int> order;
    order.resize(std::size_t(dp));
    for (int r = 0; r < dp; ++r) order[std::size_t(r)] = r;
    const int rem = std::clamp(batch - given, 0, dp);
    // Ties to the lower index, as a stable sort gives them; partial_sort allocates nothing.
    std::partial_sort(order.begin(), order.begin() + rem, order.end(), [&](int a, int b) {
        const double fa = scratch[std::size_t(dp + a)], fb = scratch[std::size_t(dp + b)];
        return fa > fb || (fa == fb && a < b);
    });
    for (int k = 0; k < rem; ++k) ++out[std::size_t(order[std::size_t(k)])];
    return true;
}

/// Sum of v[a..b) left to right (the public code's order: Metis' step counts depend on rounding).
[[nodiscard]] inline double metis_layer_sum(const std::vector<double>& v, int a, int b) {
    double s = 0;
    for (int i = std::max(a, 0); i < std::min(b, int(v.size())); ++i) s += v[std::size_t(i)];
    return s;
}

/// Calls f(2^k) for the set bits of n, high to low (a replica's samples as power-of-two
/// microbatches: the profile holds powers of two only).
template <class F>
void for_each_power_of_two(int n, F&& f) {
    for (int k = 30; k >= 0; --k)
        if (n & (1 << k)) f(1 << k);
}

}  // namespace hetplan
