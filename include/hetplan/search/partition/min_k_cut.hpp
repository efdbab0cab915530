#pragma once
// Min-k-cut by SPLIT (Saran & Vazirani 1995), as Zorse's Phase 1 uses it (Zorse §3.3.2):
// repeatedly take the lightest minimum 2-cut over the current components (Stoer-Wagner) and
// remove its edges; within 2 - 2/k of the optimal k-cut. Every step splits one
// component in two (both sides of a minimum cut are connected), so one pass yields a nested
// partition for every k from the number of connected components up to n. Each component's
// minimum cut is computed once and cached; a step computes only the cuts of its two halves, so
// the pass costs the sum of O(n_c^3) over the components created, not O(n^4) for every k (the
// public implementation recomputes SPLIT from scratch for each k).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "hetplan/core/error.hpp"
#include "hetplan/core/stop.hpp"

namespace hetplan::search {

/// Undirected graph with non-negative edge weights, stored as a dense symmetric matrix (the
/// bandwidth graphs of Zorse are complete).
class weighted_graph {
public:
    explicit weighted_graph(int n = 0) : n_(n), w_(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0.0) {
        if (n < 0) throw input_error("weighted graph: negative vertex count");
    }
    [[nodiscard]] int size() const { return n_; }
    [[nodiscard]] double weight(int i, int j) const { return w_[index(i, j)]; }
    void set(int i, int j, double v) {
        if (!(v >= 0) || !std::isfinite(v)) throw input_error("weighted graph: edge weights must be finite and >= 0, got " + std::to_string(v));
        if (i == j) return;
        w_[index(i, j)] = w_[index(j, i)] = v;
    }
    /// Total weight of the edges between the vertex sets marked true and false.
    [[nodiscard]] double cut(const std::vector<bool>& side) const {
        double c = 0;
        for (int i = 0; i < n_; ++i)
            for (int j = i + 1; j < n_; ++j)
                if (side[static_cast<std::size_t>(i)] != side[static_cast<std::size_t>(j)]) c += weight(i, j);
        return c;
    }

private:
    [[nodiscard]] std::size_t index(int i, int j) const {
        if (i < 0 || j < 0 || i >= n_ || j >= n_) throw input_error("weighted graph: vertex out of range");
        return static_cast<std::size_t>(i) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(j);
    }
    int n_;
    std::vector<double> w_;
};

/// A minimum 2-cut of the subgraph induced by `vertices` (at least two): the cut's weight and
/// which of them lie on each side.
struct two_cut {
    double weight = 0;
    std::vector<int> side_a, side_b;  ///< vertices of the graph, increasing; side a holds the smallest
};

namespace detail {
inline two_cut ordered_cut(double weight, const std::vector<int>& vertices, const std::vector<bool>& on_a) {
    two_cut out;
    out.weight = weight;
    for (std::size_t a = 0; a < vertices.size(); ++a) (on_a[a] ? out.side_a : out.side_b).push_back(vertices[a]);
    std::sort(out.side_a.begin(), out.side_a.end());
    std::sort(out.side_b.begin(), out.side_b.end());
    if (out.side_a.front() > out.side_b.front()) std::swap(out.side_a, out.side_b);
    return out;
}
}  // namespace detail

/// Stoer-Wagner (1997) on a dense matrix: n - 1 maximum-adjacency phases of O(n^2) each, O(n^3)
/// in all, nothing allocated inside a phase. Live vertices stay packed in the first rows and
/// columns (a merged-away vertex's slot takes the last live one), and each step is two
/// branch-free passes over them: add the chosen vertex's row to the keys, find the maximum. The bandwidth
/// graphs are complete, where Boost.Graph's heap-based version (boost_minimum_two_cut, in
/// search/partition/boost_min_cut.hpp)
/// only adds work. Ties go to the lowest slot: deterministic.
[[nodiscard]] inline two_cut minimum_two_cut(const weighted_graph& g, const std::vector<int>& vertices) {
    const std::size_t n = vertices.size();
    if (n < 2) throw input_error("minimum 2-cut: needs at least two vertices");
    std::vector<double> w(n * n);
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b) w[a * n + b] = a == b ? 0.0 : g.weight(vertices[a], vertices[b]);
    // Slot i holds the merged vertex whose members are the chain first[i], next[first[i]], ...
    std::vector<std::size_t> first(n), last_of(n), next(n, n);
    std::iota(first.begin(), first.end(), 0);
    std::iota(last_of.begin(), last_of.end(), 0);
    std::vector<double> key(n);
    std::vector<bool> best_side(n);
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t live = n; live > 1; --live) {
        // An added vertex's key is -inf, so one branch-free pass adds a row and finds the maximum.
        std::fill_n(key.begin(), live, 0.0);
        std::size_t prev = 0, sel = 0;  // every key is 0 at first: slot 0 starts
        double cut = 0;
        for (std::size_t step = 1; step < live; ++step) {
            key[sel] = -std::numeric_limits<double>::infinity();
            const double* row = &w[sel * n];
            double* k = key.data();
            for (std::size_t i = 0; i < live; ++i) k[i] += row[i];
            std::size_t next_sel = 0;
            for (std::size_t i = 1; i < live; ++i)
                if (k[i] > k[next_sel]) next_sel = i;
            prev = sel, sel = next_sel, cut = k[sel];
        }
        // The phase's cut: the last vertex (with what was merged into it) against the rest.
        if (cut < best) {
            best = cut;
            std::fill(best_side.begin(), best_side.end(), false);
            for (std::size_t v = first[sel]; v != n; v = next[v]) best_side[v] = true;
        }
        // Merge sel into prev, then move the last live slot into sel's.
        for (std::size_t i = 0; i < live; ++i) w[prev * n + i] += w[sel * n + i];
        w[prev * n + prev] = 0;
        for (std::size_t i = 0; i < live; ++i) w[i * n + prev] = w[prev * n + i];
        next[last_of[prev]] = first[sel], last_of[prev] = last_of[sel];
        const std::size_t end = live - 1;
        if (sel != end) {
            for (std::size_t i = 0; i < live; ++i) w[sel * n + i] = w[end * n + i];
            for (std::size_t i = 0; i < live; ++i) w[i * n + sel] = w[i * n + end];
            w[sel * n + sel] = 0;
            first[sel] = first[end], last_of[sel] = last_of[end];
        }
    }
    return detail::ordered_cut(best, vertices, best_side);
}

/// The SPLIT sequence: the nested partitions for k = first_k() .. n.
class k_cut_sequence {
public:
    /// Vertex -> component, components numbered by their smallest vertex (0, 1, ... in that order).
    [[nodiscard]] const std::vector<int>& partition(int k) const {
        if (k < first_k_ || k > last_k()) throw input_error("min-k-cut: no partition into " + std::to_string(k) + " parts");
        return labels_[static_cast<std::size_t>(k - first_k_)];
    }
    /// Total weight removed to reach k parts (the k-cut's value).
    [[nodiscard]] double cut_weight(int k) const {
        (void)partition(k);
        return weight_[static_cast<std::size_t>(k - first_k_)];
    }
    [[nodiscard]] int first_k() const { return first_k_; }  ///< connected components of the graph
    [[nodiscard]] int last_k() const { return first_k_ + static_cast<int>(labels_.size()) - 1; }

    using cut_function = two_cut (*)(const weighted_graph&, const std::vector<int>&);
    [[nodiscard]] bool stopped() const { return stopped_; }  ///< `stop` ended the pass before max_k

    /// Runs SPLIT on g, finding minimum 2-cuts with `cut`, up to `max_k` parts (Zorse never
    /// needs more groups than layers); `stop` is polled before each 2-cut.
    explicit k_cut_sequence(const weighted_graph& g, cut_function cut = minimum_two_cut, int max_k = std::numeric_limits<int>::max(),
                            const stop_condition* stop = nullptr) {
        const int n = g.size();
        std::vector<int> label(static_cast<std::size_t>(n), -1);
        std::vector<std::vector<int>> parts;
        for (int s = 0; s < n; ++s) {  // connected components over positive edges, in vertex order
            if (label[static_cast<std::size_t>(s)] >= 0) continue;
            std::vector<int> comp{s};
            label[static_cast<std::size_t>(s)] = static_cast<int>(parts.size());
            for (std::size_t q = 0; q < comp.size(); ++q)
                for (int v = 0; v < n; ++v)
                    if (label[static_cast<std::size_t>(v)] < 0 && g.weight(comp[q], v) > 0)
                        label[static_cast<std::size_t>(v)] = static_cast<int>(parts.size()), comp.push_back(v);
            std::sort(comp.begin(), comp.end());
            parts.push_back(std::move(comp));
        }
        first_k_ = std::max(1, static_cast<int>(parts.size()));
        if (n == 0) return;
        std::vector<two_cut> best(parts.size());
        auto cut_of = [&](std::size_t p) {
            if (parts[p].size() >= 2 && stop && stop->requested()) stopped_ = true;
            best[p] = parts[p].size() >= 2 && !stopped_ ? cut(g, parts[p]) : two_cut{std::numeric_limits<double>::infinity(), {}, {}};
        };
        for (std::size_t p = 0; p < parts.size(); ++p) cut_of(p);
        double removed = 0;
        record(parts, n, removed);
        while (static_cast<int>(parts.size()) < std::min(n, max_k) && !stopped_) {
            // The lightest cut; ties go to the part with the smallest vertex.
            std::size_t p = 0;
            for (std::size_t q = 1; q < parts.size(); ++q)
                if (best[q].weight < best[p].weight || (best[q].weight == best[p].weight && parts[q].front() < parts[p].front())) p = q;
            removed += best[p].weight;
            two_cut c = std::move(best[p]);
            parts[p] = std::move(c.side_a);
            parts.push_back(std::move(c.side_b));
            best.emplace_back();
            record(parts, n, removed);
            cut_of(p);
            cut_of(parts.size() - 1);
        }
    }

private:
    void record(const std::vector<std::vector<int>>& parts, int n, double removed) {
        std::vector<std::size_t> order(parts.size());
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return parts[a].front() < parts[b].front(); });
        std::vector<int> label(static_cast<std::size_t>(n));
        for (std::size_t k = 0; k < order.size(); ++k)
            for (int v : parts[order[k]]) label[static_cast<std::size_t>(v)] = static_cast<int>(k);
        labels_.push_back(std::move(label));
        weight_.push_back(removed);
    }

    int first_k_ = 1;
    bool stopped_ = false;
    std::vector<std::vector<int>> labels_;
    std::vector<double> weight_;
};

}  // namespace hetplan::search
