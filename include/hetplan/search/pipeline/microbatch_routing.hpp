#pragma once
// Zorse's cross-stage microbatch routing for heterogeneous pipeline parallelism (Zorse §3.2):
// a stage's GPUs finish microbatches at their own pace, and the next stage's GPUs each have
// their own number to process. The i-th microbatch the sending stage completes goes to the
// receiving GPU slot with the i-th largest remaining work, so the GPUs with the most left to
// do are served first. Remaining work of a receiving GPU with n microbatches of time t when it
// receives its j-th (0-based): (n - j) t. Completion of a sender's j-th microbatch: (j + 1) t.
// Ties go to the lower GPU index, then the earlier microbatch. The backward pass sends the
// gradients along the same pairs in reverse.
#include <algorithm>
#include <span>
#include <tuple>
#include <vector>

#include "hetplan/core/error.hpp"

namespace hetplan::search {

/// One GPU of a stage as the routing sees it: how many microbatches it processes and how long
/// each takes on its ministage.
struct stage_gpu {
    int microbatches = 0;
    double time = 0;
};

struct routed_microbatch {
    int sender = 0, sender_local = 0;      ///< GPU of the sending stage and its microbatch number
    int receiver = 0, receiver_local = 0;  ///< GPU of the receiving stage and its microbatch number
    double sent_at = 0;                    ///< completion time at the sender (stage start = 0)
};

namespace detail {
inline int checked_total(std::span<const stage_gpu> stage) {
    int total = 0;
    for (const auto& g : stage) {
        if (g.microbatches < 0 || !(g.time > 0)) throw input_error("microbatch routing: counts must be >= 0 and times > 0");
        total += g.microbatches;
    }
    return total;
}

/// §3.2's rule on completions given as (time, sender, local), sorted: the i-th goes to the
/// receiving slot with the i-th largest remaining work.
inline std::vector<routed_microbatch> pair_by_rank(const std::vector<std::tuple<double, int, int>>& done, std::span<const stage_gpu> to) {
    std::vector<std::tuple<double, int, int>> slots;  // (remaining work, gpu, local)
    for (int g = 0; g < static_cast<int>(to.size()); ++g) {
        const auto& r = to[std::size_t(g)];
        for (int j = 0; j < r.microbatches; ++j) slots.emplace_back((r.microbatches - j) * r.time, g, j);
    }
    std::sort(slots.begin(), slots.end(), [](const auto& a, const auto& b) {
        if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) > std::get<0>(b);
        return std::tie(std::get<1>(a), std::get<2>(a)) < std::tie(std::get<1>(b), std::get<2>(b));
    });
    std::vector<routed_microbatch> out;
    out.reserve(done.size());
    for (std::size_t i = 0; i < done.size(); ++i)
        out.push_back({std::get<1>(done[i]), std::get<2>(done[i]), std::get<1>(slots[i]), std::get<2>(slots[i]), std::get<0>(done[i])});
    return out;
}
}  // namespace detail

/// The pairs, in the sender's completion order, for a sending stage that starts at 0 and runs
/// its microbatches back to back. Both stages must process the same number of microbatches.
[[nodiscard]] inline std::vector<routed_microbatch> route_microbatches(std::span<const stage_gpu> from, std::span<const stage_gpu> to) {
    const int total_from = detail::checked_total(from), total_to = detail::checked_total(to);
    if (total_from != total_to)
        throw input_error("microbatch routing: the stages process " + std::to_string(total_from) + " and " + std::to_string(total_to) + " microbatches");
    std::vector<std::tuple<double, int, int>> done;
    for (int g = 0; g < static_cast<int>(from.size()); ++g)
        for (int j = 0; j < from[std::size_t(g)].microbatches; ++j) done.emplace_back((j + 1) * from[std::size_t(g)].time, g, j);
    std::sort(done.begin(), done.end());
    return detail::pair_by_rank(done, to);
}

/// A schedule of microbatches through a chain of stages (e.g. one ministage per group, in
/// pipeline order): every GPU runs its microbatches in arrival order, each as soon as it has
/// arrived and the previous one is done; the first stage's are all there at 0; a microbatch
/// reaches the next stage `p2p` after it completes, routed by §3.2's rule on the actual
/// completion times. busy[s][g][j] = (start, end) of GPU g's j-th microbatch on stage s.
struct routed_schedule {
    std::vector<std::vector<std::vector<std::pair<double, double>>>> busy;
    std::vector<std::vector<routed_microbatch>> routes;  ///< routes[s]: stage s to s + 1
    double makespan = 0;
};

[[nodiscard]] inline routed_schedule routed_timeline(std::span<const std::vector<stage_gpu>> stages, double p2p) {
    if (!(p2p >= 0)) throw input_error("microbatch routing: p2p time must be >= 0");
    routed_schedule out;
    if (stages.empty()) return out;
    const int total = detail::checked_total(stages[0]);
    for (std::size_t s = 0; s < stages.size(); ++s) {
        if (detail::checked_total(stages[s]) != total)
            throw input_error("microbatch routing: stage " + std::to_string(s) + " processes " + std::to_string(detail::checked_total(stages[s])) +
                              " microbatches, stage 0 " + std::to_string(total));
        auto& busy = out.busy.emplace_back(stages[s].size());
        std::vector<std::vector<double>> arrival(stages[s].size());
        for (std::size_t g = 0; g < stages[s].size(); ++g) arrival[g].assign(std::size_t(stages[s][g].microbatches), 0.0);
        if (s > 0) {
            std::vector<std::tuple<double, int, int>> done;
            for (std::size_t g = 0; g < out.busy[s - 1].size(); ++g)
                for (std::size_t j = 0; j < out.busy[s - 1][g].size(); ++j) done.emplace_back(out.busy[s - 1][g][j].second, int(g), int(j));
            std::sort(done.begin(), done.end());
            out.routes.push_back(detail::pair_by_rank(done, stages[s]));
            for (const auto& r : out.routes.back()) arrival[std::size_t(r.receiver)][std::size_t(r.receiver_local)] = r.sent_at + p2p;
        }
        for (std::size_t g = 0; g < stages[s].size(); ++g) {
            double free = 0;
            for (double at : arrival[g]) {
                const double start = std::max(free, at);
                free = start + stages[s][g].time;
                busy[g].emplace_back(start, free);
                out.makespan = std::max(out.makespan, free);
            }
        }
    }
    return out;
}

}  // namespace hetplan::search
