#pragma once
// The CUDA runtime as the execution module uses it: errors as exceptions, and whether a GPU is
// there at all (the GPU tests skip without one). Host code only: any C++ compiler with the CUDA
// headers and cudart (CMake: hetplan::exec_cuda).
#include <cuda_runtime.h>

#include <string>

#include "hetplan/exec/comm_error.hpp"

namespace hetplan::exec {

inline void cuda_check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw comm_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

/// GPUs this process sees (0 when there is no driver or no device).
inline int cuda_device_count() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

}  // namespace hetplan::exec
