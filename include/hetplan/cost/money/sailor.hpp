#pragma once
// Money per iteration (Sailor §4.3): C_iter = C_comp + C_comm, with
//   C_comp = sum over GPUs of price per GPU x T_iter, and
//   C_comm = sum over zone pairs of bytes sent between them x price per byte,
// where the bytes are the pipeline's activations and gradients (every microbatch, both
// directions) and the all-reduce traffic on ring edges that cross zones (each ring edge
// carries 2(n-1)/n of the gradient volume).
#include "hetplan/concepts/cost_model.hpp"
#include "hetplan/cost/time/sailor.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/problem.hpp"

namespace hetplan {

struct sailor_money_model {
    [[nodiscard]] money_report estimate(const problem& pb, const plan& pl, const time_report& t) const {
        money_report r;
        pl.for_each_worker([&](std::size_t, std::size_t, std::size_t, const worker_group& w) {
            r.compute += pb.hw.gpu(w.gpu).price_per_hour() * t.iteration * double(w.tp);
        });
        auto traffic = [&](zone_id a, zone_id b, bytes n) {
            if (a == b) return;
            r.cross_zone += n;
            r.communication += pb.hw.network.egress_price(a, b) * n;
        };
        // Pipeline traffic: activations forward and gradients back, every microbatch.
        for (const auto& pipe : pl.pipelines)
            for (std::size_t s = 0; s + 1 < pipe.stages.size(); ++s) {
                const stage& a = pipe.stages[s];
                const stage& b = pipe.stages[s + 1];
                const double elems = pb.model.layers.at(static_cast<std::size_t>(a.last_layer())).act_output_elems;
                // A sender splits its microbatches evenly among the pairs it takes part in.
                for_each_boundary_pair(a, b, [&](const worker_group& wa, const worker_group& wb, std::size_t pairs) {
                    const double microbatches = double(wa.num_microbatches) / double(pairs);
                    const bytes per_dir{elems * pb.job.activation_bytes() * wa.microbatch_size * microbatches};
                    traffic(wa.zone, wb.zone, per_dir);
                    traffic(wb.zone, wa.zone, per_dir);
                });
            }
        // All-reduce traffic on cross-zone ring edges.
        for (const auto& seg : sailor_time_model::sync_segments(pb, pl)) {
            const std::size_t n = seg.ring.size();
            if (n < 2) continue;
            const bytes size{pb.model.params_in(seg.begin, seg.end) * pb.job.gradient_bytes()};
            const bytes per_edge = collective::ring_all_reduce_bytes_per_edge(static_cast<int>(n), size);
            for (std::size_t k = 0; k < n; ++k) traffic(seg.ring[k]->zone, seg.ring[(k + 1) % n]->zone, per_edge);
        }
        r.total = r.compute + r.communication;
        return r;
    }
};

static_assert(concepts::check_cost_model<sailor_money_model>());

}  // namespace hetplan
