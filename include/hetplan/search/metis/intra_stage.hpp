#pragma once
// Metis' intra-stage search (Metis §4.2; memory-aware Metis §3.4): every stage starts at pure
// DP (DP = its GPUs, TP 1); while the layers do not fit, one stage halves its DP and doubles its
// TP. Which stage is the one piece the two variants differ in (`split_order`):
//   metis_split_order         the stage with the least headroom of the last partition that fit,
//                             else the one with the largest DP (Metis);
//   memory_aware_split_order  the stage with the least headroom of the first attempt of the last
//                             partition that did not fit, so the stage that ran out of memory is
//                             split first (memory-aware Metis §3.4), else as Metis.
// A plan is emitted each time a partition fits; the walk ends after one that fit at the first
// attempt, or when no stage can be split.
//
// Steps are counted as the papers count them (memory-aware Metis Table 1): one per split and one
// per failed partition attempt, counted only for walks that end in a plan.
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "hetplan/core/stop.hpp"
#include "hetplan/search/metis/stage_model.hpp"

namespace hetplan::search::metis {

/// What the split orders see.
struct walk_state {
    std::vector<int> dp, tp;
    bool has_headroom = false;            ///< the last evaluated strategy fit
    std::vector<double> headroom;         ///< its headroom
    std::vector<double> first_headroom;   ///< the first attempt's headroom when it did not fit (empty: none)
};

/// Metis: split by the last fitting partition's headroom, else the largest DP.
struct metis_split_order {
    static constexpr const char* name = "metis";
    [[nodiscard]] const std::vector<double>* scores(const walk_state& w) const { return w.has_headroom ? &w.headroom : nullptr; }
};

/// Memory-aware Metis: split the stage that ran out of memory first.
struct memory_aware_split_order {
    static constexpr const char* name = "metis-memory-aware";
    [[nodiscard]] const std::vector<double>* scores(const walk_state& w) const {
        if (!w.first_headroom.empty()) return &w.first_headroom;
        return w.has_headroom ? &w.headroom : nullptr;
    }
};

struct intra_limits {
    int max_tp = metis_max_degree;           ///< the public code's max_profiled_tp_degree
    int max_microbatch = metis_max_degree;   ///< its max_profiled_batch_size
    bool tp_within_node = false;             ///< every TP group on one node (hetplan's plans need it)
};

/// Walks one candidate (stage_model already reset to it). Calls emit(state, outcome, steps) for
/// each plan, steps being the moves since the previous plan; emit returns true to stop. Returns
/// false when the stop condition ended the walk.
template <class SplitOrder, class Model, class Emit>
bool walk_strategies(Model& model, std::span<const int> groups, int global_batch, int microbatches, const intra_limits& lim,
                     const SplitOrder& order, walk_state& w, partition_outcome& out, std::vector<double>& shares, stop_poll& poll,
                     Emit&& emit) {
    const std::size_t S = groups.size();
    w.dp.assign(groups.begin(), groups.end());
    w.tp.assign(S, 1);
    w.has_headroom = false;
    w.headroom.clear();
    w.first_headroom.clear();
    bool started = false;
    int last_attempt = 0;
    auto valid = [&] {
        for (std::size_t s = 0; s < S; ++s) {
            const int mbs = global_batch / w.dp[s] / microbatches;
            if (mbs < 1 || mbs > lim.max_microbatch || w.tp[s] > lim.max_tp) return false;
            if (lim.tp_within_node)  // replica r holds ranks [first + r tp, first + (r + 1) tp)
                for (int r = 0, first = model.first_rank(s); r < w.dp[s]; ++r)
                    if (model.layout().node_of(first + r * w.tp[s]) != model.layout().node_of(first + (r + 1) * w.tp[s] - 1)) return false;
        }
        return true;
    };
    // Halves DP and doubles TP of the first stage with DP > 1 in increasing score order.
    auto split = [&] {
        const std::vector<double>* v = order.scores(w);
        int pick = -1;
        double best = 0;
        for (std::size_t s = 0; s < S; ++s) {
            if (w.dp[s] == 1) continue;
            const double score = v ? (*v)[s] : 1.0 / w.dp[s];
            if (pick < 0 || score < best) pick = int(s), best = score;
        }
        if (pick < 0) return false;
        w.dp[std::size_t(pick)] /= 2;
        w.tp[std::size_t(pick)] *= 2;
        return true;
    };
    while (last_attempt != 1) {
        std::size_t steps = 0;
        for (;;) {
            if (poll()) return false;
            if (!started) started = true;
            else {
                ++steps;
                if (!split()) return true;  // exhausted: this call's moves are not counted
            }
            if (!valid() || !model.shares(w.dp, w.tp, shares)) continue;
            model.partition_layers(w.dp, w.tp, shares, out);
            steps += std::size_t(out.failures);
            if (out.fits) {
                w.has_headroom = true;
                w.headroom = out.headroom;
                w.first_headroom = out.first_headroom;
                last_attempt = out.attempt;
                if (emit(std::as_const(w), std::as_const(out), steps)) return true;
                break;
            }
            w.has_headroom = false;
            w.first_headroom = out.first_headroom;
        }
    }
    return true;
}

}  // namespace hetplan::search::metis
