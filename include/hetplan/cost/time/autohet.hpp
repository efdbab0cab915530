#pragma once
// AutoHet's iteration time (AutoHet §III-A, Eq. 1):
//   T* = max_j { sum_i t_i^j + (K - 1) max_i t_i^j } + T_sync
// The pipeline term is the 1F1B formula every hetplan model shares (cost/time/one_f_one_b.hpp),
// with t_i^j a stage's compute and point-to-point time as Sailor's model prices them (one place
// for both). T_sync differs: "the data volume for model synchronization divided by the lowest
// communication bandwidth among the data parallel groups". The gradients are all-reduced layer
// by layer, each run of layers over a ring of the stages that hold it in every pipeline
// (Observation 2, Fig. 4); the volume is what each ring member sends, 2(n - 1)/n of the run's
// gradients, summed over the runs, and it crosses the slowest link of any of those rings.
// The optimizer step is kept as in Sailor's model (Eq. 1 leaves it out; profiles measure it).
#include <algorithm>

#include "hetplan/concepts/time_model.hpp"
#include "hetplan/cost/time/sailor.hpp"
#include "hetplan/hardware/collectives.hpp"

namespace hetplan {

struct autohet_time_model {
    sailor_time_model base{};  ///< stage compute, point-to-point and the 1F1B pipeline

    /// T_sync of Eq. 1: every ring's volume, through the slowest edge of all rings.
    [[nodiscard]] seconds sync_time(const problem& pb, const plan& pl) const {
        bytes volume{0};
        std::vector<std::pair<endpoint, endpoint>> edges;
        for (const auto& seg : sailor_time_model::sync_segments(pb, pl)) {
            const int n = static_cast<int>(seg.ring.size());
            if (n < 2) continue;
            volume += collective::ring_all_reduce_bytes_per_edge(n, bytes{pb.model.params_in(seg.begin, seg.end) * pb.job.gradient_bytes()});
            for (int k = 0; k < n; ++k)
                edges.emplace_back(sailor_time_model::endpoint_of(*seg.ring[static_cast<std::size_t>(k)]),
                                   sailor_time_model::endpoint_of(*seg.ring[static_cast<std::size_t>((k + 1) % n)]));
        }
        seconds t{0};
        if (volume.value <= 0) return t;
        std::sort(edges.begin(), edges.end());
        edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
        for (const auto& [a, b] : edges) t = max(t, pb.hw.network.between(a, b).transfer_time(volume));
        return t;
    }

    [[nodiscard]] time_report estimate(const problem& pb, const plan& pl) const {
        time_report r = base.estimate(pb, pl);  // pipelines and updates; its sync is replaced
        const seconds sync = sync_time(pb, pl);
        r.sync = sync;
        for (auto& st : r.stages) st.sync = pl.pipelines.size() > 1 || pl.pipelines.at(st.pipeline).stages.at(st.stage).workers.size() > 1 ? sync : seconds{0};
        r.iteration = r.pipeline + r.sync + r.update;
        return r;
    }
};

static_assert(concepts::check_time_model<autohet_time_model>());

}  // namespace hetplan
