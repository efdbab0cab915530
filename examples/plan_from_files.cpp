// Example 9: a consumer that reads hetplan's JSON files (docs/formats.md) and plans with Sailor's
// planner: plan_from_files CLUSTER.json MODEL.json JOB.json [PROFILES.json]. Built against
// hetplan::compiled it compiles in a few seconds (README, "Compile time").
#include <cstdio>
#include <exception>

#include "hetplan/io.hpp"
#include "hetplan/planners/sailor.hpp"

int main(int argc, char** argv) try {
    if (argc < 4) return std::fprintf(stderr, "usage: %s CLUSTER.json MODEL.json JOB.json [PROFILES.json]\n", argv[0]), 2;
    const auto hw = hetplan::io::read_cluster_file(argv[1]);
    const auto model = hetplan::io::read_model_file(argv[2]);
    const auto job = hetplan::io::read_job_file(argv[3]);
    hetplan::profile_table profiles;
    if (argc > 4) profiles = hetplan::io::read_profiles_file(argv[4]);
    else profiles.enable_analytical({});  // no profiles: layer times from FLOPs and peaks
    hetplan::io::check_consistency(hw, model, job, profiles, {argv[1], argv[2], argv[3], argc > 4 ? argv[4] : "profiles"});
    const auto r = hetplan::sailor_planner<>().plan({hw, model, job, profiles});
    if (!r.best()) return std::fprintf(stderr, "no plan: %s\n", r.notes.empty() ? "(no note)" : r.notes.front().c_str()), 1;
    std::printf("%zu stages, %d GPUs, %.4f s/iteration, %.4f USD/iteration\n", r.best()->pl.pipelines[0].stages.size(), r.best()->gpus(),
                r.best()->iteration().value, r.best()->cost().value);
} catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
}
