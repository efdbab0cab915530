#pragma once
// Metis' cost model (Metis §5.3, its HeteroCostEstimator): one iteration of a pipeline of
// stages with (DP, TP) each, in milliseconds:
//   (B - 1) max_s exec_s + sum_s exec_s      1F1B pipeline over B microbatches
//   + fb_sync of the last stage x B          the measured step's remainder
//   + max_s optimizer_s                      optimizer time x layers share / TP
//   + max_s dp_s                             ring all-reduce 2 (d - 1) / d of the stage's parameters
//   + sum_s pp_s                             activations to the next stage
//   + batch generation x B
// A mixed stage's exec is its slowest replica's, each replica's samples run as power-of-two
// microbatches (the profile holds powers of two only). Every stage is priced (the public code
// prices only the first stage of some two-stage plans, see metis_rules).
#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "hetplan/cost/time/metis_layout.hpp"

namespace hetplan {

/// A candidate of Metis' search: stage sizes (ranks, in order), (DP, TP) per stage, the number of
/// microbatches B, and the layer partition (S + 1 boundaries).
struct metis_candidate {
    std::vector<int> groups;
    std::vector<int> dp, tp;
    int microbatches = 1;
    int global_batch = 1;
    std::vector<int> partition;

    [[nodiscard]] int stages() const { return int(groups.size()); }
    [[nodiscard]] int first_rank(int s) const {
        int r = 0;
        for (int i = 0; i < s; ++i) r += groups[std::size_t(i)];
        return r;
    }
    /// Samples per replica per microbatch (Metis' mbs = gbs // dp // B).
    [[nodiscard]] int microbatch_size(int s) const { return global_batch / dp[std::size_t(s)] / microbatches; }
};

struct metis_cost_terms {
    double pipeline = 0, fb_sync = 0, optimizer = 0, all_reduce = 0, p2p = 0, batch_generation = 0;
    [[nodiscard]] double total() const { return pipeline + fb_sync + optimizer + all_reduce + p2p + batch_generation; }
};

class metis_cost_model {
public:
    metis_cost_model(const metis_profile& p, const metis_cluster& c, metis_rules rules = metis_rules::corrected())
        : p_(&p), c_(&c), rules_(rules) {}

    /// The iteration time (ms) of `x` under `layout`; nullopt when a measurement it needs is
    /// missing (the public code raises KeyError and drops the plan).
    [[nodiscard]] std::optional<metis_cost_terms> operator()(const metis_layout& layout, const metis_candidate& x) const {
        const int S = x.stages(), L = p_->layers;
        metis_cost_terms out;
        double max_exec = 0, sum_exec = 0, max_opt = 0, max_dp = 0;
        int first = 0;
        for (int s = 0; s < S; ++s) {
            const int g = x.groups[std::size_t(s)], dp = x.dp[std::size_t(s)], tp = x.tp[std::size_t(s)];
            const int a = x.partition[std::size_t(s)], b = x.partition[std::size_t(s) + 1];
            const auto types = layout.ranks(first, g);
            const int mbs = x.microbatch_size(s);
            const auto exec = execution(types, dp, tp, x.global_batch / x.microbatches, mbs, a, b);
            if (!exec) return std::nullopt;
            max_exec = std::max(max_exec, *exec);
            sum_exec += *exec;
            if (s == S - 1) {
                double fb = 0;
                for (int t : types) {
                    const metis_entry* e = p_->at(std::size_t(t), tp, mbs);
                    if (!e) return std::nullopt;
                    fb = std::max(fb, e->fb_sync);
                }
                out.fb_sync = fb * x.microbatches;
            } else {
                // The public code sends the vocabulary-sized logits when b == L - 1 (kept).
                const double act = b == L - 1 ? double(mbs) * p_->sequence * p_->vocabulary / tp : double(mbs) * p_->sequence * p_->hidden;
                out.p2p += act / (pipeline_bandwidth(layout, first, g + x.groups[std::size_t(s) + 1]) * 1048576.0);
            }
            const double params = p_->stage_parameters(tp, a, b);
            const double dpc = 2.0 * (dp - 1) / (dp * (dp_bandwidth(layout, first, g, dp, tp) * 1048576.0)) * params;
            max_dp = std::max(max_dp, dpc);
            max_opt = std::max(max_opt, p_->optimizer_time / tp * (double(b - a) / L));
            first += g;
        }
        out.pipeline = (x.microbatches - 1) * max_exec + sum_exec;
        out.optimizer = max_opt;
        out.all_reduce = max_dp;
        out.batch_generation = p_->batch_generator * x.microbatches;
        return out;
    }

    /// One microbatch's forward+backward of layers [a, b) on the stage's slowest replica.
    [[nodiscard]] std::optional<double> execution(std::span<const int> types, int dp, int tp, int batch, int mbs, int a, int b) const {
        if (!mixed(types)) {
            const metis_entry* e = p_->at(std::size_t(types.front()), tp, mbs);
            if (!e) return std::nullopt;
            return metis_layer_sum(e->computes, a, b);
        }
        if (!metis_split_batch(*p_, types, dp, tp, batch, rules_, shares_, scratch_)) return std::nullopt;
        const int size = int(types.size()) / dp;
        double worst = 0;
        bool missing = false;
        for (int r = 0; r < dp; ++r) {
            if (shares_[std::size_t(r)] == 0) continue;
            const int t = replica_type(*p_, types.subspan(std::size_t(r * size), std::size_t(size)), tp, rules_);
            double cost = 0;
            for_each_power_of_two(shares_[std::size_t(r)], [&](int m) {
                const metis_entry* e = p_->at(std::size_t(t), tp, m);
                if (!e) missing = true;
                else cost += metis_layer_sum(e->computes, a, b);
            });
            worst = std::max(worst, cost);
        }
        if (missing) return std::nullopt;
        return worst;
    }

private:
    [[nodiscard]] double intra(int t) const { return c_->types[std::size_t(t)].intra_bw; }
    [[nodiscard]] double inter(int t) const { return rules_.inter_is_intra ? intra(t) : c_->types[std::size_t(t)].inter_bw; }

    /// A set of ranks: the intra-node bandwidth when one node holds them, else the slowest
    /// inter-node bandwidth of their nodes' types.
    template <class Ranks>
    [[nodiscard]] double bandwidth(const metis_layout& layout, Ranks&& ranks) const {
        int node = -1;
        bool one = true;
        double slow = std::numeric_limits<double>::infinity();
        for (int r : ranks) {
            const int n = layout.node_of(r);
            if (node >= 0 && n != node) one = false;
            node = n;
            slow = std::min(slow, inter(layout.node_type[std::size_t(n)]));
        }
        return one ? intra(layout.node_type[std::size_t(node)]) : slow;
    }
    [[nodiscard]] double pipeline_bandwidth(const metis_layout& layout, int first, int count) const {
        ranks_.clear();
        for (int r = first; r < first + count; ++r) ranks_.push_back(r);
        return bandwidth(layout, ranks_);
    }
    /// The slowest of the stage's gradient rings, the public code's group d being ranks
    /// first + d + k dp (k < tp).
    [[nodiscard]] double dp_bandwidth(const metis_layout& layout, int first, int g, int dp, int tp) const {
        double slow = std::numeric_limits<double>::infinity();
        for (int d = 0; d < dp; ++d) {
            ranks_.clear();
            for (int k = 0; k < tp && d + k * dp < g; ++k) ranks_.push_back(first + d + k * dp);
            slow = std::min(slow, bandwidth(layout, ranks_));
        }
        return slow;
    }

    const metis_profile* p_;
    const metis_cluster* c_;
    metis_rules rules_;
    mutable std::vector<int> shares_, ranks_;
    mutable std::vector<double> scratch_;
};

}  // namespace hetplan
