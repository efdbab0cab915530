#pragma once
// Importers for the formats published with Sailor (shared/data/sailor, see its README):
//   profiles/<MODEL>/<GPU>/profile.json  {mbs: {tp: {layer: [fwd_s, bwd_s, update_s]}}}
//   llm_info.json                        {model: {tp: {layer: {params_floats, act_*_floats}}}}
//   network/multizone_bandwidths*.json   {zone: {gpu: {n: {zone: {gpu: {n: [[c2, c1, c0], max_B_s]}}}}}}
//   network/network_coeffs_all_homo.json {"inter"|"intra": {gpu: {n: [[c...], max_B_s]}}}
//   network/intra_node_bandwidths.json   {gpu: {n: [[c...], max_B_s]}}
//   network/gcp/communication_cost.json  {zone: {zone: usd_per_GB}}
//   configs/training_config_*.json       global_batch_size, sequence_length, optimizer, model
//   configs/basic_cluster_config.json    {gpu: {gpus_per_node, mem_per_gpu}}
#include <map>
#include <string>
#include <vector>

#include "hetplan/hardware/cluster.hpp"
#include "hetplan/io/json_reader.hpp"
#include "hetplan/workload/job.hpp"
#include "hetplan/workload/model.hpp"
#include "hetplan/workload/profile.hpp"

namespace hetplan::io::sailor {

/// Reads one profile.json for GPU type `gpu` into `out`.
inline void import_profile(const cursor& root, const std::string& gpu, profile_table& out) {
    std::map<int, profile_curve> by_tp;
    root.for_each_member([&](const std::string& mbs_key, const cursor& per_mbs) {
        const int mbs = cursor::integer_key(mbs_key, root);
        if (mbs < 1 || mbs > limits::max_global_batch) per_mbs.fail("microbatch size must be in [1, " + std::to_string(limits::max_global_batch) + "]");
        per_mbs.for_each_member([&](const std::string& tp_key, const cursor& per_tp) {
            const int tp = cursor::integer_key(tp_key, per_mbs);
            if (tp < 1 || tp > limits::max_tp) per_tp.fail("TP degree must be in [1, " + std::to_string(limits::max_tp) + "]");
            std::vector<layer_timing> layers(per_tp.size());
            std::vector<bool> seen(layers.size(), false);
            per_tp.for_each_member([&](const std::string& layer_key, const cursor& t) {
                const int l = cursor::integer_key(layer_key, per_tp);
                if (l < 0 || static_cast<std::size_t>(l) >= layers.size())
                    t.fail("layer index " + std::to_string(l) + " outside 0.." + std::to_string(layers.size() - 1));
                if (t.size() != 3) t.fail("expected [forward_s, backward_s, update_s]");
                const double max = limits::max_layer_time_s;
                layers[static_cast<std::size_t>(l)] = {seconds{t.at(0).non_negative(max)}, seconds{t.at(1).non_negative(max)},
                                                       seconds{t.at(2).non_negative(max)}};
                seen[static_cast<std::size_t>(l)] = true;
            });
            auto& curve = by_tp[tp];
            if (!curve.points.empty() && curve.points.front().size() != layers.size())
                per_tp.fail("has " + std::to_string(layers.size()) + " layers, other entries " +
                            std::to_string(curve.points.front().size()));
            curve.add_point(mbs, std::move(layers));
        });
    });
    if (by_tp.empty()) root.fail("profile has no measurements");
    for (auto& [tp, curve] : by_tp) out.set_curve(gpu, tp, std::move(curve));
}

inline void import_profile_file(const std::filesystem::path& file, const std::string& gpu, profile_table& out) {
    const json j = parse_file(file);
    import_profile(cursor(j, file.string()), gpu, out);
}

/// The model `name` from llm_info.json. Per-layer sizes at TP 1 define the layers; other TP
/// degrees become measured per-TP statistics.
inline model_spec import_llm_info(const cursor& root, const std::string& name, int sequence_length = 0) {
    const cursor m = root[name];
    model_spec out;
    out.name = name;
    out.sequence_length = sequence_length;
    const cursor tp1 = m["1"];
    if (tp1.size() > std::size_t{limits::max_layers}) tp1.fail("more than " + std::to_string(limits::max_layers) + " layers (docs/formats.md, limits)");
    out.layers.resize(tp1.size());
    tp1.for_each_member([&](const std::string& key, const cursor& c) {
        const int l = cursor::integer_key(key, tp1);
        if (l < 0 || static_cast<std::size_t>(l) >= out.layers.size()) c.fail("layer index out of range");
        auto& layer = out.layers[static_cast<std::size_t>(l)];
        layer.name = "layer" + key;
        const double max = limits::max_layer_elems;
        layer.params = c["params_floats"].non_negative(max);
        layer.act_output_elems = c["act_output_floats"].non_negative(max);
        layer.act_input_elems = c["act_input_floats"].non_negative(max);
        layer.act_mem_elems = c["act_mem_floats"].non_negative(max);
    });
    m.for_each_member([&](const std::string& tp_key, const cursor& per_tp) {
        const int tp = cursor::integer_key(tp_key, m);
        if (tp < 1 || tp > limits::max_tp) per_tp.fail("TP degree must be in [1, " + std::to_string(limits::max_tp) + "]");
        if (tp == 1) return;
        per_tp.for_each_member([&](const std::string& key, const cursor& c) {
            const int l = cursor::integer_key(key, per_tp);
            if (l < 0 || static_cast<std::size_t>(l) >= out.layers.size()) c.fail("layer index out of range");
            out.layers[static_cast<std::size_t>(l)].per_tp[tp] = {c["params_floats"].non_negative(limits::max_layer_elems),
                                                                  c["act_mem_floats"].non_negative(limits::max_layer_elems)};
        });
    });
    return out;
}

namespace detail {
/// A GPU count keyed by "1", "2", ... in the network files.
inline int gpus_key(const std::string& key, const cursor& owner) {
    const int k = cursor::integer_key(key, owner);
    if (k < 1 || k > limits::max_gpus_per_node) owner.fail("key '" + key + "': a GPU count must be in [1, " + std::to_string(limits::max_gpus_per_node) + "]");
    return k;
}

inline builtin_link read_fit(const cursor& c) {
    if (c.size() != 2) c.fail("expected [[coefficients...], max_bandwidth_bytes_per_s]");
    std::vector<double> coeffs;
    c.at(0).for_each_item([&](const cursor& x) { coeffs.push_back(x.bounded(limits::max_bandwidth)); });
    try {
        return polynomial_link(coeffs, bytes_per_second{c.at(1).positive(limits::max_bandwidth)});
    } catch (const input_error& e) {
        if (!e.source().empty()) throw;
        c.fail(e.problem());
    }
}
}  // namespace detail

/// multizone_bandwidths_het.json (and the homogeneous multizone file): links between every
/// (zone, GPU type, GPUs) pair whose zone and GPU type the cluster has; others are skipped.
/// Returns the number of links set.
inline std::size_t import_network(const cursor& root, cluster& hw) {
    std::size_t n = 0;
    root.for_each_member([&](const std::string& z1, const cursor& a) {
        const auto zone1 = hw.find_zone(z1);
        if (!zone1) return;
        a.for_each_member([&](const std::string& g1, const cursor& b) {
            const auto gpu1 = hw.find_gpu(g1);
            if (!gpu1) return;
            b.for_each_member([&](const std::string& n1, const cursor& c) {
                const int k1 = detail::gpus_key(n1, b);
                c.for_each_member([&](const std::string& z2, const cursor& d) {
                    const auto zone2 = hw.find_zone(z2);
                    if (!zone2) return;
                    d.for_each_member([&](const std::string& g2, const cursor& e) {
                        const auto gpu2 = hw.find_gpu(g2);
                        if (!gpu2) return;
                        e.for_each_member([&](const std::string& n2, const cursor& f) {
                            const int k2 = detail::gpus_key(n2, e);
                            hw.network.set_link({*zone1, *gpu1, k1}, {*zone2, *gpu2, k2}, detail::read_fit(f));
                            ++n;
                        });
                    });
                });
            });
        });
    });
    return n;
}

/// intra_node_bandwidths.json: links inside a node, per GPU type and GPU count.
inline void import_intra_node(const cursor& root, cluster& hw) {
    root.for_each_member([&](const std::string& g, const cursor& per_gpu) {
        const auto gpu = hw.find_gpu(g);
        if (!gpu) return;
        per_gpu.for_each_member([&](const std::string& k, const cursor& fit) {
            hw.network.set_intra_node(*gpu, detail::gpus_key(k, per_gpu), detail::read_fit(fit));
        });
    });
}

/// network_coeffs_all_homo.json: "inter" links between nodes of one GPU type, applied within
/// every zone of the cluster; "intra" links inside a node.
inline void import_homogeneous_network(const cursor& root, cluster& hw) {
    if (auto inter = root.find("inter"))
        inter->for_each_member([&](const std::string& g, const cursor& per_gpu) {
            const auto gpu = hw.find_gpu(g);
            if (!gpu) return;
            per_gpu.for_each_member([&](const std::string& k, const cursor& fit) {
                const int gpus = detail::gpus_key(k, per_gpu);
                const builtin_link l = detail::read_fit(fit);
                for (std::size_t z = 0; z < hw.zones.size(); ++z)
                    hw.network.set_link({zone_id{z}, *gpu, gpus}, {zone_id{z}, *gpu, gpus}, l);
            });
        });
    if (auto intra = root.find("intra")) import_intra_node(*intra, hw);
}

/// communication_cost.json: USD per GB between zones the cluster has.
inline void import_egress_prices(const cursor& root, cluster& hw) {
    root.for_each_member([&](const std::string& z1, const cursor& row) {
        const auto from = hw.find_zone(z1);
        if (!from) return;
        row.for_each_member([&](const std::string& z2, const cursor& price) {
            const auto to = hw.find_zone(z2);
            if (!to) return;
            hw.network.set_egress_price(*from, *to, usd_per_gigabyte(price.non_negative(limits::max_usd_per_gb)));
        });
    });
}

/// training_config_*.json: the job (fp32 Adam as in the paper's experiments) and the model name.
inline std::pair<job_spec, std::string> import_training_config(const cursor& root) {
    job_spec j;
    j.global_batch = root["global_batch_size"].integer(1, limits::max_global_batch);
    j.sequence_length = root["sequence_length"].integer(1, limits::max_sequence);
    std::string opt = root.find("optimizer") ? root["optimizer"].string() : "Adam";
    for (auto& ch : opt) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (opt == "adam" || opt == "adamw") j.optimizer = optimizer_kind::adam;
    else if (opt == "sgd") j.optimizer = optimizer_kind::sgd;
    else root["optimizer"].fail("unknown optimizer '" + opt + "'");
    return {j, root["model"].string()};
}

struct node_info {
    int gpus_per_node = 0;
    bytes memory{};
};

/// basic_cluster_config.json: GPUs per node and memory per GPU, by GPU type.
inline std::map<std::string, node_info> import_cluster_config(const cursor& root) {
    std::map<std::string, node_info> out;
    root.for_each_member([&](const std::string& key, const cursor& c) {
        if (!c.is_object()) return;  // e.g. "zone": "us-central1-a"
        out[key] = {c["gpus_per_node"].integer(1, limits::max_gpus_per_node), bytes{c["mem_per_gpu"].positive(limits::max_gpu_memory_bytes)}};
    });
    return out;
}

}  // namespace hetplan::io::sailor
