#pragma once
// A cluster of Cephalo's evaluation (§4.1) read from its published folder (shared/data/cephalo)
// into one planning problem: the model from model_stats.json, each GPU type's latency curve from
// model_latencies.json, the compute-memory fit of one profiled cluster from model_memory.json.
// One zone whose every link is the machines' interconnect: FSDP's rings cross it, so it is their
// slowest edge (Cephalo §4.1: 50 Gbps on Cluster A, 100 Gbps on Cluster B).
#include <filesystem>
#include <string>
#include <vector>

#include "hetplan/cost/memory/cephalo.hpp"
#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/io/import/cephalo.hpp"

namespace hetplan::io::cephalo {

struct gpu_entry {
    std::string name;         ///< built-in GPU type (fixtures::gpu_named), e.g. "A6000"
    std::string profile_key;  ///< its name in model_latencies.json, e.g. "a6000"
    int count = 0;
};

struct world_spec {
    std::string model;                ///< as in the files, e.g. "deepspeedllama_3b"
    int global_batch = 0;
    std::vector<gpu_entry> gpus;
    bytes_per_second link{};          ///< between machines
    std::string memory_cluster;       ///< key in model_memory.json, e.g. "paper"
    std::string dtype = "float32";    ///< §4.1: full precision
    int sequence = 512;               ///< §4.1
    int gpus_per_node = 8;
};

struct world {
    cluster hw;
    model_spec model;
    job_spec job;
    profile_table profiles;
    compute_memory_fit compute_memory;
    [[nodiscard]] problem pb() const { return {hw, model, job, profiles}; }
};

/// Cluster A (§4.1): 2 x L4, A6000 and P40 on one machine, 2 x P40 and 2 x P100 on the other,
/// 50 Gbps between them; memory profiled as "paper".
inline world_spec cluster_a(const std::string& model, int global_batch) {
    return {model, global_batch, {{"L4", "l4", 2}, {"A6000", "a6000", 1}, {"P40", "p40", 3}, {"P100", "p100", 2}},
            gigabits_per_second(50), "paper", "float32", 512, 4};
}

/// Cluster B (§4.1): 2 VMs of 8 A10G, 2 of 8 V100-16GB and 4 of 8 T4, 100 Gbps; memory profiled
/// on AWS as "aws-16gpu".
inline world_spec cluster_b(const std::string& model, int global_batch) {
    return {model, global_batch, {{"A10G", "a10g", 16}, {"V100-16", "v100x16", 16}, {"T4", "t4", 32}},
            gigabits_per_second(100), "aws-16gpu", "float32", 512, 8};
}

inline world load_world(const std::filesystem::path& root, const world_spec& spec) {
    auto read = [&](const char* name) { return parse_file(root / name); };
    const auto stats = read("model_stats.json"), lat = read("model_latencies.json"), mem = read("model_memory.json");
    const cursor s(stats, (root / "model_stats.json").string()), l(lat, (root / "model_latencies.json").string()),
        m(mem, (root / "model_memory.json").string());
    world w;
    w.model = import_model_stats(s, spec.model, spec.sequence);
    w.job.global_batch = spec.global_batch;
    w.job.sequence_length = spec.sequence;
    if (spec.dtype == "float16") w.job.prec = precision::fp16_mixed;
    else if (spec.dtype != "float32") throw input_error("cephalo world: dtype must be float32 or float16, got '" + spec.dtype + "'");
    const auto zone = w.hw.add_zone("cluster");
    for (const auto& g : spec.gpus) {
        auto gpu = fixtures::gpu_named(g.name);
        if (!gpu) throw input_error("cephalo world: no built-in GPU type '" + g.name + "'");
        const auto id = w.hw.add_gpu(*gpu, spec.gpus_per_node);
        w.hw.pool.set(id, zone, g.count);
        import_latencies(l, {spec.model, g.profile_key, spec.sequence, spec.dtype}, g.name, w.model.num_layers(), w.profiles);
    }
    w.hw.network.set_default(alpha_beta_link{seconds{0}, spec.link});
    w.compute_memory = import_compute_memory(m, spec.memory_cluster, spec.model, spec.dtype);
    return w;
}

}  // namespace hetplan::io::cephalo
