// A plan file against the built-in example problem: read, validated, then priced by every
// built-in planner's models (Sailor's, Zorse's, Cephalo's simulators). What no model can price
// must be refused by the validator before any model runs (docs/reliability.md).
#include "fuzz.hpp"
#include "hetplan/fixtures/example.hpp"
#include "hetplan/io.hpp"
#include "hetplan/planners/registry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace hetplan;
    static const fixtures::planning_example ex = fixtures::default_planning_example();
    static const problem pb = ex.as_problem();
    static const std::vector<any_planner> planners = builtin_planners();
    fuzz::refuse_cleanly([&] {
        const io::json j = io::parse_text(fuzz::text(data, size), "plan.json");
        const plan pl = io::read_plan(io::cursor(j, "plan.json"), pb.hw);
        for (const any_planner& models : planners) {
            const validation_report v = models.check(pb, pl);
            if (!v.priceable) continue;
            const estimate e = models.price(pb, pl);
            if (!(e.time.iteration.value >= 0)) fuzz::finding("a priceable plan got a negative or NaN iteration time");
        }
    });
    return 0;
}
