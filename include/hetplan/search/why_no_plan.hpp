#pragma once
// Why a Sailor search returned no plan, in a user's words: "no plan satisfies the request" alone
// leaves them guessing. Memory is the usual reason (H2 drops every worker of some stage): for
// every family (P, mbs) the stage that fits worst, at its best GPU type and TP degree and with
// the fewest microbatches in flight any data-parallel degree gives; the family that comes
// closest is reported with what it needs and what to try.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>

#include "hetplan/search/cells.hpp"
#include "hetplan/search/model_probe.hpp"

namespace hetplan::search {

/// A sentence when memory binds every family of `families` (a range of sailor_family), none
/// when some family has a (type, TP) that holds each of its stages.
template <class Memory, class Families>
[[nodiscard]] std::optional<std::string> memory_binds(const problem& pb, const sailor_domain& d, Families&& families, const Memory& mm,
                                                      const memory_options& memory) {
    struct worst_stage {
        double ratio = 0;  ///< need / capacity at the best (type, TP): > 1 means it cannot fit
        int P = 0, mbs = 0, stage = 0, tp = 0;
        layer_range layers{};
        gpu_type_id gpu{};
        bytes need{}, capacity{};
    };
    std::optional<worst_stage> closest;
    int deepest = 0;
    for (const auto& f : families) {
        const int M = pb.job.global_batch / f.mbs, D = std::min(M, d.gpus / std::max(f.P, 1));
        if (D < 1) continue;
        deepest = std::max(deepest, f.P);
        worst_stage worst;
        for (int i = 0; i < f.P; ++i) {
            worst_stage best{std::numeric_limits<double>::infinity()};
            for (std::size_t t = 0; t < d.cells.types.size(); ++t)
                for (int tp : d.tps[t]) {
                    const worker_probe probe{std::span(f.partition).subspan(static_cast<std::size_t>(i), 1), i, f.P,
                                             {d.cells.types[t], zone_id{0}, tp, f.mbs, (M + D - 1) / D, 1.0 / D, -1}, memory,
                                             schedule_kind::one_f_one_b};
                    const worker_memory w = worker_memory_of(mm, pb, probe);
                    const double r = w.total.value / std::max(w.capacity.value, 1.0);
                    if (r < best.ratio) best = {r, f.P, f.mbs, i, tp, f.partition[static_cast<std::size_t>(i)], d.cells.types[t], w.total, w.capacity};
                }
            if (best.ratio > worst.ratio) worst = best;
        }
        if (worst.ratio <= 1) return std::nullopt;
        if (!closest || worst.ratio < closest->ratio) closest = worst;
    }
    if (!closest) return std::nullopt;
    const worst_stage& w = *closest;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "no plan fits in memory: %s, stage %d of a %d-stage pipeline (layers %d-%d) at microbatch size %d needs %.1f GB "
                  "per GPU at best (%s at TP %d holds %.1f GB), and that is the closest any pipeline depth <= %d comes; try ZeRO "
                  "(job memory.zero_stage 1 or 2), GPUs with more memory, a smaller sequence length, or a planner that prices "
                  "recomputation",
                  pb.model.name.c_str(), w.stage, w.P, w.layers.begin, w.layers.end - 1, w.mbs, w.need.value / 1e9,
                  pb.hw.gpu(w.gpu).type_name.c_str(), w.tp, w.capacity.value / 1e9, deepest);
    return std::string(buf);
}

}  // namespace hetplan::search
