#pragma once
// Loads the command's CUDA part (cuda_backend.cu, a module beside the executable or in
// <libdir>/hetplan when installed) the first time --device names a GPU.
#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "hetplan/core/error.hpp"
#include "run_rank.hpp"

namespace hetplan::app {

#if HETPLAN_WITH_CUDA
/// Opens the module; an input_error naming each place tried and why it failed.
inline const gpu_backend* open_gpu_module(const std::string& device) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw input_error("option --device " + device + ": cannot find this program's folder (/proc/self/exe: " + ec.message() + ")");
    std::string why;
    for (const fs::path& p : {exe.parent_path() / HETPLAN_GPU_MODULE, (exe.parent_path() / HETPLAN_GPU_MODULE_INSTALLED).lexically_normal()}) {
        if (!fs::exists(p, ec)) {
            why += "\n  " + p.string() + ": no such file";
            continue;
        }
        void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            why += "\n  " + p.string() + ": " + dlerror();
            continue;
        }
        using entry = const gpu_backend* (*)();
        const auto f = reinterpret_cast<entry>(dlsym(h, gpu_backend_entry));
        const gpu_backend* b = f ? f() : nullptr;
        if (!b || b->size != sizeof(gpu_backend)) {
            why += "\n  " + p.string() + (b ? ": built with other options than this program" : ": not hetplan's CUDA module");
            dlclose(h);
            continue;
        }
        return b;
    }
    throw input_error("option --device " + device + ": hetplan's CUDA module could not be loaded:" + why);
}

/// The module's table, opened once (thread-safe: the ranks of `hetplan run` are threads; a
/// failed open is tried again on the next call).
inline const gpu_backend& load_gpu_backend(const std::string& device) {
    static const gpu_backend* const table = open_gpu_module(device);
    return *table;
}
#endif

}  // namespace hetplan::app
