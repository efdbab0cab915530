// Cephalo's optimizer. Always: the compute partition on synthetic clusters of N GPUs of 3 types
// at global batch B, Eq. 4 by the fast search against the straightforward D(i, j, k) wherever
// the latter finishes in about a second, and the exact Eqs. 2-3 search. With HETPLAN_DATA_DIR:
// the whole planner on the paper's clusters, reading the published files included. Run with
// e.g. `--benchmark-samples 10`.
#define CATCH_CONFIG_ENABLE_BENCHMARKING
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "hetplan/io/import/cephalo_world.hpp"
#include "hetplan/planners/cephalo.hpp"

using namespace hetplan;
using namespace hetplan::search;

namespace {

/// Three GPU types in ratio 1:1:2 (e.g. A10G, V100, T4) with backward-to-forward ratios 2.0,
/// 2.2 and 1.8; per unit and microbatch, times sublinear at small sizes and linear beyond
/// (Cephalo §2.3); 32 units; collectives that bind at small batches; microbatches up to 16;
/// aggregate memory allows 12 samples per GPU in microbatches.
struct instance {
    batch_problem bp;
    identical_units units;

    instance(int N, int B) {
        bp.batch = B;
        const double speed[3] = {1.0, 1.6, 3.1}, ratio[3] = {2.0, 2.2, 1.8};
        const int count[3] = {N / 4, N / 4, N - 2 * (N / 4)};
        units.count = 32;
        units.all_gather = 0.004;
        units.reduce_scatter = 0.004;
        for (int t = 0; t < 3; ++t) {
            std::vector<double> f, b;
            for (int m = 1; m <= 16; ++m) {
                f.push_back(speed[t] * (0.002 + 0.001 * m + (m < 4 ? 0.0004 * (4 - m) : 0.0)));
                b.push_back(f.back() * (1.0 + ratio[t]));  // backward with the recomputed forward
            }
            units.fwd.push_back(f);
            units.bwd.push_back(b);
            units.even_mbs.push_back(16);
            bp.types.push_back(fsdp_gpu_type::tabulate(count[t], 16, B, [&](int m, int l) {
                const auto i = static_cast<std::size_t>(m - 1);
                return units.count * cephalo_time_model::unit_time(seconds{l * f[i]}, seconds{l * b[i]}, seconds{units.all_gather},
                                                                   seconds{units.reduce_scatter})
                                         .value;
            }));
        }
        bp.max_mbs_sum = static_cast<long long>(N) * 12;
    }
};

std::filesystem::path cephalo_root() {
    const char* dir = std::getenv("HETPLAN_DATA_DIR");
    return dir && *dir ? std::filesystem::path(dir) / "cephalo" : std::filesystem::path{};
}

/// Reads the files and plans, as a scheduler does when the cluster or the batch changes.
double load_and_plan(const io::cephalo::world_spec& spec) {
    const auto w = io::cephalo::load_world(cephalo_root(), spec);
    cephalo_options opt;
    opt.compute_memory = w.compute_memory;
    const auto r = cephalo_planner<>(opt).plan(w.pb());
    return r.best() ? r.best()->throughput() : 0.0;
}

}  // namespace

TEST_CASE("Cephalo compute partition: Eq. 4 fast vs straightforward, and the exact Eqs. 2-3 search") {
    for (int N : {8, 16, 32, 64})
        for (int B : {128, 256, 512, 1024}) {
            const instance in(N, B);
            const std::string at = "N=" + std::to_string(N) + " B=" + std::to_string(B);
            BENCHMARK("Eq. 4 fast, " + at) { return fast_batch_dp(in.bp)->makespan; };
            // The straightforward DP costs ~N^2 B^2 (K grows with N): up to about a second.
            if (double(N) * N * B * B <= 17e6)
                BENCHMARK("Eq. 4 straightforward, " + at) { return straightforward_batch_dp(in.bp)->makespan; };
            BENCHMARK("Eqs. 2-3 separate maxima, " + at) { return separate_maxima_batch_search(in.bp, in.units)->makespan; };
        }
}

TEST_CASE("Cephalo planner on the paper's clusters, reading the published files included") {
    if (cephalo_root().empty()) return;
    for (const char* model : {"deepspeedvit_g", "deepspeedgpt_2.7b", "deepspeedllama_3b"})
        BENCHMARK(std::string("Cluster A (8 GPUs), ") + model + ", batch 256") { return load_and_plan(io::cephalo::cluster_a(model, 256)); };
    for (const char* model : {"deepspeedvit_e", "deepspeedgpt_6.7b", "deepspeedllama_7b"})
        BENCHMARK(std::string("Cluster B (64 GPUs), ") + model + ", batch 1024") { return load_and_plan(io::cephalo::cluster_b(model, 1024)); };
}
