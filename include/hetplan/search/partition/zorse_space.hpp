#pragma once
// Zorse's search space (Zorse §3.3.3) as a concepts::search_space: Phase 1's partitions of the
// pool's machines into GPU groups (search::cluster_partitions, or groupings given by hand) times
// the microbatch sizes, partition-major. The partitions are computed once, when the range is
// made; the range owns them.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <range/v3/view/cartesian_product.hpp>
#include <range/v3/view/iota.hpp>
#include <range/v3/view/transform.hpp>

#include "hetplan/concepts/search_space.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/plan/problem.hpp"
#include "hetplan/search/partition/gpu_groups.hpp"

namespace hetplan::search {

/// One candidate: a partition (machine indices of machines_of(pool)) and a microbatch size.
struct zorse_choice {
    const cluster_partition* partition = nullptr;
    std::size_t index = 0;  ///< of the partition, in Phase 1's order
    int m = 1;
};

struct zorse_space {
    partition_options partition{};
    std::vector<cluster_partition> given{};  ///< non-empty: these groupings instead of Phase 1's
    std::vector<int> microbatch_sizes{};     ///< empty: every divisor of the global batch

    struct data {
        std::vector<machine> machines;
        partition_candidates phase1;
        std::vector<int> sizes;
    };

    /// Phase 1 and the microbatch sizes for a problem (what candidates() ranges over); `stop`
    /// may end Phase 1 early (`phase1.stopped`).
    [[nodiscard]] std::shared_ptr<const data> prepare(const problem& pb, const stop_condition* stop = nullptr) const {
        auto d = std::make_shared<data>();
        d->machines = machines_of(pb.hw, pb.pool());
        if (!d->machines.empty())
            d->phase1 = given.empty() ? cluster_partitions(pb.hw, d->machines, phase1_options(pb), stop) : partition_candidates{checked(d->machines.size())};
        d->sizes = microbatch_sizes;
        const int B = pb.job.global_batch;
        if (d->sizes.empty())
            for (int m = 1; m <= B; ++m)
                if (B % m == 0) d->sizes.push_back(m);
        return d;
    }

    /// The candidates of prepared data (the planner keeps the data for the machine list).
    [[nodiscard]] static auto over(std::shared_ptr<const data> d) {
        const int P = static_cast<int>(d->phase1.partitions.size()), M = static_cast<int>(d->sizes.size());
        return ranges::views::cartesian_product(ranges::views::iota(0, P), ranges::views::iota(0, M)) |
               ranges::views::transform([d](const auto& pm) {
                   const auto [p, m] = pm;
                   return zorse_choice{&d->phase1.partitions[std::size_t(p)], std::size_t(p), d->sizes[std::size_t(m)]};
               });
    }

    [[nodiscard]] auto candidates(const problem& pb) const { return over(prepare(pb)); }

private:
    /// Every group holds at least one layer: no partition into more groups than layers.
    [[nodiscard]] partition_options phase1_options(const problem& pb) const {
        partition_options o = partition;
        o.max_groups = std::min(o.max_groups, static_cast<int>(pb.model.layers.size()));
        return o;
    }

    /// Given groupings must use every machine exactly once; returned in Phase 1's normal form.
    [[nodiscard]] std::vector<cluster_partition> checked(std::size_t machines) const {
        std::vector<cluster_partition> ps = given;
        for (std::size_t p = 0; p < ps.size(); ++p) {
            std::vector<int> uses(machines, 0);
            for (const auto& g : ps[p]) {
                if (g.empty()) throw input_error("zorse options: partitions[" + std::to_string(p) + "] has an empty group");
                for (int k : g) {
                    if (k < 0 || static_cast<std::size_t>(k) >= machines)
                        throw input_error("zorse options: partitions[" + std::to_string(p) + "] names machine " + std::to_string(k) +
                                          "; the pool has " + std::to_string(machines));
                    ++uses[static_cast<std::size_t>(k)];
                }
            }
            for (std::size_t k = 0; k < machines; ++k)
                if (uses[k] != 1)
                    throw input_error("zorse options: partitions[" + std::to_string(p) + "] uses machine " + std::to_string(k) + " " +
                                      std::to_string(uses[k]) + " times, not once");
            ps[p] = detail::normalised(std::move(ps[p]));
        }
        return ps;
    }
};

static_assert(concepts::check_search_space<zorse_space>());

}  // namespace hetplan::search
