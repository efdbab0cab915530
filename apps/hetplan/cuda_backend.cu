// The CUDA part of the hetplan command: `hetplan profile --device cuda...` and `hetplan run
// --device cuda...` (exec/cuda_gpt.hpp). Compiled by nvcc into a module the command loads when
// --device names a GPU (gpu_module.hpp); the command sees only the table in run_rank.hpp.
#include <cstdlib>
#include <string>
#include <vector>

#if HETPLAN_WITH_MPI
#include "hetplan/exec/mpi_communicator.hpp"
#endif
#include "hetplan/exec/cuda_gpt.hpp"
#if HETPLAN_WITH_NCCL
#include "hetplan/exec/nccl_communicator.hpp"
#endif
#include "hetplan/exec/thread_communicator.hpp"
#include "run_rank.hpp"

namespace hetplan::app {
namespace {

/// Calls f.template operator()<W>() with the compute `device` names.
template <class F>
auto with_compute(const std::string& device, F&& f) {
    if (exec::cuda_device_count() == 0) throw exec::comm_error("option --device " + device + ": this machine has no CUDA device");
    if (device == "cuda") return f.template operator()<exec::cuda_gpt>();
    if (device == "cuda-bf16") return f.template operator()<exec::cuda_gpt_bf16>();
    if (device == "cuda-own-gemm") return f.template operator()<exec::cuda_gpt_own_gemm>();
    throw exec::comm_error("option --device: '" + device + "' is not cpu, cuda, cuda-bf16 or cuda-own-gemm");
}

/// Ranks of one process share its device; MPI ranks take device (local rank mod devices).
template <concepts::communicator C>
run_record run_any(const plan& pl, const exec::gpt_shape& shape, C world, int steps, const std::string& device, int device_index) {
    return with_compute(device, [&]<class W>() {
        exec::cuda_check(cudaSetDevice(device_index % exec::cuda_device_count()), "selecting the device");
        return run_rank<C, W>(pl, shape, world, steps);
    });
}

std::vector<exec::measured_profile> profile_on_gpu(const exec::gpt_shape& shape, const exec::profile_options& opt, const std::string& device) {
    return with_compute(device, [&]<class W>() { return exec::profile_gpt<W>(shape, opt); });
}

run_record run_on_threads(const plan& pl, const exec::gpt_shape& shape, exec::thread_communicator world, int steps, const std::string& device) {
    return run_any(pl, shape, world, steps, device, 0);
}

#if HETPLAN_WITH_MPI
/// Under mpirun: NCCL bootstrapped through MPI when built with it and each process of a node has
/// a GPU of its own (NCCL refuses two ranks on one GPU), else MPI on host buffers.
run_record run_on_mpi(const plan& pl, const exec::gpt_shape& shape, exec::mpi_communicator world, int steps, const std::string& device) {
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    const int index = local ? std::atoi(local) : world.rank();
#if HETPLAN_WITH_NCCL
    // Every rank must take the same path: NCCL only if every node has a GPU per process.
    const char* local_size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    std::vector<float> ready{local_size && std::atoi(local_size) <= exec::cuda_device_count() ? 1.0f : 0.0f};
    world.all_reduce(ready);
    if (ready[0] == float(world.size())) {
        exec::cuda_check(cudaSetDevice(index), "selecting the device");
        return run_any(pl, shape, exec::nccl_communicator<exec::mpi_communicator>::over(world), steps, device, index);
    }
#endif
    return run_any(pl, shape, world, steps, device, index);
}
#endif

}  // namespace
}  // namespace hetplan::app

extern "C" const hetplan::app::gpu_backend* hetplan_gpu_backend_v1() {
    using namespace hetplan::app;
#if HETPLAN_WITH_MPI
    static const gpu_backend table{sizeof(gpu_backend), &profile_on_gpu, &run_on_threads, &run_on_mpi};
#else
    static const gpu_backend table{sizeof(gpu_backend), &profile_on_gpu, &run_on_threads};
#endif
    return &table;
}
