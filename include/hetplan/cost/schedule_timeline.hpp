#pragma once
// One iteration as a timeline of microbatches (issue 21): each microbatch's forward and backward
// on each stage, placed by the schedule's order and its dependencies, so the bubbles are where
// they fall; then each stage's gradient synchronisation and optimizer step after the pipeline
// phase, as the time models add them (Sailor §4.1, Eq. 1: iteration = pipeline + sync + update).
//   durations   per stage from the estimate: forward and backward of one microbatch on the
//               stage's slowest worker, and its p2p (half after the forward to the next stage,
//               half after the backward to the one before, as the time models charge it)
//   order       1F1B (PipeDream-Flush: stage s runs min(M, S - s) forwards, then one backward
//               one forward) or GPipe (every forward, then every backward)
//   dependency  F(s, m) after F(s-1, m) and its send; B(s, m) after F(s, m) and B(s+1, m) and
//               its send; a stage runs one block at a time
// Zorse's interleaved ministages and Cephalo's layer-by-layer accumulation run every microbatch
// through one ministage or FSDP unit before the next: where the estimate has those pieces
// (time_report::spans, from their time models) they are the blocks, each its busiest GPU's
// compute followed by what of it is communication not hidden or waiting for inputs; otherwise a
// stage is one aggregated block (`exact` false).
#include <algorithm>
#include <cstddef>
#include <vector>

#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"

namespace hetplan {

enum class block_kind { forward, backward, aggregate, sync, update, exposed };

struct timeline_block {
    std::size_t pipeline = 0, stage = 0;
    int microbatch = -1;  ///< -1: not one microbatch's (aggregate, sync, update, spans)
    int part = -1;        ///< of a span: its ministage or FSDP unit (work_span::part)
    block_kind kind = block_kind::forward;
    double start = 0, end = 0;  ///< seconds from the start of the iteration
};

struct schedule_timeline {
    std::vector<timeline_block> blocks;  ///< by pipeline, stage, then start
    std::vector<double> pipeline_end;    ///< per pipeline: when its last backward ends
    double pipeline_phase = 0;           ///< the time model's pipeline term (sync and update start there)
    bool exact = true;                   ///< false: some stage is one aggregated block (see above)
};

/// The timeline of `pl` with the durations of `est` (a simulator's estimate of the same plan).
[[nodiscard]] inline schedule_timeline make_schedule_timeline(const plan& pl, const estimate& est) {
    schedule_timeline out;
    out.pipeline_phase = est.time.pipeline.value;
    const bool per_microbatch = pl.schedule == schedule_kind::one_f_one_b || pl.schedule == schedule_kind::gpipe;
    std::size_t idx = 0;  // est.time.stages runs over every stage of every pipeline in order
    for (std::size_t p = 0; p < pl.pipelines.size(); ++p) {
        const auto& pipe = pl.pipelines[p];
        const std::size_t S = pipe.stages.size();
        std::vector<stage_time> st(S);
        int M = 1;  // microbatches through the pipeline: the most any worker runs
        for (std::size_t s = 0; s < S; ++s, ++idx) {
            st[s] = idx < est.time.stages.size() ? est.time.stages[idx] : stage_time{};
            for (const auto& w : pipe.stages[s].workers) M = std::max(M, w.num_microbatches);
        }
        double end = 0;
        bool spans = false;
        for (const work_span& w : est.time.spans) {
            if (w.pipeline != p) continue;
            spans = true;
            const double busy_end = std::min(w.start.value + w.compute.value, w.end.value);
            out.blocks.push_back({p, w.stage, -1, w.part, w.backward ? block_kind::backward : block_kind::forward, w.start.value, busy_end});
            if (w.end.value > busy_end) out.blocks.push_back({p, w.stage, -1, w.part, block_kind::exposed, busy_end, w.end.value});
            end = std::max(end, w.end.value);
        }
        if (spans) {
            // placed by the time model
        } else if (!per_microbatch) {
            out.exact = false;
            for (std::size_t s = 0; s < S; ++s) {
                const double busy = st[s].busy.value > 0 ? st[s].busy.value : M * (st[s].compute + st[s].p2p).value;
                out.blocks.push_back({p, s, -1, -1, block_kind::aggregate, 0.0, busy});
                end = std::max(end, busy);
            }
        } else {
            auto fwd = [&](std::size_t s) { return (st[s].forward.value > 0 ? st[s].forward : st[s].compute * (1.0 / 3)).value; };
            auto bwd = [&](std::size_t s) { return std::max(st[s].compute.value - fwd(s), 0.0); };
            // Each stage's order of blocks: (microbatch, is backward).
            std::vector<std::vector<std::pair<int, bool>>> order(S);
            for (std::size_t s = 0; s < S; ++s) {
                if (pl.schedule == schedule_kind::gpipe) {
                    for (int m = 0; m < M; ++m) order[s].push_back({m, false});
                    for (int m = 0; m < M; ++m) order[s].push_back({m, true});
                    continue;
                }
                const int warm = std::min<int>(M, static_cast<int>(S - s));
                int f = 0, b = 0;
                while (f < warm) order[s].push_back({f++, false});
                while (b < M) {
                    order[s].push_back({b++, true});
                    if (f < M) order[s].push_back({f++, false});
                }
            }
            // List scheduling in order: a stage's next block starts when the stage is free and
            // its inputs have arrived. Each pass places every block whose inputs are known.
            const double unknown = -1;
            std::vector<std::vector<double>> f_end(S, std::vector<double>(std::size_t(M), unknown)), b_end = f_end;
            std::vector<std::size_t> next(S, 0);
            std::vector<double> free_at(S, 0.0);
            std::size_t placed = 0, total = 2 * S * std::size_t(M);
            while (placed < total) {
                bool progress = false;
                for (std::size_t s = 0; s < S; ++s)
                    while (next[s] < order[s].size()) {
                        const auto [m, backward] = order[s][next[s]];
                        const auto um = std::size_t(m);
                        double ready = 0;
                        if (!backward) {
                            if (s > 0) {
                                if (f_end[s - 1][um] == unknown) break;
                                ready = f_end[s - 1][um] + st[s - 1].p2p.value / 2;
                            }
                        } else {
                            if (f_end[s][um] == unknown) break;
                            ready = f_end[s][um];
                            if (s + 1 < S) {
                                if (b_end[s + 1][um] == unknown) break;
                                ready = std::max(ready, b_end[s + 1][um] + st[s + 1].p2p.value / 2);
                            }
                        }
                        const double start = std::max(ready, free_at[s]), len = backward ? bwd(s) : fwd(s);
                        (backward ? b_end : f_end)[s][um] = start + len;
                        free_at[s] = start + len;
                        out.blocks.push_back({p, s, m, -1, backward ? block_kind::backward : block_kind::forward, start, start + len});
                        ++next[s], ++placed, progress = true;
                    }
                if (!progress) break;  // cannot happen for these orders; never loop forever
            }
            for (std::size_t s = 0; s < S; ++s) end = std::max(end, free_at[s]);
        }
        out.pipeline_end.push_back(end);
        // Gradient synchronisation and the optimizer step after the pipeline phase (spans hold
        // their communication already).
        for (std::size_t s = 0; s < S; ++s) {
            const double t0 = std::max(out.pipeline_phase, end), sync = spans ? 0.0 : st[s].sync.value;
            if (!spans) out.blocks.push_back({p, s, -1, -1, block_kind::sync, t0, t0 + sync});
            out.blocks.push_back({p, s, -1, -1, block_kind::update, t0 + sync, t0 + sync + st[s].update.value});
        }
    }
    std::stable_sort(out.blocks.begin(), out.blocks.end(), [](const timeline_block& a, const timeline_block& b) {
        return a.pipeline != b.pipeline ? a.pipeline < b.pipeline : a.stage != b.stage ? a.stage < b.stage : a.start < b.start;
    });
    return out;
}

}  // namespace hetplan
