#pragma once
// Metis' search (Metis §4; memory-aware Metis §3): the inter-stage space, the intra-stage walk
// of each candidate with a split order (the one piece the two variants differ in), each plan
// priced by Metis' cost model; the best plans kept, ties to the first found. Hooks hear
// on_moves(n) for each plan (Metis' search steps, see intra_stage.hpp) and may stop the search.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <boost/hana/tuple.hpp>

#include "hetplan/core/stop.hpp"
#include "hetplan/cost/time/metis.hpp"
#include "hetplan/search/hooks.hpp"
#include "hetplan/search/metis/inter_stage.hpp"
#include "hetplan/search/metis/intra_stage.hpp"

namespace hetplan::search::metis {

struct metis_options {
    device_group_rules groups{};
    intra_limits limits{};
    metis_rules rules = metis_rules::corrected();
    std::vector<std::vector<int>> orders{};  ///< GPU-type orders to search (empty: every order)
    std::size_t keep = 1;                    ///< best plans kept
    std::size_t candidate_budget = 0;        ///< inter-stage candidates walked at most (0: all)
    int gpus = 0;                            ///< GPUs the stages cover, the first of each type order (0: all)
};

/// A plan of the search, priced.
struct metis_plan {
    std::vector<int> order;
    metis_candidate x;
    metis_cost_terms cost;
    double total = 0;  ///< ms per iteration
    int attempt = 1;   ///< the partition attempt that fit
};

struct metis_stats {
    std::size_t candidates = 0;  ///< inter-stage candidates
    std::size_t plans = 0;       ///< plans the walks emitted
    std::size_t steps = 0;       ///< Metis' search steps
    std::size_t unrunnable = 0;  ///< plans with an empty stage or a layer in no stage (not priced)
    std::size_t unpriced = 0;    ///< plans whose price needs a measurement the profile lacks
    int deepest = 0;             ///< the most stages of a candidate walked
    bool stopped = false;
    bool budget_spent = false;   ///< candidate_budget ended the search
};

struct metis_result {
    std::vector<metis_plan> best;  ///< cheapest first
    metis_stats stats;
};

template <class SplitOrder = metis_split_order, class Memory = metis_memory>
class metis_search {
public:
    metis_search(const metis_profile& p, const metis_cluster& c, int global_batch, metis_options opt = {}, Memory memory = {})
        : p_(&p), c_(&c), gbs_(global_batch), opt_(std::move(opt)), memory_(std::move(memory)) {
        c.check_against(p);
        if (global_batch < 1) throw input_error("metis_search: the global batch must be >= 1");
        if (opt_.orders.empty()) opt_.orders = type_orders(c.present_types());
    }

    template <class... Hooks>
    [[nodiscard]] metis_result run(const stop_condition* stop = nullptr, boost::hana::tuple<Hooks...> hooks = {}) const {
        metis_result res;
        stop_poll poll(stop);
        stage_model<Memory> model(*p_, *c_, opt_.rules, memory_);
        const metis_cost_model price(*p_, *c_, opt_.rules);
        std::vector<metis_layout> layouts;
        for (const auto& o : opt_.orders) layouts.emplace_back(*c_, o);
        const SplitOrder order{};
        walk_state w;
        partition_outcome out;
        std::vector<double> shares;
        metis_candidate x;
        x.global_batch = gbs_;
        const int G = opt_.gpus > 0 ? std::min(opt_.gpus, c_->gpus()) : c_->gpus(), L = p_->layers;
        bool halted = false;
        for_each_inter_stage(opt_.orders, G, L, gbs_, opt_.groups, opt_.rules.published_enumeration, [&](const inter_stage_candidate& ic) {
            if (opt_.candidate_budget > 0 && res.stats.candidates >= opt_.candidate_budget) {
                res.stats.budget_spent = true;
                return true;
            }
            ++res.stats.candidates;
            res.stats.deepest = std::max(res.stats.deepest, int(ic.groups.size()));
            const metis_layout& layout = layouts[ic.order_index];
            model.reset(layout, ic.groups, gbs_, ic.microbatches);
            const bool finished = walk_strategies(
                model, ic.groups, gbs_, ic.microbatches, opt_.limits, order, w, out, shares, poll,
                [&](const walk_state& ws, const partition_outcome& po, std::size_t steps) {
                    ++res.stats.plans;
                    res.stats.steps += steps;
                    if (notify_moves(hooks, steps)) halted = true;
                    if (!runnable(po.partition)) {
                        ++res.stats.unrunnable;
                        return halted;
                    }
                    x.groups.assign(ic.groups.begin(), ic.groups.end());
                    x.dp = ws.dp;
                    x.tp = ws.tp;
                    x.microbatches = ic.microbatches;
                    x.partition = po.partition;
                    const auto terms = price(layout, x);
                    if (!terms) {
                        ++res.stats.unpriced;
                        return halted;
                    }
                    offer(res.best, metis_plan{std::vector<int>(ic.order.begin(), ic.order.end()), x, *terms, terms->total(), po.attempt});
                    return halted;
                });
            if (!finished) res.stats.stopped = true;
            return !finished || halted;
        });
        if (halted) res.stats.stopped = true;
        return res;
    }

private:
    /// Every stage holds a layer and every layer a stage (the balancer can leave either out).
    [[nodiscard]] bool runnable(const std::vector<int>& part) const {
        for (std::size_t s = 0; s + 1 < part.size(); ++s)
            if (part[s + 1] <= part[s]) return false;
        return part.back() == p_->layers;
    }
    void offer(std::vector<metis_plan>& best, metis_plan&& pl) const {
        if (best.size() >= opt_.keep && !(pl.total < best.back().total)) return;
        const auto at = std::upper_bound(best.begin(), best.end(), pl.total, [](double v, const metis_plan& b) { return v < b.total; });
        best.insert(at, std::move(pl));
        if (best.size() > opt_.keep) best.pop_back();
    }

    const metis_profile* p_;
    const metis_cluster* c_;
    int gbs_;
    metis_options opt_;
    Memory memory_;
};

}  // namespace hetplan::search::metis
