#pragma once
// A cluster of Zorse's evaluation (Zorse §5.1, Table 2) read from its published folder
// (shared/data/zorse) into one planning problem: the model from model_stats.json and each GPU
// type's layer latencies from model_latencies.json (FP16, the paper's precision). Machines are
// whole VMs; GPUs of one VM talk over the VM's interconnect, VMs over the smaller of their two
// NICs, and VMs in different regions over the cross-region link as well.
//
// Where the file has no latencies for a (model, GPU, sequence, FP16) the GPU is priced by the
// analytical fallback (FLOPs / peak) and the world says so in `notes`.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/plan/problem.hpp"
#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/io/import/cephalo.hpp"

namespace hetplan::io::zorse {

/// VMs of one kind in one region.
struct vm_entry {
    std::string gpu;            ///< built-in GPU type (fixtures::gpu_named), e.g. "A100-80"
    std::string profile_key;    ///< its name in model_latencies.json, e.g. "a100x80"
    int vms = 0;
    int gpus_per_vm = 8;
    bytes_per_second interconnect{};  ///< between GPUs of one VM (NVLink, NVSwitch or PCIe)
    bytes_per_second nic{};           ///< the VM's network interface
    std::string region = "region-1";
};

struct world_spec {
    std::string model;                   ///< as in the files, e.g. "deepspeedllama_13b"
    int global_batch = 0;
    int sequence = 0;
    std::vector<vm_entry> vms;
    bytes_per_second cross_region{};     ///< between VMs of different regions
    std::string dtype = "float16";       ///< §5.1: FP16 mixed precision
};

struct world {
    cluster hw;
    model_spec model;
    job_spec job;
    profile_table profiles;
    std::vector<std::string> notes;      ///< GPUs priced analytically, and why
    [[nodiscard]] problem pb() const { return {hw, model, job, profiles}; }
};

namespace bw {
// §5.2: inside Cluster A's VMs 35x the 50 Gbps network; PCIe as Zorse's own profiler measured it
// (intranode_bandwidth_results_0.json: 11.08 GB/s); V100 NVLink (p3.16xlarge) as a hybrid cube
// mesh reaches about 130 GB/s in a ring. NICs as AWS lists them for p4d, g5.48xl, p3.16xl,
// g4dn.metal.
inline bytes_per_second nvswitch() { return gigabits_per_second(50 * 35); }
inline bytes_per_second v100_nvlink() { return gigabytes_per_second(130); }
inline bytes_per_second pcie() { return gigabytes_per_second(11.08); }
}  // namespace bw

/// Cluster A (Azure): 2 VMs of 2 H100 NVL and 2 VMs of 8 A100-80GB, NVSwitch inside, 50 Gbps
/// between VMs; sequence 4096.
inline world_spec cluster_a(const std::string& model, int global_batch = 256) {
    const auto net = gigabits_per_second(50);
    return {model, global_batch, 4096,
            {{"H100-NVL", "h100-nvl", 2, 2, bw::nvswitch(), net}, {"A100-80", "a100x80", 2, 8, bw::nvswitch(), net}},
            net};
}

/// Cluster B (AWS, one region): 1 x 8 A100-40GB (p4d), 2 x 8 A10G (g5), 2 x 8 V100-16GB (p3),
/// 3 x 8 T4 (g4dn); sequence 1024.
inline world_spec cluster_b(const std::string& model, int global_batch = 1024) {
    return {model, global_batch, 1024,
            {{"A100-40", "a100x40", 1, 8, bw::nvswitch(), gigabits_per_second(400)},
             {"A10G", "a10g", 2, 8, bw::pcie(), gigabits_per_second(100)},
             {"V100-16", "v100x16", 2, 8, bw::v100_nvlink(), gigabits_per_second(25)},
             {"T4", "t4", 3, 8, bw::pcie(), gigabits_per_second(100)}},
            gigabits_per_second(400)};
}

/// Cluster C (AWS, two regions): 2 x 8 A10G + 6 x 8 T4 in one, 2 x 8 V100 + 6 x 8 T4 in the
/// other; sequence 512. The paper gives no cross-region bandwidth; 5 Gbps is our assumption.
inline world_spec cluster_c(const std::string& model, int global_batch = 2048,
                            bytes_per_second cross_region = gigabits_per_second(5)) {
    const auto g5 = gigabits_per_second(100), p3 = gigabits_per_second(25), g4 = gigabits_per_second(100);
    return {model, global_batch, 512,
            {{"A10G", "a10g", 2, 8, bw::pcie(), g5, "region-1"},
             {"T4", "t4", 6, 8, bw::pcie(), g4, "region-1"},
             {"V100-16", "v100x16", 2, 8, bw::v100_nvlink(), p3, "region-2"},
             {"T4", "t4", 6, 8, bw::pcie(), g4, "region-2"}},
            cross_region};
}

inline world load_world(const std::filesystem::path& root, const world_spec& spec) {
    const auto stats_path = root / "model_stats.json", lat_path = root / "model_latencies.json";
    const auto stats = parse_file(stats_path), lat = parse_file(lat_path);
    const cursor s(stats, stats_path.string()), l(lat, lat_path.string());
    if (spec.vms.empty()) throw input_error("zorse world: no VMs");
    if (spec.global_batch < 1) throw input_error("zorse world: global batch must be >= 1");
    if (spec.dtype != "float16" && spec.dtype != "float32")
        throw input_error("zorse world: dtype must be float16 or float32, got '" + spec.dtype + "'");
    world w;
    w.model = cephalo::import_model_stats(s, spec.model, spec.sequence);
    w.job.global_batch = spec.global_batch;
    w.job.sequence_length = spec.sequence;
    w.job.prec = spec.dtype == "float16" ? precision::fp16_mixed : precision::fp32;

    std::vector<gpu_type_id> type_of(spec.vms.size());
    std::vector<zone_id> zone_of(spec.vms.size());
    for (std::size_t i = 0; i < spec.vms.size(); ++i) {
        const vm_entry& v = spec.vms[i];
        if (v.vms < 1 || v.gpus_per_vm < 1) throw input_error("zorse world: " + v.gpu + ": VMs and GPUs per VM must be >= 1");
        if (!(v.interconnect.value > 0 && v.nic.value > 0)) throw input_error("zorse world: " + v.gpu + ": bandwidths must be positive");
        const auto known = w.hw.find_zone(v.region);  // one zone per region
        zone_of[i] = known ? *known : w.hw.add_zone(v.region, v.region);
        if (auto id = w.hw.find_gpu(v.gpu)) {
            if (w.hw.gpus_per_node(*id) != v.gpus_per_vm)
                throw input_error("zorse world: " + v.gpu + " VMs must all have the same GPU count");
            type_of[i] = *id;
        } else {
            auto gpu = fixtures::gpu_named(v.gpu);
            if (!gpu) throw input_error("zorse world: no built-in GPU type '" + v.gpu + "'");
            type_of[i] = w.hw.add_gpu(*gpu, v.gpus_per_vm);
            w.hw.network.set_intra_node(type_of[i], v.gpus_per_vm, alpha_beta_link{seconds{0}, v.interconnect});
            std::optional<cursor> entry = l.find(spec.model);
            for (const std::string& key : {v.profile_key, std::to_string(spec.sequence), spec.dtype})
                if (entry) entry = entry->find(key);
            if (entry) {
                cephalo::import_latencies(l, {spec.model, v.profile_key, spec.sequence, spec.dtype}, v.gpu,
                                          w.model.num_layers(), w.profiles);
            } else {
                w.profiles.enable_analytical({});
                w.notes.push_back(lat_path.string() + ": no " + spec.dtype + " latencies for " + spec.model + " on " +
                                  v.profile_key + " at sequence " + std::to_string(spec.sequence) +
                                  "; " + v.gpu + " is priced analytically (FLOPs / peak)");
            }
        }
        w.hw.pool.set(type_of[i], zone_of[i], w.hw.pool.available(type_of[i], zone_of[i]) + v.vms * v.gpus_per_vm);
    }
    // Between VMs: the slower NIC, and the cross-region link when the regions differ.
    for (std::size_t i = 0; i < spec.vms.size(); ++i)
        for (std::size_t j = 0; j < spec.vms.size(); ++j) {
            auto b = std::min(spec.vms[i].nic, spec.vms[j].nic);
            if (zone_of[i] != zone_of[j]) b = std::min(b, spec.cross_region);
            w.hw.network.set_link({zone_of[i], type_of[i], 1}, {zone_of[j], type_of[j], 1}, alpha_beta_link{seconds{0}, b});
        }
    return w;
}

}  // namespace hetplan::io::zorse
