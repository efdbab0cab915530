#pragma once
// Numeric formats used for weights, gradients and activations.
#include <array>
#include <optional>
#include <string_view>

namespace hetplan {

enum class dtype { fp32, fp16, bf16, tf32, fp8 };

inline constexpr std::array<dtype, 5> all_dtypes{dtype::fp32, dtype::fp16, dtype::bf16, dtype::tf32,
                                                 dtype::fp8};

constexpr double bytes_per_element(dtype t) {
    switch (t) {
        case dtype::fp32: case dtype::tf32: return 4.0;
        case dtype::fp16: case dtype::bf16: return 2.0;
        case dtype::fp8: return 1.0;
    }
    return 4.0;
}

constexpr std::string_view to_string(dtype t) {
    switch (t) {
        case dtype::fp32: return "fp32";
        case dtype::fp16: return "fp16";
        case dtype::bf16: return "bf16";
        case dtype::tf32: return "tf32";
        case dtype::fp8: return "fp8";
    }
    return "fp32";
}

constexpr std::optional<dtype> parse_dtype(std::string_view s) {
    for (dtype t : all_dtypes)
        if (to_string(t) == s) return t;
    if (s == "float32") return dtype::fp32;
    if (s == "float16") return dtype::fp16;
    if (s == "bfloat16") return dtype::bf16;
    return std::nullopt;
}

}  // namespace hetplan
