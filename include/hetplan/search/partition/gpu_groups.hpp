#pragma once
// Zorse Phase 1 (Zorse §3.3.2): candidate divisions of the cluster into GPU groups (data
// parallel inside, pipelined between), from min-k-cuts of the bandwidth graph.
//
// The paper cuts the complete graph of GPUs weighted by bandwidth. A pure minimum k-cut of that
// graph prefers isolating single GPUs in large clusters (one GPU's edges weigh less than a
// machine's), so here the vertices are whole machines, each edge weighing the sum of its GPU
// pairs' bandwidths (the GPU graph with every machine contracted): SPLIT over cuts that never
// split a machine. Two graphs give candidates, deduplicated:
//   - machines: SPLIT for every k (peels machines off where the graph says so);
//   - classes of alike machines (same GPU type, zone and size): SPLIT for every k, and a group
//     made of one class may also be cut into d equal runs of machines for every divisor d of
//     its machine count. Within a class all cuts of equal size weigh the same, so SPLIT alone
//     only ever peels one machine; the even runs are what lets Phase 2 size the data-parallel
//     groups of a GPU type (§5.2: V100s "form two 8-GPU groups", T4s "two 24-GPU groups per
//     region"). Every combination of divisors over the groups while there are few
//     (max_run_combinations); beyond, every group cut to the run length nearest a common
//     target, and each group cut alone: the product grows as divisors^groups.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <vector>

#include "hetplan/hardware/machines.hpp"
#include "hetplan/search/partition/min_k_cut.hpp"

namespace hetplan::search {

using machine_group = std::vector<int>;              ///< indices into the machine list, increasing
using cluster_partition = std::vector<machine_group>;  ///< ordered by each group's first machine

/// Sum over the GPU pairs of machines a and b of their link's bandwidth for `message` bytes.
[[nodiscard]] inline double pair_bandwidth(const cluster& hw, const machine& a, const machine& b, bytes message) {
    return double(a.gpus) * double(b.gpus) * gpu_link(hw, a, b).bandwidth(message).value;
}

/// The machine-level bandwidth graph.
[[nodiscard]] inline weighted_graph machine_graph(const cluster& hw, const std::vector<machine>& ms, bytes message) {
    weighted_graph g(static_cast<int>(ms.size()));
    for (std::size_t a = 0; a < ms.size(); ++a)
        for (std::size_t b = a + 1; b < ms.size(); ++b) g.set(int(a), int(b), pair_bandwidth(hw, ms[a], ms[b], message));
    return g;
}

/// Classes of alike machines, each a list of machine indices, in machine order.
[[nodiscard]] inline std::vector<machine_group> machine_classes(const std::vector<machine>& ms) {
    std::vector<machine_group> out;
    for (std::size_t i = 0; i < ms.size(); ++i) {
        auto it = std::find_if(out.begin(), out.end(), [&](const machine_group& c) { return ms[std::size_t(c.front())].alike(ms[i]); });
        if (it == out.end()) out.push_back({int(i)});
        else it->push_back(int(i));
    }
    return out;
}

[[nodiscard]] inline long long gpus_in(const std::vector<machine>& ms, const machine_group& g) {
    long long n = 0;
    for (int i : g) n += ms[std::size_t(i)].gpus;
    return n;
}

/// The vertices of the class-level graph: classes of alike machines while there are at most
/// `max` (their edge weights are exact), else the machines of each zone, else of each region,
/// else one vertex (weights from each vertex's first machine: the network between zones is
/// priced per zone pair). Stoer-Wagner is cubic in the vertices: 10^4 classes would take hours.
[[nodiscard]] inline std::vector<machine_group> coarse_vertices(const cluster& hw, const std::vector<machine>& ms, std::size_t max) {
    auto classes = machine_classes(ms);
    if (classes.size() <= max) return classes;
    for (const bool by_zone : {true, false}) {
        std::map<std::size_t, machine_group> at;
        for (std::size_t i = 0; i < ms.size(); ++i) at[by_zone ? ms[i].zone.index() : hw.region_of(ms[i].zone).index()].push_back(int(i));
        if (at.size() <= max) {
            std::vector<machine_group> out;
            for (auto& [key, g] : at) out.push_back(std::move(g));
            return out;
        }
    }
    machine_group all(ms.size());
    std::iota(all.begin(), all.end(), 0);
    return {all};
}

struct partition_options {
    bytes message = megabytes(64);       ///< message size at which links are compared
    bool machine_level = true;           ///< SPLIT over machines
    bool class_level = true;             ///< SPLIT over classes, with even runs of a class
    std::size_t max_candidates = 20000;  ///< stop adding even-run variants beyond this
    /// ... and beyond this many machine indices stored over all candidates (each lists every
    /// machine: 20,000 candidates of 10^5 machines took 14 GB before).
    std::size_t max_stored_machines = 50'000'000;
    /// SPLIT over machines only up to this many machines: it costs O(n^3) per cut and, as the
    /// machines of a class are interchangeable, mostly peels single machines off (512 machines:
    /// 12 s before). Beyond it the class-level candidates stand alone.
    std::size_t machine_level_max = 128;
    /// SPLIT over at most this many classes; beyond, over zones or regions (coarse_vertices).
    std::size_t class_level_max = 256;
    int max_groups = std::numeric_limits<int>::max();  ///< no partition into more groups (the model's layers)
    /// Per cut, every combination of even runs up to this many; beyond, the coordinated ones
    /// (512 machines in 8 classes: 20,000 capped candidates and 7.4 s of Phase 2 before).
    std::size_t max_run_combinations = 64;
};

struct partition_candidates {
    std::vector<cluster_partition> partitions;
    bool truncated = false;  ///< max_candidates reached
    bool stopped = false;    ///< the stop condition ended Phase 1 early
};

namespace detail {
inline cluster_partition normalised(cluster_partition p) {
    for (auto& g : p) std::sort(g.begin(), g.end());
    std::sort(p.begin(), p.end(), [](const machine_group& a, const machine_group& b) { return a.front() < b.front(); });
    return p;
}
inline cluster_partition from_labels(const std::vector<int>& label, const std::vector<machine_group>& vertex_machines) {
    cluster_partition p;
    for (std::size_t v = 0; v < label.size(); ++v) {
        const auto k = static_cast<std::size_t>(label[v]);
        if (p.size() <= k) p.resize(k + 1);
        p[k].insert(p[k].end(), vertex_machines[v].begin(), vertex_machines[v].end());
    }
    return normalised(std::move(p));
}
}  // namespace detail

/// Zorse Phase 1: the candidate partitions (see the header comment), deterministic order.
/// `stop` is polled between cuts and candidates: a stopped pass returns what it has (`stopped`).
[[nodiscard]] inline partition_candidates cluster_partitions(const cluster& hw, const std::vector<machine>& ms, const partition_options& opt = {},
                                                             const stop_condition* stop = nullptr) {
    partition_candidates out;
    if (ms.empty()) return out;
    std::set<cluster_partition> seen;
    auto add = [&](cluster_partition p) {
        p = detail::normalised(std::move(p));
        if (seen.insert(p).second) out.partitions.push_back(std::move(p));
    };
    // The machine graph is n^2 doubles (80 GB for 10^5 machines): built only for SPLIT over
    // machines; beyond machine_level_max a class pair's weight is its machine count product times
    // one pair's (the machines of a class are alike).
    const bool machine_level = opt.machine_level && ms.size() <= opt.machine_level_max;
    const weighted_graph mg = machine_level ? machine_graph(hw, ms, opt.message) : weighted_graph{};
    const std::size_t cap = std::min(opt.max_candidates, std::max<std::size_t>(1, opt.max_stored_machines / ms.size()));
    // Group g of base cut into runs[g][pick[g]] equal runs; false once the cap is reached.
    auto emit = [&](const cluster_partition& base, const std::vector<std::vector<int>>& runs, const std::vector<std::size_t>& pick) {
        if (out.partitions.size() >= cap) {
            out.truncated = true;
            return false;
        }
        if (stop && stop->requested()) {
            out.stopped = true;
            return false;
        }
        long long groups = 0;
        for (std::size_t g = 0; g < base.size(); ++g) groups += runs[g][pick[g]];
        if (groups > opt.max_groups) return true;
        cluster_partition p;
        for (std::size_t g = 0; g < base.size(); ++g) {
            const int d = runs[g][pick[g]], len = static_cast<int>(base[g].size()) / d;
            for (int r = 0; r < d; ++r) p.emplace_back(base[g].begin() + r * len, base[g].begin() + (r + 1) * len);
        }
        add(std::move(p));
        return true;
    };
    auto run_gpus = [&](const machine_group& g, int d) { return static_cast<int>(g.size()) / d * ms[std::size_t(g.front())].gpus; };
    if (opt.class_level) {
        const auto classes = coarse_vertices(hw, ms, opt.class_level_max);
        weighted_graph cg(static_cast<int>(classes.size()));
        for (std::size_t a = 0; a < classes.size(); ++a)
            for (std::size_t b = a + 1; b < classes.size(); ++b) {
                double w = 0;
                if (machine_level) {
                    for (int i : classes[a])
                        for (int j : classes[b]) w += mg.weight(i, j);
                } else {
                    w = double(gpus_in(ms, classes[a])) * double(gpus_in(ms, classes[b])) *
                        gpu_link(hw, ms[std::size_t(classes[a].front())], ms[std::size_t(classes[b].front())]).bandwidth(opt.message).value;
                }
                cg.set(int(a), int(b), w);
            }
        const k_cut_sequence seq(cg, minimum_two_cut, opt.max_groups, stop);
        out.stopped = seq.stopped();
        for (int k = seq.first_k(); k <= seq.last_k() && !out.stopped; ++k) {
            const cluster_partition base = detail::from_labels(seq.partition(k), classes);
            // Even runs of the groups that are one class: the divisors of each.
            std::vector<std::vector<int>> runs(base.size(), std::vector<int>{1});
            for (std::size_t g = 0; g < base.size(); ++g) {
                const bool one_class = std::all_of(base[g].begin(), base[g].end(), [&](int i) { return ms[std::size_t(i)].alike(ms[std::size_t(base[g].front())]); });
                const int c = static_cast<int>(base[g].size());
                if (one_class)
                    for (int d = 2; d <= c; ++d)
                        if (c % d == 0) runs[g].push_back(d);
            }
            // Every combination while there are few (every published cluster), else the
            // coordinated ones (see the header comment): 16 classes of 32 machines make 6^16.
            std::size_t combinations = 1;
            for (const auto& r : runs) combinations = r.size() > opt.max_run_combinations / combinations ? opt.max_run_combinations + 1 : combinations * r.size();
            if (combinations <= opt.max_run_combinations) {
                std::vector<std::size_t> pick(base.size(), 0);
                while (emit(base, runs, pick)) {
                    std::size_t g = 0;  // next combination (odometer)
                    while (g < base.size() && ++pick[g] == runs[g].size()) pick[g++] = 0;
                    if (g == base.size()) break;
                }
            } else {
                std::vector<int> targets;  // run lengths in GPUs
                for (std::size_t g = 0; g < base.size(); ++g)
                    for (int d : runs[g]) targets.push_back(run_gpus(base[g], d));
                std::sort(targets.begin(), targets.end());
                targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
                bool more = true;
                for (auto t = targets.rbegin(); more && t != targets.rend(); ++t) {
                    std::vector<std::size_t> pick(base.size(), 0);
                    for (std::size_t g = 0; g < base.size(); ++g)
                        for (std::size_t i = 1; i < runs[g].size(); ++i)
                            if (std::abs(run_gpus(base[g], runs[g][i]) - *t) < std::abs(run_gpus(base[g], runs[g][pick[g]]) - *t)) pick[g] = i;
                    more = emit(base, runs, pick);
                }
                for (std::size_t g = 0; more && g < base.size(); ++g)
                    for (std::size_t i = 1; more && i < runs[g].size(); ++i) {
                        std::vector<std::size_t> pick(base.size(), 0);
                        pick[g] = i;
                        more = emit(base, runs, pick);
                    }
            }
        }
    }
    if (machine_level) {
        std::vector<machine_group> singletons;
        for (std::size_t i = 0; i < ms.size(); ++i) singletons.push_back({int(i)});
        const k_cut_sequence seq(mg, minimum_two_cut, opt.max_groups, stop);
        out.stopped = out.stopped || seq.stopped();
        for (int k = seq.first_k(); k <= seq.last_k(); ++k) add(detail::from_labels(seq.partition(k), singletons));
    }
    return out;
}

}  // namespace hetplan::search
