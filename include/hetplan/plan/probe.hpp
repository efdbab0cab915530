#pragma once
// One worker group in the context a per-worker model needs, without a whole plan: its stage's
// layer ranges, the stage's position in a pipeline of `stages`, the worker itself, and the
// plan-wide memory options and schedule. Searches ask memory and time models about workers this
// way (Sailor's H2, the stage DP's compute times); a model that only prices whole plans is asked
// through a one-worker probe plan instead (search/model_probe.hpp).
#include <span>

#include "hetplan/core/units.hpp"
#include "hetplan/plan/plan.hpp"

namespace hetplan {

struct worker_probe {
    std::span<const layer_range> layers;  ///< the stage's layer ranges
    int stage = 0;                        ///< position in the pipeline, 0-based
    int stages = 1;                       ///< pipeline depth
    worker_group worker{};
    memory_options memory{};
    schedule_kind schedule = schedule_kind::one_f_one_b;

    /// The probe of worker `w` of stage `s` of pipeline `p` of a plan.
    [[nodiscard]] static worker_probe of(const plan& pl, std::size_t p, std::size_t s, std::size_t w) {
        const pipeline& pipe = pl.pipelines.at(p);
        const hetplan::stage& st = pipe.stages.at(s);
        return {{st.layers.data(), st.layers.size()}, static_cast<int>(s), static_cast<int>(pipe.stages.size()), st.workers.at(w),
                pl.memory, pl.schedule};
    }
};

/// One microbatch through a worker's layers: forward + backward, the optimizer step, and the
/// forward alone.
struct worker_times {
    seconds compute{}, update{}, forward{};
};

}  // namespace hetplan
