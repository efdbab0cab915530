// How long one simulation of the built-in example takes, next to a validation.
#define CATCH_CONFIG_ENABLE_BENCHMARKING
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "hetplan/hetplan.hpp"

TEST_CASE("simulate the built-in example") {
    const auto in = hetplan::fixtures::default_example();
    const hetplan::problem pb = in.as_problem();
    const hetplan::simulator<> sim;
    BENCHMARK("simulator<>::run") { return sim.run(pb, in.example_plan).time.iteration.value; };
    BENCHMARK("validate") { return hetplan::validate(pb, in.example_plan, hetplan::sailor_memory_model{}).ok(); };
}
