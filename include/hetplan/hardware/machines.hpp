#pragma once
// The machines (nodes) of a cluster and the link between any two of their GPUs. A zone's GPUs of
// one type fill whole nodes of that type's shape; a remainder forms one partial node. GPUs on one
// node talk over the node's interconnect (NVLink, NVSwitch, PCIe: network_model::intra_node),
// GPUs on different nodes over the network (network_model::between).
#include <algorithm>
#include <string>
#include <vector>

#include "hetplan/hardware/cluster.hpp"

namespace hetplan {

struct machine {
    gpu_type_id gpu{};
    zone_id zone{};
    int index = 0;  ///< node number among this type's nodes in this zone
    int gpus = 0;   ///< GPUs of the pool on it

    [[nodiscard]] endpoint as_endpoint() const { return {zone, gpu, 1}; }
    /// Machines interchangeable for planning: same type, zone and size.
    [[nodiscard]] bool alike(const machine& o) const { return gpu == o.gpu && zone == o.zone && gpus == o.gpus; }
    friend bool operator==(const machine&, const machine&) = default;
};

/// Every machine with GPUs in `pool` (the cluster's own by default), by GPU type, then zone,
/// then node.
[[nodiscard]] inline std::vector<machine> machines_of(const cluster& hw, const resource_pool& pool) {
    std::vector<machine> out;
    for (std::size_t g = 0; g < hw.gpus.size(); ++g)
        for (std::size_t z = 0; z < hw.zones.size(); ++z) {
            const gpu_type_id gid{g};
            int left = pool.available(gid, zone_id{z});
            const int per = hw.gpus_per_node(gid);
            for (int k = 0; left > 0; ++k, left -= per) out.push_back({gid, zone_id{z}, k, std::min(left, per)});
        }
    return out;
}
[[nodiscard]] inline std::vector<machine> machines_of(const cluster& hw) { return machines_of(hw, hw.pool); }

/// Node `index` of a type in a zone, with the pool's GPUs on it (0 beyond the last node).
[[nodiscard]] inline machine machine_at(const cluster& hw, const resource_pool& pool, gpu_type_id gpu, zone_id zone, int index) {
    const int per = hw.gpus_per_node(gpu);
    const int left = pool.available(gpu, zone) - index * per;
    return {gpu, zone, index, std::max(0, std::min(per, left))};
}

/// The link between a GPU of machine a and one of machine b: the node's interconnect when they
/// are the same machine (as measured for its GPU count, or for a full node), the network between
/// them otherwise (also for the same machine when no interconnect is given).
[[nodiscard]] inline const builtin_link& gpu_link(const cluster& hw, const machine& a, const machine& b) {
    if (a == b) {
        if (const builtin_link* l = hw.network.intra_node(a.gpu, a.gpus)) return *l;
        if (const builtin_link* l = hw.network.intra_node(a.gpu, hw.gpus_per_node(a.gpu))) return *l;
    }
    return hw.network.between(a.as_endpoint(), b.as_endpoint());
}

}  // namespace hetplan
