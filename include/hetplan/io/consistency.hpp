#pragma once
// What no single reader can see: the cluster, model, job and profile files checked against each
// other at load time, each error naming both files (issue 16). Before, a profile for a GPU type
// the cluster lacks was ignored, a model sized for sequence 128 was planned at the job's 2048,
// and a profile of 3 layers for a 26-layer model failed at planning time without a file name.
#include <string>

#include "hetplan/core/error.hpp"
#include "hetplan/core/separate_compilation.hpp"
#include "hetplan/hardware/cluster.hpp"
#include "hetplan/workload/job.hpp"
#include "hetplan/workload/model.hpp"
#include "hetplan/workload/profile.hpp"

namespace hetplan::io {

/// The files (or other sources) the inputs came from, for the messages.
struct input_sources {
    std::string cluster = "cluster", model = "model", job = "job", profiles = "profiles";
};

/// Throws input_error on the first inconsistency between the inputs.
#if HETPLAN_HEADER_BODIES
HETPLAN_DECL void check_consistency(const cluster& hw, const model_spec& m, const job_spec& j, const profile_table& p, const input_sources& src = {}) {
    if (m.sequence_length > 0 && m.sequence_length != j.sequence_length)
        throw input_error(src.job, "sequence_length",
                          std::to_string(j.sequence_length) + ", but " + src.model + " gives sequence_length " + std::to_string(m.sequence_length) +
                              " (its activation sizes are for that length): make them equal");
    for (const auto& [key, curve] : p.curves()) {
        const auto& [gpu, tp] = key;
        const std::string where = "profiles[gpu=" + gpu + ", tp=" + std::to_string(tp) + "]";
        if (!hw.find_gpu(gpu)) {
            std::string types;
            for (const gpu_spec& g : hw.gpus) types += (types.empty() ? "" : ", ") + g.type_name;
            throw input_error(src.profiles, where, "GPU type '" + gpu + "' is not in " + src.cluster + " (its types: " + types +
                                                       "): remove the profile or declare the GPU type");
        }
        const std::size_t layers = curve.points.empty() ? 0 : curve.points.front().size();
        if (layers != m.layers.size())
            throw input_error(src.profiles, where, std::to_string(layers) + " layers per point, but " + src.model + "'s model '" + m.name + "' has " +
                                                       std::to_string(m.layers.size()));
        // A model that takes no time is no model: the planners divide by its speed.
        double total = 0;
        for (const auto& pt : curve.points)
            for (const layer_timing& t : pt) total += t.fwd_bwd().value;
        if (!(total > 0)) throw input_error(src.profiles, where + ".points", "every forward and backward time is 0");
    }
    // GPU types in the pool that only the analytical fallback can time need a peak for the job's
    // compute type (else the first planner to ask fails mid-search).
    if (p.has_fallback())
        for (std::size_t g = 0; g < hw.gpus.size(); ++g) {
            const gpu_spec& spec = hw.gpus[g];
            if (hw.pool.total(gpu_type_id{g}) == 0 || !p.tp_degrees(spec.type_name).empty()) continue;
            if (!(m.total_flops_fwd() > 0))
                throw input_error(src.model, "layers[*].flops_fwd", "all 0, but " + spec.type_name + " has no profile in " + src.profiles +
                                                                      ", so its layer times come from FLOPs: give the FLOPs or a profile");
            if (!(spec.peak_flops(j.compute_dtype()).value > 0))
                throw input_error(src.cluster, "gpus[name=" + spec.type_name + "].peak_tflops",
                                  "no peak for " + std::string(to_string(j.compute_dtype())) + " (" + src.job + " asks for " +
                                      std::string(to_string(j.prec)) + ") and " + src.profiles +
                                      " has no profile for it, so nothing can time it: add the peak or a profile");
        }
}
#else
void check_consistency(const cluster& hw, const model_spec& m, const job_spec& j, const profile_table& p, const input_sources& src = {});  // src/io_functions.cpp
#endif

}  // namespace hetplan::io
