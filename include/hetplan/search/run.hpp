#pragma once
// What every planner does around its search, in one place: the clock, the stop condition, the
// hooks, and the ranked list. A planner offers each plan it builds; the run validates it against
// the planner's memory model, prices its objective terms, keeps it if the objective admits it,
// tells the hooks, and at the end ranks the list (objective value; plans within 0.1 % of the
// best by the objective's tie-break) and returns plan_result.
//
// The list also bounds the search (branch and bound): cutoff() is the objective value above
// which a candidate can no longer enter it: `rank_within` above the best, and the keep-th value
// once `keep` plans are in, but never below the tie band (tie_tolerance above the best).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "hetplan/concepts/solver.hpp"
#include "hetplan/plan/validator.hpp"
#include "hetplan/search/hooks.hpp"
#include "hetplan/search/objective.hpp"
#include "hetplan/search/request.hpp"
#include "hetplan/search/result.hpp"

namespace hetplan::search {

/// Plans within this relative distance of the best are ordered by the objective's tie-break.
inline constexpr double tie_tolerance = 1e-3;
/// The note of a search that stopped before it finished (callers that know why replace it).
inline constexpr const char* stopped_note = "stopped early: the best plans found so far";
/// How the note on a stopped search's proven distance (plan_result::gap) begins.
inline constexpr const char* gap_note = "the best plan is within ";

template <class O, class... Hooks>
class search_run {
public:
    search_run(const problem& pb, const plan_request<O, Hooks...>& rq, std::size_t keep = 1)
        : pb_(pb), o_(rq.objective), hooks_(rq.hooks), stop_(rq.stop), top_(std::max<std::size_t>(rq.top, 1)),
          keep_(std::max(keep, top_)), within_(rq.rank_within), t0_(std::chrono::steady_clock::now()) {}

    [[nodiscard]] const problem& pb() const { return pb_; }
    [[nodiscard]] const O& objective() const { return o_; }
    [[nodiscard]] boost::hana::tuple<Hooks...>& hooks() { return hooks_; }
    [[nodiscard]] const stop_condition& stop() const { return stop_; }
    [[nodiscard]] search_stats& stats() { return stats_; }
    void note(std::string s) { notes_.push_back(std::move(s)); }

    /// Whether the search must end: the stop condition, or a hook asked.
    [[nodiscard]] bool stopping() {
        if (!stopped_ && stop_.requested()) stopped_ = true;
        return stopped_;
    }
    /// Marks the run stopped (a solver noticed the stop condition, or a hook asked).
    void halt() { stopped_ = true; }
    /// A branch-and-bound planner's proof: nothing its search would still offer, were it not
    /// stopped, has a value below `open` (+inf: nothing is left open). finish() reports the
    /// lesser of it and the best value as plan_result::bound; where `open` is that bound, a
    /// stopped run's note names `held_by`, the candidate whose floor it is.
    void prove(double open, std::string held_by = {}) { open_ = open, held_by_ = std::move(held_by); }

    /// The limits to hand a solver: the cut-off, and the stop condition.
    [[nodiscard]] solve_limits limits() const { return {cutoff().value_or(std::numeric_limits<double>::infinity()), &stop_}; }
    /// Objective value above which a plan cannot enter the ranked list; none while it is empty.
    /// Plans within tie_tolerance of the best are all kept whatever `keep`: finish() orders
    /// them by the objective's tie-break, so any of them may be the one returned.
    [[nodiscard]] std::optional<double> cutoff() const {
        if (values_.empty()) return std::nullopt;
        const double best = values_.front();
        double cut = best + std::abs(best) * within_;
        if (values_.size() >= keep_) cut = std::min(cut, values_.back());
        return std::max(cut, best + std::abs(best) * tie_tolerance);
    }
    /// The best value so far (+inf: none).
    [[nodiscard]] double best() const { return values_.empty() ? std::numeric_limits<double>::infinity() : values_.front(); }

    template <class C>
    void candidate(const C& c) {
        ++stats_.candidates;
        if (notify_candidate(hooks_, c)) halt();
    }
    template <class C, class P>
    void pruned(const C& c, const P& by) {
        ++stats_.pruned;
        if (notify_pruned(hooks_, c, by)) halt();
    }
    /// A candidate went through the solver: the hooks hear it, and the progress.
    template <class C, class S>
    void solved(const C& c, const S& s) {
        ++stats_.solved;
        if (notify_solved(hooks_, c, s)) halt();
        if (notify_step(hooks_, search_progress{stats_.solved, best(), unit_of(o_)})) halt();
    }

    /// Offers a complete plan priced as `est` by the planner's simulator: validated with the
    /// planner's memory model `mm`, kept when the objective admits it. Returns its objective
    /// value when kept. A plan the validator rejects is a bug of the search: counted and noted.
    template <class MemoryModel>
    std::optional<double> offer(plan pl, const estimate& est, seconds predicted, const MemoryModel& mm, const std::string& what) {
        const auto report = validate(pb_, pl, mm);
        if (!report.ok()) {
            ++stats_.invalid;
            note("rejected " + what + ": " + report.summary());
            return std::nullopt;
        }
        ++stats_.plans;
        std::optional<double> out;
        const objective_terms t = terms_of(o_, pb_, pl, est);
        if (!o_.admits(t)) {
            ++refused_;
            closest_usd_ = std::min(closest_usd_, t.usd);
            closest_iteration_ = std::min(closest_iteration_, t.iteration);
            closest_gpus_ = std::min(closest_gpus_, t.gpus);
        }
        if (o_.admits(t)) {
            const double v = o_.value(t);
            out = v;
            const bool duplicate = std::any_of(found_.begin(), found_.end(), [&](const ranked_plan& r) { return r.pl == pl; });
            if (!duplicate) {
                const bool incumbent = v < best();
                values_.insert(std::upper_bound(values_.begin(), values_.end(), v), v);
                if (values_.size() > keep_) values_.pop_back();
                found_.push_back({std::move(pl), est, t, v, predicted});
                if (incumbent && notify_incumbent(hooks_, found_.back())) halt();
            }
        }
        return out;
    }

    /// Takes back a plan offered before (a solver's best so far that a longer solve of the same
    /// candidate superseded): the list and the cut-off forget it, as if never offered. The
    /// values that bound the search are rebuilt from the plans still listed (erasing one value
    /// from a list of `keep` could leave it empty, with plans found).
    void withdraw(const plan& pl) {
        const auto it = listed(pl);
        if (it == found_.end()) return;
        found_.erase(it);
        values_.clear();
        for (const ranked_plan& r : found_) values_.push_back(r.value);
        std::sort(values_.begin(), values_.end());
        if (values_.size() > keep_) values_.resize(keep_);
    }
    /// Of two listed plans of one candidate (a best so far and a longer solve's answer), keeps
    /// the one of lower value and withdraws the other (`older` on a tie, or when either is not
    /// listed): a solver ranks by its own price, the list by the simulator's, so the longer
    /// solve's answer can be the worse one, and withdrawing the better would raise the cut-off
    /// above plans already bounded out under it. Returns whether `newer` is the one kept.
    bool keep_better(const plan& older, const plan& newer) {
        const auto a = listed(older), b = listed(newer);
        const bool keep_newer = !(a != found_.end() && b != found_.end() && a->value < b->value);
        withdraw(keep_newer ? older : newer);
        return keep_newer;
    }

    /// The ranked plans: best value first; those within 0.1 % of the best by the tie-break; then
    /// only those within `rank_within` of the best, at most `top`.
    [[nodiscard]] plan_result finish(std::string planner) {
        plan_result out;
        out.planner = std::move(planner);
        std::stable_sort(found_.begin(), found_.end(), [](const ranked_plan& a, const ranked_plan& b) { return a.value < b.value; });
        out.bound = open_;
        if (!found_.empty()) {
            const double best_value = found_.front().value;
            if (out.bound) out.bound = std::min(*out.bound, best_value);
            const double tie = best_value + std::abs(best_value) * tie_tolerance;
            const auto tied = std::partition_point(found_.begin(), found_.end(), [&](const ranked_plan& r) { return r.value <= tie; });
            std::stable_sort(found_.begin(), tied, [&](const ranked_plan& a, const ranked_plan& b) {
                return tie_break(o_, a.terms) < tie_break(o_, b.terms);
            });
            const double limit = best_value + std::abs(best_value) * within_;
            std::erase_if(found_, [&](const ranked_plan& r) { return r.value > limit; });
        }
        if (found_.size() > top_) found_.resize(top_);
        if (found_.empty() && refused_ > 0) notes_.push_back(refused_note());
        out.plans = std::move(found_);
        out.stats = std::move(stats_);
        out.notes = std::move(notes_);
        out.stopped = stopped_;
        if (stopped_) out.notes.emplace_back(stopped_note);
        if (const auto g = out.gap(); g && stopped_) {
            char buf[200];
            std::snprintf(buf, sizeof buf, "%s%.3g %% of what the finished search returns: no plan it returns is below %.6g %s", gap_note, 100 * *g,
                          *out.bound, unit_of(o_));
            out.notes.emplace_back(buf);
            if (!held_by_.empty() && open_ && *open_ == *out.bound) out.notes.back() += " (the least floor left open, " + held_by_ + ")";
        }
        out.elapsed = seconds{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count()};
        return out;
    }

private:
    /// The listed entry of `pl`, or found_.end().
    [[nodiscard]] std::vector<ranked_plan>::iterator listed(const plan& pl) {
        return std::find_if(found_.begin(), found_.end(), [&](const ranked_plan& r) { return r.pl == pl; });
    }
    /// What the constraints shut out: the cheapest and the fastest of the refused plans, next
    /// to the limits (when the objective has Sailor's constraints).
    [[nodiscard]] std::string refused_note() const {
        char buf[320];
        std::snprintf(buf, sizeof buf, "%zu valid plan(s) found, none within the objective's constraints: the cheapest costs %.4g USD/iteration",
                      refused_, closest_usd_);
        std::string s = buf;
        if constexpr (requires { o_.limits.max_usd; o_.limits.min_throughput; }) {
            if (o_.limits.max_usd) std::snprintf(buf, sizeof buf, " (budget %.4g)", *o_.limits.max_usd), s += buf;
            std::snprintf(buf, sizeof buf, ", the fastest reaches %.4g iterations/s", 1.0 / closest_iteration_), s += buf;
            if (o_.limits.min_throughput) std::snprintf(buf, sizeof buf, " (minimum %.4g)", *o_.limits.min_throughput), s += buf;
            if constexpr (requires { o_.limits.max_gpus; }) {
                if (o_.limits.max_gpus) std::snprintf(buf, sizeof buf, ", the smallest uses %d GPUs (at most %d)", closest_gpus_, *o_.limits.max_gpus), s += buf;
            }
        } else {
            std::snprintf(buf, sizeof buf, ", the fastest reaches %.4g iterations/s", 1.0 / closest_iteration_), s += buf;
        }
        return s;
    }

    const problem& pb_;
    O o_;
    boost::hana::tuple<Hooks...> hooks_;
    stop_condition stop_;
    std::size_t top_, keep_;
    double within_;
    std::chrono::steady_clock::time_point t0_;
    std::vector<double> values_;  ///< the best `keep` values so far, increasing
    std::vector<ranked_plan> found_;
    search_stats stats_;
    std::vector<std::string> notes_;
    std::size_t refused_ = 0;  ///< valid plans the objective did not admit
    double closest_usd_ = std::numeric_limits<double>::infinity();        ///< cheapest refused plan
    double closest_iteration_ = std::numeric_limits<double>::infinity();  ///< fastest refused plan
    int closest_gpus_ = std::numeric_limits<int>::max();                  ///< smallest refused plan
    bool stopped_ = false;
    std::optional<double> open_;  ///< prove()'s floor of what the search left open
    std::string held_by_;         ///< and whose floor it is
};

/// Runs `search()`; a missing link ends the search with a note naming both endpoints and the
/// cluster fields that add one (for planners that need every pair of GPUs linked: Zorse, Cephalo).
template <class Run, class Search>
[[nodiscard]] plan_result until_missing_link(Run& run, std::string planner, Search&& search) {
    try {
        return search();
    } catch (const missing_link& m) {
        run.note("the search stopped: " + run.pb().hw.describe(m));
        return run.finish(std::move(planner));
    }
}

}  // namespace hetplan::search
