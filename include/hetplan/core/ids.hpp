#pragma once
// Compact identifiers for GPU types and zones. Searches key memo tables on counts per
// (GPU type, zone), so both are small dense integers rather than strings.
#include <compare>
#include <cstdint>
#include <functional>

namespace hetplan {

template <class Tag>
struct dense_id {
    std::uint16_t value = 0;
    constexpr dense_id() = default;
    constexpr explicit dense_id(std::size_t v) : value(static_cast<std::uint16_t>(v)) {}
    [[nodiscard]] constexpr std::size_t index() const { return value; }
    friend constexpr auto operator<=>(dense_id, dense_id) = default;
};

using gpu_type_id = dense_id<struct gpu_type_tag>;
using zone_id = dense_id<struct zone_tag>;
using region_id = dense_id<struct region_tag>;

}  // namespace hetplan

template <class Tag>
struct std::hash<hetplan::dense_id<Tag>> {
    std::size_t operator()(hetplan::dense_id<Tag> id) const noexcept { return id.value; }
};
