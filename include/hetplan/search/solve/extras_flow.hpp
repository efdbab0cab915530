#pragma once
// The counts behind a sequence of stage patterns (search/solve/pattern_search.hpp): stages whose
// pattern leaves `extras` replicas to spread over two or more cells ("more than one replica
// here") draw them from what the fixed counts left of each cell. A replica on cell c costs its
// stage w GPUs (its type's TP there) and w x the type's USD/s. Whether the extras fit, and at
// what least cost, is a transportation problem: stages supply extras, cells take
// floor(room / w) replicas. With one weight per cell it is a min-cost flow, integral, solved
// exactly by successive shortest paths (Bellman-Ford on the residual graph: at most 2 + K + C
// nodes). Where stages give one cell different weights (a type at TP 1 in one stage and TP 2 in
// another) it is a generalized transportation problem, not integral by itself: solved as a
// small integer program (small_ilp.hpp: simplex and branch and bound); the quick necessary
// test counts such a cell's room at its smallest weight.
// Allocation-free once reserve()d for the largest instance.
#include <algorithm>
#include <array>
#include <cmath>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "hetplan/search/cells.hpp"
#include "hetplan/search/solve/small_ilp.hpp"

namespace hetplan::search {

/// One stage's extras: the cells it may take them from, how many, and per cell the GPUs and
/// USD/s of one replica.
struct extras_demand {
    std::uint32_t cells = 0;
    int extras = 0;
    std::array<std::uint8_t, max_cells> weight{};
    std::array<double, max_cells> price{};
};

class extras_flow {
public:
    using room_t = std::array<int, max_cells>;  ///< GPUs per cell not taken by fixed counts

    /// Room for `stages` demands over `cells` cells; afterwards nothing allocates.
    void reserve(std::size_t stages, std::size_t cells) {
        const std::size_t V = stages + cells + 2;
        dist_.reserve(V);
        via_.reserve(V);
        head_.reserve(V);
        queue_.reserve(V);
        queued_.reserve(V);
        next_.reserve(2 * (stages * cells + stages + cells));
        edges_.reserve(2 * (stages * cells + stages + cells));
    }

    /// A necessary condition, exact with one weight per cell: Hall's condition of the
    /// transportation problem with each cell's room counted at the smallest weight any demand
    /// gives it. Only sets of cells that are unions of the demands' cell sets need a test (the
    /// demands inside such a union need no more replicas than its cells take; any other set of
    /// demands is inside the union of its own cells), and deep pipelines open many stages over
    /// the same few cell sets: 2^M tests for M distinct sets, a flow beyond 12.
    [[nodiscard]] bool may_fit(std::span<const extras_demand> d, const room_t& room, std::size_t C) {
        std::array<int, max_cells> w{};
        std::array<std::uint32_t, max_sets> sets{};
        std::array<long, max_sets> need{};
        std::size_t M = 0;
        for (const extras_demand& x : d)  // every demand's weights first: the flow below needs them all
            for (std::size_t c = 0; c < C; ++c)
                if ((x.cells >> c & 1u) && x.extras > 0) w[c] = w[c] == 0 ? x.weight[c] : std::min<int>(w[c], x.weight[c]);
        for (const extras_demand& x : d) {
            if (x.extras <= 0) continue;
            std::size_t j = 0;
            while (j < M && sets[j] != x.cells) ++j;
            if (j == max_sets) return flow(d, room, C, w, false, {}).has_value();
            if (j == M) sets[M++] = x.cells;
            need[j] += x.extras;
        }
        std::array<int, max_cells> takes{};
        for (std::size_t c = 0; c < C; ++c) takes[c] = w[c] > 0 ? std::max(room[c], 0) / w[c] : 0;
        for (std::uint32_t q = 1; q < (1u << M); ++q) {
            std::uint32_t cells = 0;
            for (std::uint32_t m = q; m != 0; m &= m - 1) cells |= sets[static_cast<std::size_t>(std::countr_zero(m))];
            long in = 0, have = 0;
            for (std::size_t j = 0; j < M; ++j)
                if ((sets[j] & ~cells) == 0) in += need[j];
            for (std::uint32_t m = cells; m != 0; m &= m - 1) have += takes[static_cast<std::size_t>(std::countr_zero(m))];
            if (in > have) return false;
        }
        return true;
    }

    /// The least-cost assignment (any assignment when !money: its cost is then 0), or none when
    /// the extras do not fit (or, where weights differ, when the integer search ran out:
    /// gave_up() says so). `out[k][c]`: extras of demand k on cell c.
    [[nodiscard]] std::optional<double> solve(std::span<const extras_demand> d, const room_t& room, std::size_t C, bool money,
                                              std::span<cell_counts> out) {
        std::array<int, max_cells> w{};
        if (one_weight(d, C, w)) return flow(d, room, C, w, money, out);
        build(d, room, C, money);
        const auto v = ilp_.solve(!money);
        gave_up_ += ilp_.exhausted();
        if (!v) return std::nullopt;
        for (auto& o : out) o.fill(0);
        const auto x = ilp_.solution();
        for (std::size_t j = 0; j < vars_.size(); ++j)
            out[vars_[j].first][vars_[j].second] = static_cast<std::uint16_t>(x[j]);
        return money ? *v : 0.0;
    }

    /// Integer searches that ran out of nodes (their sequences were dropped).
    [[nodiscard]] std::size_t gave_up() const { return gave_up_; }

private:
    static constexpr std::size_t max_sets = 12;  ///< distinct cell sets may_fit enumerates the unions of

    struct edge {
        int to, cap;
        double cost;
    };

    /// Whether every cell has one weight among the demands that may use it (then `w`).
    [[nodiscard]] static bool one_weight(std::span<const extras_demand> d, std::size_t C, std::array<int, max_cells>& w) {
        for (const extras_demand& x : d)
            for (std::size_t c = 0; c < C; ++c) {
                if (!(x.cells >> c & 1u) || x.extras <= 0) continue;
                if (w[c] != 0 && w[c] != x.weight[c]) return false;
                w[c] = x.weight[c];
            }
        return true;
    }

    /// The generalized transportation problem as an integer program: y[k][c] >= 0 extras of
    /// demand k on cell c; each demand's sum is its extras; each cell's GPUs within its room.
    void build(std::span<const extras_demand> d, const room_t& room, std::size_t C, bool money) {
        vars_.clear();
        for (std::size_t k = 0; k < d.size(); ++k)
            for (std::size_t c = 0; c < C; ++c)
                if (d[k].extras > 0 && (d[k].cells >> c & 1u)) vars_.emplace_back(k, c);
        ilp_.reset(vars_.size());  // bounded by the demand rows
        for (std::size_t k = 0; k < d.size(); ++k) {
            if (d[k].extras <= 0) continue;
            const std::size_t r = ilp_.add_row(small_ilp::sense::eq, d[k].extras);
            for (std::size_t j = 0; j < vars_.size(); ++j)
                if (vars_[j].first == k) ilp_.coef(r, j, 1);
        }
        for (std::size_t c = 0; c < C; ++c) {
            bool used = false;
            for (const auto& v : vars_) used |= v.second == c;
            if (!used) continue;
            const std::size_t r = ilp_.add_row(small_ilp::sense::le, room[c]);
            for (std::size_t j = 0; j < vars_.size(); ++j)
                if (vars_[j].second == c) ilp_.coef(r, j, d[vars_[j].first].weight[c]);
        }
        if (money)
            for (std::size_t j = 0; j < vars_.size(); ++j) ilp_.set_cost(j, d[vars_[j].first].price[vars_[j].second]);
    }

    /// Min-cost flow of the demands' extras into the cells at weights `w` (successive shortest
    /// paths, Bellman-Ford on the residual graph); the cost, or none when not everything fits.
    /// Writes per-demand counts to `out` (when given).
    std::optional<double> flow(std::span<const extras_demand> d, const room_t& room, std::size_t C, const std::array<int, max_cells>& w,
                               bool money, std::span<cell_counts> out) {
        const int K = static_cast<int>(d.size());
        const int V = K + static_cast<int>(C) + 2, s = 0, t = V - 1;
        constexpr double inf = std::numeric_limits<double>::infinity();
        edges_.clear();
        auto add = [&](int a, int b, int cap, double cost) {
            edges_.push_back({b, cap, cost});
            edges_.push_back({a, 0, -cost});
        };
        int need = 0;
        for (int k = 0; k < K; ++k) {
            const extras_demand& x = d[static_cast<std::size_t>(k)];
            if (x.extras <= 0) continue;
            need += x.extras;
            add(s, 1 + k, x.extras, 0);
            for (std::size_t c = 0; c < C; ++c)
                if (x.cells >> c & 1u) add(1 + k, 1 + K + int(c), x.extras, money ? x.price[c] : 0.0);
        }
        for (auto& o : out) o.fill(0);
        if (need == 0) return 0.0;
        for (std::size_t c = 0; c < C; ++c)
            if (w[c] > 0 && room[c] >= w[c]) add(1 + K + int(c), t, room[c] / w[c], 0);
        // Adjacency lists over the edge list (edges_[e ^ 1].to is edge e's tail).
        next_.assign(edges_.size(), -1);
        head_.assign(static_cast<std::size_t>(V), -1);
        for (std::size_t e = 0; e < edges_.size(); ++e) {
            const auto from = static_cast<std::size_t>(edges_[e ^ 1].to);
            next_[e] = head_[from];
            head_[from] = static_cast<int>(e);
        }
        int got = 0;
        double cost = 0;
        while (got < need) {
            // Cheapest augmenting path: queue-based Bellman-Ford (a breadth-first search when
            // every cost is 0).
            dist_.assign(static_cast<std::size_t>(V), inf);
            via_.assign(static_cast<std::size_t>(V), -1);
            queued_.assign(static_cast<std::size_t>(V), 0);
            queue_.assign(static_cast<std::size_t>(V), 0);  // a ring: a node is queued at most once at a time
            std::size_t front = 0, size = 1;
            dist_[static_cast<std::size_t>(s)] = 0;
            queue_[0] = s;
            while (size > 0) {
                const auto from = static_cast<std::size_t>(queue_[front]);
                front = (front + 1) % queue_.size(), --size;
                queued_[from] = 0;
                for (int e = head_[from]; e >= 0; e = next_[static_cast<std::size_t>(e)]) {
                    const edge& x = edges_[static_cast<std::size_t>(e)];
                    const auto to = static_cast<std::size_t>(x.to);
                    if (x.cap <= 0) continue;
                    // A strict improvement beyond rounding: residual cycles of cost -1e-18
                    // would otherwise keep the queue going.
                    if (const double nd = dist_[from] + x.cost; nd < dist_[to] - 1e-12 * (1 + std::abs(dist_[to] == inf ? 0.0 : dist_[to]))) {
                        dist_[to] = nd;
                        via_[to] = e;
                        if (!queued_[to]) queued_[to] = 1, queue_[(front + size++) % queue_.size()] = x.to;
                    }
                }
            }
            if (via_[static_cast<std::size_t>(t)] < 0) return std::nullopt;
            int push = need - got;
            for (int v = t; v != s;) {
                const auto e = static_cast<std::size_t>(via_[static_cast<std::size_t>(v)]);
                push = std::min(push, edges_[e].cap);
                v = edges_[e ^ 1].to;
            }
            for (int v = t; v != s;) {
                const auto e = static_cast<std::size_t>(via_[static_cast<std::size_t>(v)]);
                edges_[e].cap -= push;
                edges_[e ^ 1].cap += push;
                cost += push * edges_[e].cost;
                v = edges_[e ^ 1].to;
            }
            got += push;
        }
        // Flow on a stage -> cell edge is the capacity of its reverse edge.
        for (std::size_t e = 0; e < edges_.size() && !out.empty(); e += 2) {
            const int a = edges_[e + 1].to, b = edges_[e].to;
            if (a >= 1 && a <= K && b > K && b < t)
                out[static_cast<std::size_t>(a - 1)][static_cast<std::size_t>(b - 1 - K)] = static_cast<std::uint16_t>(edges_[e + 1].cap);
        }
        return cost;
    }

    std::vector<double> dist_;
    std::vector<int> via_, head_, next_, queue_;
    std::vector<char> queued_;
    std::vector<edge> edges_;
    std::vector<std::pair<std::size_t, std::size_t>> vars_;
    small_ilp ilp_;
    std::size_t gave_up_ = 0;
};

}  // namespace hetplan::search
