// The CUDA compute against the CPU's (tests named exec_cuda_*): one forward and backward gives the
// same loss and gradients (fp32 with cuBLAS or the own GEMM: relative error <= 1e-4, the GPU sums
// in another order; bf16 tensor-core math: <= 3e-2), TP 2 over threads equals TP 1, a repeat is
// bit for bit, every plan shape of the CPU tests trains on one GPU to the CPU reference's loss and
// weights, and the profiler's curve. Exits 77 (CTest: skipped) on a machine without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <mutex>
#include <vector>

#include "hetplan/exec/cuda_gpt.hpp"
#include "hetplan/exec/profiler.hpp"
#include "hetplan/exec/thread_communicator.hpp"
#include "plan_shapes.hpp"

namespace hetplan::test {
namespace {

using exec_shapes::relative_error;

struct batch {
    std::vector<int> tok, tgt;
};
batch make_batch(const exec::gpt_shape& s, int m) {
    batch b;
    for (int i = 0; i < m * s.sequence; ++i) b.tok.push_back((7 * i + 3) % s.vocab), b.tgt.push_back((5 * i + 1) % s.vocab);
    return b;
}

/// One forward and backward of the whole model at TP degree tp, rank r; returns the loss.
template <class W, class Reduce>
double pass(W& w, const batch& b, int m, Reduce&& reduce) {
    typename W::activation x;
    std::vector<typename W::cache> caches;
    double loss = 0;
    const int L = w.shape().layers();
    w.forward(0, L, m, b.tok, b.tgt, x, caches, 1.0 / double(b.tok.size()), loss, reduce);
    w.backward(0, L, m, x, caches, reduce);
    w.pull();
    return loss;
}

/// The CPU's loss and gradients, then W's: every tensor's gradient within `tol`.
template <class W>
void same_as_cpu(const exec::gpt_shape& s, int m, double tol) {
    const batch b = make_batch(s, m);
    auto none = [](std::span<float>) {};
    exec::gpt_worker cpu(s, s.all_layers(), 1, 0, 42);
    W gpu(s, s.all_layers(), 1, 0, 42);
    const double want = pass(cpu, b, m, none), got = pass(gpu, b, m, none);
    CAPTURE(want);
    CAPTURE(got);
    CHECK(std::abs(got - want) <= tol * want);
    double worst = 0;
    for (const auto& [id, t] : cpu.tensors()) worst = std::max(worst, relative_error(gpu.tensors().at(id).grad, t.grad));
    MESSAGE("worst gradient relative error " << worst);
    CHECK(worst <= tol);
}

const exec::gpt_shape small{64, 32, 4, 2, 8};
const exec::gpt_shape wider{100, 96, 3, 2, 40};  // rows longer than a warp, 3 heads of 32

}  // namespace

TEST_CASE("exec_cuda_compute: one forward and backward equals the CPU's (cuBLAS fp32, own GEMM, bf16 math)") {
    same_as_cpu<exec::cuda_gpt>(small, 3, 1e-4);
    same_as_cpu<exec::cuda_gpt>(wider, 2, 1e-4);
    same_as_cpu<exec::cuda_gpt_own_gemm>(small, 3, 1e-4);
    same_as_cpu<exec::cuda_gpt_own_gemm>(wider, 2, 1e-4);
    same_as_cpu<exec::cuda_gpt_bf16>(wider, 2, 3e-2);
}

TEST_CASE("exec_cuda_compute: repeatable bit for bit; TP 2 over threads sums to TP 1") {
    const batch b = make_batch(wider, 2);
    auto none = [](std::span<float>) {};
    exec::cuda_gpt one(wider, wider.all_layers(), 1, 0, 5), again(wider, wider.all_layers(), 1, 0, 5);
    CHECK(pass(one, b, 2, none) == pass(again, b, 2, none));
    for (const auto& [id, t] : one.tensors()) CHECK(t.grad == again.tensors().at(id).grad);

    // TP 2 would need an even head count: the small shape's 4 heads, ranks on two threads.
    const batch bs = make_batch(small, 3);
    exec::cuda_gpt whole(small, small.all_layers(), 1, 0, 9);
    const double want = pass(whole, bs, 3, none);
    std::mutex mu;
    exec::thread_world::run(2, [&](exec::thread_communicator c) {
        exec::cuda_gpt part(small, small.all_layers(), 2, c.rank(), 9);
        const double got = pass(part, bs, 3, [&](std::span<float> v) { c.all_reduce(v); });
        std::lock_guard lk(mu);
        CHECK(std::abs(got - want) <= 1e-4 * want);
        for (const auto& [id, t] : part.tensors()) {
            const auto& full = whole.tensors().at(id);
            const std::size_t from = static_cast<std::size_t>(t.first_unit) * t.info.unit_size;
            CHECK(relative_error(t.grad, std::span<const float>(full.grad).subspan(from, t.grad.size())) <= 1e-4);
        }
    });
}

TEST_CASE("exec_cuda_runner: every plan shape of the CPU tests trains on one GPU (ranks as threads) to the CPU reference") {
    using namespace exec_shapes;
    for (const plan& pl : {sailor_8(), autohet_8(), zorse_8(), fsdp_8()}) {
        reference<> ref(pl);
        double worst = 0;
        std::mutex mu;
        exec::thread_world::run(exec::layout_step(pl, shape.layers()).world_size, [&](exec::thread_communicator c) {
            const double e = check_rank<exec::thread_communicator, exec::cuda_gpt>(pl, c, ref, 1e-4);
            std::lock_guard lk(mu);
            worst = std::max(worst, e);
        });
        MESSAGE("worst weight relative error after " << steps << " steps: " << worst);
    }
}

TEST_CASE("exec_cuda_profiler: a curve per microbatch size, the CPU's activation bytes") {
    exec::profile_options po;
    po.microbatch_sizes = {1, 2};
    po.repeats = 2;
    const auto gpu = exec::profile_gpt<exec::cuda_gpt>(wider, po);
    const auto cpu = exec::profile_gpt(wider, po);
    REQUIRE(gpu.size() == 1);
    CHECK(gpu[0].curve.mbs == std::vector<int>{1, 2});
    for (const auto& layer : gpu[0].curve.points[1]) CHECK(layer.fwd.value > 0);
    CHECK(gpu[0].activation_bytes == cpu[0].activation_bytes);
}

}  // namespace hetplan::test

int main(int argc, char** argv) {
    if (hetplan::exec::cuda_device_count() == 0) {
        std::puts("no CUDA device: the GPU tests are skipped");
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
