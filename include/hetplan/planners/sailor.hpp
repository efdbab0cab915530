#pragma once
// Sailor's planner (Sailor §4.2): joint resource allocation and heterogeneous 3D parallelism, as
// a composition of search pieces, each a template parameter with the paper's choice as default:
//   domain    cells of GPUs per (GPU type, zone); H1 TP within a node; Zones: H6 merges
//             a region's zones (search::h6_merge_zones) or keeps them (search::keep_zones)
//   space     search::sailor_space: pipeline degree x microbatch size (Sailor's even partition)
//   typing    Typing: Sailor's TP levels (search::pinned_tp) or every degree (search::free_tp)
//   pruners   Pruners: a Hana tuple; the paper's H2 (memory fit) and H5 (one region per stage)
//   strategy  Scan: every (P, mbs, D) cheapest floor first (search::best_first: exact branch and
//             bound), or per (P, mbs) the data-parallel degrees by H3 / H4 (sailor_dp_order), or all
//   bound     Bound: the instance's floors (exact branch and bound), or search::no_bound
//   solver    Solver: the stage patterns' branch and bound (search::pattern_search, the DP's
//             values without its per-GPU states), the stage DP (Eq. 1), or exhaustive search
//   pricing   Simulator: Sailor's memory, time and money models (§4.3) by default
// Every plan is built, priced by the simulator and validated (search::search_run); the objective
// (max_throughput, min_cost, a user's) comes with the request and enters the DP and the bound.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "hetplan/concepts/planner.hpp"
#include "hetplan/cost/simulator.hpp"
#include "hetplan/planners/instances.hpp"
#include "hetplan/search/bound/instance_floors.hpp"
#include "hetplan/search/bounded_solve.hpp"
#include "hetplan/search/build_plan.hpp"
#include "hetplan/search/prune/all.hpp"
#include "hetplan/search/prune/h1_tp_within_node.hpp"
#include "hetplan/search/prune/h2_memory_fit.hpp"
#include "hetplan/search/prune/h5_one_region.hpp"
#include "hetplan/search/prune/h6_merge_zones.hpp"
#include "hetplan/search/run.hpp"
#include "hetplan/search/solve/exhaustive.hpp"
#include "hetplan/search/solve/pattern_search.hpp"
#include "hetplan/search/solve/stage_dp.hpp"
#include "hetplan/search/space.hpp"
#include "hetplan/search/strategy.hpp"
#include "hetplan/search/why_no_plan.hpp"
#include "hetplan/search/zone_layout.hpp"

namespace hetplan {

/// How Sailor's search looks at a problem (not what it wants: that is the request).
struct sailor_options {
    search::sailor_space space{};    ///< pipeline degrees and microbatch sizes
    bool exact_boundaries = false;   ///< off: a pipeline boundary is bounded by its slowest cell pair in the DP
    /// Ranked-list length that bounds the search (at least the request's top): the search proves
    /// the plans it could return, those in the list and those within search::tie_tolerance of
    /// the best. A longer list widens the band it proves (within plan_request::rank_within) at a
    /// cost in time (16, the default until 2026-11-27: 18 of 100 random pools stopped at 10 s
    /// instead of 15); the plans returned stay the same but where a solver's answer depends on
    /// the cut-off it is given (the pattern search's best by its own price among the solutions
    /// under it) and under H3's scan, which reads a bounded-out degree as "no plan".
    std::size_t keep = 1;
    /// Plans of the search without limits that a search with a budget or a throughput floor
    /// starts from (see unconstrained_plans).
    std::size_t unconstrained_keep = 16;
    /// Bytes one stage DP instance may take; larger ones are given up, with a note. Where the
    /// pattern search only tried the DP first (search::pattern_search::counts_are_few), an eighth,
    /// and the patterns then solve the instance (no note). The pattern search's memo takes up to
    /// this much too; past it, nodes are not remembered (slower, the same plans).
    std::size_t dp_memory = std::size_t{128} << 20;
    /// Search nodes one solve gets in the first round of the best-first scan: an instance that
    /// needs more offers its best so far and is solved again later with eight times more, up
    /// to 2^24 nodes, then without a limit (exact either way). 0: no limit at once. Small, so
    /// that the first round visits every instance under the cut-off cheaply: its easy plans
    /// set the cut-off, and the deferred ones return under their own level's floor (2^15 spent
    /// tens of ms on each instance before a good cut-off existed; see docs/reproduction.md).
    std::uint64_t effort = std::uint64_t{1} << 6;
    /// Bytes kept, all together, of the deferred solves' suspensions (a solver's memo of the
    /// nodes it searched to the end and its best so far: search::pattern_search::suspend), so
    /// that an instance's next round continues its last instead of starting again; past it a
    /// deferred instance starts again (slower). Either way a finished solve returns the
    /// instance's exact answer, but continued solves finish in fewer rounds, so the bests so far
    /// offered on the way, and the cut-offs they set, may come at other times (random pools
    /// 0-199 and Sailor's scenarios: the same plans). 0: every round starts afresh (the way
    /// before 2026-12-07).
    std::size_t suspended_memory = std::size_t{64} << 20;
    /// Search nodes of the solve over the real zones that an instance gets once when H6 merged
    /// the zones and the simulator prices the instance's solution above the solver's own price
    /// (sailor_planner::solve_over_real_zones); 0: never. A few times the first round's budget:
    /// enough for the small instances whose merged-zone price misleads most (random pools 0-199,
    /// with stop 56's choice of split stage in search/zone_layout.hpp: 19 better plans, 0.1-5.4 %
    /// faster, 8 of them from that choice alone; one more node per cell no longer lowers
    /// throughput on 197 small random pools, where it did on one), at 1.01x the time (geometric
    /// mean; up to 2.2x on one pool, 0.38 -> 0.82 s; docs/reproduction.md).
    std::uint64_t real_zones_effort = std::uint64_t{1} << 10;
    /// And patterns priced per node of that budget (search::pattern_search::compositions_per_node;
    /// 0: nodes only). Over merged cells a node prices a few of the next stage's patterns; over
    /// four zones of four GPU types (16 cells) thousands, and 1,024 nodes took up to 4 million
    /// (0.7 s). 64: the same plans on random pools 0-199 (of their 864 such solves, 74 price
    /// more), and 128 GPUs of 4 types over 4 zones planned in 0.78x the time (Catch2; docs/reproduction.md).
    std::uint64_t real_zones_priced_per_node = 64;
    /// The best-first scan queues those solves under their instance's floor, so that a cut-off
    /// below it by then skips them (random pools 0-199: 1,373 -> 864 solves, the same plans);
    /// off: each runs as soon as its instance is solved (the way before 2026-12-03; benchmarks).
    bool queue_real_zones = true;
    /// Until a plan sets a cut-off, the best-first scan solves each instance as soon as its
    /// floor is tightened (a dive) instead of queueing it, where the solve has a node budget
    /// (`effort` > 0 and a solver that runs out of it): the tight floors made after that stop
    /// their placement searches once above the cut-off. With that early stop, random pools of
    /// seeds 1-200: the same plans in 0.95x stop 69's time (geometric mean); against the A*
    /// order alone, pools 118 and 128 in 0.78x and 0.93x (Catch2); off: the A* order alone
    /// (benchmarks).
    bool dive = true;
    /// The zone floors ask the pruners which zone groups one stage may span
    /// (search::zone_floor): with H5 a stage's replicas stay in one region and H6 makes each
    /// region one group, so no case of a floor puts a stage over two (random pool 152 in 0.51x
    /// the time; pool 100 finishes in 2.1 s where it stopped at 10 s: Catch2, the same plans;
    /// docs/reproduction.md);
    /// off: every case may, as before stop 72 (benchmarks).
    bool spans_from_pruners = true;
    /// The floor of plans with a stage over two real zones of a merged cell (zone_packing_floor)
    /// takes its ring across zones in each of the zone floor's cases, not only with the pool-wide
    /// straggler (random pools 100 and 54 in 0.83x and 0.87x the time, 191 stops at 10 s with a
    /// gap of 0.39 % instead of 1.68 %: Catch2, the same plans; docs/reproduction.md);
    /// off: the pool-wide straggler only, as before stop 73 (benchmarks).
    bool spanning_on_zone_cases = true;
    /// The floor of plans with every stage in one real zone (zone_packing_floor) shares the
    /// stages out among the zones, each serving its own from its GPUs, where counting each
    /// class of stages on every zone alone leaves that case at or below the other floors
    /// (random pool 100 in 0.55x the time, 54 and 135 in 1.01x and 1.05x: Catch2, the same
    /// plans; docs/reproduction.md); off: the class counts only, as before stop 74 (benchmarks).
    bool share_out_zones = true;
};

template <class Sim = simulator<>,
          class Pruners = search::prune::all<search::h2_memory_fit<typename Sim::memory_type>, search::h5_one_region>,
          class Solver = search::pattern_search<typename Sim::time_type>, class Bound = search::instance_floors,
          class Scan = search::best_first, class Zones = search::h6_merge_zones, class Typing = search::pinned_tp>
class sailor_planner {
    static_assert(concepts::check_memory_model<typename Sim::memory_type>());
    static_assert(concepts::check_time_model<typename Sim::time_type>());
    static_assert(search::prune::judges_any<Pruners, search::sailor_instance, worker_probe, search::stage_typing, search::stage_placement>,
                  "hetplan::sailor_planner: every pruner must judge one of the candidates Sailor's search makes: "
                  "`operator()(const problem&, const C&) const` for C = search::sailor_instance, worker_probe, "
                  "search::stage_typing or search::stage_placement");
    static_assert(concepts::check_bound<Bound, search::stage_problem<Pruners>>());

public:
    explicit sailor_planner(sailor_options opt = {}, Sim sim = {})
        : sailor_planner(opt, sim, default_pruners(sim), default_solver(sim)) {}
    sailor_planner(sailor_options opt, Sim sim, Pruners pruners, Solver solver, Bound bound = {}, Scan scan = {}, Zones zones = {},
                   Typing typing = {})
        : opt_(std::move(opt)), sim_(std::move(sim)), pruners_(std::move(pruners)), solver_(std::move(solver)), bound_(bound),
          scan_(scan), zones_(zones), typing_(typing) {}

    [[nodiscard]] static constexpr std::string_view name() { return "sailor"; }
    [[nodiscard]] const Sim& models() const { return sim_; }
    [[nodiscard]] sailor_options& options() { return opt_; }
    [[nodiscard]] const Solver& solver() const { return solver_; }

    // Swap one piece, keep the others.
    template <class P>
    auto with_pruners(P p) const { return remade(opt_, sim_, p, solver_, bound_, scan_, zones_, typing_); }
    template <class S>
    auto with_solver(S s) const { return remade(opt_, sim_, pruners_, s, bound_, scan_, zones_, typing_); }
    template <class B>
    auto with_bound(B b) const { return remade(opt_, sim_, pruners_, solver_, b, scan_, zones_, typing_); }
    template <class S>
    auto with_scan(S s) const { return remade(opt_, sim_, pruners_, solver_, bound_, s, zones_, typing_); }
    template <class Z>
    auto with_zones(Z z) const { return remade(opt_, sim_, pruners_, solver_, bound_, scan_, z, typing_); }
    template <class T>
    auto with_typing(T t) const { return remade(opt_, sim_, pruners_, solver_, bound_, scan_, zones_, t); }

    /// The straightforward search (the tests' reference): no floors, neither for instances nor
    /// inside the stage DP. It returns the same plans.
    [[nodiscard]] auto straightforward() const { return with_bound(search::no_bound{}).with_solver(search::stage_dp<typename Sim::time_type>(sim_.time, false)); }
    /// Exhaustive search in place of the stage DP (small instances only; tests), `visit` called
    /// with every plan it prices.
    [[nodiscard]] auto exhaustive(typename search::exhaustive_solver<Sim>::visitor visit = {}) const {
        return with_solver(search::exhaustive_solver<Sim>(sim_, std::move(visit)));
    }

    template <concepts::objective O, class... Hooks>
    [[nodiscard]] plan_result plan(const problem& pb, const plan_request<O, Hooks...>& rq);
    [[nodiscard]] plan_result plan(const problem& pb) { return plan(pb, plan_request<>{}); }
    /// Re-plans on another availability; the memoised memory answers (H2) survive.
    [[nodiscard]] plan_result plan(const problem& pb, const resource_pool& pool) { return plan(pb.with_pool(pool)); }

private:
    using instance = search::stage_problem<Pruners>;

    template <class... Pieces>
    static auto remade(const sailor_options& o, const Sim& sim, Pieces... p) { return sailor_planner<Sim, Pieces...>(o, sim, std::move(p)...); }

    /// With a budget or a minimum throughput, the same objective's plans without them, offered
    /// first: the stage DP admits by its own prices (merged zones priced by the region's first
    /// zone, boundaries by their slowest pair), which can refuse a plan whose simulated price
    /// is within the limits. So a budget at or above the unconstrained plan's cost returns
    /// that plan (the law docs/reproduction.md states; a property test checks it). First the
    /// request's own `top` without the limits (what the caller would get without them; plan()
    /// returns its best when the limits admit it), then, unless that settles it, a wider list.
    /// Not the wider list alone: it takes another path through the search (another cut-off),
    /// and with merged zones the simulator can price a best so far of one path under the best
    /// of the other (law test, seed 12: 6.975 it/s with one plan wanted, 6.658 with sixteen).
    template <class O, class... Hooks>
    [[nodiscard]] plan_result unconstrained_plans(const problem& pb, const plan_request<O, Hooks...>& rq) {
        if constexpr (requires(O o) { o.limits = constraints{}; }) {
            if (!rq.objective.limits.max_usd && !rq.objective.limits.min_throughput) return {};
            plan_request<O> free;
            free.objective = rq.objective;
            free.objective.limits = {};
            if constexpr (requires { free.objective.limits.max_gpus; })
                free.objective.limits.max_gpus = rq.objective.limits.max_gpus;  // counted exactly: kept
            free.top = rq.top;
            free.rank_within = rq.rank_within;
            free.stop = rq.stop;
            plan_result out = plan(pb, free);
            const std::size_t wide = std::max(opt_.keep, opt_.unconstrained_keep);
            if (wide <= rq.top || (rq.top == 1 && !out.stopped && out.best() && rq.objective.admits(out.best()->terms))) return out;
            free.top = wide;
            plan_result more = plan(pb, free);
            out.plans.insert(out.plans.end(), std::make_move_iterator(more.plans.begin()), std::make_move_iterator(more.plans.end()));
            out.stopped = out.stopped || more.stopped;
            return out;
        } else {
            return {};
        }
    }

    /// The most replicas of a P-stage pipeline: every stage of every replica takes a GPU at least,
    /// of the pool and within a GPU limit.
    template <class Run>
    [[nodiscard]] static int most_replicas(Run& run, const search::sailor_domain& d, int P) {
        int gpus = d.gpus;
        if constexpr (requires { run.objective().limits.max_gpus; })
            if (run.objective().limits.max_gpus) gpus = std::min(gpus, *run.objective().limits.max_gpus);
        return gpus / P;
    }

    /// The job's memory options Sailor's planner takes (§4.3): ZeRO 1-2 (the same traffic as an
    /// all-reduce). ZeRO-3's all-gathers and offloading have no time in its models: refused by
    /// name rather than planned as if free; its search has no recomputation (its models price a
    /// plan that has it).
    [[nodiscard]] static memory_options memory_for(const job_spec& job) {
        const memory_options& m = job.memory;
        auto refuse = [](const char* field, const std::string& why) { throw input_error("job", field, "the Sailor planner " + why); };
        if (m.recompute) refuse("recompute", "does not search plans with recomputation (Sailor §4.3); set it to false or use a planner that does");
        if (m.zero_stage > 2) refuse("zero_stage", "prices ZeRO stages 0-2 only (stage 3's parameter all-gathers are not in its time model)");
        if (m.offload_params) refuse("offload_params", "does not model offloading (Sailor §6)");
        if (m.offload_activations) refuse("offload_activations", "does not model offloading (Sailor §6)");
        return m;
    }

    /// H2 with the simulator's memory model, and H5 (when Pruners is built of them).
    [[nodiscard]] static Pruners default_pruners(const Sim& sim) {
        using h2 = search::h2_memory_fit<typename Sim::memory_type>;
        if constexpr (std::is_constructible_v<Pruners, h2, search::h5_one_region>) return Pruners(h2(sim.memory), search::h5_one_region{});
        else return Pruners{};
    }
    /// The solver with the simulator's time model (or the whole simulator, for exhaustive search).
    [[nodiscard]] static Solver default_solver(const Sim& sim) {
        if constexpr (std::is_constructible_v<Solver, typename Sim::time_type>) return Solver(sim.time);
        else if constexpr (std::is_constructible_v<Solver, Sim>) return Solver(sim);
        else return Solver{};
    }

    [[nodiscard]] search::dp_stats solver_stats() const {
        if constexpr (requires { solver_.stats(); }) return solver_.stats();
        else return {};
    }
    template <class O>
    [[nodiscard]] auto scan_for(const O&) const {
        if constexpr (!std::is_same_v<Scan, search::sailor_dp_order>) return scan_;
        else if constexpr (search::prefers_throughput<O>) return search::descending_until_worse{};
        else return search::ascending_until_worse{};
    }

    /// Branch and bound over every (P, mbs, D): each one's floor is the floor of its every-level
    /// instance (its TP levels' choices are a subset of that instance's); they are solved
    /// cheapest floor first, every TP level in turn, until a floor is above the cut-off. Exact
    /// over the space, and the first instances solved are the promising ones, so the cut-off is
    /// tight early (a 2,048-GPU pool has ~8,000 (P, mbs, D) and 256 TP levels each). Floors are
    /// first taken without the LP of the stage-time sum and tightened with it when they reach
    /// the front (lazily, as A* does), since most never do; until the first plan, an instance
    /// is solved as soon as it is tightened (sailor_options::dive). A solve gets a node budget
    /// (effort_for): an instance that runs out offers its best so far and goes back in the queue
    /// a round later with eight times the budget (up to 2^24), and its TP level alone, so one
    /// deep pipeline over a tight pool (P = 18 over 360 GPUs: minutes to prove) does not hold up
    /// the other instances that set the cut-off it is then proved under. Still exact: every
    /// instance is either solved with no budget (the last round) or bounded out.
    template <class Run>
    void plan_best_first(Run& run, const search::sailor_domain& d) {
        const problem& pb = run.pb();
        families_.clear();
        std::vector<floored_degree> heap;
        for (const search::sailor_family& f : opt_.space.candidates(pb)) {
            if (run.stopping()) return;
            auto times = search::time_stages(pb, d.cells, f.partition, f.mbs, d.tps, solver_.time_model(), memory_, schedule_kind::one_f_one_b);
            const auto family = static_cast<std::uint32_t>(families_.size());
            families_.push_back({f, std::move(times)});
            for (int D : search::data_parallel_degrees(pb.job.global_batch / f.mbs, most_replicas(run, d, f.P)))
                if (const double floor = kept_level_floor(run, d, family, D, false); floor < std::numeric_limits<double>::infinity())
                    heap.push_back({floor, static_cast<std::uint32_t>(heap.size()), family, D, false, 0, all_levels});
        }
        // A min-heap on (round, floor, order of enumeration, level, kind).
        auto later = [](const floored_degree& a, const floored_degree& b) {
            return std::tie(a.round, a.floor, a.seq, a.level, a.real) > std::tie(b.round, b.floor, b.seq, b.level, b.real);
        };
        std::make_heap(heap.begin(), heap.end(), later);
        const std::vector<search::tp_level> levels = typing_.levels(d.tps);
        // What a stop leaves open: the queue, and the instance in hand. Its least floor bounds
        // every value the search would still offer (plan_result::bound); the note names the
        // instance it belongs to, so that a caller sees what a longer search would solve next.
        auto prove = [&](const floored_degree* in_hand) {
            if constexpr (!std::is_same_v<Bound, search::no_bound>) {  // its floors are 0: it proves nothing
                const floored_degree* least = in_hand;
                for (const floored_degree& c : heap)
                    if (!least || c.floor < least->floor) least = &c;
                if (!least) return run.prove(std::numeric_limits<double>::infinity());
                run.prove(least->floor, describe_open(pb, d, *least, levels, least == in_hand));
            }
        };
        while (!heap.empty() && !run.stopping()) {
            std::pop_heap(heap.begin(), heap.end(), later);
            floored_degree c = heap.back();
            heap.pop_back();
            if (const auto cut = run.cutoff(); cut && c.floor > *cut) continue;  // bounded out (rounds after it may hold lower floors)
            const auto& [f, times] = families_[c.family];
            if (c.real) {
                solve_over_real_zones(run, f, c.D, levels[c.level], c.merged);
                if (run.stopping()) return prove(&c);
                continue;
            }
            if (!c.tight) {
                c.floor = kept_level_floor(run, d, c.family, c.D, true);
                c.tight = true;
                if (!(c.floor < std::numeric_limits<double>::infinity())) continue;
                // The dive (sailor_options::dive): random pool 128 made 861 tight floors, 780
                // of them above its answer, in full before its first solve. Only a budgeted
                // solve dives: one without a budget would solve a poorly floored instance in
                // full with no cut-off (a checking solver that ignores effort took minutes).
                constexpr bool budgeted = requires(Solver& s) { s.exhausted(); };
                if (run.cutoff() || !opt_.dive || !budgeted || effort_for(c.round) == 0) {
                    heap.push_back(c), std::push_heap(heap.begin(), heap.end(), later);
                    continue;
                }
            }
            const std::size_t from = c.level == all_levels ? 0 : c.level, to = c.level == all_levels ? levels.size() : c.level + std::size_t{1};
            for (std::size_t l = from; l < to; ++l) {
                real_due_.reset();
                if (step(run, d, f, times, levels[l], c.D, effort_for(c.round), c.round > 0).stop) return prove(&c);
                // Its solve over the real zones waits in the queue under the level's own floor
                // (which holds there too), so a cut-off that has dropped below it by then skips
                // it: random pools 0-199 ran 1,373 such solves, most under floors above the
                // answer (pool 118: 60 of 87, 461 of its 709 ms); queued, 864. Its value depends
                // on the instance alone, so the plans stay those of the straightforward search.
                if (real_due_) {
                    floored_degree real = c;
                    real.level = static_cast<std::uint32_t>(l);
                    real.floor = std::max(c.floor, real_due_->floor);
                    real.real = true;
                    real.merged = real_due_->merged;
                    heap.push_back(real), std::push_heap(heap.begin(), heap.end(), later);
                }
                if (deferred_) {
                    floored_degree again = c;
                    again.round = static_cast<std::uint8_t>(c.round + 1);
                    again.level = static_cast<std::uint32_t>(l);
                    again.floor = std::max(c.floor, deferred_floor_);  // its level's own, often well above every level's
                    heap.push_back(again), std::push_heap(heap.begin(), heap.end(), later);
                }
            }
        }
        prove(nullptr);
    }

    /// An instance plan_best_first left open, for the note of a stopped search: its (P, mbs,
    /// D), which TP levels, and how far it got (`in_hand`: the one it was on when it stopped).
    template <class Queued>  // floored_degree, declared below
    [[nodiscard]] std::string describe_open(const problem& pb, const search::sailor_domain& d, const Queued& c,
                                            const std::vector<search::tp_level>& levels, bool in_hand) const {
        const search::sailor_family& f = families_[c.family].family;
        std::string s = "P=" + std::to_string(f.P) + " mbs=" + std::to_string(f.mbs) + " D=" + std::to_string(c.D);
        if (c.level == all_levels) {
            s += levels.size() > 1 ? ", every TP level" : "";
        } else if (levels[c.level]) {
            s += ", TP levels";
            for (std::size_t t = 0; t < d.cells.types.size(); ++t)
                s += (t ? ", " : " ") + std::string(pb.hw.gpu(d.cells.types[t]).name()) + " " + std::to_string((*levels[c.level])[t]);
        }
        if (c.real) return s + ", its solve over the real zones" + (in_hand ? ", under way" : "");
        if (in_hand) s += ", being solved";
        if (c.round > 0) return s + (in_hand ? " after " : ", after ") + std::to_string(c.round) + (c.round == 1 ? " solve" : " solves") + " that ran out of nodes";
        return in_hand ? s : s + ", not yet solved";
    }

    /// Search nodes a solve may take in round r of plan_best_first: sailor_options::effort,
    /// eight times more each round up to 2^24 nodes (a deep pipeline's minutes come in rounds,
    /// after the other instances' shorter solves), then no limit (so the search stays exact).
    [[nodiscard]] std::uint64_t effort_for(std::uint8_t round) const {
        constexpr std::uint64_t most = std::uint64_t{1} << 24;
        std::uint64_t budget = opt_.effort;
        for (std::uint8_t r = 0; r < round && budget > 0; ++r) budget = budget > most / 8 ? 0 : budget * 8;
        return budget;
    }

    /// The objective floor of the instance at (P, mbs, D) with every TP degree the pruners keep
    /// (with or without the LP of the stage-time sum).
    template <class Run>
    double every_level_floor(Run& run, const search::sailor_domain& d, const search::sailor_family& f, const search::stage_timings& times,
                             int D, bool pooled_sum) {
        if constexpr (std::is_same_v<Bound, search::no_bound>) {
            return 0.0;
        } else {
            return search::value_floor(run.objective(), every_level_terms(run, d, f, times, D, pooled_sum, run.cutoff()));
        }
    }
    /// Its terms (time, USD, ...), which do not depend on the objective or its limits, except
    /// where the floor's value is above `cut`: the zone floor stops raising a case there (the
    /// instance is dropped at any floor above the cut-off, and the placement tests of the
    /// every-degree instances were a fifth of random pool 128's run).
    template <class Run>
    objective_terms every_level_terms(Run& run, const search::sailor_domain& d, const search::sailor_family& f, const search::stage_timings& times,
                                      int D, bool pooled_sum, std::optional<double> cut) {
        static const search::tp_level every{};
        boost::hana::tuple<> quiet;  // a bound's own probe: the hooks hear the real instances
        search::build_stage_problem(every_sp_, run.pb(), d.cells, f.partition, f.mbs, D, times, pruners_, every, memory_, quiet);
        const search::instance_bound& b = every_sp_.bound;
        search::make_instance_bound(every_sp_.bound, every_sp_, solver_.time_model(), pooled_sum, [&](double iteration) {
            return cut && search::value_floor(run.objective(), search::with_slack(b.terms_at(iteration))) > *cut;
        });
        return search::with_slack(bound_.floor(run.pb(), every_sp_));
    }
    /// The same, kept for the rest of the plan() call by (family, D, pooled_sum): a search with
    /// limits first runs without them (unconstrained_plans) over the same families, and building
    /// these floors was a third of each run (2-zone OPT-350, min cost at >= 0.2 it/s). A floor
    /// made under a cut-off that it exceeds is made again where it no longer does (another run).
    template <class Run>
    double kept_level_floor(Run& run, const search::sailor_domain& d, std::uint32_t family, int D, bool pooled_sum) {
        if constexpr (std::is_same_v<Bound, search::no_bound>) {
            return 0.0;
        } else {
            const std::uint64_t key = std::uint64_t{family} << 33 | std::uint64_t(unsigned(D)) << 1 | std::uint64_t{pooled_sum};
            auto [it, fresh] = level_terms_.try_emplace(key);
            const auto cut = run.cutoff();
            auto dropped = [&](const objective_terms& t) { return cut && search::value_floor(run.objective(), t) > *cut; };
            kept_terms& k = it->second;
            if (fresh || (k.above_cut && !dropped(k.terms))) {
                k.terms = every_level_terms(run, d, families_[family].family, families_[family].times, D, pooled_sum, cut);
                k.above_cut = dropped(k.terms);
            }
            return search::value_floor(run.objective(), k.terms);
        }
    }

    /// One (P, mbs): its stage timings, then every TP level, each scanning the data-parallel degrees.
    template <class Run>
    void plan_family(Run& run, const search::sailor_domain& d, const search::sailor_family& f) {
        const problem& pb = run.pb();
        const auto times = search::time_stages(pb, d.cells, f.partition, f.mbs, d.tps, solver_.time_model(), memory_, schedule_kind::one_f_one_b);
        std::vector<int> degrees;
        for (int D : search::data_parallel_degrees(pb.job.global_batch / f.mbs, most_replicas(run, d, f.P))) degrees.push_back(D);
        const std::vector<search::tp_level> levels = typing_.levels(d.tps);
        level_floor_.assign(degrees.empty() ? 0 : static_cast<std::size_t>(degrees.back()) + 1, std::numeric_limits<double>::quiet_NaN());
        for (const search::tp_level& level : levels)
            scan_for(run.objective()).walk(degrees, [&](int D) {
                if (levels.size() > 1 && every_level_bounded_out(run, d, f, times, D)) {
                    const search::sailor_instance inst{f.P, f.mbs, D, f.partition, &level};
                    run.candidate(inst);
                    run.pruned(inst, bound_);
                    return step_outcome{std::nullopt, run.stopping()};
                }
                return step(run, d, f, times, level, D);
            });
    }

    /// Whether the bound drops every TP level's instance at (P, mbs, D) at once: the instance
    /// with every kept degree (free_tp) offers each level's typings and more, so its floor is
    /// below each of theirs. One build per D instead of one per level (4^T levels for T types).
    template <class Run>
    bool every_level_bounded_out(Run& run, const search::sailor_domain& d, const search::sailor_family& f,
                                 const search::stage_timings& times, int D) {
        if constexpr (std::is_same_v<Bound, search::no_bound>) {
            return false;
        } else {
            const auto cut = run.cutoff();
            if (!cut) return false;
            double& floor = level_floor_[static_cast<std::size_t>(D)];
            if (std::isnan(floor)) floor = every_level_floor(run, d, f, times, D, true);
            return floor > *cut;
        }
    }

    /// One instance (P, mbs, level, D): pruned, bounded, solved, built, priced, offered. With an
    /// `effort` the solver may run out of (then deferred_ is set); `again`: the same instance
    /// once more, with more (the hooks and the pruners heard it the first time).
    template <class Run>
    step_outcome step(Run& run, const search::sailor_domain& d, const search::sailor_family& f, const search::stage_timings& times,
                      const search::tp_level& level, int D, std::uint64_t effort = 0, bool again = false) {
        deferred_ = false;
        if (run.stopping()) return {std::nullopt, true};
        const problem& pb = run.pb();
        const search::sailor_instance inst{f.P, f.mbs, D, f.partition, &level};
        if (!again) {
            run.candidate(inst);
            if (!pruners_.keep(pb, inst, run.hooks())) return {std::nullopt, run.stopping()};
        }
        search::build_stage_problem(sp_, pb, d.cells, f.partition, f.mbs, D, times, pruners_, level, memory_, run.hooks());
        sp_.exact_boundaries = opt_.exact_boundaries;
        // Levels that resolve to the same degrees everywhere give the same instance.
        // (Built in a kept buffer, copied only for an instance not seen: most candidates repeat.)
        auto& sig = sig_;
        sig.assign({static_cast<std::uint16_t>(f.P), static_cast<std::uint16_t>(f.mbs), static_cast<std::uint16_t>(D)});
        const auto types = static_cast<std::ptrdiff_t>(d.cells.types.size());
        for (const auto& st : sp_.menus()) {
            sig.push_back(static_cast<std::uint16_t>(st.choices.size()));  // where one stage's choices end
            for (const auto& c : st.choices) sig.insert(sig.end(), c.tp.begin(), c.tp.begin() + types);
        }
        auto memo = seen_.find(sig);
        const bool fresh = memo == seen_.end();
        if (fresh) memo = seen_.emplace(sig, std::nullopt).first;
        if (!fresh && !again) return {memo->second, run.stopping()};  // solved, or deferred already
        // Its last round's suspension, where it was deferred (dropped if the floor below bounds
        // it out now: the cut-off only falls, so it is not solved again).
        std::optional<held_suspension> held;
        if constexpr (suspends) {
            if (auto it = suspended_.empty() ? suspended_.end() : suspended_.find(memo->first); it != suspended_.end()) {
                suspended_bytes_ -= it->second.s.bytes();
                held = std::move(it->second);
                suspended_.erase(it);
            }
        }
        // A deferred instance's best so far and a longer solve's answer are not both listed (the
        // worse is withdrawn), so the ranked list holds one plan per instance, as without a budget.
        std::optional<hetplan::plan> before;
        if (auto it = partial_.find(memo->first); again && it != partial_.end()) before = std::move(it->second), partial_.erase(it);
        offered_.reset();
        mispriced_ = false;
        merged_value_ = std::numeric_limits<double>::infinity();
        // The floor without the LP of the stage-time sum first: it drops most of what the bound
        // drops, and the simplex was a quarter of a search with limits (item 4, min cost).
        if constexpr (!std::is_same_v<Bound, search::no_bound>) {
            if (const auto cut = run.cutoff()) {
                search::make_instance_bound(sp_.bound, sp_, solver_.time_model(), false);
                if (search::value_floor(run.objective(), search::with_slack(bound_.floor(pb, sp_))) > *cut) {
                    run.pruned(sp_, bound_);
                    // Not kept: a level alike later (the same P, mbs, D) is bounded out again by
                    // the same floor, under the cut-off of its time; 2,048 GPUs bound out ~40,000
                    // instances here in 10 s, each key ~1.8 KB with its node. (Those the LP floor
                    // bounds out in bounded_solve stay.)
                    seen_.erase(memo);
                    return {std::nullopt, run.stopping()};
                }
            }
        }
        solver_.prepare(sp_);
        if constexpr (suspends)
            if (held) solver_.resume(std::move(held->s));
        const search::bounded_outcome out = search::bounded_solve(run, sp_, bound_, solver_, [&](const auto& sol) -> std::optional<double> {
            if (!is_finite(sol.iteration)) return ++unlinked_, std::nullopt;  // every placement needs a missing link
            auto layouts = search::zone_layouts(sp_, sol.stages);
            if (layouts.empty()) return ++unplaceable_, std::nullopt;
            std::optional<layout_alternative> alt;
            auto best = best_layout(run, std::move(layouts), &alt);
            if (!best) return ++unlinked_, std::nullopt;
            std::optional<hetplan::plan> copy;
            if (effort > 0) copy = best->first;
            const double solver = run.objective().value(sol.terms),
                         simulated = run.objective().value(search::terms_of(run.objective(), pb, best->first, best->second));
            mispriced_ = mispriced_ || simulated > solver + std::abs(solver) * search::tie_tolerance;
            merged_value_ = std::min(merged_value_, simulated);
            if (alt) note_alternative(run, best->first, *alt);
            const auto v = run.offer(std::move(best->first), best->second, sol.iteration, sim_.memory,
                                     "P=" + std::to_string(f.P) + " mbs=" + std::to_string(f.mbs) + " D=" + std::to_string(D));
            if (v && copy) offered_ = std::move(copy);
            return v;
        }, effort);
        if constexpr (suspends) solver_.resume(std::nullopt);  // where the bound dropped it unsolved
        // Of the best so far and the longer solve's answer the list keeps the better (by the
        // simulator's price; the solver ranks by its own), and remembers which.
        bool newer_kept = true;
        if (before && offered_ && *offered_ != *before) newer_kept = run.keep_better(*before, *offered_);
        if (out.exhausted && (offered_ || before))
            partial_.insert_or_assign(memo->first, offered_ && newer_kept ? std::move(*offered_) : std::move(*before));
        memo->second = out.value;
        deferred_ = out.exhausted;
        auto level_floor = [&] { return search::value_floor(run.objective(), search::with_slack(bound_.floor(pb, sp_))); };
        if (deferred_) deferred_floor_ = level_floor();
        if constexpr (suspends)
            if (auto s = solver_.suspend()) keep_suspension(run, memo->first, held_suspension{std::move(*s), deferred_floor_});
        if (mispriced_ && opt_.real_zones_effort > 0 && !run.stopping() && d.cells.cells.size() < real_cells(pb).cells.cells.size() &&
            real_solved_.insert(memo->first).second) {
            // Queued by plan_best_first (the only scan with a queue), or solved now.
            if (std::is_same_v<Scan, search::best_first> && opt_.queue_real_zones) real_due_ = real_solve{level_floor(), merged_value_};
            else solve_over_real_zones(run, f, D, level, merged_value_);
        }
        return {memo->second, run.stopping()};
    }

    /// Keeps a deferred solve's suspension for its next round, within
    /// sailor_options::suspended_memory; when that is full, those of instances whose floor the
    /// cut-off has since passed go first (the cut-off only falls: they are not solved again).
    template <class Run, class Held>
    void keep_suspension(Run& run, const std::vector<std::uint16_t>& key, Held held) {
        const std::size_t size = held.s.bytes();
        const auto cut = run.cutoff();
        if (suspended_bytes_ + size > opt_.suspended_memory && cut && *cut < swept_at_) {
            swept_at_ = *cut;  // once per cut-off: a sweep reads every one kept
            std::erase_if(suspended_, [&](const auto& e) {
                if (e.second.floor <= *cut) return false;
                suspended_bytes_ -= e.second.s.bytes();
                return true;
            });
        }
        if (suspended_bytes_ + size > opt_.suspended_memory) return;
        ++suspensions_;
        suspended_bytes_ += size;
        suspended_.insert_or_assign(key, std::move(held));
    }

    /// The search's domain with every zone its own cell (keep_zones), built once per plan() call.
    [[nodiscard]] const search::sailor_domain& real_cells(const problem& pb) {
        if (!real_) real_ = search::make_sailor_domain(pb, search::keep_zones{}, search::h1_tp_within_node{});
        return *real_;
    }

    /// H6 prices a merged cell with its region's first zone's links; the plan is laid out over the
    /// real zones and the simulator prices that. Where the simulator's price of an instance's
    /// solution is above the solver's (a stage no zone holds whole, rings or boundaries that
    /// cross zones at slower links), another solution of the same instance may lay out better,
    /// which the merged cells cannot tell apart (random pool 135: the same P = 6, D = 16 and TP
    /// levels with each stage's types in one zone take 1.456 s/iteration against the merged
    /// search's 1.621). So the instance is solved once more over the real zones, for a plan
    /// better than its merged one (that plan's value is the cut-off and the floors' test, never
    /// the run's: what it returns depends on the instance alone, not on the search's path, so
    /// branch and bound and the straightforward search stay alike), with a budget of
    /// sailor_options::real_zones_effort nodes; its plan is offered beside the merged one's.
    /// The instance's floors over merged cells hold over the real zones too (their optimistic
    /// prices take the fastest link among a merged cell's zones and its summed GPUs), so what a
    /// stopped search proves still holds.
    template <class Run>
    void solve_over_real_zones(Run& run, const search::sailor_family& f, int D, const search::tp_level& level, double merged) {
        const problem& pb = run.pb();
        const search::sailor_domain& real = real_cells(pb);
        if (!real_solver_) real_solver_.emplace(sim_.time), real_solver_->always_patterns();  // the budget counts nodes (and patterns priced)
        real_solver_->compositions_per_node(opt_.real_zones_priced_per_node);
        auto times = real_times_.find({f.P, f.mbs});
        if (times == real_times_.end() || times->second.first != f.partition)
            times = real_times_.insert_or_assign({f.P, f.mbs}, std::pair{f.partition, search::time_stages(pb, real.cells, f.partition, f.mbs, real.tps, sim_.time, memory_,
                                                                                                           schedule_kind::one_f_one_b)}).first;
        boost::hana::tuple<> quiet;  // the hooks heard this instance already
        search::build_stage_problem(real_sp_, pb, real.cells, f.partition, f.mbs, D, times->second.second, pruners_, level, memory_, quiet);
        real_sp_.exact_boundaries = opt_.exact_boundaries;
        // The floors without the LP of the stage-time sum first, as step() does: building the
        // patterns and the whole bound is what a solve here costs.
        const search::instance_floors floors;
        auto beyond = [&] { return search::value_floor(run.objective(), search::with_slack(floors.floor(pb, real_sp_))) > merged; };
        search::make_instance_bound(real_sp_.bound, real_sp_, sim_.time, false);
        if (beyond()) return;
        real_solver_->prepare(real_sp_);
        if (!real_sp_.bound.feasible() || beyond()) return;
        ++real_solves_;
        const auto sol = real_solver_->solve(pb, real_sp_, run.objective(), {merged, &run.stop(), opt_.real_zones_effort});
        if (real_solver_->stopped()) run.halt();
        if (!sol || !is_finite(sol->iteration)) return;
        auto layouts = search::zone_layouts(real_sp_, sol->stages);
        if (layouts.empty()) return;
        auto best = best_layout(run, std::move(layouts));
        if (!best) return;
        const auto v = run.offer(std::move(best->first), best->second, sol->iteration, sim_.memory,
                                 "P=" + std::to_string(f.P) + " mbs=" + std::to_string(f.mbs) + " D=" + std::to_string(D) + " over the real zones");
        if (v && *v < merged) ++real_better_;
    }

    /// Notes why nothing was found: no usable node, or memory (search::memory_binds).
    template <class Run>
    void explain_no_plan(Run& run, const search::sailor_domain& d) {
        if (d.cells.cells.empty()) {
            run.note("no plan: the pool has no GPU of a type the model's profiles and H1's TP degrees can use");
            return;
        }
        if (auto why = search::memory_binds(run.pb(), d, opt_.space.candidates(run.pb()), sim_.memory, memory_)) {
            run.note(std::move(*why));
            return;
        }
        // Constraints: the same search without them says how far off the cheapest and the
        // fastest plans are (the bounded search never built them, so nothing else knows).
        if constexpr (requires { run.objective().limits.max_usd; run.objective().limits.min_throughput; }) {
            const auto lim = run.objective().limits;
            std::optional<int> max_gpus;
            if constexpr (requires { lim.max_gpus; }) max_gpus = lim.max_gpus;
            if (!lim.max_usd && !lim.min_throughput && !max_gpus) return;
            const problem& pb = run.pb();
            const stop_condition stop = run.stop();
            std::string s = "no plan within the constraints:";
            char buf[160];
            if (lim.max_usd) {
                plan_request<min_cost> rq;
                rq.objective.limits.max_gpus = max_gpus;
                rq.stop = stop;
                if (const auto r = plan(pb, rq); r.best())
                    std::snprintf(buf, sizeof buf, " the cheapest plan%s costs %.4g USD/iteration (budget %.4g)", max_gpus ? " within the GPU limit" : "",
                                  r.best()->cost().value, *lim.max_usd), s += buf;
            }
            if (lim.min_throughput) {
                plan_request<max_throughput> rq;
                rq.objective.limits.max_gpus = max_gpus;
                rq.stop = stop;
                if (const auto r = plan(pb, rq); r.best())
                    std::snprintf(buf, sizeof buf, "%s the fastest plan%s reaches %.4g iterations/s (minimum %.4g)", lim.max_usd ? ";" : "",
                                  max_gpus ? " within the GPU limit" : "", r.best()->throughput(), *lim.min_throughput), s += buf;
            }
            if (max_gpus && !lim.max_usd && !lim.min_throughput) {
                std::snprintf(buf, sizeof buf, " no plan fits in %d GPU(s)", *max_gpus);
                s += buf;
            }
            run.note(std::move(s));
        }
    }

    /// A layout of one solution that the objective ranked a little below the chosen one but
    /// that is much better on the other term (money under a throughput objective, time under a
    /// cost objective): plan() notes it for the returned plan, so the trade-off the objective
    /// made is visible (issue 15: the default example's stage-blocked layout is 0.8 % faster and
    /// 38 % dearer than its replica-aligned one, which keeps each replica's activations inside
    /// a zone). Within 1 % on the objective and 10 % better on the other term: a note, not a
    /// choice.
    struct layout_alternative {
        objective_terms chosen, other;
        bytes chosen_cross_zone{}, other_cross_zone{};
        bool time_first = true;  ///< the objective's value is time (the other term money)
    };
    static constexpr double alternative_loss = 0.01, alternative_gain = 0.10;

    /// The layout of one solution over the real zones that the objective likes best (admitted
    /// first, then by value; the first on a tie: a tie band here would stack on the ranked
    /// list's, and the law "a larger budget never lowers throughput" holds within one band),
    /// and, where one qualifies, a layout_alternative. None when every layout needs a link the
    /// network lacks.
    template <class Run>
    std::optional<std::pair<hetplan::plan, estimate>> best_layout(Run& run, std::vector<hetplan::plan> layouts,
                                                                  std::optional<layout_alternative>* alternative = nullptr) {
        const auto& o = run.objective();
        struct priced {
            std::size_t k;
            estimate e;
            objective_terms t;
            std::pair<bool, double> rank;  ///< (not admitted, value)
        };
        boost::container::small_vector<priced, 8> all;
        priced* best = nullptr;
        for (std::size_t k = 0; k < layouts.size(); ++k) {
            try {
                estimate e = sim_.run(run.pb(), layouts[k]);
                const objective_terms t = search::terms_of(o, run.pb(), layouts[k], e);
                all.push_back({k, std::move(e), t, {!o.admits(t), o.value(t)}});
            } catch (const missing_link&) {
            }
        }
        for (priced& p : all)
            if (!best || p.rank < best->rank) best = &p;
        if (!best) return std::nullopt;
        if (alternative) {
            alternative->reset();
            using Obj = std::remove_cvref_t<decltype(o)>;
            if constexpr (requires { Obj::prefers_throughput; }) {
                constexpr bool time_first = bool(Obj::prefers_throughput);
                auto other = [](const objective_terms& t) { return time_first ? t.usd : t.iteration; };
                const double value = best->rank.second, loss = value + std::abs(value) * alternative_loss;
                for (const priced& p : all) {
                    const bool qualifies = &p != best && !p.rank.first && p.rank.second <= loss && other(p.t) < other(best->t) * (1 - alternative_gain);
                    if (qualifies && (!*alternative || other(p.t) < other(alternative->value().other)))
                        alternative->emplace(layout_alternative{best->t, p.t, best->e.money.cross_zone, p.e.money.cross_zone, time_first});
                }
            }
        }
        return std::pair{std::move(layouts[best->k]), std::move(best->e)};
    }

    /// Keeps `alt` for `pl`, about to be offered, where `pl` may be the plan returned (within the
    /// tie band of the best so far, itself included); forgets those the best has left behind.
    /// (A plan the run then refuses leaves an entry no returned plan equals: harmless.)
    template <class Run>
    void note_alternative(Run& run, const hetplan::plan& pl, const layout_alternative& alt) {
        const double v = run.objective().value(alt.chosen), best = std::min(run.best(), v);
        const double tie = best + std::abs(best) * search::tie_tolerance;
        std::erase_if(alternatives_, [&](const auto& e) { return run.objective().value(e.second.chosen) > tie; });
        if (v <= tie) alternatives_.emplace_back(pl, alt);
    }
    /// The note on the returned plan's layout_alternative, if it has one.
    void explain_alternative(plan_result& out) const {
        if (out.plans.empty()) return;
        const auto it = std::find_if(alternatives_.begin(), alternatives_.end(), [&](const auto& e) { return e.first == out.plans.front().pl; });
        if (it == alternatives_.end()) return;
        const layout_alternative& a = it->second;
        auto pct = [](double x, double of) { return 100 * (x - of) / of; };
        char buf[400];
        std::snprintf(buf, sizeof buf,
                      "layout: the same stages laid out otherwise over the zones take %.4g s/iteration (%+.1f %%) at %.4g USD/iteration "
                      "(%+.1f %%; %.3g GB across zones against %.3g GB here): the objective chose this one; a %s weighs the two",
                      a.other.iteration, pct(a.other.iteration, a.chosen.iteration), a.other.usd, pct(a.other.usd, a.chosen.usd),
                      a.other_cross_zone.value / 1e9, a.chosen_cross_zone.value / 1e9,
                      a.time_first ? "budget (max_usd, --max-cost)" : "minimum throughput (min_throughput, --min-throughput)");
        out.notes.emplace_back(buf);
    }

    sailor_options opt_;
    Sim sim_;
    Pruners pruners_;
    Solver solver_;
    Bound bound_;
    Scan scan_;
    Zones zones_;
    Typing typing_;
    memory_options memory_{};
    std::size_t unplaceable_ = 0;  ///< DP solutions no zone layout could place (this plan() call)
    std::size_t unlinked_ = 0;     ///< DP solutions whose every layout needs a link the network lacks
    instance sp_;  ///< reused: building an instance allocates nothing once warm
    instance every_sp_;  ///< the every-degree instance behind every_level_bounded_out
    std::vector<double> level_floor_;  ///< its objective floor per D (NaN: not built yet), this family
    struct kept_terms {
        objective_terms terms;
        bool above_cut = false;  ///< made under a cut-off it exceeds (so perhaps short of the tightest)
    };
    std::unordered_map<std::uint64_t, kept_terms> level_terms_;  ///< kept_level_floor's, this plan() call
    bool deferred_ = false;            ///< the last step's solver ran out of its effort
    double deferred_floor_ = 0;        ///< and then, its instance's objective floor
    std::optional<hetplan::plan> offered_;  ///< the plan the last step offered and the run kept (with an effort)
    std::map<std::vector<std::uint16_t>, hetplan::plan> partial_;  ///< deferred instances' best so far, in the list until superseded
    std::map<std::vector<std::uint16_t>, std::optional<double>> seen_;  ///< instances solved (P, mbs, D, TPs): levels that resolve alike
    static constexpr bool suspends = requires(Solver& s) { s.suspend(); };
    template <class S>
    struct suspensions_of {
        struct held {
            typename S::suspension s;
            double floor;  ///< its instance's objective floor
        };
        using type = std::map<std::vector<std::uint16_t>, held>;
    };
    template <class S>
        requires(!requires(S& s) { s.suspend(); })
    struct suspensions_of<S> {
        using type = std::map<std::vector<std::uint16_t>, int>;
    };
    typename suspensions_of<Solver>::type suspended_;  ///< deferred instances' suspended solves (seen_'s keys), this search
    using held_suspension = typename decltype(suspended_)::mapped_type;
    std::size_t suspended_bytes_ = 0;  ///< their bytes (suspension::bytes), within sailor_options::suspended_memory
    double swept_at_ = 0;  ///< the cut-off of keep_suspension's last sweep
    std::size_t suspensions_ = 0;  ///< deferred solves whose suspension was kept, this search
    std::vector<std::uint16_t> sig_;  ///< scratch: an instance's key in seen_
    std::vector<std::pair<hetplan::plan, layout_alternative>> alternatives_;  ///< note_alternative's, this plan() call
    bool mispriced_ = false;  ///< the last step's solution: the simulator's price above the solver's
    double merged_value_ = 0;  ///< and the least objective value of its plans
    /// A solve over the real zones that step() leaves to plan_best_first's queue
    /// (sailor_options::queue_real_zones): its instance's objective floor and merged plan's
    /// value (that solve's cut-off).
    struct real_solve {
        double floor, merged;
    };
    std::optional<real_solve> real_due_;
    std::optional<search::sailor_domain> real_;  ///< real_cells(), this plan() call
    instance real_sp_;                           ///< solve_over_real_zones' instance
    std::optional<search::pattern_search<typename Sim::time_type>> real_solver_;
    std::set<std::vector<std::uint16_t>> real_solved_;  ///< instances (seen_'s keys) solved over the real zones, this plan() call
    std::map<std::pair<int, int>, std::pair<std::vector<layer_range>, search::stage_timings>> real_times_;  ///< by (P, mbs), this plan() call
    std::size_t real_solves_ = 0, real_better_ = 0;     ///< this plan() call
    /// A (P, mbs, D) and its every-level floor (plan_best_first).
    static constexpr std::uint32_t all_levels = std::numeric_limits<std::uint32_t>::max();
    struct floored_degree {
        double floor;
        std::uint32_t seq, family;
        int D;
        bool tight;              ///< with the LP floor of the stage-time sum
        std::uint8_t round = 0;  ///< how often its solve ran out of effort (effort_for)
        std::uint32_t level = all_levels;  ///< the TP level left to solve again, or all of them
        bool real = false;       ///< the level's solve over the real zones (solve_over_real_zones), not the level's own
        double merged = 0;       ///< then, its merged plan's value
    };
    struct family_times {
        search::sailor_family family;
        search::stage_timings times;
    };
    std::vector<family_times> families_;
};

// Outside the class so that HETPLAN_SEPARATE_COMPILATION can keep it from being instantiated
// (planners/instances.hpp).
template <class Sim, class Pruners, class Solver, class Bound, class Scan, class Zones, class Typing>
template <concepts::objective O, class... Hooks>
plan_result sailor_planner<Sim, Pruners, Solver, Bound, Scan, Zones, Typing>::plan(const problem& pb, const plan_request<O, Hooks...>& rq) {
    static_assert(concepts::check_solver<Solver, search::stage_problem<Pruners>, O>());
    pb.model.check();
    pb.job.check();
    level_terms_.clear();  // floors of this problem (the unconstrained search below fills it too)
    plan_result free = unconstrained_plans(pb, rq);
    // The best plan without the limits is within them: no plan within them is better (the
    // limits only remove plans), so the constrained search would return it again.
    if (rq.top == 1 && !free.stopped && free.best() && rq.objective.admits(free.best()->terms)) {
        free.plans.resize(1);
        return free;
    }
    std::vector<ranked_plan> unconstrained = std::move(free.plans);
    memory_ = memory_for(pb.job);
    unplaceable_ = unlinked_ = real_solves_ = real_better_ = 0;
    search::search_run run(pb, rq, opt_.keep);
    for (ranked_plan& rp : unconstrained) run.offer(std::move(rp.pl), rp.est, rp.predicted, sim_.memory, "the unconstrained search's plan");
    if (memory_.zero_stage > 0) run.note("ZeRO stage " + std::to_string(memory_.zero_stage) + ": state sharded over each stage's replicas, synchronised as an all-reduce's volume");
    pruners_.begin(pb);
    const search::sailor_domain d = search::make_sailor_domain(pb, zones_, search::h1_tp_within_node{});
    if constexpr (requires { solver_.set_memory_limit(std::size_t{}); }) solver_.set_memory_limit(opt_.dp_memory);
    const search::dp_stats before = solver_stats();
    seen_.clear();
    partial_.clear();
    suspended_.clear();
    suspended_bytes_ = suspensions_ = 0;
    swept_at_ = std::numeric_limits<double>::infinity();
    std::uint64_t resumed_before = 0;
    if constexpr (suspends) solver_.resume(std::nullopt), resumed_before = solver_.resumed();
    alternatives_.clear();
    real_.reset();
    real_solved_.clear();
    real_times_.clear();
    sp_.forget_problem();  // a new problem: transfers priced and menus built for the last one are stale
    every_sp_.forget_problem();
    real_sp_.forget_problem();
    sp_.bound.spans_from_pruners = every_sp_.bound.spans_from_pruners = real_sp_.bound.spans_from_pruners = opt_.spans_from_pruners;
    sp_.bound.spanning_on_zone_cases = every_sp_.bound.spanning_on_zone_cases = real_sp_.bound.spanning_on_zone_cases = opt_.spanning_on_zone_cases;
    sp_.bound.share_out_zones = every_sp_.bound.share_out_zones = real_sp_.bound.share_out_zones = opt_.share_out_zones;
    if constexpr (std::is_same_v<Scan, search::best_first>) {
        plan_best_first(run, d);
    } else {
        for (const search::sailor_family& f : opt_.space.candidates(pb)) {
            if (run.stopping()) break;
            plan_family(run, d, f);
        }
        // Every instance walked: nothing left open. (H3/H4's scans skip instances without
        // bounding them: the finished search's answer, but no floor under the space's.)
        if constexpr (std::is_same_v<Scan, search::exhaustive_walk> && !std::is_same_v<Bound, search::no_bound>)
            if (!run.stopping()) run.prove(std::numeric_limits<double>::infinity());
    }
    if (unplaceable_ > 0)
        run.note(std::to_string(unplaceable_) + " solution(s) did not fit the real zones behind H6's merged cells (free GPUs split "
                 "below a replica's TP degree) and were skipped");
    if (const search::link_gaps gaps = search::find_link_gaps(pb, d); gaps.missing > 0) {
        const auto& [a, b] = gaps.first;
        run.note("the network has no link for " + std::to_string(gaps.missing) + " of " + std::to_string(gaps.pairs) +
                 " endpoint pairs (e.g. " + pb.hw.describe(a) + " -> " + pb.hw.describe(b) + "): placements that need one were skipped" +
                 (unlinked_ > 0 ? " (" + std::to_string(unlinked_) + " DP solution(s) had no other)" : std::string{}));
    }
    const search::dp_stats after = solver_stats();
    if (const std::size_t given_up = after.abandoned - before.abandoned; given_up > 0)
        run.note(std::to_string(given_up) + " instance(s) needed more than sailor_options::dp_memory (" + std::to_string(opt_.dp_memory >> 20) +
                 " MiB) for the stage DP and were given up: plans they hold may be missing (raise it, or plan fewer GPUs per zone)");
    run.stats().counters = {{"dp states", after.states - before.states},
                            {"compositions", after.compositions - before.compositions},
                            {"solves over the real zones", real_solves_},
                            {"of them better than the merged zones' plan", real_better_}};
    if constexpr (suspends) {
        run.stats().counters.emplace_back("deferred solves suspended", suspensions_);
        run.stats().counters.emplace_back("of them resumed", solver_.resumed() - resumed_before);
    }
    if (run.best() == std::numeric_limits<double>::infinity() && !run.stopping()) explain_no_plan(run, d);
    plan_result out = run.finish(std::string(name()));
    explain_alternative(out);
    return out;
}

/// Sailor's plan space searched exactly (Sailor §5.2's "DP only", Table 3): every TP degree
/// that fits (no levels), every data-parallel degree (no H3/H4), zones apart (no H6), stages
/// across regions (no H5), boundaries priced exactly. Branch and bound keeps it exact.
template <class Sim = simulator<>>
[[nodiscard]] auto exact_sailor_planner(sailor_options opt = {}, Sim sim = {}) {
    opt.exact_boundaries = true;
    return sailor_planner<Sim>(opt, sim)
        .with_pruners(search::prune::all{search::h2_memory_fit<typename Sim::memory_type>(sim.memory)})
        .with_typing(search::free_tp{})
        .with_scan(search::exhaustive_walk{})
        .with_zones(search::keep_zones{});
}

static_assert(concepts::check_planner<sailor_planner<>>());
#ifdef HETPLAN_SEPARATE_COMPILATION
HETPLAN_PLANNER_INSTANCES(extern, sailor_planner<>);  // made in src/sailor_instances.cpp
#endif

}  // namespace hetplan
