#pragma once
// The training job: what the user fixes before any planning (Sailor §4.2 keeps the global batch
// fixed so that training dynamics do not change).
#include <string>

#include "hetplan/core/error.hpp"
#include "hetplan/core/limits.hpp"
#include "hetplan/core/dtype.hpp"

namespace hetplan {

enum class precision { fp32, fp16_mixed, bf16_mixed };
enum class optimizer_kind { adam, sgd_momentum, sgd };

/// Memory-saving options; a job states the default, a plan the choice (plan.hpp).
struct memory_options {
    int zero_stage = 0;             ///< 0: replicated; 1: optimizer; 2: + gradients; 3: + parameters sharded
    bool recompute = false;         ///< activation recomputation (checkpoint at layer boundaries)
    bool offload_params = false;    ///< parameters (and optimizer state) in host memory when idle
    bool offload_activations = false;
    double usable_fraction = 1.0;   ///< share of device memory a plan may use (Cephalo §3.2: 0.8)

    friend bool operator==(const memory_options&, const memory_options&) = default;
};

struct job_spec {
    int global_batch = 0;       ///< sequences per iteration
    int sequence_length = 0;
    precision prec = precision::fp32;
    optimizer_kind optimizer = optimizer_kind::adam;
    memory_options memory{};

    /// Bytes of one parameter as the forward pass reads it.
    [[nodiscard]] double weight_bytes() const { return prec == precision::fp32 ? 4.0 : 2.0; }
    [[nodiscard]] double gradient_bytes() const { return weight_bytes(); }
    /// fp32 master weights kept by mixed precision (ZeRO paper, §3: 16 bytes/param with Adam).
    [[nodiscard]] double master_bytes() const { return prec == precision::fp32 ? 0.0 : 4.0; }
    /// Optimizer state per parameter in fp32: Adam keeps two moments, momentum SGD one.
    [[nodiscard]] double optimizer_bytes() const {
        switch (optimizer) {
            case optimizer_kind::adam: return 8.0;
            case optimizer_kind::sgd_momentum: return 4.0;
            case optimizer_kind::sgd: return 0.0;
        }
        return 8.0;
    }
    [[nodiscard]] double activation_bytes() const { return prec == precision::fp32 ? 4.0 : 2.0; }
    [[nodiscard]] dtype compute_dtype() const {
        switch (prec) {
            case precision::fp32: return dtype::fp32;
            case precision::fp16_mixed: return dtype::fp16;
            case precision::bf16_mixed: return dtype::bf16;
        }
        return dtype::fp32;
    }

    void check(const std::string& source = {}) const {
        if (global_batch < 1 || global_batch > limits::max_global_batch)
            throw input_error(source, "global_batch", "must be in [1, " + std::to_string(limits::max_global_batch) + "], got " + std::to_string(global_batch));
        if (sequence_length < 1 || sequence_length > limits::max_sequence)
            throw input_error(source, "sequence_length", "must be in [1, " + std::to_string(limits::max_sequence) + "]");
        if (memory.zero_stage < 0 || memory.zero_stage > 3)
            throw input_error(source, "zero_stage", "must be 0..3, got " + std::to_string(memory.zero_stage));
        if (!(memory.usable_fraction > 0 && memory.usable_fraction <= 1))
            throw input_error(source, "usable_memory_fraction", "must be in (0, 1]");
    }
};

constexpr std::string_view to_string(precision p) {
    switch (p) {
        case precision::fp32: return "fp32";
        case precision::fp16_mixed: return "fp16_mixed";
        case precision::bf16_mixed: return "bf16_mixed";
    }
    return "fp32";
}
constexpr std::string_view to_string(optimizer_kind o) {
    switch (o) {
        case optimizer_kind::adam: return "adam";
        case optimizer_kind::sgd_momentum: return "sgd_momentum";
        case optimizer_kind::sgd: return "sgd";
    }
    return "adam";
}

}  // namespace hetplan
