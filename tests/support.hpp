#pragma once
// Small hand-made inputs shared by the unit tests. Numbers are chosen so that every expected
// value in the tests can be worked out by hand (see each test's comment).
#include <cstdint>
#include <string>

#include "hetplan/hetplan.hpp"

namespace hetplan::test {

/// The message of the input_error `f` throws, or "no error" (bad-input tests).
inline std::string error_of(auto&& f) {
    try {
        f();
    } catch (const input_error& e) {
        return e.what();
    }
    return "no error";
}

/// Two GPU types (fast "A", slow "B"), two zones of one region, a 1 GB/s zero-latency network.
struct small_world {
    cluster hw;
    model_spec model;
    job_spec job;
    profile_table profiles;
    gpu_type_id a{}, b{};
    zone_id z1{}, z2{};

    small_world() {
        gpu_spec ga;
        ga.type_name = "A";
        ga.memory_capacity = gigabytes(10);
        ga.price = usd_per_hour{3.6};  // 0.001 USD per second
        ga.with_peak(dtype::fp32, teraflops(10));
        gpu_spec gb = ga;
        gb.type_name = "B";
        gb.price = usd_per_hour{1.8};  // 0.0005 USD per second
        a = hw.add_gpu(ga, 4);
        b = hw.add_gpu(gb, 4);
        z1 = hw.add_zone("r1-a");
        z2 = hw.add_zone("r1-b");
        for (auto g : {a, b})
            for (auto z : {z1, z2}) hw.pool.set(g, z, 8);
        hw.network.set_default(alpha_beta_link{seconds{0}, bytes_per_second{1e9}});
        hw.network.set_egress_price(z1, z2, usd_per_gigabyte(0.01));
        hw.network.set_egress_price(z2, z1, usd_per_gigabyte(0.01));

        // 4 identical layers: 1e6 parameters, 1e5 activation elements per sample.
        model.name = "four";
        for (int i = 0; i < 4; ++i) {
            layer_spec l;
            l.name = "l" + std::to_string(i);
            l.params = 1e6;
            l.act_output_elems = 1e5;
            l.act_input_elems = 1e5;
            l.act_mem_elems = 1e5;
            l.flops_fwd = 1e9;
            model.layers.push_back(l);
        }
        job.global_batch = 32;
        job.sequence_length = 16;

        // Per layer at microbatch 2: A fwd 1 ms, bwd 2 ms, update 0.5 ms; B twice as slow with
        // update 1 ms. At microbatch 4 everything takes twice as long.
        auto curve = [](double f, double u) {
            profile_curve c;
            c.add_point(2, std::vector<layer_timing>(4, {milliseconds(f), milliseconds(2 * f), milliseconds(u)}));
            c.add_point(4, std::vector<layer_timing>(4, {milliseconds(2 * f), milliseconds(4 * f), milliseconds(u)}));
            return c;
        };
        profiles.set_curve("A", 1, curve(1, 0.5));
        profiles.set_curve("B", 1, curve(2, 1.0));
    }
    [[nodiscard]] problem pb() const { return {hw, model, job, profiles}; }
};

/// Marsaglia's xorshift64: small, fast and the same on every platform, so random tests see the
/// same instances everywhere.
struct xorshift {
    std::uint64_t x;
    explicit xorshift(std::uint64_t seed) : x(seed ? seed : 1) {}
    std::uint64_t next() {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        return x;
    }
    /// Uniform in [0, n).
    int below(int n) { return int(next() % std::uint64_t(n)); }
    /// Uniform in [lo, hi) on a grid of 10^4 steps.
    double between(double lo, double hi) { return lo + (hi - lo) * double(next() % 10000) / 10000.0; }
};

inline worker_group worker(gpu_type_id g, zone_id z, int tp, int mbs, int n, double share = 1.0) {
    return {g, z, tp, mbs, n, share, -1};
}

}  // namespace hetplan::test
