#pragma once
// Checks shared by planner tests: every returned plan passes the validator and fits in memory.
#include <doctest/doctest.h>

#include "hetplan/planners/sailor.hpp"

namespace hetplan::test {

inline void check_all_valid(const problem& pb, const planner_result& r) {
    CHECK(r.stats.invalid == 0);
    for (const auto& c : r.ranked) {
        const auto rep = validate(pb, c.pl);
        CHECK_MESSAGE(rep.ok(), rep.summary());
        CHECK(c.est.memory.fits());
    }
}

}  // namespace hetplan::test
