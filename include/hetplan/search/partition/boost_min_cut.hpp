#pragma once
// Boost.Graph's Stoer-Wagner minimum cut behind search/partition/min_k_cut.hpp's interface: an
// independent reference for the dense version Zorse's planner uses (tests, benchmarks), suited
// to sparse graphs. Apart, so that a planner's consumers do not parse Boost.Graph (about 1.4 s of
// CPU per translation unit).
#include <cstddef>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/one_bit_color_map.hpp>
#include <boost/graph/stoer_wagner_min_cut.hpp>

#include "hetplan/core/error.hpp"
#include "hetplan/search/partition/min_k_cut.hpp"

namespace hetplan::search {

/// The same cut as minimum_two_cut through Boost.Graph's Stoer-Wagner (heap-based, for sparse
/// graphs). Cuts of equal weight may differ in sides.
[[nodiscard]] inline two_cut boost_minimum_two_cut(const weighted_graph& g, const std::vector<int>& vertices) {
    using boost_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                              boost::property<boost::edge_weight_t, double>>;
    const std::size_t n = vertices.size();
    if (n < 2) throw input_error("minimum 2-cut: needs at least two vertices");
    boost_graph h(n);
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = a + 1; b < n; ++b)
            if (const double w = g.weight(vertices[a], vertices[b]); w > 0) boost::add_edge(a, b, w, h);
    auto parity = boost::make_one_bit_color_map(n, boost::get(boost::vertex_index, h));
    const double weight = boost::stoer_wagner_min_cut(h, boost::get(boost::edge_weight, h), boost::parity_map(parity));
    std::vector<bool> on_a(n);
    for (std::size_t a = 0; a < n; ++a) on_a[a] = boost::get(parity, a);
    return detail::ordered_cut(weight, vertices, on_a);
}

}  // namespace hetplan::search
