// The command line's whole path from parsed files to plans: {"cluster", "model", "job",
// "profiles"?} read, checked and cross-checked as `hetplan plan` does, then every built-in planner
// with a 200 ms deadline. Every plan returned must pass the validator and price to what the
// planner reported; a planner must stop on its deadline (libFuzzer's -timeout catches a hang).
#include <chrono>

#include "../apps/hetplan/commands.hpp"
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace hetplan;
    fuzz::refuse_cleanly([&] {
        const io::json j = io::parse_text(fuzz::text(data, size), "fuzz.json");
        const io::cursor root(j, "fuzz.json");
        root.known_fields({"cluster", "model", "job", "profiles"});
        app::parsed_inputs p{root["cluster"].raw(), root["model"].raw(), root["job"].raw(), std::nullopt};
        if (auto pr = root.find("profiles")) p.profiles = pr->raw();
        const app::inputs in = app::load_parsed(p, {"cluster.json", "model.json", "job.json", "profiles.json"});
        const problem pb = in.pb();
        for (any_planner& planner : builtin_planners()) {
            planning_request req;
            req.top = 2;
            req.stop = stop_condition::after(std::chrono::milliseconds(200));
            const plan_result r = planner.plan(pb, req);
            for (const ranked_plan& c : r.plans) {
                if (!planner.check(pb, c.pl).ok()) fuzz::finding("a planner returned a plan its validator refuses");
                if (planner.price(pb, c.pl).time.iteration.value != c.est.time.iteration.value)
                    fuzz::finding("a returned plan prices differently from what its planner reported");
            }
        }
    });
    return 0;
}
