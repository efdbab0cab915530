#pragma once
// What the Zorse and Cephalo tests read of a plan_result, in the words of those papers: groups,
// microbatch size, ministages (Zorse); uneven units, utilisation (Cephalo). Derived from the
// best plan, so the tests check what the planners return.
#include <optional>
#include <string>
#include <vector>

#include "hetplan/planners/cephalo.hpp"
#include "hetplan/planners/zorse.hpp"

namespace hetplan::test {

struct zorse_outcome {
    std::optional<plan> pl;
    estimate est;
    std::vector<machine> machines;
    search::cluster_partition groups;
    int microbatch_size = 0, ministages = 0;
    seconds predicted{}, elapsed{};
    std::size_t partitions = 0, configurations = 0;
    bool stopped = false;
    std::vector<std::string> notes;
    [[nodiscard]] double throughput() const { return pl ? est.time.throughput() : 0.0; }
};

inline zorse_outcome zorse_run(const problem& pb, const zorse_options& opt = {}) {
    const plan_result r = zorse_planner<>(opt).plan(pb);
    zorse_outcome out;
    out.machines = machines_of(pb.hw, pb.pool());
    out.partitions = r.stats.counter("partitions");
    out.configurations = r.stats.counter("configurations");
    out.elapsed = r.elapsed;
    out.stopped = r.stopped;
    out.notes = r.notes;
    if (const ranked_plan* b = r.best()) {
        out.pl = b->pl;
        out.est = b->est;
        out.predicted = b->predicted;
        out.groups = zorse_groups(pb, b->pl);
        out.microbatch_size = b->pl.pipelines[0].stages[0].workers[0].microbatch_size;
        out.ministages = static_cast<int>(b->pl.pipelines[0].stages[0].layers.size());
    }
    return out;
}

struct cephalo_outcome {
    std::optional<plan> pl;
    estimate est;
    seconds predicted{}, elapsed{};  ///< predicted: the batch DP's makespan
    int uneven_units = 0;
    double utilisation = 0;
    std::vector<std::string> notes;
    [[nodiscard]] double throughput() const { return pl ? est.time.throughput() : 0.0; }
};

inline cephalo_outcome cephalo_run(const problem& pb, const cephalo_options& opt = {}) {
    const plan_result r = cephalo_planner<>(opt).plan(pb);
    cephalo_outcome out;
    out.elapsed = r.elapsed;
    out.notes = r.notes;
    if (const ranked_plan* b = r.best()) {
        out.pl = b->pl;
        out.est = b->est;
        out.predicted = b->predicted;
        out.uneven_units = cephalo_uneven_units(pb, b->pl);
        out.utilisation = peak_utilisation(b->est);
    }
    return out;
}

}  // namespace hetplan::test
