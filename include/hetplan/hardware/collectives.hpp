#pragma once
// Collective communication times built on links, for ring algorithms (as NCCL uses across
// nodes). With n participants, a ring all-reduce sends 2(n-1) chunks of size S/n along every
// ring edge; all-gather and reduce-scatter send (n-1) chunks. Every step waits for the slowest
// edge, so the time is set by the slowest participant's link.
#include <algorithm>
#include <cmath>
#include <concepts>
#include <span>

#include "hetplan/concepts/link.hpp"
#include "hetplan/core/units.hpp"

namespace hetplan::collective {

/// One message over one link.
template <concepts::link L>
seconds point_to_point(const L& link, bytes size) {
    return link.transfer_time(size);
}

/// `steps` chunk transfers of size/n, each as slow as the slowest ring edge. `edge(k)` returns
/// the link from participant k to participant (k+1) mod n.
template <class EdgeFn>
    requires std::invocable<EdgeFn&, int>
seconds ring_steps(int n, bytes size, double steps, EdgeFn&& edge) {
    if (n <= 1 || size.value <= 0) return seconds{0};
    const bytes chunk = size / n;
    seconds slowest{0};
    for (int k = 0; k < n; ++k) slowest = max(slowest, edge(k).transfer_time(chunk));
    return slowest * steps;
}

/// The same when the n edges use only the links in `links`, each at least once (a step is as
/// slow as the slowest of them): the price of a ring of many GPUs over few distinct links.
template <concepts::link L>
seconds ring_steps_on(int n, bytes size, double steps, std::span<const L* const> links) {
    if (n <= 1 || size.value <= 0) return seconds{0};
    const bytes chunk = size / n;
    seconds slowest{0};
    for (const L* l : links) slowest = max(slowest, l->transfer_time(chunk));
    return slowest * steps;
}

/// Ring all-reduce of `size` bytes held by each of n participants: 2(n-1) steps of size/n.
template <class EdgeFn>
    requires std::invocable<EdgeFn&, int>
seconds ring_all_reduce(int n, bytes size, EdgeFn&& edge) {
    return ring_steps(n, size, 2.0 * (n - 1), edge);
}
/// Ring all-gather producing `size` bytes on each participant: (n-1) steps of size/n.
template <class EdgeFn>
    requires std::invocable<EdgeFn&, int>
seconds ring_all_gather(int n, bytes size, EdgeFn&& edge) {
    return ring_steps(n, size, 1.0 * (n - 1), edge);
}
/// Ring reduce-scatter of `size` bytes per participant: (n-1) steps of size/n.
template <class EdgeFn>
    requires std::invocable<EdgeFn&, int>
seconds ring_reduce_scatter(int n, bytes size, EdgeFn&& edge) {
    return ring_steps(n, size, 1.0 * (n - 1), edge);
}

/// Same link on every edge (a homogeneous ring): one transfer time, no loop over the edges
/// (the value ring_steps computes, since every edge is equally slow).
template <concepts::link L>
seconds ring_steps(int n, bytes size, double steps, const L& link) {
    if (n <= 1 || size.value <= 0) return seconds{0};
    return link.transfer_time(size / n) * steps;
}
template <concepts::link L>
seconds ring_all_reduce(int n, bytes size, const L& link) {
    return ring_steps(n, size, 2.0 * (n - 1), link);
}
/// Over the distinct links of its n edges (ring_steps_on).
template <concepts::link L>
seconds ring_all_reduce(int n, bytes size, std::span<const L* const> links) {
    return ring_steps_on(n, size, 2.0 * (n - 1), links);
}
template <concepts::link L>
seconds ring_all_gather(int n, bytes size, const L& link) {
    return ring_steps(n, size, 1.0 * (n - 1), link);
}
template <concepts::link L>
seconds ring_reduce_scatter(int n, bytes size, const L& link) {
    return ring_steps(n, size, 1.0 * (n - 1), link);
}

/// Bytes a ring all-reduce of `size` over n participants sends along each ring edge: 2(n-1)
/// chunks of size/n (what cross-zone edges pay for, Sailor §4.3).
inline bytes ring_all_reduce_bytes_per_edge(int n, bytes size) {
    return n <= 1 ? bytes{0} : size * (2.0 * double(n - 1) / double(n));
}

/// Splits a large all-reduce into buckets, as DeepSpeed/PyTorch DDP do (Sailor uses 500 MB):
/// each bucket is a separate ring all-reduce, so the per-message bandwidth is that of a
/// bucket's chunk rather than of the whole tensor.
/// `edge` is an edge function (as for ring_all_reduce), one link for every edge, or the span
/// of the distinct links of the edges.
template <class Edges>
seconds bucketed_ring_all_reduce(int n, bytes size, bytes bucket, const Edges& edge) {
    if (n <= 1 || size.value <= 0) return seconds{0};
    if (!(bucket.value > 0)) return ring_all_reduce(n, size, edge);
    const double full = std::floor(size.value / bucket.value);
    const bytes rest{size.value - full * bucket.value};
    seconds t = ring_all_reduce(n, bucket, edge) * full;
    if (rest.value > 0) t += ring_all_reduce(n, rest, edge);
    return t;
}

}  // namespace hetplan::collective
