#pragma once
// How a search asks a model about one worker, a message or a ring. Models that offer the refined
// concepts (concepts::worker_memory_model, concepts::stage_time_model) answer directly; any
// other model of memory_model / time_model is asked through probe plans, so every model plugs
// into every planner (Boost.Graph's trait dispatch):
//   memory   estimate() of a plan whose only worker is the probed one, at its stage's position
//   compute  estimate() of a one-stage plan of that worker (the stage's compute, update, forward)
//   p2p      the network's link between the endpoints (Sailor §4.1)
//   sync     a ring all-reduce over the network's links (hardware/collectives.hpp)
// A planner re-prices every plan it returns with the full model, so a fallback only steers the
// search, never the numbers reported. A message or ring over a link the network lacks
// (missing_link) costs +inf here: the search steers around it instead of failing.
#include <algorithm>
#include <span>

#include "hetplan/concepts/memory_model.hpp"
#include "hetplan/concepts/time_model.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/hardware/collectives.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/probe.hpp"
#include "hetplan/plan/problem.hpp"

namespace hetplan::search {

namespace detail {
/// A plan with `probe.stages` stages whose stage `probe.stage` holds the probed worker and its
/// layers; the other stages are empty.
[[nodiscard]] inline plan probe_plan(const worker_probe& probe) {
    plan pl;
    pl.schedule = probe.schedule;
    pl.memory = probe.memory;
    pipeline pipe;
    pipe.stages.resize(static_cast<std::size_t>(std::max(probe.stages, probe.stage + 1)));
    stage& st = pipe.stages[static_cast<std::size_t>(probe.stage)];
    st.layers.assign(probe.layers.begin(), probe.layers.end());
    st.workers.push_back(probe.worker);
    pl.pipelines.push_back(std::move(pipe));
    return pl;
}
}  // namespace detail

template <concepts::memory_model M>
[[nodiscard]] worker_memory worker_memory_of(const M& m, const problem& pb, const worker_probe& probe) {
    if constexpr (concepts::has_worker_memory<M>) {
        return m.worker(pb, probe);
    } else {
        const memory_report r = m.estimate(pb, detail::probe_plan(probe));
        for (const auto& w : r.workers)
            if (w.stage == static_cast<std::size_t>(probe.stage)) return w;
        throw model_error("memory model: its estimate of a one-worker plan has no entry for that worker");
    }
}

template <concepts::time_model T>
[[nodiscard]] worker_times worker_times_of(const T& t, const problem& pb, const worker_probe& probe) {
    if constexpr (concepts::has_worker_compute<T>) {
        return t.compute(pb, probe);
    } else {
        worker_probe alone = probe;
        alone.stage = 0;
        alone.stages = 1;
        const time_report r = t.estimate(pb, detail::probe_plan(alone));
        if (r.stages.empty()) throw model_error("time model: its estimate of a one-worker plan has no stage");
        return {r.stages.front().compute, r.stages.front().update, r.stages.front().forward};
    }
}

template <concepts::time_model T>
[[nodiscard]] seconds p2p_time_of(const T& t, const problem& pb, endpoint from, endpoint to, bytes size) {
    try {
        if constexpr (concepts::has_p2p_time<T>) return t.p2p_time(pb, from, to, size);
        else return pb.hw.network.between(from, to).transfer_time(size);
    } catch (const missing_link&) {
        return seconds::infinity();
    }
}

template <concepts::time_model T>
[[nodiscard]] seconds sync_time_of(const T& t, const problem& pb, std::span<const endpoint> ring, bytes size) {
    try {
        if constexpr (concepts::has_sync_time<T>) {
            return t.sync_time(pb, ring, size);
        } else {
            const int n = static_cast<int>(ring.size());
            return collective::ring_all_reduce(n, size, [&](int k) -> decltype(auto) {
                return pb.hw.network.between(ring[static_cast<std::size_t>(k)], ring[static_cast<std::size_t>((k + 1) % n)]);
            });
        }
    } catch (const missing_link&) {
        return seconds::infinity();
    }
}

}  // namespace hetplan::search
