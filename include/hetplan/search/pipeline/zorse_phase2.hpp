#pragma once
// Zorse's Phase 2 (Zorse §3.3.3) for one candidate — a partition's groups in pipeline order and a
// microbatch size — as a concepts::solver:
//   layers        by group speed (search::proportional_split), each group's speed from Zorse's
//                 microbatch rule (microbatches by GPU speed within the group)
//   ministages    S = min..max equal ministages per group, dealt round-robin (interleaved_layout)
//   microbatches  per group, exactly for the layout (search::microbatch_split; Split =
//                 proportional_microbatches for Zorse's own rule)
//   latency       zorse_time_model::latency of the load build_zorse_load makes: the same
//                 function the simulator prices plans with
//   memory        the pruners judge each zorse_layout (zorse_memory_fit: every GPU fits, §3.3.5)
// A candidate whose pure compute already reaches the cut-off is skipped (its floor), and a
// configuration's memory is checked only when its latency beats the best so far. Buffers are
// reused: after warm-up a candidate allocates nothing but a configuration it returns.
#include <algorithm>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "hetplan/concepts/pruner.hpp"
#include "hetplan/concepts/solver.hpp"
#include "hetplan/cost/memory/zorse.hpp"
#include "hetplan/cost/time/zorse.hpp"
#include "hetplan/search/objective.hpp"
#include "hetplan/search/pipeline/microbatch_split.hpp"
#include "hetplan/search/pipeline/proportional_split.hpp"
#include "hetplan/search/prune/all.hpp"

namespace hetplan::search {

/// A Phase 1 partition's groups in pipeline order at one microbatch size: per group its
/// collectives and, per GPU, its row in the layer table (its GPU type at microbatch size m).
template <class Pruners>
struct zorse_candidate {
    std::span<const zorse_group_comm* const> groups;
    std::span<const std::vector<std::size_t>> rows;
    int m = 1;
    double usd_per_second = 0;  ///< of all the candidate's GPUs (Zorse uses every GPU)
    const zorse_layer_table* table = nullptr;
    const Pruners* pruners = nullptr;
};

/// What Phase 2 decides for a candidate.
struct zorse_configuration {
    objective_terms terms;              ///< iteration: the latency model's
    std::vector<int> layers;            ///< per group
    int S = 1;                          ///< ministages per group
    std::vector<std::vector<int>> n;    ///< microbatches per group and GPU
};

/// A configuration as pruners see it: layers and ministages per group, microbatches per GPU.
struct zorse_layout {
    std::span<const zorse_group_comm* const> groups;
    std::span<const int> layers;
    int S = 1;
    int m = 1;
    std::span<const std::vector<int>> n;
};

/// Visits the interleaved layout without building it: f(group, ministage, range).
template <class F>
void for_each_ministage(std::span<const int> layers, int S, F&& f) {
    int at = 0;
    for (int r = 0; r < S; ++r)
        for (std::size_t g = 0; g < layers.size(); ++g) {
            const int len = layers[g] / S + (r < layers[g] % S ? 1 : 0);
            f(g, static_cast<std::size_t>(r), layer_range{at, at + len});
            at += len;
        }
}

/// Zorse §3.3.5: every GPU of every group within its usable memory (per GPU, against its own
/// capacity).
struct zorse_memory_fit {
    zorse_memory_model memory{};
    double usable_fraction = 1.0;
    [[nodiscard]] static constexpr const char* name() { return "Zorse memory fit"; }
    [[nodiscard]] bool operator()(const problem& pb, const zorse_layout& c) const {
        for (std::size_t g = 0; g < c.groups.size(); ++g) {
            zorse_group_shape shape;
            for_each_ministage(c.layers, c.S, [&](std::size_t h, std::size_t, layer_range r) {
                if (h == g) shape.add(pb.model, r);
            });
            const auto& ring = c.groups[g]->ring;
            for (std::size_t i = 0; i < ring.size(); ++i)
                if (!memory.per_gpu(pb.job, shape, 1.0 / double(ring.size()), c.m, c.n[g][i], pb.hw.gpu(ring[i].gpu).memory() * usable_fraction)
                         .fits())
                    return false;
        }
        return true;
    }
};

/// Zorse's own rule for one group's microbatches (§3.3.3): in proportion to GPU speed, at
/// least one each. For comparison with the exact split.
struct proportional_microbatches {
    [[nodiscard]] static constexpr const char* name() { return "proportional microbatch split"; }
};

template <class Split = microbatch_split>
class zorse_phase2 {
public:
    int min_ministages = 1;
    int max_ministages = 0;  ///< 0: up to the smallest group's layer count
    Split split{};
    std::size_t configurations = 0;  ///< (candidate, S) priced so far
    std::size_t refused = 0;         ///< of which the objective's constraints did not admit
    std::size_t shaped = 0;          ///< candidates whose every group has a microbatch per GPU

    [[nodiscard]] static constexpr const char* name() { return "Zorse phase 2"; }

    template <class Pruners, concepts::objective O>
    [[nodiscard]] std::optional<zorse_configuration> solve(const problem& pb, const zorse_candidate<Pruners>& c, const O& o,
                                                           const solve_limits& lim) {
        const std::size_t G = c.groups.size();
        const int L = pb.model.num_layers(), M = pb.job.global_batch / c.m;
        if (G == 0 || static_cast<int>(G) > L) return std::nullopt;
        if (!zorse_shape(c, M)) return std::nullopt;
        ++shaped;
        double floor = 0;  // the busiest GPU's compute over its group's layers
        for (std::size_t g = 0; g < G; ++g) floor = std::max(floor, busiest_[g] * layers_[g] / double(L));
        if (!(o.value(objective_terms{floor, floor * c.usd_per_second, 0, 0, 0}) < lim.cutoff)) return std::nullopt;
        std::optional<zorse_configuration> best;
        double best_v = lim.cutoff;
        const int S_max = std::min(*std::min_element(layers_.begin(), layers_.end()), max_ministages > 0 ? max_ministages : L);
        for (int S = min_ministages; S <= S_max; ++S) {
            if (lim.stop && lim.stop->requested()) break;  // a configuration of 10^5 GPUs takes ms
            if (!configure(pb, c, S, M)) continue;
            build_zorse_load(load_, *c.table, inputs_);
            ++configurations;
            const double latency = zorse_time_model::latency(load_).total;
            objective_terms t{latency, latency * c.usd_per_second, 0, 0, 0};
            for (const auto& per_gpu : n_)  // GPUs with a microbatch: at most the plan's (a GPU limit's floor)
                t.gpus += static_cast<int>(std::count_if(per_gpu.begin(), per_gpu.end(), [](int k) { return k > 0; }));
            const double v = o.value(t);
            if (!o.admits(t)) {
                ++refused;
                continue;
            }
            if (!(v < best_v)) continue;
            if (c.pruners && !(*c.pruners)(pb, zorse_layout{c.groups, layers_, S, c.m, n_})) continue;
            best_v = v;
            best = zorse_configuration{t, layers_, S, n_};
        }
        return best;
    }

private:
    /// Zorse's shape of a candidate: microbatches by GPU speed in each group, layers by group
    /// speed. False when a group has fewer microbatches than GPUs or fewer layers than groups.
    template <class Pruners>
    bool zorse_shape(const zorse_candidate<Pruners>& c, int M) {
        const std::size_t G = c.groups.size();
        n_.resize(G);
        speed_.assign(G, 0.0);
        busiest_.assign(G, 0.0);
        for (std::size_t g = 0; g < G; ++g) {
            rate_.clear();
            for (std::size_t row : c.rows[g]) rate_.push_back(1.0 / c.table->whole(row));
            if (!proportional_split_into(M, rate_, 1, n_[g], scratch_)) return false;
            for (std::size_t i = 0; i < n_[g].size(); ++i) busiest_[g] = std::max(busiest_[g], n_[g][i] * c.table->whole(c.rows[g][i]));
            speed_[g] = 1.0 / busiest_[g];
        }
        return proportional_split_into(static_cast<int>(c.table->layers()), speed_, 1, layers_, scratch_);
    }

    /// The layout of S ministages and each group's microbatches for it (exact split unless
    /// Split is Zorse's proportional rule); fills inputs_ for the load.
    template <class Pruners>
    bool configure(const problem& pb, const zorse_candidate<Pruners>& c, int S, int M) {
        const std::size_t G = c.groups.size();
        ministages_.resize(G);
        for (auto& v : ministages_) v.clear();
        for_each_ministage(layers_, S, [&](std::size_t g, std::size_t, layer_range r) { ministages_[g].push_back(r); });
        shares_.resize(G);
        inputs_.clear();
        for (std::size_t g = 0; g < G; ++g) {
            shares_[g].assign(c.rows[g].size(), 1.0 / double(c.rows[g].size()));
            const double p2p = zorse_group_p2p(pb, c.groups, ministages_[g], g, c.m, S > 1);
            if constexpr (!std::is_same_v<Split, proportional_microbatches>)
                if (!split_group(pb, c, g, p2p, M)) return false;
            inputs_.push_back({c.groups[g], c.rows[g], n_[g], shares_[g], ministages_[g], p2p});
        }
        return true;
    }

    /// The exact split of group g's M microbatches for its ministages (kinds: GPUs alike in row).
    /// Its term is a time, whatever the plan's objective (every objective is monotone in it).
    /// One kind: spread evenly, whatever the ministages; more kinds than max_split_kinds: Zorse's rule.
    template <class Pruners>
    bool split_group(const problem& pb, const zorse_candidate<Pruners>& c, std::size_t g, double p2p, int M) {
        const auto& rows = c.rows[g];
        kinds_.clear(), counts_.clear(), a_.clear(), b_.clear(), ag_.clear(), agrs_.clear();
        for (std::size_t row : rows) {
            const auto it = std::find(kinds_.begin(), kinds_.end(), row);
            if (it == kinds_.end()) kinds_.push_back(row), counts_.push_back(1);
            else ++counts_[static_cast<std::size_t>(it - kinds_.begin())];
        }
        // Beyond the exact split's kinds (a group of 17+ GPU types): Zorse's proportional rule,
        // which zorse_shape left in n_[g].
        if (kinds_.size() > max_split_kinds) return true;
        if (kinds_.size() == 1) {
            const int n = static_cast<int>(rows.size());
            if (M < n) return false;
            for (int i = 0; i < n; ++i) n_[g][std::size_t(i)] = M / n + (i < M % n ? 1 : 0);
            return true;
        }
        for (std::size_t row : kinds_)
            for (const layer_range& r : ministages_[g]) {
                a_.push_back(std::max(c.table->fwd(row, r), p2p));
                b_.push_back(std::max(c.table->bwd(row, r), p2p));
            }
        for (const layer_range& r : ministages_[g]) {
            ag_.push_back(c.groups[g]->all_gather(r));
            agrs_.push_back(c.groups[g]->all_gather(r) + c.groups[g]->reduce_scatter(r));
        }
        const auto s = split.solve(pb, microbatch_split_problem{M, counts_, a_, b_, ag_, agrs_}, max_throughput{}, {});
        if (!s) return false;
        std::fill(seen_.begin(), seen_.end(), 0);
        seen_.resize(std::max(seen_.size(), kinds_.size()), 0);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto k = static_cast<std::size_t>(std::find(kinds_.begin(), kinds_.end(), rows[i]) - kinds_.begin());
            n_[g][i] = s->of(k, seen_[k]++, counts_[k]);
        }
        return true;
    }

    zorse_load load_;
    std::vector<zorse_group_input> inputs_;
    std::vector<std::vector<int>> n_;
    std::vector<std::vector<double>> shares_;
    std::vector<std::vector<layer_range>> ministages_;
    std::vector<double> rate_, speed_, busiest_, a_, b_, ag_, agrs_;
    std::vector<int> layers_, counts_, seen_;
    std::vector<std::size_t> kinds_;
    split_scratch scratch_;
};

static_assert(concepts::check_pruner<zorse_memory_fit, zorse_layout>());
static_assert(concepts::check_solver<zorse_phase2<>, zorse_candidate<prune::all<zorse_memory_fit>>, max_throughput>());

}  // namespace hetplan::search
