#pragma once
// The work of one training step of a plan, as operations on workers, and an order to run them in.
//
// A pipeline's layer ranges, sorted, are its segments (one per stage, or several per stage for
// Zorse's ministages); its samples are split over each stage's workers in worker order, and each
// worker's share into its microbatches. An operation is the forward or backward of one
// microbatch of one worker over one segment; it depends on the operations of the neighbouring
// segment whose samples overlap its own, so stages with different replica counts and microbatch
// sizes exchange activations many to many (Sailor, Metis).
//
// The order: a list schedule simulated in unit steps, in which every worker runs, of the
// operations whose inputs are ready, the one its schedule prefers: GPipe, every forward before
// any backward; 1F1B, a backward as soon as one is ready and at most (segments after this one + 1)
// microbatches in flight (Narayanan et al. 2019), exceeded only when nothing else in the whole
// plan can run. Each worker runs its operations in the order this simulation ran them, which
// respects every dependency, so with buffered sends no worker can wait forever.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/exec/comm_error.hpp"
#include "hetplan/plan/plan.hpp"

namespace hetplan::exec {

/// One contiguous run of layers of one pipeline, held by one stage.
struct segment {
    int begin = 0, end = 0;
    int stage = 0;
};

/// One worker of the plan: a TP group of consecutive world ranks.
struct worker_slot {
    int pipeline = 0, stage = 0, index = 0;  ///< position in the plan
    int first_rank = 0, tp = 1;
    int first_sample = 0;  ///< first sample of its share, counted in the global batch
    int microbatch_size = 1, microbatches = 1;
    double state_share = 1.0;   ///< its share of the sharded training state (ZeRO/FSDP)
    std::vector<int> segments;  ///< indices into its pipeline's segments, in model order
};

struct operation {
    bool backward = false;
    int worker = 0;      ///< index into step_layout::workers
    int segment = 0;     ///< index into the pipeline's segments
    int microbatch = 0;  ///< within the worker
};

/// A plan's step: workers, segments, and the order every worker runs its operations in.
struct step_layout {
    std::vector<worker_slot> workers;
    std::vector<std::vector<segment>> segments;  ///< per pipeline, in model order
    std::vector<operation> order;                ///< all operations, dependencies first
    int global_batch = 0;
    int world_size = 0;

    std::vector<std::vector<std::vector<int>>> stage_workers;  ///< per pipeline, per stage: worker indices

    /// Workers of (pipeline, segment), in worker order.
    [[nodiscard]] const std::vector<int>& workers_of(int pipeline, int seg) const {
        const int st = segments[static_cast<std::size_t>(pipeline)][static_cast<std::size_t>(seg)].stage;
        return stage_workers[static_cast<std::size_t>(pipeline)][static_cast<std::size_t>(st)];
    }
    /// Samples [first, last) of a worker's microbatch, in the global batch.
    [[nodiscard]] std::pair<int, int> samples(int worker, int mb) const {
        const worker_slot& w = workers[static_cast<std::size_t>(worker)];
        const int first = w.first_sample + mb * w.microbatch_size;
        return {first, first + w.microbatch_size};
    }
    /// The microbatches of another worker overlapping samples [lo, hi): (worker, microbatch).
    template <class F>
    void overlapping(int pipeline, int seg, int lo, int hi, F&& f) const {
        for (int w : workers_of(pipeline, seg)) {
            const worker_slot& ws = workers[static_cast<std::size_t>(w)];
            for (int mb = 0; mb < ws.microbatches; ++mb) {
                const auto [a, b] = samples(w, mb);
                if (a < hi && lo < b) f(w, mb, std::max(a, lo), std::min(b, hi));
            }
        }
    }
};

/// Lays a plan out for `layers` model layers; throws comm_error naming what cannot run.
inline step_layout layout_step(const plan& pl, int layers) {
    step_layout st;
    int rank = 0, sample = 0;
    for (std::size_t p = 0; p < pl.pipelines.size(); ++p) {
        const pipeline& pipe = pl.pipelines[p];
        const std::string where = "plan: pipeline " + std::to_string(p);
        std::vector<segment> segs;
        for (std::size_t s = 0; s < pipe.stages.size(); ++s)
            for (const layer_range& r : pipe.stages[s].layers) segs.push_back({r.begin, r.end, static_cast<int>(s)});
        std::sort(segs.begin(), segs.end(), [](const segment& a, const segment& b) { return a.begin < b.begin; });
        int next = 0;
        for (const segment& sg : segs) {
            if (sg.begin != next || sg.end <= sg.begin)
                throw comm_error(where + ": its layer ranges do not cover layers 0.." + std::to_string(layers - 1) + " once each (a gap or overlap at layer " +
                                 std::to_string(next) + ")");
            next = sg.end;
        }
        if (next != layers) throw comm_error(where + ": its layer ranges end at " + std::to_string(next) + ", the model has " + std::to_string(layers) + " layers");
        const int batch = pipe.batch();
        st.stage_workers.emplace_back(pipe.stages.size());
        for (std::size_t s = 0; s < pipe.stages.size(); ++s) {
            const stage& sg = pipe.stages[s];
            if (sg.workers.empty()) throw comm_error(where + ", stage " + std::to_string(s) + ": no workers");
            if (sg.batch() != batch)
                throw comm_error(where + ", stage " + std::to_string(s) + ": carries " + std::to_string(sg.batch()) + " samples, stage 0 carries " + std::to_string(batch));
            int first = sample;
            for (std::size_t w = 0; w < sg.workers.size(); ++w) {
                const worker_group& g = sg.workers[w];
                if (g.tp < 1 || g.microbatch_size < 1 || g.num_microbatches < 1)
                    throw comm_error(where + ", stage " + std::to_string(s) + ", worker " + std::to_string(w) + ": TP, microbatch size and count must be >= 1");
                if (!(g.state_share > 0 && g.state_share <= 1))
                    throw comm_error(where + ", stage " + std::to_string(s) + ", worker " + std::to_string(w) + ": state_share must be in (0, 1]");
                worker_slot ws{static_cast<int>(p), static_cast<int>(s), static_cast<int>(w), rank, g.tp, first, g.microbatch_size, g.num_microbatches, g.state_share, {}};
                for (std::size_t k = 0; k < segs.size(); ++k)
                    if (segs[k].stage == static_cast<int>(s)) ws.segments.push_back(static_cast<int>(k));
                st.stage_workers.back()[s].push_back(static_cast<int>(st.workers.size()));
                st.workers.push_back(std::move(ws));
                rank += g.tp;
                first += g.batch();
            }
        }
        sample += batch;
        st.segments.push_back(std::move(segs));
    }
    st.global_batch = sample;
    st.world_size = rank;

    // The list schedule (see the top of this file).
    struct state {
        std::vector<int> next_f, next_b;  // per segment position in the worker: next microbatch
        int in_flight = 0;
    };
    const std::size_t W = st.workers.size();
    std::vector<state> ws(W);
    for (std::size_t w = 0; w < W; ++w) {
        ws[w].next_f.assign(st.workers[w].segments.size(), 0);
        ws[w].next_b.assign(st.workers[w].segments.size(), 0);
    }
    // done_f[w][k][mb], done_b likewise, k the position in the worker's segment list
    std::vector<std::vector<std::vector<char>>> done_f(W), done_b(W);
    std::size_t total = 0;
    for (std::size_t w = 0; w < W; ++w) {
        const auto K = st.workers[w].segments.size();
        done_f[w].assign(K, std::vector<char>(static_cast<std::size_t>(st.workers[w].microbatches), 0));
        done_b[w] = done_f[w];
        total += 2 * K * static_cast<std::size_t>(st.workers[w].microbatches);
    }
    auto pos_of = [&](int w, int seg) {
        const auto& v = st.workers[static_cast<std::size_t>(w)].segments;
        return static_cast<std::size_t>(std::find(v.begin(), v.end(), seg) - v.begin());
    };
    auto ready = [&](const operation& op) {
        const worker_slot& w = st.workers[static_cast<std::size_t>(op.worker)];
        const auto [lo, hi] = st.samples(op.worker, op.microbatch);
        const int nseg = static_cast<int>(st.segments[static_cast<std::size_t>(w.pipeline)].size());
        bool ok = true;
        if (!op.backward) {
            if (op.segment > 0)
                st.overlapping(w.pipeline, op.segment - 1, lo, hi, [&](int w2, int mb2, int, int) {
                    ok = ok && done_f[static_cast<std::size_t>(w2)][pos_of(w2, op.segment - 1)][static_cast<std::size_t>(mb2)];
                });
        } else {
            ok = done_f[static_cast<std::size_t>(op.worker)][pos_of(op.worker, op.segment)][static_cast<std::size_t>(op.microbatch)];
            if (ok && op.segment + 1 < nseg)
                st.overlapping(w.pipeline, op.segment + 1, lo, hi, [&](int w2, int mb2, int, int) {
                    ok = ok && done_b[static_cast<std::size_t>(w2)][pos_of(w2, op.segment + 1)][static_cast<std::size_t>(mb2)];
                });
        }
        return ok;
    };
    const bool gpipe = pl.schedule == schedule_kind::gpipe;
    while (st.order.size() < total) {
        std::vector<operation> chosen;
        for (int pass = 0; pass < 2 && chosen.empty(); ++pass) {  // pass 1: the in-flight limit lifted
            for (std::size_t w = 0; w < W; ++w) {
                const worker_slot& wk = st.workers[w];
                const int nseg = static_cast<int>(st.segments[static_cast<std::size_t>(wk.pipeline)].size());
                auto next_op = [&](bool backward) -> std::optional<operation> {
                    // the earliest unrun microbatch of each segment, segments in order (forward:
                    // first segment first; backward: last segment first); the first ready one
                    const std::size_t K = wk.segments.size();
                    for (std::size_t i = 0; i < K; ++i) {
                        const std::size_t k = backward ? K - 1 - i : i;
                        const int mb = backward ? ws[w].next_b[k] : ws[w].next_f[k];
                        if (mb >= wk.microbatches) continue;
                        operation op{backward, static_cast<int>(w), wk.segments[k], mb};
                        if (ready(op)) return op;
                    }
                    return std::nullopt;
                };
                std::optional<operation> pick;
                bool all_forward_done = true;
                for (std::size_t k = 0; k < wk.segments.size(); ++k) all_forward_done = all_forward_done && ws[w].next_f[k] >= wk.microbatches;
                if (gpipe) {
                    pick = next_op(false);
                    if (!pick && all_forward_done) pick = next_op(true);
                } else {
                    pick = next_op(true);
                    if (!pick) {
                        const int after = nseg - 1 - wk.segments.front();
                        if (pass == 1 || ws[w].in_flight < after + 1) pick = next_op(false);
                    }
                }
                if (pick) chosen.push_back(*pick);
            }
        }
        if (chosen.empty()) throw comm_error("plan: its pipelines' operations wait on each other (no order runs them)");
        for (const operation& op : chosen) {
            const auto w = static_cast<std::size_t>(op.worker);
            const std::size_t k = pos_of(op.worker, op.segment);
            if (op.backward) {
                done_b[w][k][static_cast<std::size_t>(op.microbatch)] = 1;
                ++ws[w].next_b[k];
                if (k == 0) --ws[w].in_flight;
            } else {
                done_f[w][k][static_cast<std::size_t>(op.microbatch)] = 1;
                ++ws[w].next_f[k];
                if (k == 0) ++ws[w].in_flight;
            }
            st.order.push_back(op);
        }
    }
    return st;
}

}  // namespace hetplan::exec
