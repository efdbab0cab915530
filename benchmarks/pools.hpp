#pragma once
// Large mixed pools the benchmarks share: A100-40, V100-16, H100-80 and A10G (list prices), `per`
// of each in each of `zones` zones over two regions (zone z in region z mod 2), `per_node` GPUs
// per node; 100 Gb/s in a zone, 50 Gb/s between the zones of a region, 10 Gb/s between regions,
// 0.01 USD/GB between zones; GPT-Neo-2.7 at sequence 2048, analytical layer times.
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

}  // namespace hetplan::bench
