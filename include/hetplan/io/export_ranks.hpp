#pragma once
// The `ranks` launch format (docs/formats.md, schema docs/schemas/ranks.schema.json): a plan as
// one entry per global rank — its GPU, zone, node, pipeline, stage, worker, TP rank, layer
// ranges, batch share and state share — and the groups it takes part in: its TP group, its
// stage, the ranks it receives activations from and sends them to (the holders of the layers
// before and after its ranges: ministages exchange both ways), and per layer range the ranks
// its gradients are summed with (replicas of any TP degree, in any pipeline: AutoHet's layer-wise
// sync across asymmetric pipelines). Any plan hetplan makes can be written so, also the ones no
// framework can express (export_framework.hpp says which feature is missing).
//
// read_ranks turns such a file back into the plan (the runner and the simulator take it as a
// plan file: `hetplan run --plan ranks.json`).
//
// Ranks are numbered as exec::layout_step numbers them (the runner's order): pipelines, then
// stages, then workers, each worker's TP group on consecutive ranks; samples likewise, each
// pipeline's batch after the previous pipeline's and each stage's workers in order.
#include <algorithm>
#include <string>
#include <vector>

#include "hetplan/hardware/cluster.hpp"
#include "hetplan/io/cluster_json.hpp"
#include "hetplan/io/job_json.hpp"
#include "hetplan/io/plan_json.hpp"
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
        // Activations cross at each of the stage's range ends: from the holder of the layer before
        // a range, to the holder of the layer after it (with ministages, both ways between two
        // stages; Zorse).
        auto at_layers = [&](bool before) {
            return [&, before](const ranked_worker& o) {
                if (o.pipeline != r.pipeline || o.stage == r.stage) return false;
                const stage& other = pipe.stages[static_cast<std::size_t>(o.stage)];
                return std::any_of(st.layers.begin(), st.layers.end(), [&](const layer_range& lr) {
                    return before ? lr.begin > 0 && detail::holds(other, lr.begin - 1) : detail::holds(other, lr.end);
                });
            };
        };
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
                       {"previous_stage", detail::ranks_where(ws, at_layers(true))},
                       {"next_stage", detail::ranks_where(ws, at_layers(false))},
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

/// The plan a ranks file describes. Its entries must come in rank order with each worker's TP
/// ranks together (as write_ranks writes them); the error names the entry that does not.
[[nodiscard]] inline plan read_ranks(const cursor& root, const cluster& hw) {
    if (root["format"].string() != ranks_format_name) root["format"].fail(std::string("not a ranks file (\"") + ranks_format_name + "\")");
    if (root["version"].integer(1) != ranks_format_version) root["version"].fail("version " + std::to_string(ranks_format_version) + " is the one hetplan reads");
    root.known_fields({"format", "version", "model", "layers", "global_batch", "sequence_length", "precision", "schedule", "memory", "world_size", "ranks"});
    plan pl;
    pl.schedule = read_schedule(root["schedule"]);
    root["memory"].known_fields({}, memory_option_fields);
    pl.memory = read_memory_options(root["memory"]);
    const cursor ranks = root["ranks"];
    const int world = root["world_size"].integer(1, limits::max_gpus);
    if (static_cast<int>(ranks.size()) != world) root["world_size"].fail("is " + std::to_string(world) + ", the file lists " + std::to_string(ranks.size()) + " ranks");
    for (std::size_t i = 0; i < ranks.size();) {
        const cursor e = ranks.at(i);
        e.known_fields({"rank", "gpu", "zone", "node", "pipeline", "stage", "worker", "tp", "tp_rank", "layers", "microbatch_size", "microbatches",
                        "first_sample", "state_share", "groups"});
        const int p = e["pipeline"].integer(0), s = e["stage"].integer(0), w = e["worker"].integer(0);
        if (e["rank"].integer(0) != static_cast<int>(i)) e["rank"].fail("ranks must come in order: expected " + std::to_string(i));
        if (e["tp_rank"].integer(0) != 0) e["tp_rank"].fail("a worker's TP ranks must start at 0");
        // A new pipeline, stage or worker is the next one in order, or the file is out of order.
        if (p == static_cast<int>(pl.pipelines.size())) pl.pipelines.emplace_back();
        if (p != static_cast<int>(pl.pipelines.size()) - 1) e["pipeline"].fail("pipelines must come in order");
        auto& stages = pl.pipelines.back().stages;
        if (s == static_cast<int>(stages.size())) {
            stages.emplace_back();
            e["layers"].for_each_item([&](const cursor& r) {
                if (r.size() != 2) r.fail("a layer range is [first, one past last]");
                stages.back().layers.push_back({r.at(0).integer(0), r.at(1).integer(0)});
            });
        }
        if (s != static_cast<int>(stages.size()) - 1) e["stage"].fail("stages must come in order");
        if (w != static_cast<int>(stages.back().workers.size())) e["worker"].fail("workers must come in order");
        worker_group g;
        g.gpu = gpu_ref(hw, e["gpu"]);
        g.zone = zone_ref(hw, e["zone"]);
        g.tp = e["tp"].integer(1, limits::max_tp);
        g.microbatch_size = e["microbatch_size"].integer(1);
        g.num_microbatches = e["microbatches"].integer(1);
        g.state_share = e["state_share"].non_negative();
        g.node = e["node"].raw().is_null() ? -1 : e["node"].integer(0);
        for (int k = 1; k < g.tp; ++k) {
            if (i + static_cast<std::size_t>(k) >= ranks.size()) e["tp"].fail("the file ends inside this worker's TP group");
            const cursor t = ranks.at(i + static_cast<std::size_t>(k));
            if (t["tp_rank"].integer(0) != k || t["pipeline"].integer(0) != p || t["stage"].integer(0) != s || t["worker"].integer(0) != w)
                t.fail("expected TP rank " + std::to_string(k) + " of the worker before it");
        }
        stages.back().workers.push_back(g);
        i += static_cast<std::size_t>(g.tp);
    }
    return pl;
}

}  // namespace hetplan::io
