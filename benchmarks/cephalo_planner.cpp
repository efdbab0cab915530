// Cephalo's compute partition (Eq. 4): the fast search (binary search on the makespan over GPU
// types) for N GPUs of 3 types and global batch B, against the straightforward D(i, j, k)
// where it finishes in reasonable time (N = 8, B <= 256).
#define CATCH_CONFIG_ENABLE_BENCHMARKING
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "hetplan/search/fsdp/batch_dp.hpp"

using namespace hetplan::search;

namespace {

/// Three GPU types in ratio 1:1:2 (e.g. A10G, V100, T4), times per microbatch sublinear at small
/// sizes and linear beyond (Cephalo §2.3), microbatches up to 16, aggregate memory not binding.
batch_problem instance(int N, int B) {
    batch_problem bp;
    bp.batch = B;
    const double speed[3] = {1.0, 1.6, 3.1};
    const int count[3] = {N / 4, N / 4, N - 2 * (N / 4)};
    for (int t = 0; t < 3; ++t) {
        std::vector<double> time;
        for (int m = 1; m <= 16; ++m) time.push_back(speed[t] * (0.02 + 0.01 * m + (m < 4 ? 0.004 * (4 - m) : 0.0)));
        bp.types.push_back(fsdp_gpu_type::proportional(count[t], time, B));
    }
    bp.max_mbs_sum = static_cast<long long>(N) * 12;
    return bp;
}

}  // namespace

TEST_CASE("Cephalo Eq. 4: fast vs straightforward") {
    for (int N : {8, 16, 32, 64})
        for (int B : {128, 256, 512, 1024}) {
            const auto bp = instance(N, B);
            BENCHMARK("fast, N=" + std::to_string(N) + " B=" + std::to_string(B)) { return fast_batch_dp(bp)->makespan; };
            if (N == 8 && B <= 256)
                BENCHMARK("straightforward, N=" + std::to_string(N) + " B=" + std::to_string(B)) {
                    return straightforward_batch_dp(bp)->makespan;
                };
        }
}
