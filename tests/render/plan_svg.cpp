// The plan picture (render/plan_svg.hpp): well-formed, one row per stage, block lengths from the
// simulator's breakdown, names escaped.
#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <vector>

#include "hetplan/hetplan.hpp"
#include "hetplan/render/plan_svg.hpp"

using namespace hetplan;

namespace {
/// Sum of the widths of the rects whose tooltip starts with `what` and lie at height y.
double width_of(const std::string& svg, const std::string& what, const std::string& y) {
    const std::regex rect("<rect x=\"[0-9.]+\" y=\"" + y + "\" width=\"([0-9.]+)\" height=\"[0-9.]+\" fill=\"[^\"]+\"><title>" + what);
    double w = 0;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) w += std::stod((*it)[1]);
    return w;
}
}  // namespace

TEST_CASE("plan svg: the built-in example's two stages, lengths from the estimate") {
    auto in = fixtures::default_example();
    const problem pb = in.as_problem();
    const auto est = simulator<>{}.run(pb, in.example_plan);
    svg_options opt;
    opt.max_blocks_per_row = 1000;  // every microbatch drawn
    const std::string svg = plan_svg(pb, in.example_plan, est, opt);
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    CHECK(svg.find("</svg>\n") == svg.size() - 7);
    CHECK(svg.find("p0 s0: 2 x V100-16 TP4 (us-central1-a)") != std::string::npos);
    CHECK(svg.find("p0 s1: 2 x A100-40 TP4 (us-central1-a)") != std::string::npos);
    // Find each stage row's y from its first forward block, then compare the drawn forward and
    // backward lengths with microbatches x the stage's per-microbatch times (scale: the chart
    // spans the iteration).
    const double chart = opt.width - 270 - 20, scale = chart / est.time.iteration.value;
    const int m = in.example_plan.pipelines[0].stages[0].workers[0].num_microbatches;
    std::vector<std::string> rows;  // y of each row with forward blocks, in drawing order
    const std::regex fwd("y=\"([0-9.]+)\" width=\"[0-9.]+\" height=\"18.00\" fill=\"[^\"]+\"><title>forward");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), fwd); it != std::sregex_iterator(); ++it)
        if (rows.empty() || rows.back() != (*it)[1].str()) rows.push_back((*it)[1]);
    REQUIRE(rows.size() == est.time.stages.size());
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const auto& st = est.time.stages[k];
        CHECK(width_of(svg, "forward", rows[k]) == doctest::Approx(m * st.forward.value * scale).epsilon(0.01));
        CHECK(width_of(svg, "backward", rows[k]) == doctest::Approx(m * (st.compute - st.forward).value * scale).epsilon(0.01));
        CHECK(st.forward.value > 0);
        CHECK(st.forward < st.compute);
    }
    // Names are escaped.
    in.hw.gpus[0].type_name = "A<100>&";
    const std::string esc = plan_svg(in.as_problem(), in.example_plan, est, opt);
    CHECK(esc.find("A&lt;100&gt;&amp;") != std::string::npos);
    CHECK(esc.find("A<100>") == std::string::npos);
}
