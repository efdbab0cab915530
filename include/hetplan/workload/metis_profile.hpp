#pragma once
// What Metis' planner reads (Metis, USENIX ATC '24, §4-5; memory-aware Metis §3.1): its cluster
// file (nodes of one GPU type each, memory and bandwidths per type) and its profiles: per GPU type
// and (TP degree, microbatch size), each layer's forward+backward time and memory, and the
// "fb_sync" remainder of the measured step; per model, the optimizer and batch-generation time,
// the parameters of the input, middle and output layers and the activation shape. TP degrees and
// microbatch sizes are powers of two up to `metis_max_degree`, as the public profiler writes them.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "hetplan/core/error.hpp"

namespace hetplan {

/// Largest TP degree and microbatch size a Metis profile holds (the public code's
/// max_profiled_tp_degree and max_profiled_batch_size in its Table 1 runs).
inline constexpr int metis_max_degree = 128;

/// log2(n) for n a power of two in [1, metis_max_degree]; -1 otherwise.
[[nodiscard]] constexpr int metis_log2(long long n) {
    for (int k = 0; (1LL << k) <= metis_max_degree; ++k)
        if (n == (1LL << k)) return k;
    return -1;
}

/// One (GPU type, TP degree, microbatch size) measurement, in milliseconds and megabytes.
struct metis_entry {
    std::vector<double> computes;  ///< forward + backward of each layer
    std::vector<double> memory;    ///< each layer's memory in MB (empty: none measured)
    double fb_sync = 0;            ///< measured step minus the sum of `computes`
    double compute_total = 0;      ///< sum of `computes`, left to right (the stage speed of §4.2)
    bool present = false;
};

struct metis_profile {
    static constexpr int degrees = metis_log2(metis_max_degree) + 1;

    int layers = 0;
    std::vector<std::string> types;  ///< the first supplies the layer durations of the layer balancer
    double optimizer_time = 0;       ///< whole model, TP 1 (ms)
    double batch_generator = 0;      ///< per microbatch (ms)
    double input_params = 0, middle_params = 0, output_params = 0;  ///< bytes of the first, a middle and the last layer
    int hidden = 0, sequence = 0, vocabulary = 0;                   ///< the activation shape (§5.3)

    /// Stores a measurement; throws input_error naming the field when it does not fit.
    void set(std::size_t type, int tp, int mbs, std::vector<double> computes, std::vector<double> memory, double fb_sync) {
        const int lt = metis_log2(tp), lb = metis_log2(mbs);
        if (type >= types.size()) throw input_error("metis_profile: type index " + std::to_string(type) + " out of range");
        if (lt < 0 || lb < 0)
            throw input_error("metis_profile: tp " + std::to_string(tp) + " and microbatch " + std::to_string(mbs) +
                              " must be powers of two up to " + std::to_string(metis_max_degree));
        if (int(computes.size()) != layers || (!memory.empty() && int(memory.size()) != layers))
            throw input_error("metis_profile: " + types[type] + " tp" + std::to_string(tp) + "_bs" + std::to_string(mbs) +
                              " has " + std::to_string(computes.size()) + " compute and " + std::to_string(memory.size()) +
                              " memory entries for " + std::to_string(layers) + " layers");
        if (table_.size() != types.size() * degrees * degrees) table_.resize(types.size() * degrees * degrees);
        metis_entry& e = table_[index(type, lt, lb)];
        e.computes = std::move(computes);
        e.memory = std::move(memory);
        e.fb_sync = fb_sync;
        e.compute_total = 0;
        for (double c : e.computes) e.compute_total += c;
        e.present = true;
    }
    /// The measurement, or nullptr where there is none.
    [[nodiscard]] const metis_entry* at(std::size_t type, long long tp, long long mbs) const {
        const int lt = metis_log2(tp), lb = metis_log2(mbs);
        if (lt < 0 || lb < 0 || type >= types.size() || table_.empty()) return nullptr;
        const metis_entry& e = table_[index(type, lt, lb)];
        return e.present ? &e : nullptr;
    }
    /// Parameters (bytes) of layers [a, b) at TP `tp` (the public model's rule: the first and the
    /// last layer are the embedding and head, every other layer a middle one).
    [[nodiscard]] double stage_parameters(int tp, int a, int b) const {
        int n = b - a;
        double p = 0;
        if (a == 0) p += input_params / tp, --n;
        if (b == layers) p += output_params / tp, --n;
        return p + middle_params / tp * n;
    }

private:
    [[nodiscard]] static std::size_t index(std::size_t type, int lt, int lb) { return (type * degrees + std::size_t(lt)) * degrees + std::size_t(lb); }
    std::vector<metis_entry> table_;
};

/// A GPU type of the cluster, aligned with metis_profile::types.
struct metis_gpu_type {
    std::string name;
    double memory_mb = 0;   ///< per GPU
    double intra_bw = 0;    ///< GB/s inside a node
    double inter_bw = 0;    ///< GB/s between nodes
};

struct metis_cluster {
    std::vector<metis_gpu_type> types;
    std::vector<int> node_type;  ///< per node, an index into `types`
    int gpus_per_node = 4;
    std::vector<int> node_gpus{};  ///< per node, when nodes differ (empty: gpus_per_node each)

    [[nodiscard]] int gpus_of_node(std::size_t n) const { return node_gpus.empty() ? gpus_per_node : node_gpus[n]; }
    [[nodiscard]] int gpus() const {
        int g = 0;
        for (std::size_t n = 0; n < node_type.size(); ++n) g += gpus_of_node(n);
        return g;
    }
    [[nodiscard]] int nodes_of(int t) const { return int(std::count(node_type.begin(), node_type.end(), t)); }
    /// Types with at least one node, in index order.
    [[nodiscard]] std::vector<int> present_types() const {
        std::vector<int> out;
        for (int t = 0; t < int(types.size()); ++t)
            if (nodes_of(t) > 0) out.push_back(t);
        return out;
    }
    /// Throws input_error when the cluster and the profile do not describe the same types.
    void check_against(const metis_profile& p) const {
        if (gpus_per_node < 1) throw input_error("metis_cluster: gpus_per_node must be >= 1");
        if (types.size() != p.types.size()) throw input_error("metis_cluster: the cluster and the profile list different GPU types");
        for (std::size_t t = 0; t < types.size(); ++t)
            if (types[t].name != p.types[t])
                throw input_error("metis_cluster: type " + std::to_string(t) + " is " + types[t].name + " in the cluster and " + p.types[t] +
                                  " in the profile");
        for (int t : node_type)
            if (t < 0 || t >= int(types.size())) throw input_error("metis_cluster: a node's type index is out of range");
        if (!node_gpus.empty() && node_gpus.size() != node_type.size())
            throw input_error("metis_cluster: node_gpus has " + std::to_string(node_gpus.size()) + " entries for " +
                              std::to_string(node_type.size()) + " nodes");
        for (std::size_t n = 0; n < node_type.size(); ++n)
            if (gpus_of_node(n) < 1) throw input_error("metis_cluster: node " + std::to_string(n) + " has no GPU");
    }
};

}  // namespace hetplan
