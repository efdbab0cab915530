#pragma once
// The network of a cluster: the link between any two endpoints, and what moving a byte between
// two zones costs. Lookups fall back from the exact (zone, GPU type, GPUs) pair to a zone-pair
// default and then to a global default; when none applies the error names both endpoints.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/container/flat_map.hpp>

#include "hetplan/concepts/network.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/core/endpoint.hpp"
#include "hetplan/hardware/links.hpp"

namespace hetplan {

template <concepts::link Link = builtin_link>
class basic_network_model {
public:
    using link_type = Link;

    void set_link(endpoint from, endpoint to, Link l) { exact_.insert_or_assign(pair_key(from, to), std::move(l)); }
    void set_zone_default(zone_id from, zone_id to, Link l) {
        zone_default_.insert_or_assign(zone_key(from, to), std::move(l));
    }
    void set_default(Link l) { default_ = std::move(l); }
    /// Link inside one node among `gpus` GPUs of a type (TP collectives).
    void set_intra_node(gpu_type_id gpu, int gpus, Link l) {
        intra_.insert_or_assign((std::uint32_t{gpu.value} << 8) | std::uint32_t(gpus & 0xff), std::move(l));
    }
    void set_egress_price(zone_id from, zone_id to, usd_per_byte p) {
        if (!(p.value >= 0)) throw input_error("egress price must be >= 0");
        price_.insert_or_assign(zone_key(from, to), p);
    }

    [[nodiscard]] const Link* find(endpoint from, endpoint to) const {
        if (auto it = exact_.find(pair_key(from, to)); it != exact_.end()) return &it->second;
        if (auto it = zone_default_.find(zone_key(from.zone, to.zone)); it != zone_default_.end())
            return &it->second;
        return default_ ? &*default_ : nullptr;
    }
    [[nodiscard]] const Link& between(endpoint from, endpoint to) const {
        if (const Link* l = find(from, to)) return *l;
        throw missing_link("network: no link from (zone " + std::to_string(from.zone.value) + ", GPU type " +
                          std::to_string(from.gpu.value) + ", " + std::to_string(from.gpus) +
                          " GPUs) to (zone " + std::to_string(to.zone.value) + ", GPU type " +
                          std::to_string(to.gpu.value) + ", " + std::to_string(to.gpus) + " GPUs)", from, to);
    }
    [[nodiscard]] const Link* intra_node(gpu_type_id gpu, int gpus) const {
        auto it = intra_.find((std::uint32_t{gpu.value} << 8) | std::uint32_t(gpus & 0xff));
        return it == intra_.end() ? nullptr : &it->second;
    }
    [[nodiscard]] usd_per_byte egress_price(zone_id from, zone_id to) const {
        if (from == to) return usd_per_byte{0};
        auto it = price_.find(zone_key(from, to));
        return it == price_.end() ? usd_per_byte{0} : it->second;
    }
    [[nodiscard]] std::size_t size() const { return exact_.size(); }
    /// Whether some link is set for a pair of endpoints; if not, find() depends on zones alone.
    [[nodiscard]] bool has_endpoint_links() const { return !exact_.empty(); }

    // Every entry as it was set (writing a cluster back out: io::write_cluster).
    [[nodiscard]] const std::optional<Link>& default_link() const { return default_; }
    template <class F>
    void for_each_zone_default(F&& f) const {
        for (const auto& [k, l] : zone_default_) f(zone_id{static_cast<std::uint16_t>(k >> 16)}, zone_id{static_cast<std::uint16_t>(k & 0xffff)}, l);
    }
    template <class F>
    void for_each_link(F&& f) const {
        for (const auto& [k, l] : exact_) f(endpoint_of(static_cast<std::uint32_t>(k >> 32)), endpoint_of(static_cast<std::uint32_t>(k)), l);
    }
    template <class F>
    void for_each_intra_node(F&& f) const {
        for (const auto& [k, l] : intra_) f(gpu_type_id{static_cast<std::uint16_t>(k >> 8)}, static_cast<int>(k & 0xff), l);
    }
    template <class F>
    void for_each_egress_price(F&& f) const {
        for (const auto& [k, p] : price_) f(zone_id{static_cast<std::uint16_t>(k >> 16)}, zone_id{static_cast<std::uint16_t>(k & 0xffff)}, p);
    }

private:
    static endpoint endpoint_of(std::uint32_t key) {
        return {zone_id{static_cast<std::uint16_t>(key >> 20)}, gpu_type_id{static_cast<std::uint16_t>((key >> 8) & 0xfff)}, static_cast<int>(key & 0xff)};
    }
    static std::uint64_t pair_key(endpoint a, endpoint b) {
        return (std::uint64_t{a.key()} << 32) | b.key();
    }
    static std::uint32_t zone_key(zone_id a, zone_id b) { return (std::uint32_t{a.value} << 16) | b.value; }

    boost::container::flat_map<std::uint64_t, Link> exact_;
    boost::container::flat_map<std::uint32_t, Link> zone_default_;
    boost::container::flat_map<std::uint32_t, Link> intra_;
    boost::container::flat_map<std::uint32_t, usd_per_byte> price_;
    std::optional<Link> default_;
};

using network_model = basic_network_model<>;
static_assert(concepts::check_network<network_model>());

}  // namespace hetplan
