#pragma once
// The Pareto front of throughput against USD per iteration, or against GPUs, as one
// self-contained SVG scatter (issue 21): every plan given as a grey dot, the front's points joined
// by its staircase (each point is the fastest plan at its price, or on its GPUs), the chosen plan
// ringed, axes with ticks, and a label per front point (GPUs or USD, and pipeline depth) placed
// where it overlaps no other label.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "hetplan/planners/pareto.hpp"
#include "hetplan/render/plan_svg.hpp"

namespace hetplan {

struct pareto_svg_options {
    double width = 760, height = 480;
    std::string title;  ///< empty: model, batch and the number of points
    std::ptrdiff_t chosen = 0;  ///< index into the front of the plan to ring; -1: none
    pareto_axis axis = pareto_axis::money;  ///< the horizontal axis: USD per iteration, or GPUs
};

namespace detail::svg {

/// Round tick steps (1, 2 or 5 times a power of ten) covering [lo, hi] with about `n` ticks.
inline std::vector<double> ticks(double lo, double hi, int n) {
    const double span = std::max(hi - lo, 1e-12), raw = span / std::max(n, 1);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * mag >= raw) {
            step = m * mag;
            break;
        }
    std::vector<double> out;
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    return out;
}

inline std::string fmt(double v, const char* f) {
    char b[48];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

}  // namespace detail::svg

/// The scatter of `front` (and of `others`, plans the searches also priced) against cost.
[[nodiscard]] inline std::string pareto_svg(const problem& pb, const pareto_result& front, const std::vector<ranked_plan>& others = {},
                                            const pareto_svg_options& opt = {}) {
    using namespace detail::svg;
    const bool by_gpus = opt.axis == pareto_axis::gpus;
    auto x_of = [by_gpus](const ranked_plan& p) { return by_gpus ? double(p.gpus()) : p.cost().value; };
    canvas c;
    const double W = opt.width, H = opt.height, left = 78, right = 24, top = 64, bottom = 56;
    const double cw = W - left - right, ch = H - top - bottom;
    double x_lo = 1e300, x_hi = -1e300, y_lo = 1e300, y_hi = -1e300;
    auto extend = [&](const ranked_plan& p) {
        x_lo = std::min(x_lo, x_of(p)), x_hi = std::max(x_hi, x_of(p));
        y_lo = std::min(y_lo, p.throughput()), y_hi = std::max(y_hi, p.throughput());
    };
    for (const auto& p : front.points) extend(p);
    for (const auto& p : others) extend(p);
    const std::string title = !opt.title.empty() ? opt.title
                                                 : pb.model.name + ", batch " + std::to_string(pb.job.global_batch) + ": " +
                                                       std::to_string(front.points.size()) + " Pareto-optimal plans" +
                                                       (front.complete ? "" : " (front not complete)");
    c.text(12, 26, title, 16, "start", "bold");
    c.text(12, 44, std::string(by_gpus ? "Each point the fastest plan on at most its GPUs" : "Each point the fastest plan at its price") +
                       (others.empty() ? "" : "; grey: other plans priced"), 12);
    if (front.points.empty() && others.empty()) {
        c.text(left, top + ch / 2, "no plan", 14);
    } else {
        // Axes from zero-padded ranges, so that ratios read right.
        const double xpad = std::max((x_hi - x_lo) * 0.08, x_hi * 0.02 + 1e-12), ypad = std::max((y_hi - y_lo) * 0.08, y_hi * 0.02 + 1e-12);
        x_lo = std::max(0.0, x_lo - xpad), x_hi += xpad, y_lo = std::max(0.0, y_lo - ypad), y_hi += ypad;
        auto X = [&](double cost) { return left + (cost - x_lo) / (x_hi - x_lo) * cw; };
        auto Y = [&](double thr) { return top + ch - (thr - y_lo) / (y_hi - y_lo) * ch; };
        c.line(left, top + ch, left + cw, top + ch, "#333");
        c.line(left, top, left, top + ch, "#333");
        const char* xf = by_gpus || x_hi >= 10 ? "%.0f" : x_hi < 0.1 ? "%.4f" : "%.2f";
        const char* yf = y_hi < 0.1 ? "%.4f" : y_hi < 10 ? "%.2f" : "%.0f";
        for (double v : ticks(x_lo, x_hi, 6)) {
            if (by_gpus && std::abs(v - std::round(v)) > 1e-6) continue;  // whole GPUs only
            c.line(X(v), top + ch, X(v), top + ch + 5, "#333");
            c.text(X(v), top + ch + 18, fmt(v, xf), 11, "middle");
        }
        for (double v : ticks(y_lo, y_hi, 5)) {
            c.line(left - 5, Y(v), left, Y(v), "#333");
            c.text(left - 8, Y(v) + 4, fmt(v, yf), 11, "end");
        }
        c.text(left + cw / 2, H - 12, by_gpus ? "GPUs" : "USD per iteration", 12, "middle");
        c.raw("<text x=\"16\" y=\"" + num(top + ch / 2) + "\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 16 " +
              num(top + ch / 2) + ")\">iterations per second</text>\n");
        for (const auto& p : others)
            c.circle(X(x_of(p)), Y(p.throughput()), 3, "#bbbbbb",
                     fmt(p.iteration().value, "%.3f s/iteration, ") + fmt(p.cost().value, "%.4f USD/iteration, ") + std::to_string(p.gpus()) + " GPUs");
        // The staircase: from each point, cheaper plans (plans on fewer GPUs) are slower.
        const char* front_col = "#4e79a7";
        for (std::size_t k = 0; k + 1 < front.points.size(); ++k) {
            const auto &a = front.points[k], &b = front.points[k + 1];
            c.line(X(x_of(a)), Y(a.throughput()), X(x_of(a)), Y(b.throughput()), front_col, 1.5);
            c.line(X(x_of(a)), Y(b.throughput()), X(x_of(b)), Y(b.throughput()), front_col, 1.5);
        }
        // Labels: right of the point, else left, else above, else below; never over another
        // label (11 px text at about 6.2 px per character).
        std::vector<std::array<double, 4>> boxes;  // x0, y0, x1, y1
        auto free_at = [&](double x0, double y0, double x1, double y1) {
            if (x0 < left || x1 > W - 4 || y0 < top - 8 || y1 > top + ch) return false;
            return std::none_of(boxes.begin(), boxes.end(), [&](const auto& b) { return x0 < b[2] && b[0] < x1 && y0 < b[3] && b[1] < y1; });
        };
        for (std::size_t k = 0; k < front.points.size(); ++k) {
            const auto& p = front.points[k];
            const double px = X(x_of(p)), py = Y(p.throughput());
            const bool chosen = opt.chosen >= 0 && std::size_t(opt.chosen) == k;
            if (chosen) c.circle(px, py, 9, "none", "the chosen plan", "#e15759");
            c.circle(px, py, 4.5, front_col,
                     fmt(p.iteration().value, "%.3f s/iteration, ") + fmt(p.cost().value, "%.4f USD/iteration, ") + std::to_string(p.gpus()) + " GPUs");
            const std::string label = (by_gpus ? fmt(p.cost().value, "%.3g USD") : std::to_string(p.gpus()) + " GPUs") +
                                      (p.pl.pipelines.empty() ? "" : ", PP" + std::to_string(p.pl.pipelines.front().stages.size())) +
                                      (chosen ? " (chosen)" : "");
            const double w = 6.2 * double(label.size()), h = 13;
            for (auto [x0, y0, anchor] : {std::tuple{px + 8, py - 2 - h / 2, "start"}, std::tuple{px - 8 - w, py - 2 - h / 2, "start"},
                                          std::tuple{px - w / 2, py - 10 - h, "start"}, std::tuple{px - w / 2, py + 8, "start"}}) {
                if (!free_at(x0, y0, x0 + w, y0 + h)) continue;
                boxes.push_back({x0, y0, x0 + w, y0 + h});
                c.text(x0, y0 + h - 3, label, 11, anchor);
                break;
            }
        }
    }
    return c.document(W, H);
}

}  // namespace hetplan
