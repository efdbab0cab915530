#pragma once
// CUDA compute of the GPT decoder of exec/cpu_gpt.hpp, a model of concepts::compute: the same
// layers, parameter layout, initial values and Megatron TP split (Shoeybi et al. 2019, §3), on
// one GPU. Parameters, gradients, activations and the caches kept for backward live on the
// device; the host copies (`tensors()`) are made current by `pull()` and written back by `push()`
// around the gradient exchange, which goes through any communicator.
//
// GEMMs: cuBLAS (the default) or this header's own tiled kernel (`gemm_engine::own`, for machines
// without cuBLAS; define HETPLAN_NO_CUBLAS to build without it). Math: fp32, or bf16 tensor cores
// with fp32 accumulation (`cuda_math::bf16`, cuBLAS's CUBLAS_COMPUTE_32F_FAST_16BF); storage stays
// fp32 either way. A block's per-head GEMMs run as one strided batch over the heads it holds
// (its parameters are stored head by head, exec/cpu_gpt.hpp), attention as one batch over
// (head, sample). Every reduction has a fixed order (no atomics), so a run is repeatable bit for
// bit on one GPU model; the embedding's gradient is summed per token in position order.
// Device memory comes from a caching pool, as PyTorch's allocator does (cudaFree waits for the
// device), that counts the bytes in use and their peak: the measured side of the memory model.
#if !defined(__CUDACC__)
#error "hetplan/exec/cuda_gpt.hpp holds CUDA kernels: include it from a .cu file compiled by nvcc (CMake: HETPLAN_WITH_CUDA)"
#endif
#if !defined(HETPLAN_NO_CUBLAS)
#include <cublas_v2.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/exec/comm_error.hpp"
#include "hetplan/exec/cpu_gpt.hpp"
#include "hetplan/exec/cuda_runtime.hpp"

namespace hetplan::exec {

enum class cuda_math { fp32, bf16 };
enum class gemm_engine { cublas, own };

/// A caching pool of device memory: freed blocks are kept by size and reused; counts bytes in use.
class device_pool {
public:
    device_pool() = default;
    device_pool(const device_pool&) = delete;
    device_pool& operator=(const device_pool&) = delete;
    ~device_pool() { release_cached(); }
    /// Frees every cached block (the blocks in use stay).
    void release_cached() {
        for (auto& [bytes, blocks] : free_) {
            for (void* p : blocks) (void)cudaFree(p);
            reserved_ -= bytes * blocks.size();
            blocks.clear();
        }
    }
    void* acquire(std::size_t bytes) {
        bytes = std::max<std::size_t>(bytes, 256);
        void* p = nullptr;
        if (auto& blocks = free_[bytes]; !blocks.empty()) {
            p = blocks.back();
            blocks.pop_back();
        } else if (cudaMalloc(&p, bytes) != cudaSuccess) {
            // Cached blocks of other sizes may hold the memory: return them all, try once more.
            (void)cudaGetLastError();
            cuda_check(cudaDeviceSynchronize(), "waiting for the device before freeing cached blocks");
            release_cached();
            cuda_check(cudaMalloc(&p, bytes), "cudaMalloc (device memory exhausted)");
            reserved_ += bytes;
        } else {
            reserved_ += bytes;
        }
        in_use_ += bytes;
        peak_ = std::max(peak_, in_use_);
        return p;
    }
    void release(void* p, std::size_t bytes) {
        if (!p) return;
        bytes = std::max<std::size_t>(bytes, 256);
        in_use_ -= bytes;
        free_[bytes].push_back(p);
    }
    [[nodiscard]] std::size_t in_use() const { return in_use_; }
    [[nodiscard]] std::size_t peak() const { return peak_; }
    [[nodiscard]] std::size_t reserved() const { return reserved_; }
    void reset_peak() { peak_ = in_use_; }

private:
    std::map<std::size_t, std::vector<void*>> free_;
    std::size_t in_use_ = 0, peak_ = 0, reserved_ = 0;
};

/// A device array of T from a pool (moves only).
template <class T>
class dbuf {
public:
    dbuf() = default;
    dbuf(device_pool& pool, std::size_t n) : pool_(&pool), n_(n), p_(static_cast<T*>(pool.acquire(n * sizeof(T)))) {}
    dbuf(dbuf&& o) noexcept : pool_(o.pool_), n_(std::exchange(o.n_, 0)), p_(std::exchange(o.p_, nullptr)) {}
    dbuf& operator=(dbuf&& o) noexcept {
        if (this != &o) {
            reset();
            pool_ = o.pool_, n_ = std::exchange(o.n_, 0), p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    dbuf(const dbuf&) = delete;
    dbuf& operator=(const dbuf&) = delete;
    ~dbuf() { reset(); }
    void reset() {
        if (p_) pool_->release(p_, n_ * sizeof(T));
        p_ = nullptr, n_ = 0;
    }
    [[nodiscard]] T* data() const { return p_; }
    [[nodiscard]] std::size_t size() const { return n_; }
    [[nodiscard]] bool empty() const { return n_ == 0; }
    void upload(std::span<const T> h) { cuda_check(cudaMemcpy(p_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "copy to the device"); }
    void download(std::span<T> h) const { cuda_check(cudaMemcpy(h.data(), p_, h.size() * sizeof(T), cudaMemcpyDeviceToHost), "copy from the device"); }

private:
    device_pool* pool_ = nullptr;
    std::size_t n_ = 0;
    T* p_ = nullptr;
};

/// What a layer keeps from forward for backward, on the device (the names of layer_cache).
struct cuda_layer_cache {
    dbuf<float> x, a, mean1, rstd1, qkv, probs, o, x1, c, mean2, rstd2, h, g;
    dbuf<int> targets;
    std::vector<int> tokens;  ///< host copy: the embedding's backward sorts them by token
    float scale = 0;

    /// Bytes kept for backward: the same count as layer_cache::bytes_kept.
    [[nodiscard]] double bytes_kept() const {
        std::size_t floats = 0;
        for (const auto* v : {&x, &a, &mean1, &rstd1, &qkv, &probs, &o, &x1, &c, &mean2, &rstd2, &h, &g}) floats += v->size();
        return double(floats * sizeof(float) + (targets.size() + tokens.size()) * sizeof(int));
    }
};

namespace cuda_kernels {

// Kernels are templates on the element type so that a header included by several .cu files
// defines each once (weak linkage), as the rest of the library does with inline functions.
constexpr int block = 256;
inline unsigned grid_for(std::size_t n) { return static_cast<unsigned>((n + block - 1) / block); }

template <class F>
__device__ F warp_sum(F v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
template <class F>
__device__ F warp_max(F v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/// Row-major C[M,N] = op(A) op(B) + beta C per batch entry z (grid.z), 16x16 tiles in shared memory.
template <class F>
__global__ void gemm_tiled(bool ta, bool tb, int M, int N, int K, const F* A, int lda, long long sA, const F* B, int ldb, long long sB, F beta, F* C, int ldc,
                           long long sC) {
    constexpr int ts = 16;
    __shared__ F As[ts][ts + 1], Bs[ts][ts + 1];
    A += blockIdx.z * sA, B += blockIdx.z * sB, C += blockIdx.z * sC;
    const int row = static_cast<int>(blockIdx.x) * ts + static_cast<int>(threadIdx.y), col = static_cast<int>(blockIdx.y) * ts + static_cast<int>(threadIdx.x);
    F acc = 0;
    for (int k0 = 0; k0 < K; k0 += ts) {
        const int ka = k0 + static_cast<int>(threadIdx.x), kb = k0 + static_cast<int>(threadIdx.y);
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? (ta ? A[static_cast<long long>(ka) * lda + row] : A[static_cast<long long>(row) * lda + ka]) : F(0);
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? (tb ? B[static_cast<long long>(col) * ldb + kb] : B[static_cast<long long>(kb) * ldb + col]) : F(0);
        __syncthreads();
        for (int k = 0; k < ts; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        F* c = C + static_cast<long long>(row) * ldc + col;
        *c = beta == F(0) ? acc : acc + beta * *c;
    }
}

/// out[u][i][j] = bias[u * bias_stride + j] for U units of T rows of n columns.
template <class F>
__global__ void fill_rows(std::size_t total, int T, int n, const F* bias, std::size_t bias_stride, F* out) {
    const std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (e >= total) return;
    const std::size_t u = e / (static_cast<std::size_t>(T) * n);
    out[e] = bias[u * bias_stride + e % static_cast<std::size_t>(n)];
}

template <class F>
__device__ F gelu(F x) {
    const F c = F(0.7978845608028654);
    return F(0.5) * x * (F(1) + tanhf(c * (x + F(0.044715) * x * x * x)));
}
template <class F>
__device__ F gelu_grad(F x) {
    const F c = F(0.7978845608028654);
    const F th = tanhf(c * (x + F(0.044715) * x * x * x));
    return F(0.5) * (F(1) + th) + F(0.5) * x * (F(1) - th * th) * c * (F(1) + F(3) * F(0.044715) * x * x);
}
template <class F>
__global__ void gelu_forward(std::size_t n, const F* h, F* g) {
    const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) g[i] = gelu(h[i]);
}
template <class F>
__global__ void gelu_backward(std::size_t n, const F* h, F* dg) {
    const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) dg[i] *= gelu_grad(h[i]);
}
/// out = a + b + bias (bias per column of H).
template <class F>
__global__ void residual(std::size_t n, int H, const F* a, const F* b, const F* bias, F* out) {
    const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i] + bias[i % static_cast<std::size_t>(H)];
}
template <class F>
__global__ void sgd(std::size_t n, F* p, const F* g, F lr) {
    const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) p[i] -= lr * g[i];
}

/// One warp per row: y = (x - mean) rstd g + b.
template <class F>
__global__ void layer_norm_forward(int T, int H, const F* x, const F* g, const F* b, F* y, F* mean, F* rstd) {
    const int row = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32), lane = static_cast<int>(threadIdx.x % 32);
    if (row >= T) return;
    const F* xr = x + static_cast<long long>(row) * H;
    F s = 0;
    for (int i = lane; i < H; i += 32) s += xr[i];
    const F mu = warp_sum(s) / F(H);
    F v = 0;
    for (int i = lane; i < H; i += 32) v += (xr[i] - mu) * (xr[i] - mu);
    const F r = F(1) / sqrtf(warp_sum(v) / F(H) + F(1e-5));
    if (lane == 0) mean[row] = mu, rstd[row] = r;
    for (int i = lane; i < H; i += 32) y[static_cast<long long>(row) * H + i] = (xr[i] - mu) * r * g[i] + b[i];
}
/// One warp per row: dx += the layer norm's input gradient.
template <class F>
__global__ void layer_norm_backward_input(int T, int H, const F* x, const F* g, const F* mean, const F* rstd, const F* dy, F* dx) {
    const int row = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32), lane = static_cast<int>(threadIdx.x % 32);
    if (row >= T) return;
    const long long o = static_cast<long long>(row) * H;
    F m1 = 0, m2 = 0;
    for (int i = lane; i < H; i += 32) {
        const F xhat = (x[o + i] - mean[row]) * rstd[row], dxhat = dy[o + i] * g[i];
        m1 += dxhat, m2 += dxhat * xhat;
    }
    m1 = warp_sum(m1) / F(H), m2 = warp_sum(m2) / F(H);
    for (int i = lane; i < H; i += 32) {
        const F xhat = (x[o + i] - mean[row]) * rstd[row];
        dx[o + i] += rstd[row] * (dy[o + i] * g[i] - m1 - xhat * m2);
    }
}
/// One thread per column, rows in order: dg += sum dy xhat, db += sum dy.
template <class F>
__global__ void layer_norm_backward_params(int T, int H, const F* x, const F* mean, const F* rstd, const F* dy, F* dg, F* db) {
    const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (j >= H) return;
    F sg = 0, sb = 0;
    for (int t = 0; t < T; ++t) {
        const long long o = static_cast<long long>(t) * H + j;
        sg += dy[o] * (x[o] - mean[t]) * rstd[t], sb += dy[o];
    }
    dg[j] += sg, db[j] += sb;
}
/// out[u * out_stride + j] += sum over rows i of in[u * in_stride + i * ld + j] (grid.y = u).
template <class F>
__global__ void column_sum(int T, int n, const F* in, int ld, long long in_stride, F* out, long long out_stride) {
    const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (j >= n) return;
    const F* src = in + blockIdx.y * in_stride;
    F s = 0;
    for (int i = 0; i < T; ++i) s += src[static_cast<long long>(i) * ld + j];
    out[blockIdx.y * out_stride + j] += s;
}

template <class F>
__global__ void embed_forward(std::size_t n, int S, int H, const int* tokens, const F* wte, const F* wpe, F* x) {
    const std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (e >= n) return;
    const std::size_t i = e / static_cast<std::size_t>(H), h = e % static_cast<std::size_t>(H);
    x[e] = wte[static_cast<std::size_t>(tokens[i]) * H + h] + wpe[(i % static_cast<std::size_t>(S)) * H + h];
}
/// dwpe[p][h] += sum over samples of dx[sample][p][h].
template <class F>
__global__ void embed_backward_positions(int m, int S, int H, const F* dx, F* dwpe) {
    const std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (e >= static_cast<std::size_t>(S) * H) return;
    F s = 0;
    for (int smp = 0; smp < m; ++smp) s += dx[static_cast<std::size_t>(smp) * S * H + e];
    dwpe[e] += s;
}
/// Block per distinct token: dwte[token] += the rows of its positions, in position order.
template <class F>
__global__ void embed_backward_tokens(int H, const int* token, const int* offsets, const int* positions, const F* dx, F* dwte) {
    const int u = static_cast<int>(blockIdx.x);
    for (int h = static_cast<int>(threadIdx.x); h < H; h += static_cast<int>(blockDim.x)) {
        F s = 0;
        for (int k = offsets[u]; k < offsets[u + 1]; ++k) s += dx[static_cast<long long>(positions[k]) * H + h];
        dwte[static_cast<long long>(token[u]) * H + h] += s;
    }
}

/// One warp per row of S scores (row i of its sample block): causal softmax of scores x scale.
template <class F>
__global__ void causal_softmax(long long rows, int S, F scale, F* P) {
    const long long row = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x % 32);
    if (row >= rows) return;
    const int i = static_cast<int>(row % S);
    F* p = P + row * S;
    F mx = -INFINITY;
    for (int k = lane; k <= i; k += 32) mx = fmaxf(mx, p[k] * scale);
    mx = warp_max(mx);
    F z = 0;
    for (int k = lane; k <= i; k += 32) z += (p[k] = expf(p[k] * scale - mx));
    z = warp_sum(z);
    for (int k = lane; k < S; k += 32) p[k] = k <= i ? p[k] / z : F(0);
}
/// dS = P (dP - sum_k P dP) x scale on the causal part, 0 above it (in place in dP).
template <class F>
__global__ void causal_softmax_backward(long long rows, int S, F scale, const F* P, F* dP) {
    const long long row = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x % 32);
    if (row >= rows) return;
    const int i = static_cast<int>(row % S);
    const F* p = P + row * S;
    F* d = dP + row * S;
    F dot = 0;
    for (int k = lane; k <= i; k += 32) dot += p[k] * d[k];
    dot = warp_sum(dot);
    for (int k = lane; k < S; k += 32) d[k] = k <= i ? p[k] * (d[k] - dot) * scale : F(0);
}
/// One warp per token: softmax of its logits in place, its loss log z - (logit[target] - max).
template <class F>
__global__ void cross_entropy(int T, int V, F* logits, const int* targets, double* loss) {
    const int row = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32), lane = static_cast<int>(threadIdx.x % 32);
    if (row >= T) return;
    F* r = logits + static_cast<long long>(row) * V;
    const F target_logit = r[targets[row]];  // read before any lane overwrites its logits below
    F mx = -INFINITY;
    for (int v = lane; v < V; v += 32) mx = fmaxf(mx, r[v]);
    mx = warp_max(mx);
    double z = 0;
    for (int v = lane; v < V; v += 32) z += exp(double(r[v] - mx));
    for (int o = 16; o > 0; o >>= 1) z += __shfl_xor_sync(0xffffffffu, z, o);
    for (int v = lane; v < V; v += 32) r[v] = static_cast<F>(exp(double(r[v] - mx)) / z);
    if (lane == 0) loss[row] = log(z) - double(target_logit - mx);
}
/// dlogits = (softmax - onehot(target)) x scale, in place.
template <class F>
__global__ void cross_entropy_backward(std::size_t n, int V, F* probs, const int* targets, F scale) {
    const std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (e >= n) return;
    const std::size_t i = e / static_cast<std::size_t>(V);
    const int v = static_cast<int>(e % static_cast<std::size_t>(V));
    probs[e] = (probs[e] - (v == targets[i] ? F(1) : F(0))) * scale;
}

}  // namespace cuda_kernels

/// One strided batch of row-major GEMMs: C_z[M,N] = op(A_z) op(B_z) + beta C_z, z < batch.
struct gemm_call {
    bool ta = false, tb = false;
    int M = 0, N = 0, K = 0;
    const float* A = nullptr;
    int lda = 0;
    long long sA = 0;
    const float* B = nullptr;
    int ldb = 0;
    long long sB = 0;
    float beta = 0;
    float* C = nullptr;
    int ldc = 0;
    long long sC = 0;
    int batch = 1;
};

/// One TP rank's share of a GPT model on the current CUDA device.
template <cuda_math Math = cuda_math::fp32, gemm_engine Engine = gemm_engine::cublas>
class basic_cuda_gpt {
public:
    using activation = dbuf<float>;
    using cache = cuda_layer_cache;

    basic_cuda_gpt(gpt_shape s, std::vector<int> layers, int tp, int tp_rank, std::uint64_t seed) : host_(s, std::move(layers), tp, tp_rank, seed) {
        static_assert(Math == cuda_math::fp32 || Engine == gemm_engine::cublas, "hetplan::basic_cuda_gpt: bf16 math needs the cuBLAS engine");
        cuda_check(cudaFree(nullptr), "initialising the device");
#if !defined(HETPLAN_NO_CUBLAS)
        if constexpr (Engine == gemm_engine::cublas) {
            cublasHandle_t h = nullptr;
            if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw comm_error("cuBLAS: cublasCreate failed");
            blas_.reset(h);
        }
#else
        static_assert(Engine == gemm_engine::own, "built with HETPLAN_NO_CUBLAS: use gemm_engine::own");
#endif
        for (auto& [id, t] : host_.tensors()) {
            device_tensor d{dbuf<float>(pool_, t.param.size()), dbuf<float>(pool_, t.param.size())};
            d.param.upload(t.param);
            cuda_check(cudaMemset(d.grad.data(), 0, d.grad.size() * sizeof(float)), "zeroing gradients");
            dev_.emplace(id, std::move(d));
        }
        state_bytes_ = pool_.in_use();
    }
    basic_cuda_gpt(const basic_cuda_gpt&) = delete;
    basic_cuda_gpt& operator=(const basic_cuda_gpt&) = delete;

    [[nodiscard]] const gpt_shape& shape() const { return host_.shape(); }
    [[nodiscard]] bool holds(int layer) const { return host_.holds(layer); }
    [[nodiscard]] std::map<int, local_tensor>& tensors() { return host_.tensors(); }
    [[nodiscard]] const std::map<int, local_tensor>& tensors() const { return host_.tensors(); }
    /// Device bytes: parameters and gradients; in use now; the peak since reset_peak().
    [[nodiscard]] double state_bytes() const { return double(state_bytes_); }
    [[nodiscard]] double bytes_in_use() const { return double(pool_.in_use()); }
    [[nodiscard]] double peak_bytes() const { return double(pool_.peak()); }
    void reset_peak() { pool_.reset_peak(); }

    void zero_grad() {
        for (auto& [id, d] : dev_) cuda_check(cudaMemsetAsync(d.grad.data(), 0, d.grad.size() * sizeof(float)), "zeroing gradients");
    }
    void sgd_step(float lr) {
        for (auto& [id, d] : dev_) launch_sgd(d, lr);
    }
    void sgd_step_layer(int layer, float lr) {
        for (auto& [id, d] : dev_)
            if (host_.tensors().at(id).info.layers.front() == layer) launch_sgd(d, lr);
    }
    void load(std::span<const float> in, activation& x) {
        x = activation(pool_, in.size());
        x.upload(in);
    }
    void store(const activation& x, std::vector<float>& out) const {
        out.resize(x.size());
        x.download(out);
    }
    [[nodiscard]] activation copy(const activation& x) { return copy_of(x); }
    void pull() {
        for (auto& [id, d] : dev_) {
            local_tensor& t = host_.tensors().at(id);
            d.param.download(t.param);
            d.grad.download(t.grad);
        }
    }
    void push() {
        for (auto& [id, d] : dev_) {
            const local_tensor& t = host_.tensors().at(id);
            d.param.upload(t.param);
            d.grad.upload(t.grad);
        }
    }
    void synchronize() const { cuda_check(cudaDeviceSynchronize(), "running the step's kernels"); }

    template <class Reduce>
    void forward(int l0, int l1, int m, std::span<const int> tokens, std::span<const int> targets, activation& x, std::vector<cache>& caches, double loss_scale,
                 double& loss, Reduce&& tp_reduce) {
        caches.resize(static_cast<std::size_t>(l1 - l0));
        const int L = shape().layers();
        for (int l = l0; l < l1; ++l) {
            cache& c = caches[static_cast<std::size_t>(l - l0)];
            if (l == 0) embed_forward(m, tokens, x, c);
            else if (l == L - 1) loss += head_forward(m, targets, x, c, loss_scale);
            else block_forward(l - 1, m, x, c, tp_reduce);
        }
        check_launches();
    }
    template <class Reduce>
    void backward(int l0, int l1, int m, activation& dx, std::vector<cache>& caches, Reduce&& tp_reduce) {
        const int L = shape().layers();
        for (int l = l1 - 1; l >= l0; --l) {
            cache& c = caches[static_cast<std::size_t>(l - l0)];
            if (l == 0) embed_backward(m, dx, c);
            else if (l == L - 1) head_backward(m, dx, c);
            else block_backward(l - 1, m, dx, c, tp_reduce);
            c = cache{};
        }
        check_launches();
    }

private:
#if !defined(HETPLAN_NO_CUBLAS)
    struct blas_deleter {
        void operator()(cublasHandle_t h) const { (void)cublasDestroy(h); }
    };
    std::unique_ptr<std::remove_pointer_t<cublasHandle_t>, blas_deleter> blas_;  // destroyed even if the constructor throws later
#endif
    struct device_tensor {
        dbuf<float> param, grad;
    };
    device_pool pool_;  // first: every buffer below returns to it
    gpt_worker host_;   // host copies, initial values, shape and TP checks
    std::map<int, device_tensor> dev_;
    std::size_t state_bytes_ = 0;

    static void check_launches() { cuda_check(cudaGetLastError(), "launching a kernel"); }
    dbuf<float> zeros(std::size_t n) {
        dbuf<float> b(pool_, n);
        cuda_check(cudaMemsetAsync(b.data(), 0, n * sizeof(float)), "zeroing a buffer");
        return b;
    }
    dbuf<float> copy_of(const dbuf<float>& v) {
        dbuf<float> b(pool_, v.size());
        cuda_check(cudaMemcpyAsync(b.data(), v.data(), v.size() * sizeof(float), cudaMemcpyDeviceToDevice), "copying on the device");
        return b;
    }
    void launch_sgd(device_tensor& d, float lr) {
        cuda_kernels::sgd<<<cuda_kernels::grid_for(d.param.size()), cuda_kernels::block>>>(d.param.size(), d.param.data(), d.grad.data(), lr);
    }
    [[nodiscard]] float* param(int id) { return dev_.at(id).param.data(); }
    [[nodiscard]] float* grad(int id) { return dev_.at(id).grad.data(); }
    [[nodiscard]] int block_tensor(int b) const { return 2 + 2 * b; }
    [[nodiscard]] int lnf_tensor() const { return 2 + 2 * shape().blocks; }
    /// TP all-reduce of a device buffer through the host (the communicator works on host memory).
    template <class Reduce>
    void tp_sum(dbuf<float>& v, Reduce& tp_reduce) {
        if (host_.tp() == 1) return;
        std::vector<float> h(v.size());
        v.download(h);
        tp_reduce(std::span<float>(h));
        v.upload(h);
    }

    void gemm(const gemm_call& g) {
        if constexpr (Engine == gemm_engine::own) {
            // Rows of tiles on grid.x (up to 2^31 - 1), columns on grid.y, the batch in chunks
            // (grid.y and grid.z stop at 65535).
            if ((g.N + 15) / 16 > 65535) throw comm_error("own GEMM: more than 65535 x 16 columns");
            for (int z0 = 0; z0 < g.batch; z0 += 65535) {
                const int nz = std::min(65535, g.batch - z0);
                const dim3 grid(static_cast<unsigned>((g.M + 15) / 16), static_cast<unsigned>((g.N + 15) / 16), static_cast<unsigned>(nz));
                cuda_kernels::gemm_tiled<<<grid, dim3(16, 16)>>>(g.ta, g.tb, g.M, g.N, g.K, g.A + z0 * g.sA, g.lda, g.sA, g.B + z0 * g.sB, g.ldb, g.sB, g.beta,
                                                                 g.C + z0 * g.sC, g.ldc, g.sC);
            }
        } else {
#if !defined(HETPLAN_NO_CUBLAS)
            // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
            const float one = 1.0f;
            const cublasComputeType_t ct = Math == cuda_math::bf16 ? CUBLAS_COMPUTE_32F_FAST_16BF : CUBLAS_COMPUTE_32F;
            const cublasStatus_t st = cublasGemmStridedBatchedEx(blas_.get(), g.tb ? CUBLAS_OP_T : CUBLAS_OP_N, g.ta ? CUBLAS_OP_T : CUBLAS_OP_N, g.N, g.M, g.K, &one, g.B,
                                                                 CUDA_R_32F, g.ldb, g.sB, g.A, CUDA_R_32F, g.lda, g.sA, &g.beta, g.C, CUDA_R_32F, g.ldc, g.sC, g.batch,
                                                                 ct, CUBLAS_GEMM_DEFAULT);
            if (st != CUBLAS_STATUS_SUCCESS) throw comm_error("cuBLAS: cublasGemmStridedBatchedEx failed with status " + std::to_string(static_cast<int>(st)));
#endif
        }
    }
    void layer_norm(int T, int H, const float* x, const float* g, const float* b, dbuf<float>& y, dbuf<float>& mean, dbuf<float>& rstd) {
        y = dbuf<float>(pool_, static_cast<std::size_t>(T) * H);
        mean = dbuf<float>(pool_, static_cast<std::size_t>(T));
        rstd = dbuf<float>(pool_, static_cast<std::size_t>(T));
        cuda_kernels::layer_norm_forward<<<static_cast<unsigned>((T + 7) / 8), 256>>>(T, H, x, g, b, y.data(), mean.data(), rstd.data());
    }
    void layer_norm_back(int T, int H, const float* x, const float* g, const dbuf<float>& mean, const dbuf<float>& rstd, const float* dy, float* dx, float* dg,
                         float* db) {
        cuda_kernels::layer_norm_backward_input<<<static_cast<unsigned>((T + 7) / 8), 256>>>(T, H, x, g, mean.data(), rstd.data(), dy, dx);
        cuda_kernels::layer_norm_backward_params<<<cuda_kernels::grid_for(static_cast<std::size_t>(H)), cuda_kernels::block>>>(T, H, x, mean.data(), rstd.data(), dy, dg, db);
    }
    void column_sum(int T, int n, const float* in, int ld, long long in_stride, float* out, long long out_stride, int batch) {
        cuda_kernels::column_sum<<<dim3(cuda_kernels::grid_for(static_cast<std::size_t>(n)), static_cast<unsigned>(batch)), cuda_kernels::block>>>(T, n, in, ld, in_stride, out,
                                                                                                                                                 out_stride);
    }

    // ---- embedding --------------------------------------------------------------------------
    void embed_forward(int m, std::span<const int> tokens, activation& x, cache& c) {
        const int S = shape().sequence, H = shape().hidden, T = m * S;
        if (tokens.size() != static_cast<std::size_t>(T)) throw comm_error("cuda_gpt: the embedding needs m x sequence tokens");
        for (int tok : tokens)
            if (tok < 0 || tok >= shape().vocab) throw comm_error("cuda_gpt: token " + std::to_string(tok) + " outside the vocabulary");
        dbuf<int> tok(pool_, tokens.size());
        tok.upload(tokens);
        x = activation(pool_, static_cast<std::size_t>(T) * H);
        cuda_kernels::embed_forward<<<cuda_kernels::grid_for(x.size()), cuda_kernels::block>>>(x.size(), S, H, tok.data(), param(0), param(1), x.data());
        c.tokens.assign(tokens.begin(), tokens.end());
    }
    void embed_backward(int m, activation& dx, cache& c) {
        const int S = shape().sequence, H = shape().hidden;
        cuda_kernels::embed_backward_positions<<<cuda_kernels::grid_for(static_cast<std::size_t>(S) * H), cuda_kernels::block>>>(m, S, H, dx.data(), grad(1));
        // Positions grouped by token (a counting sort, in position order within a token).
        std::vector<int> offsets(static_cast<std::size_t>(shape().vocab) + 1, 0), order(c.tokens.size()), distinct, starts;
        for (int t : c.tokens) ++offsets[static_cast<std::size_t>(t) + 1];
        for (std::size_t v = 0; v + 1 < offsets.size(); ++v) offsets[v + 1] += offsets[v];
        std::vector<int> fill(offsets.begin(), offsets.end() - 1);
        for (std::size_t i = 0; i < c.tokens.size(); ++i) order[static_cast<std::size_t>(fill[static_cast<std::size_t>(c.tokens[i])]++)] = static_cast<int>(i);
        for (int v = 0; v < shape().vocab; ++v)
            if (offsets[static_cast<std::size_t>(v) + 1] > offsets[static_cast<std::size_t>(v)]) distinct.push_back(v), starts.push_back(offsets[static_cast<std::size_t>(v)]);
        starts.push_back(static_cast<int>(c.tokens.size()));
        dbuf<int> d_distinct(pool_, distinct.size()), d_starts(pool_, starts.size()), d_order(pool_, order.size());
        d_distinct.upload(distinct), d_starts.upload(starts), d_order.upload(order);
        if (!distinct.empty())
            cuda_kernels::embed_backward_tokens<<<static_cast<unsigned>(distinct.size()), 128>>>(H, d_distinct.data(), d_starts.data(), d_order.data(), dx.data(), grad(0));
        dx = activation{};
    }

    // ---- head ---------------------------------------------------------------------------------
    double head_forward(int m, std::span<const int> targets, activation& x, cache& c, double scale) {
        const int H = shape().hidden, V = shape().vocab, T = m * shape().sequence;
        if (targets.size() != static_cast<std::size_t>(T)) throw comm_error("cuda_gpt: the head needs m x sequence targets");
        for (int t : targets)
            if (t < 0 || t >= V) throw comm_error("cuda_gpt: target " + std::to_string(t) + " outside the vocabulary");
        const float* lnf = param(lnf_tensor());
        c.x = std::move(x);
        layer_norm(T, H, c.x.data(), lnf, lnf + H, c.a, c.mean1, c.rstd1);
        c.probs = dbuf<float>(pool_, static_cast<std::size_t>(T) * V);
        gemm({false, true, T, V, H, c.a.data(), H, 0, param(0), H, 0, 0.0f, c.probs.data(), V, 0, 1});
        c.targets = dbuf<int>(pool_, targets.size());
        c.targets.upload(targets);
        dbuf<double> rows(pool_, static_cast<std::size_t>(T));
        cuda_kernels::cross_entropy<<<static_cast<unsigned>((T + 7) / 8), 256>>>(T, V, c.probs.data(), c.targets.data(), rows.data());
        std::vector<double> h(static_cast<std::size_t>(T));
        rows.download(h);
        double loss = 0;
        for (double v : h) loss += v;  // in token order, as the CPU sums
        c.scale = static_cast<float>(scale);
        x = activation{};
        return loss * scale;
    }
    void head_backward(int m, activation& dx, cache& c) {
        const int H = shape().hidden, V = shape().vocab, T = m * shape().sequence;
        const float* lnf = param(lnf_tensor());
        float* dlnf = grad(lnf_tensor());
        cuda_kernels::cross_entropy_backward<<<cuda_kernels::grid_for(c.probs.size()), cuda_kernels::block>>>(c.probs.size(), V, c.probs.data(), c.targets.data(), c.scale);
        gemm({true, false, V, H, T, c.probs.data(), V, 0, c.a.data(), H, 0, 1.0f, grad(0), H, 0, 1});
        dbuf<float> dy(pool_, static_cast<std::size_t>(T) * H);
        gemm({false, false, T, H, V, c.probs.data(), V, 0, param(0), H, 0, 0.0f, dy.data(), H, 0, 1});
        dx = zeros(static_cast<std::size_t>(T) * H);
        layer_norm_back(T, H, c.x.data(), lnf, c.mean1, c.rstd1, dy.data(), dx.data(), dlnf, dlnf + H);
    }

    // ---- decoder block ------------------------------------------------------------------------
    /// Offsets of one unit's pieces (exec/cpu_gpt.hpp's layout), signed for pointer arithmetic
    /// and cuBLAS strides.
    struct unit_offsets {
        long long wqkv, bqkv, wo, w1, b1, w2, size;
    };
    [[nodiscard]] unit_offsets view() const {
        const unit_view u = unit_view::of(shape());
        auto ll = [](std::size_t v) { return static_cast<long long>(v); };
        return {ll(u.wqkv), ll(u.bqkv), ll(u.wo), ll(u.w1), ll(u.b1), ll(u.w2), ll(u.size)};
    }

    template <class Reduce>
    void block_forward(int b, int m, activation& x, cache& c, Reduce& tp_reduce) {
        const int S = shape().sequence, H = shape().hidden, d = shape().head_dim(), f = shape().ffn_per_unit(), T = m * S;
        const float* rep = param(block_tensor(b));
        const float* W = param(block_tensor(b) + 1);
        const int U = host_.tensors().at(block_tensor(b) + 1).num_units;
        const unit_offsets uv = view();
        const auto TH = static_cast<std::size_t>(T) * H;
        const long long T3d = static_cast<long long>(T) * 3 * d, S3d = static_cast<long long>(S) * 3 * d;
        c.x = std::move(x);
        layer_norm(T, H, c.x.data(), rep, rep + H, c.a, c.mean1, c.rstd1);
        // Q, K, V of every unit: bias rows, then a . Wqkv_u for all units in one batch.
        c.qkv = dbuf<float>(pool_, static_cast<std::size_t>(U) * T3d);
        cuda_kernels::fill_rows<<<cuda_kernels::grid_for(c.qkv.size()), cuda_kernels::block>>>(c.qkv.size(), T, 3 * d, W + uv.bqkv, static_cast<std::size_t>(uv.size),
                                                                                               c.qkv.data());
        gemm({false, false, T, 3 * d, H, c.a.data(), H, 0, W + uv.wqkv, 3 * d, uv.size, 1.0f, c.qkv.data(), 3 * d, T3d, U});
        // Attention for every (unit, sample): scores Q K^T, causal softmax, P V.
        const int B = U * m;
        c.probs = dbuf<float>(pool_, static_cast<std::size_t>(B) * S * S);
        gemm({false, true, S, S, d, c.qkv.data(), 3 * d, S3d, c.qkv.data() + d, 3 * d, S3d, 0.0f, c.probs.data(), S, static_cast<long long>(S) * S, B});
        const long long rows = static_cast<long long>(B) * S;
        cuda_kernels::causal_softmax<<<static_cast<unsigned>((rows + 7) / 8), 256>>>(rows, S, 1.0f / std::sqrt(float(d)), c.probs.data());
        c.o = dbuf<float>(pool_, static_cast<std::size_t>(U) * T * d);
        gemm({false, false, S, d, S, c.probs.data(), S, static_cast<long long>(S) * S, c.qkv.data() + 2 * d, 3 * d, S3d, 0.0f, c.o.data(), d, static_cast<long long>(S) * d, B});
        // Output projection: the units' row blocks of Wo summed (one GEMM per unit, accumulating).
        dbuf<float> partial(pool_, TH);
        for (int u = 0; u < U; ++u)
            gemm({false, false, T, H, d, c.o.data() + static_cast<long long>(u) * T * d, d, 0, W + u * uv.size + uv.wo, H, 0, u ? 1.0f : 0.0f, partial.data(), H, 0, 1});
        tp_sum(partial, tp_reduce);
        c.x1 = dbuf<float>(pool_, TH);
        cuda_kernels::residual<<<cuda_kernels::grid_for(TH), cuda_kernels::block>>>(TH, H, c.x.data(), partial.data(), rep + 2 * H, c.x1.data());
        layer_norm(T, H, c.x1.data(), rep + 3 * H, rep + 4 * H, c.c, c.mean2, c.rstd2);
        c.h = dbuf<float>(pool_, static_cast<std::size_t>(U) * T * f);
        cuda_kernels::fill_rows<<<cuda_kernels::grid_for(c.h.size()), cuda_kernels::block>>>(c.h.size(), T, f, W + uv.b1, static_cast<std::size_t>(uv.size), c.h.data());
        gemm({false, false, T, f, H, c.c.data(), H, 0, W + uv.w1, f, uv.size, 1.0f, c.h.data(), f, static_cast<long long>(T) * f, U});
        c.g = dbuf<float>(pool_, c.h.size());
        cuda_kernels::gelu_forward<<<cuda_kernels::grid_for(c.h.size()), cuda_kernels::block>>>(c.h.size(), c.h.data(), c.g.data());
        for (int u = 0; u < U; ++u)
            gemm({false, false, T, H, f, c.g.data() + static_cast<long long>(u) * T * f, f, 0, W + u * uv.size + uv.w2, H, 0, u ? 1.0f : 0.0f, partial.data(), H, 0, 1});
        tp_sum(partial, tp_reduce);
        x = activation(pool_, TH);
        cuda_kernels::residual<<<cuda_kernels::grid_for(TH), cuda_kernels::block>>>(TH, H, c.x1.data(), partial.data(), rep + 5 * H, x.data());
    }

    template <class Reduce>
    void block_backward(int b, int m, activation& dx, cache& c, Reduce& tp_reduce) {
        const int S = shape().sequence, H = shape().hidden, d = shape().head_dim(), f = shape().ffn_per_unit(), T = m * S;
        const float* rep = param(block_tensor(b));
        float* drep = grad(block_tensor(b));
        const float* W = param(block_tensor(b) + 1);
        float* G = grad(block_tensor(b) + 1);
        const int U = host_.tensors().at(block_tensor(b) + 1).num_units;
        const unit_offsets uv = view();
        const auto TH = static_cast<std::size_t>(T) * H;
        const long long Tf = static_cast<long long>(T) * f, Td = static_cast<long long>(T) * d, T3d = static_cast<long long>(T) * 3 * d;
        const long long S3d = static_cast<long long>(S) * 3 * d, SS = static_cast<long long>(S) * S, Sd = static_cast<long long>(S) * d;
        const activation dx2 = std::move(dx);  // gradient of the block's output
        column_sum(T, H, dx2.data(), H, 0, drep + 5 * H, 0, 1);
        // MLP: dW2, the GeLU's input gradient, dW1, db1, and the input gradient summed over units.
        gemm({true, false, f, H, T, c.g.data(), f, Tf, dx2.data(), H, 0, 1.0f, G + uv.w2, H, uv.size, U});
        dbuf<float> dgv(pool_, static_cast<std::size_t>(U) * Tf);
        gemm({false, true, T, f, H, dx2.data(), H, 0, W + uv.w2, H, uv.size, 0.0f, dgv.data(), f, Tf, U});
        cuda_kernels::gelu_backward<<<cuda_kernels::grid_for(dgv.size()), cuda_kernels::block>>>(dgv.size(), c.h.data(), dgv.data());
        gemm({true, false, H, f, T, c.c.data(), H, 0, dgv.data(), f, Tf, 1.0f, G + uv.w1, f, uv.size, U});
        column_sum(T, f, dgv.data(), f, Tf, G + uv.b1, uv.size, U);
        dbuf<float> dpartial(pool_, TH);
        for (int u = 0; u < U; ++u)
            gemm({false, true, T, H, f, dgv.data() + u * Tf, f, 0, W + u * uv.size + uv.w1, f, 0, u ? 1.0f : 0.0f, dpartial.data(), H, 0, 1});
        dgv.reset();
        tp_sum(dpartial, tp_reduce);
        activation dx1 = copy_of(dx2);
        layer_norm_back(T, H, c.x1.data(), rep + 3 * H, c.mean2, c.rstd2, dpartial.data(), dx1.data(), drep + 3 * H, drep + 4 * H);
        column_sum(T, H, dx1.data(), H, 0, drep + 2 * H, 0, 1);
        // Attention: dWo, the heads' output gradient, then through P V and the softmax to Q, K, V.
        gemm({true, false, d, H, T, c.o.data(), d, Td, dx1.data(), H, 0, 1.0f, G + uv.wo, H, uv.size, U});
        dbuf<float> dov(pool_, static_cast<std::size_t>(U) * Td);
        gemm({false, true, T, d, H, dx1.data(), H, 0, W + uv.wo, H, uv.size, 0.0f, dov.data(), d, Td, U});
        const int B = U * m;
        dbuf<float> dP(pool_, static_cast<std::size_t>(B) * SS);
        dbuf<float> dqkv(pool_, static_cast<std::size_t>(U) * T3d);
        gemm({false, true, S, S, d, dov.data(), d, Sd, c.qkv.data() + 2 * d, 3 * d, S3d, 0.0f, dP.data(), S, SS, B});
        gemm({true, false, S, d, S, c.probs.data(), S, SS, dov.data(), d, Sd, 0.0f, dqkv.data() + 2 * d, 3 * d, S3d, B});
        const long long rows = static_cast<long long>(B) * S;
        cuda_kernels::causal_softmax_backward<<<static_cast<unsigned>((rows + 7) / 8), 256>>>(rows, S, 1.0f / std::sqrt(float(d)), c.probs.data(), dP.data());
        gemm({false, false, S, d, S, dP.data(), S, SS, c.qkv.data() + d, 3 * d, S3d, 0.0f, dqkv.data(), 3 * d, S3d, B});
        gemm({true, false, S, d, S, dP.data(), S, SS, c.qkv.data(), 3 * d, S3d, 0.0f, dqkv.data() + d, 3 * d, S3d, B});
        dP.reset(), dov.reset();
        gemm({true, false, H, 3 * d, T, c.a.data(), H, 0, dqkv.data(), 3 * d, T3d, 1.0f, G + uv.wqkv, 3 * d, uv.size, U});
        column_sum(T, 3 * d, dqkv.data(), 3 * d, T3d, G + uv.bqkv, uv.size, U);
        for (int u = 0; u < U; ++u)
            gemm({false, true, T, H, 3 * d, dqkv.data() + u * T3d, 3 * d, 0, W + u * uv.size + uv.wqkv, 3 * d, 0, u ? 1.0f : 0.0f, dpartial.data(), H, 0, 1});
        dqkv.reset();
        tp_sum(dpartial, tp_reduce);
        layer_norm_back(T, H, c.x.data(), rep, c.mean1, c.rstd1, dpartial.data(), dx1.data(), drep, drep + H);
        dx = std::move(dx1);
    }
};

/// The usual choices: cuBLAS in fp32; cuBLAS with bf16 tensor-core math; this header's GEMM.
using cuda_gpt = basic_cuda_gpt<cuda_math::fp32, gemm_engine::cublas>;
using cuda_gpt_bf16 = basic_cuda_gpt<cuda_math::bf16, gemm_engine::cublas>;
using cuda_gpt_own_gemm = basic_cuda_gpt<cuda_math::fp32, gemm_engine::own>;

}  // namespace hetplan::exec
