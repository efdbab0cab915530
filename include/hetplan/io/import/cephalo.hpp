#pragma once
// Importers for the format shared by Zorse and Cephalo (shared/data/{zorse,cephalo}):
//   model_latencies.json  {model: {gpu: {sequence: {dtype: [fwd_fit, bwd_fit, fwd_ms?, bwd_ms?]}}}}
//     where a fit is [slope_ms_per_sample, intercept_ms] for one transformer layer and the
//     optional lists are measured times at microbatch sizes 1, 2, ... (Cephalo §2.3: measured
//     points for small m, linear extrapolation beyond).
//   model_stats.json      {model: {hidden_size, num_layers, parameters_per_layer, total_parameters}}
// Both systems reason per transformer layer, so the imported model holds only the blocks.
#include <string>
#include <vector>

#include "hetplan/cost/memory/cephalo.hpp"
#include "hetplan/io/json_reader.hpp"
#include "hetplan/workload/model.hpp"
#include "hetplan/workload/profile.hpp"

namespace hetplan::io::cephalo {

struct latency_key {
    std::string model;     ///< e.g. "deepspeedgpt_2.7b"
    std::string gpu;       ///< as in the file, e.g. "a6000"
    int sequence = 512;
    std::string dtype = "float32";
};

/// Adds the curve of one (model, GPU, sequence, dtype) entry as TP 1 of `hetplan_gpu`, for
/// `num_layers` identical layers. Update times are not in the file and are taken as 0.
inline void import_latencies(const cursor& root, const latency_key& key, const std::string& hetplan_gpu, int num_layers,
                             profile_table& out) {
    if (num_layers < 1 || num_layers > limits::max_layers) root.fail("need 1 to " + std::to_string(limits::max_layers) + " layers");
    const cursor entry = root[key.model][key.gpu][std::to_string(key.sequence)][key.dtype];
    if (entry.size() != 2 && entry.size() != 4) entry.fail("expected [fwd_fit, bwd_fit] or [fwd_fit, bwd_fit, fwd_ms, bwd_ms]");
    auto fit = [](const cursor& c) {
        if (c.size() != 2) c.fail("a fit is [slope_ms, intercept_ms]");
        const double max_ms = limits::max_layer_time_s * 1e3;
        return std::pair{c.at(0).bounded(max_ms) * 1e-3, c.at(1).bounded(max_ms) * 1e-3};
    };
    const auto [fs, fi] = fit(entry.at(0));
    const auto [bs, bi] = fit(entry.at(1));
    const auto L = static_cast<std::size_t>(num_layers);
    profile_curve curve;
    if (entry.size() == 4) {
        const cursor fm = entry.at(2), bm = entry.at(3);
        if (fm.size() != bm.size() || fm.size() == 0) entry.fail("measured forward and backward lists differ in length");
        for (std::size_t i = 0; i < fm.size(); ++i)
            curve.add_point(static_cast<int>(i + 1),
                            std::vector<layer_timing>(L, {seconds{fm.at(i).non_negative(limits::max_layer_time_s * 1e3) * 1e-3},
                                                         seconds{bm.at(i).non_negative(limits::max_layer_time_s * 1e3) * 1e-3}, seconds{0}}));
    } else {
        const seconds f1{std::max(fs + fi, 0.0)}, b1{std::max(bs + bi, 0.0)};
        if (!(f1.value > 0 && b1.value > 0)) entry.fail("fit gives no positive time at microbatch size 1");
        curve.add_point(1, std::vector<layer_timing>(L, {f1, b1, seconds{0}}));
    }
    linear_tail tail;
    tail.fwd_slope.assign(L, fs);
    tail.fwd_intercept.assign(L, fi);
    tail.bwd_slope.assign(L, bs);
    tail.bwd_intercept.assign(L, bi);
    curve.tail = std::move(tail);
    out.set_curve(hetplan_gpu, 1, std::move(curve));
}

/// Cephalo's compute-memory profile (model_memory.json: {cluster: {model:
/// {profiled_compute_memory: {dtype: [GiB at microbatch 1, 2, ...]}}}}) as a linear fit (§2.3).
inline compute_memory_fit import_compute_memory(const cursor& root, const std::string& cluster, const std::string& model,
                                                const std::string& dtype) {
    const cursor pts = root[cluster][model]["profiled_compute_memory"][dtype];
    if (pts.size() == 0) pts.fail("no profiled points");
    std::vector<std::pair<int, bytes>> xy;
    for (std::size_t i = 0; i < pts.size(); ++i) xy.emplace_back(static_cast<int>(i + 1), bytes{pts.at(i).non_negative(limits::max_gpu_memory_bytes / 1073741824.0) * 1073741824.0});
    return compute_memory_fit::from_points(xy);
}

/// The transformer blocks of `model` from model_stats.json at the given sequence length.
/// The parameters outside the blocks (embeddings, head: total_parameters - layers x
/// parameters_per_layer, about 10% of GPT 2.7B) are spread evenly over the blocks, so that the
/// training state and the collectives carry the whole model while compute stays per block.
/// Activation sizes are estimates: s*h boundary elements and 17*s*h elements kept for backward
/// (the attention-score term needs the head count, which the file does not give).
inline model_spec import_model_stats(const cursor& root, const std::string& model, int sequence) {
    const cursor m = root[model];
    const int L = m["num_layers"].integer(1, limits::max_layers);
    const double h = m["hidden_size"].integer(1, limits::max_hidden);
    const double in_blocks = m["parameters_per_layer"].positive(limits::max_layer_elems);
    const cursor total_c = m["total_parameters"];
    const double total = total_c.positive(limits::max_layer_elems * L);
    if (total < in_blocks * L) total_c.fail("smaller than num_layers x parameters_per_layer");
    const double per_layer = total / L;
    model_spec out;
    out.name = model;
    out.sequence_length = sequence;
    out.hidden_size = static_cast<int>(h);
    layer_spec block;
    block.name = "block";
    block.params = per_layer;
    block.act_input_elems = block.act_output_elems = sequence * h;
    block.act_mem_elems = 17.0 * sequence * h;
    block.flops_fwd = 2.0 * per_layer * sequence + 4.0 * double(sequence) * sequence * h;
    out.layers.assign(static_cast<std::size_t>(L), block);
    return out;
}

}  // namespace hetplan::io::cephalo
