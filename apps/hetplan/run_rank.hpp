#pragma once
// One rank of `hetplan run` on any communicator and compute, shared by the command (CPU) and its
// CUDA part (cuda_backend.cu, compiled by nvcc when HETPLAN_WITH_CUDA is on).
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#if HETPLAN_WITH_MPI
#include "hetplan/exec/mpi_communicator.hpp"
#endif
#include "hetplan/concepts/communicator.hpp"
#include "hetplan/concepts/compute.hpp"
#include "hetplan/exec/plan_runner.hpp"
#include "hetplan/exec/profiler.hpp"
#include "hetplan/exec/thread_communicator.hpp"

namespace hetplan::app {

/// What one rank of `hetplan run` measured (rank 0's is printed).
struct run_record {
    std::vector<double> losses, seconds;
    double activations = 0, state = 0;
    double device_peak = 0;  ///< GPU: the most device bytes in use at once (0 on the CPU)
};

/// Steps timed between barriers, the compute synchronised before each clock read.
template <concepts::communicator C, concepts::compute W = exec::gpt_worker>
run_record run_rank(const plan& pl, const exec::gpt_shape& shape, C world, int steps) {
    const exec::synthetic_data data{shape.vocab, shape.sequence, 1};
    exec::plan_runner<C, W> runner(pl, shape, data, world);
    run_record r;
    for (int t = 0; t < steps; ++t) {
        runner.compute().synchronize();
        world.barrier();
        const auto t0 = std::chrono::steady_clock::now();
        r.losses.push_back(runner.step(t));
        runner.compute().synchronize();
        world.barrier();
        r.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    r.activations = runner.peak_activation_bytes(), r.state = runner.state_bytes();
    if constexpr (requires { runner.compute().peak_bytes(); }) r.device_peak = runner.compute().peak_bytes();
    return r;
}

/// The GPU computes `hetplan profile` and `hetplan run` take (--device).
inline const std::vector<std::string>& gpu_devices() {
    static const std::vector<std::string> d{"cuda", "cuda-bf16", "cuda-own-gemm"};
    return d;
}

/// The CUDA part of the command (cuda_backend.cu), a module the command loads only when --device
/// names a GPU (gpu_module.hpp): linked in, cuBLAS and NCCL cost every run of the command 0.08 s
/// and 220 MB of resident memory before it read a file. `size` guards against a module built
/// with other options; `device` is one of gpu_devices().
struct gpu_backend {
    std::size_t size = sizeof(gpu_backend);
    std::vector<exec::measured_profile> (*profile)(const exec::gpt_shape& shape, const exec::profile_options& opt, const std::string& device);
    run_record (*run_threads)(const plan& pl, const exec::gpt_shape& shape, exec::thread_communicator world, int steps, const std::string& device);
#if HETPLAN_WITH_MPI
    run_record (*run_mpi)(const plan& pl, const exec::gpt_shape& shape, exec::mpi_communicator world, int steps, const std::string& device);
#endif

    run_record run(const plan& pl, const exec::gpt_shape& shape, exec::thread_communicator world, int steps, const std::string& device) const {
        return run_threads(pl, shape, world, steps, device);
    }
#if HETPLAN_WITH_MPI
    run_record run(const plan& pl, const exec::gpt_shape& shape, exec::mpi_communicator world, int steps, const std::string& device) const {
        return run_mpi(pl, shape, world, steps, device);
    }
#endif
};

/// The module's one exported function, extern "C": returns its table (static storage).
inline constexpr const char* gpu_backend_entry = "hetplan_gpu_backend_v1";

}  // namespace hetplan::app
