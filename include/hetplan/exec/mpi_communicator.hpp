#pragma once
// Communicator over MPI (OpenMPI from Debian; CMake option HETPLAN_WITH_MPI). Sends are buffered
// as the concept requires: each is copied and posted with MPI_Isend, and completed requests are
// released on later calls and at barrier() (MPI_Send may wait for the receiver on large
// messages, which would deadlock a pipeline whose stages have different replica counts).
// Collectives map one to one: MPI_Allreduce, MPI_Allgatherv, MPI_Reduce_scatter, MPI_Bcast,
// MPI_Comm_split.
#include <limits>
#include <list>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

// The C API only: the deprecated C++ bindings of OpenMPI warn under -Wcast-function-type.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "hetplan/concepts/communicator.hpp"
#include "hetplan/exec/comm_error.hpp"

namespace hetplan::exec {

/// MPI_Init / MPI_Finalize for a program's lifetime (the hetplan command and the tests).
class mpi_session {
public:
    mpi_session(int* argc, char*** argv) {
        int done = 0;
        MPI_Initialized(&done);
        if (!done) {
            MPI_Init(argc, argv);
            owner_ = true;
        }
    }
    mpi_session(const mpi_session&) = delete;
    mpi_session& operator=(const mpi_session&) = delete;
    ~mpi_session() {
        if (owner_) MPI_Finalize();
    }

private:
    bool owner_ = false;
};

class mpi_communicator {
public:
    mpi_communicator() = default;  // outside every group: size() == 0
    /// The world (MPI_COMM_WORLD, not owned).
    static mpi_communicator world() { return mpi_communicator(MPI_COMM_WORLD, false); }

    [[nodiscard]] int rank() const { return rank_; }
    [[nodiscard]] int size() const { return size_; }

    void send(std::span<const float> data, int peer, int tag) {
        check_peer(peer, "send");
        reap();
        pending& p = h_->sends.emplace_back();
        p.data.assign(data.begin(), data.end());
        ok(MPI_Isend(p.data.data(), count(p.data.size()), MPI_FLOAT, peer, tag, comm(), &p.req), "MPI_Isend");
    }
    void recv(std::span<float> data, int peer, int tag) {
        check_peer(peer, "recv");
        MPI_Status st;
        ok(MPI_Probe(peer, tag, comm(), &st), "MPI_Probe");
        int n = 0;
        MPI_Get_count(&st, MPI_FLOAT, &n);
        if (static_cast<std::size_t>(n) != data.size())
            throw comm_error("MPI communicator: rank " + std::to_string(rank_) + " expected " + std::to_string(data.size()) + " floats from rank " +
                             std::to_string(peer) + " (tag " + std::to_string(tag) + "), got " + std::to_string(n));
        ok(MPI_Recv(data.data(), n, MPI_FLOAT, peer, tag, comm(), MPI_STATUS_IGNORE), "MPI_Recv");
    }
    void all_reduce(std::span<float> buf) {
        require("all_reduce");
        ok(MPI_Allreduce(MPI_IN_PLACE, buf.data(), count(buf.size()), MPI_FLOAT, MPI_SUM, comm()), "MPI_Allreduce");
    }
    void all_gather(std::span<const float> mine, std::span<float> all, std::span<const int> counts) {
        const std::vector<int> displs = offsets(counts, all.size(), mine.size(), "all_gather");
        ok(MPI_Allgatherv(mine.data(), count(mine.size()), MPI_FLOAT, all.data(), counts.data(), displs.data(), MPI_FLOAT, comm()), "MPI_Allgatherv");
    }
    void reduce_scatter(std::span<const float> all, std::span<float> mine, std::span<const int> counts) {
        (void)offsets(counts, all.size(), mine.size(), "reduce_scatter");
        ok(MPI_Reduce_scatter(all.data(), mine.data(), counts.data(), MPI_FLOAT, MPI_SUM, comm()), "MPI_Reduce_scatter");
    }
    void broadcast(std::span<float> buf, int root) {
        check_peer(root, "broadcast");
        ok(MPI_Bcast(buf.data(), count(buf.size()), MPI_FLOAT, root, comm()), "MPI_Bcast");
    }
    void barrier() {
        require("barrier");
        flush();
        ok(MPI_Barrier(comm()), "MPI_Barrier");
    }
    [[nodiscard]] mpi_communicator split(int color, int key) {
        require("split");
        MPI_Comm out = MPI_COMM_NULL;
        ok(MPI_Comm_split(comm(), color == concepts::no_color ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split");
        return out == MPI_COMM_NULL ? mpi_communicator{} : mpi_communicator(out, true);
    }
    /// Waits for every buffered send of this rank to complete.
    void flush() {
        if (!h_) return;
        for (pending& p : h_->sends) ok(MPI_Wait(&p.req, MPI_STATUS_IGNORE), "MPI_Wait");
        h_->sends.clear();
    }

private:
    struct pending {
        std::vector<float> data;
        MPI_Request req = MPI_REQUEST_NULL;
    };
    /// The communicator and its outstanding sends, shared by copies; the last one waits for
    /// the sends (their buffers live here) and frees the communicator.
    struct handle {
        handle(MPI_Comm c, bool o) : comm(c), owned(o) {}
        handle(const handle&) = delete;
        handle& operator=(const handle&) = delete;
        MPI_Comm comm = MPI_COMM_NULL;
        bool owned = false;
        std::list<pending> sends;
        ~handle() {
            int finalized = 0;
            MPI_Finalized(&finalized);
            if (finalized) return;
            for (pending& p : sends) MPI_Wait(&p.req, MPI_STATUS_IGNORE);
            if (owned) MPI_Comm_free(&comm);
        }
    };
    std::shared_ptr<handle> h_;
    int rank_ = -1, size_ = 0;

    mpi_communicator(MPI_Comm c, bool owned) : h_(std::make_shared<handle>(c, owned)) {
        MPI_Comm_rank(c, &rank_);
        MPI_Comm_size(c, &size_);
    }
    [[nodiscard]] MPI_Comm comm() const { return h_->comm; }

    static void ok(int rc, const char* what) {
        if (rc == MPI_SUCCESS) return;
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        throw comm_error(std::string("MPI communicator: ") + what + ": " + std::string(msg, static_cast<std::size_t>(len)));
    }
    static int count(std::size_t n) {
        if (n > static_cast<std::size_t>(std::numeric_limits<int>::max())) throw comm_error("MPI communicator: a message of more than 2^31 floats");
        return static_cast<int>(n);
    }
    void require(const char* what) const {
        if (!h_) throw comm_error(std::string("MPI communicator: ") + what + " on a rank outside the group (split with no_color)");
    }
    void check_peer(int peer, const char* what) const {
        require(what);
        if (peer < 0 || peer >= size_)
            throw comm_error(std::string("MPI communicator: ") + what + " to rank " + std::to_string(peer) + " of a group of " + std::to_string(size_));
    }
    /// Releases the sends that have completed.
    void reap() {
        for (auto it = h_->sends.begin(); it != h_->sends.end();) {
            int done = 0;
            ok(MPI_Test(&it->req, &done, MPI_STATUS_IGNORE), "MPI_Test");
            it = done ? h_->sends.erase(it) : std::next(it);
        }
    }
    [[nodiscard]] std::vector<int> offsets(std::span<const int> counts, std::size_t all, std::size_t mine, const char* what) const {
        require(what);
        if (counts.size() != static_cast<std::size_t>(size_))
            throw comm_error(std::string("MPI communicator: ") + what + ": " + std::to_string(counts.size()) + " counts for a group of " + std::to_string(size_));
        std::vector<int> displs(counts.size());
        long long sum = 0;
        for (std::size_t r = 0; r < counts.size(); ++r) {
            if (counts[r] < 0) throw comm_error(std::string("MPI communicator: ") + what + ": a negative count");
            displs[r] = count(static_cast<std::size_t>(sum));
            sum += counts[r];
        }
        if (static_cast<std::size_t>(sum) != all || static_cast<std::size_t>(counts[static_cast<std::size_t>(rank_)]) != mine)
            throw comm_error(std::string("MPI communicator: ") + what + ": counts sum to " + std::to_string(sum) + ", buffers hold " + std::to_string(all) +
                             " and " + std::to_string(mine));
        return displs;
    }
};

static_assert(concepts::check_communicator<mpi_communicator>());

}  // namespace hetplan::exec
