#pragma once
// One instance of Sailor's stage-assignment problem (§4.2.2): a pipeline degree P with its layer
// partition, a microbatch size and a data-parallel degree D. For every stage it lists the ways a
// replica set may be typed: which GPU types take part and the TP degree of each (one per
// (stage, type), as in the paper's tp_ij), with the stage's compute and update time, each
// combination already filtered by memory (H2). The stage DP then chooses counts per cell.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "hetplan/cost/time/sailor.hpp"
#include "hetplan/search/cells.hpp"
#include "hetplan/search/prune/h2_min_tp.hpp"
#include "hetplan/search/prune/instance_bound.hpp"

namespace hetplan::search {

/// A typing of one stage's replicas: TP degree per GPU type (0 = type absent).
struct tp_choice {
    std::array<std::uint8_t, max_types> tp{};
    std::uint8_t types = 0;  ///< mask of the types present
    seconds compute{};       ///< forward+backward of one microbatch on the slowest type present
    seconds update{};        ///< optimizer step on the slowest type present
};

struct stage_menu {
    layer_range layers;
    std::vector<tp_choice> choices;
    bytes gradients{};    ///< all-reduce volume of the stage (full parameters x gradient bytes)
    bytes activations{};  ///< one microbatch's output, sent to the next stage
};

struct stage_problem {
    const problem* pb = nullptr;
    const cell_set* cells = nullptr;
    int P = 1, mbs = 1, D = 1;
    int microbatches = 1;  ///< M = global batch / mbs, shared by the D replicas
    int per_replica = 1;   ///< ceil(M / D): the busiest replica's microbatches
    std::vector<stage_menu> stages;
    std::vector<std::uint32_t> groups;  ///< cell masks a stage may draw from (H5 or all cells)
    bool exact_boundaries = true;       ///< see stage_dp: exact pairing or a per-cell bound
    bool track_money = false;           ///< keep cost terms in the DP (cost objective or budget)
    bytes bucket{5e8};
    std::array<double, max_types> usd_per_gpu_second{};

    instance_bound bound;  ///< floors for branch and bound (prune/instance_bound.hpp)

    /// A lower bound on the iteration time of any plan of this instance; +inf when the pool
    /// cannot serve every stage.
    [[nodiscard]] double lower_bound_iteration() const { return bound.iteration(per_replica); }
    /// A lower bound on USD per iteration.
    [[nodiscard]] double lower_bound_cost() const { return bound.cost(per_replica); }

    /// Microbatches of the replica at `position` (0-based, worker order): the first M mod D
    /// replicas take one more.
    [[nodiscard]] int microbatches_at(int position) const {
        const int r = microbatches % D;
        return r == 0 || position < r ? per_replica : per_replica - 1;
    }
};

/// Per-(stage, type, TP) compute and update times for one (P, partition, mbs); independent of
/// D and of availability, so computed once and shared by every D.
struct stage_timings {
    // [stage][type] -> (tp, compute, update) for every candidate TP.
    std::vector<std::vector<std::vector<std::tuple<int, seconds, seconds>>>> at;
};

template <class TimeModel = sailor_time_model>
[[nodiscard]] stage_timings time_stages(const problem& pb, const cell_set& cells, const std::vector<layer_range>& partition,
                                        int mbs, const std::vector<std::vector<int>>& tp_candidates, const TimeModel& tm = {}) {
    stage_timings out;
    out.at.resize(partition.size());
    for (std::size_t i = 0; i < partition.size(); ++i) {
        out.at[i].resize(cells.types.size());
        stage st;
        st.layers.push_back(partition[i]);
        for (std::size_t t = 0; t < cells.types.size(); ++t)
            for (int tp : tp_candidates[t]) {
                const worker_group w{cells.types[t], zone_id{0}, tp, mbs, 1, 1.0, -1};
                const auto wt = tm.worker_compute(pb, st, w);
                out.at[i][t].emplace_back(tp, wt.compute, wt.update);
            }
    }
    return out;
}

struct stage_problem_options {
    /// H2 as the paper applies it (§4.2.2: "Sailor precomputes tp_ij"): each (stage, type) gets
    /// one TP degree, the smallest that fits raised to the type's level here; the DP then only
    /// chooses counts. Unset: the DP chooses among every degree that fits.
    std::optional<std::array<int, max_types>> tp_level;
    bool exact_boundaries = true;
    bool track_money = false;
    memory_options memory{};
    schedule_kind schedule = schedule_kind::one_f_one_b;
};

/// Builds the instance for one D. `h2` filters TP degrees by memory (and caches the answers).
template <class MemoryModel>
[[nodiscard]] stage_problem make_stage_problem(const problem& pb, const cell_set& cells, const std::vector<layer_range>& partition,
                                               int mbs, int D, const stage_timings& times, h2_min_tp<MemoryModel>& h2,
                                               std::vector<std::uint32_t> groups, const stage_problem_options& opt,
                                               bytes bucket) {
    stage_problem sp;
    sp.pb = &pb;
    sp.cells = &cells;
    sp.P = static_cast<int>(partition.size());
    sp.mbs = mbs;
    sp.D = D;
    sp.microbatches = pb.job.global_batch / mbs;
    sp.per_replica = (sp.microbatches + D - 1) / D;
    sp.groups = std::move(groups);
    sp.exact_boundaries = opt.exact_boundaries;
    sp.track_money = opt.track_money;
    sp.bucket = bucket;
    for (std::size_t t = 0; t < cells.types.size(); ++t)
        sp.usd_per_gpu_second[t] = pb.hw.gpu(cells.types[t]).price_per_hour().value / 3600.0;

    const std::size_t T = cells.types.size();
    for (int i = 0; i < sp.P; ++i) {
        stage_menu menu;
        menu.layers = partition[static_cast<std::size_t>(i)];
        menu.gradients = bytes{pb.model.params_in(menu.layers.begin, menu.layers.end) * pb.job.gradient_bytes()};
        menu.activations = bytes{pb.model.layers.at(static_cast<std::size_t>(menu.layers.end - 1)).act_output_elems *
                                 pb.job.activation_bytes() * mbs};
        // TP degrees per type that fit (H2: those below the minimum never do).
        std::vector<std::vector<std::size_t>> fit(T);
        for (std::size_t t = 0; t < T; ++t) {
            const auto& opts = times.at[static_cast<std::size_t>(i)][t];
            for (std::size_t k = 0; k < opts.size(); ++k)
                if (h2.fits(pb, menu.layers, i, sp.P, cells.types[t], std::get<0>(opts[k]), mbs, sp.per_replica, opt.memory,
                            opt.schedule))
                    fit[t].push_back(k);
            if (opt.tp_level) {  // keep the first fitting degree at or above the level
                auto keep = std::find_if(fit[t].begin(), fit[t].end(),
                                         [&](std::size_t k) { return std::get<0>(opts[k]) >= (*opt.tp_level)[t]; });
                if (keep == fit[t].end()) fit[t].clear();
                else fit[t] = {*keep};
            }
        }
        // Cartesian product over types of {absent} + fitting degrees.
        std::array<std::size_t, max_types> pick{};  // 0 = absent, k+1 = fit[t][k]
        for (;;) {
            tp_choice c;
            for (std::size_t t = 0; t < T; ++t) {
                if (pick[t] == 0) continue;
                const auto& [tp, comp, upd] = times.at[static_cast<std::size_t>(i)][t][fit[t][pick[t] - 1]];
                c.tp[t] = static_cast<std::uint8_t>(tp);
                c.types |= static_cast<std::uint8_t>(1u << t);
                c.compute = max(c.compute, comp);
                c.update = max(c.update, upd);
            }
            if (c.types != 0) menu.choices.push_back(c);
            std::size_t t = 0;
            while (t < T && ++pick[t] > fit[t].size()) pick[t++] = 0;
            if (t == T) break;
        }
        sp.stages.push_back(std::move(menu));
    }
    sp.bound = make_instance_bound(sp);
    return sp;
}

}  // namespace hetplan::search
