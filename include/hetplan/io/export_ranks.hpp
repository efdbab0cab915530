#pragma once
// The `ranks` launch format (docs/formats.md, schema docs/schemas/ranks.schema.json): a plan as
// one entry per global rank — its GPU, zone, node, pipeline, stage, worker, TP rank, layer
// ranges, batch share and state share — and the groups it takes part in: its TP group, its
// stage, the ranks it receives activations from and sends them to, and per layer range the ranks
// its gradients are summed with (replicas of any TP degree, in any pipeline: AutoHet's layer-wise
// sync across asymmetric pipelines). Any plan hetplan makes can be written so, also the ones no
// framework can express (export_framework.hpp says which feature is missing).
//
// Ranks are numbered as exec::layout_step numbers them (the runner's order): pipelines, then
// stages, then workers, each worker's TP group on consecutive ranks; samples likewise, each
// pipeline's batch after the previous pipeline's and each stage's workers in order.
#include <algorithm>
#include <string>
#include <vector>

#include "hetplan/hardware/cluster.hpp"
#include "hetplan/io/job_json.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/workload/job.hpp"
#include "hetplan/workload/model.hpp"

namespace hetplan::io {

inline constexpr const char* ranks_format_name = "hetplan-ranks";
inline constexpr int ranks_format_version = 1;

/// One worker of a plan with its place in the global numbering.
struct ranked_worker {
    int pipeline = 0, stage = 0, worker = 0;
    int first_rank = 0, first_sample = 0;
    const worker_group* w = nullptr;
};

/// Every worker of a plan in rank order (exec::layout_step's numbering).
[[nodiscard]] inline std::vector<ranked_worker> number_workers(const plan& pl) {
    std::vector<ranked_worker> out;
    int rank = 0, sample = 0;
    for (std::size_t p = 0; p < pl.pipelines.size(); ++p) {
        const pipeline& pipe = pl.pipelines[p];
        for (std::size_t s = 0; s < pipe.stages.size(); ++s) {
            int first = sample;
            for (std::size_t k = 0; k < pipe.stages[s].workers.size(); ++k) {
                const worker_group& g = pipe.stages[s].workers[k];
                out.push_back({static_cast<int>(p), static_cast<int>(s), static_cast<int>(k), rank, first, &g});
                rank += g.tp;
                first += g.batch();
            }
        }
        sample += pipe.batch();
    }
    return out;
}

namespace detail {

/// The ranks of the workers `pick` selects, every TP rank of each, ascending.
template <class Pick>
[[nodiscard]] json ranks_where(const std::vector<ranked_worker>& ws, Pick&& pick) {
    json out = json::array();
    for (const ranked_worker& r : ws)
        if (pick(r))
            for (int k = 0; k < r.w->tp; ++k) out.push_back(r.first_rank + k);
    return out;
}

[[nodiscard]] inline bool holds(const stage& st, int layer) {
    return std::any_of(st.layers.begin(), st.layers.end(), [&](const layer_range& r) { return r.begin <= layer && layer < r.end; });
}

/// A stage's layer ranges cut wherever the set of stages holding the layer changes (in any
/// pipeline): each piece has one gradient-sync group.
[[nodiscard]] inline std::vector<layer_range> sync_pieces(const plan& pl, const stage& st) {
    std::vector<int> cuts;
    for (const pipeline& p : pl.pipelines)
        for (const stage& o : p.stages)
            for (const layer_range& r : o.layers) cuts.push_back(r.begin), cuts.push_back(r.end);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::vector<layer_range> out;
    for (const layer_range& r : st.layers) {
        int from = r.begin;
        for (int c : cuts)
            if (c > from && c < r.end) out.push_back({from, c}), from = c;
        out.push_back({from, r.end});
    }
    std::sort(out.begin(), out.end(), [](const layer_range& a, const layer_range& b) { return a.begin < b.begin; });
    return out;
}

}  // namespace detail

/// The plan in the ranks format. The cluster names GPU types and zones; the model gives the
/// layer count and name; the job the batch, sequence, precision.
[[nodiscard]] inline json write_ranks(const plan& pl, const cluster& hw, const model_spec& model, const job_spec& job) {
    const std::vector<ranked_worker> ws = number_workers(pl);
    json ranks = json::array();
    int world = 0, batch = 0;
    for (const pipeline& p : pl.pipelines) batch += p.batch();
    for (const ranked_worker& r : ws) {
        const pipeline& pipe = pl.pipelines[static_cast<std::size_t>(r.pipeline)];
        const stage& st = pipe.stages[static_cast<std::size_t>(r.stage)];
        auto same_stage = [&](const ranked_worker& o) { return o.pipeline == r.pipeline && o.stage == r.stage; };
        auto stage_at = [&](int s) { return [&, s](const ranked_worker& o) { return o.pipeline == r.pipeline && o.stage == s; }; };
        json layers = json::array();
        for (const layer_range& lr : st.layers) layers.push_back({lr.begin, lr.end});
        json sync = json::array();
        for (const layer_range& piece : detail::sync_pieces(pl, st)) {
            auto holder = [&](const ranked_worker& o) {
                return detail::holds(pl.pipelines[static_cast<std::size_t>(o.pipeline)].stages[static_cast<std::size_t>(o.stage)], piece.begin);
            };
            sync.push_back({{"layers", {piece.begin, piece.end}}, {"ranks", detail::ranks_where(ws, holder)}});
        }
        json groups = {{"tp", detail::ranks_where(ws, [&](const ranked_worker& o) { return &o == &r; })},
                       {"stage", detail::ranks_where(ws, same_stage)},
                       {"previous_stage", r.stage > 0 ? detail::ranks_where(ws, stage_at(r.stage - 1)) : json::array()},
                       {"next_stage", r.stage + 1 < static_cast<int>(pipe.stages.size()) ? detail::ranks_where(ws, stage_at(r.stage + 1)) : json::array()},
                       {"gradient_sync", std::move(sync)}};
        for (int k = 0; k < r.w->tp; ++k) {
            json e = {{"rank", r.first_rank + k},
                      {"gpu", hw.gpus.at(r.w->gpu.value).type_name},
                      {"zone", hw.zones.at(r.w->zone.value).name},
                      {"node", r.w->node >= 0 ? json(r.w->node) : json(nullptr)},
                      {"pipeline", r.pipeline},
                      {"stage", r.stage},
                      {"worker", r.worker},
                      {"tp", r.w->tp},
                      {"tp_rank", k},
                      {"layers", layers},
                      {"microbatch_size", r.w->microbatch_size},
                      {"microbatches", r.w->num_microbatches},
                      {"first_sample", r.first_sample},
                      {"state_share", r.w->state_share},
                      {"groups", groups}};
            ranks.push_back(std::move(e));
        }
        world = r.first_rank + r.w->tp;
    }
    return {{"format", ranks_format_name},
            {"version", ranks_format_version},
            {"model", model.name},
            {"layers", model.num_layers()},
            {"global_batch", batch},
            {"sequence_length", job.sequence_length},
            {"precision", std::string(to_string(job.prec))},
            {"schedule", std::string(to_string(pl.schedule))},
            {"memory", write_memory_options(pl.memory)},
            {"world_size", world},
            {"ranks", std::move(ranks)}};
}

}  // namespace hetplan::io
