#pragma once
// One end of a network link as Sailor profiles it (§4.1): a node of some GPU type in some zone,
// seen through `gpus` of its GPUs (the TP group that sends or receives).
#include <compare>
#include <cstdint>

#include "hetplan/core/ids.hpp"

namespace hetplan {

struct endpoint {
    zone_id zone{};
    gpu_type_id gpu{};
    int gpus = 1;  ///< GPUs of the node taking part (a TP group's size)

    friend constexpr auto operator<=>(const endpoint&, const endpoint&) = default;

    /// Packs into 32 bits for flat hash/map keys.
    [[nodiscard]] constexpr std::uint32_t key() const {
        return (std::uint32_t{zone.value} << 20) | (std::uint32_t{gpu.value} << 8) |
               static_cast<std::uint32_t>(gpus & 0xff);
    }
};

}  // namespace hetplan
