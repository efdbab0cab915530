#pragma once
// Per-layer timings by GPU type, TP degree and microbatch size (Sailor §4.1), with fitted values
// where a point was not measured:
//  - between measured microbatch sizes: linear interpolation;
//  - beyond the largest: a linear tail, either given (Cephalo §2.3 / Zorse §3.3.1 fit latency
//    linear in the microbatch size) or through the two largest points;
//  - below the smallest: proportional scaling (optimistic, flagged as fitted).
// Where no profile exists at all, an analytical estimate from FLOPs and peak FLOP/s may be
// enabled; results say which source they came from.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/core/error.hpp"
#include "hetplan/core/units.hpp"
#include "hetplan/hardware/compute_efficiency.hpp"
#include "hetplan/hardware/gpu.hpp"
#include "hetplan/workload/model.hpp"

namespace hetplan {

struct layer_timing {
    seconds fwd{}, bwd{}, update{};
    [[nodiscard]] seconds fwd_bwd() const { return fwd + bwd; }
    /// The backward pass of one microbatch. With activations checkpointed at layer boundaries
    /// the layer's forward runs again first (Cephalo §2.2 and §4.1; the public optimizer prices
    /// the backward as forward + backward for this reason).
    [[nodiscard]] seconds backward_pass(bool recompute) const { return recompute ? fwd + bwd : bwd; }
};

enum class timing_source { measured, fitted, analytical };

/// Straight line t(m) = slope * m + intercept, for forward and backward of every layer.
struct linear_tail {
    std::vector<double> fwd_slope, fwd_intercept, bwd_slope, bwd_intercept;  ///< seconds
};

/// Measurements of one (GPU type, TP degree).
struct profile_curve {
    std::vector<int> mbs;                           ///< increasing
    std::vector<std::vector<layer_timing>> points;  ///< points[i][layer] at mbs[i]
    std::optional<linear_tail> tail;

    void add_point(int m, std::vector<layer_timing> layers) {
        auto it = std::lower_bound(mbs.begin(), mbs.end(), m);
        const auto pos = it - mbs.begin();
        if (it != mbs.end() && *it == m) {
            points[static_cast<std::size_t>(pos)] = std::move(layers);
            return;
        }
        mbs.insert(it, m);
        points.insert(points.begin() + pos, std::move(layers));
    }

    [[nodiscard]] std::pair<layer_timing, timing_source> at(int m, std::size_t layer) const {
        auto get = [&](std::size_t i) { return points[i].at(layer); };
        auto it = std::lower_bound(mbs.begin(), mbs.end(), m);
        if (it != mbs.end() && *it == m) return {get(static_cast<std::size_t>(it - mbs.begin())), timing_source::measured};
        const std::size_t n = mbs.size();
        if (it == mbs.end()) {  // beyond the largest measured size
            const layer_timing last = get(n - 1);
            if (tail) {
                const double x = m;
                return {{seconds{tail->fwd_slope.at(layer) * x + tail->fwd_intercept.at(layer)},
                         seconds{tail->bwd_slope.at(layer) * x + tail->bwd_intercept.at(layer)}, last.update},
                        timing_source::fitted};
            }
            if (n >= 2) return {lerp(mbs[n - 2], get(n - 2), mbs[n - 1], last, m), timing_source::fitted};
            const double k = double(m) / mbs[0];
            return {{last.fwd * k, last.bwd * k, last.update}, timing_source::fitted};
        }
        if (it == mbs.begin()) {  // below the smallest
            const double k = double(m) / mbs[0];
            const layer_timing first = get(0);
            return {{first.fwd * k, first.bwd * k, first.update}, timing_source::fitted};
        }
        const std::size_t hi = static_cast<std::size_t>(it - mbs.begin());
        return {lerp(mbs[hi - 1], get(hi - 1), mbs[hi], get(hi), m), timing_source::fitted};
    }

private:
    static layer_timing lerp(int m0, const layer_timing& a, int m1, const layer_timing& b, int m) {
        const double w = double(m - m0) / double(m1 - m0);
        auto mix = [w](seconds x, seconds y) { return x + (y - x) * w; };
        // Extrapolated times never drop below zero.
        return {max(mix(a.fwd, b.fwd), seconds{0}), max(mix(a.bwd, b.bwd), seconds{0}), b.update};
    }
};

/// Analytical fallback: compute at a fraction of peak, update from streaming the optimizer
/// state through memory at `update_bandwidth`. Without an `efficiency` the fraction is the GPU
/// type's published fit for the precision (hardware/compute_efficiency.hpp: it grows with the
/// layer's FLOPs per GPU; backward 1.5-2.6x forward), or `uncalibrated` of peak (backward 2x)
/// for a type or precision with none; with one, that fraction for every layer, backward 2x.
struct analytical_fallback {
    std::optional<double> efficiency;
    bytes_per_second update_bandwidth = gigabytes_per_second(500);
    static constexpr double uncalibrated = 0.4;
};

class profile_table {
public:
    void set_curve(const std::string& gpu, int tp, profile_curve c) {
        curves_.insert_or_assign({gpu, tp}, std::move(c));
    }
    profile_curve& curve(const std::string& gpu, int tp) { return curves_[{gpu, tp}]; }
    [[nodiscard]] const profile_curve* find(const std::string& gpu, int tp) const {
        auto it = curves_.find({gpu, tp});
        return it == curves_.end() ? nullptr : &it->second;
    }
    void enable_analytical(analytical_fallback f) { fallback_ = f; }
    [[nodiscard]] bool has_fallback() const { return fallback_.has_value(); }
    [[nodiscard]] const std::optional<analytical_fallback>& fallback() const { return fallback_; }

    /// TP degrees measured for a GPU type, increasing.
    [[nodiscard]] std::vector<int> tp_degrees(const std::string& gpu) const {
        std::vector<int> out;
        for (const auto& [key, c] : curves_)
            if (key.first == gpu) out.push_back(key.second);
        return out;
    }
    /// Microbatch sizes measured for a GPU type and TP degree, increasing.
    [[nodiscard]] std::vector<int> measured_mbs(const std::string& gpu, int tp) const {
        const auto* c = find(gpu, tp);
        return c ? c->mbs : std::vector<int>{};
    }
    [[nodiscard]] bool can_answer(const std::string& gpu, int tp) const {
        return find(gpu, tp) != nullptr || fallback_.has_value();
    }

    /// Timing of `layer` on one TP group of `gpu` at microbatch size `mbs`.
    [[nodiscard]] std::pair<layer_timing, timing_source> lookup(const gpu_spec& gpu, int tp, int mbs,
                                                                const model_spec& model, std::size_t layer,
                                                                dtype compute, double state_bytes_per_param) const {
        if (const auto* c = find(gpu.type_name, tp)) {
            if (layer >= c->points.front().size())
                throw model_error("profile for " + gpu.type_name + " TP " + std::to_string(tp) + " has " +
                                  std::to_string(c->points.front().size()) + " layers, model '" + model.name +
                                  "' has " + std::to_string(model.num_layers()));
            return c->at(mbs, layer);
        }
        if (!fallback_)
            throw model_error("no profile for GPU type " + gpu.type_name + " at TP " + std::to_string(tp) +
                              " and no analytical fallback enabled");
        const auto& l = model.layers.at(layer);
        const flop_per_second peak = gpu.peak_flops(compute);
        if (!(peak.value > 0))
            throw model_error("analytical fallback: GPU type " + gpu.type_name + " has no peak FLOP/s for " +
                              std::string(to_string(compute)));
        const seconds upd = bytes{l.params_at(tp) * state_bytes_per_param} / fallback_->update_bandwidth;
        const auto fit = fallback_->efficiency ? std::nullopt : published_efficiency(gpu.type_name, compute);
        if (!fit) {
            const double e = fallback_->efficiency.value_or(analytical_fallback::uncalibrated);
            const seconds fwd = flop{l.flops_fwd * mbs} / (peak * (e * tp));
            return {{fwd, fwd * 2.0, upd}, timing_source::analytical};
        }
        // (w + w_half) / (e_max peak): work at e_max plus an overhead (a layer of no FLOPs has none).
        const double work = l.flops_fwd * mbs / tp;
        const seconds fwd = work > 0 ? flop{work + fit->half_work} / (peak * fit->peak_fraction) : seconds{0};
        return {{fwd, fwd * fit->backward_ratio, upd}, timing_source::analytical};
    }

    /// Checks every stored time is finite and >= 0; the error names the curve and layer.
    void check(const std::string& source = {}) const {
        for (const auto& [key, c] : curves_) {
            const std::string where = key.first + ".tp" + std::to_string(key.second);
            if (c.mbs.empty()) throw input_error(source, where, "no measured microbatch size");
            for (std::size_t i = 0; i < c.points.size(); ++i) {
                if (c.mbs[i] < 1) throw input_error(source, where, "microbatch size must be >= 1");
                if (c.points[i].size() != c.points.front().size())
                    throw input_error(source, where + ".mbs" + std::to_string(c.mbs[i]), "layer count differs between microbatch sizes");
                for (std::size_t l = 0; l < c.points[i].size(); ++l) {
                    const auto& t = c.points[i][l];
                    for (double v : {t.fwd.value, t.bwd.value, t.update.value})
                        if (!std::isfinite(v) || v < 0)
                            throw input_error(source, where + ".mbs" + std::to_string(c.mbs[i]) + ".layer" + std::to_string(l),
                                              "time must be finite and >= 0, got " + std::to_string(v));
                }
            }
        }
    }

    [[nodiscard]] std::size_t size() const { return curves_.size(); }
    /// Every curve, keyed by (GPU type name, TP degree), in key order.
    [[nodiscard]] const std::map<std::pair<std::string, int>, profile_curve>& curves() const { return curves_; }

private:
    std::map<std::pair<std::string, int>, profile_curve> curves_;
    std::optional<analytical_fallback> fallback_;
};

/// AutoHet §III-D (Eq. 5): the time of n consecutive layers composed from measurements of
/// power-of-two layer blocks, `block[i]` being the time of 2^i layers.
inline seconds compose_power_of_two(int n, std::span<const seconds> block) {
    if (n < 0) throw model_error("compose_power_of_two: negative layer count");
    seconds t{0};
    for (std::size_t i = 0; n > 0; ++i, n >>= 1)
        if (n & 1) {
            if (i >= block.size())
                throw model_error("compose_power_of_two: no measurement for 2^" + std::to_string(i) + " layers");
            t += block[i];
        }
    return t;
}

}  // namespace hetplan
