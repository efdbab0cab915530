#pragma once
// Shared by the libFuzzer targets (issue 16). An input may be refused only with hetplan's own
// error, which names the file and field; any other exception (std::bad_alloc, std::out_of_range,
// a raw std::invalid_argument ...) reaching the caller is a finding, and so is a crash, a
// sanitizer report, a leak or a timeout (libFuzzer's -timeout).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "hetplan/core/error.hpp"

namespace hetplan::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) { return {reinterpret_cast<const char*>(data), size}; }

/// Runs `f`; hetplan::error is a clean refusal, anything else aborts (libFuzzer saves the input).
template <class F>
void refuse_cleanly(F&& f) {
    try {
        f();
    } catch (const hetplan::error&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz: an exception that is not hetplan::error reached the caller: %s\n", e.what());
        std::abort();
    }
}

/// A finding that is not an exception (e.g. a returned plan the validator refuses).
[[noreturn]] inline void finding(const char* what) {
    std::fprintf(stderr, "fuzz: %s\n", what);
    std::abort();
}

}  // namespace hetplan::fuzz
