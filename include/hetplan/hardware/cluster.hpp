#pragma once
// A cluster: GPU types with their node shapes, zones grouped into regions, the GPUs each zone
// offers, and the network between them. Names are resolved to dense ids once, here.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hetplan/core/error.hpp"
#include "hetplan/hardware/gpu.hpp"
#include "hetplan/hardware/network_model.hpp"
#include "hetplan/hardware/resource_pool.hpp"
#include "hetplan/hardware/topology.hpp"

namespace hetplan {

struct cluster {
    std::vector<gpu_spec> gpus;       ///< indexed by gpu_type_id
    std::vector<node_shape> nodes;    ///< one per GPU type, same index
    std::vector<region_spec> regions; ///< indexed by region_id
    std::vector<zone_spec> zones;     ///< indexed by zone_id
    resource_pool pool;
    network_model network;

    [[nodiscard]] const gpu_spec& gpu(gpu_type_id g) const { return gpus.at(g.index()); }
    [[nodiscard]] const zone_spec& zone(zone_id z) const { return zones.at(z.index()); }
    [[nodiscard]] region_id region_of(zone_id z) const { return zone(z).region; }
    [[nodiscard]] int gpus_per_node(gpu_type_id g) const { return nodes.at(g.index()).gpus_per_node; }
    /// "A100-40 x4 in us-central1-a": an endpoint as a user names it.
    [[nodiscard]] std::string describe(endpoint e) const { return gpu(e.gpu).type_name + " x" + std::to_string(e.gpus) + " in " + zone(e.zone).name; }
    /// What to tell a user about a missing link: both endpoints and the fields that add one.
    [[nodiscard]] std::string describe(const missing_link& m) const {
        return "the cluster's network has no link from " + describe(m.from()) + " to " + describe(m.to()) +
               " (add network.default, a network.zone_pairs or a network.links entry; docs/formats.md)";
    }

    [[nodiscard]] std::optional<gpu_type_id> find_gpu(std::string_view name) const {
        for (std::size_t i = 0; i < gpus.size(); ++i)
            if (gpus[i].type_name == name) return gpu_type_id{i};
        return std::nullopt;
    }
    [[nodiscard]] gpu_type_id gpu_id(std::string_view name) const {
        if (auto id = find_gpu(name)) return *id;
        throw input_error("unknown GPU type '" + std::string(name) + "'");
    }
    [[nodiscard]] std::optional<zone_id> find_zone(std::string_view name) const {
        for (std::size_t i = 0; i < zones.size(); ++i)
            if (zones[i].name == name) return zone_id{i};
        return std::nullopt;
    }
    [[nodiscard]] zone_id zone_id_of(std::string_view name) const {
        if (auto id = find_zone(name)) return *id;
        throw input_error("unknown zone '" + std::string(name) + "'");
    }

    /// Adds a GPU type (with its node shape) and returns its id; the pool grows to match.
    gpu_type_id add_gpu(gpu_spec spec, int gpus_per_node) {
        if (find_gpu(spec.type_name)) throw input_error("duplicate GPU type '" + spec.type_name + "'");
        if (!(spec.memory_capacity.value > 0))
            throw input_error("GPU type '" + spec.type_name + "': memory must be positive");
        if (gpus_per_node < 1) throw input_error("GPU type '" + spec.type_name + "': gpus_per_node must be >= 1");
        const gpu_type_id id{gpus.size()};
        gpus.push_back(std::move(spec));
        nodes.push_back({id, gpus_per_node});
        resize_pool();
        return id;
    }
    /// Adds a zone, creating its region if new, and returns its id.
    zone_id add_zone(const std::string& name, const std::string& region = {}) {
        if (find_zone(name)) throw input_error("duplicate zone '" + name + "'");
        const std::string rname = region.empty() ? region_of_zone_name(name) : region;
        region_id rid{regions.size()};
        bool found = false;
        for (std::size_t i = 0; i < regions.size(); ++i)
            if (regions[i].name == rname) { rid = region_id{i}; found = true; }
        if (!found) regions.push_back({rname});
        zones.push_back({name, rid});
        resize_pool();
        return zone_id{zones.size() - 1};
    }

private:
    void resize_pool() {
        resource_pool bigger(gpus.size(), zones.size());
        for (std::size_t g = 0; g < pool.gpu_types(); ++g)
            for (std::size_t z = 0; z < pool.zones(); ++z)
                bigger.set(gpu_type_id{g}, zone_id{z}, pool.available(gpu_type_id{g}, zone_id{z}));
        pool = std::move(bigger);
    }
};

}  // namespace hetplan
