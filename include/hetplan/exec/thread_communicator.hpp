#pragma once
// In-process communicator over threads: the execution module's tests run whole plans in one
// process, without a launcher. Collectives meet at a two-phase barrier: every member posts its
// buffers, each reads the others' and computes its own result (sums in rank order, so every
// member gets the same bits and a run is reproducible), then a second barrier releases the
// buffers. Sends are buffered in per-(source, tag) mailboxes. A member that throws marks the
// world failed, and every wait in it ends with an error instead of a hang.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "hetplan/concepts/communicator.hpp"
#include "hetplan/exec/comm_error.hpp"

namespace hetplan::exec {

namespace detail {

/// What every group of a world shares: the failure flag, checked by every wait.
struct thread_world_state {
    std::mutex m;
    bool failed = false;
    std::string why;
};

/// One group: its members' mailboxes and the rendezvous of its collectives.
struct thread_group {
    explicit thread_group(int n, std::shared_ptr<thread_world_state> w)
        : size(n), world(std::move(w)), in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n)),
          len(static_cast<std::size_t>(n)), ints(static_cast<std::size_t>(n)) {}
    int size;
    std::shared_ptr<thread_world_state> world;
    std::mutex m;
    std::condition_variable cv;
    std::uint64_t generation = 0;
    int arrived = 0;
    // Posted by each member before the first phase of a collective.
    std::vector<const float*> in;
    std::vector<float*> out;
    std::vector<std::size_t> len;
    std::vector<std::pair<int, int>> ints;
    // split(): the groups made, one per member (null when left out).
    std::vector<std::shared_ptr<thread_group>> made;
    // (destination, source, tag) -> messages in order
    std::map<std::tuple<int, int, int>, std::deque<std::vector<float>>> mail;

    void check_world() const {
        std::lock_guard lk(world->m);
        if (world->failed) throw comm_error("thread communicator: a peer failed (" + world->why + ")");
    }
    /// Waits until pred() under the group's lock, polling the world's failure flag.
    template <class Pred>
    void wait(std::unique_lock<std::mutex>& lk, Pred pred) {
        while (!cv.wait_for(lk, std::chrono::milliseconds(20), pred)) check_world();
    }
    void barrier() {
        std::unique_lock lk(m);
        const std::uint64_t gen = generation;
        if (++arrived == size) {
            arrived = 0;
            ++generation;
            cv.notify_all();
        } else {
            wait(lk, [&] { return generation != gen; });
        }
    }
};

}  // namespace detail

/// One rank's handle on a group of threads (a model of concepts::communicator).
class thread_communicator {
public:
    thread_communicator() = default;  // a rank outside every group: size() == 0
    thread_communicator(std::shared_ptr<detail::thread_group> g, int rank) : g_(std::move(g)), rank_(rank) {}

    [[nodiscard]] int rank() const { return g_ ? rank_ : -1; }
    [[nodiscard]] int size() const { return g_ ? g_->size : 0; }

    void send(std::span<const float> data, int peer, int tag) {
        check_peer(peer, "send");
        {
            std::lock_guard lk(g_->m);
            g_->mail[{peer, rank_, tag}].emplace_back(data.begin(), data.end());
        }
        g_->cv.notify_all();
    }
    void recv(std::span<float> data, int peer, int tag) {
        check_peer(peer, "recv");
        std::unique_lock lk(g_->m);
        auto& box = g_->mail[{rank_, peer, tag}];
        g_->wait(lk, [&] { return !box.empty(); });
        std::vector<float> msg = std::move(box.front());
        box.pop_front();
        if (msg.size() != data.size())
            throw comm_error("thread communicator: rank " + std::to_string(rank_) + " expected " + std::to_string(data.size()) + " floats from rank " +
                             std::to_string(peer) + " (tag " + std::to_string(tag) + "), got " + std::to_string(msg.size()));
        std::copy(msg.begin(), msg.end(), data.begin());
    }

    void all_reduce(std::span<float> buf) {
        post(buf.data(), buf.data(), buf.size());
        check_sizes("all_reduce", [&](std::size_t r) { return g_->len[r] == buf.size(); });
        std::vector<float> sum(buf.size(), 0.0f);
        for (int r = 0; r < size(); ++r) {
            const float* src = g_->in[static_cast<std::size_t>(r)];
            for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += src[i];
        }
        g_->barrier();  // every member has read every buffer: results may overwrite them
        std::copy(sum.begin(), sum.end(), buf.begin());
    }

    void all_gather(std::span<const float> mine, std::span<float> all, std::span<const int> counts) {
        const std::vector<std::size_t> at = offsets(counts, all.size(), mine.size(), "all_gather");
        no_overlap(mine, all, "all_gather");
        post(mine.data(), all.data(), mine.size());
        check_sizes("all_gather", [&](std::size_t r) { return g_->len[r] == static_cast<std::size_t>(counts[r]); });
        for (int r = 0; r < size(); ++r) {
            const auto ru = static_cast<std::size_t>(r);
            std::copy_n(g_->in[ru], static_cast<std::size_t>(counts[ru]), all.begin() + static_cast<std::ptrdiff_t>(at[ru]));
        }
        g_->barrier();
    }

    void reduce_scatter(std::span<const float> all, std::span<float> mine, std::span<const int> counts) {
        const std::vector<std::size_t> at = offsets(counts, all.size(), mine.size(), "reduce_scatter");
        no_overlap(mine, all, "reduce_scatter");
        post(all.data(), mine.data(), all.size());
        check_sizes("reduce_scatter", [&](std::size_t r) { return g_->len[r] == all.size(); });
        const std::size_t from = at[static_cast<std::size_t>(rank_)];
        std::fill(mine.begin(), mine.end(), 0.0f);
        for (int r = 0; r < size(); ++r) {
            const float* src = g_->in[static_cast<std::size_t>(r)] + from;
            for (std::size_t i = 0; i < mine.size(); ++i) mine[i] += src[i];
        }
        g_->barrier();
    }

    void broadcast(std::span<float> buf, int root) {
        check_peer(root, "broadcast");
        post(buf.data(), buf.data(), buf.size());
        check_sizes("broadcast", [&](std::size_t r) { return g_->len[r] == buf.size(); });
        if (rank_ != root) std::copy_n(g_->in[static_cast<std::size_t>(root)], buf.size(), buf.begin());
        g_->barrier();
    }

    void barrier() {
        require_member("barrier");
        g_->barrier();
    }

    /// Members with the same colour form a group, ordered by (key, rank); `no_color` leaves a
    /// rank out. Collective over this group.
    [[nodiscard]] thread_communicator split(int color, int key) {
        require_member("split");
        {
            std::lock_guard lk(g_->m);
            g_->ints[static_cast<std::size_t>(rank_)] = {color, key};
        }
        g_->barrier();
        if (rank_ == 0) {  // the first member builds every new group; the others wait for it
            g_->made.assign(static_cast<std::size_t>(size()), nullptr);
            std::map<int, std::vector<std::tuple<int, int>>> by_color;  // colour -> (key, rank)
            for (int r = 0; r < size(); ++r) {
                const auto [c, k] = g_->ints[static_cast<std::size_t>(r)];
                if (c != concepts::no_color) by_color[c].emplace_back(k, r);
            }
            for (auto& [c, members] : by_color) {
                std::sort(members.begin(), members.end());
                auto ng = std::make_shared<detail::thread_group>(static_cast<int>(members.size()), g_->world);
                for (const auto& mem : members) g_->made[static_cast<std::size_t>(std::get<1>(mem))] = ng;
            }
        }
        g_->barrier();
        thread_communicator out;
        if (auto ng = g_->made[static_cast<std::size_t>(rank_)]) {
            int pos = 0;  // my position: members of my colour before me in (key, rank) order
            const auto mine = g_->ints[static_cast<std::size_t>(rank_)];
            for (int r = 0; r < size(); ++r) {
                const auto other = g_->ints[static_cast<std::size_t>(r)];
                if (other.first == mine.first && std::pair{other.second, r} < std::pair{mine.second, rank_}) ++pos;
            }
            out = thread_communicator(std::move(ng), pos);
        }
        g_->barrier();  // nobody reads `made` or `ints` any more
        return out;
    }

private:
    std::shared_ptr<detail::thread_group> g_;
    int rank_ = -1;

    void require_member(const char* what) const {
        if (!g_) throw comm_error(std::string("thread communicator: ") + what + " on a rank outside the group (split with no_color)");
    }
    void check_peer(int peer, const char* what) const {
        require_member(what);
        if (peer < 0 || peer >= g_->size)
            throw comm_error(std::string("thread communicator: ") + what + " to rank " + std::to_string(peer) + " of a group of " + std::to_string(g_->size));
    }
    /// First phase of a collective: post my buffers, wait for every member's.
    void post(const float* in, float* out, std::size_t n) {
        require_member("collective");
        {
            std::lock_guard lk(g_->m);
            const auto r = static_cast<std::size_t>(rank_);
            g_->in[r] = in;
            g_->out[r] = out;
            g_->len[r] = n;
        }
        g_->barrier();
    }
    template <class Ok>
    void check_sizes(const char* what, Ok ok) {
        for (int r = 0; r < size(); ++r)
            if (!ok(static_cast<std::size_t>(r))) {
                g_->barrier();  // let the others see it too before anyone throws
                throw comm_error(std::string("thread communicator: ") + what + ": rank " + std::to_string(r) + " passed " +
                                 std::to_string(g_->len[static_cast<std::size_t>(r)]) + " floats, rank " + std::to_string(rank_) + " expected the same as its own");
            }
    }
    [[nodiscard]] std::vector<std::size_t> offsets(std::span<const int> counts, std::size_t all, std::size_t mine, const char* what) const {
        require_member(what);
        if (counts.size() != static_cast<std::size_t>(size()))
            throw comm_error(std::string("thread communicator: ") + what + ": " + std::to_string(counts.size()) + " counts for a group of " + std::to_string(size()));
        std::vector<std::size_t> at(counts.size());
        std::size_t sum = 0;
        for (std::size_t r = 0; r < counts.size(); ++r) {
            if (counts[r] < 0) throw comm_error(std::string("thread communicator: ") + what + ": a negative count");
            at[r] = sum;
            sum += static_cast<std::size_t>(counts[r]);
        }
        if (sum != all || static_cast<std::size_t>(counts[static_cast<std::size_t>(rank_)]) != mine)
            throw comm_error(std::string("thread communicator: ") + what + ": counts sum to " + std::to_string(sum) + " and mine is " +
                             std::to_string(counts[static_cast<std::size_t>(rank_)]) + ", buffers hold " + std::to_string(all) + " and " + std::to_string(mine));
        return at;
    }
    static void no_overlap(std::span<const float> a, std::span<const float> b, const char* what) {
        const float* a0 = a.data();
        const float* b0 = b.data();
        if (!a.empty() && !b.empty() && std::less<>{}(a0, b0 + b.size()) && std::less<>{}(b0, a0 + a.size()))
            throw comm_error(std::string("thread communicator: ") + what + ": `mine` and `all` overlap");
    }
};

/// A world of n ranks in one process. `run(n, f)` calls f(communicator) on n threads and
/// rethrows the first failure after every thread has ended (the others see the world failed).
class thread_world {
public:
    explicit thread_world(int n) : state_(std::make_shared<detail::thread_world_state>()) {
        if (n < 1) throw comm_error("thread_world: at least one rank");
        group_ = std::make_shared<detail::thread_group>(n, state_);
    }
    [[nodiscard]] thread_communicator at(int rank) const { return {group_, rank}; }
    [[nodiscard]] int size() const { return group_->size; }
    void fail(const std::string& why) {
        std::lock_guard lk(state_->m);
        if (!state_->failed) state_->failed = true, state_->why = why;
    }

    template <class F>
    static void run(int n, F f) {
        thread_world w(n);
        std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
        std::vector<std::thread> threads;
        threads.reserve(static_cast<std::size_t>(n));
        for (int r = 0; r < n; ++r)
            threads.emplace_back([&w, &errors, &f, r] {
                try {
                    f(w.at(r));
                } catch (const std::exception& e) {
                    errors[static_cast<std::size_t>(r)] = std::current_exception();
                    w.fail("rank " + std::to_string(r) + ": " + e.what());
                } catch (...) {
                    errors[static_cast<std::size_t>(r)] = std::current_exception();
                    w.fail("rank " + std::to_string(r) + " threw");
                }
            });
        for (auto& t : threads) t.join();
        // The first cause, not a peer's "a peer failed".
        std::exception_ptr first;
        for (const auto& e : errors) {
            if (!e) continue;
            try {
                std::rethrow_exception(e);
            } catch (const comm_error& ce) {
                if (std::string(ce.what()).find("a peer failed") == std::string::npos) return std::rethrow_exception(e);
                if (!first) first = e;
            } catch (...) {
                return std::rethrow_exception(e);
            }
        }
        if (first) std::rethrow_exception(first);
    }

private:
    std::shared_ptr<detail::thread_world_state> state_;
    std::shared_ptr<detail::thread_group> group_;
};

static_assert(concepts::check_communicator<thread_communicator>());

}  // namespace hetplan::exec
