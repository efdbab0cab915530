#pragma once
// Turns a stage DP solution (one composition per stage) into a hetplan plan: one pipeline, P
// stages, D worker groups per stage in worker order (zone, type), the first M mod D replicas
// taking one extra microbatch. Cells that H6 merged are spread back over their real zones,
// fullest zone first, so a stage's replicas stay in as few zones as possible.
#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "hetplan/plan/plan.hpp"
#include "hetplan/search/solve/stage_dp.hpp"

namespace hetplan::search {

/// Worker order within a stage, (zone, type, TP) — the simulator pairs worker k with worker k of
/// the next stage — and the microbatches of each position.
template <class SP>
void order_workers(const SP& sp, stage& st) {
    std::stable_sort(st.workers.begin(), st.workers.end(), [](const worker_group& a, const worker_group& b) {
        return std::tie(a.zone, a.gpu, a.tp) < std::tie(b.zone, b.gpu, b.tp);
    });
    for (std::size_t k = 0; k < st.workers.size(); ++k) st.workers[k].num_microbatches = sp.microbatches_at(static_cast<int>(k));
}

/// The plan, or none when a cell's replicas do not fit its real zones (H6 merged zones whose free
/// GPUs are split below a replica's TP degree).
template <class SP>
[[nodiscard]] std::optional<plan> try_build_plan(const SP& sp, std::span<const composition> stages,
                                                 schedule_kind schedule = schedule_kind::one_f_one_b) {
    const auto& cells = sp.cells->cells;
    // Remaining GPUs per real zone behind each cell.
    std::vector<boost::container::small_vector<std::pair<zone_id, int>, 4>> zones;
    for (const auto& c : cells) zones.push_back(c.zones);

    plan pl;
    pl.schedule = schedule;
    pl.memory = sp.memory;
    pipeline pipe;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        stage st;
        st.layers.push_back(sp.stages.at(i).layers);
        const composition& comp = stages[i];
        for (std::size_t q = 0; q < cells.size(); ++q) {
            const int tp = comp.tp[cells[q].type];
            for (int r = 0; r < comp.n[q]; ++r) {
                auto& zs = zones[q];
                auto it = std::max_element(zs.begin(), zs.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
                if (it == zs.end() || it->second < tp) return std::nullopt;
                // Prefer a zone this stage already uses, if it still has room: fewer cross-zone edges.
                for (auto z = zs.begin(); z != zs.end(); ++z)
                    if (z->second >= tp && std::any_of(st.workers.begin(), st.workers.end(), [&](const worker_group& w) {
                            return w.zone == z->first && w.gpu == cells[q].gpu;
                        })) {
                        it = z;
                        break;
                    }
                it->second -= tp;
                st.workers.push_back({cells[q].gpu, it->first, tp, sp.mbs, 1, 1.0 / sp.D, -1});
            }
        }
        order_workers(sp, st);
        pipe.stages.push_back(std::move(st));
    }
    pl.pipelines.push_back(std::move(pipe));
    return pl;
}

template <class SP>
[[nodiscard]] plan build_plan(const SP& sp, std::span<const composition> stages, schedule_kind schedule = schedule_kind::one_f_one_b) {
    std::optional<plan> pl = try_build_plan(sp, stages, schedule);
    if (!pl) throw model_error("build_plan: composition exceeds the GPUs of a cell's zones");
    return std::move(*pl);
}

}  // namespace hetplan::search
