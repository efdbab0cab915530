// Must not compile: a pruner whose operator() is not const judges no candidate; Sailor's planner
// says which member and which candidates it expects.
#include "hetplan/planners/sailor.hpp"

struct typo_pruner {
    bool operator()(const hetplan::problem&, const hetplan::search::stage_typing&) { return true; }  // not const
};

int main() {
    auto p = hetplan::sailor_planner<>().with_pruners(hetplan::search::prune::all{typo_pruner{}});
    (void)p;
}
