#pragma once
// Communicator over NCCL (CMake option HETPLAN_WITH_NCCL): the collectives on the GPUs, one rank
// per GPU, bootstrapped through any other communicator (MPI across machines, threads in one
// process): rank 0's NCCL id is broadcast through it.
//
// The concept works on host buffers: each collective stages its data through a device buffer
// of the communicator's own on its own stream and returns once the result is back in host
// memory. Uneven all-gather and reduce-scatter (Cephalo, Zorse) are one NCCL group of
// broadcasts / reduces, one per rank, since NCCL's own need equal counts. Point-to-point goes
// through the bootstrap communicator: NCCL's send waits for its receiver (a rendezvous inside the
// stream), while the concept's send is buffered, which is what lets the plan runner order the
// many-to-many exchanges of stages with different replica counts freely.
#include <nccl.h>
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 18, 0)
#error "hetplan/exec/nccl_communicator.hpp needs NCCL 2.18 or later (ncclCommSplit)"
#endif

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "hetplan/concepts/communicator.hpp"
#include "hetplan/exec/comm_error.hpp"
#include "hetplan/exec/cuda_runtime.hpp"

namespace hetplan::exec {

inline void nccl_check(ncclResult_t r, const char* what) {
    if (r != ncclSuccess) throw comm_error(std::string("NCCL: ") + what + ": " + ncclGetErrorString(r));
}

template <concepts::communicator Bootstrap>
class nccl_communicator {
public:
    nccl_communicator() = default;  // outside every group: size() == 0

    /// Collective over `boot`: one NCCL communicator of the same ranks on each rank's current
    /// CUDA device (set it first: one rank per GPU, NCCL refuses two ranks on one device).
    static nccl_communicator over(Bootstrap boot) {
        ncclUniqueId id{};
        if (boot.rank() == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
        std::vector<float> carrier((sizeof id + sizeof(float) - 1) / sizeof(float), 0.0f);
        std::memcpy(carrier.data(), &id, sizeof id);
        boot.broadcast(carrier, 0);
        std::memcpy(&id, carrier.data(), sizeof id);
        auto st = std::make_shared<state>();
        nccl_check(ncclCommInitRank(&st->comm, boot.size(), id, boot.rank()), "ncclCommInitRank");
        st->open();
        return nccl_communicator(std::move(boot), std::move(st));
    }

    [[nodiscard]] int rank() const { return st_ ? boot_.rank() : -1; }
    [[nodiscard]] int size() const { return st_ ? boot_.size() : 0; }

    void send(std::span<const float> data, int peer, int tag) { boot_.send(data, peer, tag); }
    void recv(std::span<float> data, int peer, int tag) { boot_.recv(data, peer, tag); }

    void all_reduce(std::span<float> buf) {
        float* d = staged(buf.size(), buf);
        nccl_check(ncclAllReduce(d, d, buf.size(), ncclFloat, ncclSum, comm(), st_->stream), "ncclAllReduce");
        unstage(d, buf);
    }
    void broadcast(std::span<float> buf, int root) {
        float* d = staged(buf.size(), buf);
        nccl_check(ncclBroadcast(d, d, buf.size(), ncclFloat, root, comm(), st_->stream), "ncclBroadcast");
        unstage(d, buf);
    }
    /// Every rank's `mine` (counts[r] values from rank r) into `all`, in rank order.
    void all_gather(std::span<const float> mine, std::span<float> all, std::span<const int> counts) {
        const std::vector<std::size_t> at = offsets(counts, all.size(), "all_gather");
        if (mine.size() != static_cast<std::size_t>(counts[static_cast<std::size_t>(rank())])) throw comm_error("NCCL all_gather: my buffer does not hold my count");
        float* d = staged(all.size(), {});
        put(d + at[static_cast<std::size_t>(rank())], mine);
        nccl_check(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < size(); ++r)
            if (counts[static_cast<std::size_t>(r)] > 0)
                nccl_check(ncclBroadcast(d + at[static_cast<std::size_t>(r)], d + at[static_cast<std::size_t>(r)], static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]),
                                         ncclFloat, r, comm(), st_->stream),
                           "ncclBroadcast");
        nccl_check(ncclGroupEnd(), "ncclGroupEnd");
        unstage(d, all);
    }
    /// The sum over ranks of `all`, rank r keeping values [sum counts[<r], + counts[r]) in `mine`.
    void reduce_scatter(std::span<const float> all, std::span<float> mine, std::span<const int> counts) {
        const std::vector<std::size_t> at = offsets(counts, all.size(), "reduce_scatter");
        if (mine.size() != static_cast<std::size_t>(counts[static_cast<std::size_t>(rank())])) throw comm_error("NCCL reduce_scatter: my buffer does not hold my count");
        float* d = staged(all.size() + mine.size(), {});
        put(d, all);
        float* out = d + all.size();
        nccl_check(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < size(); ++r)
            if (counts[static_cast<std::size_t>(r)] > 0)
                nccl_check(ncclReduce(d + at[static_cast<std::size_t>(r)], out, static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]), ncclFloat, ncclSum, r, comm(),
                                      st_->stream),
                           "ncclReduce");
        nccl_check(ncclGroupEnd(), "ncclGroupEnd");
        unstage(out, mine);
    }
    void barrier() {
        std::vector<float> one{0.0f};
        all_reduce(one);
    }
    /// ncclCommSplit of this group and the bootstrap's split with the same colour and key.
    nccl_communicator split(int color, int key) {
        Bootstrap sub = boot_.split(color, key);
        ncclComm_t child = nullptr;
        nccl_check(ncclCommSplit(comm(), color == concepts::no_color ? NCCL_SPLIT_NOCOLOR : color, key, &child, nullptr), "ncclCommSplit");
        if (color == concepts::no_color) return {};
        auto st = std::make_shared<state>();
        st->comm = child;
        st->open();
        return nccl_communicator(std::move(sub), std::move(st));
    }

private:
    struct state {
        ncclComm_t comm = nullptr;
        cudaStream_t stream = nullptr;
        float* buffer = nullptr;
        std::size_t capacity = 0;
        void open() { cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating the communicator's stream"); }
        state() = default;
        state(const state&) = delete;
        state& operator=(const state&) = delete;
        ~state() {
            if (buffer) (void)cudaFree(buffer);
            if (stream) (void)cudaStreamDestroy(stream);
            if (comm) (void)ncclCommDestroy(comm);
        }
    };
    Bootstrap boot_;
    std::shared_ptr<state> st_;

    nccl_communicator(Bootstrap boot, std::shared_ptr<state> st) : boot_(std::move(boot)), st_(std::move(st)) {}

    [[nodiscard]] ncclComm_t comm() const {
        if (!st_) throw comm_error("NCCL communicator: a collective on a rank outside the group (split with no_color)");
        return st_->comm;
    }
    /// The device buffer, at least n floats, holding `host` when given.
    float* staged(std::size_t n, std::span<const float> host) {
        (void)comm();
        if (n > st_->capacity) {
            if (st_->buffer) cuda_check(cudaFree(st_->buffer), "freeing the staging buffer");
            st_->buffer = nullptr;
            const std::size_t grown = std::max(n, 2 * st_->capacity);
            cuda_check(cudaMalloc(&st_->buffer, std::max<std::size_t>(grown, 1) * sizeof(float)), "allocating the staging buffer");
            st_->capacity = grown;
        }
        if (!host.empty()) put(st_->buffer, host);
        return st_->buffer;
    }
    void put(float* d, std::span<const float> host) {
        if (!host.empty()) cuda_check(cudaMemcpyAsync(d, host.data(), host.size_bytes(), cudaMemcpyHostToDevice, st_->stream), "copying to the device");
    }
    void unstage(const float* d, std::span<float> host) {
        if (!host.empty()) cuda_check(cudaMemcpyAsync(host.data(), d, host.size_bytes(), cudaMemcpyDeviceToHost, st_->stream), "copying from the device");
        cuda_check(cudaStreamSynchronize(st_->stream), "waiting for NCCL");
    }
    [[nodiscard]] std::vector<std::size_t> offsets(std::span<const int> counts, std::size_t total, const char* what) const {
        if (counts.size() != static_cast<std::size_t>(size())) throw comm_error(std::string("NCCL ") + what + ": one count per rank is needed");
        std::vector<std::size_t> at(counts.size() + 1, 0);
        for (std::size_t r = 0; r < counts.size(); ++r) {
            if (counts[r] < 0) throw comm_error(std::string("NCCL ") + what + ": counts must be >= 0");
            at[r + 1] = at[r] + static_cast<std::size_t>(counts[r]);
        }
        if (at.back() != total) throw comm_error(std::string("NCCL ") + what + ": the counts do not sum to the buffer's size");
        return at;
    }
};

}  // namespace hetplan::exec
