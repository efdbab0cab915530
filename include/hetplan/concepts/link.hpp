#pragma once
/// Concept `link`: a network path between two endpoints.
///
/// Purpose: every communication cost (point-to-point, collectives) is built from links, so a
/// user can plug in a measured or analytical bandwidth model.
/// Minimal definition: `l.transfer_time(bytes)` -> seconds (time to move n bytes once) and
/// `l.bandwidth(bytes)` -> bytes_per_second (effective bandwidth for a message of that size).
/// Laws: transfer_time(0) == 0; transfer_time(n) >= 0 and non-decreasing in n;
/// bandwidth(n) > 0 and finite for n > 0.
/// Models shipped: alpha_beta_link, polynomial_link (Sailor's fit), builtin_link (either).
#include <concepts>

#include "hetplan/core/units.hpp"

namespace hetplan::concepts {

template <class L>
concept has_transfer_time = requires(const L& l, bytes n) {
    { l.transfer_time(n) } -> std::same_as<seconds>;
};
template <class L>
concept has_bandwidth = requires(const L& l, bytes n) {
    { l.bandwidth(n) } -> std::same_as<bytes_per_second>;
};

template <class L>
concept link = has_transfer_time<L> && has_bandwidth<L>;

template <class L>
constexpr bool check_link() {
    static_assert(has_transfer_time<L>,
                  "hetplan::link: needs `transfer_time(hetplan::bytes) const` returning hetplan::seconds");
    static_assert(has_bandwidth<L>,
                  "hetplan::link: needs `bandwidth(hetplan::bytes) const` returning hetplan::bytes_per_second");
    return link<L>;
}

}  // namespace hetplan::concepts
