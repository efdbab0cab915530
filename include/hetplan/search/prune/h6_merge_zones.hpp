#pragma once
// H6 (Sailor §4.2.1): the zones of a region are treated as one zone (cross-zone bandwidth inside
// a region is close to intra-zone bandwidth), so the search sees one cell per (type, region).
// A transform of the search's domain (the cells), undone by the plan builder.
// The merged cell is priced with the links of the region's first zone; the plan builder spreads
// its replicas back over the real zones, filling the fullest zone first, and the simulator then
// prices the plan with the real links and egress prices.
#include <algorithm>

#include "hetplan/search/cells.hpp"

namespace hetplan::search {

struct h6_merge_zones {
    [[nodiscard]] static constexpr const char* name() { return "H6 merge zones"; }
    [[nodiscard]] cell_set operator()(const cell_set& in) const {
        cell_set out;
        out.types = in.types;
        for (const auto& c : in.cells) {
            auto it = std::find_if(out.cells.begin(), out.cells.end(),
                                   [&](const resource_cell& o) { return o.region == c.region && o.gpu == c.gpu; });
            if (it == out.cells.end()) {
                out.cells.push_back(c);
                continue;
            }
            it->capacity += c.capacity;
            it->zones.insert(it->zones.end(), c.zones.begin(), c.zones.end());
        }
        // Worker order: by (representative zone, type), as for unmerged cells.
        std::stable_sort(out.cells.begin(), out.cells.end(), [](const resource_cell& a, const resource_cell& b) {
            return std::tie(a.zone, a.gpu) < std::tie(b.zone, b.gpu);
        });
        return out;
    }
};

/// Without H6: every (type, zone) its own cell.
struct keep_zones {
    [[nodiscard]] static constexpr const char* name() { return "zones kept apart"; }
    [[nodiscard]] cell_set operator()(const cell_set& in) const { return in; }
};

}  // namespace hetplan::search
