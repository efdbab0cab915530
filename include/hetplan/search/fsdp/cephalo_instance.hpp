#pragma once
// Cephalo's search instance (Cephalo §2.3-§2.4): from a problem, the GPUs that take part and the
// batch DP's view of each GPU type — the largest microbatch size whose compute memory fits (II),
// Algorithm 1's T(m, l) (Eqs. 2-3 for one GPU over a ring of all of them, with the uneven
// collectives where an even state share does not fit), and the bound K of (III); and the plan of
// an assignment. What the Cephalo planner and its §4.4 baselines solve.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/cost/memory/cephalo.hpp"
#include "hetplan/cost/time/cephalo.hpp"
#include "hetplan/plan/problem.hpp"
#include "hetplan/search/fsdp/batch_dp.hpp"

namespace hetplan {

struct cephalo_options {
    double usable_fraction = 0.8;                    ///< §3.2: memory use capped at 80%
    std::optional<compute_memory_fit> compute_memory{}; ///< profiled M_compute; empty: analytical
    int max_microbatch = 64;                         ///< largest microbatch size considered
    bool straightforward = false;                    ///< Eq. 4 literally (tests, benchmark reference)
    cephalo_time_model time{};                       ///< Eqs. 2-3; its uneven overhead also prices the DP
    /// Beyond the paper: when all units are alike, also minimise Eqs. 2-3 exactly
    /// (search::separate_maxima_batch_search) and keep whichever plan is faster.
    bool separate_maxima = true;
};

/// GPUs of the pool in worker order (type, then zone), and the DP's view of each type.
struct cephalo_inputs {
    std::vector<std::pair<gpu_type_id, zone_id>> workers;
    search::batch_problem dp;
    std::vector<gpu_type_id> types;  ///< of dp.types
    compute_memory_fit memory;
    std::optional<search::identical_units> units;  ///< when every unit is alike
    /// Samples per unit of dp.batch: 1 up to search::max_dp_batch samples, beyond that a divisor
    /// of the batch (dp_granularity), so microbatch counts come in multiples of it; 0: none fits.
    int granularity = 1;
};

/// The most samples per unit of the batch DP: microbatch counts in multiples of at most 1,024.
inline constexpr int max_granularity = 1024;

/// Samples per unit of the batch DP for a global batch on `gpus` GPUs. Up to
/// search::max_dp_batch samples, 1 (the exact Eq. 4). Beyond, the smallest divisor leaving at
/// most 64 units per GPU (at least 4,096, at most max_dp_batch units): the DP's passes grow with
/// the square of its batch (10^6 samples as 62,500 units took 2.7 s on 128 GPUs), and a unit is
/// then about 1/64 of a GPU's share. 0 when no divisor up to max_granularity leaves at most
/// max_dp_batch units.
[[nodiscard]] inline int dp_granularity(int batch, long long gpus) {
    if (batch <= search::max_dp_batch) return 1;
    const long long cap = std::clamp<long long>(64 * gpus, 4096, search::max_dp_batch);
    for (const long long most : {cap, static_cast<long long>(search::max_dp_batch)})
        for (int g = 2; g <= max_granularity; ++g)
            if (batch % g == 0 && batch / g <= most) return g;
    return 0;
}

/// How Cephalo runs every plan (§2.2): ZeRO-3 (FSDP) state, activations checkpointed at layer
/// boundaries and offloaded to the host, memory use capped at `usable_fraction`.
[[nodiscard]] inline memory_options fsdp_memory_options(double usable_fraction) {
    memory_options m;
    m.zero_stage = 3;
    m.recompute = true;
    m.offload_activations = true;
    m.usable_fraction = usable_fraction;
    return m;
}

namespace detail {

/// (II): the GPU types that can hold one sample's compute memory, each with its largest
/// microbatch size, and their GPUs in worker order (type, then zone); the others noted.
inline std::vector<int> cephalo_types(const problem& pb, const cephalo_options& opt, cephalo_inputs& in, std::vector<std::string>& notes) {
    const int B = pb.job.global_batch;
    std::vector<int> largest;
    for (std::size_t g = 0; g < pb.hw.gpus.size(); ++g) {
        const gpu_type_id gid{g};
        const int count = pb.pool().total(gid);
        if (count == 0) continue;
        int m = 0;
        while (m < std::min(opt.max_microbatch, B) && in.memory.at(m + 1) <= pb.hw.gpu(gid).memory() * opt.usable_fraction) ++m;
        if (m == 0) {
            notes.push_back(std::to_string(count) + " x " + pb.hw.gpu(gid).type_name + " left out: one sample's compute memory does not fit in " +
                            std::to_string(opt.usable_fraction * 100) + "% of it");
            continue;
        }
        in.types.push_back(gid);
        largest.push_back(m);
        for (std::size_t z = 0; z < pb.hw.zones.size(); ++z)
            for (int k = 0; k < pb.pool().available(gid, zone_id{z}); ++k) in.workers.emplace_back(gid, zone_id{z});
    }
    return largest;
}

/// Every unit's collectives over the ring of all the GPUs, even and uneven (§2.3).
struct unit_rings {
    std::vector<cephalo_time_model::unit_collectives> even, uneven;
};
inline unit_rings cephalo_rings(const problem& pb, const cephalo_options& opt, const cephalo_inputs& in) {
    const std::size_t L = pb.model.layers.size();
    const int N = static_cast<int>(in.workers.size());
    unit_rings r{std::vector<cephalo_time_model::unit_collectives>(L), std::vector<cephalo_time_model::unit_collectives>(L)};
    for (std::size_t u = 0; u < L; ++u) {
        r.even[u] = cephalo_time_model::collectives(pb, u, N, [&](int k) {
            const auto& w = in.workers[static_cast<std::size_t>(k)];
            return endpoint{w.second, w.first, 1};
        });
        r.uneven[u] = r.even[u].scaled(1.0 + opt.time.uneven_overhead);
    }
    return r;
}

/// Algorithm 1's T(m, l) for GPU type t: Eqs. 2-3 over its layers, with the uneven collectives
/// where an even share of the state does not fit next to M(m); records the type's unit times in
/// `units` and whether every layer is alike.
inline search::fsdp_gpu_type cephalo_table(const problem& pb, const cephalo_options& opt, const cephalo_inputs& in, std::size_t t,
                                           int largest, const unit_rings& rings, search::identical_units& units, bool& alike) {
    const std::size_t L = pb.model.layers.size();
    const gpu_type_id gid = in.types[t];
    const bool recompute = fsdp_memory_options(opt.usable_fraction).recompute;
    const double share = cephalo_memory_model::state(pb).value / double(in.workers.size());
    auto even_fits = [&](int m) { return in.memory.at(m).value + share <= (pb.hw.gpu(gid).memory() * opt.usable_fraction).value; };
    worker_group probe{gid, zone_id{0}, 1, 1, 1, 1.0, -1};
    std::vector<layer_timing> per_layer(L);
    units.fwd.emplace_back(), units.bwd.emplace_back(), units.even_mbs.push_back(0);
    int row = 0;  // microbatch size whose layer times per_layer holds
    const int g = in.granularity;  // a unit of the DP's batch is g samples: l units are l g microbatches
    return search::fsdp_gpu_type::tabulate(pb.pool().total(gid), largest, pb.job.global_batch / g, [&](int m, int units_l) {
        const int l = units_l * g;
        if (row != m) {
            probe.microbatch_size = row = m;
            for (std::size_t u = 0; u < L; ++u) per_layer[u] = cephalo_time_model::layer_time(pb, probe, u);
            const seconds f = per_layer.front().fwd, b = per_layer.front().backward_pass(recompute);
            alike = alike && std::all_of(per_layer.begin(), per_layer.end(), [&](const layer_timing& x) { return x.fwd == f && x.backward_pass(recompute) == b; });
            units.fwd.back().push_back(f.value), units.bwd.back().push_back(b.value);
            if (even_fits(m)) units.even_mbs.back() = m;
        }
        seconds total{0};
        for (std::size_t u = 0; u < L; ++u) {
            const auto& c = even_fits(m) ? rings.even[u] : rings.uneven[u];
            total += cephalo_time_model::unit_time(per_layer[u].fwd * double(l), per_layer[u].backward_pass(recompute) * double(l), c.all_gather,
                                                   c.reduce_scatter);
        }
        return total.value;
    });
}

}  // namespace detail

/// Builds the DP instance from the problem: per GPU type the largest microbatch size whose
/// compute memory fits (II) and Algorithm 1's T(m, l) over a ring of all the GPUs, and the bound
/// K of (III). GPU types that cannot hold the compute memory of one sample are left out with a
/// note.
/// `granularity`: samples per unit of the DP's batch; 0: dp_granularity for the pool.
[[nodiscard]] inline cephalo_inputs make_cephalo_inputs(const problem& pb, const cephalo_options& opt, std::vector<std::string>& notes,
                                                        int granularity = 0) {
    pb.model.check();
    pb.job.check();
    if (!(opt.usable_fraction > 0) || opt.max_microbatch < 1) throw input_error("cephalo options: usable_fraction must be > 0 and max_microbatch >= 1");
    cephalo_inputs in;
    in.memory = opt.compute_memory ? *opt.compute_memory : compute_memory_fit::analytical(pb);
    in.granularity = granularity > 0 ? granularity : dp_granularity(pb.job.global_batch, pb.pool().total());
    if (in.granularity == 0) return in;  // the planner says why
    in.dp.batch = pb.job.global_batch / in.granularity;
    const std::vector<int> largest = detail::cephalo_types(pb, opt, in, notes);
    const auto rings = detail::cephalo_rings(pb, opt, in);
    const std::size_t L = pb.model.layers.size();
    search::identical_units units;
    units.count = static_cast<int>(L);
    if (L > 0) units.all_gather = rings.even.front().all_gather.value, units.reduce_scatter = rings.even.front().reduce_scatter.value;
    units.uneven_factor = 1.0 + opt.time.uneven_overhead;
    bool alike = std::all_of(rings.even.begin(), rings.even.end(), [&](const auto& c) {
        return c.all_gather == rings.even.front().all_gather && c.reduce_scatter == rings.even.front().reduce_scatter;
    });
    double usable_sum = 0;
    for (std::size_t t = 0; t < in.types.size(); ++t) {
        usable_sum += (pb.hw.gpu(in.types[t]).memory() * opt.usable_fraction).value * pb.pool().total(in.types[t]);
        in.dp.types.push_back(detail::cephalo_table(pb, opt, in, t, largest[t], rings, units, alike));
    }
    if (alike && L > 0 && in.granularity == 1) in.units = std::move(units);  // Eqs. 2-3's search counts samples
    // (III): state + N x intercept + per_sample x sum(m) <= aggregate usable memory.
    const double room = usable_sum - cephalo_memory_model::state(pb).value - double(in.workers.size()) * in.memory.intercept.value;
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
    pl.memory = fsdp_memory_options(usable_fraction);
    stage st;
    st.layers.push_back({0, pb.model.num_layers()});
    for (std::size_t i = 0; i < workers.size(); ++i)
        st.workers.push_back({workers[i].first, workers[i].second, 1, shares[i].mbs, shares[i].microbatches, state[i], -1});
    pipeline pipe;
    pipe.stages.push_back(std::move(st));
    pl.pipelines.push_back(std::move(pipe));
    return pl;
}

}  // namespace hetplan
