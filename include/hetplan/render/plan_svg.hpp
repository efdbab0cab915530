#pragma once
// A picture of a plan as one self-contained SVG: one iteration as a timeline (a row per pipeline
// stage: each microbatch's forward and backward where the schedule places them, so the bubbles
// show, then gradient synchronisation and the optimizer step; cost/schedule_timeline.hpp) and
// each worker's memory as a stacked bar against its GPU's capacity, GPU types and zones
// labelled. Lengths come from the simulator's breakdown (`estimate`); labels are never cut.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "hetplan/plan/problem.hpp"
#include "hetplan/cost/schedule_timeline.hpp"
#include "hetplan/cost/simulator.hpp"
#include "hetplan/plan/plan.hpp"

namespace hetplan {

struct svg_options {
    double width = 1100;
    std::string title;            ///< first line; empty: model, GPUs and iteration time
    /// Touching microbatch blocks narrower than this (pixels) are drawn as one block (a run of
    /// forwards and backwards); 0 draws every block.
    double min_block_px = 3;
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
    static constexpr const char* mixed = "#c9a26b";
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

/// About how wide `chars` characters of sans-serif text at `px` pixels are (an upper estimate:
/// digits and lower case run 0.5-0.56 em).
inline double text_width(std::size_t chars, double px) { return 0.58 * px * double(chars); }

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
    // Row labels are never cut: the label column is as wide as the longest (11 px text at
    // about 6.2 px per character), and the page wider where that leaves the chart too little.
    std::vector<std::string> row_labels;
    for (std::size_t p = 0; p < pl.pipelines.size(); ++p)
        for (std::size_t s = 0; s < pl.pipelines[p].stages.size(); ++s)
            row_labels.push_back("p" + std::to_string(p) + " s" + std::to_string(s) + ": " + describe_workers(pb, pl.pipelines[p].stages[s]));
    std::size_t longest = 0;
    for (const auto& l : row_labels) longest = std::max(longest, l.size());
    for (const auto& w : est.memory.workers) {  // the memory bars' names (below), with a "N x " prefix
        const auto& wg = pl.pipelines[w.pipeline].stages[w.stage].workers[w.worker];
        longest = std::max(longest, 12 + pb.hw.gpu(wg.gpu).type_name.size() + pb.hw.zone(wg.zone).name.size() + 16);
    }
    const double left = std::max(270.0, 12 + text_width(longest, 11) + 16), right = 20;
    const double W = std::max(opt.width, left + 560 + right), chart = W - left - right;
    double y = 28;
    const std::string title = !opt.title.empty() ? opt.title
                                                 : pb.model.name + ", batch " + std::to_string(pb.job.global_batch) + " on " +
                                                       std::to_string(pl.total_gpus()) + " GPUs: " + num(est.time.iteration.value) +
                                                       " s/iteration, " + num(est.money.total.value) + " USD/iteration";
    c.text(12, y, title, 16, "start", "bold");
    y += 22;
    const schedule_timeline tl = make_schedule_timeline(pl, est);
    // Zorse's ministages and Cephalo's FSDP units: pieces of a stage, each run for every microbatch.
    const bool spans = !est.time.spans.empty();
    const bool layered = pl.schedule == schedule_kind::layered_gradient_accumulation;
    const std::string piece = layered ? "layer (FSDP unit)" : "ministage", pieces = layered ? "layers (FSDP units)" : "ministages";
    c.text(12, y,
           spans      ? "One iteration per stage: the forward and backward of each " + piece + " over all its microbatches, as the time model places them, " +
                       "then the optimizer step"
           : tl.exact ? "One iteration per pipeline stage: each microbatch's forward and backward as " + std::string(to_string(pl.schedule)) +
                            " places them (lengths from the simulator), then gradient sync and the optimizer step"
                      : "One iteration per pipeline stage: all microbatches' work as one block (" + std::string(to_string(pl.schedule)) +
                            " has no per-microbatch order in its model), then gradient sync and the optimizer step",
           12);
    y += 14;
    // Where the schedule ends before or after the time model's pipeline phase (Sailor's
    // warm-up + (M - 1) x straggler is an estimate of the schedule), sync starts at the model's.
    double schedule_end = 0;
    for (double e : tl.pipeline_end) schedule_end = std::max(schedule_end, e);
    const bool apart = tl.exact && std::abs(schedule_end - tl.pipeline_phase) > 0.005 * std::max(tl.pipeline_phase, 1e-12);
    if (apart) {
        c.text(12, y + 2,
               "The schedule's last backward ends at " + num(schedule_end) + " s; the time model's pipeline phase at " + num(tl.pipeline_phase) + " s (dashed)" +
                   (tl.pipeline_phase >= schedule_end ? (spans ? ", where the optimizer step starts" : ", where gradient sync starts")
                                                      : (spans ? "; the optimizer step starts when the schedule ends" : "; gradient sync starts when the schedule ends")),
               12);
        y += 16;
    }
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
    legend({{"forward", palette::forward}, {"backward", palette::backward}, {"forward + backward, too narrow apart", palette::mixed},
            {spans ? "communication not hidden, or waiting" : "communication", palette::comm}, {"optimizer step", palette::update}, {"idle", palette::idle}});
    // Time axis: the model's iteration, or the timeline's end where the schedule runs longer.
    double T = std::max(est.time.iteration.value, 1e-12);
    for (const auto& b : tl.blocks) T = std::max(T, b.end);
    const double xs = chart / T;
    const int ticks = 5;
    for (int k = 0; k <= ticks; ++k) {
        const double t = T * k / ticks, x = left + t * xs;
        c.line(x, y, x, y + 6, "#555");
        c.text(x, y - 2, num(t) + " s", 10, ticks == k ? "end" : k == 0 ? "start" : "middle");
    }
    y += 10;
    const double row_h = 18, gap = 6, rows_top = y;
    std::size_t at = 0, row = 0;  // tl.blocks is by pipeline, stage, start
    for (std::size_t p = 0; p < pl.pipelines.size(); ++p)
        for (std::size_t s = 0; s < pl.pipelines[p].stages.size(); ++s) {
            c.text(12, y + 13, row_labels[row++], 11);
            c.rect(left, y, T * xs, row_h, palette::idle, "idle");
            // Runs of touching microbatch blocks too narrow to draw apart become one block.
            for (; at < tl.blocks.size() && tl.blocks[at].pipeline == p && tl.blocks[at].stage == s;) {
                const timeline_block& b = tl.blocks[at];
                auto work = [&](const timeline_block& k) {
                    return k.kind == block_kind::forward || k.kind == block_kind::backward || k.kind == block_kind::exposed;
                };
                if (work(b)) {
                    std::size_t e = at + 1;
                    double stop = b.end;
                    while (e < tl.blocks.size() && tl.blocks[e].pipeline == p && tl.blocks[e].stage == s && work(tl.blocks[e]) &&
                           (tl.blocks[e].start - stop) * xs < 0.5 && (tl.blocks[e].end - tl.blocks[e].start) * xs < opt.min_block_px &&
                           (b.end - b.start) * xs < opt.min_block_px)
                        stop = tl.blocks[e++].end;
                    if (e > at + 1) {
                        // 1F1B interleaves microbatches (F3 B0 F4 B1 ...); spans are pieces of the stage.
                        const bool by_part = b.part >= 0;
                        int lo = by_part ? b.part : b.microbatch, hi = lo;
                        for (std::size_t k = at; k < e; ++k) {
                            const int i = by_part ? tl.blocks[k].part : tl.blocks[k].microbatch;
                            lo = std::min(lo, i), hi = std::max(hi, i);
                        }
                        c.rect(left + b.start * xs, y, (stop - b.start) * xs, row_h, palette::mixed,
                               (by_part ? pieces + " " : std::string("microbatches ")) + std::to_string(lo) + " to " + std::to_string(hi) + ", " +
                                   (by_part ? "their work" : "forwards and backwards") + ", " + num(b.start) + "-" + num(stop) + " s");
                        at = e;
                        continue;
                    }
                }
                const char* col = b.kind == block_kind::forward ? palette::forward : b.kind == block_kind::backward ? palette::backward
                                  : b.kind == block_kind::sync || b.kind == block_kind::exposed                      ? palette::comm
                                  : b.kind == block_kind::update                                                     ? palette::update
                                                                                                                     : palette::mixed;
                const std::string of = b.part >= 0 ? piece + " " + std::to_string(b.part) : "microbatch " + std::to_string(b.microbatch);
                const std::string what = b.kind == block_kind::forward    ? "forward, " + of + (b.part >= 0 ? ", every microbatch" : "")
                                         : b.kind == block_kind::backward ? "backward, " + of + (b.part >= 0 ? ", every microbatch" : "")
                                         : b.kind == block_kind::exposed  ? of + ": communication not hidden by compute, or waiting for inputs"
                                         : b.kind == block_kind::sync     ? "gradient synchronisation"
                                         : b.kind == block_kind::update   ? "optimizer step"
                                                                          : "every microbatch's forward, backward and sends";
                c.rect(left + b.start * xs, y, (b.end - b.start) * xs, row_h, col, what + ", " + num(b.start) + "-" + num(b.end) + " s");
                ++at;
            }
            y += row_h + gap;
        }
    if (apart)
        c.raw("<line x1=\"" + num(left + tl.pipeline_phase * xs) + "\" y1=\"" + num(rows_top - 2) + "\" x2=\"" + num(left + tl.pipeline_phase * xs) +
              "\" y2=\"" + num(y - gap + 2) + "\" stroke=\"#222\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\"/>\n");
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
    const double ms = (chart - text_width(22, 10)) / most, bar_h = 14;  // room for "total of capacity OOM" after the longest bar
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
