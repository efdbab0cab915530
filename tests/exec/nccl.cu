// The NCCL communicator (tests named exec_nccl*): one rank per GPU, the ranks threads of this
// process bootstrapped through the thread communicator. With two or more GPUs, the communicator
// laws; with one, a one-rank group's collectives (NCCL refuses two ranks on one GPU). Then a plan
// with one worker per GPU trained by the CUDA compute, gradients summed by NCCL, against the CPU
// reference. Exits 77 (CTest: skipped) on a machine without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <vector>

#include "communicator_laws.hpp"
#include "hetplan/exec/cuda_gpt.hpp"
#include "hetplan/exec/nccl_communicator.hpp"
#include "hetplan/exec/thread_communicator.hpp"
#include "plan_shapes.hpp"

namespace hetplan::test {
namespace {

using nccl = exec::nccl_communicator<exec::thread_communicator>;

/// Runs f(world) on one thread per GPU, each with its device set and an NCCL world.
template <class F>
void on_every_gpu(F f) {
    exec::thread_world::run(exec::cuda_device_count(), [&](exec::thread_communicator boot) {
        exec::cuda_check(cudaSetDevice(boot.rank()), "selecting the device");
        f(nccl::over(boot));
    });
}

}  // namespace

TEST_CASE("exec_nccl: the communicator laws (>= 2 GPUs) or a one-rank group's collectives") {
    on_every_gpu([](nccl world) {
        if (world.size() >= 2) return check_communicator_laws(world);
        std::vector<float> v{1.5f, -2.0f};
        world.all_reduce(v);
        CHECK(v == std::vector<float>{1.5f, -2.0f});
        world.broadcast(v, 0);
        CHECK(v == std::vector<float>{1.5f, -2.0f});
        std::vector<float> all(3, 0.0f);
        const std::vector<int> three{3};
        world.all_gather(std::vector<float>{1, 2, 3}, all, three);
        CHECK(all == std::vector<float>{1, 2, 3});
        std::vector<float> mine(3);
        world.reduce_scatter(all, mine, three);
        CHECK(mine == all);
        world.barrier();
        nccl same = world.split(0, 0), none = world.split(concepts::no_color, 0);
        CHECK(same.size() == 1);
        CHECK(none.size() == 0);
        same.all_reduce(v);
        CHECK(v == std::vector<float>{1.5f, -2.0f});
        CHECK_THROWS_WITH_AS(world.all_gather(std::vector<float>{1}, all, three), doctest::Contains("my buffer does not hold my count"), exec::comm_error);
    });
}

TEST_CASE("exec_nccl_runner: one worker per GPU, uneven batch shares, gradients summed by NCCL, equal to the CPU reference") {
    using namespace exec_shapes;
    const int n = exec::cuda_device_count();
    std::vector<worker_group> workers;
    for (int w = 0; w < n; ++w) workers.push_back(wg(1, 1 + w % 2, 2 + w % 3));
    const plan pl = one_pipeline({st({{0, 6}}, workers)});
    reference<> ref(pl);
    on_every_gpu([&](nccl world) { (void)check_rank<nccl, exec::cuda_gpt>(pl, world, ref, 1e-4); });
}

}  // namespace hetplan::test

int main(int argc, char** argv) {
    if (hetplan::exec::cuda_device_count() == 0) {
        std::puts("no CUDA device: the NCCL tests are skipped");
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
