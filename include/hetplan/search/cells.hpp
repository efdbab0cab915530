#pragma once
// What a search allocates: GPUs of one type in one zone ("cells", Sailor §4.2.2: resources as a
// map of GPU types and zones), in worker order (zone, then type), counted in GPUs.
// H6 merges the zones of a region into one cell per type (see prune/h6_merge_zones.hpp).
// Also the kinds of candidate a stage DP judges with pruners: a stage's typing (which GPU types
// serve it, at which TP) and a stage's placement (the cells its replicas come from, as far as
// the DP has chosen them).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "hetplan/core/error.hpp"
#include "hetplan/hardware/cluster.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/problem.hpp"

namespace hetplan::search {

inline constexpr std::size_t max_cells = 16;  ///< (type, zone) cells one search handles
/// GPU types one search handles: its typings are subsets of the types, so a stage DP is
/// exponential in them; eight is above any cluster the papers plan (at most four or five).
inline constexpr std::size_t max_types = 8;

/// A count per cell (replicas or GPUs), indexed like cell_set::cells.
using cell_counts = std::array<std::uint16_t, max_cells>;

struct resource_cell {
    gpu_type_id gpu{};
    zone_id zone{};          ///< the zone (with H6: the region's first zone, standing for all)
    region_id region{};
    std::uint8_t type = 0;   ///< index into the search's GPU types
    int capacity = 0;        ///< GPUs, the partial node included
    /// The real zones behind the cell and their GPUs (one unless H6 merged them).
    boost::container::small_vector<std::pair<zone_id, int>, 4> zones;
};

struct cell_set {
    std::vector<resource_cell> cells;
    std::vector<gpu_type_id> types;
};

/// A typing of stage `stage` of a `stages`-stage pipeline: the TP degree of each GPU type that
/// serves it (indexed like cell_set::types; 0 = absent).
struct stage_typing {
    int stage = 0, stages = 1;
    layer_range layers{};
    std::array<std::uint8_t, max_types> tp{};
    std::uint8_t types = 0;  ///< mask of the types present
    const cell_set* domain = nullptr;
};

/// The cells a stage's replicas come from (mask over domain->cells), as far as chosen: a
/// partial candidate while the stage DP enumerates compositions. Pruners of placements must be
/// monotone: once a placement is dropped, so is every placement with more cells.
struct stage_placement {
    int stage = 0;
    std::uint32_t cells = 0;
    std::uint8_t types = 0;  ///< the typing's types
    const cell_set* domain = nullptr;
};

/// Cells of every (type, zone) with GPUs in `pool`, in (zone, type) order, counted in GPUs.
/// `usable(type)` filters GPU types (e.g. those with no TP degree that could ever fit).
/// Counting GPUs is exact for TP degrees that are powers of two dividing the node size (H1):
/// TP groups taken largest first fill whole nodes exactly (the room left in a node is a
/// multiple of the next group), so any groups whose GPUs sum to at most a zone's GPUs fit its
/// whole nodes and its one partial node; a group larger than the partial node is refused by
/// the count where the partial node is all there is.
template <class Usable>
[[nodiscard]] cell_set make_cells(const cluster& hw, const resource_pool& pool, Usable&& usable) {
    cell_set out;
    for (std::size_t z = 0; z < hw.zones.size(); ++z)
        for (std::size_t g = 0; g < hw.gpus.size(); ++g) {
            const gpu_type_id gid{g};
            const zone_id zid{z};
            const int have = pool.available(gid, zid);
            if (have == 0 || !usable(gid)) continue;
            auto t = std::find(out.types.begin(), out.types.end(), gid);
            if (t == out.types.end()) {
                if (out.types.size() == max_types)
                    throw input_error("search: the pool has more than " + std::to_string(max_types) +
                                      " GPU types; a Sailor-style search handles at most " + std::to_string(max_types) +
                                      " at once (each stage's typing is a subset of them): restrict the pool to the types worth "
                                      "using, or plan with zorse or cephalo, which take any number");
                t = out.types.insert(out.types.end(), gid);
            }
            resource_cell c;
            c.gpu = gid;
            c.zone = zid;
            c.region = hw.region_of(zid);
            c.type = static_cast<std::uint8_t>(t - out.types.begin());
            c.capacity = have;
            c.zones.emplace_back(zid, have);
            out.cells.push_back(c);
        }
    if (out.cells.size() > max_cells)
        throw input_error("search: " + std::to_string(out.cells.size()) + " (GPU type, zone) cells, at most " +
                          std::to_string(max_cells) + " supported; merge zones (H6) or restrict the pool");
    return out;
}

/// What a Sailor search allocates from: the cells of GPUs per (GPU type, zone) of the
/// types H1 can use (`tps`: their TP degrees), transformed by `zones` (H6 merges a region's
/// zones, keep_zones does not), and how many GPUs they hold.
struct sailor_domain {
    cell_set cells;
    std::vector<std::vector<int>> tps;  ///< TP degrees per search type (H1)
    int gpus = 0;
};

template <class Zones, class TpDegrees>
[[nodiscard]] sailor_domain make_sailor_domain(const problem& pb, const Zones& zones, const TpDegrees& h1) {
    sailor_domain d{zones(make_cells(pb.hw, pb.pool(), [&](gpu_type_id g) { return !h1(pb, g).empty(); })), {}, 0};
    for (gpu_type_id g : d.cells.types) d.tps.push_back(h1(pb, g));
    for (const auto& c : d.cells.cells) d.gpus += c.capacity;
    return d;
}

/// Endpoint pairs of the domain (every real zone behind a cell, at each TP degree of its type)
/// that the network has no link for, and the first of them; a search skips placements that
/// need one.
struct link_gaps {
    std::size_t pairs = 0, missing = 0;
    std::pair<endpoint, endpoint> first{};
};

[[nodiscard]] inline link_gaps find_link_gaps(const problem& pb, const sailor_domain& d) {
    std::vector<endpoint> ends;
    for (const auto& c : d.cells.cells)
        for (const auto& [z, n] : c.zones)
            for (int tp : d.tps[c.type]) ends.push_back({z, c.gpu, tp});
    link_gaps out;
    for (const endpoint& a : ends)
        for (const endpoint& b : ends) {
            ++out.pairs;
            if (pb.hw.network.find(a, b)) continue;
            if (out.missing++ == 0) out.first = {a, b};
        }
    return out;
}

}  // namespace hetplan::search
