#pragma once
// Large mixed pools the benchmarks share: A100-40, V100-16, H100-80 and A10G (list prices), `per`
// of each in each of `zones` zones over two regions (zone z in region z mod 2), `per_node` GPUs
// per node; 100 Gb/s in a zone, 50 Gb/s between the zones of a region, 10 Gb/s between regions,
// 0.01 USD/GB between zones; GPT-Neo-2.7 at sequence 2048, analytical layer times.
#include <cstdint>
#include <string>
#include <vector>

#include "hetplan/fixtures/example.hpp"

namespace hetplan::bench {

inline fixtures::planning_example mixed_pool(int zones, int per, int per_node, int global_batch) {
    fixtures::planning_example in;
    std::vector<gpu_type_id> ids;
    const double prices[] = {3.74, 2.8, 9.8, 1.2};  // USD/h (the H100-80 and A10G figures are list prices)
    int k = 0;
    for (gpu_spec g : {fixtures::a100_40(), fixtures::v100_16(), fixtures::h100_80(), fixtures::a10g()}) {
        g.price = usd_per_hour{prices[k++]};
        ids.push_back(in.hw.add_gpu(g, per_node));
    }
    std::vector<zone_id> zs;
    for (int z = 0; z < zones; ++z) zs.push_back(in.hw.add_zone("r" + std::to_string(z % 2) + "-" + std::to_string(z), "r" + std::to_string(z % 2)));
    for (auto z : zs)
        for (auto g : ids) in.hw.pool.set(g, z, per);
    for (auto a : zs)
        for (auto b : zs) {
            const double gbps = a == b ? 100 : in.hw.region_of(a) == in.hw.region_of(b) ? 50 : 10;
            in.hw.network.set_zone_default(a, b, alpha_beta_link{seconds{a == b ? 1e-5 : 1e-4}, gigabits_per_second(gbps)});
            if (a != b) in.hw.network.set_egress_price(a, b, usd_per_gigabyte(0.01));
        }
    in.model = fixtures::gpt_neo_2_7b();
    in.job.global_batch = global_batch;
    in.job.sequence_length = 2048;
    in.job.prec = precision::fp16_mixed;
    in.profiles.enable_analytical({});
    return in;
}

/// A random pool a scheduler might see (issue 15's planning-time law): 1-3 of the four GPU
/// types above, 1-3 zones over up to two regions, 0-64 GPUs of each type in each zone (multiples
/// of 8, at least 8 in all), 8-GPU nodes, OPT-350 or GPT-Neo-2.7 at global batch 256-2048, links
/// and prices as above. Seeded by xorshift64, so every machine sees the same instances.
inline fixtures::planning_example random_pool(std::uint64_t seed) {
    std::uint64_t x = seed * 2654435761u + 17;
    auto below = [&x](int n) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        return static_cast<int>(x % static_cast<std::uint64_t>(n));
    };
    fixtures::planning_example in = mixed_pool(1 + below(3), 0, 8, 256 << below(4));
    if (below(2) == 1) in.model = fixtures::opt_350m();
    const int types = 1 + below(3), first = below(4), zones = static_cast<int>(in.hw.zones.size());
    int total = 0;
    for (int z = 0; z < zones; ++z)
        for (int t = 0; t < types; ++t) {
            const int n = 8 * below(9);
            in.hw.pool.set(gpu_type_id{static_cast<std::size_t>((first + t) % 4)}, zone_id{static_cast<std::size_t>(z)}, n);
            total += n;
        }
    if (total == 0) in.hw.pool.set(gpu_type_id{static_cast<std::size_t>(first)}, zone_id{0}, 8);
    return in;
}

}  // namespace hetplan::bench
