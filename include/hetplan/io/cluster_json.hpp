#pragma once
// Cluster files (docs/formats.md):
// {
//   "gpus":  [{"name": "A100-40", "memory_gib": 40, "gpus_per_node": 4, "price_per_hour": 3.74,
//              "vendor": "NVIDIA", "peak_tflops": {"fp32": 19.5, "fp16": 312}}],
//   "zones": [{"name": "us-central1-a", "region": "us-central1"}],
//   "available": [{"gpu": "A100-40", "zone": "us-central1-a", "count": 32}],
//   "network": {"default": LINK, "zone_pairs": [{"from": Z, "to": Z, "link": LINK}],
//               "links": [{"from": {"zone": Z, "gpu": G, "gpus": 4}, "to": {...}, "link": LINK}],
//               "intra_node": [{"gpu": G, "gpus": 4, "link": LINK}],
//               "egress_usd_per_gb": [{"from": Z, "to": Z, "price": 0.01}]}
// }
// write_cluster writes what read_cluster reads: a cluster read back is the same cluster.
#include <filesystem>
#include <set>
#include <string>
#include <utility>

#include "hetplan/core/separate_compilation.hpp"
#include "hetplan/hardware/cluster.hpp"
#include "hetplan/io/link_json.hpp"

namespace hetplan::io {

inline gpu_type_id gpu_ref(const cluster& hw, const cursor& c) {
    const std::string name = c.string();
    if (auto id = hw.find_gpu(name)) return *id;
    c.fail("unknown GPU type '" + name + "'");
}
inline zone_id zone_ref(const cluster& hw, const cursor& c) {
    const std::string name = c.string();
    if (auto id = hw.find_zone(name)) return *id;
    c.fail("unknown zone '" + name + "'");
}

inline gpu_spec read_gpu(const cursor& c) {
    c.known_fields({"name", "memory_gib", "memory_bytes", "gpus_per_node", "price_per_hour", "vendor", "peak_tflops"});
    if (c.find("memory_bytes") && c.find("memory_gib")) c["memory_bytes"].fail("give memory_gib or memory_bytes, not both");
    gpu_spec g;
    g.type_name = c["name"].string();
    if (g.type_name.empty()) c["name"].fail("GPU name is empty");
    if (auto b = c.find("memory_bytes")) g.memory_capacity = bytes{b->positive(limits::max_gpu_memory_bytes)};
    else g.memory_capacity = gibibytes(c["memory_gib"].positive(limits::max_gpu_memory_bytes / 1073741824.0));
    if (auto p = c.find("price_per_hour")) g.price = usd_per_hour{p->non_negative(limits::max_usd_per_hour)};
    if (auto v = c.find("vendor")) g.vendor = v->string();
    if (auto peaks = c.find("peak_tflops"))
        peaks->for_each_member([&](const std::string& key, const cursor& v) {
            auto t = parse_dtype(key);
            if (!t) v.fail("unknown dtype '" + key + "'");
            // A tiny peak is a unit slip: 311e-92 made layer times of 1e91 s (fuzzing, issue 16).
            g.with_peak(*t, teraflops(v.zero_or_within(limits::min_peak_flops / 1e12, limits::max_peak_flops / 1e12)));
        });
    return g;
}

inline endpoint read_endpoint(const cluster& hw, const cursor& c) {
    c.known_fields({"zone", "gpu", "gpus"});
    return {zone_ref(hw, c["zone"]), gpu_ref(hw, c["gpu"]), c["gpus"].integer(1, limits::max_gpus_per_node)};
}

/// The most GPUs a cluster file may offer (core/limits.hpp).
inline constexpr int max_cluster_gpus = limits::max_gpus;

inline cluster read_cluster(const cursor& root) {
    root.known_fields({"gpus", "zones", "available", "network"});
    cluster hw;
    root["gpus"].for_each_item([&](const cursor& c) {
        gpu_spec g = read_gpu(c);
        if (hw.find_gpu(g.type_name)) c["name"].fail("duplicate GPU type '" + g.type_name + "'");
        if (hw.gpus.size() >= std::size_t{limits::max_gpu_types})
            c.fail("more than " + std::to_string(limits::max_gpu_types) + " GPU types (docs/formats.md, limits)");
        hw.add_gpu(std::move(g), c["gpus_per_node"].integer(1, limits::max_gpus_per_node));
    });
    root["zones"].for_each_item([&](const cursor& c) {
        c.known_fields({"name", "region"});
        if (hw.zones.size() >= std::size_t{limits::max_zones})
            c.fail("more than " + std::to_string(limits::max_zones) + " zones (docs/formats.md, limits)");
        const std::string name = c["name"].string();
        if (hw.find_zone(name)) c["name"].fail("duplicate zone '" + name + "'");
        auto r = c.find("region");
        hw.add_zone(name, r ? r->string() : std::string{});
    });
    if (auto avail = root.find("available")) {
        std::set<std::pair<std::size_t, std::size_t>> listed;
        long long total = 0;
        avail->for_each_item([&](const cursor& c) {
            c.known_fields({"gpu", "zone", "count"});
            const gpu_type_id g = gpu_ref(hw, c["gpu"]);
            const zone_id z = zone_ref(hw, c["zone"]);
            const int n = c["count"].integer(0, max_cluster_gpus);
            // The same (GPU type, zone) twice is a copy-paste slip more often than a sum.
            if (!listed.insert({g.index(), z.index()}).second)
                c.fail("GPU type '" + c["gpu"].string() + "' in zone '" + c["zone"].string() + "' is listed twice (give one entry with the total)");
            total += n;
            if (total > max_cluster_gpus)
                c["count"].fail("the cluster offers more than " + std::to_string(max_cluster_gpus) + " GPUs, the most hetplan plans for (docs/reliability.md)");
            hw.pool.set(g, z, n);
        });
    }
    if (auto net = root.find("network")) {
        net->known_fields({"default", "zone_pairs", "links", "intra_node", "egress_usd_per_gb"});
        if (auto d = net->find("default")) hw.network.set_default(read_link(*d));
        if (auto zp = net->find("zone_pairs"))
            zp->for_each_item([&](const cursor& c) {
                c.known_fields({"from", "to", "link"});
                hw.network.set_zone_default(zone_ref(hw, c["from"]), zone_ref(hw, c["to"]), read_link(c["link"]));
            });
        if (auto links = net->find("links"))
            links->for_each_item([&](const cursor& c) {
                c.known_fields({"from", "to", "link"});
                hw.network.set_link(read_endpoint(hw, c["from"]), read_endpoint(hw, c["to"]), read_link(c["link"]));
            });
        if (auto intra = net->find("intra_node"))
            intra->for_each_item([&](const cursor& c) {
                c.known_fields({"gpu", "gpus", "link"});
                hw.network.set_intra_node(gpu_ref(hw, c["gpu"]), c["gpus"].integer(1, limits::max_gpus_per_node), read_link(c["link"]));
            });
        if (auto eg = net->find("egress_usd_per_gb"))
            eg->for_each_item([&](const cursor& c) {
                c.known_fields({"from", "to", "price"});
                hw.network.set_egress_price(zone_ref(hw, c["from"]), zone_ref(hw, c["to"]), usd_per_gigabyte(c["price"].non_negative(limits::max_usd_per_gb)));
            });
    }
    return hw;
}

/// The cluster as read_cluster reads it: GPU types (with their peaks), zones, the pool and every
/// network entry as it was set.
[[nodiscard]] inline json write_cluster(const cluster& hw) {
    json gpus = json::array(), zones = json::array(), available = json::array();
    for (std::size_t g = 0; g < hw.gpus.size(); ++g) {
        const gpu_spec& spec = hw.gpus[g];
        json peaks = json::object();
        for (dtype t : all_dtypes)
            if (spec.peak_flops(t).value > 0) peaks[std::string(to_string(t))] = spec.peak_flops(t).value / 1e12;
        gpus.push_back({{"name", spec.type_name},
                        {"memory_bytes", spec.memory_capacity.value},
                        {"gpus_per_node", hw.gpus_per_node(gpu_type_id{g})},
                        {"price_per_hour", spec.price.value},
                        {"vendor", spec.vendor},
                        {"peak_tflops", std::move(peaks)}});
    }
    for (const zone_spec& z : hw.zones) zones.push_back({{"name", z.name}, {"region", hw.regions.at(z.region.index()).name}});
    for (std::size_t g = 0; g < hw.gpus.size(); ++g)
        for (std::size_t z = 0; z < hw.zones.size(); ++z)
            if (const int n = hw.pool.available(gpu_type_id{g}, zone_id{z}); n > 0)
                available.push_back({{"gpu", hw.gpus[g].type_name}, {"zone", hw.zones[z].name}, {"count", n}});
    auto zone_name = [&](zone_id z) { return hw.zones.at(z.index()).name; };
    auto end = [&](const endpoint& e) { return json{{"zone", zone_name(e.zone)}, {"gpu", hw.gpus.at(e.gpu.index()).type_name}, {"gpus", e.gpus}}; };
    json net = json::object(), pairs = json::array(), links = json::array(), intra = json::array(), egress = json::array();
    const auto& nm = hw.network;
    if (nm.default_link()) net["default"] = write_link(*nm.default_link());
    nm.for_each_zone_default([&](zone_id a, zone_id b, const builtin_link& l) { pairs.push_back({{"from", zone_name(a)}, {"to", zone_name(b)}, {"link", write_link(l)}}); });
    nm.for_each_link([&](const endpoint& a, const endpoint& b, const builtin_link& l) { links.push_back({{"from", end(a)}, {"to", end(b)}, {"link", write_link(l)}}); });
    nm.for_each_intra_node([&](gpu_type_id g, int n, const builtin_link& l) {
        intra.push_back({{"gpu", hw.gpus.at(g.index()).type_name}, {"gpus", n}, {"link", write_link(l)}});
    });
    nm.for_each_egress_price([&](zone_id a, zone_id b, usd_per_byte p) { egress.push_back({{"from", zone_name(a)}, {"to", zone_name(b)}, {"price", p.value * 1e9}}); });
    if (!pairs.empty()) net["zone_pairs"] = std::move(pairs);
    if (!links.empty()) net["links"] = std::move(links);
    if (!intra.empty()) net["intra_node"] = std::move(intra);
    if (!egress.empty()) net["egress_usd_per_gb"] = std::move(egress);
    return {{"gpus", std::move(gpus)}, {"zones", std::move(zones)}, {"available", std::move(available)}, {"network", std::move(net)}};
}

#if HETPLAN_HEADER_BODIES
HETPLAN_DECL cluster read_cluster_file(const std::filesystem::path& file) {
    const json j = parse_file(file);
    return read_cluster(cursor(j, file.string()));
}
#else
cluster read_cluster_file(const std::filesystem::path& file);  // src/io_functions.cpp
#endif

}  // namespace hetplan::io
