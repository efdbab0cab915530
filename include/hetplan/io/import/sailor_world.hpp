#pragma once
// Everything Sailor's published data folder (shared/data/sailor) describes, read into one
// planning problem: GPU types with node shapes and memory from basic_cluster_config.json and
// the paper's prices, zones with the measured heterogeneous links and GCP egress prices, the
// model from llm_info.json, the job from the model's training config, and the profiles. The pool
// starts empty; the caller sets availability.
#include <filesystem>
#include <string>
#include <vector>

#include "hetplan/plan/problem.hpp"
#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/io/consistency.hpp"
#include "hetplan/io/import/sailor.hpp"

namespace hetplan::io::sailor {

struct world {
    cluster hw;
    model_spec model;
    job_spec job;
    profile_table profiles;
    [[nodiscard]] problem pb() const { return {hw, model, job, profiles}; }
};

/// `model` as Sailor names it ("OPT-350", "GPT-Neo-2.7"); `global_batch` 0 keeps the training
/// config's. Training-config files are found by the model's name in configs/.
inline world load_world(const std::filesystem::path& root, const std::string& model, const std::vector<std::string>& gpus,
                        const std::vector<std::string>& zones, int global_batch = 0) {
    world w;
    const auto cluster_file = root / "configs/basic_cluster_config.json";
    const auto nodes = import_cluster_config(cursor(parse_file(cluster_file), cluster_file.string()));
    for (const auto& name : gpus) {
        auto spec = fixtures::gpu_named(name);
        if (!spec) throw input_error(cluster_file.string(), name, "no built-in GPU type of this name (prices, peak FLOP/s)");
        auto it = nodes.find(name);
        if (it == nodes.end()) throw input_error(cluster_file.string(), name, "GPU type missing");
        spec->memory_capacity = it->second.memory;
        w.hw.add_gpu(*spec, it->second.gpus_per_node);
    }
    for (const auto& z : zones) w.hw.add_zone(z);
    const auto net_file = root / "network/multizone_bandwidths_het.json";
    import_network(cursor(parse_file(net_file), net_file.string()), w.hw);
    const auto cost_file = root / "network/gcp/communication_cost.json";
    import_egress_prices(cursor(parse_file(cost_file), cost_file.string()), w.hw);

    // The training config whose "model" is this model.
    bool found = false;
    for (const auto& entry : std::filesystem::directory_iterator(root / "configs")) {
        const auto f = entry.path();
        if (f.filename().string().rfind("training_config_", 0) != 0) continue;
        auto [job, name] = import_training_config(cursor(parse_file(f), f.string()));
        if (name != model) continue;
        w.job = job;
        found = true;
    }
    if (!found) throw input_error((root / "configs").string(), model, "no training_config_*.json for this model");
    if (global_batch > 0) w.job.global_batch = global_batch;
    const auto llm_file = root / "llm_info.json";
    w.model = import_llm_info(cursor(parse_file(llm_file), llm_file.string()), model, w.job.sequence_length);
    for (const auto& name : gpus) import_profile_file(root / "profiles" / model / name / "profile.json", name, w.profiles);
    // As for hetplan's own files: the published GPT-Neo-2.7 profile for GH-96 is OPT-350's (26
    // layers for 34), which planning would only find later, without a file name.
    check_consistency(w.hw, w.model, w.job, w.profiles,
                      {cluster_file.string(), llm_file.string(), (root / "configs").string(), (root / "profiles" / model).string()});
    return w;
}

}  // namespace hetplan::io::sailor
