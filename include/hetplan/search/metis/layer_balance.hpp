#pragma once
// Metis' layer load balancer (Metis §5.2, "layer load balancing"): layers to stages in
// proportion to each stage's share of compute. Each layer is cut into H = 7 equal sub-layers
// ("hallucination"); stages take sub-layers front to back while their share lasts, the last
// stage fills from the back, leftovers go to the neighbouring stage with the most share left; a
// layer belongs to the stage holding most of its sub-layers; then up to three single-layer
// moves from the stage with the most share left to its neighbour. When memory does not fit,
// `adjust_shares` lowers the short stages' shares to what their memory allows (x 0.9) and gives
// the rest to stages with memory to spare, in proportion to their speed.
//
// Reproduced exactly, float order included, because the public code's search steps depend on
// it. It can leave a stage empty or a layer in no stage; the planner rejects such partitions.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace hetplan::search::metis {

class layer_balancer {
public:
    static constexpr int hallucination = 7;

    /// The partition (S + 1 boundaries, stage s holding [p_s, p_s+1)) for compute shares
    /// `shares` and normalised layer durations `d` (summing to 1).
    void balance(std::span<const double> shares, std::span<const double> d, std::vector<int>& partition) {
        const int S = int(shares.size()), L = int(d.size()), H = hallucination, M = L * H;
        e_.resize(std::size_t(M));
        for (int j = 0; j < M; ++j) e_[std::size_t(j)] = d[std::size_t(j / H)] / H;
        cap_.assign(shares.begin(), shares.end());
        // Lists are kept across calls (never shrunk), so a warm balancer allocates nothing.
        grow(alloc_, S);
        for (int s = 0; s < S; ++s) alloc_[std::size_t(s)].clear();
        lo_.assign(std::size_t(S), std::numeric_limits<int>::max());
        hi_.assign(std::size_t(S), -1);
        free_.assign(std::size_t(M), 0);

        // Front to back, the last stage excepted; the last H + 1 sub-layers are left over.
        int k = 0;
        for (int s = 0; s + 1 < S; ++s)
            for (int j = k; j < M - 1 - H; ++j) {
                k = j + 1;
                if (cap_[std::size_t(s)] > e_[std::size_t(j)]) take(s, j);
                else {
                    free_[std::size_t(j)] = 1;
                    break;
                }
            }
        for (int j = k; j < M; ++j) free_[std::size_t(j)] = 1;

        // The last stage from the back: H sub-layers whatever they cost, then contiguous ones while its share lasts.
        const int last = S - 1;
        for (int j = M - 1; j >= 0; --j) {
            if (!free_[std::size_t(j)]) continue;
            auto& a = alloc_[std::size_t(last)];
            if (int(a.size()) < H || (j + 1 == lo_[std::size_t(last)] && cap_[std::size_t(last)] > e_[std::size_t(j)])) {
                take(last, j);
                free_[std::size_t(j)] = 0;
            }
        }

        // Leftovers, in order: to the stage with the most share left between the stage holding the
        // nearest sub-layer before and the one holding the nearest after.
        for (int j = 0; j < M; ++j) {
            if (!free_[std::size_t(j)]) continue;
            int from = 0, to = S - 1, below = -1, above = std::numeric_limits<int>::max();
            for (int s = 0; s < S; ++s) {
                if (alloc_[std::size_t(s)].empty()) continue;
                if (j > hi_[std::size_t(s)] && hi_[std::size_t(s)] > below) from = s, below = hi_[std::size_t(s)];
                if (j < lo_[std::size_t(s)] && lo_[std::size_t(s)] < above) to = s, above = lo_[std::size_t(s)];
            }
            int pick = -1;
            double most = -std::numeric_limits<double>::infinity();
            for (int s = from; s <= to; ++s)
                if (cap_[std::size_t(s)] > most) most = cap_[std::size_t(s)], pick = s;
            if (pick < 0) pick = from;  // an empty range or NaN shares: the public code fails here
            take(pick, j);
        }

        // Whole layers: those a stage holds more than H / 2 sub-layers of.
        grow(layers_, S);
        for (int s = 0; s < S; ++s) {
            auto& a = alloc_[std::size_t(s)];
            std::sort(a.begin(), a.end());
            auto& out = layers_[std::size_t(s)];
            out.clear();
            for (std::size_t i = 0; i < a.size();) {
                std::size_t n = i;
                while (n < a.size() && a[n] / H == a[i] / H) ++n;
                if (2 * int(n - i) > H) out.push_back(a[i] / H);
                i = n;
            }
        }
        for (int s = 0; s < S; ++s) {
            const auto& ls = layers_[std::size_t(s)];
            double used = 0;
            if (!ls.empty())
                for (int l = ls.front(); l <= ls.back(); ++l) used += d[std::size_t(l)];
            cap_[std::size_t(s)] = ls.empty() ? shares[std::size_t(s)] : shares[std::size_t(s)] - used;
        }

        // Up to three moves of one layer into the stage with the most share left, from its
        // neighbour with the least; a move that raises the largest share left is undone.
        grow(trial_, S);
        for (int s = 0; s < S; ++s) trial_[std::size_t(s)] = layers_[std::size_t(s)];
        trial_cap_ = cap_;
        for (int n = 1;; ++n) {
            const int st = first_max(trial_cap_);
            int near = -1;
            double least = std::numeric_limits<double>::infinity();
            if (st - 1 >= 0 && trial_cap_[std::size_t(st - 1)] < least) near = st - 1, least = trial_cap_[std::size_t(near)];
            if (st + 1 < S && trial_cap_[std::size_t(st + 1)] < least) near = st + 1;
            if (near >= 0 && layers_[std::size_t(near)].size() == 1) near = -1;
            if (near >= 0 && !trial_[std::size_t(near)].empty()) {
                auto& from = trial_[std::size_t(near)];
                int layer;
                if (st > near) layer = from.back(), from.pop_back();
                else layer = from.front(), from.erase(from.begin());
                auto& into = trial_[std::size_t(st)];
                into.insert(std::upper_bound(into.begin(), into.end(), layer), layer);
                trial_cap_[std::size_t(st)] -= d[std::size_t(layer)];
                trial_cap_[std::size_t(near)] += d[std::size_t(layer)];
            }
            if (trial_cap_[std::size_t(first_max(trial_cap_))] > cap_[std::size_t(first_max(cap_))] || n > 3) break;
            for (int s = 0; s < S; ++s) layers_[std::size_t(s)] = trial_[std::size_t(s)];
            cap_ = trial_cap_;
        }

        partition.assign(std::size_t(S) + 1, 0);
        for (int s = 0; s < S; ++s) partition[std::size_t(s) + 1] = partition[std::size_t(s)] + int(layers_[std::size_t(s)].size());
    }

private:
    static void grow(std::vector<std::vector<int>>& v, int n) {
        if (v.size() < std::size_t(n)) v.resize(std::size_t(n));
    }
    void take(int s, int j) {
        cap_[std::size_t(s)] -= e_[std::size_t(j)];
        alloc_[std::size_t(s)].push_back(j);
        lo_[std::size_t(s)] = std::min(lo_[std::size_t(s)], j);
        hi_[std::size_t(s)] = std::max(hi_[std::size_t(s)], j);
    }
    /// The first index of the largest value (a stable sort's first, descending).
    [[nodiscard]] static int first_max(const std::vector<double>& v) {
        int at = 0;
        for (int i = 1; i < int(v.size()); ++i)
            if (v[std::size_t(i)] > v[std::size_t(at)]) at = i;
        return at;
    }

    std::vector<double> e_, cap_, trial_cap_;
    std::vector<std::vector<int>> alloc_, layers_, trial_;
    std::vector<int> lo_, hi_;
    std::vector<char> free_;
};

/// Metis' re-partition shares (its _adj_compute_performance): stages short of memory get their
/// share x capacity / demand x 0.9; the difference goes to stages with memory to spare, in
/// proportion to their share, each up to share x capacity / demand - share. False when the spare
/// capacity cannot take it.
[[nodiscard]] inline bool adjust_shares(std::span<const double> shares, std::span<const double> capacity, std::span<const double> demand,
                                        std::vector<double>& out, std::vector<double>& avail, std::vector<double>& more) {
    const std::size_t S = shares.size();
    out.assign(S, 0.0);
    avail.assign(S, 0.0);
    double extra = 0;
    for (std::size_t s = 0; s < S; ++s) {
        if (capacity[s] > demand[s]) {
            out[s] = shares[s];
            avail[s] = shares[s] * capacity[s] / demand[s] - shares[s];
        } else {
            out[s] = shares[s] * (capacity[s] / demand[s]) * 0.9;
            extra += shares[s] - out[s];
        }
    }
    double spare = 0;
    for (double a : avail) spare += a;
    if (spare < extra) return false;
    more.assign(S, 0.0);
    for (int round = 0; extra > 0.01; ++round) {
        double total = 0;
        for (std::size_t s = 0; s < S; ++s) total += avail[s] > 0.001 ? shares[s] : 0;
        if (!(total > 0) || round > 10000) return false;  // the public code divides by zero here
        for (std::size_t s = 0; s < S; ++s) {
            const double ratio = avail[s] > 0.001 ? shares[s] / total : 0;
            const double a = extra * ratio > avail[s] ? avail[s] : extra * ratio;
            more[s] += a;
            avail[s] -= a;
            extra -= a;
        }
    }
    for (std::size_t s = 0; s < S; ++s) out[s] = more[s] + out[s];
    return true;
}

}  // namespace hetplan::search::metis
