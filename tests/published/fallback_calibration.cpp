// The analytical fallback (workload/profile.hpp with hardware/compute_efficiency.hpp) against
// every per-layer time Zorse and Cephalo measured (issue 21, docs/validation.md): for each GPU
// type and precision with data, the median of measured / predicted forward time is within 10 %
// (the flat 0.4 of peak it replaced was 0.42-1.46x off), and forward + backward within 15 %.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "data_dir.hpp"
#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/io/import/cephalo.hpp"
#include "hetplan/io/json_reader.hpp"
#include "hetplan/workload/profile.hpp"

using namespace hetplan;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// The GPU type behind a key of model_latencies.json (io/import/zorse_world.hpp, cephalo_world.hpp).
std::string gpu_of(const std::string& key) {
    static const std::map<std::string, std::string> m{{"h100-nvl", "H100-NVL"}, {"a100x80", "A100-80"}, {"a100x40", "A100-40"},
                                                      {"a10g", "A10G"},         {"v100x16", "V100-16"}, {"t4", "T4"},
                                                      {"l4", "L4"},             {"a6000", "A6000"},     {"p40", "P40"},
                                                      {"p100", "P100"}};
    const auto it = m.find(key);
    return it == m.end() ? std::string{} : it->second;
}

struct ratios {
    std::vector<double> fwd, step;  ///< measured / predicted: forward; forward + backward
};

}  // namespace

TEST_CASE("Analytical fallback: median layer time within 10 % of Zorse's and Cephalo's measurements per GPU type and precision (issue 21)") {
    std::map<std::pair<std::string, dtype>, ratios> by_group;
    std::set<std::string> seen;  // a measurement both folders hold is counted once
    profile_table fallback;
    fallback.enable_analytical({});
    for (const char* source : {"zorse", "cephalo"}) {
        const auto dir = test::data_dir() / source;
        const io::json lat = io::parse_file(dir / "model_latencies.json"), stats = io::parse_file(dir / "model_stats.json");
        const io::cursor stats_root(stats, (dir / "model_stats.json").string());
        for (const auto& [model, per_gpu] : lat.items()) {
            if (!stats.contains(model)) continue;  // no FLOPs to predict from
            for (const auto& [key, per_seq] : per_gpu.items()) {
                const auto gpu = fixtures::gpu_named(gpu_of(key));
                if (!gpu) continue;
                for (const auto& [seq, per_dtype] : per_seq.items()) {
                    model_spec ms = io::cephalo::import_model_stats(stats_root, model, std::stoi(seq));
                    // A block's own FLOPs, as hetplan's transformer models count them: the import
                    // spreads the embeddings' and head's parameters over the blocks (their memory
                    // has to be somewhere), which would count their FLOPs in every block.
                    const double s = std::stod(seq), h = stats[model]["hidden_size"].get<double>();
                    ms.layers.front().flops_fwd = 2.0 * stats[model]["parameters_per_layer"].get<double>() * s + 4.0 * s * s * h;
                    for (const auto& [dt, v] : per_dtype.items()) {
                        // [fwd_fit, bwd_fit, fwd_ms per microbatch 1..n, bwd_ms ...]; fits alone are not measurements
                        if (!v.is_array() || v.size() != 4 || !v[2].is_array() || !v[3].is_array()) continue;
                        const dtype t = dt == "float16" ? dtype::fp16 : dtype::fp32;
                        if (!(gpu->peak_flops(t).value > 0) || !seen.insert(model + "/" + key + "/" + seq + "/" + dt + "/" + v.dump()).second) continue;
                        auto& r = by_group[{gpu->type_name, t}];
                        for (std::size_t i = 0; i < v[2].size() && i < v[3].size(); ++i) {
                            const double f = v[2][i].get<double>() * 1e-3, b = v[3][i].get<double>() * 1e-3;
                            if (!(f > 0 && b > 0)) continue;
                            const auto [lt, src] = fallback.lookup(*gpu, 1, static_cast<int>(i + 1), ms, 0, t, 0);
                            REQUIRE(src == timing_source::analytical);
                            r.fwd.push_back(f / lt.fwd.value);
                            r.step.push_back((f + b) / lt.fwd_bwd().value);
                        }
                    }
                }
            }
        }
    }
    REQUIRE(by_group.size() >= 15);  // every group of docs/validation.md's table
    std::size_t points = 0;
    for (const auto& [g, r] : by_group) {
        const double fwd = median(r.fwd), step = median(r.step);
        std::printf("  %-9s %s  n %4zu  forward %.3f  forward + backward %.3f\n", g.first.c_str(), std::string(to_string(g.second)).c_str(), r.fwd.size(), fwd,
                    step);
        points += r.fwd.size();
        const std::string group = g.first + " " + std::string(to_string(g.second));
        CAPTURE(group);
        CHECK(fwd > 0.9);
        CHECK(fwd < 1.1);
        CHECK(step > 0.85);
        CHECK(step < 1.15);
    }
    CHECK(points >= 2000);
    // The flat fallback (0.4 of peak, backward 2x) misses by far more on the same points: the
    // calibration is what makes these medians hold (docs/validation.md: 0.42-1.46).
    profile_table flat;
    flat.enable_analytical({analytical_fallback::uncalibrated});
    const auto a100 = *fixtures::gpu_named("A100-40");
    const io::json zorse_stats = io::parse_file(test::data_dir() / "zorse" / "model_stats.json");
    const model_spec probe = io::cephalo::import_model_stats(io::cursor(zorse_stats, "model_stats.json"), "deepspeedgpt_1.3b", 1024);
    const double calibrated_fwd = fallback.lookup(a100, 1, 4, probe, 0, dtype::fp32, 0).first.fwd.value;
    const double flat_fwd = flat.lookup(a100, 1, 4, probe, 0, dtype::fp32, 0).first.fwd.value;
    CHECK(flat_fwd > 2 * calibrated_fwd);  // A100-40 fp32: e_max 0.916 against 0.4
}
