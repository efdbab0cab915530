#pragma once
// Random heterogeneous pools for the Sailor property tests (laws, pattern search vs stage DP):
// 2 to `max_types` GPU types over 1-3 zones (the third in a second region), nodes of 2, 0-6 GPUs
// per (type, zone) plus `extra` nodes each, 4-8 layers, global batch 16 or 32, random
// memories, prices, speeds and links; profiles for TP 1 and 2 at microbatch sizes 1 and 2.
// `salt` picks the family of instances a test was written against.
#include <string>
#include <vector>

#include "support.hpp"
#include "hetplan/hetplan.hpp"

namespace hetplan::test {

struct random_pool {
    cluster hw;
    model_spec model;
    job_spec job;
    profile_table profiles;

    random_pool(unsigned seed, int max_types, int extra, unsigned salt) {
        xorshift gen(seed * 2654435761u + salt);
        auto rnd = [&](double lo, double hi) { return gen.between(lo, hi); };
        const int T = 2 + gen.below(max_types - 1), Z = 1 + gen.below(3);
        const char* names[] = {"A", "B", "C", "D"};
        for (int t = 0; t < T; ++t) {
            gpu_spec g;
            g.type_name = names[t];
            g.memory_capacity = gigabytes(rnd(2.4, 6));
            g.price = usd_per_hour{rnd(1, 4)};
            hw.add_gpu(g, 2);
        }
        std::vector<zone_id> zones;
        for (int z = 0; z < Z; ++z) zones.push_back(hw.add_zone("z" + std::to_string(z), z < 2 ? "r1" : "r2"));
        for (int t = 0; t < T; ++t)
            for (zone_id z : zones) hw.pool.set(gpu_type_id{static_cast<std::size_t>(t)}, z, 2 * gen.below(4) + 2 * extra);
        for (zone_id a : zones)
            for (zone_id b : zones) {
                hw.network.set_zone_default(a, b, alpha_beta_link{seconds{rnd(1e-5, 1e-3)}, bytes_per_second{a == b ? rnd(5e9, 2e10) : rnd(1e8, 1e9)}});
                if (a != b) hw.network.set_egress_price(a, b, usd_per_gigabyte(rnd(0.01, 0.08)));
            }
        model.name = "random";
        const int L = 4 + gen.below(5);
        for (int i = 0; i < L; ++i) {
            layer_spec l;
            l.name = "l" + std::to_string(i);
            l.params = rnd(2e6, 8e6);
            l.act_output_elems = l.act_input_elems = rnd(1e5, 1e6);
            l.act_mem_elems = rnd(1e6, 4e6);
            l.flops_fwd = 1e9;
            model.layers.push_back(l);
        }
        job.global_batch = 16 << gen.below(2);
        job.sequence_length = 16;
        for (int t = 0; t < T; ++t) {
            const double speed = t == 0 ? 1.0 : rnd(1.2, 3.0);
            for (int tp : {1, 2}) {
                profile_curve c;
                for (int mbs : {1, 2}) {
                    std::vector<layer_timing> v;
                    for (int l = 0; l < L; ++l) {
                        const double f = rnd(1, 3) * speed * mbs / (tp == 1 ? 1.0 : rnd(1.3, 1.9));
                        v.push_back({milliseconds(f), milliseconds(2 * f), milliseconds(rnd(0.1, 1))});
                    }
                    c.add_point(mbs, v);
                }
                profiles.set_curve(names[t], tp, c);
            }
        }
    }
    [[nodiscard]] problem pb() const { return {hw, model, job, profiles}; }
};

}  // namespace hetplan::test
