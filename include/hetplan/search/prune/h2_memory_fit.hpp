#pragma once
// H2 (Sailor §4.2.1): prune out-of-memory configurations early. A pruner on worker probes
// (plan/probe.hpp): does one worker of a GPU type at a TP degree, serving a stage's layers at its
// position in the pipeline, fit in memory? Degrees that do not fit never will, so dropping them
// is exact; Sailor's stage DP asks before it considers a (stage, type, TP).
//
// Asked thousands of times, so memoised. The answer depends on the model, the job, the GPU type
// and the memory model, not on how many GPUs are available: the memo survives re-planning on a
// new pool and is cleared when the problem changes (search::problem_digest, checked in begin(),
// which every search calls before it starts). Under 1F1B a
// worker's device memory depends on its microbatch count only through the microbatches in
// flight, min(count, stages - stage) (what a 1F1B memory model may read); the memo keys on that.
#include <bit>
#include <cstdint>
#include <functional>

#include "hetplan/concepts/pruner.hpp"
#include "hetplan/cost/memory/sailor.hpp"
#include "hetplan/search/memo.hpp"
#include "hetplan/search/model_probe.hpp"
#include "hetplan/search/problem_digest.hpp"

namespace hetplan::search {

template <concepts::memory_model Memory = sailor_memory_model>
class h2_memory_fit {
public:
    explicit h2_memory_fit(Memory mm = {}) : mm_(std::move(mm)) {}

    [[nodiscard]] static constexpr const char* name() { return "H2 memory fit"; }
    [[nodiscard]] const Memory& memory_model() const { return mm_; }

    /// Called by a search before it starts: keeps the memo when the problem is the same one
    /// (only the pool may differ), clears it otherwise.
    void begin(const problem& pb) const {
        const std::uint64_t owner = problem_digest(pb);
        if (owner != owner_) memo_.clear();
        owner_ = owner;
    }

    [[nodiscard]] bool operator()(const problem& pb, const worker_probe& w) const {
        const key k = key_of(w);
        if (const bool* hit = memo_.find(k)) return *hit;
        const bool ok = worker_memory_of(mm_, pb, w).fits();
        memo_.insert(k, ok);
        return ok;
    }

    /// Answers memoised so far (tests).
    [[nodiscard]] std::size_t size() const { return memo_.size(); }
    void clear() const { memo_.clear(); }

private:
    /// Every field H2's answer depends on, packed without loss: (first range, flight, mbs),
    /// (GPU type, TP, schedule, ZeRO, flags), a digest of all ranges (for stages of several), and
    /// the memory options' fractions. Fields too wide for their slot are refused, not truncated.
    struct key {
        std::uint64_t where = 0, what = 0, ranges = 0;
        double usable = 0, share = 0;
        friend bool operator==(const key&, const key&) = default;
    };
    struct key_hash {
        std::size_t operator()(const key& k) const noexcept {
            std::uint64_t h = k.where * 0x9E3779B97F4A7C15ull;
            for (std::uint64_t v : {k.what, k.ranges, std::bit_cast<std::uint64_t>(k.usable), std::bit_cast<std::uint64_t>(k.share)})
                h = (h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2))) * 0xBF58476D1CE4E5B9ull;
            return static_cast<std::size_t>(h ^ (h >> 31));
        }
    };
    [[nodiscard]] static std::uint64_t field(long long v, int bits) {
        if (v < 0 || v >= (1ll << bits)) throw model_error("H2 memory fit: a layer index, microbatch size or count beyond its memo key");
        return static_cast<std::uint64_t>(v);
    }
    [[nodiscard]] static key key_of(const worker_probe& w) {
        key k;
        const layer_range first = w.layers.empty() ? layer_range{} : w.layers.front();
        const int flight = w.schedule == schedule_kind::one_f_one_b ? std::min(w.stages - w.stage, w.worker.num_microbatches)
                                                                    : w.worker.num_microbatches;
        k.where = field(first.begin, 16) << 48 | field(first.end, 16) << 32 | field(flight, 16) << 16 | field(w.worker.microbatch_size, 16);
        k.what = std::uint64_t{w.worker.gpu.value} << 48 | field(w.worker.tp, 16) << 32 | std::uint64_t(w.schedule) << 24 |
                 field(w.memory.zero_stage, 8) << 16 |
                 std::uint64_t(w.memory.recompute | w.memory.offload_params << 1 | w.memory.offload_activations << 2);
        if (w.layers.size() > 1) {
            digest ranges;
            for (const auto& r : w.layers) ranges.add(r.begin).add(r.end);
            k.ranges = ranges.value();
        }
        k.usable = w.memory.usable_fraction;
        k.share = w.memory.zero_stage > 0 ? w.worker.state_share : 1.0;  // shares matter only under ZeRO
        return k;
    }

    Memory mm_;
    mutable flat_memo<key, bool, key_hash> memo_{4096};
    mutable std::uint64_t owner_ = 0;
};

static_assert(concepts::check_pruner<h2_memory_fit<>, worker_probe>());

}  // namespace hetplan::search
