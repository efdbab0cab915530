#pragma once
// Exact branch and bound for Sailor's search (concepts::bound): a lower bound on every plan of one
// stage_problem instance, from the stage menus, the pool and the time model, before any DP is
// run. It prunes
// whole instances against the best plan so far, and — as prefix and suffix aggregates —
// partial solutions inside the stage DP. Nothing here is a heuristic: each floor is at most the
// value the simulator (Sailor §4.3) gives any plan of the instance.
//
//   compute   the fastest typing of the stage that could alone supply D replicas from the pool
//   p2p       activations in and gradients out at the time model's fastest p2p_time between any
//             endpoints the neighbouring stages could use
//   straggler the smallest stage time v such that typings no slower than v can serve every
//             stage at once, even fractionally (fractional_assignment_fits, by LP duality)
//   sync      the time model's sync_floor over the endpoints the stage could use (Sailor's: a
//             ring all-reduce on the fastest link, since a ring is as slow as its slowest edge;
//             0 for a model that gives no floor)
//   update    the fastest optimizer step of any typing; over the whole plan, the least step at
//             which the pool serves every stage (as the straggler's test)
//   rate      USD/s of D replicas at the cheapest typing (for the cost objective)
//   zones     where the replicas can sit: by zone group (zone_floor), and how the stages pack
//             into the real zones behind H6's merged cells (zone_packing_floor)
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <ranges>
#include <span>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "hetplan/concepts/bound.hpp"
#include "hetplan/cost/time/one_f_one_b.hpp"
#include "hetplan/search/bound/floor_memo.hpp"
#include "hetplan/search/bound/price_vectors.hpp"
#include "hetplan/search/cells.hpp"
#include "hetplan/search/model_probe.hpp"
#include "hetplan/search/solve/small_ilp.hpp"

namespace hetplan::search {

struct stage_floor {
    double compute = std::numeric_limits<double>::infinity();
    double p2p_in = 0;   ///< gradients sent back to the previous stage, per microbatch
    double p2p_out = 0;  ///< activations sent to the next stage, per microbatch
    double sync = 0;
    double update = std::numeric_limits<double>::infinity();
    double rate = std::numeric_limits<double>::infinity();

    /// Floor of the stage's time per microbatch (compute + p2p), as the pipeline counts it.
    [[nodiscard]] double time() const { return compute + p2p_in + p2p_out; }
};

struct instance_bound {
    std::vector<stage_floor> stages;
    double straggler = std::numeric_limits<double>::infinity();
    /// Floor of the sum of stage times over the whole pipeline (the warm-up term): at least
    /// the stages' own floors summed, and the pool's answer (see make_instance_bound).
    double sum = 0;
    /// Floor of the iteration time at `zoned_per_replica` microbatches per replica from where
    /// the replicas can sit (zone_floor); 0 where it bounds nothing.
    double zoned = 0;
    int zoned_per_replica = 0;
    /// zone_floor's case of whole stages on two groups or more rose because a placement that
    /// changes group once needs a higher threshold than one that changes twice, which pays a
    /// second crossing's transfers (for tests and traces).
    bool crossed_twice = false;
    /// The same from how the stages pack into real zones (zone_packing_floor), at zoned_per_replica.
    double packed = 0;
    /// zone_floor's cases: each its stage-time sum, straggler and the floor of the all-reduce
    /// ring it implies (0: none), so that zoned = zoned_at(the stages' own sync floor), and
    /// zone_packing_floor can take them again with a ring across two real zones
    /// (`spanning_on_zone_cases`).
    struct zone_case {
        double sum, straggler, ring;
    };
    std::vector<zone_case> zone_cases;
    /// Whether zone_packing_floor's case of a stage over two real zones takes zone_floor's cases
    /// (set by the caller, kept across instances); false: the pool-wide floors only (benchmarks).
    bool spanning_on_zone_cases = true;
    /// Whether zone_packing_floor's case of every stage in one zone, where its class counts
    /// leave it at or below the other floors, also asks that the stages be shared out among the
    /// zones, each serving its own from its GPUs (set by the caller, kept across instances);
    /// false: the class counts only (benchmarks).
    bool share_out_zones = true;
    /// That share-out raised the case's straggler threshold in the last instance (for tests
    /// and traces).
    bool zones_shared_out = false;
    /// zone_packing_floor's case of every stage in one zone rose by the changes of zone the
    /// stages need (for tests and traces).
    bool zone_changes_raised = false;
    /// zone_floor's groups (0: none, it bounds nothing), each cell's, and per boundary k the
    /// least straggler floor of a crossing at k or later (infinity past the last; a transfer
    /// that lacks a link counts as 0): a search that knows stage k's groups takes the smaller
    /// of the straggler of the rest kept to those groups and that of a crossing, which starts
    /// from this.
    std::size_t groups = 0;
    std::array<std::uint8_t, max_cells> cell_group{};
    std::vector<double> cross_suffix;
    /// Per boundary k, the fastest transfer across groups forward (k to k+1) and backward
    /// (infinity where no crossing can happen there; 0 where one lacks a link).
    std::vector<double> cross_fwd, cross_bwd;
    /// Aggregates of the floors over stages [0, i) (prefix) and [i, P) (suffix), i = 0..P.
    struct aggregate {
        std::vector<double> sum, strag, sync, update, rate;
    };
    aggregate prefix, suffix;
    /// Scratch, kept between instances: endpoints each stage could use, straggler thresholds.
    using endpoints = boost::container::small_vector<endpoint, 16>;
    std::vector<endpoints> ends;
    std::vector<double> thresholds, update_thresholds;
    /// Each stage's single-type typings (type, TP, compute), which the straggler floor tries.
    struct single {
        std::uint8_t type, tp;
        double compute;
        double update = 0;  ///< its optimizer step
    };
    std::vector<boost::container::small_vector<single, 16>> singles;
    /// The extreme prices of ties between any two singles of one stage (price_vectors.hpp): every
    /// fractional-assignment test of the instance is exact at them.
    price_cache prices;
    /// The most replicas stages with given options draw from a pool (the straggler floor's test
    /// at each threshold; instances of one (P, mbs) repeat it for each D).
    replicas_memo replicas;
    /// The LP of the stage-time sum (pooled_sum_floor) and its variables: (class of stages with
    /// the same options, type, TP) at the fastest compute of a typing with them; each class's
    /// first variable and its stages.
    struct lp_var {
        std::size_t cls, type;
        int tp;
        double cost;
    };
    std::vector<lp_var> lp_vars;
    struct lp_class {
        std::size_t first, vars, stages;
    };
    std::vector<lp_class> lp_classes;
    small_ilp lp;
    /// The LP's floor of the sum (its value plus every stage's p2p floors; 0 where it was not
    /// solved): zone_floor adds a crossing's transfers to it.
    double lp_sum = 0;
    /// Point-to-point times already priced, (from, to) -> seconds per bytes: instances repeat
    /// endpoint pairs and activation sizes (the network lookup and a polynomial link's log2
    /// were a third of a 2-zone search); and the fastest of them between two stages' endpoint
    /// sets, by the sets' ids (with 4 zones and 4 GPU types a boundary tries ~4,000 pairs, and
    /// thousands of instances repeat the same set pairs). Exact (floor_memo.hpp); cleared when the
    /// network or the time model changes.
    seconds_memo p2p_memo{13}, boundary_memo{12};
    /// Stage sync floors by (set id, D) and bytes, in front of sync_memo.
    seconds_memo stage_sync_memo{12};
    endpoint_sets p2p_sets;
    std::vector<std::uint32_t> ends_id;
    /// zone_floor's: the fastest transfer between two stages' endpoint sets across zone groups,
    /// and a stage's sync floor across two groups, by set ids; the group of each zone (they
    /// are forgotten when it changes).
    seconds_memo cross_boundary_memo{11}, cross_sync_memo{11};
    std::vector<std::uint8_t> zone_group, group_scratch;
    std::vector<std::uint64_t> group_scratch_joined;  ///< zone_floor's: per stage, the pairs of groups it may span
    std::vector<std::uint32_t> zone_root;
    std::vector<endpoint> group_ends;  ///< scratch: a stage's endpoints by group
    std::vector<double> cross_ring;    ///< scratch: [stage][group][group] ring floors
    /// zone_floor's: per (stage, typing's types) the pairs of groups (bit g x G + h) whose cells
    /// the pruners keep together in one stage (none_joined: not asked yet), for `joined_cells`
    /// and `joined_pruners`.
    std::vector<std::uint64_t> joins;
    const void *joined_cells = nullptr, *joined_pruners = nullptr;
    /// Whether zone_floor asks (set by the caller, kept across instances); false: every pair of
    /// groups may share a stage (benchmarks).
    bool spans_from_pruners = true;
    static constexpr std::uint64_t none_joined = ~std::uint64_t{0};
    std::vector<double> group_compute; ///< scratch: [stage][group] least compute with a replica there, with one elsewhere, with none there
    /// Scratch of the placement test (make_instance_bound's threshold_placed): stages by their
    /// options, their GPUs at each price, each part's GPUs and load at each price.
    std::vector<std::pair<std::array<int, max_types>, int>> placed_rows;
    std::vector<std::int64_t> placed_cost, placed_have, placed_load;
    /// Scratch of zone_floor's placement with crossings (threshold_placed_crossing): its
    /// thresholds, each distinct row's GPUs at each price, each group's GPUs and GPUs left at
    /// each price (then all groups', summed by its room_for), the rows, each (stage, group,
    /// crossings)'s row, each stage's group.
    std::vector<double> crossing_thresholds;
    std::vector<std::int64_t> crossing_cost, crossing_have, crossing_slack, crossing_rest;
    std::vector<std::array<int, max_types>> crossing_rows;
    std::vector<std::uint32_t> crossing_row_of;
    std::vector<std::uint8_t> crossing_group;
    std::vector<std::pair<double, double>> crossing_cases;  ///< (sum with its transfers, straggler) floors of each crossing
    /// zone_packing_floor's: the fastest transfer from one stage's endpoint set to another's
    /// across real zones, and a stage's sync floor with replicas in two real zones, by set ids
    /// (instances repeat them as zone_floor's do).
    seconds_memo zone_cross_memo{11}, zone_spread_memo{11};
    /// zone_packing_floor's scratch: per boundary the fastest transfer between two real zones
    /// (forward, backward), each stage's allowed TP per type at a threshold, its thresholds.
    std::vector<double> zone_fwd, zone_bwd, zone_thresholds, zone_extra;
    std::vector<std::array<int, max_types>> zone_rows;
    struct zone_class {
        std::array<int, max_types> in, across;
        std::size_t stages, crossing;
    };
    std::vector<zone_class> zone_classes;
    std::vector<std::size_t> zone_room;
    /// Sync floors already priced (sync_floor_memo); mutable: the pattern search prices its
    /// patterns' floors through it.
    mutable sync_floor_memo sync_memo;
    const void* p2p_network = nullptr;
    const void* p2p_model = nullptr;
    /// Forgets the priced transfers (a planner calls it when it starts on a problem).
    void forget_prices() {
        p2p_memo.clear(), boundary_memo.clear(), stage_sync_memo.clear(), p2p_sets.clear(), sync_memo.clear(), replicas.clear();
        cross_boundary_memo.clear(), cross_sync_memo.clear(), zone_group.clear(), joins.clear(), joined_cells = joined_pruners = nullptr;
        zone_cross_memo.clear(), zone_spread_memo.clear();
        p2p_network = p2p_model = nullptr;
    }

    [[nodiscard]] bool feasible() const { return straggler < std::numeric_limits<double>::infinity(); }

    /// Floors of zero for P stages: bounds nothing (the straightforward search).
    [[nodiscard]] static instance_bound zero(std::size_t P) {
        instance_bound b;
        b.stages.assign(P, stage_floor{0, 0, 0, 0, 0, 0});
        b.straggler = 0;
        b.sum = 0;
        for (auto* a : {&b.prefix, &b.suffix})
            for (auto* v : {&a->sum, &a->strag, &a->sync, &a->update, &a->rate}) v->assign(P + 1, 0.0);
        return b;
    }

    /// Lower bound on the iteration time with `per_replica` microbatches on the busiest replica
    /// (Sailor §4.3: warm-up + (m-1) straggler + slowest all-reduce + slowest update).
    [[nodiscard]] double iteration(int per_replica) const {
        if (!feasible()) return std::numeric_limits<double>::infinity();
        const std::size_t P = stages.size();
        const double t = one_f_one_b_iteration(std::max(sum, prefix.sum[P]), straggler, per_replica, prefix.sync[P], prefix.update[P]);
        return per_replica == zoned_per_replica ? std::max({t, zoned, packed}) : t;
    }
    /// The least of zone_floor's cases with every all-reduce at least `sync` (infinity: none).
    [[nodiscard]] double zoned_at(double sync) const {
        const double update = prefix.update.empty() ? 0 : prefix.update.back();
        double least = std::numeric_limits<double>::infinity();
        for (const zone_case& c : zone_cases)
            least = std::min(least, one_f_one_b_iteration(c.sum, c.straggler, zoned_per_replica, std::max(sync, c.ring), update));
        return least;
    }
    /// Lower bound on USD per iteration (GPU time only; egress is never negative).
    [[nodiscard]] double cost(int per_replica) const { return terms_at(iteration(per_replica)).usd; }
    /// The terms of an iteration floor: its time, and the USD of the GPUs at their least rate.
    [[nodiscard]] objective_terms terms_at(double iteration) const {
        return {iteration, feasible() ? prefix.rate[stages.size()] * iteration : std::numeric_limits<double>::infinity(), 0, 0, 0};
    }
};

/// make_instance_bound's default `enough`: no floor is enough, every floor is made as tight as
/// its searches allow.
struct never_enough {
    [[nodiscard]] constexpr bool operator()(double) const { return false; }
};

/// Whether a typing has one GPU type (without std::has_single_bit: a libgcc popcount call here).
[[nodiscard]] constexpr bool single_type(std::uint8_t types) { return types != 0 && (types & (types - 1)) == 0; }

/// Stages with the same options price alike: each distinct row of `allowed` once, with its
/// stages times `per_stage` (a pipeline's middle stages repeat; the test is tried ~10 times for
/// each of thousands of instances).
template <class Allowed>
[[nodiscard]] auto distinct_rows(const Allowed& allowed, std::size_t T, std::int64_t per_stage) {
    boost::container::small_vector<std::pair<std::ranges::range_value_t<Allowed>, std::int64_t>, 32> rows;
    for (const auto& a : allowed) {
        auto same = std::ranges::find_if(rows, [&](const auto& r) { return std::equal(a.begin(), a.begin() + std::ptrdiff_t(T), r.first.begin()); });
        if (same == rows.end()) rows.emplace_back(a, per_stage);
        else same->second += per_stage;
    }
    return rows;
}

/// Whether D replicas per stage can be drawn from the pool even fractionally: stage i may use
/// type t at allowed[i][t] GPUs per replica (0 = not at all), type t has cap[t] GPUs. Exact at
/// `prices`, the extreme price vectors of ties that include those of `allowed`'s rows
/// (price_vectors.hpp: by LP duality, no exactly when some prices make serving every stage
/// dearer than the pool).
template <class Allowed>
[[nodiscard]] bool fractional_assignment_fits(const Allowed& allowed, int D, const std::array<int, max_types>& cap, std::size_t T,
                                              const std::vector<price_vector>& prices) {
    return fits_at_prices(prices, distinct_rows(allowed, T, D), cap, T);
}
/// The same at the cache's prices, through the memo of the most replicas such rows fit
/// (floor_memo.hpp) where its answer is the LP's: a complete list (a capped one, four types with
/// TP ratios of 32 and more, answers for its own ties: a review found 907 against the LP's
/// 862). Not with more than four types: the memo scans every price, the test stops at a failing one.
template <class Allowed>
[[nodiscard]] bool fractional_assignment_fits(const Allowed& allowed, int D, const std::array<int, max_types>& cap, std::size_t T,
                                              const price_cache& prices, replicas_memo& memo) {
    if (!prices.complete() || T > 4) return fractional_assignment_fits(allowed, D, cap, T, prices.last());
    return memo(distinct_rows(allowed, T, 1), cap, T, prices.last()) >= D;
}

/// The same with the prices of `allowed`'s own ties (for a one-off question: it allocates).
template <class Allowed>
[[nodiscard]] bool fractional_assignment_fits(const Allowed& allowed, int D, const std::array<int, max_types>& cap, std::size_t T) {
    price_ties ties;
    for (const auto& a : allowed) ties.add_row(a, T);
    std::vector<price_vector> prices;
    extreme_prices(ties, T, true, prices);
    return fractional_assignment_fits(allowed, D, cap, T, prices);
}

/// A floor of the sum of stage times that sees the pool: the straggler is one of the stages
/// (sum >= every other stage's floor + the straggler floor), and the LP relaxation of the
/// stages' typings over the pool: stage i draws a fraction x of its D replicas from type t at
/// TP k, costing the fastest compute of any typing with t at k (a mixed stage is as slow as its
/// slowest type, so no slower than that), within each type's GPUs. Any plan gives such
/// fractions (its counts / D) at no more than its compute, so the LP's optimum is a floor.
template <class SP>
[[nodiscard]] double pooled_sum_floor(instance_bound& b, const SP& sp, const std::array<int, max_types>& cap, std::size_t T) {
    const std::size_t P = b.stages.size();
    double comm = 0, most = 0;
    for (const stage_floor& f : b.stages) comm += f.p2p_in + f.p2p_out, most = std::max(most, f.time());
    const double with_straggler = b.prefix.sum[P] - most + b.straggler;
    // Variables: (stage, type, TP) that some kept typing uses, at its fastest such typing; an
    // option of a type that takes more GPUs and is no faster than another is left out. Stages
    // with the same options share variables (a class), scaled by their number: averaging an
    // optimum over such stages keeps it feasible and optimal (a pipeline's middle stages
    // repeat, and the simplex was a fifth of a 3-zone search).
    auto& vars = b.lp_vars;
    auto& classes = b.lp_classes;
    vars.clear(), classes.clear();
    for (std::size_t i = 0; i < P; ++i) {
        const std::size_t first = vars.size();
        std::array<std::array<double, 8>, max_types> fastest;
        for (auto& a : fastest) a.fill(std::numeric_limits<double>::infinity());
        for (const auto& ch : sp.stages[i].choices)
            for (std::size_t t = 0; t < T; ++t)
                if (ch.types >> t & 1u) {
                    double& c = fastest[t][static_cast<std::size_t>(std::bit_width(unsigned(ch.tp[t])) - 1)];
                    c = std::min(c, ch.compute.value);
                }
        for (std::size_t t = 0; t < T; ++t) {
            double best = std::numeric_limits<double>::infinity();
            for (std::size_t k = 0; k < 8; ++k)  // ascending TP: keep an option only if faster than every smaller TP
                if (fastest[t][k] < best) best = fastest[t][k], vars.push_back({classes.size(), t, 1 << k, fastest[t][k]});
        }
        const std::size_t n = vars.size() - first;
        auto same = std::ranges::find_if(classes, [&](const instance_bound::lp_class& c) {
            return c.vars == n && std::equal(vars.begin() + std::ptrdiff_t(c.first), vars.begin() + std::ptrdiff_t(c.first + n), vars.begin() + std::ptrdiff_t(first),
                                             [](const auto& x, const auto& y) { return x.type == y.type && x.tp == y.tp && x.cost == y.cost; });
        });
        if (same != classes.end()) ++same->stages, vars.resize(first);
        else classes.push_back({first, n, 1});
    }
    small_ilp& lp = b.lp;
    lp.reset(vars.size());  // x <= 1 follows from each class's row
    for (std::size_t j = 0; j < vars.size(); ++j) lp.set_cost(j, vars[j].cost * double(classes[vars[j].cls].stages));
    for (const auto& c : classes) {
        const std::size_t r = lp.add_row(small_ilp::sense::eq, 1.0);
        for (std::size_t j = c.first; j < c.first + c.vars; ++j) lp.coef(r, j, 1.0);
    }
    for (std::size_t t = 0; t < T; ++t) {
        const std::size_t r = lp.add_row(small_ilp::sense::le, cap[t]);
        for (std::size_t j = 0; j < vars.size(); ++j)
            if (vars[j].type == t) lp.coef(r, j, double(sp.D) * vars[j].tp * double(classes[vars[j].cls].stages));
    }
    const auto v = lp.relaxation();
    if (!v) return std::numeric_limits<double>::infinity();  // the stages cannot be served even fractionally
    b.lp_sum = *v * (1 - 1e-9) + comm;
    return std::max(with_straggler, b.lp_sum);
}

/// The fastest transfer from an endpoint of `from` to one of `to` over the pairs `keep` takes
/// (the zone floors' crossings): infinity where it takes none, 0 where every pair it takes
/// lacks a link (the search notes the link).
template <class Ends, class P2P, class Keep>
[[nodiscard]] double fastest_kept_pair(const Ends& from, const Ends& to, bytes size, const P2P& p2p, const Keep& keep) {
    double best = std::numeric_limits<double>::infinity();
    bool pair = false;
    for (const endpoint& x : from)
        for (const endpoint& y : to)
            if (keep(x, y)) pair = true, best = std::min(best, p2p(x, y, size));
    return !pair ? std::numeric_limits<double>::infinity() : best < std::numeric_limits<double>::infinity() ? best : 0.0;
}

/// The least straggler threshold v >= `from` at which the stages, each whole in one zone group
/// and not all in one, are served by their groups' GPUs, even fractionally (zone_floor's case
/// of a crossing where no stage spans two groups; `parts`: each group's GPUs). threshold_placed
/// places the stages at their own times; here a stage whose neighbour sits in another group
/// sends across groups at that boundary (the fastest transfer across groups, cross_fwd and
/// cross_bwd, in place of its p2p floor), and uses only types its group holds. A placement is
/// a group per stage, searched stage by stage with each group's GPUs left at the instance's prices
/// (which decide the fractional test; the first `most_prices` of them, a necessary condition
/// where there are more); beyond `most_nodes` nodes a test answers yes (a weaker
/// floor, still a floor: the search below never rises past a threshold the exact test admits).
/// Thresholds are tried only while `worth(v)` (monotone: the caller's case still below its
/// others); past them the first one is returned. Infinity: never. `one`: placements with a
/// single crossing only (the group changes once along the pipeline).
template <class SP, class Worth>
[[nodiscard]] double threshold_placed_crossing(instance_bound& b, const SP& sp, std::span<const std::array<int, max_types>> parts, double from,
                                               const Worth& worth, bool one = false) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    constexpr long most_nodes = 1 << 12;
    const std::size_t P = b.stages.size(), G = parts.size(), T = sp.cells->types.size();
    const std::vector<price_vector>& Y = b.prices.last();
    // The first prices only (Hall's come first, all of them up to seven types): any prices give
    // a necessary condition, and a pool of four types with many TP degrees has over a thousand,
    // which every node would update.
    constexpr std::size_t most_prices = 128;
    const std::size_t Yn = std::min(Y.size(), most_prices);
    if (G < 2 || P < 2 || Yn == 0) return from;
    // Stage k's time with option o, a crossing before it (in) and after it (out): the same sum
    // for the candidates and the test.
    auto time = [&](std::size_t k, const instance_bound::single& o, bool in, bool out) {
        const stage_floor& f = b.stages[k];
        return o.compute + (in ? std::max(f.p2p_in, b.cross_bwd[k - 1]) : f.p2p_in) + (out ? std::max(f.p2p_out, b.cross_fwd[k]) : f.p2p_out);
    };
    auto crossable = [&](std::size_t k) { return b.cross_fwd[k] < inf && b.cross_bwd[k] < inf; };
    std::size_t last_crossable = P;  // the last boundary a pipeline may cross (P: none)
    for (std::size_t k = 0; k + 1 < P; ++k) last_crossable = crossable(k) ? k : last_crossable;
    if (last_crossable == P) return inf;
    auto& have = b.crossing_have;
    have.assign(G * Yn, 0);  // [group][price]
    for (std::size_t g = 0; g < G; ++g)
        for (std::size_t y = 0; y < Yn; ++y)
            for (std::size_t t = 0; t < T; ++t) have[g * Yn + y] += Y[y][t] * parts[g][t];
    auto& cost = b.crossing_cost;  // [row][price]: D replicas' GPUs at the row's cheapest type
    auto& rows = b.crossing_rows;  // the distinct rows (least TP per type; 0: not allowed)
    auto& row_of = b.crossing_row_of;  // [stage][group][crossings]: its row (none: no option)
    constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    auto& slack = b.crossing_slack;  // [group][price], then all groups: GPUs left at the price
    auto& at = b.crossing_group;
    at.assign(P, 0);
    auto placed = [&](double v) {
        rows.clear();
        row_of.assign(P * G * 4, none);
        for (std::size_t k = 0; k < P; ++k)
            for (std::size_t g = 0; g < G; ++g)
                for (int c = 0; c < 4; ++c) {
                    const bool in = c & 1, out = c & 2;
                    if ((in && k == 0) || (out && k + 1 == P)) continue;
                    std::array<int, max_types> row{};
                    bool any = false;
                    for (const auto& o : b.singles[k])
                        if (parts[g][o.type] > 0 && time(k, o, in, out) <= v) {
                            row[o.type] = row[o.type] == 0 ? o.tp : std::min<int>(row[o.type], o.tp);
                            any = true;
                        }
                    if (!any) continue;
                    // A pipeline's middle stages repeat: each distinct row priced once.
                    auto same = std::ranges::find(rows, row);
                    if (same == rows.end()) rows.push_back(row), same = rows.end() - 1;
                    row_of[(k * G + g) * 4 + std::size_t(c)] = static_cast<std::uint32_t>(same - rows.begin());
                }
        cost.resize(rows.size() * Yn);
        for (std::size_t r = 0; r < rows.size(); ++r)
            for (std::size_t y = 0; y < Yn; ++y) cost[r * Yn + y] = cheapest_at(Y[y], rows[r], T) * sp.D;
        slack.resize((G + 1) * Yn);
        std::copy(have.begin(), have.end(), slack.begin());
        long nodes = 0;
        // D replicas of stage k in its group, with crossings where its neighbours sit elsewhere
        // (the next stage's group chosen); null where the group has no option for it.
        auto row_cost = [&](std::size_t k) -> const std::int64_t* {
            const std::size_t g = at[k];
            const bool in = k > 0 && at[k - 1] != g, out = k + 1 < P && at[k + 1] != g;
            const std::uint32_t r = row_of[(k * G + g) * 4 + std::size_t(in) + 2 * std::size_t(out)];
            return r == none ? nullptr : &cost[r * Yn];
        };
        // Stages [k, P) at their cheapest row anywhere (rest[k]), against the GPUs all groups
        // have left: a necessary condition that cuts placements early.
        auto& rest = b.crossing_rest;
        rest.assign((P + 1) * Yn, 0);
        for (std::size_t k = P; k-- > 0;)
            for (std::size_t y = 0; y < Yn; ++y) {
                std::int64_t least = std::numeric_limits<std::int64_t>::max();
                for (std::size_t g = 0; g < G; ++g)  // without crossings (a crossing only drops options)
                    if (const std::uint32_t r = row_of[k * G * 4 + g * 4]; r != none) least = std::min(least, cost[r * Yn + y]);
                const std::int64_t after = rest[(k + 1) * Yn + y];
                rest[k * Yn + y] = least == std::numeric_limits<std::int64_t>::max() || after == std::numeric_limits<std::int64_t>::max() ? std::numeric_limits<std::int64_t>::max() : after + least;
            }
        // Slack kept rather than load, and tested by or-ing sign bits: loops without branches
        // or 64-bit compares, which vectorise at -O3 (this DFS led the start-up's profile).
        auto add = [&](std::size_t g, const std::int64_t* c, std::int64_t sign) {
            std::int64_t* s = &slack[g * Yn];
            std::int64_t over = 0;
            const std::size_t n = Yn;  // local: the compiler cannot tell a store through s from a change to Yn
            for (std::size_t y = 0; y < n; ++y) over |= (s[y] -= sign * c[y]);
            return over >= 0;
        };
        auto room_for = [&](std::size_t k) {  // stages [k, P) could still fit, all groups together
            const std::int64_t* r = &rest[k * Yn];
            if (r[0] == std::numeric_limits<std::int64_t>::max()) return false;  // a stage no group serves (at every price)
            // All groups' GPUs left, summed here rather than kept: add then touches one group.
            std::int64_t* pooled = &slack[G * Yn];
            const std::size_t n = Yn;
            std::copy_n(slack.begin(), n, pooled);
            for (std::size_t g = 1; g < G; ++g)
                for (std::size_t y = 0; y < n; ++y) pooled[y] += slack[g * n + y];
            std::int64_t over = 0;  // (called only where every group fits, so pooled >= 0: no overflow)
            for (std::size_t y = 0; y < n; ++y) over |= pooled[y] - r[y];
            return over >= 0;
        };
        // Groups of stages [0, k) chosen, stages [0, k-1) charged to theirs; `split`: two
        // groups used so far.
        auto place = [&](auto&& self, std::size_t k, bool split) -> bool {
            if (++nodes > most_nodes) return true;
            if (!split && k >= 1 && last_crossable < k - 1) return false;  // one group to the end
            if (k == P) {
                const std::int64_t* c = row_cost(P - 1);
                if (!split || !c) return false;
                const bool fits = add(at[P - 1], c, 1);
                add(at[P - 1], c, -1);
                return fits;
            }
            // The previous stage's group first: placements that stay are found sooner.
            for (std::size_t j = 0, from_g = k == 0 ? 0 : at[k - 1]; j < G; ++j) {
                const std::size_t g = (from_g + j) % G;
                at[k] = static_cast<std::uint8_t>(g);
                if (k == 0) {
                    if (self(self, 1, false)) return true;
                    continue;
                }
                if (at[k - 1] != g && (!crossable(k - 1) || (one && split))) continue;
                const std::int64_t* c = row_cost(k - 1);
                if (!c) continue;
                const bool fits = add(at[k - 1], c, 1);
                const bool found = fits && room_for(k) && self(self, k + 1, split || at[k - 1] != g);
                add(at[k - 1], c, -1);
                if (found) return true;
            }
            return false;
        };
        return place(place, 0, false);
    };
    // Most answers are `from` itself (the zone floor's second search, with one crossing, starts
    // where the first ended): tested before the other thresholds are collected.
    const bool tried = worth(from);
    if (tried && placed(from)) return from;
    auto& thresholds = b.crossing_thresholds;
    thresholds.clear();
    for (std::size_t k = 0; k < P; ++k)
        for (const auto& o : b.singles[k])
            for (int c = 0; c < 4; ++c) {
                const bool in = c & 1, out = c & 2;
                if ((in && (k == 0 || !crossable(k - 1))) || (out && (k + 1 == P || !crossable(k)))) continue;
                if (const double v = time(k, o, in, out); v > from) thresholds.push_back(v);
            }
    thresholds.push_back(from);
    std::sort(thresholds.begin(), thresholds.end());
    thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
    // Only thresholds the caller still finds worth testing (monotone: a prefix); past them the
    // first one is floor enough.
    const auto worth_end = std::partition_point(thresholds.begin(), thresholds.end(), worth);
    const auto it = std::partition_point(thresholds.begin() + (tried ? 1 : 0), worth_end, [&](double v) { return !placed(v); });
    return it == thresholds.end() ? inf : *it;
}

/// A floor of the iteration time from where the replicas can sit (b.zoned). The cells fall into
/// zone groups (the real zones the cells link: a cell's zone; with H6, its region's merged zones).
/// The simulator pairs worker k of a stage with worker k of the next and takes a boundary at its
/// slowest pair. Either some pair crosses groups, from g to another — then both stages beside it
/// take the fastest transfer across groups, the one in g computing with a typing g holds, the other
/// with one held outside g, and either every stage sits whole in one group (the stages placed on
/// the groups so that each group's GPUs serve its own; a placement that changes group twice
/// pays a second crossing's transfers) or some stage's ring crosses — or none does:
/// every pipeline stays in one group, so a group S uses holds the same number d_g >= 1 of every
/// stage's replicas, the d_g summing to D (the straggler threshold at which each group of S serves
/// its d_g; the union of S's GPUs is a weaker test) and, where S has two groups, each stage's
/// all-reduce ring crosses between two of them. The floor is the least over these cases. The other
/// floors price a stage's transfers and its ring each at the fastest link, which holds only within
/// one zone, and the pool as a whole. A crossing transfer that lacks a link counts as 0 (the search
/// notes the link). The cases with a stage in two groups take only pairs of groups whose cells
/// the pruners keep in one stage (stage_problem::keeps; with H5 and H6's regions, none).
template <class SP, class Time, class P2P, class Threshold, class Placed, class Enough>
void zone_floor(instance_bound& b, const SP& sp, const Time& tm, const P2P& p2p, const Threshold& threshold_with, const Placed& threshold_placed,
                const Enough& enough) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    constexpr std::uint8_t none = 0xff;
    constexpr std::size_t most_groups = 6;  // 63 sets of groups
    b.zoned = 0;
    b.zoned_per_replica = 0;
    b.groups = 0;
    b.crossed_twice = false;
    b.zone_cases.clear();
    const auto& cells = sp.cells->cells;
    const problem& pb = *sp.pb;
    const std::size_t P = b.stages.size();
    // Groups: the real zones that cells link (a cell H6 merged spans several; cells that share a
    // zone share a group, as two types' cells of one region do when one type is missing from a
    // zone), so workers in two groups always sit in two zones.
    const std::size_t Z = pb.hw.zones.size();
    auto& root = b.zone_root;
    root.resize(Z);
    for (std::size_t z = 0; z < Z; ++z) root[z] = static_cast<std::uint32_t>(z);
    auto find = [&](std::size_t z) {
        while (root[z] != z) z = root[z] = root[root[z]];
        return z;
    };
    for (const auto& c : cells) {
        if (c.zone.index() >= Z) return;
        for (const auto& [z, n] : c.zones) {
            if (z.index() >= Z) return;
            const std::size_t x = find(c.zone.index()), y = find(z.index());
            root[std::max(x, y)] = static_cast<std::uint32_t>(std::min(x, y));
        }
    }
    auto& group = b.group_scratch;
    group.assign(Z, none);
    std::array<std::size_t, max_cells> rep{};
    auto& cell_group = b.cell_group;
    std::size_t G = 0;
    for (std::size_t c = 0; c < cells.size(); ++c) {
        const std::size_t r = find(cells[c].zone.index());
        std::size_t g = 0;
        while (g < G && rep[g] != r) ++g;
        if (g == G) {
            if (G == most_groups) return;
            rep[G++] = r;
        }
        cell_group[c] = static_cast<std::uint8_t>(g);
        group[cells[c].zone.index()] = static_cast<std::uint8_t>(g);
        for (const auto& [z, n] : cells[c].zones) group[z.index()] = static_cast<std::uint8_t>(g);
    }
    if (G < 2) return;
    if (group != b.zone_group) b.cross_boundary_memo.clear(), b.cross_sync_memo.clear(), b.joins.clear(), b.zone_group.swap(group);
    auto group_of = [&](const endpoint& e) { return b.zone_group[e.zone.index()]; };

    const double sum = std::max(b.sum, b.prefix.sum[P]), sync = b.prefix.sync[P], update = b.prefix.update[P];
    const int m = sp.per_replica;
    double least = inf;
    // Each stage's least compute with a replica in group g (a typing with a GPU type g holds),
    // with one outside g (a type held elsewhere) and with none in g (every type held elsewhere:
    // a typing has a replica of each of its types), among the typings the pool can serve D
    // replicas of (as the stage's own floor counts).
    std::array<std::uint32_t, most_groups> types_in{}, types_out{};
    std::array<int, max_types> cap{};
    for (std::size_t c = 0; c < cells.size(); ++c)
        if (cells[c].capacity > 0) types_in[cell_group[c]] |= 1u << cells[c].type, cap[cells[c].type] += cells[c].capacity;
    for (std::size_t g = 0; g < G; ++g)
        for (std::size_t h = 0; h < G; ++h)
            if (h != g) types_out[g] |= types_in[h];
    auto& least_compute = b.group_compute;  // [stage][group][in, out, none in]
    least_compute.assign(P * G * 3, inf);
    for (std::size_t k = 0; k < P; ++k)
        for (const auto& ch : sp.stages[k].choices) {
            int supply = 0;
            for (std::size_t t = 0; t < sp.cells->types.size(); ++t)
                if (ch.types >> t & 1u) supply += cap[t] / ch.tp[t];
            if (supply < sp.D) continue;
            for (std::size_t g = 0; g < G; ++g) {
                double* at = &least_compute[(k * G + g) * 3];
                if (ch.types & types_in[g]) at[0] = std::min(at[0], ch.compute.value);
                if (ch.types & types_out[g]) at[1] = std::min(at[1], ch.compute.value);
                if ((ch.types & ~types_out[g]) == 0) at[2] = std::min(at[2], ch.compute.value);
            }
        }
    auto in_g = [&](std::size_t k, std::size_t g) { return least_compute[(k * G + g) * 3]; };
    auto out_g = [&](std::size_t k, std::size_t g) { return least_compute[(k * G + g) * 3 + 1]; };
    auto none_g = [&](std::size_t k, std::size_t g) { return least_compute[(k * G + g) * 3 + 2]; };
    // Some boundary with a pair of workers across groups, one in g: both stages take the
    // fastest transfer between g and the rest, both ways (the pair's, or a slower one); the
    // one with g computes with a typing g holds, the other with one held outside g. `from_g`:
    // the endpoint of `from` in g and that of `to` outside it, or the reverse; infinity where
    // no such pair exists, 0 where every such pair lacks a link (the search notes the link).
    auto across = [&](std::size_t from, std::size_t to, bytes size, std::size_t g, bool from_g) {
        auto price = [&] {
            return fastest_kept_pair(b.ends[from], b.ends[to], size, p2p,
                                     [&](const endpoint& x, const endpoint& y) { return (group_of(x) == g) == from_g && (group_of(y) == g) != from_g; });
        };
        const std::uint32_t a = b.ends_id[from], c = b.ends_id[to];
        if (a == endpoint_sets::none || c == endpoint_sets::none) return price();
        return b.cross_boundary_memo((std::uint64_t{a} << 32) | (std::uint64_t{c} << 8) | (std::uint64_t{from_g} << 7) | g, size.value, price);
    };
    // Which groups one stage may span: the pruners may keep a stage's replicas apart (H5,
    // Sailor §4.2.1: in one region; H6 makes each region one group), and then no case may put
    // one stage in two groups (random pool 152's P = 17, D = 14: 1.543 s/iteration with a stage
    // over both regions, which H5 forbids; its plans take over 1.7).
    const std::uint64_t all_pairs = G * G >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << (G * G)) - 1;
    auto& joined = b.group_scratch_joined;
    joined.assign(P, all_pairs);
    if constexpr (requires { sp.keeps(0, 0u, std::uint8_t{0}); }) {
        if (b.spans_from_pruners) {
            if (b.joined_cells != sp.cells || b.joined_pruners != sp.pruners) b.joins.clear(), b.joined_cells = sp.cells, b.joined_pruners = sp.pruners;
            constexpr std::size_t masks = std::size_t{1} << max_types;
            for (std::size_t k = 0; k < P; ++k) {
                if (b.joins.size() < (k + 1) * masks) b.joins.resize((k + 1) * masks, instance_bound::none_joined);
                std::uint64_t any = 0;
                for (const auto& ch : sp.stages[k].choices) {
                    std::uint64_t& pairs = b.joins[k * masks + ch.types];
                    if (pairs == instance_bound::none_joined) {
                        pairs = 0;
                        for (std::size_t c = 0; c < cells.size(); ++c)
                            for (std::size_t e = c + 1; e < cells.size(); ++e) {
                                const std::size_t g = cell_group[c], h = cell_group[e];
                                if (g == h || !(ch.types >> cells[c].type & 1u) || !(ch.types >> cells[e].type & 1u)) continue;
                                if ((pairs >> (g * G + h) & 1u) == 0 && sp.keeps(static_cast<int>(k), (1u << c) | (1u << e), ch.types))
                                    pairs |= (std::uint64_t{1} << (g * G + h)) | (std::uint64_t{1} << (h * G + g));
                            }
                    }
                    any |= pairs;
                }
                joined[k] = any;
            }
        }
    }
    // A stage's ring over two or more groups has an edge from one to another: its floor over
    // such edges, per stage and ordered pair of groups, and the least of them (`spans`).
    auto& ring = b.cross_ring;
    const bool spread = sp.D >= 2;
    double spans = inf;
    if (spread) {
        ring.assign(P * G * G, inf);
        auto& split = b.group_ends;
        for (std::size_t k = 0; k < P; ++k) {
            split.assign(b.ends[k].begin(), b.ends[k].end());
            // In place (a floor over pairs needs no order within a group).
            std::sort(split.begin(), split.end(), [&](const endpoint& x, const endpoint& y) { return group_of(x) < group_of(y); });
            auto in = [&](std::size_t q) {  // the group's endpoints
                const auto first = std::partition_point(split.begin(), split.end(), [&](const endpoint& e) { return group_of(e) < q; });
                const auto last = std::partition_point(first, split.end(), [&](const endpoint& e) { return group_of(e) <= q; });
                return std::span<const endpoint>{first, last};
            };
            for (std::size_t g = 0; g < G; ++g)
                for (std::size_t h = 0; h < G; ++h) {
                    if (g == h || !(joined[k] >> (g * G + h) & 1u)) continue;
                    const std::span<const endpoint> from = in(g), to = in(h);
                    if (from.empty() || to.empty()) continue;
                    const bytes size = sp.stages[k].gradients;
                    auto price = [&] { return sync_floor_between_of(tm, pb, from, to, sp.D, size); };
                    const std::uint32_t id = b.ends_id[k];
                    const std::uint64_t key = (std::uint64_t{id} << 32) | (std::uint64_t(unsigned(sp.D) & 0xfffffu) << 8) | (g << 4) | h;
                    ring[(k * G + g) * G + h] = id == endpoint_sets::none || sp.D > 0xfffff ? price() : b.cross_sync_memo(key, size.value, price);
                    spans = std::min(spans, ring[(k * G + g) * G + h]);
                }
        }
    }
    // Each group's GPUs, and the least straggler threshold at which every stage, whole in one
    // group, is served by its group's GPUs (the plans where no stage spans two groups).
    std::array<std::array<int, max_types>, most_groups> pools{};
    for (std::size_t c = 0; c < cells.size(); ++c) pools[cell_group[c]][cells[c].type] += cells[c].capacity;
    double placed = threshold_placed(std::span<const std::array<int, max_types>>{pools.data(), G});
    b.cross_suffix.assign(P, inf);
    b.crossing_cases.clear();
    double second = inf;  // the least a crossing's transfers add to the sum, at any boundary
    b.cross_fwd.assign(P, inf);
    b.cross_bwd.assign(P, inf);
    for (std::size_t k = 0; k + 1 < P; ++k) {
        const bytes size = sp.stages[k].activations;
        const stage_floor &a = b.stages[k], &c = b.stages[k + 1];
        for (std::size_t g = 0; g < G; ++g)
            for (const bool before : {true, false}) {  // the pair's worker in g on stage k, or on stage k+1
                const double fwd = across(k, k + 1, size, g, before), bwd = across(k + 1, k, size, g, !before);
                if (!(fwd < inf && bwd < inf)) continue;
                b.cross_fwd[k] = std::min(b.cross_fwd[k], fwd);
                b.cross_bwd[k] = std::min(b.cross_bwd[k], bwd);
                const double mine = before ? in_g(k, g) : out_g(k, g), next = before ? out_g(k + 1, g) : in_g(k + 1, g);
                const double strag = std::max(mine + a.p2p_in + fwd, next + bwd + c.p2p_out);
                // The pattern search's cases are by set of groups: g on one side only, the
                // other side with no replica in g.
                const double set_mine = before ? mine : none_g(k, g), set_next = before ? none_g(k + 1, g) : next;
                b.cross_suffix[k] = std::min(b.cross_suffix[k], std::max(set_mine + a.p2p_in + fwd, set_next + bwd + c.p2p_out));
                // The crossing's transfers replace the two p2p floors in the stage-time sum: on
                // top of the stages' own floors with the typings beside it, or of the LP's.
                const double across_extra = std::max(0.0, fwd - a.p2p_out) + std::max(0.0, bwd - c.p2p_in);
                second = std::min(second, across_extra);
                const double with = std::max(b.prefix.sum[P] + (mine - a.compute) + (next - c.compute) + (fwd - a.p2p_out) + (bwd - c.p2p_in),
                                             b.lp_sum + across_extra);
                // With a crossing, either no stage spans two groups (each is served by its
                // group's GPUs) or one does, and its ring crosses.
                const double total = std::max(sum, with), slowest = std::max(b.straggler, strag);
                if (placed < inf) b.crossing_cases.push_back({with, slowest});
                if (spans < inf) {
                    least = std::min(least, one_f_one_b_iteration(total, slowest, m, std::max(sync, spans), update));
                    b.zone_cases.push_back({total, slowest, spans});
                }
            }
    }
    for (std::size_t k = P - 1; k-- > 0;) b.cross_suffix[k] = std::min(b.cross_suffix[k], b.cross_suffix[k + 1]);
    // No crossing: every stage over the same groups S, each holding the same share of every
    // stage's replicas.
    for (unsigned S = 1; S < (1u << G); ++S) {
        const int n = std::popcount(S);
        if (n > sp.D) continue;
        // Every stage has replicas in each group of S: each pair of them joined in one stage.
        std::uint64_t within = 0;
        for (std::size_t g = 0; g < G; ++g)
            for (std::size_t h = 0; h < G; ++h)
                if (g != h && (S >> g & 1u) && (S >> h & 1u)) within |= std::uint64_t{1} << (g * G + h);
        if (std::any_of(joined.begin(), joined.end(), [&](std::uint64_t j) { return (j & within) != within; })) continue;
        std::array<std::array<int, max_types>, most_groups> parts{};
        for (std::size_t g = 0, q = 0; g < G; ++g)
            if (S >> g & 1u) parts[q++] = pools[g];
        const double strag = threshold_with(std::span<const std::array<int, max_types>>{parts.data(), static_cast<std::size_t>(n)});
        if (!(strag < inf)) continue;
        double ring_floor = 0;
        if (n >= 2)
            for (std::size_t k = 0; k < P; ++k) {
                double fastest = inf;
                for (std::size_t g = 0; g < G; ++g)
                    for (std::size_t h = 0; h < G; ++h)
                        if (g != h && (S >> g & 1u) && (S >> h & 1u)) fastest = std::min(fastest, ring[(k * G + g) * G + h]);
                if (fastest < inf) ring_floor = std::max(ring_floor, fastest);
            }
        least = std::min(least, one_f_one_b_iteration(sum, std::max(b.straggler, strag), m, std::max(sync, ring_floor), update));
        b.zone_cases.push_back({sum, std::max(b.straggler, strag), ring_floor});
    }
    // A crossing where no stage spans two groups: each sits in one, and the stages beside a
    // group change send across (threshold_placed_crossing, from the crossing floors above),
    // searched only while the case stays below the others.
    // A placement that changes group twice or more pays a second crossing's transfers, at
    // another boundary (`extra`: `second`), on top of the first's.
    auto crossing_case = [&](double v, double extra) {
        double at = inf;
        for (const auto& [with, slowest] : b.crossing_cases)
            at = std::min(at, one_f_one_b_iteration(std::max(sum, with + extra), std::max(slowest, v), m, sync, update));
        return at;
    };
    // crossing_case, its crossings also kept as cases (no ring across groups). A threshold the
    // searches below return is one no placement of the case goes under, so it stands for the
    // case at any sync floor, searched out or not.
    auto keep_case = [&](double v, double extra) {
        if (!(v < inf)) return inf;  // no such plan
        for (const auto& [with, slowest] : b.crossing_cases) b.zone_cases.push_back({std::max(sum, with + extra), std::max(slowest, v), 0.0});
        return crossing_case(v, extra);
    };
    // A threshold is worth testing while its case stays below `under` and is not yet enough for
    // the caller (the least threshold past them still gives a floor: exact where it is not
    // enough, and enough where it is).
    auto worth_under = [&](double under) {
        return [&, under](double v) {
            const double at = crossing_case(v, 0);
            return at < under && !enough(at);
        };
    };
    const std::span<const std::array<int, max_types>> held{pools.data(), G};
    if (const double lowest = placed < inf ? crossing_case(placed, 0) : inf; !(lowest < least) || enough(lowest)) {
        least = std::min(least, lowest);  // above the other cases, or enough at its least threshold: no placement searched
        keep_case(placed, 0);
    } else {
        placed = threshold_placed_crossing(b, sp, held, std::max(placed, b.straggler), worth_under(least));
        if (placed < inf && second > 0 && second < inf && crossing_case(placed, second) > crossing_case(placed, 0)) {
            // Either the group changes once (its own least threshold, at or above this one)
            // or at least twice (this threshold, a second crossing's transfers).
            const double twice = keep_case(placed, second), bound = std::min(least, twice);
            const double once = threshold_placed_crossing(b, sp, held, placed, worth_under(bound), true);
            const double either = std::min(twice, keep_case(once, 0));
            b.crossed_twice = crossing_case(placed, 0) < least && either > crossing_case(placed, 0);
            least = std::min(least, either);
        } else if (placed < inf) {
            least = std::min(least, keep_case(placed, 0));  // (inf: no such plan)
        }
    }
    b.zoned = least;
    b.zoned_per_replica = m;
    b.groups = G;
}

/// A floor from how the stages pack into the real zones (a cell H6 merged spans several; the
/// other floors price its boundaries and rings at its fastest zone's links, as if a region held
/// every stage in one zone). Either some stage has replicas in two real zones, and its ring
/// crosses between them, or every stage sits in one zone. Then at a straggler threshold v a zone
/// holds at most N_z stages (its GPUs at each type's least TP among options no slower than v,
/// over D replicas), so the stages need u zones at least; with u >= 2 the pipeline has u runs of
/// stages in one zone or more, each with a stage beside a crossing, which sends across zones
/// (its time with the fastest cross-zone transfer on one side). v is the least threshold at which
/// P - u stages at their options and u at their crossing options can be served from the pool
/// (fractional_assignment_fits); the pipeline's u - 1 changes of zone add their transfers to the
/// stage-time sum (and a higher threshold may need fewer zones). The floor, b.packed, is the
/// lesser of the two cases. `threshold_placed(parts)` (make_instance_bound's): the least
/// straggler threshold at which every stage, whole in one of the parts, is served by its part's
/// GPUs (infinity: none).
template <class SP, class Time, class P2P, class Placed>
void zone_packing_floor(instance_bound& b, const SP& sp, const Time& tm, const P2P& p2p, const std::array<int, max_types>& cap,
                        const Placed& threshold_placed) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    constexpr std::size_t most_zones = 16;
    const problem& pb = *sp.pb;
    const std::size_t P = b.stages.size(), T = sp.cells->types.size();
    b.zones_shared_out = false;
    if (!b.feasible()) return;
    // GPUs per type in each real zone the cells hold (numbered in order of appearance).
    std::array<zone_id, most_zones> zones_held{};
    std::array<std::array<int, max_types>, most_zones> zcap{};
    std::size_t Z = 0;
    for (const auto& c : sp.cells->cells)
        for (const auto& [z, n] : c.zones) {
            if (n <= 0) continue;
            std::size_t q = 0;
            while (q < Z && zones_held[q] != z) ++q;
            if (q == Z) {
                if (Z == most_zones) return;  // a floor left out, never a wrong one
                zones_held[Z++] = z;
            }
            zcap[q][c.type] += n;
        }
    if (Z < 2) return;
    // The fastest transfer across real zones at each boundary, both ways (infinity: no pair
    // of endpoints in two zones; 0 where every such pair lacks a link, as zone_floor counts it).
    auto cross_zones = [&](std::size_t from, std::size_t to, bytes size) {
        auto price = [&] { return fastest_kept_pair(b.ends[from], b.ends[to], size, p2p, [](const endpoint& x, const endpoint& y) { return x.zone != y.zone; }); };
        const std::uint32_t a = b.ends_id[from], c = b.ends_id[to];
        if (a == endpoint_sets::none || c == endpoint_sets::none) return price();
        return b.zone_cross_memo((std::uint64_t{a} << 32) | c, size.value, price);
    };
    b.zone_fwd.assign(P, inf), b.zone_bwd.assign(P, inf);
    for (std::size_t k = 0; k + 1 < P; ++k) {
        const bytes size = sp.stages[k].activations;
        if (k > 0 && size.value == sp.stages[k - 1].activations.value && b.ends[k] == b.ends[k - 1] && b.ends[k + 1] == b.ends[k]) {
            b.zone_fwd[k] = b.zone_fwd[k - 1], b.zone_bwd[k] = b.zone_bwd[k - 1];
            continue;
        }
        b.zone_fwd[k] = cross_zones(k, k + 1, size), b.zone_bwd[k] = cross_zones(k + 1, k, size);
    }
    // A stage's time with an option: in a zone (p2p floors both ways), or beside a crossing.
    auto in_time = [&](std::size_t k, const instance_bound::single& o) { return o.compute + b.stages[k].p2p_in + b.stages[k].p2p_out; };
    auto cross_time = [&](std::size_t k, const instance_bound::single& o) {
        const double right = k + 1 < P ? b.stages[k].p2p_in + b.zone_fwd[k] : inf, left = k > 0 ? b.zone_bwd[k - 1] + b.stages[k].p2p_out : inf;
        return o.compute + std::min(right, left);
    };
    // The options within a threshold change only at these; below the straggler floor, the
    // floor itself stands for them.
    auto& thresholds = b.zone_thresholds;
    thresholds.assign(1, b.straggler);
    for (std::size_t k = 0; k < P; ++k)
        for (const auto& o : b.singles[k])
            for (const double t : {in_time(k, o), cross_time(k, o)})
                if (t > b.straggler && t < inf) thresholds.push_back(t);
    std::sort(thresholds.begin(), thresholds.end());
    thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
    // Whether every stage in one zone can have its straggler at v. Stages alike (the same
    // options within v, in a zone and beside a crossing) form a class; each class's stages need
    // as many zones as its GPUs per zone allow, and some u of the stages cross, in any classes.
    using row = std::array<int, max_types>;  // least TP per type among a stage's options (0: none)
    auto& classes = b.zone_classes;
    // The zones u the stages need at v (0: some stage has no option, or a zone too few), the
    // classes left in `classes`.
    auto zones_needed = [&](double v) -> std::size_t {
        classes.clear();
        for (std::size_t k = 0; k < P; ++k) {
            row in{}, across{};
            auto least = [](int& w, int tp) { w = w == 0 ? tp : std::min(w, tp); };
            for (const auto& o : b.singles[k]) {
                if (in_time(k, o) <= v) least(in[o.type], o.tp);
                if (cross_time(k, o) <= v) least(across[o.type], o.tp);
            }
            if (std::ranges::all_of(in, [](int w) { return w == 0; })) return 0;
            auto same = std::ranges::find_if(classes, [&](const auto& c) { return c.in == in && c.across == across; });
            if (same == classes.end()) classes.push_back({in, across, 1, 0});
            else ++same->stages;
        }
        // Zones each class needs for its stages, and all stages at the least demanding row
        // (0 when a zone cannot hold them all).
        auto zones_for = [&](const row& in, std::size_t stages) -> std::size_t {
            std::array<std::size_t, most_zones> held_in{};  // stages each zone can hold
            for (std::size_t z = 0; z < Z; ++z) {
                long replicas = 0;
                for (std::size_t t = 0; t < T; ++t)
                    if (in[t] > 0) replicas += zcap[z][t] / in[t];
                held_in[z] = static_cast<std::size_t>(replicas / sp.D);
            }
            std::sort(held_in.begin(), held_in.begin() + std::ptrdiff_t(Z), std::greater<>());
            std::size_t zones = 0, hosted = 0;
            while (zones < Z && hosted < stages) hosted += held_in[zones++];
            return hosted < stages ? 0 : zones;
        };
        row every = classes.front().in;
        for (const auto& c : classes)
            for (std::size_t t = 0; t < T; ++t) every[t] = every[t] == 0 || c.in[t] == 0 ? std::max(every[t], c.in[t]) : std::min(every[t], c.in[t]);
        std::size_t u = zones_for(every, P);
        for (const auto& c : classes) {
            const std::size_t need = zones_for(c.in, c.stages);
            if (need == 0 || u == 0) return 0;
            u = std::max(u, need);
        }
        return u;
    };
    auto packs = [&](double v) {
        const std::size_t u = zones_needed(v);
        if (u == 0) return false;
        if (u < 2) return true;
        // u stages beside a crossing: try every split of them over the classes.
        auto& rows = b.zone_rows;
        auto fits_with = [&] {
            rows.clear();
            for (const auto& c : classes)
                for (std::size_t q = 0; q < c.stages; ++q) rows.push_back(q < c.crossing ? c.across : c.in);
            return fractional_assignment_fits(rows, sp.D, cap, T, b.prices.last());
        };
        // Stages of classes [k, end) that can cross: a split that cannot place the rest stops.
        auto& room = b.zone_room;
        room.assign(classes.size() + 1, 0);
        for (std::size_t k = classes.size(); k-- > 0;)
            room[k] = room[k + 1] + (std::ranges::any_of(classes[k].across, [](int w) { return w > 0; }) ? classes[k].stages : 0);
        auto split = [&](auto& self, std::size_t at, std::size_t left) -> bool {
            if (left > room[at]) return false;
            if (at == classes.size()) return fits_with();
            const bool can = room[at] > room[at + 1];
            for (std::size_t n = 0; n <= (can ? std::min(left, classes[at].stages) : 0); ++n) {
                classes[at].crossing = n;
                if (self(self, at + 1, left - n)) return true;
            }
            return false;
        };
        return split(split, 0, std::min(u, P));
    };
    // packs(v) is a necessary condition for a plan of straggler v or less with every stage in
    // one zone, so it holds at every threshold from such a plan's straggler on (below it, not
    // always monotone: classes merge as v grows); the search never lands above that straggler.
    auto it = std::partition_point(thresholds.begin(), thresholds.end(), [&](double v) { return !packs(v); });
    const int m = sp.per_replica;
    const double sum = std::max(b.sum, b.prefix.sum[P]), sync = b.prefix.sync[P], update = b.prefix.update[P];
    const double now = std::max(one_f_one_b_iteration(sum, b.straggler, m, sync, update), b.zoned_per_replica == m ? b.zoned : 0.0);
    // Stages over u zones change zone u - 1 times along the pipeline at least, each at a
    // boundary whose transfers then cross zones: the u - 1 least of what that adds to the
    // stage-time sum (over the stages' own floors or the LP's, as zone_floor adds a crossing).
    auto& extra = b.zone_extra;
    extra.assign(1, 0.0);
    for (std::size_t k = 0; k + 1 < P; ++k)
        if (b.zone_fwd[k] < inf && b.zone_bwd[k] < inf)
            extra.push_back(std::max(0.0, b.zone_fwd[k] - b.stages[k].p2p_out) + std::max(0.0, b.zone_bwd[k] - b.stages[k + 1].p2p_in));
    std::sort(extra.begin() + 1, extra.end());
    for (std::size_t j = 1; j < extra.size(); ++j) extra[j] += extra[j - 1];  // the j least, summed
    const double own = std::max(b.prefix.sum[P], b.lp_sum);
    auto over = [&](std::size_t u, double v) {
        return one_f_one_b_iteration(std::max(sum, own + extra[std::min(u - 1, extra.size() - 1)]), v, m, sync, update);
    };
    // A plan's straggler s has the options of the threshold at or below it, so its zones are
    // at least that threshold's u: the least over thresholds from the first that packs, each
    // with its u, while a higher straggler alone could still be below.
    // `whole`: no plan of the case has its straggler below it.
    auto least_over = [&](double whole) {
        double least = inf;
        for (auto t = it; t != thresholds.end() && one_f_one_b_iteration(sum, std::max(*t, whole), m, sync, update) < least; ++t) {
            const std::size_t u = zones_needed(*t);
            if (u == 0) continue;  // no plan has its straggler here (never at the first: it packs)
            least = std::min(least, over(u, std::max(*t, whole)));
            if (u < 2) break;
        }
        return least;
    };
    double whole = 0, one_zone = least_over(whole);
    // The classes count on each zone alone, so two classes may count on one zone's GPUs: where
    // that leaves the case at or below the other floors, the stages are also shared out among
    // the zones, each whole in one and served by its zone's GPUs (threshold_placed, as
    // zone_floor places them on its groups: random pool 100's P = 12, D = 16 packs 12 stages of
    // 16 replicas by classes, but its three zones hold 3, 3 and 5 of them whole at its cut-off's
    // straggler).
    if (b.share_out_zones && one_zone <= now && it != thresholds.end()) {
        const double placed = threshold_placed(std::span<const std::array<int, max_types>>{zcap.data(), Z});
        if (placed > *it) {
            b.zones_shared_out = true, whole = placed;
            // From the threshold whose options a plan of straggler `whole` has, at `whole` at least.
            it = std::prev(std::upper_bound(it, thresholds.end(), whole));
            one_zone = least_over(whole);  // (infinity where `whole` is)
        }
    }
    b.zone_changes_raised = it != thresholds.end() && whole < inf && one_zone > one_f_one_b_iteration(sum, std::max(*it, whole), m, sync, update);
    if (one_zone <= now) return;
    // Some stage's replicas in two zones: its ring has an edge from the lower zone to another.
    double spread = inf;
    auto& split = b.group_ends;
    for (std::size_t k = 0; k < P && sp.D >= 2; ++k) {
        if (k > 0 && b.ends[k] == b.ends[k - 1] && sp.stages[k].gradients.value == sp.stages[k - 1].gradients.value) continue;
        const bytes size = sp.stages[k].gradients;
        auto price = [&] {
            double least = inf;
            split.assign(b.ends[k].begin(), b.ends[k].end());
            std::sort(split.begin(), split.end(), [](const endpoint& x, const endpoint& y) { return x.zone < y.zone; });
            for (auto a = split.begin(); a != split.end();) {
                const auto a_end = std::find_if(a, split.end(), [&](const endpoint& e) { return e.zone != a->zone; });
                if (a_end != split.end())
                    least = std::min(least, sync_floor_between_of(tm, pb, std::span<const endpoint>(a, a_end), std::span<const endpoint>(a_end, split.end()), sp.D, size));
                a = a_end;
            }
            return least;
        };
        const std::uint32_t id = b.ends_id[k];
        spread = std::min(spread, id == endpoint_sets::none ? price() : b.zone_spread_memo((std::uint64_t{id} << 32) | unsigned(sp.D), size.value, price));
    }
    // Its all-reduce is at least `spread` in each of zone_floor's cases too (where the replicas
    // sit by zone group, with their crossings): random pool 191's P = 16, D = 12 cannot hold
    // every stage whole in a zone, and its floor rose from 1.855 (the pool-wide straggler) to
    // 1.934 s/iteration.
    double two_zones = spread < inf ? one_f_one_b_iteration(sum, b.straggler, m, std::max(sync, spread), update) : inf;
    if (spread < inf && b.spanning_on_zone_cases && b.zoned_per_replica == m && b.zoned > 0) two_zones = std::max(two_zones, b.zoned_at(std::max(sync, spread)));
    if (b.zoned_per_replica != m) b.zoned = 0;
    b.packed = std::min(one_zone, two_zones);
    b.zoned_per_replica = m;
}

/// Fills `b` for an instance `sp` (a stage_problem), reusing its buffers; `tm` is the time model
/// the stage DP prices with. `pooled_sum`: also the LP floor of the sum of stage times (a
/// simplex per instance) and zone_floor; a search that only ranks candidates can leave them out.
/// `enough(iteration)`: whether a floor that high drops the instance for the caller (its
/// cut-off); zone_floor's placement searches stop at such a case, so the floor is the full one
/// where the full one is not enough, and enough where it is.
template <class SP, class Time, class Enough = never_enough>
void make_instance_bound(instance_bound& b, const SP& sp, const Time& tm, bool pooled_sum = true, const Enough& enough = {}) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    b.lp_sum = 0;
    const auto& cells = sp.cells->cells;
    const problem& pb = *sp.pb;
    const std::size_t T = sp.cells->types.size();
    const std::size_t P = static_cast<std::size_t>(sp.P);
    std::array<int, max_types> cap{};
    for (const auto& c : cells) cap[c.type] += c.capacity;

    b.stages.assign(P, stage_floor{});
    b.straggler = inf;
    b.sum = 0;
    b.zoned = 0, b.packed = 0, b.zoned_per_replica = 0, b.groups = 0, b.crossed_twice = false, b.zone_changes_raised = false;
    // Endpoints (cell, TP) each stage's typings could place a replica on.
    auto& ends = b.ends;
    if (ends.size() < P) ends.resize(P);
    if (b.singles.size() < P) b.singles.resize(P);
    for (std::size_t i = 0; i < P; ++i) {
        ends[i].clear();
        b.singles[i].clear();
        std::array<std::uint8_t, max_types> tps{};  // TP degrees (bit log2 + 1) each type takes in some typing
        stage_floor& f = b.stages[i];
        for (const auto& ch : sp.stages[i].choices) {
            if (single_type(ch.types)) {
                const auto t = static_cast<std::uint8_t>(std::countr_zero(unsigned(ch.types)));
                b.singles[i].push_back({t, ch.tp[t], ch.compute.value, ch.update.value});
            }
            int supply = 0;
            double cheapest = inf;
            for (std::size_t t = 0; t < T; ++t) {
                if (!(ch.types >> t & 1u)) continue;
                supply += cap[t] / ch.tp[t];
                cheapest = std::min(cheapest, ch.tp[t] * sp.usd_per_gpu_second[t]);
            }
            for (std::size_t t = 0; t < T; ++t)
                if (ch.types >> t & 1u) tps[t] |= std::uint8_t(1u << std::bit_width(unsigned(ch.tp[t])));
            if (supply < sp.D) continue;
            f.compute = std::min(f.compute, ch.compute.value);
            f.update = std::min(f.update, ch.update.value);
            f.rate = std::min(f.rate, cheapest * sp.D);
        }
        // Every real zone behind a cell (H6 merges them for the search; a plan's replicas sit in
        // the real ones, so floors come from their links).
        for (const auto& c : cells)
            for (std::uint8_t m = tps[c.type]; m != 0; m &= std::uint8_t(m - 1))
                for (const auto& [z, n] : c.zones) ends[i].push_back({z, c.gpu, 1 << (std::countr_zero(unsigned(m)) - 1)});
        if (!(f.compute < inf)) return;  // some stage can never be served: infeasible
    }

    // Fastest transfer between two endpoint sets; neighbouring boundaries usually repeat.
    if (b.p2p_network != &pb.hw.network || b.p2p_model != &tm) {
        b.forget_prices();
        b.p2p_network = &pb.hw.network, b.p2p_model = &tm;
    }
    auto p2p = [&](const endpoint& x, const endpoint& y, bytes size) {
        const std::uint64_t pair = (std::uint64_t{x.key()} << 32) | y.key();
        return b.p2p_memo(pair, size.value, [&] { return p2p_time_of(tm, pb, x, y, size).value; });
    };
    b.ends_id.resize(P);
    for (std::size_t i = 0; i < P; ++i) b.ends_id[i] = b.p2p_sets.intern({ends[i].data(), ends[i].size()});
    auto fastest = [&](std::size_t from, std::size_t to, bytes size) {
        auto price = [&] {
            double best = inf;
            for (const endpoint& x : ends[from])
                for (const endpoint& y : ends[to]) best = std::min(best, p2p(x, y, size));
            return best;
        };
        const std::uint32_t a = b.ends_id[from], c = b.ends_id[to];
        if (a == endpoint_sets::none || c == endpoint_sets::none) return price();
        return b.boundary_memo((std::uint64_t{a} << 32) | c, size.value, price);
    };
    for (std::size_t i = 0; i + 1 < P; ++i) {
        const bytes size = sp.stages[i].activations;
        const bool repeat = i > 0 && size.value == sp.stages[i - 1].activations.value && ends[i] == ends[i - 1] &&
                            ends[i + 1] == ends[i];
        b.stages[i].p2p_out = repeat ? b.stages[i - 1].p2p_out : fastest(i, i + 1, size);
        b.stages[i + 1].p2p_in = repeat ? b.stages[i].p2p_in : fastest(i + 1, i, size);
    }

    // Straggler: the smallest threshold on stage time (singleton typings' compute plus the
    // stage's p2p floor) at which the pool can serve every stage; monotone in the threshold.
    // Candidates and the test use the same sum, term for term: a threshold computed in another
    // order can round one ulp below its own typing and shut it out (it did, on GPT-Neo-2.7).
    auto stage_time = [&](std::size_t i, const instance_bound::single& ch) { return ch.compute + b.stages[i].p2p_in + b.stages[i].p2p_out; };
    auto& thresholds = b.thresholds;
    thresholds.clear();
    for (std::size_t i = 0; i < P; ++i)
        for (const auto& ch : b.singles[i]) thresholds.push_back(stage_time(i, ch));
    std::sort(thresholds.begin(), thresholds.end());
    thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
    {
        price_ties ties;
        for (std::size_t i = 0; i < P; ++i)
            for (const auto& x : b.singles[i])
                for (const auto& y : b.singles[i]) ties.tie(x.type, x.tp, y.type, y.tp);
        (void)b.prices(ties, T, true);
    }
    // Stage i's least TP per type among its singles no slower than v (0: not allowed); false
    // when none is.
    auto allowed_at = [&](std::size_t i, double v, std::array<int, max_types>& row) {
        row.fill(0);
        bool any = false;
        for (const auto& ch : b.singles[i]) {
            if (stage_time(i, ch) > v) continue;
            row[ch.type] = row[ch.type] == 0 ? ch.tp : std::min<int>(row[ch.type], ch.tp);
            any = true;
        }
        return any;
    };
    auto serves_all = [&](double v, const std::array<int, max_types>& pool, int D) {
        boost::container::small_vector<std::array<int, max_types>, 64> allowed(P);
        for (std::size_t i = 0; i < P; ++i)
            if (!allowed_at(i, v, allowed[i])) return false;
        return fractional_assignment_fits(allowed, D, pool, T, b.prices, b.replicas);
    };
    const auto it = std::partition_point(thresholds.begin(), thresholds.end(), [&](double v) { return !serves_all(v, cap, sp.D); });
    if (it == thresholds.end()) return;

    // Sync: the fastest uniform ring over endpoints the stage could use.
    for (std::size_t i = 0; i < P && sp.D > 1; ++i) {
        if (i > 0 && ends[i] == ends[i - 1] && sp.stages[i].gradients.value == sp.stages[i - 1].gradients.value) {
            b.stages[i].sync = b.stages[i - 1].sync;
            continue;
        }
        auto price = [&] { return b.sync_memo(tm, pb, {ends[i].data(), ends[i].size()}, sp.D, sp.stages[i].gradients); };
        const std::uint32_t id = b.ends_id[i];  // already interned: no second pass over the set
        b.stages[i].sync = id == endpoint_sets::none ? price() : b.stage_sync_memo((std::uint64_t{id} << 32) | unsigned(sp.D), sp.stages[i].gradients.value, price);
    }

    for (auto* a : {&b.prefix, &b.suffix})
        for (auto* v : {&a->sum, &a->strag, &a->sync, &a->update, &a->rate}) v->assign(P + 1, 0.0);
    double strag = 0;
    for (std::size_t i = 0; i < P; ++i) {
        const stage_floor& f = b.stages[i];
        strag = std::max(strag, f.time());
        b.prefix.sum[i + 1] = b.prefix.sum[i] + f.time();
        b.prefix.strag[i + 1] = std::max(b.prefix.strag[i], f.time());
        b.prefix.sync[i + 1] = std::max(b.prefix.sync[i], f.sync);
        b.prefix.update[i + 1] = std::max(b.prefix.update[i], f.update);
        b.prefix.rate[i + 1] = b.prefix.rate[i] + f.rate;
    }
    for (std::size_t i = P; i-- > 0;) {
        const stage_floor& f = b.stages[i];
        b.suffix.sum[i] = b.suffix.sum[i + 1] + f.time();
        b.suffix.strag[i] = std::max(b.suffix.strag[i + 1], f.time());
        b.suffix.sync[i] = std::max(b.suffix.sync[i + 1], f.sync);
        b.suffix.update[i] = std::max(b.suffix.update[i + 1], f.update);
        b.suffix.rate[i] = b.suffix.rate[i + 1] + f.rate;
    }
    b.straggler = std::max(*it, strag);
    b.sum = pooled_sum ? std::max(b.prefix.sum[P], pooled_sum_floor(b, sp, cap, T)) : b.prefix.sum[P];
    // Where replicas sit, with the LP: the tight floors of instances that reach the front.
    if (!pooled_sum) return;
    // The slowest optimizer step, as the straggler: the least step at which the pool serves
    // every stage with singles whose step is within it (a stage's step is its slowest type's,
    // so a replica of type t at TP k takes at least that single's). Where the pool is short of
    // GPUs for the larger TP degrees, some stage takes a smaller one, whose step is longer.
    {
        auto& steps = b.update_thresholds;
        steps.clear();
        for (std::size_t i = 0; i < P; ++i)
            for (const auto& ch : b.singles[i]) steps.push_back(ch.update);
        std::sort(steps.begin(), steps.end());
        steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
        auto steps_within = [&](double u) {
            boost::container::small_vector<std::array<int, max_types>, 64> allowed(P);
            for (std::size_t i = 0; i < P; ++i) {
                allowed[i].fill(0);
                bool any = false;
                for (const auto& ch : b.singles[i])
                    if (ch.update <= u) allowed[i][ch.type] = allowed[i][ch.type] == 0 ? ch.tp : std::min<int>(allowed[i][ch.type], ch.tp), any = true;
                if (!any) return false;
            }
            return fractional_assignment_fits(allowed, sp.D, cap, T, b.prices, b.replicas);
        };
        const auto u = std::partition_point(steps.begin(), steps.end(), [&](double v) { return !steps_within(v); });
        if (u != steps.end()) b.prefix.update[P] = std::max(b.prefix.update[P], *u);
    }
    // The least threshold at which parts of the pool serve every stage, each part whole
    // replicas of every stage (at least one) and together D: zone_floor's groups when no
    // pipeline crosses between them (infinity: never). Monotone in the threshold.
    auto threshold_with = [&](std::span<const std::array<int, max_types>> parts) {
        std::array<int, max_types> all{};
        for (const auto& p : parts)
            for (std::size_t t = 0; t < T; ++t) all[t] += p[t];
        const auto whole = all == cap ? it : std::partition_point(it, thresholds.end(), [&](double v) { return !serves_all(v, all, sp.D); });
        if (parts.size() < 2 || whole == thresholds.end()) return whole == thresholds.end() ? inf : *whole;
        const int most = sp.D - static_cast<int>(parts.size()) + 1;  // the others take one each
        auto split = [&](double v) {
            int total = 0;
            for (const auto& p : parts) {
                int lo = 0, hi = most;  // the most replicas p serves at v (serving is monotone in them)
                while (lo < hi) {
                    const int mid = (lo + hi + 1) / 2;
                    if (serves_all(v, p, mid)) lo = mid;
                    else hi = mid - 1;
                }
                if (lo == 0) return false;
                total += lo;
            }
            return total >= sp.D;
        };
        const auto at = std::partition_point(whole, thresholds.end(), [&](double v) { return !split(v); });
        return at == thresholds.end() ? inf : *at;
    };
    // The least threshold at which every stage, whole in one of the parts, is served by its
    // part's GPUs, even fractionally: stages with the same options at the threshold form a
    // class, and every split of each class's count over the parts is tried against the
    // instance's prices (any prices give a necessary condition; these decide the fractional
    // test), a part's load rising as classes are added. Beyond `most_splits` splits: yes (the
    // pool as a whole, which serves them from `it` on; a weaker test, still a floor, and not
    // monotone then, so the search may stop below the exact answer). Infinity: never.
    auto threshold_placed = [&](std::span<const std::array<int, max_types>> parts) {
        constexpr double most_splits = 1 << 14;
        const std::size_t G = parts.size();
        const std::vector<price_vector>& Y = b.prices.last();
        auto& cls = b.placed_rows;  // (row, stages)
        auto& cost = b.placed_cost;  // [class][price]: the cheapest GPUs of one replica at the price
        auto& have = b.placed_have;  // [part][price]
        auto& load = b.placed_load;  // [part][price]
        have.assign(G * Y.size(), 0);
        for (std::size_t g = 0; g < G; ++g)
            for (std::size_t y = 0; y < Y.size(); ++y)
                for (std::size_t t = 0; t < T; ++t) have[g * Y.size() + y] += Y[y][t] * parts[g][t];
        auto placed = [&](double v) {
            cls.clear();
            for (std::size_t i = 0; i < P; ++i) {
                std::array<int, max_types> row;
                if (!allowed_at(i, v, row)) return false;
                auto same = std::ranges::find_if(cls, [&](const auto& c) { return c.first == row; });
                if (same == cls.end()) cls.push_back({row, 1});
                else ++same->second;
            }
            double splits = 1;
            for (const auto& [row, n] : cls)
                for (std::size_t q = 1; q < G; ++q) splits = splits * double(n + q) / double(q);
            if (splits > most_splits) return true;  // the pool as a whole serves them from `it` on
            cost.assign(cls.size() * Y.size(), 0);
            for (std::size_t j = 0; j < cls.size(); ++j)
                for (std::size_t y = 0; y < Y.size(); ++y) cost[j * Y.size() + y] = cheapest_at(Y[y], cls[j].first, T) * sp.D;
            load.assign(G * Y.size(), 0);
            // Class j's stages, `left` of them still to place, over parts g.. (the last takes the rest).
            auto place = [&](auto&& self, std::size_t j, std::size_t g, int left) -> bool {
                if (j == cls.size()) return true;
                const int first = g + 1 == G ? left : 0;
                const std::size_t Yn = Y.size();
                std::int64_t* l = &load[g * Yn];
                const std::int64_t *c = &cost[j * Yn], *h = &have[g * Yn];
                for (int n = first; n <= left; ++n) {
                    // Tested before it is added: most tries fail at a few prices (2,048 GPUs of
                    // four types have over a thousand), and a failure ends the loop.
                    std::size_t y = 0;
                    while (y < Yn && l[y] + c[y] * n <= h[y]) ++y;
                    if (y < Yn) return false;  // more of the class only adds to the part's load
                    for (y = 0; y < Yn; ++y) l[y] += c[y] * n;
                    const bool found = g + 1 == G ? self(self, j + 1, 0, j + 1 < cls.size() ? cls[j + 1].second : 0) : self(self, j, g + 1, left - n);
                    for (y = 0; y < Yn; ++y) l[y] -= c[y] * n;
                    if (found) return true;
                }
                return false;
            };
            return place(place, 0, 0, cls.empty() ? 0 : cls[0].second);
        };
        const auto at = std::partition_point(it, thresholds.end(), [&](double v) { return !placed(v); });
        return at == thresholds.end() ? inf : *at;
    };
    zone_floor(b, sp, tm, p2p, threshold_with, threshold_placed, enough);
    zone_packing_floor(b, sp, tm, p2p, cap, threshold_placed);
}



/// The bound piece of Sailor's planner: the instance's floors (computed with the instance).
struct instance_floors {
    [[nodiscard]] static constexpr const char* name() { return "instance floors"; }
    template <class SP>
    [[nodiscard]] objective_terms floor(const problem&, const SP& sp) const {
        return sp.bound.terms_at(sp.bound.iteration(sp.per_replica));
    }
};

/// No bound: every candidate is solved in full, and the DP compares only the terms a partial
/// solution already has (the straightforward search, the tests' reference).
struct no_bound {
    [[nodiscard]] static constexpr const char* name() { return "no bound"; }
    template <class C>
    [[nodiscard]] objective_terms floor(const problem&, const C&) const { return {}; }
};

}  // namespace hetplan::search
