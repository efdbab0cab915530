// The CPU GPT compute: gradients against finite differences (double-checked formulas), and
// Megatron tensor parallelism over threads equal to TP 1 (loss and every gradient).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "hetplan/concepts/compute.hpp"
#include "hetplan/exec/cpu_gpt.hpp"
#include "hetplan/exec/thread_communicator.hpp"
#include "plan_shapes.hpp"

namespace hetplan::test {
namespace {

exec::gpt_shape small_shape() { return {11, 8, 2, 2, 5}; }

struct batch {
    std::vector<int> tokens, targets;
};
batch make_batch(const exec::gpt_shape& s, int m) {
    batch b;
    for (int i = 0; i < m * s.sequence; ++i) {
        b.tokens.push_back((7 * i + 3) % s.vocab);
        b.targets.push_back((5 * i + 1) % s.vocab);
    }
    return b;
}

auto no_reduce = [](std::span<float>) {};

/// Loss of the whole model on one rank (TP 1), optionally with backward.
double run_once(exec::gpt_worker& w, const batch& b, int m, bool backward) {
    std::vector<float> x;
    std::vector<exec::layer_cache> cache;
    double loss = 0;
    const int L = w.shape().layers();
    w.forward(0, L, m, b.tokens, b.targets, x, cache, 1.0 / (m * w.shape().sequence), loss, no_reduce);
    if (backward) w.backward(0, L, m, x, cache, no_reduce);
    return loss;
}

}  // namespace

TEST_CASE("exec_cpu_gpt: every tensor's gradient matches central differences") {
    const auto s = small_shape();
    const int m = 2;
    const batch b = make_batch(s, m);
    exec::gpt_worker w(s, s.all_layers(), 1, 0, 42);
    w.zero_grad();
    const double loss = run_once(w, b, m, true);
    CHECK(loss > 0);
    CHECK(std::abs(loss - std::log(double(s.vocab))) < 0.2);  // near-uniform logits at 0.02-scale weights
    for (auto& entry : w.tensors()) {
        exec::local_tensor& t = entry.second;
        const std::string& name = t.info.name;  // CAPTURE of a structured binding: Clang 14 refuses
        CAPTURE(name);
        // A spread of elements of each tensor (every 7th, at most 40).
        int checked = 0;
        for (std::size_t i = 0; i < t.param.size() && checked < 40; i += 7, ++checked) {
            const float saved = t.param[i];
            const float eps = 1e-3f;
            t.param[i] = saved + eps;
            const double up = run_once(w, b, m, false);
            t.param[i] = saved - eps;
            const double down = run_once(w, b, m, false);
            t.param[i] = saved;
            const double numeric = (up - down) / (2.0 * eps);
            CAPTURE(i);
            CHECK(std::abs(numeric - t.grad[i]) <= 2e-3 * std::max(1.0, std::abs(numeric)) + 2e-4);
        }
    }
}

TEST_CASE("exec_cpu_gpt: TP 2 and TP 4 over threads equal TP 1 (loss, gradients of every unit)") {
    const exec::gpt_shape s{13, 16, 4, 2, 6};
    const int m = 3;
    const batch b = make_batch(s, m);
    exec::gpt_worker ref(s, s.all_layers(), 1, 0, 7);
    const double want = run_once(ref, b, m, true);
    for (int tp : {2, 4}) {
        CAPTURE(tp);
        std::vector<double> losses(static_cast<std::size_t>(tp));
        exec::thread_world::run(tp, [&](exec::thread_communicator c) {
            exec::gpt_worker w(s, s.all_layers(), tp, c.rank(), 7);
            std::vector<float> x;
            std::vector<exec::layer_cache> cache;
            double loss = 0;
            auto reduce = [&](std::span<float> v) { c.all_reduce(v); };
            w.forward(0, s.layers(), m, b.tokens, b.targets, x, cache, 1.0 / (m * s.sequence), loss, reduce);
            w.backward(0, s.layers(), m, x, cache, reduce);
            losses[static_cast<std::size_t>(c.rank())] = loss;
            for (const auto& [id, t] : w.tensors()) {
                const auto& full = ref.tensors().at(id);
                const std::size_t from = static_cast<std::size_t>(t.first_unit) * t.info.unit_size;
                REQUIRE(from + t.grad.size() <= full.grad.size());
                double worst = 0;
                for (std::size_t i = 0; i < t.grad.size(); ++i) {
                    CHECK(t.param[i] == full.param[from + i]);  // the same initial values however split
                    worst = std::max(worst, std::abs(double(t.grad[i]) - full.grad[from + i]) / (1e-3 + std::abs(double(full.grad[from + i]))));
                }
                CHECK(worst < 1e-4);
            }
        });
        for (double l : losses) CHECK(std::abs(l - want) <= 1e-6 * want);
    }
}

TEST_CASE("exec_cpu_gpt: bad shapes and TP degrees are named") {
    CHECK_THROWS_WITH_AS(exec::gpt_worker({11, 9, 2, 1, 4}, {0}, 1, 0, 1), doctest::Contains("heads >= 1 dividing hidden"), exec::comm_error);
    CHECK_THROWS_WITH_AS(exec::gpt_worker({11, 8, 2, 1, 4}, {0}, 4, 0, 1), doctest::Contains("TP degree 4 must divide the 2 heads"), exec::comm_error);
}

}  // namespace hetplan::test

namespace hetplan::test {
namespace {

/// The least a compute must offer (concepts::compute) plus what the runner's gradient exchange
/// reads: the constructor, and host tensors for the logical tensors its layers use (zeros here).
/// Activations are constant, there is no loss.
struct archetype_compute {
    struct cache {
        [[nodiscard]] double bytes_kept() const { return 0; }
    };
    using activation = std::vector<float>;
    archetype_compute(exec::gpt_shape s, std::vector<int> layers, int tp, int tp_rank, std::uint64_t) : row(static_cast<std::size_t>(s.sequence * s.hidden)) {
        for (const exec::tensor_info& ti : exec::gpt_tensors(s)) {
            if (std::none_of(ti.layers.begin(), ti.layers.end(), [&](int l) { return std::find(layers.begin(), layers.end(), l) != layers.end(); })) continue;
            exec::local_tensor t;
            t.info = ti;
            t.num_units = ti.split ? ti.units / tp : 1;
            t.first_unit = ti.split ? tp_rank * t.num_units : 0;
            t.param.assign(ti.unit_size * static_cast<std::size_t>(t.num_units), 0.0f);
            t.grad = t.param;
            held.emplace(ti.id, std::move(t));
        }
    }
    template <class Reduce>
    void forward(int l0, int l1, int m, std::span<const int>, std::span<const int>, activation& x, std::vector<cache>& caches, double, double&, Reduce&&) {
        caches.resize(static_cast<std::size_t>(l1 - l0));
        x.assign(static_cast<std::size_t>(m) * row, 1.0f);
    }
    template <class Reduce>
    void backward(int, int, int m, activation& dx, std::vector<cache>&, Reduce&&) {
        dx.assign(static_cast<std::size_t>(m) * row, 0.0f);
    }
    void load(std::span<const float> in, activation& x) const { x.assign(in.begin(), in.end()); }
    void store(const activation& x, std::vector<float>& out) const { out = x; }
    [[nodiscard]] activation copy(const activation& x) const { return x; }
    void zero_grad() {}
    void sgd_step(float) {}
    void sgd_step_layer(int, float) {}
    std::map<int, exec::local_tensor>& tensors() { return held; }
    void pull() {}
    void push() {}
    void synchronize() {}
    std::size_t row;
    std::map<int, exec::local_tensor> held;
};
static_assert(concepts::check_compute<archetype_compute>());
static_assert(concepts::check_compute<exec::gpt_worker>());

}  // namespace

TEST_CASE("exec_compute: the archetype runs a two-stage, two-replica plan through the runner (only the concept's members are used)") {
    const plan pl = exec_shapes::one_pipeline({exec_shapes::st({{0, 2}}, {exec_shapes::wg(1, 2, 1), exec_shapes::wg(1, 1, 2)}), exec_shapes::st({{2, 6}}, {exec_shapes::wg(1, 4, 1)})});
    exec::thread_world::run(3, [&](exec::thread_communicator c) {
        exec::plan_runner<exec::thread_communicator, archetype_compute> run(pl, exec_shapes::shape, exec_shapes::data, c);
        CHECK(run.step(0) == 0.0);
        CHECK(run.peak_activation_bytes() == 0.0);
    });
}

}  // namespace hetplan::test
