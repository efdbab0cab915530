#pragma once
// Sailor's planner (Sailor §4.2): joint resource allocation and heterogeneous 3D parallelism.
// A thin composition of hetplan pieces:
//   enumeration  search/space.hpp          pipeline degrees, Sailor's layer partition, mbs, D
//   pruning      search/prune/h1..h6       each switchable (Table 3 ablation)
//   solver       search/solve/stage_dp.hpp Eq. 1 / Listing 1 with exact Pareto values
//   pricing      simulator<>               Sailor's memory, time and money models (§4.3)
//   check        validate()                every returned plan is valid, never out of memory
// For each (P, mbs) the data-parallel degrees are scanned in H3/H4 order; for each D the stage
// DP picks every stage's replicas (GPU type, TP, zone) from the pool; the plan it returns is
// re-priced by the simulator, validated, and ranked by the objective under the constraint.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "hetplan/cost/simulator.hpp"
#include "hetplan/plan/validator.hpp"
#include "hetplan/planners/progress.hpp"
#include "hetplan/search/build_plan.hpp"
#include "hetplan/search/cells.hpp"
#include "hetplan/search/prune/h1_tp_within_node.hpp"
#include "hetplan/search/prune/h2_min_tp.hpp"
#include "hetplan/search/prune/h3_decreasing_dp.hpp"
#include "hetplan/search/prune/h4_increasing_dp.hpp"
#include "hetplan/search/prune/h5_stage_in_one_region.hpp"
#include "hetplan/search/prune/h6_merge_zones.hpp"
#include "hetplan/search/solve/exhaustive.hpp"
#include "hetplan/search/solve/stage_dp.hpp"
#include "hetplan/search/space.hpp"
#include "hetplan/search/stage_problem.hpp"

namespace hetplan {

using search::objective;

/// Which of Sailor's heuristics (§4.2.1) are on; all off, the search is exact over its plan
/// space. H1 (TP within a node) is part of the plan model and always holds. Degrees below
/// H2's minimum never fit, so skipping them is always safe; `pin_tp` is H2 as the paper
/// applies it (tp_ij precomputed, §4.2.2): one degree per (stage, type), the minimum raised to
/// a per-type level, with every level tried. H3/H4, H5, H6 and inexact boundaries shrink the
/// search and may miss the optimum.
struct sailor_heuristics {
    bool pin_tp = true;               ///< H2: one TP per (stage, type); levels enumerated
    bool dp_order = true;             ///< H3 (throughput) / H4 (cost): scan D, stop early
    bool stage_in_one_region = true;  ///< H5
    bool merge_zones = true;          ///< H6
    bool exact_boundaries = false;    ///< off: a boundary is bounded by its slowest cell pair

    [[nodiscard]] static sailor_heuristics none() { return {false, false, false, false, true}; }
};

struct sailor_options {
    objective target = objective::throughput;
    std::optional<usd> max_cost;             ///< per iteration
    std::optional<double> min_throughput;    ///< iterations per second
    sailor_heuristics heuristics{};
    int max_pipeline_degree = 0;             ///< 0: up to the number of layers
    std::vector<int> microbatch_sizes;       ///< empty: powers of two the profiles cover
    std::size_t keep = 16;                   ///< length of the ranked list
    /// The ranked list holds plans within this fraction of the best (one per instance); the
    /// search is bounded by it, so a wider band costs search time.
    double rank_within = 0.05;
    const std::atomic<bool>* stop = nullptr; ///< set to stop early and keep the best so far
    progress_callback progress;              ///< optional: told after every instance solved
    bool exhaustive = false;                 ///< replace the stage DP by exhaustive search (tests)
    /// Off: the straightforward search — every instance solved in full, no floors — which
    /// returns the same plans (tests and the benchmark's reference).
    bool branch_and_bound = true;
};

/// One planned configuration, simulated and validated.
struct planned {
    plan pl;
    estimate est;
    int P = 0, mbs = 0, D = 0;
    seconds predicted{};  ///< the DP's own iteration time (equal to est's with exact pricing)

    [[nodiscard]] seconds iteration() const { return est.time.iteration; }
    [[nodiscard]] double throughput() const { return est.time.throughput(); }
    [[nodiscard]] usd cost() const { return est.money.total; }
    [[nodiscard]] int gpus() const {
        int n = 0;
        pl.for_each_worker([&](std::size_t, std::size_t, std::size_t, const worker_group& w) { n += w.tp; });
        return n;
    }
};

struct planner_stats {
    std::size_t instances = 0;      ///< (P, mbs, D) solved by the stage DP
    std::size_t dp_states = 0;
    std::size_t compositions = 0;
    std::size_t invalid = 0;        ///< DP plans the validator rejected (a bug if ever > 0)
    bool stopped = false;           ///< the stop flag ended the search early
    seconds elapsed{};
};

struct planner_result {
    std::vector<planned> ranked;    ///< best first
    planner_stats stats;
    int ignored_gpus = 0;           ///< GPUs of partial nodes the search left out
    std::vector<std::string> notes;

    [[nodiscard]] const planned* best() const { return ranked.empty() ? nullptr : &ranked.front(); }
};

template <class Simulator = simulator<>>
class sailor_planner {
public:
    explicit sailor_planner(sailor_options opt = {}, Simulator sim = {})
        : opt_(std::move(opt)), sim_(std::move(sim)), h2_(sim_.memory) {}

    [[nodiscard]] const sailor_options& options() const { return opt_; }
    sailor_options& options() { return opt_; }

    /// Plans on the cluster's own pool.
    [[nodiscard]] planner_result plan(const problem& pb) { return run(pb); }

    /// Re-plans on another availability (same GPU types and zones); keeps H2's memory answers.
    [[nodiscard]] planner_result plan(const problem& pb, const resource_pool& pool) {
        cluster hw = pb.hw;
        if (pool.gpu_types() != hw.gpus.size() || pool.zones() != hw.zones.size())
            throw input_error("sailor planner: the pool has " + std::to_string(pool.gpu_types()) + " GPU types x " +
                              std::to_string(pool.zones()) + " zones, the cluster " + std::to_string(hw.gpus.size()) + " x " +
                              std::to_string(hw.zones.size()));
        hw.pool = pool;
        return run(problem{hw, pb.model, pb.job, pb.profiles});
    }

private:
    planner_result run(const problem& pb) {
        const auto t0 = std::chrono::steady_clock::now();
        pb.model.check();
        pb.job.check();
        double memories = 0;  // a fingerprint of the GPU types' memory (re-planning copies the cluster)
        for (std::size_t g = 0; g < pb.hw.gpus.size(); ++g) memories += double(g + 1) * pb.hw.gpus[g].memory_capacity.value;
        const auto job_key = std::tuple(&pb.model, pb.model.num_layers(), pb.job.global_batch, pb.job.prec, pb.job.optimizer, memories);
        if (job_key != last_job_) {
            h2_.clear();  // H2's answers depend on the model, the job and GPU memory only
            last_job_ = job_key;
        }
        planner_result out;
        const bool money = opt_.target == objective::cost || opt_.max_cost.has_value();
        const search::dp_goal goal{opt_.target, opt_.max_cost ? std::optional<double>(opt_.max_cost->value) : std::nullopt,
                                   opt_.min_throughput};

        const search::h1_tp_within_node h1{};
        search::cell_set cells = search::make_cells(pb.hw, pb.hw.pool, [&](gpu_type_id g) { return !h1(pb, g).empty(); });
        if (opt_.heuristics.merge_zones) cells = search::h6_merge_zones{}(cells);
        out.ignored_gpus = cells.ignored_gpus;
        if (cells.ignored_gpus > 0)
            out.notes.push_back(std::to_string(cells.ignored_gpus) + " GPUs of partial nodes were left out");
        std::vector<std::vector<int>> tp_candidates;
        std::vector<std::string> type_names;
        for (gpu_type_id g : cells.types) {
            tp_candidates.push_back(h1(pb, g));
            type_names.push_back(pb.hw.gpu(g).type_name);
        }
        const auto groups = opt_.heuristics.stage_in_one_region ? search::h5_stage_in_one_region{}.groups(cells.cells)
                                                                : search::all_cells_group(cells.cells);
        int total = 0;
        for (const auto& c : cells.cells) total += c.capacity;
        const int L = pb.model.num_layers();
        const auto mbs_list = opt_.microbatch_sizes.empty()
                                  ? search::microbatch_sizes(pb.profiles, type_names, pb.job.global_batch)
                                  : opt_.microbatch_sizes;
        const int maxP = opt_.max_pipeline_degree > 0 ? std::min(opt_.max_pipeline_degree, L) : L;
        search::stage_problem_options spo{std::nullopt, opt_.heuristics.exact_boundaries, money, {}, schedule_kind::one_f_one_b};
        // TP levels (H2 pinned): one level for every type; each (stage, type) takes the smallest
        // degree that fits at or above it. Levels are the degrees any type offers.
        std::vector<std::optional<std::array<int, search::max_types>>> levels;
        if (!opt_.heuristics.pin_tp) {
            levels.emplace_back();
        } else {
            std::vector<int> all;
            for (const auto& c : tp_candidates) all.insert(all.end(), c.begin(), c.end());
            std::sort(all.begin(), all.end());
            all.erase(std::unique(all.begin(), all.end()), all.end());
            for (int l : all) {
                std::array<int, search::max_types> lv{};
                lv.fill(l);
                levels.emplace_back(lv);
            }
        }
        std::vector<planned> found;
        std::vector<double> ranked;  // objectives (seconds or USD) of the best `keep` plans so far
        dp_.reset_stats();
        for (int P : search::pipeline_degrees(maxP, total)) {
            const auto part = search::even_partition(L, P);
            for (int mbs : mbs_list) {
                if (stopped(out)) break;
                if (pb.job.global_batch % mbs != 0) continue;
                const auto times = search::time_stages(pb, cells, part, mbs, tp_candidates, sim_.time);
                const int M = pb.job.global_batch / mbs;
                std::vector<int> degrees;
                for (int d : search::data_parallel_degrees(M, total / P)) degrees.push_back(d);
                std::map<std::vector<std::uint16_t>, std::optional<double>> seen;
                for (const auto& level : levels) {
                spo.tp_level = level;
                auto solve = [&](int D) -> std::optional<double> {
                    if (stopped(out)) return std::nullopt;
                    const auto sp = search::make_stage_problem(pb, cells, part, mbs, D, times, h2_, groups, spo, sim_.time.bucket);
                    // Levels that resolve to the same degrees everywhere give the same instance.
                    std::vector<std::uint16_t> sig{static_cast<std::uint16_t>(D)};  // 16-bit: GCC 12 -O3 warns on byte keys
                    for (const auto& st : sp.stages)
                        for (const auto& c : st.choices) sig.insert(sig.end(), c.tp.begin(), c.tp.end());
                    if (auto it = seen.find(sig); it != seen.end()) return it->second;
                    auto& memo = seen[sig];
                    // Floors of every plan of the instance (prune/instance_bound.hpp).
                    const double lb = sp.lower_bound_iteration();
                    const double lb_cost = sp.lower_bound_cost();
                    constexpr double over = 1 + search::bound_slack;
                    const bool bnb = opt_.branch_and_bound && !opt_.exhaustive;
                    if (bnb && (!std::isfinite(lb) || (opt_.min_throughput && lb * *opt_.min_throughput > over) ||
                                (opt_.max_cost && lb_cost > opt_.max_cost->value * over)))
                        return memo;
                    search::dp_goal g = goal;
                    g.floors = bnb;
                    // Branch and bound (exact): an instance that cannot enter the ranked list
                    // (within rank_within of the best so far, and better than the keep-th) is
                    // skipped, or searched with that bound. Both read as "no plan" to the H3/H4
                    // scan, which then goes on.
                    std::optional<double> cut;
                    if (!ranked.empty()) cut = ranked.front() * (1 + opt_.rank_within);
                    if (ranked.size() >= opt_.keep) cut = std::min(*cut, ranked.back());
                    if (cut && bnb) {
                        const double floor = opt_.target == objective::throughput ? lb : lb_cost;
                        if (floor > *cut * over) return memo;
                        g.bound = *cut;
                    }
                    ++out.stats.instances;
                    if (opt_.progress)
                        opt_.progress({out.stats.instances, ranked.empty() ? std::numeric_limits<double>::infinity() : ranked.front(),
                                       opt_.target == objective::throughput ? "s/iteration" : "USD/iteration"});
                    const auto sol = opt_.exhaustive ? search::exhaustive_solve(sp, g, sim_) : dp_.solve(sp, g);
                    if (!sol) return memo;  // nothing fits, or nothing can enter the list
                    // The same rule after the fact, so the straightforward search (no bounds)
                    // returns the same plans.
                    const double reached = opt_.target == objective::throughput ? sol->iteration.value : sol->cost.value;
                    if (cut && reached > *cut) return memo;
                    planned c;
                    c.pl = search::build_plan(sp, sol->stages);
                    c.est = sim_.run(pb, c.pl);
                    c.P = P;
                    c.mbs = mbs;
                    c.D = D;
                    c.predicted = sol->iteration;
                    const auto report = validate(pb, c.pl, sim_.memory);
                    if (!report.ok()) {
                        ++out.stats.invalid;
                        out.notes.push_back("rejected P=" + std::to_string(P) + " mbs=" + std::to_string(mbs) + " D=" +
                                            std::to_string(D) + ": " + report.summary());
                        return std::nullopt;
                    }
                    if (!meets(c)) return std::nullopt;
                    const double metric = opt_.target == objective::throughput ? c.throughput() : c.cost().value;
                    const double objective_value = objective_of(c);
                    ranked.insert(std::upper_bound(ranked.begin(), ranked.end(), objective_value), objective_value);
                    if (ranked.size() > opt_.keep) ranked.pop_back();
                    found.push_back(std::move(c));
                    memo = metric;
                    return metric;
                };
                if (!opt_.heuristics.dp_order) search::all_dp_degrees{}.scan(degrees, solve);
                else if (opt_.target == objective::throughput) search::h3_decreasing_dp{}.scan(degrees, solve);
                else search::h4_increasing_dp{}.scan(degrees, solve);
                }
            }
        }
        std::stable_sort(found.begin(), found.end(), [&](const planned& a, const planned& b) { return better(a, b); });
        if (!found.empty()) {  // plans found before the best may lie outside its band
            const double limit = objective_of(found.front()) * (1 + opt_.rank_within);
            std::erase_if(found, [&](const planned& c) { return objective_of(c) > limit; });
        }
        if (found.size() > opt_.keep) found.resize(opt_.keep);
        out.ranked = std::move(found);
        out.stats.dp_states = dp_.stats().states;
        out.stats.compositions = dp_.stats().compositions;
        out.stats.elapsed = seconds{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
        return out;
    }

    [[nodiscard]] bool stopped(planner_result& out) const {
        if (opt_.stop && opt_.stop->load(std::memory_order_relaxed)) out.stats.stopped = true;
        return out.stats.stopped;
    }
    /// What the target minimises: seconds per iteration or USD per iteration.
    [[nodiscard]] double objective_of(const planned& c) const {
        return opt_.target == objective::throughput ? c.iteration().value : c.cost().value;
    }
    [[nodiscard]] bool meets(const planned& c) const {
        if (opt_.max_cost && c.cost() > *opt_.max_cost) return false;
        if (opt_.min_throughput && c.throughput() < *opt_.min_throughput) return false;
        return true;
    }
    [[nodiscard]] bool better(const planned& a, const planned& b) const {
        if (opt_.target == objective::throughput)
            return a.iteration() < b.iteration() || (a.iteration() == b.iteration() && a.cost() < b.cost());
        return a.cost() < b.cost() || (a.cost() == b.cost() && a.iteration() < b.iteration());
    }

    sailor_options opt_;
    Simulator sim_;
    search::h2_min_tp<decltype(Simulator{}.memory)> h2_;
    search::stage_dp dp_;
    std::tuple<const model_spec*, int, int, precision, optimizer_kind, double> last_job_{};
};

}  // namespace hetplan
