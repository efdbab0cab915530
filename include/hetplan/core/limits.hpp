#pragma once
// Input limits (issue 16; docs/formats.md). Each is far above what real training needs, yet
// keeps every count and sum inside int and every size, rate and product of them finite in double,
// so no input can overflow the units or make a planner's work explode. Readers and the
// specs' check() refuse values beyond them, naming the field.
namespace hetplan::limits {

inline constexpr int max_gpus = 100'000;        ///< in one cluster: several times the largest fleets
inline constexpr int max_gpu_types = 1'000;
inline constexpr int max_zones = 1'000;         ///< public clouds have a few hundred in all
inline constexpr int max_gpus_per_node = 255;
inline constexpr int max_layers = 10'000;       ///< per model (today's largest: a few hundred)
inline constexpr int max_global_batch = 1 << 24;  ///< sequences per iteration (16.8 M)
inline constexpr int max_sequence = 1 << 24;      ///< tokens per sequence
inline constexpr int max_tp = 255;
inline constexpr int max_hidden = 1 << 20;
inline constexpr int max_vocab = 1 << 24;

inline constexpr double max_gpu_memory_bytes = 1e15;  ///< 1 PB per GPU
inline constexpr double max_peak_flops = 1e18;        ///< 1 EFLOP/s per GPU
inline constexpr double min_peak_flops = 1e9;         ///< 1 GFLOP/s: below is a unit slip (0 stays "unknown")
inline constexpr double max_layer_elems = 1e15;       ///< parameters or activations of one layer, per sample
inline constexpr double max_layer_flops = 1e21;       ///< forward FLOPs of one layer, per sample
inline constexpr double max_bandwidth = 1e15;         ///< bytes/s of one link
inline constexpr double max_latency_s = 3600;
inline constexpr double max_layer_time_s = 86'400;    ///< a profiled layer time
inline constexpr double max_usd_per_hour = 1e6;       ///< per GPU
inline constexpr double max_usd_per_gb = 1e6;

}  // namespace hetplan::limits
