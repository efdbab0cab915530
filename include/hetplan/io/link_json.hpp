#pragma once
// Links in JSON:
//   {"latency_s": 1e-5, "bandwidth_gbit_s": 100}                         alpha-beta
//   {"latency_s": 0, "bandwidth_bytes_per_s": 1.25e10}                   alpha-beta
//   {"polynomial_gb_s": [c2, c1, c0], "max_bytes_per_s": 6.0e9,          Sailor's fit: GB/s as a
//    "min_mb": 1, "max_mb": 16384}                                       polynomial in log2(MB)
#include <vector>

#include "hetplan/hardware/links.hpp"
#include "hetplan/io/json_reader.hpp"

namespace hetplan::io {

inline builtin_link read_link(const cursor& c) {
    c.expect_object();
    try {
        if (auto poly = c.find("polynomial_gb_s")) {
            c.known_fields({"polynomial_gb_s", "max_bytes_per_s", "min_mb", "max_mb"});
            std::vector<double> coeffs;
            poly->for_each_item([&](const cursor& x) { coeffs.push_back(x.number()); });
            const double lo = std::log2(c.find("min_mb") ? c["min_mb"].positive() : 1.0);
            const double hi = std::log2(c.find("max_mb") ? c["max_mb"].positive() : 16384.0);
            return polynomial_link(coeffs, bytes_per_second{c["max_bytes_per_s"].positive(limits::max_bandwidth)}, lo, hi);
        }
        c.known_fields({"latency_s", "bandwidth_gbit_s", "bandwidth_bytes_per_s"});
        if (c.find("bandwidth_gbit_s") && c.find("bandwidth_bytes_per_s")) c["bandwidth_bytes_per_s"].fail("give bandwidth_gbit_s or bandwidth_bytes_per_s, not both");
        const seconds latency{c.find("latency_s") ? c["latency_s"].non_negative(limits::max_latency_s) : 0.0};
        if (auto g = c.find("bandwidth_gbit_s")) return alpha_beta_link(latency, gigabits_per_second(g->positive(limits::max_bandwidth * 8 / 1e9)));
        return alpha_beta_link(latency, bytes_per_second{c["bandwidth_bytes_per_s"].positive(limits::max_bandwidth)});
    } catch (const input_error& e) {
        if (!e.source().empty()) throw;
        c.fail(e.problem());
    }
}

inline json write_link(const builtin_link& l) {
    if (const auto* ab = l.get_if<alpha_beta_link>())
        return {{"latency_s", ab->latency.value}, {"bandwidth_bytes_per_s", ab->peak.value}};
    const auto* p = l.get_if<polynomial_link>();
    if (!p) throw input_error("a user-defined link (any_link) cannot be written to JSON");
    json coeffs = json::array();
    for (std::size_t i = 0; i < p->degree_plus_one; ++i) coeffs.push_back(p->coeff[i]);
    return {{"polynomial_gb_s", coeffs}, {"max_bytes_per_s", p->ceiling.value},
            {"min_mb", std::exp2(p->x_min)}, {"max_mb", std::exp2(p->x_max)}};
}

}  // namespace hetplan::io
