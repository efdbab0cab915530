#pragma once
// Cephalo's optimizer (Cephalo §2.4, §3.2) as a composition of hetplan pieces:
//   latency   profile_table (measured microbatch sizes, linear beyond; §2.3)
//   memory    cephalo_memory_model (M_state + M_compute(m), 80% usable; §2.3, §3.2)
//   compute   search::fast_batch_dp / straightforward_batch_dp (Eq. 4, constraints I-III)
//   state     even when it fits, else search::water_fill (greedy partition; §2.4), and
//             unit_shards (§3.3)
//   time      cephalo_time_model (FSDP layered gradient accumulation, Eqs. 2-3)
//   check     validate(), in search::search_run, which also ranks by the request's objective
// The plan: one stage holding every layer, one worker per GPU with its own microbatch size,
// microbatch count and share of the (ZeRO-3) state.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/cost/memory/cephalo.hpp"
#include "hetplan/cost/money/sailor.hpp"
#include "hetplan/cost/simulator.hpp"
#include "hetplan/cost/time/cephalo.hpp"
#include "hetplan/concepts/planner.hpp"
#include "hetplan/cost/fsdp_units.hpp"
#include "hetplan/plan/validator.hpp"
#include "hetplan/search/run.hpp"
#include "hetplan/search/fsdp/batch_dp.hpp"
#include "hetplan/search/fsdp/state_partition.hpp"

namespace hetplan {

using cephalo_simulator = simulator<cephalo_memory_model, cephalo_time_model, sailor_money_model>;

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
};

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

/// Builds the DP instance from the problem: per GPU type the largest microbatch size whose
/// compute memory fits (II) and Algorithm 1's T(m, l) over a ring of all the GPUs, and the bound
/// K of (III). GPU types that cannot hold the compute memory of one sample are left out with a
/// note.
[[nodiscard]] inline cephalo_inputs make_cephalo_inputs(const problem& pb, const cephalo_options& opt, std::vector<std::string>& notes) {
    pb.model.check();
    pb.job.check();
    if (!(opt.usable_fraction > 0) || opt.max_microbatch < 1)
        throw input_error("cephalo options: usable_fraction must be > 0 and max_microbatch >= 1");
    cephalo_inputs in;
    in.memory = opt.compute_memory ? *opt.compute_memory : compute_memory_fit::analytical(pb);
    in.dp.batch = pb.job.global_batch;
    const int B = pb.job.global_batch;
    const memory_options how = fsdp_memory_options(opt.usable_fraction);
    auto usable = [&](gpu_type_id g) { return pb.hw.gpu(g).memory() * opt.usable_fraction; };
    std::vector<int> largest;  // largest microbatch size per kept type (II)
    for (std::size_t g = 0; g < pb.hw.gpus.size(); ++g) {
        const gpu_type_id gid{g};
        const int count = pb.pool().total(gid);
        if (count == 0) continue;
        int m = 0;
        while (m < std::min(opt.max_microbatch, B) && in.memory.at(m + 1) <= usable(gid)) ++m;
        if (m == 0) {
            notes.push_back(std::to_string(count) + " x " + pb.hw.gpu(gid).type_name +
                            " left out: one sample's compute memory does not fit in " + std::to_string(opt.usable_fraction * 100) +
                            "% of it");
            continue;
        }
        in.types.push_back(gid);
        largest.push_back(m);
        for (std::size_t z = 0; z < pb.hw.zones.size(); ++z)
            for (int k = 0; k < pb.pool().available(gid, zone_id{z}); ++k) in.workers.emplace_back(gid, zone_id{z});
    }
    const int N = static_cast<int>(in.workers.size());
    const std::size_t L = pb.model.layers.size();
    const double state = cephalo_memory_model::state(pb).value;
    // Collectives of every unit over the ring of all GPUs, even and uneven (§2.3).
    std::vector<cephalo_time_model::unit_collectives> even(L), uneven(L);
    for (std::size_t u = 0; u < L; ++u) {
        even[u] = cephalo_time_model::collectives(pb, u, N, [&](int k) {
            const auto& w = in.workers[static_cast<std::size_t>(k)];
            return endpoint{w.second, w.first, 1};
        });
        uneven[u] = even[u].scaled(1.0 + opt.time.uneven_overhead);
    }
    double usable_sum = 0;
    std::vector<layer_timing> per_layer(L);
    search::identical_units units;
    units.count = static_cast<int>(L);
    units.all_gather = even.front().all_gather.value;
    units.reduce_scatter = even.front().reduce_scatter.value;
    units.uneven_factor = 1.0 + opt.time.uneven_overhead;
    bool alike = std::all_of(even.begin(), even.end(), [&](const auto& c) {
        return c.all_gather == even.front().all_gather && c.reduce_scatter == even.front().reduce_scatter;
    });
    for (std::size_t t = 0; t < in.types.size(); ++t) {
        const gpu_type_id gid = in.types[t];
        const int count = pb.pool().total(gid);
        usable_sum += usable(gid).value * count;
        worker_group probe{gid, zone_id{0}, 1, 1, 1, 1.0, -1};
        // Algorithm 1: the uneven collectives when an even share of the state does not fit next
        // to this GPU's compute memory.
        auto even_fits = [&](int m) { return in.memory.at(m).value + state / N <= usable(gid).value; };
        units.fwd.emplace_back();
        units.bwd.emplace_back();
        units.even_mbs.push_back(0);
        int row = 0;  // microbatch size whose layer times per_layer holds
        in.dp.types.push_back(search::fsdp_gpu_type::tabulate(count, largest[t], B, [&](int m, int l) {
            if (row != m) {
                probe.microbatch_size = row = m;
                for (std::size_t u = 0; u < L; ++u) per_layer[u] = cephalo_time_model::layer_time(pb, probe, u);
                const seconds f = per_layer.front().fwd, b = per_layer.front().backward_pass(how.recompute);
                alike = alike && std::all_of(per_layer.begin(), per_layer.end(), [&](const layer_timing& x) {
                    return x.fwd == f && x.backward_pass(how.recompute) == b;
                });
                units.fwd.back().push_back(f.value);
                units.bwd.back().push_back(b.value);
                if (even_fits(m)) units.even_mbs.back() = m;
            }
            seconds total{0};
            for (std::size_t u = 0; u < L; ++u) {
                const auto& c = even_fits(m) ? even[u] : uneven[u];
                total += cephalo_time_model::unit_time(per_layer[u].fwd * double(l), per_layer[u].backward_pass(how.recompute) * double(l),
                                                       c.all_gather, c.reduce_scatter);
            }
            return total.value;
        }));
    }
    if (alike && L > 0) in.units = std::move(units);
    // (III): state + N x intercept + per_sample x sum(m) <= aggregate usable memory.
    const double room = usable_sum - state - N * in.memory.intercept.value;
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

template <class Solver = search::eq4_batch_dp>
class cephalo_planner {
public:
    explicit cephalo_planner(cephalo_options opt = {}) : opt_(std::move(opt)) { solver_.straightforward = opt_.straightforward; }

    [[nodiscard]] static constexpr std::string_view name() { return "cephalo"; }
    [[nodiscard]] const cephalo_options& options() const { return opt_; }

    /// One candidate, the pool: Eq. 4's assignment (and, with alike units, the exact Eqs. 2-3
    /// optimum), each with its state split, priced and offered; the objective ranks them.
    template <concepts::objective O, class... Hooks>
    [[nodiscard]] plan_result plan(const problem& pb, const plan_request<O, Hooks...>& rq) {
        search::search_run run(pb, rq, 2);
        std::vector<std::string> notes;
        const cephalo_inputs in = make_cephalo_inputs(pb, opt_, notes);
        for (auto& n : notes) run.note(std::move(n));
        const int N = in.dp.gpus();
        if (N == 0) run.note("no GPU in the pool can take part");
        else if (N > pb.job.global_batch)
            run.note("global batch " + std::to_string(pb.job.global_batch) + " < " + std::to_string(N) + " GPUs: every GPU needs at least one sample");
        if (N == 0) return run.finish(std::string(name()));
        run.candidate(in.dp);
        const auto a = solver_.solve(pb, in.dp, run.objective(), {std::numeric_limits<double>::infinity(), &run.stop()});
        const auto first = a ? offer(run, in, a->assignment, seconds{a->terms.iteration}, "Eq. 4's assignment") : std::nullopt;
        run.solved(in.dp, a);
        if (!a) {
            if (run.stopping()) return run.finish(std::string(name()));
            run.note("no assignment meets the memory constraints (Cephalo §2.4, I-III)");
            return run.finish(std::string(name()));
        }
        if (opt_.separate_maxima && in.units) {
            const double eq4 = search::separate_maxima_time(in.dp, *in.units, a->assignment);
            if (const auto b = search::separate_maxima_batch_search(in.dp, *in.units, eq4, &run.stop())) {
                const auto second = offer(run, in, *b, seconds{b->makespan}, "Eqs. 2-3's assignment");
                const double before = first.value_or(0), after = second.value_or(0);
                if (first && second && after < before)
                    run.note("Eqs. 2-3 minimised exactly: " + std::to_string(100.0 * (before / after - 1.0)) + "% faster than Eq. 4's assignment");
            }
        }
        if (run.stop().requested()) run.halt();
        return run.finish(std::string(name()));
    }
    [[nodiscard]] plan_result plan(const problem& pb) { return plan(pb, plan_request<>{}); }

private:
    /// The plan of a batch assignment with its state split (§2.4: water-filling, to minimise
    /// the highest memory utilisation; its uneven units cost 15 % more communication, §2.3, which
    /// shows only where communication is exposed, so the even split, where it fits, is kept when
    /// it is faster), priced and offered.
    template <class Run>
    std::optional<double> offer(Run& run, const cephalo_inputs& in, const search::batch_assignment& a, seconds predicted,
                                const std::string& what) const {
        const problem& pb = run.pb();
        std::vector<double> used, cap;
        for (std::size_t i = 0; i < in.workers.size(); ++i) {
            used.push_back(in.memory.at(a.gpus[i].mbs).value);
            cap.push_back(pb.hw.gpu(in.workers[i].first).memory().value * opt_.usable_fraction);
        }
        const double state = cephalo_memory_model::state(pb).value;
        const double even = state / double(used.size());
        bool even_fits = true;
        for (std::size_t i = 0; i < used.size(); ++i) even_fits = even_fits && used[i] + even <= cap[i];
        const cephalo_simulator sim{cephalo_memory_model{in.memory}, opt_.time, {}};
        hetplan::plan pl = make_fsdp_plan(pb, in.workers, a.gpus, search::water_fill(used, cap, state).shares, opt_.usable_fraction);
        estimate est = sim.run(pb, pl);
        if (even_fits) {
            hetplan::plan flat = make_fsdp_plan(pb, in.workers, a.gpus, std::vector<double>(used.size(), 1.0 / double(used.size())), opt_.usable_fraction);
            estimate e = sim.run(pb, flat);
            if (e.time.iteration < est.time.iteration) pl = std::move(flat), est = std::move(e);
        }
        return run.offer(std::move(pl), est, predicted, sim.memory, what);
    }

    cephalo_options opt_;
    Solver solver_;
};

/// FSDP units of a one-stage plan sharded unevenly (§3.3).
[[nodiscard]] inline int cephalo_uneven_units(const problem& pb, const plan& pl) {
    std::vector<double> shares;
    for (const auto& w : pl.pipelines.at(0).stages.at(0).workers) shares.push_back(w.state_share);
    return unit_shards(shares, pb.model.num_layers()).uneven;
}

/// The highest memory use over usable memory of a priced plan.
[[nodiscard]] inline double peak_utilisation(const estimate& e) {
    double u = 0;
    for (const auto& w : e.memory.workers) u = std::max(u, w.total / w.capacity);
    return u;
}

static_assert(concepts::check_planner<cephalo_planner<>>());

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
    const cephalo_simulator sim{cephalo_memory_model{f}, opt.time, {}};
    out.est = sim.run(pb, out.pl);
    out.fits = validate(pb, out.pl, sim.memory).ok();
    return out;
}

}  // namespace hetplan
