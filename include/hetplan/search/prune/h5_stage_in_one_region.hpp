#pragma once
// H5 (Sailor §4.2.1): a stage's data-parallel replicas stay within one region (all-reduce over
// the WAN is slow), while consecutive stages may sit in different regions (pipeline traffic is
// small). As a piece: the cells a stage may draw from, grouped by region.
#include <vector>

#include "hetplan/search/cells.hpp"

namespace hetplan::search {

struct h5_stage_in_one_region {
    /// Bit masks over `cells`, one per region present: the cells a stage may use together.
    [[nodiscard]] std::vector<std::uint32_t> groups(const std::vector<resource_cell>& cells) const {
        std::vector<std::pair<region_id, std::uint32_t>> by_region;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            auto it = std::find_if(by_region.begin(), by_region.end(), [&](const auto& p) { return p.first == cells[c].region; });
            if (it == by_region.end()) by_region.emplace_back(cells[c].region, 0u), it = by_region.end() - 1;
            it->second |= 1u << c;
        }
        std::vector<std::uint32_t> out;
        for (const auto& [r, mask] : by_region) out.push_back(mask);
        return out;
    }
};

/// Without H5: a stage may draw from every cell.
[[nodiscard]] inline std::vector<std::uint32_t> all_cells_group(const std::vector<resource_cell>& cells) {
    return {cells.empty() ? 0u : static_cast<std::uint32_t>((std::uint64_t{1} << cells.size()) - 1)};
}

}  // namespace hetplan::search
