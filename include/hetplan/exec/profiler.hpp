#pragma once
// Profiler: per-layer forward, backward and update times of the local compute at each (microbatch
// size, TP degree), as the profile curves the planners read (Sailor §4.1: planners take
// measured per-layer times, not FLOP counts), plus the activation memory each layer keeps for
// backward. TP degrees above 1 run their ranks on threads of this process over the thread
// communicator; the time of a layer is its slowest rank's.
//
// Each time is the median of `repeats` runs after `warmup` runs; the input of layer l is the
// output of layers [0, l) on the same batch, so every layer sees real activations.
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <vector>

#include "hetplan/concepts/compute.hpp"
#include "hetplan/exec/cpu_gpt.hpp"
#include "hetplan/exec/thread_communicator.hpp"
#include "hetplan/workload/profile.hpp"

namespace hetplan::exec {

struct profile_options {
    std::vector<int> microbatch_sizes{1, 2, 4};
    std::vector<int> tp_degrees{1};
    int repeats = 5;
    int warmup = 1;
};

/// One (TP degree) of a profile: the curve, and per microbatch size and layer the bytes of
/// activations a rank keeps for backward.
struct measured_profile {
    int tp = 1;
    profile_curve curve;
    std::map<int, std::vector<double>> activation_bytes;  ///< microbatch size -> per layer
};

namespace detail {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace detail

/// Times every layer of `shape` on this machine's compute `W` (the CPU's by default; each timed
/// piece ends with `synchronize()`, so a GPU's queued work is inside its time).
template <concepts::compute W = gpt_worker>
std::vector<measured_profile> profile_gpt(const gpt_shape& shape, const profile_options& opt) {
    shape.check();
    if (opt.repeats < 1 || opt.warmup < 0) throw comm_error("profiler: repeats must be >= 1 and warmup >= 0");
    const int L = shape.layers();
    const std::vector<int> layers = shape.all_layers();
    std::vector<measured_profile> out;
    for (int tp : opt.tp_degrees) {
        if (tp < 1 || shape.heads % tp != 0) throw comm_error("profiler: TP degree " + std::to_string(tp) + " does not divide the " + std::to_string(shape.heads) + " heads");
        measured_profile mp;
        mp.tp = tp;
        for (int m : opt.microbatch_sizes) {
            if (m < 1) throw comm_error("profiler: microbatch sizes must be >= 1");
            // per rank: per layer, (fwd, bwd, update) samples
            std::vector<std::vector<layer_timing>> per_rank(static_cast<std::size_t>(tp));
            std::vector<double> act(static_cast<std::size_t>(L), 0.0);
            std::mutex mu;
            thread_world::run(tp, [&](thread_communicator c) {
                W w(shape, layers, tp, c.rank(), 1);
                auto reduce = [&](std::span<float> v) {
                    if (tp > 1) c.all_reduce(v);
                };
                const auto S = static_cast<std::size_t>(shape.sequence);
                std::vector<int> tok(static_cast<std::size_t>(m) * S), tgt(tok.size());
                for (std::size_t i = 0; i < tok.size(); ++i) tok[i] = static_cast<int>((7 * i + 3) % static_cast<std::size_t>(shape.vocab)), tgt[i] = static_cast<int>((5 * i + 1) % static_cast<std::size_t>(shape.vocab));
                std::vector<std::vector<double>> f(static_cast<std::size_t>(L)), b(f.size()), u(f.size());
                std::vector<double> bytes(static_cast<std::size_t>(L), 0.0);
                using clock = std::chrono::steady_clock;
                for (int rep = 0; rep < opt.warmup + opt.repeats; ++rep) {
                    std::vector<std::vector<typename W::cache>> caches(static_cast<std::size_t>(L));
                    typename W::activation x;
                    double loss = 0;
                    for (int l = 0; l < L; ++l) {
                        c.barrier();
                        const auto t0 = clock::now();
                        w.forward(l, l + 1, m, tok, tgt, x, caches[static_cast<std::size_t>(l)], 1.0, loss, reduce);
                        w.synchronize();
                        if (rep >= opt.warmup) f[static_cast<std::size_t>(l)].push_back(std::chrono::duration<double>(clock::now() - t0).count());
                        bytes[static_cast<std::size_t>(l)] = caches[static_cast<std::size_t>(l)].front().bytes_kept();
                    }
                    for (int l = L - 1; l >= 0; --l) {
                        c.barrier();
                        const auto t0 = clock::now();
                        w.backward(l, l + 1, m, x, caches[static_cast<std::size_t>(l)], reduce);
                        w.synchronize();
                        if (rep >= opt.warmup) b[static_cast<std::size_t>(l)].push_back(std::chrono::duration<double>(clock::now() - t0).count());
                    }
                    // SGD on each layer's own tensors (the shared token embedding: layer 0's).
                    for (int l = 0; l < L; ++l) {
                        const auto t0 = clock::now();
                        w.sgd_step_layer(l, 1e-3f);
                        w.synchronize();
                        if (rep >= opt.warmup) u[static_cast<std::size_t>(l)].push_back(std::chrono::duration<double>(clock::now() - t0).count());
                    }
                    w.zero_grad();
                }
                std::vector<layer_timing> mine;
                for (int l = 0; l < L; ++l)
                    mine.push_back({seconds{detail::median(f[static_cast<std::size_t>(l)])}, seconds{detail::median(b[static_cast<std::size_t>(l)])},
                                    seconds{detail::median(u[static_cast<std::size_t>(l)])}});
                std::lock_guard lk(mu);
                per_rank[static_cast<std::size_t>(c.rank())] = std::move(mine);
                if (c.rank() == 0) act = bytes;
            });
            std::vector<layer_timing> slowest = per_rank[0];
            for (const auto& r : per_rank)
                for (std::size_t l = 0; l < r.size(); ++l) {
                    slowest[l].fwd = max(slowest[l].fwd, r[l].fwd);
                    slowest[l].bwd = max(slowest[l].bwd, r[l].bwd);
                    slowest[l].update = max(slowest[l].update, r[l].update);
                }
            mp.curve.add_point(m, std::move(slowest));
            mp.activation_bytes[m] = act;
        }
        out.push_back(std::move(mp));
    }
    return out;
}

}  // namespace hetplan::exec
