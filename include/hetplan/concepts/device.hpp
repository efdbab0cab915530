#pragma once
/// Concept `device`: something that trains, e.g. one GPU.
///
/// Purpose: lets a user type stand in for the built-in `gpu_spec` wherever the simulator or a
/// planner needs a GPU's capacity, speed or price.
/// Minimal definition: `d.name()` (convertible to std::string_view), `d.memory()` -> bytes,
/// `d.peak_flops(dtype)` -> flop_per_second, `d.price_per_hour()` -> usd_per_hour.
/// Laws: memory() > 0; peak_flops(t) > 0 for every dtype the device supports;
/// price_per_hour() >= 0.
/// Models shipped: hetplan::gpu_spec.
#include <concepts>
#include <string_view>

#include "hetplan/core/units.hpp"
#include "hetplan/core/dtype.hpp"

namespace hetplan::concepts {

template <class D>
concept has_name = requires(const D& d) { { d.name() } -> std::convertible_to<std::string_view>; };
template <class D>
concept has_memory = requires(const D& d) { { d.memory() } -> std::same_as<bytes>; };
template <class D>
concept has_peak_flops = requires(const D& d, dtype t) {
    { d.peak_flops(t) } -> std::same_as<flop_per_second>;
};
template <class D>
concept has_price = requires(const D& d) { { d.price_per_hour() } -> std::same_as<usd_per_hour>; };

template <class D>
concept device = has_name<D> && has_memory<D> && has_peak_flops<D> && has_price<D>;

/// Instantiate at an entry point to get one readable diagnostic per missing member.
template <class D>
constexpr bool check_device() {
    static_assert(has_name<D>, "hetplan::device: needs `name() const` returning a string_view");
    static_assert(has_memory<D>, "hetplan::device: needs `memory() const` returning hetplan::bytes");
    static_assert(has_peak_flops<D>,
                  "hetplan::device: needs `peak_flops(dtype) const` returning hetplan::flop_per_second");
    static_assert(has_price<D>,
                  "hetplan::device: needs `price_per_hour() const` returning hetplan::usd_per_hour");
    return device<D>;
}

}  // namespace hetplan::concepts
