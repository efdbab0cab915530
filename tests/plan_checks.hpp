#pragma once
// Checks shared by planner tests: every returned plan passes the validator and fits in memory.
#include <doctest/doctest.h>

#include "hetplan/cost/memory/sailor.hpp"
#include "hetplan/plan/validator.hpp"
#include "hetplan/search/result.hpp"

namespace hetplan::test {

template <class MemoryModel = sailor_memory_model>
void check_all_valid(const problem& pb, const plan_result& r, const MemoryModel& mm = {}) {
    CHECK(r.stats.invalid == 0);
    for (const auto& c : r.plans) {
        const auto rep = validate(pb, c.pl, mm);
        CHECK_MESSAGE(rep.ok(), rep.summary());
        CHECK(c.est.memory.fits());
    }
}

}  // namespace hetplan::test
