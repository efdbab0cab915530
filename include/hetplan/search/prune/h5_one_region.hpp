#pragma once
// H5 (Sailor §4.2.1): a stage's data-parallel replicas stay within one region (an all-reduce over
// the WAN is slow), while consecutive stages may sit in different regions (pipeline traffic is
// small). A pruner on stage placements: it drops a placement as soon as its cells span two
// regions, so the stage DP never enumerates the rest of such compositions. Monotone, as pruners
// of partial candidates must be.
#include <bit>

#include "hetplan/concepts/pruner.hpp"
#include "hetplan/search/cells.hpp"

namespace hetplan::search {

struct h5_one_region {
    [[nodiscard]] static constexpr const char* name() { return "H5 one region"; }
    [[nodiscard]] bool operator()(const problem&, const stage_placement& p) const {
        if ((p.cells & (p.cells - 1)) == 0) return true;  // one cell or none (no popcount: a libgcc call without -mpopcnt)
        const auto& cells = p.domain->cells;
        const region_id first = cells[static_cast<std::size_t>(std::countr_zero(p.cells))].region;
        for (std::uint32_t m = p.cells; m != 0; m &= m - 1)
            if (cells[static_cast<std::size_t>(std::countr_zero(m))].region != first) return false;
        return true;
    }
};

static_assert(concepts::check_pruner<h5_one_region, stage_placement>());

}  // namespace hetplan::search
