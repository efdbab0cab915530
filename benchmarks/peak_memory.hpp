#pragma once
// The resident memory a piece of work peaks at, on Linux: the process's high-water mark
// (VmHWM) reset before the work (`5` to /proc/self/clear_refs, Linux >= 4.0) and read after.
// The process's own peak is not the work's: Catch2 2.13 estimates the clock before the first
// BENCHMARK and peaks at ~324 MB doing so (an empty benchmark does; measured 2026-12-03), more
// than any planner here, and that memory is returned before the benchmark body runs.
#include <cstddef>
#include <fstream>
#include <optional>
#include <string>

namespace hetplan::bench {

/// Starts a measurement: the high-water mark becomes the current resident set. False where the
/// system does not allow it (then peak_resident() reports the process's peak since its start).
inline bool reset_peak_resident() {
    std::ofstream f("/proc/self/clear_refs");
    return static_cast<bool>(f << "5" << std::flush);
}

/// The resident set's high-water mark in bytes (VmHWM), none where /proc says nothing.
inline std::optional<std::size_t> peak_resident() {
    std::ifstream f("/proc/self/status");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // "VmHWM:   96364 kB"
    return std::nullopt;
}

}  // namespace hetplan::bench
