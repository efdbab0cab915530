// Example 6: Sailor's planner with one heuristic replaced by your own and your own memory model,
// without touching library code. Your pruner — never two GPU types in one stage — takes H5's
// place; your memory model (only estimate(), no per-worker refinement) holds back 15 % of every
// GPU, and H2 asks it through probe plans. Both plan the built-in 128-GPU problem.
#include <bit>
#include <cstdio>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/sailor.hpp"

using namespace hetplan;

/// Never two GPU types in one stage (a pruner on stage typings).
struct one_gpu_type_per_stage {
    bool operator()(const problem&, const search::stage_typing& t) const { return std::popcount(t.types) == 1; }
};

/// Sailor's memory model with 15 % of every GPU held back for fragmentation: only estimate().
struct cautious_memory {
    sailor_memory_model base{};
    memory_report estimate(const problem& pb, const plan& pl) const {
        memory_report r = base.estimate(pb, pl);
        for (auto& w : r.workers) w.capacity = w.capacity * 0.85;
        return r;
    }
};
static_assert(hetplan::concepts::check_memory_model<cautious_memory>());
static_assert(!hetplan::concepts::worker_memory_model<cautious_memory>);
static_assert(hetplan::concepts::check_pruner<one_gpu_type_per_stage, search::stage_typing>());

int main() {
    const auto in = fixtures::default_planning_example();  // GPT-Neo-2.7 on 32 A100 + 96 V100, two zones
    const problem pb = in.as_problem();
    using sim = simulator<cautious_memory>;
    auto mine = sailor_planner<sim>().with_pruners(search::prune::all{search::h2_memory_fit<cautious_memory>{}, one_gpu_type_per_stage{}});
    auto paper = sailor_planner<>();
    const auto a = paper.plan(pb), b = mine.plan(pb);
    if (!a.best() || !b.best()) return 1;
    bool one_type = true;
    for (const auto& st : b.best()->pl.pipelines[0].stages)
        for (const auto& w : st.workers) one_type = one_type && w.gpu == st.workers.front().gpu;
    std::printf("paper's pieces: %zu stages, %.3f s/iteration\n", a.best()->pl.pipelines[0].stages.size(), a.best()->iteration().value);
    std::printf("yours: %zu stages, %.3f s/iteration, one GPU type per stage: %s, valid under your memory model: %s\n",
                b.best()->pl.pipelines[0].stages.size(), b.best()->iteration().value, one_type ? "yes" : "no",
                validate(pb, b.best()->pl, cautious_memory{}).ok() ? "yes" : "no");
}
