#pragma once
// Cephalo's optimizer (Cephalo §2.4, §3.2) as a composition of hetplan pieces:
//   latency   profile_table (measured microbatch sizes, linear beyond; §2.3)
//   memory    cephalo_memory_model (M_state + M_compute(m), 80% usable; §2.3, §3.2)
//   compute   search::fast_batch_dp / straightforward_batch_dp (Eq. 4, constraints I-III)
//   state     even when it fits, else search::water_fill (greedy partition; §2.4), and
//             search::unit_shards (§3.3)
//   time      cephalo_time_model (FSDP layered gradient accumulation, Eqs. 2-3)
//   check     validate()
// The plan: one stage holding every layer, one worker per GPU with its own microbatch size,
// microbatch count and share of the (ZeRO-3) state.
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/cost/memory/cephalo.hpp"
#include "hetplan/cost/money/sailor.hpp"
#include "hetplan/cost/simulator.hpp"
#include "hetplan/cost/time/cephalo.hpp"
#include "hetplan/plan/validator.hpp"
#include "hetplan/search/fsdp/batch_dp.hpp"
#include "hetplan/search/fsdp/state_partition.hpp"

namespace hetplan {

using cephalo_simulator = simulator<cephalo_memory_model, cephalo_time_model, sailor_money_model>;

struct cephalo_options {
    double usable_fraction = 0.8;                    ///< §3.2: memory use capped at 80%
    std::optional<compute_memory_fit> compute_memory; ///< profiled M_compute; empty: analytical
    int max_microbatch = 64;                         ///< largest microbatch size considered
    bool straightforward = false;                    ///< Eq. 4 literally (tests, benchmark reference)
};

struct cephalo_result {
    std::optional<plan> pl;          ///< empty when nothing fits
    estimate est;
    search::batch_assignment assignment;
    int uneven_units = 0;            ///< FSDP units sharded unevenly (§3.3)
    double utilisation = 0;          ///< highest memory use / usable memory after the state split
    seconds elapsed{};
    std::vector<std::string> notes;

    [[nodiscard]] double throughput() const { return pl && est.time.iteration.value > 0 ? 1.0 / est.time.iteration.value : 0.0; }
};

/// GPUs of the pool in worker order (type, then zone), and the DP's view of each type.
struct cephalo_inputs {
    std::vector<std::pair<gpu_type_id, zone_id>> workers;
    search::batch_problem dp;
    std::vector<gpu_type_id> types;  ///< of dp.types
    compute_memory_fit memory;
};

/// Builds the DP instance (constraints II and III) from the problem; GPU types that cannot hold
/// the compute memory of one sample are left out with a note.
[[nodiscard]] inline cephalo_inputs make_cephalo_inputs(const problem& pb, const cephalo_options& opt, std::vector<std::string>& notes) {
    cephalo_inputs in;
    in.memory = opt.compute_memory ? *opt.compute_memory : compute_memory_fit::analytical(pb);
    in.dp.batch = pb.job.global_batch;
    double usable = 0;
    int n = 0;
    for (std::size_t g = 0; g < pb.hw.gpus.size(); ++g) {
        const gpu_type_id gid{g};
        int count = 0;
        for (std::size_t z = 0; z < pb.hw.zones.size(); ++z) count += pb.hw.pool.available(gid, zone_id{z});
        if (count == 0) continue;
        const bytes cap = pb.hw.gpu(gid).memory() * opt.usable_fraction;
        search::fsdp_gpu_type t;
        t.count = count;
        t.time.push_back(0);
        worker_group probe{gid, zone_id{0}, 1, 1, 1, 1.0, -1};
        for (int m = 1; m <= std::min(opt.max_microbatch, pb.job.global_batch) && in.memory.at(m) <= cap; ++m) {
            probe.microbatch_size = m;
            double t_m = 0;
            for (std::size_t l = 0; l < pb.model.layers.size(); ++l) t_m += cephalo_time_model::layer_time(pb, probe, l).fwd_bwd().value;
            t.time.push_back(t_m);
        }
        if (t.max_mbs() == 0) {
            notes.push_back(std::to_string(count) + " x " + pb.hw.gpu(gid).type_name +
                            " left out: one sample's compute memory does not fit in " + std::to_string(opt.usable_fraction * 100) +
                            "% of it");
            continue;
        }
        in.dp.types.push_back(std::move(t));
        in.types.push_back(gid);
        for (std::size_t z = 0; z < pb.hw.zones.size(); ++z)
            for (int k = 0; k < pb.hw.pool.available(gid, zone_id{z}); ++k) in.workers.emplace_back(gid, zone_id{z});
        usable += cap.value * count;
        n += count;
    }
    // (III): state + N x intercept + per_sample x sum(m) <= aggregate usable memory.
    const double room = usable - cephalo_memory_model::state(pb).value - n * in.memory.intercept.value;
    if (room < 0) in.dp.max_mbs_sum = 0;  // nothing fits: any assignment has sum >= N > 0
    else if (in.memory.per_sample.value > 0) in.dp.max_mbs_sum = static_cast<long long>(std::floor(room / in.memory.per_sample.value));
    return in;
}

/// The one-stage plan of an assignment and state shares.
[[nodiscard]] inline plan make_fsdp_plan(const problem& pb, const std::vector<std::pair<gpu_type_id, zone_id>>& workers,
                                         const std::vector<search::gpu_share>& shares, const std::vector<double>& state,
                                         double usable_fraction) {
    plan pl;
    pl.schedule = schedule_kind::layered_gradient_accumulation;
    pl.memory.zero_stage = 3;
    pl.memory.recompute = true;
    pl.memory.offload_activations = true;
    pl.memory.usable_fraction = usable_fraction;
    stage st;
    st.layers.push_back({0, pb.model.num_layers()});
    for (std::size_t i = 0; i < workers.size(); ++i)
        st.workers.push_back({workers[i].first, workers[i].second, 1, shares[i].mbs, shares[i].microbatches, state[i], -1});
    pipeline pipe;
    pipe.stages.push_back(std::move(st));
    pl.pipelines.push_back(std::move(pipe));
    return pl;
}

class cephalo_planner {
public:
    explicit cephalo_planner(cephalo_options opt = {}) : opt_(std::move(opt)) {}

    [[nodiscard]] cephalo_result plan(const problem& pb) const {
        const auto t0 = std::chrono::steady_clock::now();
        pb.model.check();
        pb.job.check();
        cephalo_result out;
        const cephalo_inputs in = make_cephalo_inputs(pb, opt_, out.notes);
        const int N = in.dp.gpus();
        if (N > pb.job.global_batch)
            out.notes.push_back("global batch " + std::to_string(pb.job.global_batch) + " < " + std::to_string(N) +
                                " GPUs: every GPU needs at least one sample");
        const auto a = opt_.straightforward ? search::straightforward_batch_dp(in.dp) : search::fast_batch_dp(in.dp);
        if (!a) {
            out.notes.push_back("no assignment meets the memory constraints (Cephalo §2.4, I-III)");
            out.elapsed = since(t0);
            return out;
        }
        out.assignment = *a;
        // State: water-fill what compute memory leaves free (§2.4).
        std::vector<double> used, cap;
        for (std::size_t i = 0; i < in.workers.size(); ++i) {
            used.push_back(in.memory.at(a->gpus[i].mbs).value);
            cap.push_back(pb.hw.gpu(in.workers[i].first).memory().value * opt_.usable_fraction);
        }
        // The state is sharded unevenly only when an even share does not fit somewhere (§2.4):
        // uneven units cost 15% more communication (§2.3).
        const double state = cephalo_memory_model::state(pb).value;
        const double even = state / double(used.size());
        bool even_fits = true;
        double even_use = 0;
        for (std::size_t i = 0; i < used.size(); ++i) {
            even_fits = even_fits && used[i] + even <= cap[i];
            even_use = std::max(even_use, (used[i] + even) / cap[i]);
        }
        search::water_level level;
        if (even_fits) level = {std::vector<double>(used.size(), 1.0 / double(used.size())), even_use};
        else level = search::water_fill(used, cap, state);
        out.utilisation = level.utilisation;
        out.uneven_units = search::unit_shards(level.shares, pb.model.num_layers()).uneven;
        hetplan::plan pl = make_fsdp_plan(pb, in.workers, a->gpus, level.shares, opt_.usable_fraction);
        const cephalo_simulator sim{cephalo_memory_model{in.memory}, {}, {}};
        out.est = sim.run(pb, pl);
        const auto report = validate(pb, pl, sim.memory);
        if (!report.ok()) throw model_error("cephalo planner: its plan fails validation (a bug): " + report.summary());
        out.pl = std::move(pl);
        out.elapsed = since(t0);
        return out;
    }

    [[nodiscard]] const cephalo_options& options() const { return opt_; }

private:
    static seconds since(std::chrono::steady_clock::time_point t0) {
        return seconds{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
    }
    cephalo_options opt_;
};

/// The baselines of Cephalo's ablation (§4.4), priced by the same models; they may not fit.
enum class fsdp_balance {
    even,          ///< plain FSDP: even batch, no accumulation, even state
    compute_only,  ///< Cephalo-CB: batch by speed (no accumulation), even state
    memory_only,   ///< Cephalo-MB: even batch, microbatch 1, state water-filled
};

struct fsdp_baseline {
    plan pl;
    estimate est;
    bool fits = false;
};

[[nodiscard]] inline fsdp_baseline cephalo_baseline(const problem& pb, fsdp_balance kind, const cephalo_options& opt = {}) {
    std::vector<std::string> notes;
    cephalo_options wide = opt;
    wide.compute_memory = opt.compute_memory ? *opt.compute_memory : compute_memory_fit::analytical(pb);
    const compute_memory_fit f = *wide.compute_memory;
    // Compute-only balancing ignores memory: every microbatch size up to the batch is allowed.
    cephalo_options times = wide;
    times.usable_fraction = 1e9;
    times.max_microbatch = pb.job.global_batch;
    cephalo_inputs in = make_cephalo_inputs(pb, kind == fsdp_balance::compute_only ? times : wide, notes);
    const int N = static_cast<int>(in.workers.size()), B = pb.job.global_batch;
    if (N == 0 || N > B) throw input_error("cephalo baseline: need between 1 and " + std::to_string(B) + " GPUs, got " + std::to_string(N));
    std::vector<search::gpu_share> shares(static_cast<std::size_t>(N));
    if (kind == fsdp_balance::compute_only) {
        // Batch by speed without accumulation (m = b, l = 1): the least makespan T at which the
        // largest batch each GPU finishes within T adds up to B, then trimmed to exactly B.
        std::vector<double> candidates;
        for (const auto& t : in.dp.types) candidates.insert(candidates.end(), t.time.begin() + 1, t.time.end());
        std::sort(candidates.begin(), candidates.end());
        auto largest = [&](const search::fsdp_gpu_type& t, double T) {
            int b = 0;
            while (b + 1 <= t.max_mbs() && t.time[static_cast<std::size_t>(b + 1)] <= T) ++b;
            return b;
        };
        auto total = [&](double T) {
            long long sum = 0;
            for (const auto& t : in.dp.types) {
                const int b = largest(t, T);
                if (b == 0) return -1LL;
                sum += static_cast<long long>(b) * t.count;
            }
            return sum;
        };
        const auto it = std::partition_point(candidates.begin(), candidates.end(), [&](double T) { return total(T) < B; });
        if (it == candidates.end()) throw model_error("cephalo baseline: no compute-only split exists");
        long long extra = total(*it) - B;
        std::size_t i = static_cast<std::size_t>(N);
        for (std::size_t ti = in.dp.types.size(); ti-- > 0;)
            for (int c = 0; c < in.dp.types[ti].count; ++c) {
                int b = largest(in.dp.types[ti], *it);
                const int cut = static_cast<int>(std::min<long long>(extra, b - 1));
                b -= cut;
                extra -= cut;
                shares[--i] = {b, 1};
            }
    } else {
        for (int i = 0; i < N; ++i) {
            const int b = B / N + (i < B % N ? 1 : 0);
            shares[static_cast<std::size_t>(i)] = kind == fsdp_balance::even ? search::gpu_share{b, 1} : search::gpu_share{1, b};
        }
    }
    std::vector<double> state(static_cast<std::size_t>(N), 1.0 / N);
    if (kind == fsdp_balance::memory_only) {
        std::vector<double> used, cap;
        for (int i = 0; i < N; ++i) {
            used.push_back(f.at(shares[static_cast<std::size_t>(i)].mbs).value);
            cap.push_back(pb.hw.gpu(in.workers[static_cast<std::size_t>(i)].first).memory().value * opt.usable_fraction);
        }
        state = search::water_fill(used, cap, cephalo_memory_model::state(pb).value).shares;
    }
    fsdp_baseline out;
    out.pl = make_fsdp_plan(pb, in.workers, shares, state, opt.usable_fraction);
    const cephalo_simulator sim{cephalo_memory_model{f}, {}, {}};
    out.est = sim.run(pb, out.pl);
    out.fits = validate(pb, out.pl, sim.memory).ok();
    return out;
}

}  // namespace hetplan
