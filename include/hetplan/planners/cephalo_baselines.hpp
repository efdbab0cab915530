#pragma once
// The baselines of Cephalo's ablation (Cephalo §4.4, Fig. 7), priced by the same models: plain
// FSDP (even batch, no accumulation, even state), Cephalo-CB (batch by speed, even state) and
// Cephalo-MB (even batch, microbatch 1, state water-filled). They may not fit.
#include <algorithm>
#include <string>
#include <vector>

#include "hetplan/planners/cephalo.hpp"

namespace hetplan {

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

namespace detail {

/// Cephalo-CB: batch by speed without accumulation (m = b, l = 1): the least makespan T at which
/// the largest batch each GPU finishes within T adds up to B, then trimmed to exactly B.
inline std::vector<search::gpu_share> compute_only_shares(const cephalo_inputs& in, int B) {
    std::vector<double> candidates;
    for (const auto& t : in.dp.types)
        for (int m = 1; m <= t.max_mbs(); ++m) candidates.push_back(t.at(m, 1));
    std::sort(candidates.begin(), candidates.end());
    auto largest = [&](const search::fsdp_gpu_type& t, double T) {
        int b = 0;
        while (b + 1 <= t.max_mbs() && t.at(b + 1, 1) <= T) ++b;
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
    std::vector<search::gpu_share> shares(in.workers.size());
    std::size_t i = shares.size();
    for (std::size_t ti = in.dp.types.size(); ti-- > 0;)
        for (int c = 0; c < in.dp.types[ti].count; ++c) {
            int b = largest(in.dp.types[ti], *it);
            const int cut = static_cast<int>(std::min<long long>(extra, b - 1));
            b -= cut;
            extra -= cut;
            shares[--i] = {b, 1};
        }
    return shares;
}

}  // namespace detail

[[nodiscard]] inline fsdp_baseline cephalo_baseline(const problem& pb, fsdp_balance kind, const cephalo_options& opt = {}) {
    std::vector<std::string> notes;
    cephalo_options wide = opt;
    wide.compute_memory = opt.compute_memory ? *opt.compute_memory : compute_memory_fit::analytical(pb);
    const compute_memory_fit f = *wide.compute_memory;
    // Compute-only balancing ignores memory: every microbatch size up to the batch is allowed.
    cephalo_options times = wide;
    times.usable_fraction = 1e9;
    times.max_microbatch = pb.job.global_batch;
    const cephalo_inputs in = make_cephalo_inputs(pb, kind == fsdp_balance::compute_only ? times : wide, notes);
    const int N = static_cast<int>(in.workers.size()), B = pb.job.global_batch;
    if (in.granularity != 1)  // the baselines read T(m, l) per sample
        throw input_error("cephalo baseline: global batch " + std::to_string(B) + " is above " + std::to_string(search::max_dp_batch));
    if (N == 0 || N > B) throw input_error("cephalo baseline: need between 1 and " + std::to_string(B) + " GPUs, got " + std::to_string(N));
    std::vector<search::gpu_share> shares(static_cast<std::size_t>(N));
    if (kind == fsdp_balance::compute_only) shares = detail::compute_only_shares(in, B);
    else
        for (int i = 0; i < N; ++i) {
            const int b = B / N + (i < B % N ? 1 : 0);
            shares[static_cast<std::size_t>(i)] = kind == fsdp_balance::even ? search::gpu_share{b, 1} : search::gpu_share{1, b};
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
    const cephalo_simulator sim{cephalo_memory_model{f}, opt.time, {}};
    out.est = sim.run(pb, out.pl);
    out.fits = validate(pb, out.pl, sim.memory).ok();
    return out;
}

}  // namespace hetplan
