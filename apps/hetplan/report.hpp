#pragma once
// Text rendering of a simulated plan, shared by the command's subcommands.
#include <cstdio>
#include <string>

#include "hetplan/hetplan.hpp"

namespace hetplan::app {

/// Where each stage runs: its layer ranges (half-open, several for ministages) and its workers,
/// consecutive ones with the same GPU, zone, TP and microbatches as one line.
inline void print_placement(std::FILE* out, const problem& pb, const plan& pl) {
    std::fprintf(out, "placement\n  %-4s %-5s %-14s %s\n", "pipe", "stage", "layers", "workers");
    for (std::size_t p = 0; p < pl.pipelines.size(); ++p)
        for (std::size_t s = 0; s < pl.pipelines[p].stages.size(); ++s) {
            const stage& st = pl.pipelines[p].stages[s];
            std::string layers;
            for (const layer_range& r : st.layers) layers += (layers.empty() ? "" : " ") + ("[" + std::to_string(r.begin) + "," + std::to_string(r.end) + ")");
            std::string who;
            for (std::size_t i = 0, j = 0; i < st.workers.size(); i = j) {
                const worker_group& w = st.workers[i];
                for (j = i + 1; j < st.workers.size(); ++j) {
                    const worker_group& o = st.workers[j];
                    if (o.gpu != w.gpu || o.zone != w.zone || o.tp != w.tp || o.microbatch_size != w.microbatch_size || o.num_microbatches != w.num_microbatches) break;
                }
                who += (who.empty() ? "" : "; ") + std::to_string(j - i) + " x " + pb.hw.gpu(w.gpu).type_name + " TP" + std::to_string(w.tp) + " in " +
                       pb.hw.zone(w.zone).name + ", mbs " + std::to_string(w.microbatch_size) + " x " + std::to_string(w.num_microbatches);
            }
            std::fprintf(out, "  %-4zu %-5zu %-14s %s\n", p, s, layers.c_str(), who.c_str());
        }
    std::fprintf(out, "\n");
}

inline void print_estimate(std::FILE* out, const problem& pb, const plan& pl, const estimate& e) {
    std::fprintf(out, "model %s, global batch %d, sequence %d, %s\n", pb.model.name.c_str(), pb.job.global_batch,
                 pb.job.sequence_length, std::string(to_string(pb.job.prec)).c_str());
    std::fprintf(out, "plan: %zu pipeline(s), %d GPUs, schedule %s\n\n", pl.pipelines.size(), pl.total_gpus(),
                 std::string(to_string(pl.schedule)).c_str());
    print_placement(out, pb, pl);
    std::fprintf(out, "memory per GPU (GB)\n");
    std::fprintf(out, "  %-4s %-5s %-9s %-9s %-3s %8s %8s %8s %8s %8s %8s %8s  %s\n", "pipe", "stage", "workers", "gpu", "tp",
                 "weights", "grads", "optim", "buffers", "activ", "other", "total", "capacity");
    // Consecutive workers of a stage with the same GPU, TP and memory share one line.
    const auto& ws = e.memory.workers;
    for (std::size_t i = 0, j = 0; i < ws.size(); i = j) {
        const auto& w = ws[i];
        const auto& wg = pl.pipelines[w.pipeline].stages[w.stage].workers[w.worker];
        for (j = i + 1; j < ws.size(); ++j) {
            const auto& o = ws[j];
            const auto& og = pl.pipelines[o.pipeline].stages[o.stage].workers[o.worker];
            if (o.pipeline != w.pipeline || o.stage != w.stage || og.gpu != wg.gpu || og.tp != wg.tp || o.total != w.total) break;
        }
        const std::string who = j - i == 1 ? std::to_string(w.worker) : std::to_string(w.worker) + "-" + std::to_string(ws[j - 1].worker);
        std::fprintf(out, "  %-4zu %-5zu %-9s %-9s %-3d %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f  %.2f%s\n", w.pipeline, w.stage,
                     who.c_str(), pb.hw.gpu(wg.gpu).type_name.c_str(), wg.tp, w.weights.value / 1e9, w.gradients.value / 1e9,
                     w.optimizer.value / 1e9, w.buffers.value / 1e9, w.activations.value / 1e9, w.overhead.value / 1e9,
                     w.total.value / 1e9, w.capacity.value / 1e9, w.fits() ? "" : "  OUT OF MEMORY");
    }
    // Layer by layer over the whole batch (Cephalo's FSDP): a stage's compute covers every
    // microbatch and its exposed gathers / reduce-scatters lie inside the pipeline time. A model
    // whose iteration adds no sync while its stages have some (Zorse's groups) counts that
    // exposed communication inside the pipeline too: the column says so, so that the lines
    // below add up (tests/cli/summary_consistent.py).
    const bool layered = pl.schedule == schedule_kind::layered_gradient_accumulation;
    bool sync_inside = layered;
    for (const auto& s : e.time.stages) sync_inside = sync_inside || (e.time.sync.value <= 0 && s.sync.value > 0);
    std::fprintf(out, "\ntime per stage (s)\n  %-4s %-5s %10s %10s %10s %10s %10s\n", "pipe", "stage", layered ? "compute" : "compute/mb", "p2p/mb", "bubble",
                 sync_inside ? "sync*" : "sync", "update");
    for (const auto& s : e.time.stages)
        std::fprintf(out, "  %-4zu %-5zu %10.4f %10.4f %10.3f %10.4f %10.4f\n", s.pipeline, s.stage, s.compute.value, s.p2p.value,
                     s.bubble.value, s.sync.value, s.update.value);
    if (layered) std::fprintf(out, "  (compute: every microbatch, layer by layer; sync*: the gathers and reduce-scatters not hidden by compute, inside the pipeline time)\n");
    else if (sync_inside) std::fprintf(out, "  (sync*: each stage's communication not hidden by its compute, inside the pipeline time)\n");
    for (std::size_t p = 0; p < e.time.pipelines.size(); ++p) {
        const auto& pt = e.time.pipelines[p];
        if (!layered && pt.straggler.value > 0)
            std::fprintf(out, "  pipeline %zu: %d microbatches, straggler %.4f s, warm-up+cool-down %.3f s, steady %.3f s\n", p,
                         pt.microbatches, pt.straggler.value, pt.ramp.value, pt.steady.value);
        else if (!layered && pt.steady.value > 0)  // a split without a per-microbatch straggler (Zorse's ministages)
            std::fprintf(out, "  pipeline %zu: %d microbatches, warm-up+cool-down %.3f s, steady %.3f s\n", p, pt.microbatches, pt.ramp.value,
                         pt.steady.value);
        else  // no warm-up / steady split in this model
            std::fprintf(out, "  pipeline %zu: %d microbatches, %.3f s\n", p, pt.microbatches, pt.total.value);
    }
    std::fprintf(out, "\niteration: %.3f s = pipeline %.3f + sync %.3f + update %.3f  (%.4f iterations/s)\n",
                 e.time.iteration.value, e.time.pipeline.value, e.time.sync.value, e.time.update.value, e.time.throughput());
    std::fprintf(out, "cost per iteration: %.4f USD = compute %.4f + communication %.4f (%.2f GB across zones)\n",
                 e.money.total.value, e.money.compute.value, e.money.communication.value, e.money.cross_zone.value / 1e9);
}

}  // namespace hetplan::app
