#pragma once
// AutoHet's elastic recovery (AutoHet §IV): after the plan changes (GPUs preempted or added),
// which checkpoint pieces each new rank needs, where each comes from, and how long it takes.
//   pieces     one per (layer, TP shard of the old plan): the layer's training state (fp16
//              weights, fp32 master weights, Adam's moments: 14 bytes per parameter, the
//              paper's 180 GB for Llama-2 13B, §IV-A) / the old TP degree (§IV-B.1)
//   locations  the old plan's nodes keep their pieces on local disk (and in host memory, which
//              a preemption clears, §IV-B.1); a node the new plan still uses is alive; the cloud
//              holds every piece
//   needs      a new rank reads the part of each old shard its TP shard overlaps: one shard as
//              it is (TP unchanged), part of one, split (TP raised), several concatenated (TP
//              lowered) (§IV-B.2)
//   sources    local first, then a peer over RDMA (fastest link), then the cloud (§IV-C); a
//              node fetches a remote piece once for all its ranks
//   time       per node its local reads then its peer transfers; the cloud's aggregate
//              bandwidth shared by all downloads; recovery is the slowest of the two
//              (restarting processes and the framework, which the paper's measurements include,
//              are not modelled)
// Cloud-only recovery (the paper's baseline, Varuna [31]): every rank downloads what it needs.
#include <algorithm>
#include <compare>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hetplan/core/error.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/plan/problem.hpp"

namespace hetplan {

struct recovery_options {
    bytes_per_second cloud = bytes_per_second{1.2e9};  ///< cloud storage, aggregate (§V-C: 1,200 MB/s)
    bytes_per_second disk = bytes_per_second{3.5e9};   ///< local NVMe per node (§V-C: 3,500 MB/s)
    bytes_per_second host = bytes_per_second{2.5e10};  ///< host memory to GPU (PCIe 4 x16)
    /// Between nodes; none: the cluster's link between the two nodes' endpoints (RDMA, §IV-C).
    std::optional<bytes_per_second> peer{};
    double state_bytes_per_param = 14.0;  ///< fp16 weights + fp32 master + Adam (§IV-A)
    bool host_memory_survives = false;   ///< memory is cleared when a process is preempted (§IV-B.1)
};

/// A node: hetplan's nodes hold one GPU type (index inside its zone).
struct node_ref {
    gpu_type_id gpu{};
    zone_id zone{};
    int node = 0;
    friend auto operator<=>(const node_ref&, const node_ref&) = default;
};

enum class piece_source { host_memory, local_disk, peer, cloud };

[[nodiscard]] constexpr std::string_view to_string(piece_source s) {
    switch (s) {
        case piece_source::host_memory: return "host_memory";
        case piece_source::local_disk: return "local_disk";
        case piece_source::peer: return "peer";
        case piece_source::cloud: return "cloud";
    }
    return "cloud";
}

/// One checkpoint piece read by one new rank.
struct piece_transfer {
    std::size_t pipeline = 0, stage = 0, worker = 0;  ///< the new rank's worker in the new plan
    int tp_rank = 0;                                  ///< its GPU inside the TP group
    int layer = 0;
    int shard = 0, shards = 1;    ///< the old piece: shard `shard` of `shards` (old TP degree)
    std::string op;               ///< "load", "split" (TP raised) or "concat" (TP lowered)
    piece_source source = piece_source::cloud;
    std::optional<node_ref> from;  ///< the node it comes from (none: the cloud)
    bytes size{};                 ///< the part of the old shard this rank keeps
    seconds time{};               ///< at the source's bandwidth, alone
    bool shared = false;          ///< fetched once by its node for another rank already
};

struct recovery_plan {
    std::vector<piece_transfer> transfers;
    seconds time{};             ///< predicted recovery: the slowest node, or the cloud
    seconds cloud_only_time{};  ///< every rank from the cloud (the baseline)
    bytes local{}, peer{}, cloud{};  ///< bytes by source
    [[nodiscard]] double speedup() const { return time.value > 0 ? cloud_only_time.value / time.value : 1.0; }
};

namespace detail {
inline node_ref node_of(const worker_group& w, const char* which, std::size_t p, std::size_t s, std::size_t k) {
    if (w.node < 0)
        throw input_error(std::string(which) + " plan", "pipelines[" + std::to_string(p) + "].stages[" + std::to_string(s) + "].workers[" + std::to_string(k) + "].node",
                          "recovery needs every worker pinned to a node (AutoHet's plans are)");
    return {w.gpu, w.zone, w.node};
}
}  // namespace detail

/// The transfer plan that takes the training state from `old_plan` to `new_plan` (§IV-B, §IV-C).
[[nodiscard]] inline recovery_plan plan_recovery(const problem& pb, const plan& old_plan, const plan& new_plan, const recovery_options& opt = {}) {
    const int L = pb.model.num_layers();
    // Where each (layer, old TP degree) lives: the old workers' nodes.
    std::map<std::pair<int, int>, std::set<node_ref>> held;  // (layer, tp) -> nodes
    std::vector<int> layout(static_cast<std::size_t>(L), 0);  // the cloud's TP layout per layer
    old_plan.for_each_worker([&](std::size_t p, std::size_t s, std::size_t k, const worker_group& w) {
        const node_ref n = detail::node_of(w, "old", p, s, k);
        for (const auto& r : old_plan.pipelines[p].stages[s].layers)
            for (int l = std::max(r.begin, 0); l < std::min(r.end, L); ++l) {
                held[{l, w.tp}].insert(n);
                if (layout[static_cast<std::size_t>(l)] == 0) layout[static_cast<std::size_t>(l)] = w.tp;
            }
    });
    std::set<node_ref> alive;
    new_plan.for_each_worker([&](std::size_t p, std::size_t s, std::size_t k, const worker_group& w) { alive.insert(detail::node_of(w, "new", p, s, k)); });

    auto layer_bytes = [&](int l) { return bytes{pb.model.params_in(l, l + 1) * opt.state_bytes_per_param}; };
    auto peer_bw = [&](const node_ref& from, const node_ref& to) {
        if (opt.peer) return *opt.peer;
        const bytes probe{1e9};
        return probe / pb.hw.network.between({from.zone, from.gpu, 1}, {to.zone, to.gpu, 1}).transfer_time(probe);
    };

    recovery_plan out;
    std::set<std::tuple<node_ref, int, int, int, int, int>> fetched;  // (node, layer, shard, shards, rank, tp) fetched remotely
    std::map<node_ref, seconds> node_time;
    bytes cloud_total{0}, cloud_only{0};
    new_plan.for_each_worker([&](std::size_t p, std::size_t s, std::size_t k, const worker_group& w) {
        const node_ref here = detail::node_of(w, "new", p, s, k);
        for (const auto& r : new_plan.pipelines[p].stages[s].layers)
            for (int l = std::max(r.begin, 0); l < std::min(r.end, L); ++l)
                for (int rank = 0; rank < w.tp; ++rank) {
                    // The layout to read: a local one, else one a live peer holds, else the cloud's.
                    int tp_old = 0;
                    piece_source src = piece_source::cloud;
                    std::optional<node_ref> from;
                    for (const auto& [key, nodes] : held)
                        if (key.first == l && nodes.count(here)) {
                            tp_old = key.second, src = opt.host_memory_survives ? piece_source::host_memory : piece_source::local_disk, from = here;
                            break;
                        }
                    if (!tp_old) {
                        double fastest = 0;
                        for (const auto& [key, nodes] : held)
                            if (key.first == l)
                                for (const node_ref& n : nodes)
                                    if (alive.count(n) && peer_bw(n, here).value > fastest)
                                        fastest = peer_bw(n, here).value, tp_old = key.second, src = piece_source::peer, from = n;
                    }
                    if (!tp_old) tp_old = layout[static_cast<std::size_t>(l)] ? layout[static_cast<std::size_t>(l)] : w.tp;
                    // Old shards overlapping [rank / tp, (rank + 1) / tp) of the layer.
                    const int first = rank * tp_old / w.tp, last = ((rank + 1) * tp_old + w.tp - 1) / w.tp - 1;
                    const std::string op = tp_old == w.tp ? "load" : tp_old < w.tp ? "split" : "concat";
                    for (int shard = first; shard <= last; ++shard) {
                        // The part of the old shard this rank keeps: [shard, shard + 1) / tp_old
                        // within [rank, rank + 1) / tp, in units of 1 / (tp_old x tp).
                        const int lo = std::max(shard * w.tp, rank * tp_old), hi = std::min((shard + 1) * w.tp, (rank + 1) * tp_old);
                        const bytes size = layer_bytes(l) * (double(hi - lo) / double(tp_old * w.tp));
                        piece_transfer t{p, s, k, rank, l, shard, tp_old, op, src, from, size, {}, false};
                        cloud_only += t.size;
                        switch (src) {
                            case piece_source::host_memory: t.time = t.size / opt.host; break;
                            case piece_source::local_disk: t.time = t.size / opt.disk; break;
                            case piece_source::peer: t.time = t.size / peer_bw(*from, here); break;
                            case piece_source::cloud: t.time = t.size / opt.cloud; break;
                        }
                        const bool remote = src == piece_source::peer || src == piece_source::cloud;
                        t.shared = remote && !fetched.insert({here, l, shard, tp_old, rank, w.tp}).second;
                        if (!t.shared) {
                            if (src == piece_source::cloud) cloud_total += t.size, out.cloud += t.size;
                            else node_time[here] += t.time;
                            if (src == piece_source::peer) out.peer += t.size;
                            if (src == piece_source::local_disk || src == piece_source::host_memory) out.local += t.size;
                        }
                        out.transfers.push_back(std::move(t));
                    }
                }
    });
    seconds slowest{cloud_total / opt.cloud};
    for (const auto& [n, t] : node_time) slowest = max(slowest, t);
    out.time = slowest;
    out.cloud_only_time = cloud_only / opt.cloud;
    return out;
}

}  // namespace hetplan
