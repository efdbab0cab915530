#pragma once
// The independent plan validator: every violation, each with a precise message. Planners call
// it on every plan they return; it shares no code with any search.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hetplan/concepts/memory_model.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/problem.hpp"
#include "hetplan/plan/plan.hpp"

namespace hetplan {

enum class violation_kind {
    empty,               ///< no pipeline, stage, layer range or worker
    bad_reference,       ///< GPU type or zone that the cluster does not have
    bad_value,           ///< non-positive TP, microbatch size or count; bad share
    layer_coverage,      ///< a layer missing or held twice in a pipeline
    batch,               ///< batch shares do not add up
    capacity,            ///< more GPUs of a type in a zone than the pool offers
    tp_span,             ///< a TP group larger than a node, or GPUs that do not pack into nodes
    state_share,         ///< ZeRO shares of a stage do not add up to 1
    memory,              ///< a GPU runs out of memory
    model                ///< the memory model cannot evaluate the plan
};

struct violation {
    violation_kind kind;
    std::string message;
};

struct validation_report {
    std::vector<violation> violations;
    /// Whether models can run on the plan at all (validate_structure found nothing that would
    /// make them index out of range, divide by zero or overflow); false implies !ok().
    bool priceable = true;
    [[nodiscard]] bool ok() const { return violations.empty(); }
    [[nodiscard]] bool has(violation_kind k) const {
        return std::any_of(violations.begin(), violations.end(), [k](const violation& v) { return v.kind == k; });
    }
    [[nodiscard]] std::string summary() const {
        std::string s;
        for (const auto& v : violations) s += v.message + "\n";
        return s;
    }
};

namespace detail {
inline std::string where(std::size_t p, std::size_t s) {
    return "pipeline " + std::to_string(p) + " stage " + std::to_string(s);
}
inline std::string where(std::size_t p, std::size_t s, std::size_t w) {
    return where(p, s) + " worker " + std::to_string(w);
}
/// First-fit decreasing of TP groups into the zone's nodes (full nodes plus one partial).
inline bool packs_into_nodes(std::vector<int> groups, int available, int per_node) {
    std::sort(groups.begin(), groups.end(), std::greater<>());
    std::vector<int> free(static_cast<std::size_t>(available / per_node), per_node);
    if (available % per_node) free.push_back(available % per_node);
    for (int g : groups) {
        auto it = std::find_if(free.begin(), free.end(), [g](int f) { return f >= g; });
        if (it == free.end()) return false;
        *it -= g;
    }
    return true;
}
}  // namespace detail

/// What every model needs before it can price `pl` (no memory model involved): pipelines,
/// stages, workers and layer ranges present and in range, GPU types, zones and nodes that
/// exist, positive TP / microbatches, shares in [0, 1], batches that add up within the global
/// batch, GPUs within the pool. `validate` adds the memory check; simulators refuse a plan
/// that fails this (require_priceable) rather than divide by an empty stage.
inline validation_report validate_structure(const problem& pb, const plan& pl) {
    validation_report rep;
    auto add = [&](violation_kind k, std::string m) { rep.violations.push_back({k, std::move(m)}); };
    const int L = pb.model.num_layers();
    const std::size_t types = pb.hw.gpus.size(), zones = pb.hw.zones.size();

    if (pl.pipelines.empty()) add(violation_kind::empty, "plan has no pipeline");
    if (pl.memory.zero_stage < 0 || pl.memory.zero_stage > 3)
        add(violation_kind::bad_value, "ZeRO stage " + std::to_string(pl.memory.zero_stage) + " is not 0..3");
    if (!(pl.memory.usable_fraction > 0 && pl.memory.usable_fraction <= 1))
        add(violation_kind::bad_value, "usable memory fraction must be in (0, 1]");

    rep.priceable = rep.ok();
    long long total_batch = 0;
    bool batch_known = true;  ///< false once a worker's batch share was refused: no sums of the rest
    std::map<std::pair<std::size_t, std::size_t>, std::vector<int>> groups;  // (type, zone) -> TP sizes
    for (std::size_t p = 0; p < pl.pipelines.size(); ++p) {
        const auto& pipe = pl.pipelines[p];
        if (pipe.stages.empty()) {
            add(violation_kind::empty, "pipeline " + std::to_string(p) + " has no stage");
            rep.priceable = false;
            continue;
        }
        std::vector<int> held(static_cast<std::size_t>(std::max(L, 0)), 0);
        long long pipeline_batch = -1;
        for (std::size_t s = 0; s < pipe.stages.size(); ++s) {
            const auto& st = pipe.stages[s];
            if (st.layers.empty()) { add(violation_kind::empty, detail::where(p, s) + " has no layers"); rep.priceable = false; }
            if (st.workers.empty()) { add(violation_kind::empty, detail::where(p, s) + " has no worker group"); rep.priceable = false; }
            for (const auto& r : st.layers) {
                if (r.begin < 0 || r.end > L || r.begin >= r.end) {
                    add(violation_kind::layer_coverage, detail::where(p, s) + " has layer range [" + std::to_string(r.begin) + ", " +
                                                           std::to_string(r.end) + ") outside the model's " + std::to_string(L) + " layers or empty");
                    rep.priceable = false;
                    continue;
                }
                for (int l = r.begin; l < r.end; ++l) ++held[static_cast<std::size_t>(l)];
            }
            double shares = 0;
            long long stage_batch = 0;
            for (std::size_t w = 0; w < st.workers.size(); ++w) {
                const auto& wg = st.workers[w];
                const std::string here = detail::where(p, s, w);
                if (wg.gpu.index() >= types || wg.zone.index() >= zones) {
                    add(violation_kind::bad_reference, here + " names a GPU type or zone the cluster does not have");
                    rep.priceable = batch_known = false;
                    continue;
                }
                if (wg.tp < 1 || wg.microbatch_size < 1 || wg.num_microbatches < 1) {
                    add(violation_kind::bad_value, here + ": TP degree, microbatch size and microbatch count must be >= 1 (got " +
                                                     std::to_string(wg.tp) + ", " + std::to_string(wg.microbatch_size) + ", " +
                                                     std::to_string(wg.num_microbatches) + ")");
                    rep.priceable = batch_known = false;
                    continue;
                }
                // In 64 bits: 65536 x 65536 would overflow worker_group::batch().
                const long long share = static_cast<long long>(wg.microbatch_size) * wg.num_microbatches;
                if (share > pb.job.global_batch) {
                    add(violation_kind::batch, here + ": batch share " + std::to_string(share) + " (microbatch size " + std::to_string(wg.microbatch_size) +
                                                   " x " + std::to_string(wg.num_microbatches) + " microbatches) exceeds the global batch " +
                                                   std::to_string(pb.job.global_batch));
                    rep.priceable = batch_known = false;
                    continue;
                }
                stage_batch += share;
                const int per_node = pb.hw.gpus_per_node(wg.gpu);
                const long long nodes = (static_cast<long long>(pb.pool().available(wg.gpu, wg.zone)) + per_node - 1) / per_node;
                if (wg.node < -1 || wg.node >= nodes) {
                    add(violation_kind::bad_reference, here + ": node " + std::to_string(wg.node) + " of " + pb.hw.gpu(wg.gpu).type_name + " in " +
                                                           pb.hw.zone(wg.zone).name + ", which has " + std::to_string(nodes) +
                                                           " (0.." + std::to_string(nodes - 1) + ", or -1: not pinned)");
                    rep.priceable = false;
                }
                if (wg.tp > per_node)
                    add(violation_kind::tp_span, here + ": TP group of " + std::to_string(wg.tp) + " " + pb.hw.gpu(wg.gpu).type_name +
                                                   " spans nodes of " + std::to_string(per_node) + " GPUs");
                if (!(wg.state_share >= 0 && wg.state_share <= 1) || !std::isfinite(wg.state_share)) {
                    add(violation_kind::state_share, here + ": state share " + std::to_string(wg.state_share) + " is not in [0, 1]");
                    rep.priceable = false;
                }
                shares += wg.state_share;
                groups[{wg.gpu.index(), wg.zone.index()}].push_back(wg.tp);
            }
            if (pl.memory.zero_stage >= 1 && !st.workers.empty() && std::abs(shares - 1.0) > 1e-6)
                add(violation_kind::state_share, detail::where(p, s) + ": ZeRO state shares add up to " + std::to_string(shares) + ", not 1");
            const long long b = stage_batch;
            if (pipeline_batch < 0) pipeline_batch = b;
            else if (b != pipeline_batch && batch_known)
                add(violation_kind::batch, detail::where(p, s) + " processes " + std::to_string(b) + " samples but stage 0 of the pipeline " +
                                               std::to_string(pipeline_batch));
        }
        for (int l = 0; l < L; ++l) {
            const int h = held[static_cast<std::size_t>(l)];
            if (h == 0) add(violation_kind::layer_coverage, "pipeline " + std::to_string(p) + ": layer " + std::to_string(l) + " is held by no stage");
            if (h > 1) add(violation_kind::layer_coverage, "pipeline " + std::to_string(p) + ": layer " + std::to_string(l) + " is held by " +
                                                              std::to_string(h) + " stages");
        }
        total_batch += std::max(pipeline_batch, 0LL);
    }
    if (!pl.pipelines.empty() && batch_known && total_batch != pb.job.global_batch)
        add(violation_kind::batch, "worker batch shares add up to " + std::to_string(total_batch) + " samples, the global batch is " +
                                       std::to_string(pb.job.global_batch));

    for (const auto& [key, sizes] : groups) {
        const gpu_type_id g{key.first};
        const zone_id z{key.second};
        int used = 0;
        for (int t : sizes) used += t;
        const int avail = pb.pool().available(g, z);
        const std::string what = pb.hw.gpu(g).type_name + " in " + pb.hw.zone(z).name;
        if (used > avail)
            add(violation_kind::capacity, "plan uses " + std::to_string(used) + " " + what + ", the pool offers " + std::to_string(avail));
        else if (!detail::packs_into_nodes(sizes, avail, pb.hw.gpus_per_node(g)))
            add(violation_kind::tp_span, "TP groups of " + what + " do not pack into its nodes of " +
                                             std::to_string(pb.hw.gpus_per_node(g)) + " GPUs");
    }

    return rep;
}

/// Throws input_error listing what makes `pl` unpriceable (validate_structure); the simulators
/// call it before any model runs.
inline void require_priceable(const problem& pb, const plan& pl) {
    const validation_report rep = validate_structure(pb, pl);
    if (rep.priceable) return;
    std::string what = "the plan cannot be priced:";
    std::size_t shown = 0;
    for (const auto& v : rep.violations)
        if (shown++ < 5) what += "\n  " + v.message;
    if (rep.violations.size() > 5) what += "\n  (" + std::to_string(rep.violations.size() - 5) + " more)";
    throw input_error("plan", "", what);
}

/// Every violation of `pl`: validate_structure, then the memory check with `mm`, the memory
/// model of the planner or simulator at hand (each paper brings its own, so none is assumed).
template <class MemoryModel>
validation_report validate(const problem& pb, const plan& pl, const MemoryModel& mm) {
    static_assert(concepts::check_memory_model<MemoryModel>());
    validation_report rep = validate_structure(pb, pl);
    auto add = [&](violation_kind k, std::string m) { rep.violations.push_back({k, std::move(m)}); };
    if (rep.priceable) {
        try {
            const memory_report mr = mm.estimate(pb, pl);
            for (const auto& w : mr.workers)
                if (!w.fits()) {
                    const auto& wg = pl.pipelines[w.pipeline].stages[w.stage].workers[w.worker];
                    add(violation_kind::memory, detail::where(w.pipeline, w.stage, w.worker) + " (" + pb.hw.gpu(wg.gpu).type_name + ", TP " +
                                                    std::to_string(wg.tp) + ") needs " + std::to_string(w.total.value / 1e9) + " GB, has " +
                                                    std::to_string(w.capacity.value / 1e9) + " GB");
                }
        } catch (const error& e) {
            add(violation_kind::model, std::string("memory model: ") + e.what());
        }
    }
    return rep;
}

}  // namespace hetplan
