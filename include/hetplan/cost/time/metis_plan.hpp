#pragma once
// Metis' cost model (Metis §5.3; cost/time/metis.hpp) as a model of concepts::time_model, so it
// prices any hetplan plan and Metis' plans can be priced by any other model:
//   per pipeline  (B - 1) max_s exec_s + sum_s exec_s + sum_s p2p_s
//   plus          max_s all-reduce_s + max_s update_s
// exec_s is the stage's slowest worker on one microbatch, its samples run as power-of-two
// microbatches where the profile has them (Metis' profiles hold powers of two only; other sizes
// are looked up directly); p2p_s the layer output of one microbatch to the next stage over the
// slowest link between the two stages' workers; all-reduce_s 2 (d - 1) / d of the stage's
// gradients over the slowest link among its workers (Metis' ring); update_s the optimizer step of
// the stage's layers at its TP degree. Metis' fb_sync and batch-generation terms are measured
// remainders a hetplan profile does not hold: 0.
#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "hetplan/concepts/time_model.hpp"
#include "hetplan/cost/time/metis_layout.hpp"
#include "hetplan/cost/time/sailor.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/problem.hpp"

namespace hetplan {

struct metis_time_model {
    /// One microbatch of `w` through layers `r` (forward, backward), power-of-two pieces.
    [[nodiscard]] static std::pair<seconds, seconds> worker_time(const problem& pb, const worker_group& w, std::span<const layer_range> ranges) {
        const gpu_spec& gpu = pb.hw.gpu(w.gpu);
        seconds fwd{0}, bwd{0};
        for_each_power_of_two(w.microbatch_size, [&](int m) {
            for (const auto& r : ranges)
                for (int l = r.begin; l < r.end; ++l) {
                    const auto t = pb.profiles.lookup(gpu, w.tp, m, pb.model, std::size_t(l), pb.job.compute_dtype(), 16.0).first;
                    fwd += t.fwd;
                    bwd += t.bwd;
                }
        });
        return {fwd, bwd};
    }

    [[nodiscard]] time_report estimate(const problem& pb, const plan& pl) const {
        time_report r;
        for (std::size_t p = 0; p < pl.pipelines.size(); ++p) {
            const auto& pipe = pl.pipelines[p];
            const int B = pipe.stages.empty() || pipe.stages.front().workers.empty() ? 1 : pipe.stages.front().workers.front().num_microbatches;
            seconds worst{0}, sum{0}, p2p{0};
            for (std::size_t s = 0; s < pipe.stages.size(); ++s) {
                const stage& st = pipe.stages[s];
                stage_time out;
                out.pipeline = p;
                out.stage = s;
                for (const auto& w : st.workers) {
                    const auto [f, b] = worker_time(pb, w, {st.layers.data(), st.layers.size()});
                    if (f + b > out.compute) out.compute = f + b, out.forward = f;
                }
                out.update = update_time(pb, st);
                if (s + 1 < pipe.stages.size()) {
                    const stage& next = pipe.stages[s + 1];
                    const int last = st.last_layer();
                    for (const auto& a : st.workers)
                        for (const auto& b : next.workers) {
                            const bytes size{pb.model.layers.at(std::size_t(last)).act_output_elems * a.microbatch_size * pb.job.activation_bytes()};
                            out.p2p = max(out.p2p, pb.hw.network.between(sailor_time_model::endpoint_of(a), sailor_time_model::endpoint_of(b)).transfer_time(size));
                        }
                }
                out.sync = all_reduce(pb, st);
                worst = max(worst, out.compute);
                sum += out.compute;
                p2p += out.p2p;
                r.sync = max(r.sync, out.sync);
                r.update = max(r.update, out.update);
                out.busy = out.compute * double(B);
                r.stages.push_back(out);
            }
            pipeline_time pt;
            pt.microbatches = B;
            pt.straggler = worst;
            pt.ramp = sum + p2p;
            pt.steady = worst * double(B - 1);
            pt.total = pt.ramp + pt.steady;
            r.pipeline = max(r.pipeline, pt.total);
            r.pipelines.push_back(pt);
        }
        r.iteration = r.pipeline + r.sync + r.update;
        return r;
    }

private:
    /// The optimizer step of the stage's layers on its slowest worker.
    [[nodiscard]] static seconds update_time(const problem& pb, const stage& st) {
        seconds worst{0};
        for (const auto& w : st.workers) {
            seconds t{0};
            for (const auto& rg : st.layers)
                for (int l = rg.begin; l < rg.end; ++l)
                    t += pb.profiles.lookup(pb.hw.gpu(w.gpu), w.tp, w.microbatch_size, pb.model, std::size_t(l), pb.job.compute_dtype(), 16.0).first.update;
            worst = max(worst, t);
        }
        return worst;
    }
    /// Ring all-reduce of the stage's gradients (per TP shard) over the slowest link among its workers.
    [[nodiscard]] static seconds all_reduce(const problem& pb, const stage& st) {
        const std::size_t d = st.workers.size();
        if (d < 2) return seconds{0};
        int tp = 1;
        for (const auto& w : st.workers) tp = std::max(tp, w.tp);
        double params = 0;
        for (const auto& rg : st.layers) params += pb.model.params_in(rg.begin, rg.end);
        const bytes volume{2.0 * double(d - 1) / double(d) * params / tp * pb.job.gradient_bytes()};
        seconds worst{0};
        for (std::size_t k = 0; k < d; ++k)
            worst = max(worst, pb.hw.network.between(sailor_time_model::endpoint_of(st.workers[k]), sailor_time_model::endpoint_of(st.workers[(k + 1) % d])).transfer_time(volume));
        return worst;
    }
};

static_assert(concepts::check_time_model<metis_time_model>());

}  // namespace hetplan
