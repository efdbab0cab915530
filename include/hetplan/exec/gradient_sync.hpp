#pragma once
// Gradient summation for any plan shape: every part of every parameter is summed over exactly the
// ranks that hold it, one rank per replica.
//
// A tensor's holders are the workers whose segments use it, in any pipeline or stage: so
// data-parallel replicas of a stage, pipelines of different depths (AutoHet's layer-wise
// synchronisation, Observation 2) and the token embedding shared by the first and the last stage
// are one rule. A TP-split tensor is cut into T slots, T the largest TP degree among its holders;
// a worker at TP t holds slot k on its rank k t / T, so replicas of different TP degrees (Sailor's
// mixed stages) sum slot by slot. A tensor every TP rank holds whole is summed by each worker's TP
// rank 0 and then broadcast in its TP group. Ranks with the same member set share one
// communicator, made once by split and reused every step.
//
// Sharded (ZeRO / FSDP, the plan's memory.zero_stage >= 1): each group's gradients are
// reduce-scattered in shards proportional to its members' state shares (uneven: Cephalo, Zorse),
// each member updates its shard, and the parameters are all-gathered back. The arithmetic is the
// data-parallel step's, so both give the same weights.
#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <vector>

#include "hetplan/concepts/communicator.hpp"
#include "hetplan/exec/cpu_gpt.hpp"
#include "hetplan/exec/schedule.hpp"

namespace hetplan::exec {

template <concepts::communicator C>
class gradient_sync {
public:
    struct part {
        int tensor = 0, first_unit = 0, last_unit = 0;  ///< units [first, last)
    };
    struct group {
        std::vector<int> members;     ///< world ranks
        std::vector<double> shares;   ///< each member's worker's state share
        std::vector<part> parts;
        C comm;
    };

    /// Collective over the world: every rank builds the same groups in the same order.
    gradient_sync(const step_layout& st, const std::vector<tensor_info>& tensors, int units, C& world) {
        std::map<std::vector<int>, std::size_t> index;
        std::vector<group> all;
        for (const tensor_info& ti : tensors) {
            std::vector<int> holders;
            for (std::size_t w = 0; w < st.workers.size(); ++w)
                if (uses(st, static_cast<int>(w), ti)) holders.push_back(static_cast<int>(w));
            if (holders.empty()) continue;
            int T = 1;
            if (ti.split) {
                for (int w : holders) T = std::max(T, st.workers[static_cast<std::size_t>(w)].tp);
                for (int w : holders)  // slot k lies on one rank of every holder only if t divides T
                    if (T % st.workers[static_cast<std::size_t>(w)].tp != 0)
                        throw comm_error("plan runner: " + ti.name + " is held at TP " + std::to_string(st.workers[static_cast<std::size_t>(w)].tp) + " and " +
                                         std::to_string(T) + "; every TP degree holding a layer must divide the largest (powers of two do)");
            }
            for (int k = 0; k < T; ++k) {
                std::vector<std::pair<int, double>> held;  // (rank, share), in rank order
                for (int w : holders) {
                    const worker_slot& ws = st.workers[static_cast<std::size_t>(w)];
                    held.emplace_back(ws.first_rank + (ti.split ? k * ws.tp / T : 0), ws.state_share);
                }
                std::sort(held.begin(), held.end());
                std::vector<int> members;
                std::vector<double> shares;
                for (const auto& [r, sh] : held) members.push_back(r), shares.push_back(sh);
                const part pt{ti.id, ti.split ? k * units / T : 0, ti.split ? (k + 1) * units / T : 1};
                auto [it, fresh] = index.emplace(members, all.size());
                if (fresh) all.push_back({members, shares, {}, C{}});
                all[it->second].parts.push_back(pt);
            }
        }
        for (group& g : all) {
            const bool member = std::find(g.members.begin(), g.members.end(), world.rank()) != g.members.end();
            if (g.members.size() > 1) g.comm = world.split(member ? 0 : concepts::no_color, world.rank());
            if (member && g.members.size() > 1) mine_.push_back(std::move(g));
        }
    }

    /// Sums the gradients of `w` with the other holders' (collective over every group of mine).
    template <class W>
    void sum(W& w, C& tp_group) {
        std::vector<float> buf;
        for (group& g : mine_) {
            pack(w, g, &local_tensor::grad, buf);
            g.comm.all_reduce(buf);
            unpack(w, g, &local_tensor::grad, buf);
        }
        broadcast_whole(w, tp_group, &local_tensor::grad);
    }

    /// The sharded step: sums and updates every part held by several replicas shard by shard
    /// (reduce-scatter, SGD on the shard, all-gather), the rest locally, then broadcasts the
    /// whole-held tensors' parameters from TP rank 0. Replaces sum() + sgd_step().
    template <class W>
    void sharded_step(W& w, C& tp_group, float lr) {
        std::map<int, std::vector<char>> updated;  // tensor -> per local unit: done by a group
        for (auto& [id, t] : w.tensors()) updated[id].assign(static_cast<std::size_t>(t.num_units), 0);
        std::vector<float> grads, params, shard;
        for (group& g : mine_) {
            pack(w, g, &local_tensor::grad, grads);
            pack(w, g, &local_tensor::param, params);
            const std::vector<int> counts = shard_counts(g.shares, grads.size());
            const auto me = static_cast<std::size_t>(g.comm.rank());
            std::size_t at = 0;
            for (std::size_t r = 0; r < me; ++r) at += static_cast<std::size_t>(counts[r]);
            shard.assign(static_cast<std::size_t>(counts[me]), 0.0f);
            g.comm.reduce_scatter(grads, shard, counts);
            for (std::size_t i = 0; i < shard.size(); ++i) shard[i] = params[at + i] - lr * shard[i];
            g.comm.all_gather(shard, params, counts);
            unpack(w, g, &local_tensor::param, params);
            for (const part& p : g.parts) {
                const int first = w.tensors().at(p.tensor).first_unit;
                for (int u = p.first_unit; u < p.last_unit; ++u) updated[p.tensor][static_cast<std::size_t>(u - first)] = 1;
            }
        }
        for (auto& [id, t] : w.tensors())
            for (int u = 0; u < t.num_units; ++u) {
                if (updated[id][static_cast<std::size_t>(u)]) continue;
                const std::size_t from = static_cast<std::size_t>(u) * t.info.unit_size;
                for (std::size_t i = from; i < from + t.info.unit_size; ++i) t.param[i] -= lr * t.grad[i];
            }
        broadcast_whole(w, tp_group, &local_tensor::param);
    }

    /// n floats split in proportion to the shares, largest remainders first (ties: lower rank).
    [[nodiscard]] static std::vector<int> shard_counts(const std::vector<double>& shares, std::size_t n) {
        double total = 0;
        for (double s : shares) total += s;
        std::vector<int> counts(shares.size());
        std::vector<std::pair<double, std::size_t>> rest;
        std::size_t given = 0;
        for (std::size_t i = 0; i < shares.size(); ++i) {
            const double exact = double(n) * shares[i] / total;
            counts[i] = static_cast<int>(std::floor(exact));
            given += static_cast<std::size_t>(counts[i]);
            rest.emplace_back(-(exact - std::floor(exact)), i);
        }
        std::sort(rest.begin(), rest.end());
        for (std::size_t k = 0; given < n; ++k, ++given) ++counts[rest[k % rest.size()].second];
        return counts;
    }

    [[nodiscard]] std::size_t groups() const { return mine_.size(); }

private:
    std::vector<group> mine_;

    static bool uses(const step_layout& st, int w, const tensor_info& ti) {
        const worker_slot& ws = st.workers[static_cast<std::size_t>(w)];
        for (int k : ws.segments) {
            const segment& sg = st.segments[static_cast<std::size_t>(ws.pipeline)][static_cast<std::size_t>(k)];
            for (int l : ti.layers)
                if (l >= sg.begin && l < sg.end) return true;
        }
        return false;
    }
    using field = std::vector<float> local_tensor::*;  ///< grad or param

    /// The group's parts of `w`'s field, concatenated in part order.
    template <class W>
    static void pack(W& w, const group& g, field f, std::vector<float>& out) {
        out.clear();
        for (const part& p : g.parts) {
            const auto [from, n] = range(w, p);
            const std::vector<float>& v = w.tensors().at(p.tensor).*f;
            out.insert(out.end(), v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(from + n));
        }
    }
    /// The inverse of pack.
    template <class W>
    static void unpack(W& w, const group& g, field f, const std::vector<float>& in) {
        std::size_t at = 0;
        for (const part& p : g.parts) {
            const auto [from, n] = range(w, p);
            std::vector<float>& v = w.tensors().at(p.tensor).*f;
            std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(at), n, v.begin() + static_cast<std::ptrdiff_t>(from));
            at += n;
        }
    }
    /// TP rank 0's copy of the tensors every TP rank holds whole, to the rest of its TP group.
    template <class W>
    static void broadcast_whole(W& w, C& tp_group, field f) {
        if (tp_group.size() <= 1) return;
        std::vector<float> buf;
        for (const auto& [id, t] : w.tensors())
            if (!t.info.split) buf.insert(buf.end(), (t.*f).begin(), (t.*f).end());
        tp_group.broadcast(buf, 0);
        std::size_t at = 0;
        for (auto& [id, t] : w.tensors())
            if (!t.info.split) {
                std::copy_n(buf.begin() + static_cast<std::ptrdiff_t>(at), (t.*f).size(), (t.*f).begin());
                at += (t.*f).size();
            }
    }

    /// Where part p lies in w's local copy of its tensor: (first float, count).
    template <class W>
    static std::pair<std::size_t, std::size_t> range(W& w, const part& p) {
        const local_tensor& t = w.tensors().at(p.tensor);
        const std::size_t from = static_cast<std::size_t>(p.first_unit - t.first_unit) * t.info.unit_size;
        return {from, static_cast<std::size_t>(p.last_unit - p.first_unit) * t.info.unit_size};
    }
};

}  // namespace hetplan::exec
