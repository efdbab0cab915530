#pragma once
// Job files (docs/formats.md):
// {"global_batch": 2048, "sequence_length": 2048, "precision": "fp32|fp16_mixed|bf16_mixed",
//  "optimizer": "adam|sgd_momentum|sgd", "zero_stage": 0, "recompute": false,
//  "offload_params": false, "offload_activations": false, "usable_memory_fraction": 1.0}
#include <array>
#include <filesystem>
#include <string_view>

#include "hetplan/core/separate_compilation.hpp"
#include "hetplan/io/json_reader.hpp"
#include "hetplan/workload/job.hpp"

namespace hetplan::io {

/// The memory options' fields (a job takes them at its top level, a plan under "memory").
inline constexpr std::array<std::string_view, 5> memory_option_fields{"zero_stage", "recompute", "offload_params", "offload_activations", "usable_memory_fraction"};

inline memory_options read_memory_options(const cursor& c, memory_options m = {}) {
    if (auto z = c.find("zero_stage")) m.zero_stage = z->integer(0, 3);
    m.recompute = bool_or(c, "recompute", m.recompute);
    m.offload_params = bool_or(c, "offload_params", m.offload_params);
    m.offload_activations = bool_or(c, "offload_activations", m.offload_activations);
    if (auto f = c.find("usable_memory_fraction")) {
        m.usable_fraction = f->positive();
        if (m.usable_fraction > 1) f->fail("must be in (0, 1]");
    }
    return m;
}

inline json write_memory_options(const memory_options& m) {
    return {{"zero_stage", m.zero_stage}, {"recompute", m.recompute}, {"offload_params", m.offload_params},
            {"offload_activations", m.offload_activations}, {"usable_memory_fraction", m.usable_fraction}};
}

inline job_spec read_job(const cursor& root) {
    root.known_fields({"global_batch", "sequence_length", "precision", "optimizer"}, memory_option_fields);
    job_spec j;
    j.global_batch = root["global_batch"].integer(1, limits::max_global_batch);
    j.sequence_length = root["sequence_length"].integer(1, limits::max_sequence);
    if (auto p = root.find("precision")) {
        const std::string s = p->string();
        if (s == "fp32") j.prec = precision::fp32;
        else if (s == "fp16_mixed") j.prec = precision::fp16_mixed;
        else if (s == "bf16_mixed") j.prec = precision::bf16_mixed;
        else p->fail("unknown precision '" + s + "' (fp32, fp16_mixed, bf16_mixed)");
    }
    if (auto o = root.find("optimizer")) {
        std::string s = o->string();
        for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (s == "adam" || s == "adamw") j.optimizer = optimizer_kind::adam;
        else if (s == "sgd_momentum") j.optimizer = optimizer_kind::sgd_momentum;
        else if (s == "sgd") j.optimizer = optimizer_kind::sgd;
        else o->fail("unknown optimizer '" + s + "' (adam, sgd_momentum, sgd)");
    }
    j.memory = read_memory_options(root);
    return j;
}

#if HETPLAN_HEADER_BODIES
HETPLAN_DECL job_spec read_job_file(const std::filesystem::path& file) {
    const json j = parse_file(file);
    return read_job(cursor(j, file.string()));
}
#else
job_spec read_job_file(const std::filesystem::path& file);  // src/io_functions.cpp
#endif

inline json write_job(const job_spec& j) {
    json out = write_memory_options(j.memory);
    out["global_batch"] = j.global_batch;
    out["sequence_length"] = j.sequence_length;
    out["precision"] = std::string(to_string(j.prec));
    out["optimizer"] = std::string(to_string(j.optimizer));
    return out;
}

}  // namespace hetplan::io
