#pragma once
/// Concept `network`: answers "which link joins these two endpoints".
///
/// Purpose: the simulator asks for the link between (zone, GPU type, GPUs per node) of a sender
/// and of a receiver; users can back it with measurements, a topology or a formula.
/// Minimal definition: `net.between(endpoint, endpoint)` returning a type that models `link`,
/// and `net.egress_price(zone_id, zone_id)` -> usd_per_byte.
/// Laws: between(a, b) is defined for every pair the plan uses (or throws model_error);
/// egress_price(z, z) == 0.
/// Models shipped: hetplan::network_model.
#include <concepts>

#include "hetplan/concepts/link.hpp"
#include "hetplan/core/endpoint.hpp"

namespace hetplan::concepts {

template <class N>
concept has_between = requires(const N& n, endpoint a, endpoint b) {
    { n.between(a, b) } -> link;
};
template <class N>
concept has_egress_price = requires(const N& n, zone_id a, zone_id b) {
    { n.egress_price(a, b) } -> std::same_as<usd_per_byte>;
};

template <class N>
concept network = has_between<N> && has_egress_price<N>;

template <class N>
constexpr bool check_network() {
    static_assert(has_between<N>,
                  "hetplan::network: needs `between(endpoint, endpoint) const` returning a hetplan::link");
    static_assert(has_egress_price<N>,
                  "hetplan::network: needs `egress_price(zone_id, zone_id) const` returning hetplan::usd_per_byte");
    return network<N>;
}

}  // namespace hetplan::concepts
