#pragma once
// A GPU type: what the planners need to know about one accelerator model.
#include <array>
#include <string>
#include <string_view>

#include "hetplan/concepts/device.hpp"
#include "hetplan/core/units.hpp"
#include "hetplan/core/dtype.hpp"

namespace hetplan {

struct gpu_spec {
    std::string type_name;                     ///< e.g. "A100-40"; the key used in profiles
    std::string vendor = "NVIDIA";
    bytes memory_capacity{};                   ///< device memory usable by training
    std::array<flop_per_second, all_dtypes.size()> peak{};  ///< dense peak per dtype; 0 = unsupported
    usd_per_hour price{};                      ///< rental price per GPU

    [[nodiscard]] std::string_view name() const { return type_name; }
    [[nodiscard]] bytes memory() const { return memory_capacity; }
    [[nodiscard]] flop_per_second peak_flops(dtype t) const { return peak[static_cast<std::size_t>(t)]; }
    [[nodiscard]] usd_per_hour price_per_hour() const { return price; }

    gpu_spec& with_peak(dtype t, flop_per_second f) {
        peak[static_cast<std::size_t>(t)] = f;
        return *this;
    }
};

static_assert(concepts::check_device<gpu_spec>());

/// The gpu_spec of any model of concepts::device: how a device type of your own enters a
/// cluster (which stores plain specs).
template <concepts::device D>
[[nodiscard]] gpu_spec to_gpu_spec(const D& d) {
    gpu_spec g;
    g.type_name = std::string(d.name());
    g.memory_capacity = d.memory();
    for (dtype t : all_dtypes) g.with_peak(t, d.peak_flops(t));
    g.price = d.price_per_hour();
    return g;
}

}  // namespace hetplan
