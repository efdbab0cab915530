#pragma once
// Exact dominance pruning for the stage DP. Sailor's Eq. 1 keeps one value per subproblem, but
// the iteration time combines a sum (warm-up), a max (straggler), another max (all-reduce) and
// the update, so the suffix with the lowest time of its own is not always the best suffix for
// every prefix. Keeping every suffix that no other beats on all terms makes the DP exact; in
// practice the fronts hold a handful of entries.
#include <algorithm>

namespace hetplan::search {

/// Every term on which a partial solution is compared; lower is better on each.
struct suffix_terms {
    double sum = 0;     ///< sum of stage times (compute + p2p): warm-up and cool-down
    double strag = 0;   ///< slowest stage time
    double sync = 0;    ///< slowest stage all-reduce
    double upd = 0;     ///< slowest optimizer step
    double extra = 0;   ///< p2p time the previous stage spends sending into this suffix
    double rate = 0;    ///< USD per second of the GPUs used (the objective's money, or its tie-break's)
    double comm = 0;    ///< USD of cross-zone traffic per iteration (0 unless money is priced)
    double mrate = 0;   ///< the objective's own measure per second (only with a measured objective)
    int gpus = 0;       ///< GPUs of the suffix, every replica (only with a GPU limit)

    [[nodiscard]] bool dominates(const suffix_terms& o, bool measure, bool count = false) const {
        return sum <= o.sum && strag <= o.strag && sync <= o.sync && upd <= o.upd && extra <= o.extra && rate <= o.rate && comm <= o.comm &&
               (!measure || mrate <= o.mrate) && (!count || gpus <= o.gpus);
    }
};

/// Inserts `e` into the front `f` (a vector of types with a `terms` member) unless an existing
/// entry dominates it (ties keep the earlier entry: deterministic), removing entries it
/// dominates. Returns whether it was inserted. `count`: the GPU count is a term too.
template <class Front, class Entry>
bool pareto_insert(Front& f, const Entry& e, bool measure, bool count = false) {
    for (const auto& x : f)
        if (x.terms.dominates(e.terms, measure, count)) return false;
    f.erase(std::remove_if(f.begin(), f.end(), [&](const Entry& x) { return e.terms.dominates(x.terms, measure, count); }), f.end());
    f.push_back(e);
    return true;
}

}  // namespace hetplan::search
