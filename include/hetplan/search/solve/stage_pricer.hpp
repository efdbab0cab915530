#pragma once
// What the stage solvers (the stage DP, the pattern search) charge a stage's compositions, in one
// place: point-to-point messages at a pipeline boundary, the stage's all-reduce and the egress
// of both (Sailor §4.3), priced by the time model (concepts::stage_time_model) and the network's
// egress prices, memoised per instance; and how a partial solution's terms become the
// objective's (the 1F1B formula of cost/time/one_f_one_b.hpp) for solutions and for floors.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "hetplan/cost/time/one_f_one_b.hpp"
#include "hetplan/hardware/collectives.hpp"
#include "hetplan/search/bound/floor_memo.hpp"
#include "hetplan/search/bounded_solve.hpp"
#include "hetplan/search/memo.hpp"
#include "hetplan/search/model_probe.hpp"
#include "hetplan/search/solve/composition.hpp"
#include "hetplan/search/solve/pareto_front.hpp"

namespace hetplan::search {

/// A pipeline boundary's price per microbatch: activations a -> b, gradients b -> a, and the
/// iteration's egress across it. From cells alone (bound_boundary) the slowest pair of cells
/// gives these; the `_lo` ones are what the simulator's pairing of replicas, in whichever real
/// zones behind the cells, cannot go below: every cell used on one side sends to some cell of
/// the other, so the boundary takes at least the largest, over the cells of either side, of
/// that cell's fastest link to the other side; all traffic at the cheapest price.
struct boundary {
    double fwd = 0, bwd = 0;
    double egress = 0;  ///< USD
    double fwd_lo = 0, bwd_lo = 0, egress_lo = 0;
};

/// A stage's all-reduce: its time and the egress of its cross-zone ring edges; where no real
/// zone behind its cells can hold the stage, the floors of a ring across real zones, its time
/// and egress (0 where one can: stage_pricer's spread).
struct ring_price {
    double time = 0, egress = 0;
    double spread = 0, spread_egress = 0;
};

/// The objective's terms of a complete solution whose terms, summed over all stages, are `e`,
/// with `per_replica` microbatches on the busiest replica (Sailor §4.3's 1F1B).
[[nodiscard]] inline objective_terms complete_terms(const suffix_terms& e, int per_replica, bool money, bool measure) {
    objective_terms t;
    t.iteration = one_f_one_b_iteration(e.sum, e.strag, per_replica, e.sync, e.upd);
    t.usd = money ? e.rate * t.iteration + e.comm : 0.0;
    t.measure = measure ? e.mrate * t.iteration : 0.0;
    t.gpus = e.gpus;  // 0 (a floor) unless the search counts them
    return t;
}

/// Whether floors `f` of every term of some solutions (shrunk by the bound's slack first) show
/// that none of them is admitted or beats the cut-off.
template <class O>
[[nodiscard]] bool floors_miss(const O& o, const suffix_terms& f, int per_replica, bool money, bool measure, double cutoff) {
    objective_terms t = complete_terms(f, per_replica, money, measure);
    constexpr double over = 1 + bound_slack;
    t.iteration /= over, t.usd /= over, t.measure /= over;
    return !o.admits(t) || o.value(t) > cutoff;
}

template <class Time>
class stage_pricer {
public:
    explicit stage_pricer(Time tm = {}) : tm_(std::move(tm)) {}

    [[nodiscard]] const Time& time_model() const { return tm_; }
    [[nodiscard]] bool money() const { return money_; }
    /// Whether stage_sync charges a ring no real zone can hold across zones (spread_floor; on
    /// by default). Off: H6's merged links alone.
    void spread_rings(bool on) { spread_ = on; }
    [[nodiscard]] bool spread_rings() const { return spread_; }

    /// Starts an instance: forgets the last one's prices.
    template <class SP>
    void begin(const SP& sp, bool money) {
        money_ = money;
        sync_cache_.clear();
        bound_cache_.clear();
        p2p_cache_.clear();
        if (ring_.capacity() < static_cast<std::size_t>(sp.D)) ring_.reserve(static_cast<std::size_t>(sp.D));
    }

    /// Endpoint of cell `c` at the composition's TP for its type.
    template <class SP>
    [[nodiscard]] static endpoint at(const SP& sp, std::size_t c, const composition& comp) {
        const auto& rc = sp.cells->cells[c];
        return {rc.zone, rc.gpu, comp.tp[rc.type]};
    }

    /// Which cells a composition uses and each type's TP, packed (cache keys).
    template <class SP>
    [[nodiscard]] static std::uint64_t shape(const SP& sp, const composition& c) {
        static_assert(max_cells + 3 * max_types <= 64, "cell mask and TP exponents must pack into 64 bits");
        std::uint64_t mask = 0, tps = 0;
        for (std::size_t q = 0; q < sp.cells->cells.size(); ++q) mask |= std::uint64_t(c.n[q] > 0) << q;
        for (std::size_t t = 0; t < max_types; ++t) tps |= std::uint64_t(std::bit_width(unsigned(c.tp[t]))) << (3 * t);
        return mask | tps << max_cells;
    }

    /// The time model's p2p time for one message of stage `s`'s activations, both ways.
    template <class SP>
    std::pair<double, double> p2p(const SP& sp, int s, endpoint a, endpoint b) {
        const key3 k{std::uint32_t(s), a.key(), b.key()};
        if (const auto* hit = p2p_cache_.find(k)) return *hit;
        const bytes size = sp.stages[static_cast<std::size_t>(s)].activations;
        const std::pair<double, double> v{p2p_time_of(tm_, *sp.pb, a, b, size).value, p2p_time_of(tm_, *sp.pb, b, a, size).value};
        p2p_cache_.insert(k, v);
        return v;
    }

    /// Boundary between stage `s` (composition a) and stage s+1 (composition b): replica k of
    /// one pairs with replica k of the other in worker order, as the simulator pairs them.
    template <class SP>
    boundary exact_boundary(const SP& sp, int s, const composition& a, const composition& b) {
        const auto& net = sp.pb->hw.network;
        const bytes size = sp.stages[static_cast<std::size_t>(s)].activations;
        boundary out;
        std::size_t ca = 0, cb = 0;
        int left_a = 0, left_b = 0, pos = 0;
        while (pos < sp.D) {
            while (left_a == 0) left_a = a.n[ca++];
            while (left_b == 0) left_b = b.n[cb++];
            const int run = std::min(left_a, left_b);
            const endpoint ea = at(sp, ca - 1, a), eb = at(sp, cb - 1, b);
            const auto [f, w] = p2p(sp, s, ea, eb);
            out.fwd = std::max(out.fwd, f);
            out.bwd = std::max(out.bwd, w);
            if (money_ && ea.zone != eb.zone) {
                double mb = 0;
                for (int q = pos; q < pos + run; ++q) mb += sp.microbatches_at(q);
                const bytes moved = size * mb;
                out.egress += (net.egress_price(ea.zone, eb.zone) * moved + net.egress_price(eb.zone, ea.zone) * moved).value;
            }
            left_a -= run;
            left_b -= run;
            pos += run;
        }
        return out;
    }

    /// Upper bound on the boundary from the cells each side uses: the slowest pair of cells, and
    /// all traffic at the dearest cross-zone price when any pair crosses zones. Depends only on
    /// the two shapes.
    template <class SP>
    boundary bound_boundary(const SP& sp, int s, const composition& a, const composition& b) {
        const key3 k{std::uint32_t(s), shape(sp, a), shape(sp, b)};
        if (const auto* hit = bound_cache_.find(k)) return *hit;
        const auto& net = sp.pb->hw.network;
        const bytes size = sp.stages[static_cast<std::size_t>(s)].activations;
        const std::size_t C = sp.cells->cells.size();
        boundary out;
        constexpr double inf = std::numeric_limits<double>::infinity();
        usd_per_byte fwd_price{0}, bwd_price{0}, fwd_least{inf}, bwd_least{inf};
        // Per cell of either side, its fastest link to the other side (forward, backward).
        std::array<std::pair<double, double>, max_cells> from_a, to_b;
        from_a.fill({inf, inf});
        to_b.fill({inf, inf});
        for (std::size_t x = 0; x < C; ++x) {
            if (a.n[x] == 0) continue;
            for (std::size_t y = 0; y < C; ++y) {
                if (b.n[y] == 0) continue;
                const endpoint ea = at(sp, x, a), eb = at(sp, y, b);
                const auto [f, w] = p2p(sp, s, ea, eb);
                out.fwd = std::max(out.fwd, f);
                out.bwd = std::max(out.bwd, w);
                fwd_price = max(fwd_price, net.egress_price(ea.zone, eb.zone));
                bwd_price = max(bwd_price, net.egress_price(eb.zone, ea.zone));
                // The optimistic side over the real zones behind the cells (H6 prices a merged
                // cell by its first zone; the plan's replicas sit in any of them).
                for (const auto& [za, na] : sp.cells->cells[x].zones)
                    for (const auto& [zb, nb] : sp.cells->cells[y].zones) {
                        const auto [fl, wl] = p2p(sp, s, {za, ea.gpu, ea.gpus}, {zb, eb.gpu, eb.gpus});
                        from_a[x] = {std::min(from_a[x].first, fl), std::min(from_a[x].second, wl)};
                        to_b[y] = {std::min(to_b[y].first, fl), std::min(to_b[y].second, wl)};
                        fwd_least = min(fwd_least, net.egress_price(za, zb));
                        bwd_least = min(bwd_least, net.egress_price(zb, za));
                    }
            }
        }
        for (std::size_t x = 0; x < C; ++x)
            for (const auto* side : {&from_a, &to_b})
                if ((*side)[x].first < inf) {
                    out.fwd_lo = std::max(out.fwd_lo, (*side)[x].first);
                    out.bwd_lo = std::max(out.bwd_lo, (*side)[x].second);
                }
        if (money_) {
            const bytes moved = size * double(sp.microbatches);
            out.egress = ((fwd_price + bwd_price) * moved).value;
            out.egress_lo = ((fwd_least + bwd_least) * moved).value;
        }
        bound_cache_.insert(k, out);
        return out;
    }

    /// The stage's all-reduce over its replicas in worker order, priced by the time model, and
    /// the egress of its cross-zone ring edges (§4.3); at least spread_floor where the stage
    /// cannot sit in one real zone. It depends on which cells take part, which hold more than one
    /// replica (edges inside a cell) and the TPs (with D, the counts where at most one cell holds
    /// several): memoised on those.
    template <class SP>
    ring_price stage_sync(const SP& sp, int stage, const composition& c) {
        std::uint32_t multi = 0;
        for (std::size_t q = 0; q < sp.cells->cells.size(); ++q) multi |= std::uint32_t(c.n[q] > 1) << q;
        const key3 k{std::uint32_t(stage), multi, shape(sp, c)};
        if (const auto* hit = sync_cache_.find(k)) return *hit;
        const bytes size = sp.stages[static_cast<std::size_t>(stage)].gradients;
        ring_price out;
        if (sp.D > 1 && size.value > 0) {
            ring_.clear();
            for (std::size_t q = 0; q < sp.cells->cells.size(); ++q)
                for (int r = 0; r < c.n[q]; ++r) ring_.push_back(at(sp, q, c));
            out.time = sync_time_of(tm_, *sp.pb, ring_, size).value;
            const bool spreads = spread_ && spread_over_zones(sp, c);
            if (spreads) out.spread = spread_floor(sp, size);
            out.time = std::max(out.time, out.spread);
            if (money_) {
                const bytes per_edge = collective::ring_all_reduce_bytes_per_edge(sp.D, size);
                std::array<std::uint8_t, max_cells> present{};
                std::size_t n = 0;
                for (std::size_t q = 0; q < sp.cells->cells.size(); ++q)
                    if (c.n[q] > 0) present[n++] = static_cast<std::uint8_t>(q);
                for (std::size_t j = 0; j < n && n >= 2; ++j) {
                    const zone_id za = sp.cells->cells[present[j]].zone, zb = sp.cells->cells[present[(j + 1) % n]].zone;
                    if (za != zb) out.egress += (sp.pb->hw.network.egress_price(za, zb) * per_edge).value;
                }
                if (spreads) out.spread_egress = spread_egress(sp, per_edge);
                out.egress = std::max(out.egress, out.spread_egress);
            }
        }
        sync_cache_.insert(k, out);
        return out;
    }

private:
    /// H6 prices a merged cell's ring at its first zone's links, as if the stage sat in that
    /// zone. Where no real zone behind the cells holds the stage's GPUs on every cell it uses,
    /// each placement of the stage spreads its ring over two real zones or more (random pool
    /// 14: the merged prices ranked first a solution whose rings all crossed zones, 0.52
    /// s/iteration merged, 0.59 laid out). The GPUs are the composition's where at most one
    /// cell holds more than one replica (those counts follow from the cells and D), else two
    /// replicas per such cell (no more than any counts it stands for), so the answer depends on
    /// stage_sync's key alone and the stage DP and the pattern search charge alike. False where
    /// some zone holds it, or no cell is merged; true leaves the real zones' endpoints in
    /// spread_ends_, sorted.
    template <class SP>
    bool spread_over_zones(const SP& sp, const composition& c) {
        const auto& cells = sp.cells->cells;
        const std::size_t C = cells.size();
        int several = 0;
        bool merged = false;
        for (std::size_t q = 0; q < C; ++q) several += c.n[q] > 1, merged = merged || (c.n[q] > 0 && cells[q].zones.size() > 1);
        if (!merged) return false;
        auto need = [&](std::size_t q) { return (several <= 1 ? int(c.n[q]) : std::min<int>(c.n[q], 2)) * c.tp[cells[q].type]; };
        auto holds = [&](zone_id z) {
            for (std::size_t q = 0; q < C; ++q) {
                if (c.n[q] == 0) continue;
                const auto& zs = cells[q].zones;
                const auto it = std::find_if(zs.begin(), zs.end(), [&](const auto& e) { return e.first == z; });
                if (it == zs.end() || it->second < need(q)) return false;
            }
            return true;
        };
        spread_ends_.clear();
        for (std::size_t q = 0; q < C; ++q)
            if (c.n[q] > 0)
                for (const auto& [z, n] : cells[q].zones) {
                    if (holds(z)) return false;
                    spread_ends_.push_back({z, cells[q].gpu, c.tp[cells[q].type]});
                }
        std::sort(spread_ends_.begin(), spread_ends_.end());
        return true;
    }
    /// A spread ring (Sailor §4.3's ring all-reduce, as slow as its slowest edge) has an edge
    /// from some zone to another: the least of those floors (sync_floor_between_of, each zone's
    /// endpoints against the others'; zone_packing_floor's case of a stage in two zones).
    template <class SP>
    double spread_floor(const SP& sp, bytes size) {
        double least = std::numeric_limits<double>::infinity();
        for (auto a = spread_ends_.begin(); a != spread_ends_.end();) {
            const auto a_end = std::find_if(a, spread_ends_.end(), [&](const endpoint& e) { return e.zone != a->zone; });
            spread_rest_.assign(spread_ends_.begin(), a);
            spread_rest_.insert(spread_rest_.end(), a_end, spread_ends_.end());
            if (!spread_rest_.empty()) least = std::min(least, sync_floor_between_of(tm_, *sp.pb, std::span<const endpoint>(a, a_end), spread_rest_, sp.D, size));
            a = a_end;
        }
        return least < std::numeric_limits<double>::infinity() ? least : 0.0;
    }
    /// ... and leaves that zone and comes back: two edges across zones, each carrying the ring's
    /// bytes per edge at no less than the least egress price between two of its zones (USD;
    /// Sailor §4.3's money model charges cross-zone ring edges so).
    template <class SP>
    double spread_egress(const SP& sp, bytes per_edge) const {
        const auto& net = sp.pb->hw.network;
        double least = std::numeric_limits<double>::infinity();
        for (const endpoint& a : spread_ends_)
            for (const endpoint& b : spread_ends_)
                if (a.zone != b.zone) least = std::min(least, (net.egress_price(a.zone, b.zone) * per_edge).value);
        return least < std::numeric_limits<double>::infinity() ? 2 * least : 0.0;
    }

    /// Cache keys: (stage, x, y) in two 64-bit words, no padding, hashed bytewise.
    struct key3 {
        std::uint64_t a = 0, b = 0;
        key3() = default;
        key3(std::uint64_t stage, std::uint64_t x, std::uint64_t y) : a(stage | x << 16), b(y) {}  // stage < 2^16, x < 2^48
        friend bool operator==(const key3&, const key3&) = default;
    };

    Time tm_;
    bool money_ = false, spread_ = true;
    flat_memo<key3, ring_price, bytes_hash<key3>> sync_cache_{256};
    flat_memo<key3, boundary, bytes_hash<key3>> bound_cache_{256};
    flat_memo<key3, std::pair<double, double>, bytes_hash<key3>> p2p_cache_{256};
    std::vector<endpoint> ring_;
    std::vector<endpoint> spread_ends_, spread_rest_;  ///< spread_floor's scratch
};

}  // namespace hetplan::search
