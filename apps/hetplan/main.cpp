// The hetplan command. `hetplan simulate` prices a plan and prints its memory, time and cost
// breakdown; with no files it simulates the built-in example (fixtures/example.hpp).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hetplan/hetplan.hpp"
#include "hetplan/io.hpp"
#include "report.hpp"

namespace {

int usage(std::FILE* out) {
    std::fprintf(out,
                 "usage: hetplan simulate [--cluster C.json --model M.json --job J.json --profiles P.json --plan PLAN.json]\n"
                 "                        [--json OUT.json]\n"
                 "  With no files, simulates the built-in example: OPT-350 on 8 A100-40 + 8 V100-16 in two stages.\n");
    return out == stdout ? 0 : 2;
}

int simulate(const std::vector<std::string>& args) {
    using namespace hetplan;
    std::string cluster_file, model_file, job_file, profiles_file, plan_file, json_out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw input_error("option " + args[i] + " needs a value");
            return args[++i];
        };
        if (args[i] == "--cluster") cluster_file = value();
        else if (args[i] == "--model") model_file = value();
        else if (args[i] == "--job") job_file = value();
        else if (args[i] == "--profiles") profiles_file = value();
        else if (args[i] == "--plan") plan_file = value();
        else if (args[i] == "--json") json_out = value();
        else if (args[i] == "--help" || args[i] == "-h") return usage(stdout);
        else throw input_error("unknown option " + args[i]);
    }
    fixtures::example_inputs in = fixtures::default_example();
    const bool custom = !cluster_file.empty() || !model_file.empty() || !job_file.empty() || !plan_file.empty();
    if (custom && (cluster_file.empty() || model_file.empty() || job_file.empty() || plan_file.empty()))
        throw input_error("simulate needs all of --cluster, --model, --job and --plan (and --profiles unless the analytical fallback will do)");
    if (custom) {
        in.hw = io::read_cluster_file(cluster_file);
        in.model = io::read_model_file(model_file);
        in.model.check(model_file);
        in.job = io::read_job_file(job_file);
        in.job.check(job_file);
        in.profiles = profiles_file.empty() ? profile_table{} : io::read_profiles_file(profiles_file);
        if (profiles_file.empty()) in.profiles.enable_analytical({});
        in.example_plan = io::read_plan_file(plan_file, in.hw);
    } else {
        std::printf("simulating the built-in example (layer times from the analytical fallback: FLOPs / (0.4 x peak))\n");
    }
    const problem pb = in.as_problem();
    const validation_report v = validate(pb, in.example_plan);
    const estimate e = simulator<>{}.run(pb, in.example_plan);
    app::print_estimate(stdout, pb, in.example_plan, e);
    if (!v.ok()) std::printf("\nthe plan is NOT valid:\n%s", v.summary().c_str());
    else std::printf("\nvalid plan: every layer placed once, batch conserved, GPUs within the pool, memory fits\n");
    if (!json_out.empty()) {
        io::json j = {{"plan", io::write_plan(in.example_plan, in.hw)},
                      {"iteration_s", e.time.iteration.value},
                      {"throughput_it_s", e.time.throughput()},
                      {"cost_usd", e.money.total.value},
                      {"valid", v.ok()}};
        std::FILE* f = std::fopen(json_out.c_str(), "w");
        if (!f) throw input_error(json_out, {}, "cannot write file");
        std::fputs(j.dump(2).c_str(), f);
        std::fclose(f);
    }
    return v.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        if (args.empty() || args[0] == "simulate") return simulate(args.empty() ? args : std::vector<std::string>(args.begin() + 1, args.end()));
        if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") return usage(stdout);
        std::fprintf(stderr, "hetplan: unknown command '%s'\n", args[0].c_str());
        return usage(stderr);
    } catch (const hetplan::error& e) {
        std::fprintf(stderr, "hetplan: %s\n", e.what());
        return 2;
    }
}
