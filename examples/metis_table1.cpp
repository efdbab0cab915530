// Memory-aware Metis, Table 1: search steps, search time and best cost of Metis and of
// memory-aware Metis on the synthetic GPT-2 profiles (4-GPU nodes, half A100 80 GB, half V100
// 16 GB, global batch 128).
//
//   example_metis_table1                      the four rows of Table 1
//   example_metis_table1 --layers L --gpus N  one row: N GPUs, N / 2 of each type
//
// "published" runs the public code's rules, defects included (its step counts); "hetplan" the
// corrected ones: every GPU-type order, each candidate once, a mixed TP group at its slowest
// GPU's speed, inter-node links at their own bandwidth.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "hetplan/fixtures/metis_gpt2.hpp"
#include "hetplan/search/metis/search.hpp"

using namespace hetplan;
using namespace hetplan::search::metis;

namespace {
template <class Order>
metis_result timed(const metis_profile& p, const metis_cluster& c, metis_rules rules, double& ms) {
    metis_options opt;
    opt.rules = rules;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = metis_search<Order>(p, c, 128, opt).run();
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

void row(int layers, int gpus) {
    const auto p = fixtures::metis_gpt2_profile(layers);
    const auto c = fixtures::metis_table1_cluster(gpus / 2);
    for (const auto& [label, rules] : {std::pair{"published", metis_rules::published()}, std::pair{"hetplan", metis_rules::corrected()}}) {
        double ms_m = 0, ms_a = 0;
        const auto m = timed<metis_split_order>(p, c, rules, ms_m);
        const auto a = timed<memory_aware_split_order>(p, c, rules, ms_a);
        const double cost_m = m.best.empty() ? 0 : m.best[0].total, cost_a = a.best.empty() ? 0 : a.best[0].total;
        std::printf("%-3d %-4d %-4d %-10s %9zu %9zu %10.1f %10.1f %9.2f %9.2f\n", layers, gpus / 2, gpus / 2, label, m.stats.steps,
                    a.stats.steps, ms_m, ms_a, cost_m, cost_a);
    }
}
}  // namespace

int main(int argc, char** argv) {
    int layers = 0, gpus = 0;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (!std::strcmp(argv[i], "--layers") && has_value) layers = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--gpus") && has_value) gpus = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s [--layers L --gpus N]   (N a multiple of 8: N / 2 A100 and N / 2 V100 in 4-GPU nodes)\n", argv[0]);
            return 2;
        }
    }
    if ((layers != 0) != (gpus != 0) || (gpus != 0 && (layers < 2 || gpus < 8 || gpus % 8 != 0))) {
        std::fprintf(stderr, "%s: --layers (>= 2) and --gpus (a multiple of 8) go together\n", argv[0]);
        return 2;
    }
    std::printf("%-3s %-4s %-4s %-10s %9s %9s %10s %10s %9s %9s\n", "L", "A100", "V100", "rules", "steps", "steps-mem", "ms", "ms-mem",
                "cost", "cost-mem");
    if (gpus) {
        row(layers, gpus);
        return 0;
    }
    row(10, 32);
    row(20, 64);
    row(20, 128);
    row(40, 256);
}
