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

/// The pairs, in the sender's completion order. Both stages must process the same number of
/// microbatches.
[[nodiscard]] inline std::vector<routed_microbatch> route_microbatches(std::span<const stage_gpu> from, std::span<const stage_gpu> to) {
    int total_from = 0, total_to = 0;
    for (const auto& g : from) {
        if (g.microbatches < 0 || !(g.time > 0)) throw input_error("microbatch routing: counts must be >= 0 and times > 0");
        total_from += g.microbatches;
    }
    for (const auto& g : to) {
        if (g.microbatches < 0 || !(g.time > 0)) throw input_error("microbatch routing: counts must be >= 0 and times > 0");
        total_to += g.microbatches;
    }
    if (total_from != total_to)
        throw input_error("microbatch routing: the stages process " + std::to_string(total_from) + " and " + std::to_string(total_to) + " microbatches");
    std::vector<std::tuple<double, int, int>> done, slots;  // (time, gpu, local); slots by remaining work
    for (int g = 0; g < static_cast<int>(from.size()); ++g)
        for (int j = 0; j < from[std::size_t(g)].microbatches; ++j) done.emplace_back((j + 1) * from[std::size_t(g)].time, g, j);
    for (int g = 0; g < static_cast<int>(to.size()); ++g) {
        const auto& r = to[std::size_t(g)];
        for (int j = 0; j < r.microbatches; ++j) slots.emplace_back((r.microbatches - j) * r.time, g, j);
    }
    std::sort(done.begin(), done.end());
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

}  // namespace hetplan::search
