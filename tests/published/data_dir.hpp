#pragma once
#include <cstdlib>
#include <filesystem>

namespace hetplan::test {
/// HETPLAN_DATA_DIR, resolved against the source tree when relative (CI sets ../shared/data).
inline std::filesystem::path data_dir() {
    const char* env = std::getenv("HETPLAN_DATA_DIR");
    if (!env || !*env) return {};
    std::filesystem::path p(env);
    if (p.is_relative()) p = std::filesystem::path(HETPLAN_SOURCE_DIR) / p;
    return std::filesystem::weakly_canonical(p);
}
}  // namespace hetplan::test
