#pragma once
// The simulator: one call prices a plan with a memory, a time and a money model, composed at
// compile time. Defaults are Sailor's models (§4.3).
#include "hetplan/concepts/cost_model.hpp"
#include "hetplan/concepts/memory_model.hpp"
#include "hetplan/concepts/time_model.hpp"
#include "hetplan/cost/memory/sailor.hpp"
#include "hetplan/cost/money/sailor.hpp"
#include "hetplan/cost/time/sailor.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/validator.hpp"

namespace hetplan {

template <class MemoryModel = sailor_memory_model, class TimeModel = sailor_time_model,
          class CostModel = sailor_money_model>
struct simulator {
    static_assert(concepts::check_memory_model<MemoryModel>());
    static_assert(concepts::check_time_model<TimeModel>());
    static_assert(concepts::check_cost_model<CostModel>());

    using memory_type = MemoryModel;
    using time_type = TimeModel;
    using money_type = CostModel;

    MemoryModel memory{};
    TimeModel time{};
    CostModel money{};

    [[nodiscard]] estimate run(const problem& pb, const plan& pl) const {
        require_priceable(pb, pl);  // before any model indexes a layer or divides by a stage's workers
        estimate e;
        e.memory = memory.estimate(pb, pl);
        e.time = time.estimate(pb, pl);
        e.money = money.estimate(pb, pl, e.time);
        return e;
    }
};

}  // namespace hetplan
