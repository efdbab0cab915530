#pragma once
/// Concept `compute`: one TP rank's share of a GPT-style model on one device (the execution module).
///
/// Purpose: the plan runner, the profiler and the single-process reference (`exec/`) run any
/// compute — fp32 on the CPU, CUDA with cuBLAS or its own GEMM — through one interface, so a plan
/// that trains correctly on the CPU is the same code path a GPU runs.
/// Minimal definition: nested types `activation` (what one layer range hands the next; may live
/// on the device) and `cache` (what a layer keeps from forward for backward, with
/// `bytes_kept() const`); `forward(l0, l1, m, tokens, targets, activation&, vector<cache>&,
/// loss_scale, double& loss, reduce)` and `backward(l0, l1, m, activation&, vector<cache>&,
/// reduce)` over layers [l0, l1) of m samples, `reduce(std::span<float>)` summing a host buffer
/// over the TP group; `load(span<const float>, activation&)` and `store(const activation&,
/// vector<float>&)` between host memory and an activation, `copy(const activation&)` (the
/// checkpoints of recomputation); `zero_grad()`, `sgd_step(lr)` and
/// `sgd_step_layer(layer, lr)`; `tensors()`, the host copies of its parameters and gradients by
/// tensor id (`exec::gpt_tensors`: every logical tensor its layers use, its TP share, as
/// `exec::local_tensor`: what the runner's gradient exchange reads), made current by `pull()` and
/// written back by `push()`; `synchronize()`, which
/// returns once the device has finished the work issued so far. The runner, the reference and
/// the profiler construct it as W(gpt_shape, layers, tp, tp_rank, seed) (checked there).
/// Laws: the same shape, layers, TP position and seed give the same initial parameters on every
/// model; forward then backward over a range leaves each gradient the sum over the range's
/// samples of its share of `loss_scale` x the token losses; `backward` consumes the caches of the
/// matching `forward`; `reduce` is called in the same order on every rank of a TP group (with
/// TP 1 it may not be called at all); `tensors()` is only read or written between `pull()` and
/// `push()`.
/// Models shipped: exec::gpt_worker (CPU, fp32), exec::basic_cuda_gpt (CUDA: cuBLAS or its own
/// GEMM, fp32 or bf16 tensor-core math).
#include <concepts>
#include <span>
#include <vector>

namespace hetplan::concepts {

/// The least a TP all-reduce offers: sums a host buffer in place.
struct reduce_archetype {
    void operator()(std::span<float>) const {}
};

template <class W>
concept has_compute_types = requires { typename W::activation; typename W::cache; } &&
                            requires(const typename W::cache& c) { { c.bytes_kept() } -> std::convertible_to<double>; };
template <class W>
concept has_forward_backward = has_compute_types<W> && requires(W& w, int l, std::span<const int> tok, typename W::activation& x,
                                                                  std::vector<typename W::cache>& caches, double& loss, reduce_archetype r) {
    w.forward(l, l, l, tok, tok, x, caches, 1.0, loss, r);
    w.backward(l, l, l, x, caches, r);
};
template <class W>
concept has_host_exchange = has_compute_types<W> && requires(W& w, std::span<const float> in, const typename W::activation& x, std::vector<float>& out,
                                                               typename W::activation& y) {
    w.load(in, y);
    w.store(x, out);
    { w.copy(x) } -> std::same_as<typename W::activation>;
};
template <class W>
concept has_update = requires(W& w, float lr, int l) {
    w.zero_grad();
    w.sgd_step(lr);
    w.sgd_step_layer(l, lr);
};
template <class W>
concept has_host_tensors = requires(W& w) {
    w.tensors();
    w.pull();
    w.push();
    w.synchronize();
};

template <class W>
concept compute = has_compute_types<W> && has_forward_backward<W> && has_host_exchange<W> && has_update<W> && has_host_tensors<W>;

template <class W>
constexpr bool check_compute() {
    static_assert(has_compute_types<W>, "hetplan::compute: needs nested types `activation` and `cache`, the cache with `bytes_kept() const`");
    static_assert(has_forward_backward<W>,
                  "hetplan::compute: needs `forward(int l0, int l1, int m, std::span<const int> tokens, std::span<const int> targets, activation&, "
                  "std::vector<cache>&, double loss_scale, double& loss, Reduce)` and `backward(int l0, int l1, int m, activation&, std::vector<cache>&, Reduce)`");
    static_assert(has_host_exchange<W>,
                  "hetplan::compute: needs `load(std::span<const float>, activation&)`, `store(const activation&, std::vector<float>&)` and "
                  "`copy(const activation&)` returning an activation");
    static_assert(has_update<W>, "hetplan::compute: needs `zero_grad()`, `sgd_step(float lr)` and `sgd_step_layer(int layer, float lr)`");
    static_assert(has_host_tensors<W>, "hetplan::compute: needs `tensors()`, `pull()`, `push()` and `synchronize()`");
    return compute<W>;
}

}  // namespace hetplan::concepts
