#pragma once
// One instance of Sailor's stage-assignment problem (§4.2.2): a pipeline degree P with its layer
// partition, a microbatch size and a data-parallel degree D. For every stage it lists the
// typings of a replica set — which GPU types take part and the TP degree of each (one per
// (stage, type), the paper's tp_ij) — that the pruners keep, with the stage's compute and update
// time. The stage DP then chooses replica counts per cell.
//
// Which typings: for every (stage, type) the TP degrees whose worker the pruners keep (H2: it
// fits in memory), restricted by the typing policy (tp_typing: Sailor's TP levels, or every
// degree), then every combination of the types, each judged by the pruners as a stage_typing.
// Built into a reusable object: after warm-up, building an instance allocates nothing.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <tuple>
#include <type_traits>
#include <vector>

#include "hetplan/cost/time/sailor.hpp"
#include "hetplan/search/bound/instance_floors.hpp"
#include "hetplan/search/cells.hpp"
#include "hetplan/search/model_probe.hpp"
#include "hetplan/search/prune/all.hpp"

namespace hetplan::search {

/// A typing of one stage's replicas that the pruners kept: TP degree per GPU type (0 = absent),
/// with the stage's compute and update time on the slowest type present.
struct tp_choice {
    std::array<std::uint8_t, max_types> tp{};
    std::uint8_t types = 0;  ///< mask of the types present
    seconds compute{};       ///< forward+backward of one microbatch on the slowest type present
    seconds update{};        ///< optimizer step on the slowest type present
};

/// Per-(stage, type, TP) compute and update times for one (P, partition, mbs), from the time
/// model; independent of D and of availability, so computed once and shared by every D.
struct stage_timings {
    struct option {
        int tp = 1;
        seconds compute{}, update{};
        friend bool operator==(const option&, const option&) = default;
    };
    std::vector<std::vector<std::vector<option>>> at;  ///< [stage][type]
};

struct stage_menu {
    layer_range layers;
    std::vector<tp_choice> choices;
    bytes gradients{};    ///< all-reduce volume of the stage (full parameters x gradient bytes)
    bytes activations{};  ///< one microbatch's output, sent to the next stage

    /// What `choices` were built from: the stage's place and the options the pruners kept per
    /// type. The typings depend on nothing else, so build_stage_problem keeps them when a later
    /// instance keeps the same options (D changes them only through memory, and the floors of a
    /// 2,048-GPU pool build ~8,000 instances of up to 625 typings a stage).
    struct source {
        const problem* pb = nullptr;
        const cell_set* cells = nullptr;
        const void* pruners = nullptr;
        int stage = -1, stages = 0;
        layer_range layers{};
        std::array<std::uint8_t, max_types> kept{};
        std::array<std::array<stage_timings::option, 8>, max_types> options{};
        friend bool operator==(const source&, const source&) = default;
    };
    source built_from;
};

/// One TP level per GPU type (Sailor's pinned tp_ij), or none: every degree that fits.
using tp_level = std::optional<std::array<int, max_types>>;

/// The instance's shape, what outer pruners and hooks see: (P, mbs, D) and the TP level.
struct sailor_instance {
    int P = 1, mbs = 1, D = 1;
    std::span<const layer_range> partition;
    const tp_level* level = nullptr;
};

/// The instance as the stage DP solves it. `Pruners` judge stage placements inside the DP.
template <class Pruners = prune::all<>>
struct stage_problem {
    const problem* pb = nullptr;
    const cell_set* cells = nullptr;
    const Pruners* pruners = nullptr;
    int P = 1, mbs = 1, D = 1;
    int microbatches = 1;  ///< M = global batch / mbs, shared by the D replicas
    int per_replica = 1;   ///< ceil(M / D): the busiest replica's microbatches
    std::vector<stage_menu> stages;  ///< the first P are this instance's (the rest: capacity kept)
    bool exact_boundaries = true;    ///< see stage_dp: exact pairing or a per-cell bound
    memory_options memory{};
    std::array<double, max_types> usd_per_gpu_second{};
    instance_bound bound;  ///< floors for branch and bound (bound/instance_floors.hpp)

    [[nodiscard]] std::span<const stage_menu> menus() const { return {stages.data(), static_cast<std::size_t>(P)}; }
    /// Forgets what was worked out for the last problem (priced transfers, built menus): a
    /// planner calls it when it starts on a problem, which may sit where the last one did.
    void forget_problem() {
        bound.forget_prices();
        for (stage_menu& m : stages) m.built_from = {};
    }
    /// Microbatches of the replica at `position` (0-based, worker order): the first M mod D
    /// replicas take one more.
    [[nodiscard]] int microbatches_at(int position) const {
        const int r = microbatches % D;
        return r == 0 || position < r ? per_replica : per_replica - 1;
    }
    /// Whether the pruners keep a (partial) placement of stage `stage`.
    [[nodiscard]] bool keeps(int stage, std::uint32_t used, std::uint8_t types) const {
        if constexpr (Pruners::template judges<stage_placement>) return (*pruners)(*pb, stage_placement{stage, used, types, cells});
        else return true;
    }
};

template <class Time>
[[nodiscard]] stage_timings time_stages(const problem& pb, const cell_set& cells, std::span<const layer_range> partition, int mbs,
                                        const std::vector<std::vector<int>>& tp_candidates, const Time& tm, const memory_options& memory,
                                        schedule_kind schedule) {
    stage_timings out;
    out.at.resize(partition.size());
    for (std::size_t i = 0; i < partition.size(); ++i) {
        out.at[i].resize(cells.types.size());
        for (std::size_t t = 0; t < cells.types.size(); ++t)
            for (int tp : tp_candidates[t]) {
                const worker_probe probe{partition.subspan(i, 1), static_cast<int>(i), static_cast<int>(partition.size()),
                                         {cells.types[t], zone_id{0}, tp, mbs, 1, 1.0, -1}, memory, schedule};
                const worker_times wt = worker_times_of(tm, pb, probe);
                out.at[i][t].push_back({tp, wt.compute, wt.update});
            }
    }
    return out;
}

/// Sailor's TP levels (§4.2.2: "Sailor precomputes tp_ij"): each (stage, type) takes one TP
/// degree, the smallest the pruners keep at or above its type's level; every combination of
/// levels is tried, each type its own (V100 at TP 4 beside A100 at TP 1 even where TP 4 is not
/// the V100's memory minimum).
struct pinned_tp {
    [[nodiscard]] static constexpr const char* name() { return "pinned TP levels"; }
    /// Every combination of one degree per type (the first type varying fastest).
    [[nodiscard]] std::vector<tp_level> levels(const std::vector<std::vector<int>>& tp_candidates) const {
        std::vector<tp_level> out;
        const std::size_t T = tp_candidates.size();
        for (const auto& c : tp_candidates)
            if (c.empty()) return out;
        std::array<std::size_t, max_types> pick{};
        for (;;) {
            std::array<int, max_types> lv{};
            for (std::size_t t = 0; t < T; ++t) lv[t] = tp_candidates[t][pick[t]];
            out.emplace_back(lv);
            std::size_t t = 0;
            while (t < T && ++pick[t] == tp_candidates[t].size()) pick[t++] = 0;
            if (t == T) return out;
        }
    }
};

/// Every degree the pruners keep: the exact space (Sailor's DP over tp freely).
struct free_tp {
    [[nodiscard]] static constexpr const char* name() { return "free TP"; }
    [[nodiscard]] std::vector<tp_level> levels(const std::vector<std::vector<int>>&) const { return {tp_level{}}; }
};

/// Fills `sp` for one (P, mbs, D) and TP level, reusing its buffers. The pruners judge worker
/// probes (H2) and stage typings; `hooks` hear what they drop.
template <class Pruners, class Hooks>
void build_stage_problem(stage_problem<Pruners>& sp, const problem& pb, const cell_set& cells, std::span<const layer_range> partition,
                         int mbs, int D, const stage_timings& times, const Pruners& pruners, const tp_level& level,
                         const memory_options& memory, Hooks& hooks) {
    if (sp.pb != &pb) sp.forget_problem();  // priced transfers and menus belong to one problem
    sp.pb = &pb;
    sp.cells = &cells;
    sp.pruners = &pruners;
    sp.P = static_cast<int>(partition.size());
    sp.mbs = mbs;
    sp.D = D;
    sp.memory = memory;
    sp.microbatches = pb.job.global_batch / mbs;
    sp.per_replica = (sp.microbatches + D - 1) / D;
    sp.usd_per_gpu_second.fill(0);
    const std::size_t T = cells.types.size();
    for (std::size_t t = 0; t < T; ++t) sp.usd_per_gpu_second[t] = pb.hw.gpu(cells.types[t]).price_per_hour().value / 3600.0;
    if (sp.stages.size() < partition.size()) sp.stages.resize(partition.size());

    for (int i = 0; i < sp.P; ++i) {
        stage_menu& menu = sp.stages[static_cast<std::size_t>(i)];
        menu.layers = partition[static_cast<std::size_t>(i)];
        menu.gradients = bytes{pb.model.params_in(menu.layers.begin, menu.layers.end) * pb.job.gradient_bytes()};
        menu.activations = bytes{pb.model.layers.at(static_cast<std::size_t>(menu.layers.end - 1)).act_output_elems *
                                 pb.job.activation_bytes() * mbs};
        // Per type, the timing options the pruners keep (H2), restricted to the level.
        std::array<std::array<std::uint8_t, 8>, max_types> fit{};
        std::array<std::uint8_t, max_types> fits{};
        for (std::size_t t = 0; t < T; ++t) {
            const auto& opts = times.at[static_cast<std::size_t>(i)][t];
            for (std::size_t k = 0; k < opts.size() && k < 8; ++k) {
                const worker_probe probe{partition.subspan(static_cast<std::size_t>(i), 1), i, sp.P,
                                         {cells.types[t], zone_id{0}, opts[k].tp, mbs, sp.per_replica, 1.0 / D, -1}, memory,
                                         schedule_kind::one_f_one_b};
                if (level && opts[k].tp < (*level)[t]) continue;
                if (pruners.keep(pb, probe, hooks)) fit[t][fits[t]++] = static_cast<std::uint8_t>(k);
                if (level && fits[t] > 0) break;  // pinned: the first kept degree at or above the level
            }
        }
        stage_menu::source from{&pb, &cells, &pruners, i, sp.P, menu.layers, fits, {}};
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t k = 0; k < fits[t]; ++k) from.options[t][k] = times.at[static_cast<std::size_t>(i)][t][fit[t][k]];
        // Only a build without hooks keeps a menu: hooks hear what the pruners drop in every build.
        if (std::is_same_v<Hooks, boost::hana::tuple<>> && menu.built_from == from) continue;
        menu.choices.clear();
        menu.built_from = {};  // set once built: a build cut short by a throw is not kept
        // Every combination of {absent} + the kept degrees per type.
        std::array<std::size_t, max_types> pick{};  // 0 = absent, k+1 = fit[t][k]
        for (;;) {
            tp_choice c;
            stage_typing typing{i, sp.P, menu.layers, {}, 0, &cells};
            for (std::size_t t = 0; t < T; ++t) {
                if (pick[t] == 0) continue;
                const auto& o = times.at[static_cast<std::size_t>(i)][t][fit[t][pick[t] - 1]];
                c.tp[t] = typing.tp[t] = static_cast<std::uint8_t>(o.tp);
                c.types |= static_cast<std::uint8_t>(1u << t);
                c.compute = max(c.compute, o.compute);
                c.update = max(c.update, o.update);
            }
            typing.types = c.types;
            if (c.types != 0 && pruners.keep(pb, typing, hooks)) menu.choices.push_back(c);
            std::size_t t = 0;
            while (t < T && ++pick[t] > fits[t]) pick[t++] = 0;
            if (t == T) break;
        }
        menu.built_from = from;
    }
}

static_assert(concepts::check_bound<instance_floors, stage_problem<>>());
static_assert(concepts::check_bound<no_bound, stage_problem<>>());

}  // namespace hetplan::search
