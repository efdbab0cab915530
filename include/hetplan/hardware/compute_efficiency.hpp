#pragma once
// How close a GPU type gets to its peak on a transformer layer, fitted to the published profiles
// (Zorse's and Cephalo's per-layer measurements; docs/validation.md, scripts/calibration/): the
// analytical fallback's layer times where a GPU type has no profile (workload/profile.hpp).
//
// A layer doing w FLOPs per GPU (forward FLOPs x microbatch / TP) runs its forward at
//   e(w) = peak_fraction x w / (w + half_work)
// of peak: an overhead of half_work FLOPs' worth plus the work at peak_fraction of peak, so
// forward time = (w + half_work) / (peak_fraction x peak). Backward is backward_ratio x forward.
#include <array>
#include <optional>
#include <string_view>

#include "hetplan/core/dtype.hpp"

namespace hetplan {

struct compute_efficiency {
    double peak_fraction = 0;  ///< e_max: the fraction of peak large layers reach
    double half_work = 0;      ///< w_half, FLOPs per GPU at which a layer reaches half of it
    double backward_ratio = 2;  ///< backward time / forward time
};

namespace detail {
struct published_fit {
    std::string_view gpu;
    bool half;  ///< fp16/bf16 (else fp32)
    double peak_fraction, half_work, backward_ratio;
};
// Per (GPU type, precision), over every distinct transformer-block measurement in Zorse's and
// Cephalo's files (n = 55-255 each): e_max and w_half by least squares on log forward time,
// backward / forward their median. FLOPs as hetplan's transformer models count a block's
// (2 x its own parameters x sequence + 4 x sequence^2 x hidden; embeddings and head apart).
// In sample, the median of measured / predicted forward time is 0.92-1.02 and of forward +
// backward 0.88-1.02 (tests/published/fallback_calibration.cpp).
// Sailor's profiles are left out (their precision is ambiguous).
inline constexpr std::array<published_fit, 18> published_fits{{
    {"A100-40", true, 0.607, 1.06e11, 2.197},  {"A100-40", false, 0.916, 2.33e10, 2.002},
    {"A100-80", true, 0.699, 2.87e11, 2.117},  {"A10G", true, 0.789, 7.64e10, 2.228},
    {"A10G", false, 0.515, 1.27e10, 1.712},    {"A6000", true, 0.610, 5.09e10, 2.385},
    {"A6000", false, 0.463, 9.40e10, 1.772},   {"H100-NVL", true, 0.425, 1.12e11, 2.314},
    {"H100-NVL", false, 0.671, 2.14e10, 1.939}, {"L4", true, 0.372, 2.53e9, 2.631},
    {"L4", false, 0.275, 8.42e10, 1.761},      {"P100", true, 0.384, 1.81e10, 1.946},
    {"P100", false, 0.545, 2.58e9, 1.620},     {"P40", false, 0.457, 9.76e10, 1.512},
    {"T4", true, 0.367, 1.50e10, 2.436},       {"T4", false, 0.482, 0, 2.027},
    {"V100-16", true, 0.631, 5.25e10, 2.296},  {"V100-16", false, 0.823, 1.50e10, 2.015},
}};
}  // namespace detail

/// The published fit for a GPU type and the precision layers compute in; none for a type or
/// precision the profiles do not cover (TF32, FP8, a GPU of your own).
[[nodiscard]] constexpr std::optional<compute_efficiency> published_efficiency(std::string_view gpu, dtype t) {
    if (t != dtype::fp32 && t != dtype::fp16 && t != dtype::bf16) return std::nullopt;
    const bool half = t != dtype::fp32;
    for (const auto& f : detail::published_fits)
        if (f.gpu == gpu && f.half == half)
            return compute_efficiency{f.peak_fraction, f.half_work, f.backward_ratio};
    return std::nullopt;
}

}  // namespace hetplan
