#pragma once
// CPU compute of a GPT-style decoder (fp32): token and position embedding, pre-LN decoder blocks
// (causal multi-head attention, MLP with GeLU), final layer norm and an LM head tied to the token
// embedding, softmax cross-entropy loss; forward, backward and SGD, with Megatron's tensor
// parallelism inside a block (Shoeybi et al. 2019, §3: QKV and the first MLP matrix split by
// columns, the output projections by rows, one all-reduce after each in forward and backward).
// Layers follow hetplan's transformer model (workload/model.hpp): 0 the embedding, 1..N the
// blocks, N + 1 the head, so a plan's layer ranges select them directly.
//
// Parameters are logical tensors in fixed units: a block's TP-split matrices are stored unit by
// unit, one unit per attention head (its Q, K, V columns, its rows of the output projection, and
// an equal share of the MLP's columns/rows), so a worker at TP degree t, position j, holds units
// [j A / t, (j + 1) A / t) as one contiguous range. Replicas of any TP degree can then sum their
// gradients unit range by unit range (exec/gradient_sync.hpp). Initial values are a function of
// (seed, tensor, element), the same however the tensors are split.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "hetplan/exec/comm_error.hpp"

namespace hetplan::exec {

struct gpt_shape {
    int vocab = 64;
    int hidden = 32;
    int heads = 4;
    int blocks = 2;
    int sequence = 8;

    [[nodiscard]] int layers() const { return blocks + 2; }
    /// 0 .. layers() - 1: every layer, for a worker holding the whole model.
    [[nodiscard]] std::vector<int> all_layers() const {
        std::vector<int> v(static_cast<std::size_t>(layers()));
        for (int l = 0; l < layers(); ++l) v[static_cast<std::size_t>(l)] = l;
        return v;
    }
    [[nodiscard]] int head_dim() const { return hidden / heads; }
    [[nodiscard]] int ffn() const { return 4 * hidden; }
    [[nodiscard]] int ffn_per_unit() const { return ffn() / heads; }
    void check() const {
        if (vocab < 2 || hidden < 1 || heads < 1 || blocks < 0 || sequence < 1 || hidden % heads != 0)
            throw comm_error("gpt_shape: needs vocab >= 2, hidden >= 1, heads >= 1 dividing hidden, blocks >= 0, sequence >= 1");
    }
};

/// One logical parameter tensor: `units` equal units of `unit_size` floats (units == 1 and
/// split == false for tensors every TP rank holds whole).
struct tensor_info {
    int id = 0;
    std::string name;
    std::size_t unit_size = 0;
    int units = 1;
    bool split = false;     ///< split over TP ranks by units
    std::vector<int> layers;  ///< layers that use it (the token embedding: the first and the last)
};

/// Every logical tensor of a shape, in a fixed order (the order gradients are synchronised in).
inline std::vector<tensor_info> gpt_tensors(const gpt_shape& s) {
    const auto H = static_cast<std::size_t>(s.hidden), d = static_cast<std::size_t>(s.head_dim()), f = static_cast<std::size_t>(s.ffn_per_unit());
    std::vector<tensor_info> t;
    t.push_back({0, "wte", static_cast<std::size_t>(s.vocab) * H, 1, false, {0, s.layers() - 1}});
    t.push_back({1, "wpe", static_cast<std::size_t>(s.sequence) * H, 1, false, {0}});
    for (int b = 0; b < s.blocks; ++b) {
        const int id = static_cast<int>(t.size());
        t.push_back({id, "block" + std::to_string(b) + ".replicated", 6 * H, 1, false, {b + 1}});
        t.push_back({id + 1, "block" + std::to_string(b) + ".units", 3 * H * d + 3 * d + d * H + H * f + f + f * H, s.heads, true, {b + 1}});
    }
    t.push_back({static_cast<int>(t.size()), "lnf", 2 * H, 1, false, {s.layers() - 1}});
    return t;
}

namespace kernels {

/// C[M,N] += A[M,K] B[K,N] (row-major, leading dimensions given).
inline void gemm_nn(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) {
            const float a = A[i * lda + k];
            for (int j = 0; j < N; ++j) C[i * ldc + j] += a * B[k * ldb + j];
        }
}
/// C[M,N] += A[K,M]^T B[K,N].
inline void gemm_tn(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
    for (int k = 0; k < K; ++k)
        for (int i = 0; i < M; ++i) {
            const float a = A[k * lda + i];
            for (int j = 0; j < N; ++j) C[i * ldc + j] += a * B[k * ldb + j];
        }
}
/// C[M,N] += A[M,K] B[N,K]^T.
inline void gemm_nt(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float acc = 0;
            for (int k = 0; k < K; ++k) acc += A[i * lda + k] * B[j * ldb + k];
            C[i * ldc + j] += acc;
        }
}

inline void layer_norm(int T, int H, const float* x, const float* g, const float* b, float* y, float* mean, float* rstd) {
    for (int t = 0; t < T; ++t) {
        const float* xt = x + t * H;
        float mu = 0;
        for (int i = 0; i < H; ++i) mu += xt[i];
        mu /= float(H);
        float var = 0;
        for (int i = 0; i < H; ++i) var += (xt[i] - mu) * (xt[i] - mu);
        const float r = 1.0f / std::sqrt(var / float(H) + 1e-5f);
        mean[t] = mu, rstd[t] = r;
        for (int i = 0; i < H; ++i) y[t * H + i] = (xt[i] - mu) * r * g[i] + b[i];
    }
}
/// dx += LN backward; dg, db accumulate.
inline void layer_norm_backward(int T, int H, const float* x, const float* g, const float* mean, const float* rstd, const float* dy, float* dx, float* dg,
                                float* db) {
    for (int t = 0; t < T; ++t) {
        const float* xt = x + t * H;
        const float* dyt = dy + t * H;
        float m1 = 0, m2 = 0;
        for (int i = 0; i < H; ++i) {
            const float xhat = (xt[i] - mean[t]) * rstd[t];
            const float dxhat = dyt[i] * g[i];
            dg[i] += dyt[i] * xhat;
            db[i] += dyt[i];
            m1 += dxhat, m2 += dxhat * xhat;
        }
        m1 /= float(H), m2 /= float(H);
        for (int i = 0; i < H; ++i) {
            const float xhat = (xt[i] - mean[t]) * rstd[t];
            dx[t * H + i] += rstd[t] * (dyt[i] * g[i] - m1 - xhat * m2);
        }
    }
}

inline float gelu(float x) {
    const float c = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * x * (1.0f + std::tanh(c * (x + 0.044715f * x * x * x)));
}
inline float gelu_grad(float x) {
    const float c = 0.7978845608028654f;
    const float u = c * (x + 0.044715f * x * x * x);
    const float th = std::tanh(u);
    return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * c * (1.0f + 3.0f * 0.044715f * x * x);
}

/// splitmix64: initial values as a function of (seed, tensor, element).
inline float init_value(std::uint64_t seed, int tensor, std::uint64_t element) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(tensor) * 0xBF58476D1CE4E5B9ull + element * 0x94D049BB133111EBull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<float>(static_cast<double>(z >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

}  // namespace kernels

/// Where one unit's pieces start inside a block's unit tensor (floats), and its size: Q, K, V
/// columns, their biases, its rows of the output projection, its MLP columns, biases and rows.
struct unit_view {
    std::size_t wqkv, bqkv, wo, w1, b1, w2, size;
    [[nodiscard]] static unit_view of(const gpt_shape& s) {
        const auto H = static_cast<std::size_t>(s.hidden), d = static_cast<std::size_t>(s.head_dim()), f = static_cast<std::size_t>(s.ffn_per_unit());
        unit_view u{};
        u.wqkv = 0;
        u.bqkv = u.wqkv + H * 3 * d;
        u.wo = u.bqkv + 3 * d;
        u.w1 = u.wo + d * H;
        u.b1 = u.w1 + H * f;
        u.w2 = u.b1 + f;
        u.size = u.w2 + f * H;
        return u;
    }
};

/// A tensor as one worker holds it: units [first_unit, first_unit + num_units).
struct local_tensor {
    tensor_info info;
    int first_unit = 0;
    int num_units = 1;
    std::vector<float> param, grad;
};

/// What a layer keeps from forward for backward, for one microbatch.
struct layer_cache {
    std::vector<float> x, a, mean1, rstd1, qkv, probs, o, x1, c, mean2, rstd2, h, g;
    std::vector<int> tokens, targets;
    float scale = 0;  ///< the head's loss scale

    /// Bytes kept for backward (what a memory model calls this layer's activations).
    [[nodiscard]] double bytes_kept() const {
        std::size_t floats = 0;
        for (const auto* v : {&x, &a, &mean1, &rstd1, &qkv, &probs, &o, &x1, &c, &mean2, &rstd2, &h, &g}) floats += v->size();
        return double(floats * sizeof(float) + (tokens.size() + targets.size()) * sizeof(int));
    }
};

/// One TP rank's share of a GPT model over the layers it holds: the CPU model of
/// concepts::compute (activations and parameters in host memory, so pull/push/synchronize are
/// no-ops).
class gpt_worker {
public:
    using activation = std::vector<float>;
    using cache = layer_cache;

    /// `layers`: the model layers this worker holds; `tp` and `tp_rank`: its TP group.
    gpt_worker(gpt_shape s, std::vector<int> layers, int tp, int tp_rank, std::uint64_t seed)
        : s_(s), layers_(std::move(layers)), tp_(tp), tp_rank_(tp_rank), seed_(seed) {
        s_.check();
        if (tp < 1 || s_.heads % tp != 0 || tp_rank < 0 || tp_rank >= tp)
            throw comm_error("gpt_worker: TP degree " + std::to_string(tp) + " must divide the " + std::to_string(s_.heads) + " heads (rank " + std::to_string(tp_rank) + ")");
        infos_ = gpt_tensors(s_);
        for (const tensor_info& ti : infos_) {
            bool used = false;
            for (int l : ti.layers) used = used || holds(l);
            if (!used) continue;
            local_tensor lt;
            lt.info = ti;
            lt.num_units = ti.split ? ti.units / tp_ : 1;
            lt.first_unit = ti.split ? tp_rank_ * lt.num_units : 0;
            const std::size_t n = ti.unit_size * static_cast<std::size_t>(lt.num_units);
            lt.param.resize(n);
            lt.grad.assign(n, 0.0f);
            initialise(lt);
            tensors_.emplace(ti.id, std::move(lt));
        }
    }

    [[nodiscard]] const gpt_shape& shape() const { return s_; }
    [[nodiscard]] bool holds(int layer) const {
        for (int l : layers_)
            if (l == layer) return true;
        return false;
    }
    [[nodiscard]] int tp() const { return tp_; }
    [[nodiscard]] int tp_rank() const { return tp_rank_; }
    [[nodiscard]] std::map<int, local_tensor>& tensors() { return tensors_; }
    [[nodiscard]] const std::map<int, local_tensor>& tensors() const { return tensors_; }
    [[nodiscard]] const std::vector<tensor_info>& infos() const { return infos_; }

    void zero_grad() {
        for (auto& [id, t] : tensors_) std::fill(t.grad.begin(), t.grad.end(), 0.0f);
    }
    void sgd_step(float lr) {
        for (auto& [id, t] : tensors_)
            for (std::size_t i = 0; i < t.param.size(); ++i) t.param[i] -= lr * t.grad[i];
    }
    /// SGD on the tensors whose first user is `layer` (the shared token embedding: layer 0's),
    /// so the profiler can time each layer's update.
    void sgd_step_layer(int layer, float lr) {
        for (auto& [id, t] : tensors_)
            if (t.info.layers.front() == layer)
                for (std::size_t i = 0; i < t.param.size(); ++i) t.param[i] -= lr * t.grad[i];
    }
    void load(std::span<const float> in, activation& x) const { x.assign(in.begin(), in.end()); }
    void store(const activation& x, std::vector<float>& out) const { out = x; }
    [[nodiscard]] activation copy(const activation& x) const { return x; }
    void pull() const {}
    void push() const {}
    void synchronize() const {}

    /// Forward over layers [l0, l1) (all held) for m samples. Layer 0 reads `tokens` (m x S);
    /// the head reads `targets` and adds loss x `loss_scale` to `loss`. `x` holds the input
    /// activation (m S x H) and receives the output. `tp_reduce(span<float>)` sums over the
    /// TP group.
    template <class Reduce>
    void forward(int l0, int l1, int m, std::span<const int> tokens, std::span<const int> targets, std::vector<float>& x, std::vector<layer_cache>& caches,
                 double loss_scale, double& loss, Reduce&& tp_reduce) {
        // The kernels index in int: the largest buffer (logits, attention scores, the MLP's)
        // must stay below 2^31 elements.
        const double T = double(m) * s_.sequence;
        if (std::max({T * s_.vocab, double(s_.heads) * m * s_.sequence * s_.sequence, T * s_.ffn()}) >= 2147483648.0)
            throw comm_error("gpt_worker: " + std::to_string(m) + " samples of " + std::to_string(s_.sequence) +
                             " tokens make a buffer of 2^31 elements or more; the CPU compute is for small models");
        caches.resize(static_cast<std::size_t>(l1 - l0));
        for (int l = l0; l < l1; ++l) {
            layer_cache& c = caches[static_cast<std::size_t>(l - l0)];
            if (l == 0) embed_forward(m, tokens, x, c);
            else if (l == s_.layers() - 1) loss += head_forward(m, targets, x, c, loss_scale);
            else block_forward(l - 1, m, x, c, tp_reduce);
        }
    }
    /// Backward over [l0, l1): `dx` holds the gradient of the output (ignored when l1 is past
    /// the head) and receives the gradient of the input (empty when l0 == 0).
    template <class Reduce>
    void backward(int l0, int l1, int m, std::vector<float>& dx, std::vector<layer_cache>& caches, Reduce&& tp_reduce) {
        for (int l = l1 - 1; l >= l0; --l) {
            layer_cache& c = caches[static_cast<std::size_t>(l - l0)];
            if (l == 0) embed_backward(m, dx, c);
            else if (l == s_.layers() - 1) head_backward(m, dx, c);
            else block_backward(l - 1, m, dx, c, tp_reduce);
            c = layer_cache{};
        }
    }

private:
    gpt_shape s_;
    std::vector<int> layers_;
    int tp_, tp_rank_;
    std::uint64_t seed_;
    std::vector<tensor_info> infos_;
    std::map<int, local_tensor> tensors_;

    [[nodiscard]] int block_tensor(int b) const { return 2 + 2 * b; }
    [[nodiscard]] int lnf_tensor() const { return 2 + 2 * s_.blocks; }
    local_tensor& t(int id) { return tensors_.at(id); }

    void initialise(local_tensor& lt) const {
        const tensor_info& ti = lt.info;
        const std::size_t H = static_cast<std::size_t>(s_.hidden);
        for (std::size_t i = 0; i < lt.param.size(); ++i) {
            const std::size_t global = static_cast<std::size_t>(lt.first_unit) * ti.unit_size + i;
            float v = 0.02f * kernels::init_value(seed_, ti.id, global);
            if (ti.name.ends_with(".replicated")) {
                // ln1_g, ln1_b, bo, ln2_g, ln2_b, b2: gains 1, biases small
                const std::size_t part = i / H;
                v = (part == 0 || part == 3) ? 1.0f + v : v;
            } else if (ti.name == "lnf") {
                v = i < H ? 1.0f + v : v;
            }
            lt.param[i] = v;
        }
    }

    // ---- embedding -------------------------------------------------------------------
    void embed_forward(int m, std::span<const int> tokens, std::vector<float>& x, layer_cache& c) {
        const int S = s_.sequence, H = s_.hidden, T = m * S;
        if (tokens.size() != static_cast<std::size_t>(T)) throw comm_error("gpt_worker: the embedding needs m x sequence tokens");
        const local_tensor& wte = t(0);
        const local_tensor& wpe = t(1);
        x.assign(static_cast<std::size_t>(T * H), 0.0f);
        for (int i = 0; i < T; ++i) {
            const int tok = tokens[static_cast<std::size_t>(i)];
            if (tok < 0 || tok >= s_.vocab) throw comm_error("gpt_worker: token " + std::to_string(tok) + " outside the vocabulary");
            for (int h = 0; h < H; ++h)
                x[static_cast<std::size_t>(i * H + h)] = wte.param[static_cast<std::size_t>(tok * H + h)] + wpe.param[static_cast<std::size_t>((i % S) * H + h)];
        }
        c.tokens.assign(tokens.begin(), tokens.end());
    }
    void embed_backward(int m, std::vector<float>& dx, layer_cache& c) {
        const int S = s_.sequence, H = s_.hidden, T = m * S;
        local_tensor& wte = t(0);
        local_tensor& wpe = t(1);
        for (int i = 0; i < T; ++i) {
            const int tok = c.tokens[static_cast<std::size_t>(i)];
            for (int h = 0; h < H; ++h) {
                const float g = dx[static_cast<std::size_t>(i * H + h)];
                wte.grad[static_cast<std::size_t>(tok * H + h)] += g;
                wpe.grad[static_cast<std::size_t>((i % S) * H + h)] += g;
            }
        }
        dx.clear();
    }

    // ---- head: final layer norm, logits against the tied embedding, cross-entropy --------
    double head_forward(int m, std::span<const int> targets, std::vector<float>& x, layer_cache& c, double scale) {
        const int H = s_.hidden, V = s_.vocab, T = m * s_.sequence;
        if (targets.size() != static_cast<std::size_t>(T)) throw comm_error("gpt_worker: the head needs m x sequence targets");
        const local_tensor& lnf = t(lnf_tensor());
        const local_tensor& wte = t(0);
        c.x = std::move(x);
        c.a.resize(static_cast<std::size_t>(T * H));
        c.mean1.resize(static_cast<std::size_t>(T));
        c.rstd1.resize(static_cast<std::size_t>(T));
        kernels::layer_norm(T, H, c.x.data(), lnf.param.data(), lnf.param.data() + H, c.a.data(), c.mean1.data(), c.rstd1.data());
        c.probs.assign(static_cast<std::size_t>(T * V), 0.0f);
        kernels::gemm_nt(T, V, H, c.a.data(), H, wte.param.data(), H, c.probs.data(), V);
        double loss = 0;
        for (int i = 0; i < T; ++i) {
            float* row = c.probs.data() + static_cast<std::ptrdiff_t>(i) * V;
            float mx = row[0];
            for (int v = 1; v < V; ++v) mx = std::max(mx, row[v]);
            double z = 0;
            for (int v = 0; v < V; ++v) z += std::exp(double(row[v] - mx));
            const int tgt = targets[static_cast<std::size_t>(i)];
            if (tgt < 0 || tgt >= V) throw comm_error("gpt_worker: target " + std::to_string(tgt) + " outside the vocabulary");
            loss += std::log(z) - double(row[tgt] - mx);
            for (int v = 0; v < V; ++v) row[v] = static_cast<float>(std::exp(double(row[v] - mx)) / z);
        }
        c.targets.assign(targets.begin(), targets.end());
        c.scale = static_cast<float>(scale);
        x.clear();
        return loss * scale;
    }
    void head_backward(int m, std::vector<float>& dx, layer_cache& c) {
        const int H = s_.hidden, V = s_.vocab, T = m * s_.sequence;
        local_tensor& lnf = t(lnf_tensor());
        local_tensor& wte = t(0);
        const float scale = c.scale;
        std::vector<float>& dlogits = c.probs;  // softmax - onehot, scaled, in place
        for (int i = 0; i < T; ++i) {
            float* row = dlogits.data() + static_cast<std::ptrdiff_t>(i) * V;
            row[c.targets[static_cast<std::size_t>(i)]] -= 1.0f;
            for (int v = 0; v < V; ++v) row[v] *= scale;
        }
        kernels::gemm_tn(V, H, T, dlogits.data(), V, c.a.data(), H, wte.grad.data(), H);
        std::vector<float> dy(static_cast<std::size_t>(T * H), 0.0f);
        kernels::gemm_nn(T, H, V, dlogits.data(), V, wte.param.data(), H, dy.data(), H);
        dx.assign(static_cast<std::size_t>(T * H), 0.0f);
        kernels::layer_norm_backward(T, H, c.x.data(), lnf.param.data(), c.mean1.data(), c.rstd1.data(), dy.data(), dx.data(), lnf.grad.data(),
                                     lnf.grad.data() + H);
    }

    // ---- decoder block --------------------------------------------------------------------
    [[nodiscard]] unit_view view() const { return unit_view::of(s_); }

    template <class Reduce>
    void block_forward(int b, int m, std::vector<float>& x, layer_cache& c, Reduce&& tp_reduce) {
        const int S = s_.sequence, H = s_.hidden, d = s_.head_dim(), f = s_.ffn_per_unit(), T = m * S;
        const local_tensor& rep = t(block_tensor(b));
        const local_tensor& un = t(block_tensor(b) + 1);
        const float* ln1g = rep.param.data();
        const float* ln1b = ln1g + H;
        const float* bo = ln1g + 2 * H;
        const float* ln2g = ln1g + 3 * H;
        const float* ln2b = ln1g + 4 * H;
        const float* b2 = ln1g + 5 * H;
        const unit_view uv = view();
        const int U = un.num_units;
        const auto TH = static_cast<std::size_t>(T * H);
        c.x = std::move(x);
        c.a.resize(TH), c.mean1.resize(static_cast<std::size_t>(T)), c.rstd1.resize(static_cast<std::size_t>(T));
        kernels::layer_norm(T, H, c.x.data(), ln1g, ln1b, c.a.data(), c.mean1.data(), c.rstd1.data());
        c.qkv.assign(static_cast<std::size_t>(U * T * 3 * d), 0.0f);
        c.probs.assign(static_cast<std::size_t>(U * m * S * S), 0.0f);
        c.o.assign(static_cast<std::size_t>(U * T * d), 0.0f);
        std::vector<float> partial(TH, 0.0f);
        const float inv = 1.0f / std::sqrt(float(d));
        for (int u = 0; u < U; ++u) {
            const float* W = un.param.data() + static_cast<std::size_t>(u) * uv.size;
            float* qkv = c.qkv.data() + static_cast<std::ptrdiff_t>(u) * T * 3 * d;
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < 3 * d; ++j) qkv[i * 3 * d + j] = W[uv.bqkv + static_cast<std::size_t>(j)];
            kernels::gemm_nn(T, 3 * d, H, c.a.data(), H, W + uv.wqkv, 3 * d, qkv, 3 * d);
            float* P = c.probs.data() + static_cast<std::ptrdiff_t>(u) * m * S * S;
            float* o = c.o.data() + static_cast<std::ptrdiff_t>(u) * T * d;
            for (int smp = 0; smp < m; ++smp)
                for (int i = 0; i < S; ++i) {
                    const float* q = qkv + (smp * S + i) * 3 * d;
                    float* p = P + (smp * S + i) * S;
                    float mx = -INFINITY;
                    for (int k = 0; k <= i; ++k) {
                        const float* kk = qkv + (smp * S + k) * 3 * d + d;
                        float dot = 0;
                        for (int e = 0; e < d; ++e) dot += q[e] * kk[e];
                        p[k] = dot * inv;
                        mx = std::max(mx, p[k]);
                    }
                    float z = 0;
                    for (int k = 0; k <= i; ++k) z += (p[k] = std::exp(p[k] - mx));
                    for (int k = 0; k <= i; ++k) p[k] /= z;
                    float* oi = o + (smp * S + i) * d;
                    for (int k = 0; k <= i; ++k) {
                        const float* v = qkv + (smp * S + k) * 3 * d + 2 * d;
                        for (int e = 0; e < d; ++e) oi[e] += p[k] * v[e];
                    }
                }
            kernels::gemm_nn(T, H, d, o, d, W + uv.wo, H, partial.data(), H);
        }
        tp_reduce(std::span<float>(partial));
        c.x1.resize(TH);
        for (std::size_t i = 0; i < TH; ++i) c.x1[i] = c.x[i] + partial[i] + bo[i % static_cast<std::size_t>(H)];
        c.c.resize(TH), c.mean2.resize(static_cast<std::size_t>(T)), c.rstd2.resize(static_cast<std::size_t>(T));
        kernels::layer_norm(T, H, c.x1.data(), ln2g, ln2b, c.c.data(), c.mean2.data(), c.rstd2.data());
        c.h.assign(static_cast<std::size_t>(U * T * f), 0.0f);
        c.g.resize(c.h.size());
        std::fill(partial.begin(), partial.end(), 0.0f);
        for (int u = 0; u < U; ++u) {
            const float* W = un.param.data() + static_cast<std::size_t>(u) * uv.size;
            float* h = c.h.data() + static_cast<std::ptrdiff_t>(u) * T * f;
            float* g = c.g.data() + static_cast<std::ptrdiff_t>(u) * T * f;
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < f; ++j) h[i * f + j] = W[uv.b1 + static_cast<std::size_t>(j)];
            kernels::gemm_nn(T, f, H, c.c.data(), H, W + uv.w1, f, h, f);
            for (int i = 0; i < T * f; ++i) g[i] = kernels::gelu(h[i]);
            kernels::gemm_nn(T, H, f, g, f, W + uv.w2, H, partial.data(), H);
        }
        tp_reduce(std::span<float>(partial));
        x.resize(TH);
        for (std::size_t i = 0; i < TH; ++i) x[i] = c.x1[i] + partial[i] + b2[i % static_cast<std::size_t>(H)];
    }

    template <class Reduce>
    void block_backward(int b, int m, std::vector<float>& dx, layer_cache& c, Reduce&& tp_reduce) {
        const int S = s_.sequence, H = s_.hidden, d = s_.head_dim(), f = s_.ffn_per_unit(), T = m * S;
        local_tensor& rep = t(block_tensor(b));
        local_tensor& un = t(block_tensor(b) + 1);
        const float* ln1g = rep.param.data();
        const float* ln2g = ln1g + 3 * H;
        float* dln1g = rep.grad.data();
        float* dln1b = dln1g + H;
        float* dbo = dln1g + 2 * H;
        float* dln2g = dln1g + 3 * H;
        float* dln2b = dln1g + 4 * H;
        float* db2 = dln1g + 5 * H;
        const unit_view uv = view();
        const int U = un.num_units;
        const auto TH = static_cast<std::size_t>(T * H);
        const std::vector<float> dx2 = dx;  // gradient of the block's output
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < H; ++j) db2[j] += dx2[static_cast<std::size_t>(i * H + j)];
        std::vector<float> dpartial(TH, 0.0f), dgv(static_cast<std::size_t>(T * f));
        for (int u = 0; u < U; ++u) {
            const float* W = un.param.data() + static_cast<std::size_t>(u) * uv.size;
            float* G = un.grad.data() + static_cast<std::size_t>(u) * uv.size;
            const float* h = c.h.data() + static_cast<std::ptrdiff_t>(u) * T * f;
            const float* g = c.g.data() + static_cast<std::ptrdiff_t>(u) * T * f;
            kernels::gemm_tn(f, H, T, g, f, dx2.data(), H, G + uv.w2, H);
            std::fill(dgv.begin(), dgv.end(), 0.0f);
            kernels::gemm_nt(T, f, H, dx2.data(), H, W + uv.w2, H, dgv.data(), f);
            for (int i = 0; i < T * f; ++i) dgv[static_cast<std::size_t>(i)] *= kernels::gelu_grad(h[i]);
            kernels::gemm_tn(H, f, T, c.c.data(), H, dgv.data(), f, G + uv.w1, f);
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < f; ++j) G[uv.b1 + static_cast<std::size_t>(j)] += dgv[static_cast<std::size_t>(i * f + j)];
            kernels::gemm_nt(T, H, f, dgv.data(), f, W + uv.w1, f, dpartial.data(), H);
        }
        tp_reduce(std::span<float>(dpartial));
        std::vector<float> dx1 = dx2;
        kernels::layer_norm_backward(T, H, c.x1.data(), ln2g, c.mean2.data(), c.rstd2.data(), dpartial.data(), dx1.data(), dln2g, dln2b);
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < H; ++j) dbo[j] += dx1[static_cast<std::size_t>(i * H + j)];
        std::fill(dpartial.begin(), dpartial.end(), 0.0f);
        const float inv = 1.0f / std::sqrt(float(d));
        std::vector<float> dov(static_cast<std::size_t>(T * d)), dqkv(static_cast<std::size_t>(T * 3 * d)), dp(static_cast<std::size_t>(S));
        for (int u = 0; u < U; ++u) {
            const float* W = un.param.data() + static_cast<std::size_t>(u) * uv.size;
            float* G = un.grad.data() + static_cast<std::size_t>(u) * uv.size;
            const float* qkv = c.qkv.data() + static_cast<std::ptrdiff_t>(u) * T * 3 * d;
            const float* P = c.probs.data() + static_cast<std::ptrdiff_t>(u) * m * S * S;
            const float* o = c.o.data() + static_cast<std::ptrdiff_t>(u) * T * d;
            kernels::gemm_tn(d, H, T, o, d, dx1.data(), H, G + uv.wo, H);
            std::fill(dov.begin(), dov.end(), 0.0f);
            kernels::gemm_nt(T, d, H, dx1.data(), H, W + uv.wo, H, dov.data(), d);
            std::fill(dqkv.begin(), dqkv.end(), 0.0f);
            for (int smp = 0; smp < m; ++smp)
                for (int i = 0; i < S; ++i) {
                    const float* p = P + (smp * S + i) * S;
                    const float* doi = dov.data() + (smp * S + i) * d;
                    float dot_pdp = 0;
                    for (int k = 0; k <= i; ++k) {
                        const float* v = qkv + (smp * S + k) * 3 * d + 2 * d;
                        float acc = 0;
                        for (int e = 0; e < d; ++e) acc += doi[e] * v[e];
                        dp[static_cast<std::size_t>(k)] = acc;
                        dot_pdp += p[k] * acc;
                        float* dv = dqkv.data() + (smp * S + k) * 3 * d + 2 * d;
                        for (int e = 0; e < d; ++e) dv[e] += p[k] * doi[e];
                    }
                    const float* q = qkv + (smp * S + i) * 3 * d;
                    float* dq = dqkv.data() + (smp * S + i) * 3 * d;
                    for (int k = 0; k <= i; ++k) {
                        const float ds = p[k] * (dp[static_cast<std::size_t>(k)] - dot_pdp) * inv;
                        const float* kk = qkv + (smp * S + k) * 3 * d + d;
                        float* dk = dqkv.data() + (smp * S + k) * 3 * d + d;
                        for (int e = 0; e < d; ++e) dq[e] += ds * kk[e], dk[e] += ds * q[e];
                    }
                }
            kernels::gemm_tn(H, 3 * d, T, c.a.data(), H, dqkv.data(), 3 * d, G + uv.wqkv, 3 * d);
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < 3 * d; ++j) G[uv.bqkv + static_cast<std::size_t>(j)] += dqkv[static_cast<std::size_t>(i * 3 * d + j)];
            kernels::gemm_nt(T, H, 3 * d, dqkv.data(), 3 * d, W + uv.wqkv, 3 * d, dpartial.data(), H);
        }
        tp_reduce(std::span<float>(dpartial));
        dx = dx1;
        kernels::layer_norm_backward(T, H, c.x.data(), ln1g, c.mean1.data(), c.rstd1.data(), dpartial.data(), dx.data(), dln1g, dln1b);
    }
};

}  // namespace hetplan::exec
