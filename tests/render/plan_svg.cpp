// The plan picture (render/plan_svg.hpp): well-formed, one row per stage, block lengths from the
// simulator's breakdown, names escaped.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "hetplan/hetplan.hpp"
#include "hetplan/planners/registry.hpp"
#include "hetplan/render/plan_svg.hpp"

using namespace hetplan;

namespace {
/// The rects of an SVG that carry a tooltip: (y, width, tooltip), in drawing order. (A plain
/// scan: std::regex trips GCC 12's -Wmaybe-uninitialized under the sanitizers.)
struct tipped_rect {
    std::string y;
    double width = 0;
    std::string tip;
};
std::vector<tipped_rect> tipped_rects(const std::string& svg) {
    auto attr = [&](std::size_t from, const std::string& name) {
        const std::size_t a = svg.find(name + "=\"", from) + name.size() + 2;
        return svg.substr(a, svg.find('"', a) - a);
    };
    std::vector<tipped_rect> out;
    for (std::size_t at = svg.find("<rect x="); at != std::string::npos; at = svg.find("<rect x=", at + 1)) {
        const std::size_t end = svg.find('>', at);
        if (svg.compare(end + 1, 7, "<title>") != 0) continue;
        const std::size_t t = end + 8;
        out.push_back({attr(at, "y"), std::stod(attr(at, "width")), svg.substr(t, svg.find('<', t) - t)});
    }
    return out;
}
/// Sum of the widths of the rects at height y whose tooltip starts with `what`.
double width_of(const std::vector<tipped_rect>& rects, const std::string& what, const std::string& y) {
    double w = 0;
    for (const auto& r : rects)
        if (r.y == y && r.tip.rfind(what, 0) == 0) w += r.width;
    return w;
}
}  // namespace

TEST_CASE("plan svg: the built-in example's two stages, lengths from the estimate") {
    auto in = fixtures::default_example();
    const problem pb = in.as_problem();
    const auto est = simulator<>{}.run(pb, in.example_plan);
    svg_options opt;
    opt.min_block_px = 0;  // every microbatch drawn
    const std::string svg = plan_svg(pb, in.example_plan, est, opt);
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    CHECK(svg.find("</svg>\n") == svg.size() - 7);
    CHECK(svg.find("p0 s0: 2 x V100-16 TP4 (us-central1-a)") != std::string::npos);
    CHECK(svg.find("p0 s1: 2 x A100-40 TP4 (us-central1-a)") != std::string::npos);
    // Find each stage row's y from its first forward block, then compare the drawn forward and
    // backward lengths with microbatches x the stage's per-microbatch times (scale: a row's idle
    // background spans the iteration, or the schedule where it runs longer).
    const schedule_timeline tl = make_schedule_timeline(in.example_plan, est);
    double T = est.time.iteration.value;
    for (const auto& b : tl.blocks) T = std::max(T, b.end);
    double chart = 0;
    for (const auto& r : tipped_rects(svg))
        if (r.tip == "idle") chart = r.width;
    REQUIRE(chart > 0);
    const double scale = chart / T;
    const int m = in.example_plan.pipelines[0].stages[0].workers[0].num_microbatches;
    const auto rects = tipped_rects(svg);
    std::vector<std::string> rows;  // y of each row with forward blocks, in drawing order
    for (const auto& r : rects)
        if (r.tip.rfind("forward", 0) == 0 && (rows.empty() || rows.back() != r.y)) rows.push_back(r.y);
    REQUIRE(rows.size() == est.time.stages.size());
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const auto& st = est.time.stages[k];
        CHECK(width_of(rects, "forward", rows[k]) == doctest::Approx(m * st.forward.value * scale).epsilon(0.01));
        CHECK(width_of(rects, "backward", rows[k]) == doctest::Approx(m * (st.compute - st.forward).value * scale).epsilon(0.01));
        CHECK(st.forward.value > 0);
        CHECK(st.forward < st.compute);
    }
    // Names are escaped.
    in.hw.gpus[0].type_name = "A<100>&";
    const std::string esc = plan_svg(in.as_problem(), in.example_plan, est, opt);
    CHECK(esc.find("A&lt;100&gt;&amp;") != std::string::npos);
    CHECK(esc.find("A<100>") == std::string::npos);
}

TEST_CASE("plan svg: Zorse's ministages and Cephalo's FSDP units drawn as their models place them") {
    const auto in = fixtures::default_example();
    const problem pb = in.as_problem();
    for (const char* name : {"zorse", "cephalo"}) {
        CAPTURE(name);
        any_planner planner = planner_named(name);
        const plan_result r = planner.plan(pb);
        REQUIRE(r.best());
        const estimate& est = r.best()->est;
        REQUIRE_FALSE(est.time.spans.empty());
        svg_options opt;
        opt.min_block_px = 0;  // every span drawn
        const std::string svg = plan_svg(pb, r.best()->pl, est, opt);
        CHECK(svg.find("over all its microbatches, as the time model places them") != std::string::npos);
        // Per stage row, the drawn work (compute and what is not hidden) is the spans' lengths,
        // and no gradient sync follows (it is inside the spans).
        const schedule_timeline tl = make_schedule_timeline(r.best()->pl, est);
        CHECK(tl.exact);
        double T = est.time.iteration.value;
        for (const auto& b : tl.blocks) T = std::max(T, b.end);
        const auto rects = tipped_rects(svg);
        double chart = 0;
        for (const auto& rc : rects)
            if (rc.tip == "idle") chart = rc.width;
        REQUIRE(chart > 0);
        std::vector<std::string> rows;
        for (const auto& rc : rects)
            if (rc.tip.rfind("forward", 0) == 0 && (rows.empty() || rows.back() != rc.y)) rows.push_back(rc.y);
        REQUIRE(rows.size() == r.best()->pl.pipelines[0].stages.size());
        for (std::size_t s = 0; s < rows.size(); ++s) {
            double spans = 0, busy = 0;
            for (const auto& w : est.time.spans)
                if (w.stage == s) spans += (w.end - w.start).value, busy += w.compute.value;
            const double drawn = width_of(rects, "forward", rows[s]) + width_of(rects, "backward", rows[s]);
            CHECK(drawn == doctest::Approx(busy * chart / T).epsilon(0.01));
            double exposed = 0;
            for (const auto& rc : rects)
                if (rc.y == rows[s] && rc.tip.find("not hidden by compute") != std::string::npos) exposed += rc.width;
            CHECK(drawn + exposed == doctest::Approx(spans * chart / T).epsilon(0.01));
        }
        CHECK(svg.find("gradient synchronisation") == std::string::npos);
    }
}
