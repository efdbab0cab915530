#pragma once
// Replicas to zones, for one stage DP solution on cells that H6 merged (Sailor §4.2.1 merges the
// zones of a region for the search; the plan must still name a zone per worker). The simulator
// pairs worker k of a stage with worker k of the next (workers in (zone, type, TP) order), so a
// zone that holds the same number of replicas in every stage keeps each replica's activations
// inside it, and the all-reduce rings cross zones once per zone. Three kinds of layout:
//   stage by stage  each stage fills the fullest zone first (build_plan's own placement)
//   replica-aligned zones in a given order each take as many whole replicas — the same count in
//                   every stage — as their GPUs allow; what is left is placed stage by stage
//   stage-blocked   each stage whole in one zone, the previous stage's first: no ring crosses,
//                   only the boundaries where the zone changes; where the zones cannot hold
//                   every stage whole, one per choice of the stage that is split
// zone_layouts() returns the stage-by-stage layout and the replica-aligned and stage-blocked ones
// per choice of first zone; the planner prices each with its simulator and keeps the best (issue
// 15: the default example paid 1.29 of 1.90 USD per iteration for activations zig-zagging across
// zones; stop 53: where the zones cannot hold the same count of every stage, the aligned layout
// split every stage's ring across zones; stop 56: the split fell on the last stage, whose ring,
// with the head's gradients, is among the dearest).
#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "hetplan/search/build_plan.hpp"

namespace hetplan::search {

namespace detail {

/// GPUs left per (cell, real zone) while a layout is built.
using zone_stock = std::vector<boost::container::small_vector<std::pair<zone_id, int>, 4>>;

/// Whether `n` replicas of every stage fit in zone `z` from what the stages still need
/// (`need[i][q]` replicas of cell q in stage i); takes them from `stock` and `need` when they do.
template <class SP>
bool take_aligned(const SP& sp, std::span<const composition> stages, zone_id z, int n, zone_stock& stock,
                  std::vector<cell_counts>& need, std::vector<std::vector<int>>& taken) {
    const auto& cells = sp.cells->cells;
    zone_stock s = stock;
    std::vector<cell_counts> nd = need;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        int left = n;
        for (std::size_t q = 0; q < cells.size() && left > 0; ++q) {
            const int tp = stages[i].tp[cells[q].type];
            for (auto& [zone, gpus] : s[q]) {
                if (zone != z || tp == 0) continue;
                const int k = std::min({left, int(nd[i][q]), gpus / tp});
                gpus -= k * tp;
                nd[i][q] = static_cast<std::uint16_t>(nd[i][q] - k);
                left -= k;
                taken[i][q] += k;
            }
        }
        if (left > 0) {
            for (auto& t : taken) std::fill(t.begin(), t.end(), 0);
            return false;
        }
    }
    stock = std::move(s);
    need = std::move(nd);
    return true;
}

/// Replicas per (stage, cell, real zone).
using zone_placement = std::vector<std::vector<std::vector<std::pair<zone_id, int>>>>;

/// The one-pipeline plan with `placed` replicas per (stage, cell, real zone).
template <class SP>
[[nodiscard]] plan placed_plan(const SP& sp, std::span<const composition> stages, const zone_placement& placed, schedule_kind schedule) {
    const auto& cells = sp.cells->cells;
    plan pl;
    pl.schedule = schedule;
    pl.memory = sp.memory;
    pipeline pipe;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        stage st;
        st.layers.push_back(sp.stages.at(i).layers);
        for (std::size_t q = 0; q < cells.size(); ++q)
            for (auto [z, n] : placed[i][q])
                for (int r = 0; r < n; ++r) st.workers.push_back({cells[q].gpu, z, stages[i].tp[cells[q].type], sp.mbs, 1, 1.0 / sp.D, -1});
        order_workers(sp, st);
        pipe.stages.push_back(std::move(st));
    }
    pl.pipelines.push_back(std::move(pipe));
    return pl;
}

}  // namespace detail

/// The replica-aligned layout with zones taken in `order`; replicas that no zone can hold whole
/// are placed stage by stage, fullest zone first. None when what is left no longer fits that way
/// (GPUs split across zones below a replica's TP degree).
template <class SP>
[[nodiscard]] std::optional<plan> aligned_layout(const SP& sp, std::span<const composition> stages, std::span<const zone_id> order,
                                  schedule_kind schedule = schedule_kind::one_f_one_b) {
    const auto& cells = sp.cells->cells;
    detail::zone_stock stock;
    for (const auto& c : cells) stock.push_back(c.zones);
    std::vector<cell_counts> need;
    for (const auto& c : stages) need.push_back(c.n);
    // Replicas per (stage, cell, zone), filled zone by zone.
    detail::zone_placement placed(stages.size(), std::vector<std::vector<std::pair<zone_id, int>>>(cells.size()));
    int left = sp.D;
    for (zone_id z : order) {
        std::vector<std::vector<int>> taken(stages.size(), std::vector<int>(cells.size(), 0));
        // The most whole replicas the zone holds (fewer always fit when more do): binary search.
        int lo = 0, hi = left;
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            detail::zone_stock s = stock;
            std::vector<cell_counts> nd = need;
            if (detail::take_aligned(sp, stages, z, mid, s, nd, taken)) lo = mid;
            else hi = mid - 1;
            for (auto& t : taken) std::fill(t.begin(), t.end(), 0);
        }
        if (lo == 0 || !detail::take_aligned(sp, stages, z, lo, stock, need, taken)) continue;
        for (std::size_t i = 0; i < stages.size(); ++i)
            for (std::size_t q = 0; q < cells.size(); ++q)
                if (taken[i][q] > 0) placed[i][q].emplace_back(z, taken[i][q]);
        left -= lo;
    }
    // The rest stage by stage, fullest zone first.
    for (std::size_t i = 0; i < stages.size(); ++i)
        for (std::size_t q = 0; q < cells.size(); ++q) {
            const int tp = stages[i].tp[cells[q].type];
            for (int r = 0; r < need[i][q]; ++r) {
                auto& zs = stock[q];
                auto it = std::max_element(zs.begin(), zs.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
                if (it == zs.end() || it->second < tp) return std::nullopt;
                it->second -= tp;
                placed[i][q].emplace_back(it->first, 1);
            }
        }
    return detail::placed_plan(sp, stages, placed, schedule);
}

namespace detail {

/// The stage-blocked placement (blocked_layout) with the stages taken in pipeline order, but for
/// `last` (a stage index, or none), which is placed after all the others: where the zones cannot
/// hold every stage whole, the stage placed last takes what is left and is the one split.
/// `split` tells whether some stage spans zones.
template <class SP>
[[nodiscard]] std::optional<zone_placement> blocked_placement(const SP& sp, std::span<const composition> stages, std::span<const zone_id> order,
                                                              std::size_t last, bool& split) {
    const auto& cells = sp.cells->cells;
    const std::size_t P = stages.size();
    zone_stock stock;
    for (const auto& c : cells) stock.push_back(c.zones);
    zone_placement placed(P, std::vector<std::vector<std::pair<zone_id, int>>>(cells.size()));
    std::vector<std::optional<zone_id>> major(P);  // where most of a placed stage's replicas sit
    split = false;
    for (std::size_t step = 0; step < P; ++step) {
        const std::size_t i = last >= P ? step : step + 1 == P ? last : step < last ? step : step + 1;
        // The zone of the nearest stage before this one that is placed (its activations stay there).
        std::optional<zone_id> before;
        for (std::size_t j = i; j-- > 0 && !before;) before = major[j];
        boost::container::small_vector<std::pair<zone_id, int>, 8> here;  // replicas of this stage per zone
        for (std::size_t q = 0; q < cells.size(); ++q) {
            const int tp = stages[i].tp[cells[q].type];
            int n = stages[i].n[q];
            if (n == 0) continue;
            if (tp <= 0) return std::nullopt;  // replicas of a type the stage's typing does not use
            auto& zs = stock[q];
            auto room = [&](zone_id z) {
                auto it = std::find_if(zs.begin(), zs.end(), [&](const auto& e) { return e.first == z; });
                return it == zs.end() ? 0 : it->second / tp;
            };
            auto take = [&](zone_id z, int k) {
                if (k <= 0) return;  // (also a zone not behind this cell: room 0)
                auto it = std::find_if(zs.begin(), zs.end(), [&](const auto& e) { return e.first == z; });
                it->second -= k * tp;
                n -= k;
                placed[i][q].emplace_back(z, k);
                auto h = std::find_if(here.begin(), here.end(), [&](const auto& e) { return e.first == z; });
                if (h == here.end()) here.emplace_back(z, k);
                else h->second += k;
            };
            std::optional<zone_id> whole;
            if (before && room(*before) >= n) whole = before;
            for (std::size_t k = 0; k < order.size() && !whole; ++k)
                if (room(order[k]) >= n) whole = order[k];
            if (whole) {
                take(*whole, n);
                continue;
            }
            if (before) take(*before, std::min(n, room(*before)));
            for (std::size_t k = 0; k < order.size() && n > 0; ++k) take(order[k], std::min(n, room(order[k])));
            if (n > 0) return std::nullopt;
        }
        // Ties to the earlier zone in `order` (deterministic).
        std::optional<std::pair<zone_id, int>> most;
        for (const zone_id z : order)
            for (const auto& [hz, k] : here)
                if (hz == z && k > 0 && (!most || k > most->second)) most.emplace(hz, k);
        if (most) major[i] = most->first;
        split = split || here.size() > 1;
    }
    return placed;
}

}  // namespace detail

/// The stage-blocked layout: each stage's replicas on a cell whole in one real zone where one
/// holds them (its all-reduce ring stays inside), the zone that holds most of the stage before
/// first (its activations stay inside), else the first in `order` that does; a stage no zone
/// holds whole is split, that zone and then `order` filling first. Where the replica-aligned
/// layout takes a few replicas of every stage in each zone, every stage's ring crosses zones
/// (random pool 41, P = 21 over two zones: the solver's 0.951 s priced 1.029 s); here only the
/// boundaries between zones cross. Stages are placed in pipeline order but for `last`, placed
/// after the others, so that it is the one split where one must be. None when the stages do
/// not fit the real zones.
template <class SP>
[[nodiscard]] std::optional<plan> blocked_layout(const SP& sp, std::span<const composition> stages, std::span<const zone_id> order,
                                                 schedule_kind schedule = schedule_kind::one_f_one_b, std::size_t last = std::size_t(-1)) {
    bool split = false;
    const auto placed = detail::blocked_placement(sp, stages, order, last, split);
    if (!placed) return std::nullopt;
    return detail::placed_plan(sp, stages, *placed, schedule);
}

/// Layouts worth pricing: stage by stage, then replica-aligned and stage-blocked with each real
/// zone first (the others by GPUs, most first), each once. Only the first when no cell spans
/// zones; none when no layout fits the real zones.
template <class SP>
[[nodiscard]] std::vector<plan> zone_layouts(const SP& sp, std::span<const composition> stages,
                                             schedule_kind schedule = schedule_kind::one_f_one_b) {
    std::vector<plan> out;
    if (std::optional<plan> pl = try_build_plan(sp, stages, schedule)) out.push_back(std::move(*pl));
    std::vector<std::pair<int, zone_id>> zones;  // (-GPUs, zone)
    bool merged = false;
    for (const auto& c : sp.cells->cells) {
        merged = merged || c.zones.size() > 1;
        for (const auto& zg : c.zones) {
            const auto [z, g] = zg;  // a lambda may not capture a structured binding in clang 14
            auto it = std::find_if(zones.begin(), zones.end(), [&](const auto& e) { return e.second == zg.first; });
            if (it == zones.end()) zones.emplace_back(-g, z);
            else it->first -= g;
        }
    }
    if (!merged) return out;
    std::sort(zones.begin(), zones.end());
    std::vector<zone_id> order;
    std::vector<detail::zone_placement> tried;  // stage-blocked placements of this order
    for (std::size_t first = 0; first < zones.size(); ++first) {
        order.assign({zones[first].second});
        for (std::size_t k = 0; k < zones.size(); ++k)
            if (k != first) order.push_back(zones[k].second);
        std::optional<plan> pl = aligned_layout(sp, stages, order, schedule);
        if (pl && std::find(out.begin(), out.end(), *pl) == out.end()) out.push_back(std::move(*pl));
        // Stage-blocked; where some stage must be split, once more with each stage placed last,
        // so that each takes the split in turn: its ring crosses zones, and the rings differ
        // (the first and last stages hold the embedding and the head, the most gradients).
        // Random pools 19 and 86: the last stage split, 2.5 and 1.2 % slower than a middle one.
        bool split = false;
        auto placed = detail::blocked_placement(sp, stages, order, std::size_t(-1), split);
        if (!placed) continue;
        pl = detail::placed_plan(sp, stages, *placed, schedule);
        if (std::find(out.begin(), out.end(), *pl) == out.end()) out.push_back(std::move(*pl));
        if (!split) continue;
        tried.clear();
        tried.push_back(std::move(*placed));
        for (std::size_t last = 0; last < stages.size(); ++last) {
            placed = detail::blocked_placement(sp, stages, order, last, split);
            if (!placed || std::find(tried.begin(), tried.end(), *placed) != tried.end()) continue;
            pl = detail::placed_plan(sp, stages, *placed, schedule);
            if (std::find(out.begin(), out.end(), *pl) == out.end()) out.push_back(std::move(*pl));
            tried.push_back(std::move(*placed));
        }
    }
    return out;
}

}  // namespace hetplan::search
