#pragma once
// Runs a hetplan plan for real: one rank of it, over any communicator, with any compute (the
// CPU's by default; exec/cuda_gpt.hpp on a GPU). A plan with `memory.recompute` keeps each layer's
// input and runs its forward again just before its backward (full recomputation).
//
// World ranks follow the plan's workers in plan order (pipeline, stage, worker), a worker taking
// `tp` consecutive ranks. Each rank builds the groups its worker needs once: its TP group, and
// one group per set of ranks that hold the same part of a parameter (exec/gradient_sync.hpp).
// A step runs every operation of the worker in the order exec/schedule.hpp gives: forward and
// backward of its microbatches over its segments, exchanging the rows of the samples it shares
// with each neighbour's microbatches (TP rank j receives from the neighbour's rank j mod its TP
// degree), then sums gradients, then takes an SGD step. The loss is the mean token
// cross-entropy over the global batch, so every rank's gradient is its samples' share of it and
// uneven batch shares need no weights.
#include <algorithm>
#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hetplan/concepts/communicator.hpp"
#include "hetplan/concepts/compute.hpp"
#include "hetplan/exec/cpu_gpt.hpp"
#include "hetplan/exec/gradient_sync.hpp"
#include "hetplan/exec/schedule.hpp"

namespace hetplan::exec {

/// Tokens and targets of sample i at step t: random tokens, each target a fixed function of its
/// token (so there is something to learn in a few steps). A pure function, so every rank and the
/// single-process reference read the same data.
struct synthetic_data {
    int vocab = 64, sequence = 8;
    std::uint64_t seed = 1;
    void tokens(int step, int sample, std::span<int> tok, std::span<int> tgt) const {
        for (int t = 0; t < sequence; ++t) {
            const float u = kernels::init_value(seed + static_cast<std::uint64_t>(step), sample, static_cast<std::uint64_t>(t));
            const int v = std::min(vocab - 1, static_cast<int>((u + 1.0f) * 0.5f * float(vocab)));
            tok[static_cast<std::size_t>(t)] = v;
            tgt[static_cast<std::size_t>(t)] = (3 * v + 1) % vocab;
        }
    }
};

struct run_options {
    float learning_rate = 0.1f;
    std::uint64_t seed = 7;  ///< initial weights
};

/// `W`: the compute (concepts::compute): the CPU's by default, exec::cuda_gpt on a GPU.
template <concepts::communicator C, concepts::compute W = gpt_worker>
class plan_runner {
    static_assert(std::constructible_from<W, gpt_shape, std::vector<int>, int, int, std::uint64_t>,
                  "hetplan::plan_runner: the compute must be constructible as W(gpt_shape, std::vector<int> layers, int tp, int tp_rank, std::uint64_t seed)");

public:
    plan_runner(const plan& pl, gpt_shape shape, synthetic_data data, C world, run_options opt = {})
        : shape_(shape), data_(data), world_(std::move(world)), opt_(opt), layout_(layout_step(pl, shape.layers())), sharded_(pl.memory.zero_stage >= 1), recompute_(pl.memory.recompute) {
        shape_.check();
        if (layout_.world_size != world_.size())
            throw comm_error("plan runner: the plan has " + std::to_string(layout_.world_size) + " GPUs, the world " + std::to_string(world_.size()) + " ranks");
        for (std::size_t w = 0; w < layout_.workers.size(); ++w) {
            const worker_slot& ws = layout_.workers[w];
            if (shape_.heads % ws.tp != 0)
                throw comm_error("plan runner: worker " + std::to_string(ws.index) + " of pipeline " + std::to_string(ws.pipeline) + ", stage " +
                                 std::to_string(ws.stage) + ": TP " + std::to_string(ws.tp) + " does not divide the model's " + std::to_string(shape_.heads) + " heads");
            if (world_.rank() >= ws.first_rank && world_.rank() < ws.first_rank + ws.tp) me_ = static_cast<int>(w);
        }
        const worker_slot& mine = slot();
        std::vector<int> layers;
        for (int k : mine.segments)
            for (int l = seg(k).begin; l < seg(k).end; ++l) layers.push_back(l);
        const int tp_rank = world_.rank() - mine.first_rank;
        compute_.emplace(shape_, layers, mine.tp, tp_rank, opt_.seed);
        tp_group_ = world_.split(me_, tp_rank);
        sync_.emplace(layout_, gpt_tensors(shape_), shape_.heads, world_);
    }

    [[nodiscard]] const step_layout& layout() const { return layout_; }
    [[nodiscard]] W& compute() { return *compute_; }
    [[nodiscard]] int worker() const { return me_; }
    /// The most bytes of activations this rank kept for backward at once, over every step run.
    [[nodiscard]] double peak_activation_bytes() const { return peak_activations_; }
    /// Bytes of this rank's weights and gradients (fp32).
    [[nodiscard]] double state_bytes() const {
        double b = 0;
        for (const auto& [id, t] : compute_->tensors()) b += double((t.param.size() + t.grad.size()) * sizeof(float));
        return b;
    }

    /// One training step; returns the global batch's mean loss (on every rank).
    double step(int t) {
        compute_->zero_grad();
        const worker_slot& mine = slot();
        const int S = shape_.sequence, L = shape_.layers();
        const double scale = 1.0 / (double(layout_.global_batch) * S);
        const int tp_rank = world_.rank() - mine.first_rank;
        auto tp_reduce = [this](std::span<float> v) {
            if (tp_group_.size() > 1) tp_group_.all_reduce(v);
        };
        std::map<std::pair<int, int>, std::vector<typename W::cache>> caches;  // (segment, microbatch)
        std::map<std::pair<int, int>, std::vector<typename W::activation>> inputs;  // recomputation: the layers' inputs
        const auto row = static_cast<std::size_t>(S * shape_.hidden);
        std::vector<float> h;  // host copy of an activation or its gradient, for the communicator
        double loss = 0, kept = 0;  // kept: bytes of activations held for backward right now
        for (const operation& op : layout_.order) {
            if (op.worker != me_) continue;
            const segment& sg = seg(op.segment);
            const std::pair<int, int> samples = layout_.samples(me_, op.microbatch);
            const int lo = samples.first, hi = samples.second;  // not a structured binding: lambdas capture lo (Clang 14)
            const int m = hi - lo;
            const int nseg = static_cast<int>(layout_.segments[static_cast<std::size_t>(mine.pipeline)].size());
            typename W::activation x;
            if (!op.backward) {
                std::vector<int> tok, tgt;
                if (sg.begin == 0 || sg.end == L) read_batch(t, lo, hi, tok, tgt);
                if (op.segment > 0) {
                    receive(h, m, mine.pipeline, op.segment - 1, lo, hi, tp_rank, tag(op.segment, false));
                    compute_->load(h, x);
                }
                if (recompute_) {
                    // Checkpoints per layer (Chen et al. 2016, §3; Megatron's full
                    // recomputation): keep each layer's input, drop what it would keep for
                    // backward (the embedding's input, the tokens, is read again).
                    auto& held = inputs[{op.segment, op.microbatch}];
                    for (int l = sg.begin; l < sg.end; ++l) {
                        if (l > 0) {
                            held.push_back(compute_->copy(x));
                            kept += double(m) * double(row) * sizeof(float);
                        }
                        std::vector<typename W::cache> once;
                        compute_->forward(l, l + 1, m, tok, tgt, x, once, scale, loss, tp_reduce);
                        peak_activations_ = std::max(peak_activations_, kept + once.front().bytes_kept());
                    }
                } else {
                    auto& cache = caches[{op.segment, op.microbatch}];
                    compute_->forward(sg.begin, sg.end, m, tok, tgt, x, cache, scale, loss, tp_reduce);
                    for (const auto& lc : cache) kept += lc.bytes_kept();
                }
                peak_activations_ = std::max(peak_activations_, kept);
                if (op.segment + 1 < nseg) {
                    compute_->store(x, h);
                    send(h, mine, op.segment + 1, lo, hi, tp_rank, tag(op.segment + 1, false));
                }
            } else {
                if (op.segment + 1 < nseg) {
                    receive(h, m, mine.pipeline, op.segment + 1, lo, hi, tp_rank, tag(op.segment + 1, true));
                    compute_->load(h, x);
                }
                if (recompute_) {
                    // Layer by layer from the last: its forward again from its input, then its backward.
                    auto held = inputs.extract({op.segment, op.microbatch});
                    std::vector<int> tok, tgt;
                    if (sg.begin == 0 || sg.end == L) read_batch(t, lo, hi, tok, tgt);
                    for (int l = sg.end - 1; l >= sg.begin; --l) {
                        typename W::activation in;
                        if (l > 0) {
                            in = std::move(held.mapped().back());
                            held.mapped().pop_back();
                            kept -= double(m) * double(row) * sizeof(float);
                        }
                        std::vector<typename W::cache> once;
                        double again = 0;  // the loss counts once, in the first forward
                        compute_->forward(l, l + 1, m, tok, tgt, in, once, scale, again, tp_reduce);
                        peak_activations_ = std::max(peak_activations_, kept + once.front().bytes_kept());
                        in = {};  // the layer's output again: not needed
                        compute_->backward(l, l + 1, m, x, once, tp_reduce);
                    }
                } else {
                    auto it = caches.find({op.segment, op.microbatch});
                    for (const auto& lc : it->second) kept -= lc.bytes_kept();
                    compute_->backward(sg.begin, sg.end, m, x, it->second, tp_reduce);
                    caches.erase(it);
                }
                if (op.segment > 0) {
                    compute_->store(x, h);
                    send(h, mine, op.segment - 1, lo, hi, tp_rank, tag(op.segment, true));
                }
            }
        }
        if (sync_->groups() == 0 && tp_group_.size() <= 1) {
            compute_->sgd_step(opt_.learning_rate);  // nothing to exchange: the update stays on the device
        } else {
            compute_->pull();  // gradients (and parameters) to host memory for the communicator
            if (sharded_) {
                sync_->sharded_step(*compute_, tp_group_, opt_.learning_rate);
                compute_->push();
            } else {
                sync_->sum(*compute_, tp_group_);
                compute_->push();
                compute_->sgd_step(opt_.learning_rate);
            }
        }
        // The loss: the head's TP rank 0 of each worker holding it counts once.
        std::vector<float> total{tp_rank == 0 ? static_cast<float>(loss) : 0.0f};
        world_.all_reduce(total);
        return total[0];
    }

private:
    gpt_shape shape_;
    synthetic_data data_;
    C world_;
    run_options opt_;
    step_layout layout_;
    bool sharded_ = false;  ///< ZeRO / FSDP: state sharded by the workers' state shares
    bool recompute_ = false;  ///< activation recomputation: layer inputs kept, forward run again in backward
    int me_ = -1;
    double peak_activations_ = 0;
    std::optional<W> compute_;
    C tp_group_;
    std::optional<gradient_sync<C>> sync_;

    [[nodiscard]] const worker_slot& slot() const { return layout_.workers[static_cast<std::size_t>(me_)]; }
    [[nodiscard]] const segment& seg(int k) const { return layout_.segments[static_cast<std::size_t>(slot().pipeline)][static_cast<std::size_t>(k)]; }
    /// The rank of worker w that exchanges with my TP rank j.
    [[nodiscard]] int peer_rank(int w, int j) const {
        const worker_slot& o = layout_.workers[static_cast<std::size_t>(w)];
        return o.first_rank + j % o.tp;
    }
    /// Receives the rows of samples [lo, hi) from the workers of segment `from` that hold them.
    void receive(std::vector<float>& h, int m, int pipeline, int from, int lo, int hi, int tp_rank, int t) {
        const auto row = static_cast<std::size_t>(shape_.sequence * shape_.hidden);
        h.assign(static_cast<std::size_t>(m) * row, 0.0f);
        layout_.overlapping(pipeline, from, lo, hi, [&](int w2, int, int a, int b) {
            world_.recv(std::span<float>(h).subspan(static_cast<std::size_t>(a - lo) * row, static_cast<std::size_t>(b - a) * row), peer_rank(w2, tp_rank), t);
        });
    }
    /// Sends the rows of samples [lo, hi) to the workers of segment `to` that take them: each of
    /// their TP ranks r from my TP rank r mod my TP degree.
    void send(const std::vector<float>& h, const worker_slot& mine, int to, int lo, int hi, int tp_rank, int t) {
        const auto row = static_cast<std::size_t>(shape_.sequence * shape_.hidden);
        layout_.overlapping(mine.pipeline, to, lo, hi, [&](int w2, int, int a, int b) {
            for (int r = 0; r < layout_.workers[static_cast<std::size_t>(w2)].tp; ++r)
                if (r % mine.tp == tp_rank)
                    world_.send(std::span<const float>(h).subspan(static_cast<std::size_t>(a - lo) * row, static_cast<std::size_t>(b - a) * row),
                                layout_.workers[static_cast<std::size_t>(w2)].first_rank + r, t);
        });
    }
    /// One tag per segment boundary and direction: each (sender, receiver, tag) carries its
    /// messages in sample order on both sides.
    [[nodiscard]] static int tag(int boundary, bool backward) { return 2 * boundary + (backward ? 1 : 0); }

    void read_batch(int t, int lo, int hi, std::vector<int>& tok, std::vector<int>& tgt) const {
        const auto S = static_cast<std::size_t>(shape_.sequence);
        tok.assign(static_cast<std::size_t>(hi - lo) * S, 0);
        tgt.assign(tok.size(), 0);
        for (int i = lo; i < hi; ++i)
            data_.tokens(t, i, std::span<int>(tok).subspan(static_cast<std::size_t>(i - lo) * S, S), std::span<int>(tgt).subspan(static_cast<std::size_t>(i - lo) * S, S));
    }
};

/// The single-process reference: the whole model at TP 1, the whole global batch at once, on
/// any compute.
template <concepts::compute W = gpt_worker>
class reference_trainer {
public:
    reference_trainer(gpt_shape shape, synthetic_data data, run_options opt = {}) : shape_(shape), data_(data), opt_(opt), w_(shape, shape.all_layers(), 1, 0, opt.seed) {}
    [[nodiscard]] W& compute() { return w_; }
    double step(int t, int global_batch) {
        const auto S = static_cast<std::size_t>(shape_.sequence);
        std::vector<int> tok(static_cast<std::size_t>(global_batch) * S), tgt(tok.size());
        for (int i = 0; i < global_batch; ++i)
            data_.tokens(t, i, std::span<int>(tok).subspan(static_cast<std::size_t>(i) * S, S), std::span<int>(tgt).subspan(static_cast<std::size_t>(i) * S, S));
        w_.zero_grad();
        typename W::activation x;
        std::vector<typename W::cache> cache;
        double loss = 0;
        auto none = [](std::span<float>) {};
        w_.forward(0, shape_.layers(), global_batch, tok, tgt, x, cache, 1.0 / (double(global_batch) * double(S)), loss, none);
        w_.backward(0, shape_.layers(), global_batch, x, cache, none);
        w_.sgd_step(opt_.learning_rate);
        return loss;
    }

private:
    gpt_shape shape_;
    synthetic_data data_;
    run_options opt_;
    W w_;
};

}  // namespace hetplan::exec
