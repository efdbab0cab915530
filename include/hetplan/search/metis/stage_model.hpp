#pragma once
// What Metis' intra-stage search knows of a candidate's stages (Metis §5.1-5.2; memory-aware
// Metis §3.3-3.4): each stage's share of compute under its (DP, TP), its memory capacity (the sum
// over its GPUs), the memory demand of a layer partition (5 x the profiled memory of its layers,
// per power-of-two microbatch of each replica in a mixed stage), and partition_layers: the layer
// balancer, re-run up to three times with shares adjusted to memory, reporting the headroom of the
// first attempt (memory-aware Metis' score) and of the one that fit (Metis').
#include <cstddef>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "hetplan/cost/time/metis_layout.hpp"
#include "hetplan/search/metis/layer_balance.hpp"

namespace hetplan::search::metis {

/// The public code's memory coefficient (its _get_stage_memory_demand, mem_coef = 5).
inline constexpr double memory_coefficient = 5.0;

/// What partition_layers found: the partition and the attempt that fit (1-3), or none; the
/// headroom (capacity - demand per stage) of the attempt that fit and of the first attempt when
/// it did not fit; failed attempts (each one of Metis' search steps).
struct partition_outcome {
    bool fits = false;
    int attempt = -1;
    int failures = 0;
    std::vector<int> partition;
    std::vector<double> headroom;        ///< of the attempt that fit
    std::vector<double> first_headroom;  ///< of the first attempt, when it did not fit; else empty
};

/// Metis' memory check (its _get_stage_memory_demand): a stage's capacity is the sum of its GPUs'
/// memory, its demand 5 x the profiled memory of its layers, once for a stage of one GPU type and
/// per power-of-two microbatch of each replica for a mixed one. Under the published rules a mixed
/// stage's replicas come from the whole cluster's rank list and the first type's memory.
struct metis_memory {
    template <class Model>
    void operator()(Model& m, std::size_t s, int a, int b, int dp, int tp, double& capacity, double& demand) const {
        constexpr double missing = std::numeric_limits<double>::infinity();
        const metis_profile& p = m.profile();
        const metis_layout& layout = m.layout();
        const bool wide = m.rules().cluster_wide_memory;
        capacity = m.aggregate_capacity(s);
        const auto stage_types = m.stage_types(s);
        double cur = 0.001;
        if (!m.is_mixed(s)) {
            const int t = wide ? layout.rank_type.front() : stage_types.front();
            const metis_entry* e = p.at(std::size_t(t), tp, m.global_batch() / m.microbatches() / dp);
            demand = e ? cur + metis_layer_sum(e->memory, a, b) * memory_coefficient : missing;
            return;
        }
        const auto types = wide ? std::span<const int>(layout.rank_type) : stage_types;
        std::span<const int> shares;
        if (!m.split(types, dp, tp, m.global_batch() / m.microbatches(), shares)) {
            demand = missing;
            return;
        }
        const int size = int(types.size()) / dp;
        for (int r = 0; r < dp && cur != missing; ++r) {
            const int t = wide ? layout.rank_type.front()
                               : replica_type(p, types.subspan(std::size_t(r * size), std::size_t(size)), tp, m.rules());
            for_each_power_of_two(shares[std::size_t(r)], [&](int mb) {
                const metis_entry* e = p.at(std::size_t(t), tp, mb);
                cur = e ? cur + metis_layer_sum(e->memory, a, b) * memory_coefficient : missing;
            });
        }
        demand = cur;
    }
};

/// The stages of one candidate; `Memory` is the memory check (metis_memory: the paper's).
template <class Memory = metis_memory>
class stage_model {
public:
    stage_model(const metis_profile& p, const metis_cluster& c, metis_rules rules, Memory memory = {})
        : p_(&p), c_(&c), rules_(rules), memory_(std::move(memory)) {
        const metis_entry* e = p.at(0, 1, 1);
        if (!e) throw input_error("metis_profile: the first type (" + (p.types.empty() ? std::string("none") : p.types[0]) +
                                  ") needs tp1_bs1, which sets the layer durations");
        double total = 0;
        for (double v : e->computes) total += v;
        durations_.clear();
        for (double v : e->computes) durations_.push_back(v / total);
    }

    /// Sets the candidate: ranks under `layout`, stage sizes, global batch, microbatches.
    void reset(const metis_layout& layout, std::span<const int> groups, int global_batch, int microbatches) {
        layout_ = &layout;
        groups_.assign(groups.begin(), groups.end());
        gbs_ = global_batch;
        B_ = microbatches;
        first_.assign(groups_.size(), 0);
        capacity_.assign(groups_.size(), 0.0);
        mixed_.assign(groups_.size(), 0);
        int r = 0;
        for (std::size_t s = 0; s < groups_.size(); ++s) {
            first_[s] = r;
            const auto types = layout.ranks(r, groups_[s]);
            mixed_[s] = mixed(types);
            // Per type in order of first appearance, memory x count (integers in MB: exact).
            seen_.assign(c_->types.size(), 0);
            for (int t : types) ++seen_[std::size_t(t)];
            for (int t : types)
                if (seen_[std::size_t(t)] > 0) {
                    capacity_[s] += c_->types[std::size_t(t)].memory_mb * seen_[std::size_t(t)];
                    seen_[std::size_t(t)] = 0;
                }
            r += groups_[s];
        }
    }

    [[nodiscard]] std::span<const double> durations() const { return durations_; }
    [[nodiscard]] const metis_profile& profile() const { return *p_; }
    [[nodiscard]] const metis_cluster& cluster() const { return *c_; }
    [[nodiscard]] const metis_layout& layout() const { return *layout_; }
    [[nodiscard]] const metis_rules& rules() const { return rules_; }
    [[nodiscard]] int stages() const { return int(groups_.size()); }
    [[nodiscard]] int first_rank(std::size_t s) const { return first_[s]; }
    [[nodiscard]] std::span<const int> stage_types(std::size_t s) const { return layout_->ranks(first_[s], groups_[s]); }
    [[nodiscard]] bool is_mixed(std::size_t s) const { return mixed_[s] != 0; }
    [[nodiscard]] int global_batch() const { return gbs_; }
    [[nodiscard]] int microbatches() const { return B_; }
    /// The sum of the stage's GPUs' memory (MB).
    [[nodiscard]] double aggregate_capacity(std::size_t s) const { return capacity_[s]; }
    /// Metis' data load balancer over `types` (the shares stay valid until the next call); false
    /// when a measurement is missing.
    [[nodiscard]] bool split(std::span<const int> types, int dp, int tp, int batch, std::span<const int>& out) {
        if (!metis_split_batch(*p_, types, dp, tp, batch, rules_, split_, scratch_)) return false;
        out = split_;
        return true;
    }

    /// Each stage's share of compute (speeds normalised to sum 1); false when a measurement is
    /// missing. A mixed stage runs each replica's samples as power-of-two microbatches; its speed
    /// is its slowest replica's.
    [[nodiscard]] bool shares(std::span<const int> dp, std::span<const int> tp, std::vector<double>& out) {
        out.assign(groups_.size(), 0.0);
        for (std::size_t s = 0; s < groups_.size(); ++s) {
            const auto types = layout_->ranks(first_[s], groups_[s]);
            if (!mixed_[s]) {
                const metis_entry* e = p_->at(std::size_t(types.front()), tp[s], gbs_ / B_ / dp[s]);
                if (!e) return false;
                out[s] = 1.0 / e->compute_total;
                continue;
            }
            if (!metis_split_batch(*p_, types, dp[s], tp[s], gbs_ / B_, rules_, split_, scratch_)) return false;
            const int size = groups_[s] / dp[s];
            double worst = 0;
            bool missing = false;
            for (int r = 0; r < dp[s]; ++r) {
                const int t = replica_type(*p_, types.subspan(std::size_t(r * size), std::size_t(size)), tp[s], rules_);
                double cost = 0;
                for_each_power_of_two(split_[std::size_t(r)], [&](int m) {
                    const metis_entry* e = p_->at(std::size_t(t), tp[s], m);
                    if (!e) missing = true;
                    else cost += e->compute_total;
                });
                worst = std::max(worst, cost);
            }
            if (missing) return false;
            out[s] = worst != 0 ? 1.0 / worst : 0.0;
        }
        double total = 0;
        for (double v : out) total += v;
        for (double& v : out) v = v / total;
        return true;
    }

    /// Memory capacity and demand (MB) of each stage under `partition`, from the memory check.
    void measure(std::span<const int> partition, std::span<const int> dp, std::span<const int> tp) {
        limit_.assign(groups_.size(), 0.0);
        demand_.assign(groups_.size(), 0.0);
        for (std::size_t s = 0; s < groups_.size(); ++s)
            memory_(*this, s, partition[s], partition[s + 1], dp[s], tp[s], limit_[s], demand_[s]);
    }

    /// The layer balancer with up to three attempts (Metis' partition_layer).
    void partition_layers(std::span<const int> dp, std::span<const int> tp, std::span<const double> shares, partition_outcome& out) {
        out.fits = false;
        out.attempt = -1;
        out.failures = 0;
        out.first_headroom.clear();
        cur_shares_.assign(shares.begin(), shares.end());
        for (int attempt = 1; attempt <= 3; ++attempt) {
            balancer_.balance(cur_shares_, durations_, out.partition);
            measure(out.partition, dp, tp);
            out.headroom.resize(demand_.size());
            bool fits = true;
            for (std::size_t s = 0; s < demand_.size(); ++s) {
                out.headroom[s] = limit_[s] - demand_[s];
                if (out.headroom[s] < 0) fits = false;
            }
            if (fits) {
                out.fits = true;
                out.attempt = attempt;
                return;
            }
            if (attempt == 1) out.first_headroom = out.headroom;
            ++out.failures;
            if (!adjust_shares(cur_shares_, limit_, demand_, next_shares_, avail_, more_) || next_shares_.empty()) return;
            cur_shares_.swap(next_shares_);
        }
    }

private:
    const metis_profile* p_;
    const metis_cluster* c_;
    metis_rules rules_;
    Memory memory_;
    const metis_layout* layout_ = nullptr;
    std::vector<double> durations_, capacity_, limit_, demand_, cur_shares_, next_shares_, avail_, more_, scratch_;
    std::vector<int> groups_, first_, split_, seen_;
    std::vector<char> mixed_;
    int gbs_ = 1, B_ = 1;
    layer_balancer balancer_;
};

}  // namespace hetplan::search::metis
