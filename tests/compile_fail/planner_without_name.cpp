// Must not compile: a planner without name(); any_planner's concept check names the member.
#include "hetplan/planners/any_planner.hpp"

struct nameless {
    template <class O, class... H>
    hetplan::plan_result plan(const hetplan::problem&, const hetplan::plan_request<O, H...>&) { return {}; }
};
static_assert(hetplan::concepts::check_planner<nameless>());

int main() {}
