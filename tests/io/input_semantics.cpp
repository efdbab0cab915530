// Input semantics (issue 16): what a user writes is either honoured or refused with the file,
// the JSON path and the nearest known field; nothing is silently ignored or summed.
#include <doctest/doctest.h>

#include <filesystem>
#include <climits>
#include <fstream>

#include "../support.hpp"
#include "hetplan/fixtures/example.hpp"
#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/io.hpp"
#include "hetplan/planners/registry.hpp"

using namespace hetplan;

namespace {
using test::error_of;
template <class Read>
std::string read_error(const std::string& text, Read read) {
    return error_of([&] {
        const auto j = io::parse_text(text, "f.json");
        (void)read(io::cursor(j, "f.json"));
    });
}
bool has(const std::string& msg, const std::string& part) {
    if (msg.find(part) != std::string::npos) return true;
    MESSAGE(msg);
    return false;
}
const std::string gpus = R"("gpus": [{"name": "A", "memory_gib": 16, "gpus_per_node": 4}], "zones": [{"name": "z-a"}])";
std::string all_notes(const plan_result& r) {
    std::string all;
    for (const auto& n : r.notes) all += n + "\n";
    return all;
}
std::string gpu_with(const std::string& fields) { return R"({"gpus": [{"name": "A", "gpus_per_node": 4, )" + fields + R"(}], "zones": [{"name": "z-a"}]})"; }
std::string layer_with(const std::string& fields) { return R"({"name": "m", "layers": [{"params": 1, "act_output_elems": 1, "act_mem_elems": 1, )" + fields + "}]}"; }
auto cluster_of = [](const io::cursor& c) { return io::read_cluster(c); };
auto job_of = [](const io::cursor& c) { return io::read_job(c); };
auto model_of = [](const io::cursor& c) { return io::read_model(c); };
auto profiles_of = [](const io::cursor& c) {
    profile_table t;
    io::read_profiles(c, t);
    return t;
};
}  // namespace

TEST_CASE("unknown keys are refused with the nearest known field, in every reader") {
    // The cases of issue 16: "zero": 3 in a job, "memory_gb" for a GPU.
    CHECK(has(read_error(R"({"global_batch": 8, "sequence_length": 16, "zero": 3})", job_of),
              "f.json: $.zero: unknown field 'zero' (did you mean 'zero_stage'?)"));
    CHECK(has(read_error(R"({"gpus": [{"name": "A", "memory_gb": 16, "gpus_per_node": 4}], "zones": []})", cluster_of),
              "f.json: $.gpus[0].memory_gb: unknown field 'memory_gb' (did you mean 'memory_gib'?)"));
    CHECK(has(read_error("{" + gpus + R"(, "availble": []})", cluster_of), "$.availble: unknown field 'availble' (did you mean 'available'?)"));
    CHECK(has(read_error("{" + gpus + R"(, "network": {"default": {"bandwidth_gbit_s": 10, "latency": 1e-5}}})", cluster_of),
              "$.network.default.latency: unknown field 'latency' (did you mean 'latency_s'?)"));
    CHECK(has(read_error(R"({"name": "m", "layers": [{"params": 1, "act_output_elems": 1, "act_mem_elems": 1, "flop_fwd": 1}]})", model_of),
              "$.layers[0].flop_fwd: unknown field 'flop_fwd' (did you mean 'flops_fwd'?)"));
    CHECK(has(read_error(R"({"profiles": [{"gpu": "A", "tp": 1, "points": [], "tails": {}}]})", profiles_of),
              "$.profiles[0].tails: unknown field 'tails' (did you mean 'tail'?)"));
    // Nothing near: the message lists what the object takes.
    CHECK(has(read_error(R"({"global_batch": 8, "sequence_length": 16, "learning_rate_schedule": 1})", job_of),
              "unknown field 'learning_rate_schedule'; this object takes 'global_batch'"));
    // Keys starting with '_' are comments.
    CHECK(read_error(R"({"_comment": "mine", "global_batch": 8, "sequence_length": 16})", job_of) == "no error");
    // A plan's worker, and its memory options.
    const auto j = io::parse_text("{" + gpus + "}", "c.json");
    const cluster hw = io::read_cluster(io::cursor(j, "c.json"));
    auto plan_of = [&](const io::cursor& c) { return io::read_plan(c, hw); };
    CHECK(has(read_error(R"({"pipelines": [{"stages": [{"layers": [[0, 1]], "workers": [
        {"gpu": "A", "zone": "z-a", "microbatch_size": 1, "microbatches": 1, "pp": 2}]}]}]})", plan_of),
              "$.pipelines[0].stages[0].workers[0].pp: unknown field 'pp'"));
    CHECK(has(read_error(R"({"memory": {"zero": 1}, "pipelines": []})", plan_of), "$.memory.zero: unknown field 'zero' (did you mean 'zero_stage'?)"));
}

TEST_CASE("duplicates are refused: JSON keys, GPU entries of one zone, both forms of one field") {
    CHECK(has(error_of([] { (void)io::parse_text(R"({"a": {"b": [1, {"c": 1, "c": 2}]}})", "f.json"); }),
              "f.json: $.a.b[1].c: duplicate key 'c'"));
    CHECK(has(error_of([] { (void)io::parse_text(R"({"x": 1, "y": [1, 2], "x": 2})", "f.json"); }), "f.json: $.x: duplicate key 'x'"));
    // The same (gpu, zone) listed twice used to be summed.
    CHECK(has(read_error("{" + gpus + R"(, "available": [{"gpu": "A", "zone": "z-a", "count": 4}, {"gpu": "A", "zone": "z-a", "count": 4}]})", cluster_of),
              "$.available[1]: GPU type 'A' in zone 'z-a' is listed twice"));
    CHECK(has(read_error(R"({"gpus": [{"name": "A", "memory_gib": 16, "memory_bytes": 1e9, "gpus_per_node": 4}], "zones": []})", cluster_of),
              "$.gpus[0].memory_bytes: give memory_gib or memory_bytes, not both"));
}

TEST_CASE("GPU counts are bounded: no overflow past INT_MAX, a limit that names itself") {
    // Two counts summing past INT_MAX were "resource pool: negative GPU count -2147483639".
    CHECK(has(read_error("{" + gpus + R"(, "available": [{"gpu": "A", "zone": "z-a", "count": 2147483000}]})", cluster_of),
              "$.available[0].count: expected an integer in [0, 100000]"));
    CHECK(has(read_error(R"({"gpus": [{"name": "A", "memory_gib": 16, "gpus_per_node": 4}], "zones": [{"name": "z-a"}, {"name": "z-b"}],
                             "available": [{"gpu": "A", "zone": "z-a", "count": 60000}, {"gpu": "A", "zone": "z-b", "count": 60000}]})",
                         cluster_of),
              "$.available[1].count: the cluster offers more than 100000 GPUs"));
}

TEST_CASE("files: a directory, a missing file, a device are named as such") {
    const auto dir = std::filesystem::temp_directory_path();
    CHECK(has(error_of([&] { (void)io::parse_file(dir); }), "is a directory, not a JSON file"));
    CHECK(has(error_of([&] { (void)io::parse_file(dir / "hetplan-no-such-file.json"); }), "cannot open file (it does not exist)"));
    if (std::filesystem::exists("/dev/zero"))  // reading it used to take 6 GB
        CHECK(has(error_of([] { (void)io::parse_file("/dev/zero"); }), "/dev/zero: is not a regular file"));
}

TEST_CASE("edit distance and the nearest name") {
    CHECK(io::edit_distance("kitten", "sitting") == 3);
    CHECK(io::edit_distance("", "abc") == 3);
    const std::array<std::string_view, 3> known{"zero_stage", "recompute", "global_batch"};
    CHECK(io::nearest_name("zero", known) == std::optional<std::string_view>("zero_stage"));
    CHECK(io::nearest_name("recomput", known) == std::optional<std::string_view>("recompute"));
    CHECK_FALSE(io::nearest_name("optimizer", known));
}

TEST_CASE("inputs are checked against each other at load time, naming both files") {
    const auto j = io::parse_text(R"({"gpus": [{"name": "A", "memory_gib": 16, "gpus_per_node": 4, "peak_tflops": {"fp32": 10}},
                                                {"name": "P", "memory_gib": 16, "gpus_per_node": 4}],
                                       "zones": [{"name": "z"}], "available": [{"gpu": "A", "zone": "z", "count": 4}]})",
                                  "c.json");
    cluster hw = io::read_cluster(io::cursor(j, "c.json"));
    model_spec m;
    m.name = "m";
    m.sequence_length = 128;
    m.layers.resize(3, layer_spec{"l", 1e6, 1e3, 1e3, 1e4, 1e9, {}});
    job_spec job;
    job.global_batch = 8;
    job.sequence_length = 2048;
    profile_table p;
    const io::input_sources src{"c.json", "m.json", "j.json", "p.json"};
    // Sequence 128 in the model, 2048 in the job: the header printed one, the numbers used the other.
    CHECK(has(error_of([&] { io::check_consistency(hw, m, job, p, src); }),
              "j.json: sequence_length: 2048, but m.json gives sequence_length 128"));
    m.sequence_length = 2048;
    // A profile for a GPU type the cluster lacks was ignored.
    profile_curve c;
    c.add_point(1, std::vector<layer_timing>(3, layer_timing{seconds{1e-3}, seconds{2e-3}, seconds{1e-4}}));
    p.set_curve("H100", 1, c);
    CHECK(has(error_of([&] { io::check_consistency(hw, m, job, p, src); }),
              "p.json: profiles[gpu=H100, tp=1]: GPU type 'H100' is not in c.json (its types: A, P)"));
    // A profile of 2 layers for a 3-layer model failed mid-search without a file name.
    p = {};
    profile_curve short_curve;
    short_curve.add_point(1, std::vector<layer_timing>(2, layer_timing{seconds{1e-3}, seconds{2e-3}, seconds{1e-4}}));
    p.set_curve("A", 1, short_curve);
    CHECK(has(error_of([&] { io::check_consistency(hw, m, job, p, src); }), "p.json: profiles[gpu=A, tp=1]: 2 layers per point, but m.json's model 'm' has 3"));
    p.set_curve("A", 1, c);
    io::check_consistency(hw, m, job, p, src);  // consistent
    // A GPU type only the analytical fallback can time needs a peak for the job's compute type.
    hw.pool.set(gpu_type_id{1}, zone_id{0}, 4);
    p.enable_analytical({});
    CHECK(has(error_of([&] { io::check_consistency(hw, m, job, p, src); }), "c.json: gpus[name=P].peak_tflops: no peak for fp32"));
}

TEST_CASE("resource pool: counts that would overflow an int are refused") {
    resource_pool pool(1, 1);
    pool.set(gpu_type_id{0}, zone_id{0}, INT_MAX - 8);
    CHECK(has(error_of([&] { pool.add(gpu_type_id{0}, zone_id{0}, 16); }), "more than an int holds"));
    resource_pool two(1, 2);
    two.set(gpu_type_id{0}, zone_id{0}, INT_MAX - 8);
    two.set(gpu_type_id{0}, zone_id{1}, 16);
    CHECK(has(error_of([&] { (void)two.total(); }), "more than an int holds"));
    CHECK(has(error_of([&] { (void)two.total(gpu_type_id{0}); }), "more than an int holds"));
}

// Limits and planning-time errors: numbers beyond core/limits.hpp are refused with the file and
// field (1e308 GiB overflowed to inf before and was planned); what can only go wrong while
// planning is said in a note that names the cluster's fields, not by an internal error.
TEST_CASE("numbers beyond the documented limits are refused, naming the file and field") {
    CHECK(has(read_error(gpu_with(R"("memory_gib": 1e308)"), cluster_of), "f.json: $.gpus[0].memory_gib: 1e+308 is beyond the limit"));
    CHECK(has(read_error(gpu_with(R"("memory_bytes": 1e300)"), cluster_of), "$.gpus[0].memory_bytes: 1e+300 is beyond the limit 1e+15"));
    CHECK(has(read_error(gpu_with(R"("memory_gib": 16, "peak_tflops": {"fp16": 1e300})"), cluster_of), "$.gpus[0].peak_tflops.fp16: 1e+300 is beyond"));
    CHECK(has(read_error(gpu_with(R"("memory_gib": 16, "price_per_hour": 1e300)"), cluster_of), "$.gpus[0].price_per_hour"));
    // Found by fuzzing: a peak of 311e-92 TFLOP/s made analytical layer times of 1e91 s.
    CHECK(has(read_error(gpu_with(R"("memory_gib": 16, "peak_tflops": {"fp16": 311e-92})"), cluster_of),
              "$.gpus[0].peak_tflops.fp16: 3.11e-90 is below the limit 0.001 (0 means unknown"));
    CHECK(has(read_error(R"({"gpus": [], "zones": [], "network": {"default": {"bandwidth_gbit_s": 1e300}}})", cluster_of),
               "$.network.default.bandwidth_gbit_s: 1e+300 is beyond"));
    CHECK(has(read_error(R"({"gpus": [], "zones": [], "network": {"default": {"bandwidth_gbit_s": 1, "latency_s": -1}}})", cluster_of),
               "$.network.default.latency_s: must be >= 0"));
    std::string zones = R"({"gpus": [], "zones": [)";
    for (int z = 0; z <= limits::max_zones; ++z) zones += (z ? ", " : "") + std::string(R"({"name": "z)") + std::to_string(z) + R"("})";
    CHECK(has(read_error(zones + "]}", cluster_of), "$.zones[1000]: more than 1000 zones"));

    CHECK(has(read_error(layer_with(R"("flops_fwd": 1e300)"), model_of), "$.layers[0].flops_fwd: 1e+300 is beyond the limit 1e+21"));
    CHECK(has(read_error(R"({"name": "m", "layers": [{"params": 1e300, "act_output_elems": 1, "act_mem_elems": 1}]})", model_of),
               "$.layers[0].params: 1e+300 is beyond"));
    CHECK(has(read_error(layer_with(R"("repeat": 100000)"), model_of), "$.layers[0].repeat: expected an integer in [1, 10000]"));
    CHECK(has(read_error(R"({"name": "m", "layers": [{"params": 1, "act_output_elems": 1, "act_mem_elems": 1, "repeat": 6000},
                                                         {"params": 1, "act_output_elems": 1, "act_mem_elems": 1, "repeat": 6000}]})",
                             model_of),
               "$.layers[1]: the model would have more than 10000 layers"));
    CHECK(has(read_error(R"({"transformer": {"layers": 2, "hidden": 4194304, "heads": 1, "vocab": 10, "sequence": 8}})", model_of),
               "$.transformer.hidden: expected an integer in [1, 1048576]"));
    // The issue's hang: a global batch of 2^31 - 1.
    CHECK(has(read_error(R"({"global_batch": 2147483647, "sequence_length": 16})", job_of), "$.global_batch: expected an integer in [1, 16777216]"));

    // Specs built in code are held to the same limits by their check().
    model_spec m = fixtures::tiny_gpt();
    m.layers[1].act_mem_elems = 1e300;
    CHECK(has(error_of([&] { m.check("mine"); }), "mine: layers[1].act_mem_elems: must be finite, >= 0 and at most"));
    job_spec j;
    j.global_batch = limits::max_global_batch + 1;
    CHECK(has(error_of([&] { j.check("mine"); }), "mine: global_batch: must be in [1, 16777216]"));
}

TEST_CASE("inputs no planner could time are refused at load time, naming both files") {
    fixtures::planning_example ex = fixtures::default_planning_example();
    for (auto& l : ex.model.layers) l.flops_fwd = 0;
    CHECK(has(error_of([&] { io::check_consistency(ex.hw, ex.model, ex.job, ex.profiles, {"c.json", "m.json", "j.json", "p.json"}); }),
               "m.json: layers[*].flops_fwd: all 0, but A100-40 has no profile in p.json"));
    profile_table zero;
    profile_curve c;
    c.add_point(1, std::vector<layer_timing>(ex.model.layers.size()));
    zero.set_curve("A100-40", 1, c);
    ex = fixtures::default_planning_example();
    CHECK(has(error_of([&] { io::check_consistency(ex.hw, ex.model, ex.job, zero, {"c.json", "m.json", "j.json", "p.json"}); }),
               "p.json: profiles[gpu=A100-40, tp=1].points: every forward and backward time is 0"));
}

TEST_CASE("a missing link or a batch past Cephalo's DP is a note naming the fields, not an internal error") {
    cluster hw;
    const gpu_type_id a = hw.add_gpu(fixtures::a100_40(), 4);
    const zone_id z = hw.add_zone("z-a");
    hw.pool.set(a, z, 8);  // no network section at all
    const model_spec model = fixtures::tiny_gpt();
    job_spec job;
    job.global_batch = 16;
    job.sequence_length = 128;
    profile_table profiles;
    profiles.enable_analytical({});
    const problem pb{hw, model, job, profiles};
    for (const char* name : {"zorse", "cephalo"}) {
        INFO(name);
        const plan_result r = planner_named(name).plan(pb, planning_request{});
        CHECK(r.plans.empty());
        CHECK(has(all_notes(r), "the cluster's network has no link from A100-40 x1 in z-a to A100-40 x1 in z-a (add network.default"));
    }
    hw.network.set_default(alpha_beta_link{seconds{1e-5}, gigabits_per_second(100)});
    // Above 65,535 samples Cephalo's DP counts units of several samples (issue 16; it refused
    // before); a batch no unit of at most 1,024 samples divides is refused with the reason.
    job.global_batch = 70'000;
    const plan_result r = planner_named("cephalo").plan(pb, planning_request{});
    CHECK_FALSE(r.plans.empty());
    CHECK(has(all_notes(r), "global batch 70000 > 65535: the batch DP (Eq. 4) runs on 3500 units of 20 samples"));
    job.global_batch = 65'537;  // prime
    const plan_result none = planner_named("cephalo").plan(pb, planning_request{});
    CHECK(none.plans.empty());
    CHECK(has(all_notes(none), "global batch 65537: Cephalo's batch DP (Eq. 4) takes at most 65535 units"));
}
