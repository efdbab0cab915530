#pragma once
// The simulator's least iteration time over a solution's layouts on the real zones
// (search/zone_layout.hpp): what the floors of an instance over H6's merged cells must stay under.
#include <algorithm>
#include <limits>

#include "hetplan/search/zone_layout.hpp"
#include "hetplan/cost/simulator.hpp"

namespace hetplan::test {

template <class SP, class Stages>
[[nodiscard]] double least_simulated_iteration(const simulator<>& sim, const problem& pb, const SP& sp, const Stages& stages) {
    double least = std::numeric_limits<double>::infinity();
    for (const plan& pl : search::zone_layouts(sp, stages)) {
        try {
            least = std::min(least, sim.run(pb, pl).time.iteration.value);
        } catch (const missing_link&) {  // a layout over a missing link: not a plan
        }
    }
    return least;
}

}  // namespace hetplan::test
