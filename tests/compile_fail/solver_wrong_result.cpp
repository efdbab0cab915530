// Must not compile: a solver for Sailor's instances that returns a bare double; the planner
// names the member and the result it needs.
#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/sailor.hpp"

struct bad_solver {
    explicit bad_solver(hetplan::sailor_time_model = {}) {}
    static constexpr const char* name() { return "bad"; }
    const hetplan::sailor_time_model& time_model() const { return tm; }
    template <class SP> void prepare(SP&) const {}
    bool stopped() const { return false; }
    template <class SP, class O>
    double solve(const hetplan::problem&, const SP&, const O&, const hetplan::solve_limits&) { return 0; }
    hetplan::sailor_time_model tm;
};

int main() {
    auto p = hetplan::sailor_planner<>().with_solver(bad_solver{});
    (void)p.plan(hetplan::fixtures::default_example().as_problem());
}
