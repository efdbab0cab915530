#pragma once
// One result type for every planner: ranked, validated, priced plans; what the search did; why
// it returned what it did (notes); whether it was stopped; how long it took.
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/concepts/objective.hpp"
#include "hetplan/core/units.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"

namespace hetplan {

/// A plan the search returns: valid under the planner's memory model, priced by its simulator.
struct ranked_plan {
    plan pl;
    estimate est;
    objective_terms terms;  ///< what the objective read
    double value = 0;       ///< the objective's value (lower is better)
    seconds predicted{};    ///< the solver's own iteration time (equals est's where the solver prices exactly)

    [[nodiscard]] seconds iteration() const { return est.time.iteration; }
    [[nodiscard]] double throughput() const { return est.time.throughput(); }
    [[nodiscard]] usd cost() const { return est.money.total; }
    [[nodiscard]] int gpus() const { return pl.total_gpus(); }
};

/// What a progress hook sees after every candidate priced.
struct search_progress {
    std::size_t candidates = 0;                               ///< candidates priced so far
    double best = std::numeric_limits<double>::infinity();    ///< best objective value so far (+inf: none yet)
    const char* unit = "s/iteration";                         ///< of `best`
};

/// Counts of what the search did; `counters` adds a planner's own (DP states, partitions...).
struct search_stats {
    std::size_t candidates = 0;  ///< generated (outer level)
    std::size_t pruned = 0;      ///< dropped by a pruner or a bound (outer level)
    std::size_t solved = 0;      ///< handed to the solver
    std::size_t plans = 0;       ///< complete plans priced and validated
    std::size_t invalid = 0;     ///< plans the validator rejected (a bug if ever > 0)
    std::vector<std::pair<std::string, std::size_t>> counters;

    [[nodiscard]] std::size_t counter(const std::string& name) const {
        for (const auto& [k, v] : counters)
            if (k == name) return v;
        return 0;
    }
};

struct plan_result {
    std::string planner;
    std::vector<ranked_plan> plans;  ///< best first, distinct; empty when nothing is admitted (see notes)
    search_stats stats;
    std::vector<std::string> notes;
    bool stopped = false;            ///< the stop condition or a hook ended the search early
    seconds elapsed{};
    /// What waiting could still gain (branch and bound): no plan the same search returns with no
    /// stop condition has an objective value below this. The least floor of what a stopped
    /// search left open, at most the least value found; that value itself when the search
    /// finished (+inf: it finished without a plan; best() may be a plan up to the tie band
    /// above it). Absent where the planner proves none (heuristic scans, searches without
    /// floors).
    std::optional<double> bound;

    [[nodiscard]] const ranked_plan* best() const { return plans.empty() ? nullptr : &plans.front(); }
    /// How far the best plan may be from what the finished search returns, relative to its
    /// value: (best - bound) / |best|; 0 when the search finished. Absent without both.
    [[nodiscard]] std::optional<double> gap() const {
        if (!bound || plans.empty() || !std::isfinite(*bound)) return std::nullopt;
        if (!stopped) return 0.0;
        const double v = plans.front().value;  // within the tie band of the least value
        return v <= *bound ? 0.0 : (v - *bound) / std::abs(v);
    }
};

}  // namespace hetplan
