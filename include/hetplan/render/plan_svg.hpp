#pragma once
// A picture of a plan as one self-contained SVG: the schedule of one iteration as a Gantt chart
// (a row per pipeline stage: forward, backward, communication, optimizer step and idle time)
// and each worker's memory as a stacked bar against its GPU's capacity, GPU types and zones
// labelled. Lengths come from the simulator's breakdown (`estimate`): per stage, the forward
// and backward of one microbatch, its sends, the exposed gradient synchronisation and the
// update; the order of the microbatch blocks is drawn as 1F1B (warm-up forwards, then one
// forward one backward) — a schematic of where the time goes, not a trace.
#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "hetplan/plan/problem.hpp"
#include "hetplan/cost/simulator.hpp"
#include "hetplan/plan/plan.hpp"

namespace hetplan {

struct svg_options {
    double width = 1100;
    std::string title;            ///< first line; empty: model, GPUs and iteration time
    int max_blocks_per_row = 48;  ///< beyond this many microbatches, forward and backward are drawn aggregated
};

namespace detail::svg {

inline std::string escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '<') o += "&lt;";
        else if (c == '>') o += "&gt;";
        else if (c == '&') o += "&amp;";
        else if (c == '"') o += "&quot;";
        else o += c;
    }
    return o;
}

inline std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
}

struct palette {
    static constexpr const char* forward = "#4e79a7";
    static constexpr const char* backward = "#f28e2b";
    static constexpr const char* comm = "#59a14f";
    static constexpr const char* update = "#b07aa1";
    static constexpr const char* idle = "#e6e6e6";
    static constexpr const char* weights = "#4e79a7";
    static constexpr const char* grads = "#f28e2b";
    static constexpr const char* optim = "#e15759";
    static constexpr const char* activ = "#76b7b2";
    static constexpr const char* other = "#9c9c9c";
};

class canvas {
public:
    void rect(double x, double y, double w, double h, const char* fill, const std::string& tip = {}) {
        if (!(w > 0.05) || !(h > 0)) return;
        os_ << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w) << "\" height=\"" << num(h) << "\" fill=\"" << fill
            << "\"";
        if (tip.empty()) os_ << "/>\n";
        else os_ << "><title>" << escape(tip) << "</title></rect>\n";
    }
    void text(double x, double y, const std::string& t, int size = 12, const char* anchor = "start", const char* weight = "normal") {
        os_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-size=\"" << size << "\" text-anchor=\"" << anchor
            << "\" font-weight=\"" << weight << "\">" << escape(t) << "</text>\n";
    }
    void line(double x1, double y1, double x2, double y2, const char* stroke, double width = 1) {
        os_ << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2) << "\" y2=\"" << num(y2) << "\" stroke=\"" << stroke
            << "\" stroke-width=\"" << num(width) << "\"/>\n";
    }
    void circle(double x, double y, double r, const char* fill, const std::string& tip = {}, const char* stroke = nullptr) {
        os_ << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(r) << "\" fill=\"" << fill << "\"";
        if (stroke) os_ << " stroke=\"" << stroke << "\" stroke-width=\"2\"";
        if (tip.empty()) os_ << "/>\n";
        else os_ << "><title>" << escape(tip) << "</title></circle>\n";
    }
    /// Markup the other shapes do not cover (e.g. rotated text), as given.
    void raw(const std::string& markup) { os_ << markup; }
    [[nodiscard]] std::string str() const { return os_.str(); }
    /// The whole page: what was drawn, on white, `width` x `height`.
    [[nodiscard]] std::string document(double width, double height) const {
        std::ostringstream out;
        out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height) << "\" viewBox=\"0 0 "
            << num(width) << " " << num(height) << "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
            << os_.str() << "</svg>\n";
        return out.str();
    }

private:
    std::ostringstream os_;
};

/// "4 x A100-40 TP4 (us-central1-a) + 2 x V100-16 ..." for a stage's workers.
inline std::string describe_workers(const problem& pb, const stage& st) {
    std::map<std::tuple<std::string, int, std::string>, int> count;
    for (const auto& w : st.workers) ++count[{pb.hw.gpu(w.gpu).type_name, w.tp, pb.hw.zone(w.zone).name}];
    std::string out;
    for (const auto& [k, n] : count) {
        const auto& [gpu, tp, zone] = k;
        if (!out.empty()) out += " + ";
        out += std::to_string(n) + " x " + gpu + (tp > 1 ? " TP" + std::to_string(tp) : "") + " (" + zone + ")";
    }
    return out;
}

}  // namespace detail::svg

/// The SVG of a plan and its estimate (simulator<...>::run on the same problem and plan).
[[nodiscard]] inline std::string plan_svg(const problem& pb, const plan& pl, const estimate& est, const svg_options& opt = {}) {
    using namespace detail::svg;
    canvas c;
    const double W = opt.width, left = 270, right = 20, chart = W - left - right;
    const double T = std::max(est.time.iteration.value, 1e-12);
    const double xs = chart / T;
    double y = 28;
    const std::string title = !opt.title.empty() ? opt.title
                                                 : pb.model.name + ", batch " + std::to_string(pb.job.global_batch) + " on " +
                                                       std::to_string(pl.total_gpus()) + " GPUs: " + num(est.time.iteration.value) +
                                                       " s/iteration, " + num(est.money.total.value) + " USD/iteration";
    c.text(12, y, title, 16, "start", "bold");
    y += 22;
    c.text(12, y, "One iteration per pipeline stage (lengths from the simulator; microbatch order drawn as 1F1B)", 12);
    y += 14;
    // Colour keys: a square and a name each, in a row.
    auto legend = [&](std::initializer_list<std::pair<const char*, const char*>> items) {
        double lx = 12;
        for (auto [name, col] : items) {
            c.rect(lx, y, 12, 12, col);
            c.text(lx + 16, y + 10, name, 11);
            lx += 24 + 7.0 * static_cast<double>(std::string(name).size());
        }
        y += 24;
    };
    legend({{"forward", palette::forward}, {"backward", palette::backward}, {"communication", palette::comm},
            {"optimizer step", palette::update}, {"idle", palette::idle}});
    // Time axis.
    const int ticks = 5;
    for (int k = 0; k <= ticks; ++k) {
        const double t = T * k / ticks, x = left + t * xs;
        c.line(x, y, x, y + 6, "#555");
        c.text(x, y - 2, num(t) + " s", 10, "middle");
    }
    y += 10;
    const double row_h = 18, gap = 6;
    std::size_t idx = 0;
    for (std::size_t p = 0; p < pl.pipelines.size(); ++p) {
        const auto& pipe = pl.pipelines[p];
        const std::size_t S = pipe.stages.size();
        const pipeline_time* pt = p < est.time.pipelines.size() ? &est.time.pipelines[p] : nullptr;
        const double phase = pt ? pt->total.value : est.time.pipeline.value;
        // Warm-up: a stage starts once one microbatch has passed every stage before it.
        double lead = 0;
        for (std::size_t s = 0; s < S; ++s, ++idx) {
            const stage_time st = idx < est.time.stages.size() ? est.time.stages[idx] : stage_time{};
            int m = 1;  // the stage's most microbatches on one GPU
            for (const auto& w : pipe.stages[s].workers) m = std::max(m, w.num_microbatches);
            double f = (st.forward.value > 0 ? st.forward : st.compute * (1.0 / 3)).value;
            double b = std::max(st.compute.value - f, 0.0), x2 = st.p2p.value;
            // The stage's busy time as its model reports it (Zorse's groups: the busiest GPU
            // class, which need not be the one with the most microbatches); blocks scaled to it.
            const double drawn = m * (f + b + x2);
            const double busy = st.busy.value > 0 ? st.busy.value : drawn;
            if (drawn > 0) f *= busy / drawn, b *= busy / drawn, x2 *= busy / drawn;
            const double start = std::clamp(lead, 0.0, std::max(phase - busy, 0.0));
            const std::string label = "p" + std::to_string(p) + " s" + std::to_string(s) + ": " + describe_workers(pb, pipe.stages[s]);
            c.text(12, y + 13, label.size() > 44 ? label.substr(0, 41) + "..." : label, 11);
            c.rect(left, y, T * xs, row_h, palette::idle, "idle");
            double x = left + start * xs;
            auto block = [&](double len, const char* col, const std::string& tip) {
                c.rect(x, y, len * xs, row_h, col, tip);
                x += len * xs;
            };
            if (m <= opt.max_blocks_per_row) {
                const int warm = std::min<int>(m, static_cast<int>(S - s));
                int fw = 0, bw = 0;
                auto fwd = [&] { block(f, palette::forward, "forward, microbatch " + std::to_string(fw++)); block(x2 / 2, palette::comm, "send"); };
                auto bwd = [&] { block(b, palette::backward, "backward, microbatch " + std::to_string(bw++)); block(x2 / 2, palette::comm, "send"); };
                for (int k = 0; k < warm; ++k) fwd();
                while (bw < m) {
                    bwd();
                    if (fw < m) fwd();
                }
            } else {
                block(m * f, palette::forward, std::to_string(m) + " forwards");
                block(m * b, palette::backward, std::to_string(m) + " backwards");
                block(m * x2, palette::comm, "sends");
            }
            x = left + std::max(phase, start + busy) * xs;
            block(st.sync.value, palette::comm, "gradient synchronisation " + num(st.sync.value) + " s");
            block(st.update.value, palette::update, "optimizer step " + num(st.update.value) + " s");
            y += row_h + gap;
            lead += f + x2 / 2;
        }
    }
    // Memory per worker group (alike ones merged), against capacity.
    y += 18;
    c.text(12, y, "Memory per GPU (GB) against capacity", 14, "start", "bold");
    y += 8;
    std::vector<std::pair<const worker_memory*, int>> bars;
    std::vector<std::string> names;
    for (const auto& w : est.memory.workers) {
        const auto& wg = pl.pipelines[w.pipeline].stages[w.stage].workers[w.worker];
        const std::string name = "p" + std::to_string(w.pipeline) + " s" + std::to_string(w.stage) + " " + pb.hw.gpu(wg.gpu).type_name +
                                 (wg.tp > 1 ? " TP" + std::to_string(wg.tp) : "") + " (" + pb.hw.zone(wg.zone).name + ")";
        auto same = [&](std::size_t k) {
            const worker_memory& o = *bars[k].first;
            return names[k] == name && std::abs(o.total.value - w.total.value) < 1e6 && o.capacity == w.capacity;
        };
        std::size_t k = 0;
        while (k < bars.size() && !same(k)) ++k;
        if (k < bars.size()) ++bars[k].second;
        else bars.emplace_back(&w, 1), names.push_back(name);
    }
    double most = 1;
    for (const auto& [w, n] : bars) most = std::max({most, w->capacity.value, w->total.value});
    const double ms = chart / most, bar_h = 14;
    y += 8;
    for (std::size_t k = 0; k < bars.size(); ++k) {
        const worker_memory& w = *bars[k].first;
        c.text(12, y + 11, (bars[k].second > 1 ? std::to_string(bars[k].second) + " x " : "") + names[k], 11);
        double x = left;
        for (auto [part, col, what] : {std::tuple{w.weights, palette::weights, "weights"}, {w.gradients, palette::grads, "gradients"},
                                       {w.optimizer, palette::optim, "optimizer state"}, {w.activations, palette::activ, "activations"},
                                       {w.buffers + w.overhead, palette::other, "buffers and overhead"}}) {
            c.rect(x, y, part.value * ms, bar_h, col, std::string(what) + " " + num(part.value / 1e9) + " GB");
            x += part.value * ms;
        }
        const double cap = left + w.capacity.value * ms;
        c.line(cap, y - 2, cap, y + bar_h + 2, w.fits() ? "#222" : "#d00", 2);
        c.text(left + w.total.value * ms + 4, y + 11, num(w.total.value / 1e9) + " of " + num(w.capacity.value / 1e9) + (w.fits() ? "" : " OOM"), 10);
        y += bar_h + 5;
    }
    y += 10;
    legend({{"weights", palette::weights}, {"gradients", palette::grads}, {"optimizer state", palette::optim},
            {"activations", palette::activ}, {"buffers and overhead", palette::other}});
    return c.document(W, y);
}

}  // namespace hetplan
