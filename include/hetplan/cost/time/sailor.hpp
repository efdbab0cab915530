#pragma once
// Sailor's iteration-time model (Sailor §4.3 and T_total of Eq. 1), following the 1F1B
// formulas of [56]: T_iter = max_p T_pp + T_sync + T_update, where for a pipeline of stages
// with per-microbatch compute c_i (slowest worker of the stage) and point-to-point time x_i
// (activations it sends forward plus gradients it sends back, over the actual links):
//   T_pp = sum_i (c_i + x_i)            warm-up and cool-down: one pass through every stage
//        + (m - 1) * max_i (c_i + x_i)  steady phase, set by the straggler stage
// T_sync is the data-parallel gradient all-reduce: for every run of layers held by the same
// stages (one per pipeline), a ring all-reduce over all their workers in 500 MB buckets, each
// step as slow as the slowest ring edge, including edges that cross zones; a worker's sync time
// is the sum over the runs it holds, and T_sync the largest. T_update is the slowest stage's
// optimizer step. GPipe has the same time (only its memory differs).
//
// Conventions shared with the public implementation, so that numbers can be cross-checked:
// the gradient volume of a stage is its full (TP 1) parameter count: the TP ranks of a worker
// run parallel rings that share the node's links, which the (zone, GPU type, TP) link measures.
#include <algorithm>
#include <span>
#include <tuple>
#include <type_traits>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "hetplan/concepts/time_model.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/cost/time/one_f_one_b.hpp"
#include "hetplan/hardware/collectives.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/probe.hpp"
#include "hetplan/plan/problem.hpp"

namespace hetplan {

struct sailor_time_model {
    bytes bucket = bytes{5e8};  ///< DeepSpeed's all-reduce bucket, as in the public implementation
    double state_bytes_per_param = 24.0;  ///< only for the analytical update-time fallback

    [[nodiscard]] static endpoint endpoint_of(const worker_group& w) { return {w.zone, w.gpu, w.tp}; }

    /// One microbatch through a worker's layers (concepts::stage_time_model): forward+backward
    /// (the backward with the forward again when the plan recomputes: Sailor's planner never
    /// does, but a plan priced here may), the optimizer step and the forward alone.
    [[nodiscard]] worker_times compute(const problem& pb, const worker_probe& probe) const {
        const worker_group& w = probe.worker;
        const gpu_spec& gpu = pb.hw.gpu(w.gpu);
        worker_times out;
        for (const auto& r : probe.layers)
            for (int l = r.begin; l < r.end; ++l) {
                auto [t, src] = pb.profiles.lookup(gpu, w.tp, w.microbatch_size, pb.model, static_cast<std::size_t>(l),
                                                   pb.job.compute_dtype(), state_bytes_per_param);
                out.compute += t.fwd + t.backward_pass(probe.memory.recompute);
                out.update += t.update;
                out.forward += t.fwd;
            }
        return out;
    }

    /// One message from one TP group to another over the network (Sailor §4.1's link fits).
    [[nodiscard]] static seconds p2p_time(const problem& pb, endpoint from, endpoint to, bytes size) {
        return pb.hw.network.between(from, to).transfer_time(size);
    }

    /// A stage's gradient all-reduce over its replicas in ring order: 500 MB buckets, each a
    /// ring as slow as its slowest edge, including edges that cross zones.
    /// Each distinct edge's link is looked up once (a ring of D replicas over a few endpoints
    /// repeats the same pairs; a step is as slow as the slowest edge, so the time is the same as
    /// an edge-by-edge walk's): the search prices a ring for every stage pattern it builds.
    [[nodiscard]] seconds sync_time(const problem& pb, std::span<const endpoint> ring, bytes size) const {
        const int n = static_cast<int>(ring.size());
        if (n <= 1 || size.value <= 0) return seconds{0};
        using link_type = std::remove_cvref_t<decltype(pb.hw.network.between(ring[0], ring[0]))>;
        boost::container::small_vector<const link_type*, 8> links;
        for (std::size_t k = 0; k < ring.size(); ++k) {
            const endpoint& from = ring[k];
            const endpoint& to = ring[(k + 1) % ring.size()];
            if (k > 0 && ring[k - 1] == from && from == to) continue;  // the previous edge's pair again
            const link_type* l = &pb.hw.network.between(from, to);
            if (std::find(links.begin(), links.end(), l) == links.end()) links.push_back(l);
        }
        return collective::bucketed_ring_all_reduce(n, size, bucket, std::span<const link_type* const>(links.data(), links.size()));
    }

    /// A floor of sync_time over any ring of `n` replicas drawn from the endpoints `ends`: a
    /// ring is as slow as its slowest edge, so no ring beats the fastest uniform one (over the
    /// links that exist). Without links set for single endpoints a pair's link is its zones'
    /// (network_model::find), so one endpoint per zone stands for the others: a stage over 4
    /// zones and 4 GPU types has ~4,000 pairs of endpoints and 16 of zones.
    [[nodiscard]] seconds sync_floor(const problem& pb, std::span<const endpoint> ends, int n, bytes size) const {
        return sync_floor_between(pb, ends, ends, n, size);
    }
    /// The same over rings with an edge from some endpoint of `from` to some endpoint of `to`
    /// (a ring whose replicas sit in two zone groups crosses between them somewhere).
    [[nodiscard]] seconds sync_floor_between(const problem& pb, std::span<const endpoint> from, std::span<const endpoint> to, int n,
                                             bytes size) const {
        boost::container::small_vector<endpoint, 8> from_zones, to_zones;
        if (!pb.hw.network.has_endpoint_links()) {
            auto one_per_zone = [](std::span<const endpoint> ends, auto& out) {
                for (const endpoint& e : ends)
                    if (std::ranges::none_of(out, [&](const endpoint& z) { return z.zone == e.zone; })) out.push_back(e);
                return std::span<const endpoint>{out.data(), out.size()};
            };
            from = one_per_zone(from, from_zones);
            to = one_per_zone(to, to_zones);
        }
        seconds best = seconds::infinity();
        for (const endpoint& x : from)
            for (const endpoint& y : to)
                if (const auto* l = pb.hw.network.find(x, y)) best = min(best, collective::bucketed_ring_all_reduce(n, size, bucket, *l));
        return is_finite(best) ? best : seconds{0};
    }

    /// Point-to-point times of the boundary after stage `s`: (activations forward, gradients
    /// back), each the slowest pair. Worker k of one stage pairs with worker k of the next,
    /// modulo the smaller count.
    [[nodiscard]] std::pair<seconds, seconds> boundary_times(const problem& pb, const pipeline& pipe, std::size_t s) const {
        const stage& a = pipe.stages[s];
        const stage& b = pipe.stages[s + 1];
        const auto& elems = pb.model.layers.at(static_cast<std::size_t>(a.last_layer())).act_output_elems;
        seconds fwd{0}, bwd{0};
        for_each_boundary_pair(a, b, [&](const worker_group& wa, const worker_group& wb, std::size_t) {
            const bytes size{elems * pb.job.activation_bytes() * wa.microbatch_size};
            fwd = max(fwd, p2p_time(pb, endpoint_of(wa), endpoint_of(wb), size));
            bwd = max(bwd, p2p_time(pb, endpoint_of(wb), endpoint_of(wa), size));
        });
        return {fwd, bwd};
    }

    struct sync_segment {
        int begin = 0, end = 0;
        std::vector<std::pair<std::size_t, std::size_t>> stages;  ///< (pipeline, stage) per pipeline
        std::vector<const worker_group*> ring;                     ///< participants in ring order
    };

    /// Runs of consecutive layers held by the same stage of every pipeline.
    [[nodiscard]] static std::vector<sync_segment> sync_segments(const problem& pb, const plan& pl) {
        const int L = pb.model.num_layers();
        std::vector<std::vector<std::pair<std::size_t, std::size_t>>> owner(static_cast<std::size_t>(L));
        for (std::size_t p = 0; p < pl.pipelines.size(); ++p)
            for (std::size_t s = 0; s < pl.pipelines[p].stages.size(); ++s)
                for (const auto& r : pl.pipelines[p].stages[s].layers)
                    for (int l = std::max(r.begin, 0); l < std::min(r.end, L); ++l)
                        owner[static_cast<std::size_t>(l)].emplace_back(p, s);
        std::vector<sync_segment> segs;
        for (int l = 0; l < L; ++l) {
            auto& o = owner[static_cast<std::size_t>(l)];
            if (!segs.empty() && segs.back().stages == o && segs.back().end == l) {
                segs.back().end = l + 1;
                continue;
            }
            segs.push_back({l, l + 1, o, {}});
        }
        for (auto& seg : segs) {
            for (auto [p, s] : seg.stages)
                for (const auto& w : pl.pipelines[p].stages[s].workers) seg.ring.push_back(&w);
            // Ring order groups workers by zone, then type: one cross-zone edge per zone.
            std::stable_sort(seg.ring.begin(), seg.ring.end(), [](const worker_group* x, const worker_group* y) {
                return std::tie(x->zone, x->gpu, x->tp) < std::tie(y->zone, y->gpu, y->tp);
            });
        }
        return segs;
    }

    [[nodiscard]] seconds segment_sync_time(const problem& pb, const sync_segment& seg) const {
        std::vector<endpoint> ring;
        ring.reserve(seg.ring.size());
        for (const worker_group* w : seg.ring) ring.push_back(endpoint_of(*w));
        return sync_time(pb, ring, bytes{pb.model.params_in(seg.begin, seg.end) * pb.job.gradient_bytes()});
    }

    [[nodiscard]] time_report estimate(const problem& pb, const plan& pl) const {
        if (pl.schedule != schedule_kind::one_f_one_b && pl.schedule != schedule_kind::gpipe)
            throw model_error("sailor time model: schedule '" + std::string(to_string(pl.schedule)) +
                              "' is not modelled (Sailor §6: 1F1B only)");
        time_report r;
        for (std::size_t p = 0; p < pl.pipelines.size(); ++p) {
            const pipeline& pipe = pl.pipelines[p];
            const std::size_t S = pipe.stages.size();
            std::vector<seconds> comp(S), xfer(S);
            int m = 0;
            const std::size_t first = r.stages.size();
            for (std::size_t s = 0; s < S; ++s) {
                stage_time st;
                st.pipeline = p;
                st.stage = s;
                for (std::size_t k = 0; k < pipe.stages[s].workers.size(); ++k) {
                    const worker_group& w = pipe.stages[s].workers[k];
                    const auto wt = compute(pb, worker_probe::of(pl, p, s, k));
                    if (wt.compute > st.compute) st.compute = wt.compute, st.forward = wt.forward;
                    st.update = max(st.update, wt.update);
                    m = std::max(m, w.num_microbatches);
                }
                comp[s] = st.compute;
                r.stages.push_back(st);
            }
            for (std::size_t s = 0; s + 1 < S; ++s) {
                auto [fwd, bwd] = boundary_times(pb, pipe, s);
                xfer[s] += fwd;      // stage s sends activations forward
                xfer[s + 1] += bwd;  // stage s+1 sends gradients back
            }
            pipeline_time pt;
            pt.microbatches = m;
            for (std::size_t s = 0; s < S; ++s) {
                pt.ramp += comp[s] + xfer[s];
                pt.straggler = max(pt.straggler, comp[s] + xfer[s]);
            }
            pt.total = seconds{one_f_one_b_pipeline(pt.ramp.value, pt.straggler.value, m)};
            pt.steady = pt.total - pt.ramp;
            for (std::size_t s = 0; s < S; ++s) {
                auto& st = r.stages[first + s];
                st.p2p = xfer[s];
                int ms = 0;
                for (const auto& w : pipe.stages[s].workers) ms = std::max(ms, w.num_microbatches);
                st.busy = (comp[s] + xfer[s]) * double(ms);
                st.bubble = max(pt.total - st.busy, seconds{0});
            }
            r.pipeline = max(r.pipeline, pt.total);
            r.pipelines.push_back(pt);
        }

        // Gradient synchronisation, per run of layers with the same owners.
        std::vector<std::size_t> first_stage(pl.pipelines.size() + 1, 0);
        for (std::size_t p = 0; p < pl.pipelines.size(); ++p)
            first_stage[p + 1] = first_stage[p] + pl.pipelines[p].stages.size();
        for (const auto& seg : sync_segments(pb, pl)) {
            const seconds t = segment_sync_time(pb, seg);
            for (auto [p, s] : seg.stages) r.stages[first_stage[p] + s].sync += t;
        }
        for (const auto& st : r.stages) {
            r.sync = max(r.sync, st.sync);
            r.update = max(r.update, st.update);
        }
        r.iteration = r.pipeline + r.sync + r.update;
        return r;
    }
};

static_assert(concepts::check_time_model<sailor_time_model>());
static_assert(concepts::stage_time_model<sailor_time_model>);

}  // namespace hetplan
