// Bad input never crashes or hangs: each case raises input_error naming the file, the JSON path
// and what is wrong.
#include <doctest/doctest.h>

#include "../support.hpp"
#include "hetplan/io.hpp"

using namespace hetplan;

namespace {
using test::error_of;
cluster cluster_from(const std::string& text) {
    const auto j = io::parse_text(text, "c.json");
    return io::read_cluster(io::cursor(j, "c.json"));
}
const std::string gpus = R"("gpus": [{"name": "A", "memory_gib": 16, "gpus_per_node": 4}], "zones": [{"name": "z-a"}])";
}  // namespace

TEST_CASE("malformed JSON names the file") {
    const auto msg = error_of([] { (void)io::parse_text("{\"gpus\": [", "c.json"); });
    CHECK(msg.find("c.json: malformed JSON") != std::string::npos);
}

TEST_CASE("missing field names the path") {
    const auto msg = error_of([] { cluster_from(R"({"gpus": [{"name": "A", "gpus_per_node": 4}], "zones": []})"); });
    CHECK(msg.find("c.json: $.gpus[0]: missing field 'memory_gib'") != std::string::npos);
}

TEST_CASE("zero-memory GPU") {
    const auto msg = error_of([] { cluster_from(R"({"gpus": [{"name": "A", "memory_gib": 0, "gpus_per_node": 4}], "zones": []})"); });
    CHECK(msg.find("$.gpus[0].memory_gib: must be positive") != std::string::npos);
}

TEST_CASE("negative or zero bandwidth") {
    const auto neg = error_of([] { cluster_from("{" + gpus + R"(, "network": {"default": {"bandwidth_gbit_s": -1}}})"); });
    CHECK(neg.find("$.network.default.bandwidth_gbit_s: must be positive") != std::string::npos);
    const auto poly = error_of([] {
        cluster_from("{" + gpus + R"(, "network": {"default": {"polynomial_gb_s": [-1], "max_bytes_per_s": 1e9}}})");
    });
    CHECK(poly.find("$.network.default: polynomial link: bandwidth is not positive") != std::string::npos);
}

TEST_CASE("unknown GPU or zone names") {
    const auto g = error_of([] { cluster_from("{" + gpus + R"(, "available": [{"gpu": "H200", "zone": "z-a", "count": 1}]})"); });
    CHECK(g.find("$.available[0].gpu: unknown GPU type 'H200'") != std::string::npos);
    const auto z = error_of([] { cluster_from("{" + gpus + R"(, "available": [{"gpu": "A", "zone": "mars-1", "count": 1}]})"); });
    CHECK(z.find("$.available[0].zone: unknown zone 'mars-1'") != std::string::npos);
    const cluster hw = cluster_from("{" + gpus + "}");
    const auto plan_msg = error_of([&] {
        const auto j = io::parse_text(R"({"pipelines": [{"stages": [{"layers": [[0, 1]], "workers": [
            {"gpu": "A", "zone": "z-b", "microbatch_size": 1, "microbatches": 1}]}]}]})", "plan.json");
        (void)io::read_plan(io::cursor(j, "plan.json"), hw);
    });
    CHECK(plan_msg.find("plan.json: $.pipelines[0].stages[0].workers[0].zone: unknown zone 'z-b'") != std::string::npos);
}

TEST_CASE("NaN or infinity in profiles") {
    profile_table t;
    const auto inf = error_of([&] {
        const auto j = io::parse_text(R"({"1": {"1": {"0": [1e999, 0.1, 0.1]}}})", "profile.json");
        io::sailor::import_profile(io::cursor(j, "profile.json"), "A", t);
    });
    // nlohmann-json rejects numbers beyond double range while parsing.
    CHECK(inf.find("profile.json: malformed JSON") != std::string::npos);
    CHECK(inf.find("1e999") != std::string::npos);
    const auto nan = error_of([&] {  // JSON has no NaN: producers write null or a string
        const auto j = io::parse_text(R"({"1": {"1": {"0": [null, 0.1, 0.1]}}})", "profile.json");
        io::sailor::import_profile(io::cursor(j, "profile.json"), "A", t);
    });
    CHECK(nan.find("$.1.1.0[0]: expected a number, got null") != std::string::npos);
    const auto neg = error_of([&] {
        const auto j = io::parse_text(R"({"profiles": [{"gpu": "A", "tp": 1, "points": [{"microbatch_size": 1, "layers": [[-1, 0, 0]]}]}]})", "p.json");
        io::read_profiles(io::cursor(j, "p.json"), t);
    });
    CHECK(neg.find("$.profiles[0].points[0].layers[0][0]: must be >= 0") != std::string::npos);
}

TEST_CASE("bad job and model values") {
    const auto j = error_of([] {
        const auto x = io::parse_text(R"({"global_batch": 0, "sequence_length": 8})", "job.json");
        (void)io::read_job(io::cursor(x, "job.json"));
    });
    CHECK(j.find("job.json: $.global_batch: expected an integer in [1,") != std::string::npos);
    const auto p = error_of([] {
        const auto x = io::parse_text(R"({"global_batch": 8, "sequence_length": 8, "precision": "fp64"})", "job.json");
        (void)io::read_job(io::cursor(x, "job.json"));
    });
    CHECK(p.find("$.precision: unknown precision 'fp64'") != std::string::npos);
    const auto m = error_of([] {
        const auto x = io::parse_text(R"({"name": "m", "layers": [{"params": -5, "act_output_elems": 1, "act_mem_elems": 1}]})", "m.json");
        (void)io::read_model(io::cursor(x, "m.json"));
    });
    CHECK(m.find("m.json: $.layers[0].params: must be >= 0") != std::string::npos);
}

TEST_CASE("Zorse/Cephalo files: a small hand-made set imports; bad entries name their path") {
    // Two blocks of 100 parameters; 40 more in embeddings and head, spread over the blocks.
    const auto stats = io::parse_text(R"({"tiny": {"hidden_size": 8, "num_layers": 2, "parameters_per_layer": 100,
                                          "total_parameters": 240}})", "model_stats.json");
    const model_spec m = io::cephalo::import_model_stats(io::cursor(stats, "model_stats.json"), "tiny", 16);
    CHECK(m.num_layers() == 2);
    CHECK(m.layers[1].params == doctest::Approx(120.0));
    CHECK(m.total_params() == doctest::Approx(240.0));
    CHECK(m.layers[0].act_output_elems == doctest::Approx(16.0 * 8));
    // Measured at microbatch 1 and 2 (ms), then the fit 3 ms x m + 1 ms forward, 6 ms x m backward.
    const auto lat = io::parse_text(R"({"tiny": {"g1": {"16": {"float32": [[3, 1], [6, 0], [4, 7], [8, 14]]}}}})", "lat.json");
    profile_table t;
    io::cephalo::import_latencies(io::cursor(lat, "lat.json"), {"tiny", "g1", 16, "float32"}, "G1", 2, t);
    const auto* c = t.find("G1", 1);
    REQUIRE(c != nullptr);
    CHECK(c->at(2, 1).first.fwd.value == doctest::Approx(7e-3));
    CHECK(c->at(5, 0).first.fwd.value == doctest::Approx(16e-3));
    CHECK(c->at(5, 0).first.bwd.value == doctest::Approx(30e-3));
    // Compute memory: points 1.5, 2.0, 2.5 GiB at microbatch 1..3: 1 GiB + 0.5 GiB per sample.
    const auto mem = io::parse_text(R"({"lab": {"tiny": {"profiled_compute_memory": {"float32": [1.5, 2.0, 2.5]}}}})", "mem.json");
    const auto fit = io::cephalo::import_compute_memory(io::cursor(mem, "mem.json"), "lab", "tiny", "float32");
    CHECK(fit.intercept.value == doctest::Approx(gibibytes(1).value));
    CHECK(fit.per_sample.value == doctest::Approx(gibibytes(0.5).value));

    auto stats_error = [](const std::string& text) {
        return error_of([&] {
            const auto j = io::parse_text(text, "model_stats.json");
            (void)io::cephalo::import_model_stats(io::cursor(j, "model_stats.json"), "tiny", 16);
        });
    };
    CHECK(stats_error(R"({"tiny": {"hidden_size": 8, "num_layers": 2, "parameters_per_layer": 100, "total_parameters": 150}})")
              .find("model_stats.json: $.tiny.total_parameters: smaller than num_layers x parameters_per_layer") != std::string::npos);
    CHECK(stats_error(R"({"tiny": {"hidden_size": 8, "num_layers": 2, "parameters_per_layer": 100}})")
              .find("$.tiny: missing field 'total_parameters'") != std::string::npos);
    CHECK(stats_error(R"({"other": {}})").find("$: missing field 'tiny'") != std::string::npos);
    const auto short_entry = error_of([] {
        const auto j = io::parse_text(R"({"tiny": {"g1": {"16": {"float32": [[3, 1]]}}}})", "lat.json");
        profile_table unused;
        io::cephalo::import_latencies(io::cursor(j, "lat.json"), {"tiny", "g1", 16, "float32"}, "G1", 2, unused);
    });
    CHECK(short_entry.find("lat.json: $.tiny.g1.16.float32: expected [fwd_fit, bwd_fit]") != std::string::npos);
    const auto negative = error_of([] {
        const auto j = io::parse_text(R"({"lab": {"tiny": {"profiled_compute_memory": {"float32": [1.5, -2]}}}})", "mem.json");
        (void)io::cephalo::import_compute_memory(io::cursor(j, "mem.json"), "lab", "tiny", "float32");
    });
    CHECK(negative.find("mem.json: $.lab.tiny.profiled_compute_memory.float32[1]: must be >= 0") != std::string::npos);
}
