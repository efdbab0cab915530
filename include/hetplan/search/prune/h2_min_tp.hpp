#pragma once
// H2 (Sailor §4.2.1): prune out-of-memory configurations early. For a stage (its layers, its
// position in a P-stage pipeline), a GPU type and a microbatch size, the smallest TP degree
// whose worker fits in memory; degrees below it are never tried. The answer depends on the
// model and the memory model, not on how many GPUs are available, so it is cached across
// searches and re-planning. Degrees above the minimum are still checked one by one (the
// framework overhead grows from TP 1 to TP 2, so fitting is not monotone in general).
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "hetplan/cost/memory/sailor.hpp"

namespace hetplan::search {

template <class MemoryModel = sailor_memory_model>
class h2_min_tp {
public:
    explicit h2_min_tp(MemoryModel mm = {}) : mm_(std::move(mm)) {}

    /// Whether a worker of `gpu` at `tp` serving `layers`, stage `index` of `stages`, with
    /// microbatch size `mbs` and `microbatches` per replica fits (memoised).
    [[nodiscard]] bool fits(const problem& pb, layer_range layers, int index, int stages, gpu_type_id gpu, int tp, int mbs,
                            int microbatches, const memory_options& mem, schedule_kind sched) {
        // Only min(stages - index, microbatches) matters for in-flight activations under 1F1B.
        const int in_flight = sched == schedule_kind::one_f_one_b ? std::min(stages - index, microbatches) : microbatches;
        const std::uint64_t key = (std::uint64_t(std::uint32_t(layers.begin)) << 48) ^ (std::uint64_t(std::uint32_t(layers.end)) << 36) ^
                                  (std::uint64_t(in_flight & 0xfff) << 24) ^ (std::uint64_t(gpu.value & 0xff) << 16) ^
                                  (std::uint64_t(tp & 0xff) << 8) ^ std::uint64_t(mbs & 0xff);
        if (auto it = cache_.find(key); it != cache_.end()) return it->second;
        // A one-worker stand-in with the same in-flight count and layers prices the worker.
        plan probe;
        probe.schedule = sched;
        probe.memory = mem;
        pipeline pipe;
        stage st;
        st.layers.push_back(layers);
        st.workers.push_back({gpu, zone_id{0}, tp, mbs, in_flight, 1.0, -1});
        pipe.stages.push_back(st);
        for (int k = 1; k < (sched == schedule_kind::one_f_one_b ? in_flight : 1); ++k) pipe.stages.push_back(stage{});
        probe.pipelines.push_back(std::move(pipe));
        const bool ok = mm_.worker(pb, probe, 0, 0, 0).fits();
        cache_.emplace(key, ok);
        return ok;
    }

    /// Smallest TP degree in `degrees` (increasing) that fits; nullopt if none does.
    template <class Degrees>
    [[nodiscard]] std::optional<int> min_tp(const problem& pb, const Degrees& degrees, layer_range layers, int index, int stages,
                                            gpu_type_id gpu, int mbs, int microbatches, const memory_options& mem,
                                            schedule_kind sched) {
        for (int tp : degrees)
            if (fits(pb, layers, index, stages, gpu, tp, mbs, microbatches, mem, sched)) return tp;
        return std::nullopt;
    }

    void clear() { cache_.clear(); }
    [[nodiscard]] std::size_t size() const { return cache_.size(); }

private:
    MemoryModel mm_;
    std::unordered_map<std::uint64_t, bool> cache_;
};

}  // namespace hetplan::search
