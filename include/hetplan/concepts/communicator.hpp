#pragma once
/// Concept `communicator`: a group of ranks that exchange fp32 buffers (the execution module).
///
/// Purpose: the plan runner (`exec/`) builds every group a plan implies (TP, per-stage DP,
/// pipeline neighbours, layer-wise sync across pipelines) from one world communicator, whatever
/// carries the bytes: threads in one process (tests), MPI, NCCL.
/// Minimal definition: `rank()`, `size()`; `send(span<const float>, peer, tag)` and
/// `recv(span<float>, peer, tag)`; `all_reduce(span<float>)` (sum, in place);
/// `all_gather(mine, all, counts)` and `reduce_scatter(all, mine, counts)` with one count per
/// rank (uneven shards: Cephalo, Zorse); `broadcast(span<float>, root)`; `barrier()`;
/// `split(color, key)` returning a communicator of the same type over the ranks that passed the
/// same colour, ordered by (key, rank); `no_color` (-1) leaves a rank out (its result has size 0).
/// Laws: every member calls the collectives of a group in the same order with matching sizes;
/// `send` is buffered (it returns once the data is copied, never waiting for the receiver), so
/// any order of sends and matching receives that respects each (peer, tag) pair's FIFO order
/// completes; every member gets the same all_reduce result, bit for bit; counts are >= 0 and
/// sum to `all.size()`; `mine` and `all` do not overlap.
/// Models shipped: exec::thread_communicator (in-process), exec::mpi_communicator (MPI).
#include <concepts>
#include <span>

namespace hetplan::concepts {

template <class C>
concept has_rank_and_size = requires(const C& c) {
    { c.rank() } -> std::convertible_to<int>;
    { c.size() } -> std::convertible_to<int>;
};
template <class C>
concept has_point_to_point = requires(C& c, std::span<const float> in, std::span<float> out, int peer, int tag) {
    c.send(in, peer, tag);
    c.recv(out, peer, tag);
};
template <class C>
concept has_all_reduce = requires(C& c, std::span<float> buf) { c.all_reduce(buf); };
template <class C>
concept has_uneven_collectives = requires(C& c, std::span<const float> in, std::span<float> out, std::span<const int> counts) {
    c.all_gather(in, out, counts);
    c.reduce_scatter(in, out, counts);
};
template <class C>
concept has_broadcast_and_barrier = requires(C& c, std::span<float> buf, int root) {
    c.broadcast(buf, root);
    c.barrier();
};
template <class C>
concept has_split = requires(C& c, int color, int key) {
    { c.split(color, key) } -> std::same_as<C>;
};

template <class C>
concept communicator = has_rank_and_size<C> && has_point_to_point<C> && has_all_reduce<C> && has_uneven_collectives<C> &&
                       has_broadcast_and_barrier<C> && has_split<C>;

/// The colour that leaves a rank out of `split`.
inline constexpr int no_color = -1;

template <class C>
constexpr bool check_communicator() {
    static_assert(has_rank_and_size<C>, "hetplan::communicator: needs `rank() const` and `size() const` returning int");
    static_assert(has_point_to_point<C>,
                  "hetplan::communicator: needs `send(std::span<const float>, int peer, int tag)` and "
                  "`recv(std::span<float>, int peer, int tag)`");
    static_assert(has_all_reduce<C>, "hetplan::communicator: needs `all_reduce(std::span<float>)` (sum, in place)");
    static_assert(has_uneven_collectives<C>,
                  "hetplan::communicator: needs `all_gather(std::span<const float> mine, std::span<float> all, std::span<const int> counts)` "
                  "and `reduce_scatter(std::span<const float> all, std::span<float> mine, std::span<const int> counts)`");
    static_assert(has_broadcast_and_barrier<C>, "hetplan::communicator: needs `broadcast(std::span<float>, int root)` and `barrier()`");
    static_assert(has_split<C>, "hetplan::communicator: needs `split(int color, int key)` returning the same communicator type");
    return communicator<C>;
}

}  // namespace hetplan::concepts
