// The Pareto scatter (render/pareto_svg.hpp): one marker per point, the chosen plan ringed,
// labels inside the plot and never over one another, even where points crowd.
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

#include "hetplan/fixtures/example.hpp"
#include "hetplan/render/pareto_svg.hpp"

using namespace hetplan;

namespace {

/// A front point with only what the picture reads: iteration time, cost, GPUs, stages.
ranked_plan point(double iteration, double cost, int gpus, int stages) {
    ranked_plan r;
    r.est.time.iteration = seconds{iteration};
    r.est.money.total = usd{cost};
    pipeline pipe;
    for (int s = 0; s < stages; ++s) pipe.stages.push_back({{}, {worker_group{gpu_type_id{0}, zone_id{0}, 1, 1, 1, 1.0, -1}}});
    pipe.stages.front().workers.front().tp = gpus - (stages - 1);
    r.pl.pipelines.push_back(pipe);
    return r;
}

std::size_t count(const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

/// The labels' boxes as the renderer estimates text (11 px at 6.2 px per character).
std::vector<std::array<double, 4>> label_boxes(const std::string& svg) {
    std::vector<std::array<double, 4>> out;
    for (std::size_t at = svg.find("<text x="); at != std::string::npos; at = svg.find("<text x=", at + 1)) {
        const std::size_t end = svg.find('>', at), close = svg.find('<', end);
        const std::string body = svg.substr(end + 1, close - end - 1);
        if (body.find(" GPUs") == std::string::npos) continue;
        auto attr = [&](const std::string& name) {
            const std::size_t a = svg.find(name + "=\"", at) + name.size() + 2;
            return std::stod(svg.substr(a, svg.find('"', a) - a));
        };
        const double x = attr("x"), y = attr("y");
        out.push_back({x, y - 10, x + 6.2 * double(body.size()), y + 3});
    }
    return out;
}

}  // namespace

TEST_CASE("Pareto scatter: a marker per point, the chosen one ringed, labels apart and inside") {
    const auto in = fixtures::default_planning_example();
    const problem pb = in.as_problem();
    pareto_result f;
    // Crowded: pairs of points a hair apart in both cost and throughput.
    const double costs[] = {0.74, 0.739, 0.70, 0.699, 0.66, 0.61, 0.58, 0.52, 0.519, 0.46, 0.32, 0.31};
    for (int k = 0; k < 12; ++k) f.points.push_back(point(5.4 + 1.3 * k + (k % 2) * 0.01, costs[k], 128 - 8 * k, 1 + k % 5));
    f.complete = true;
    pareto_svg_options opt;
    opt.chosen = 3;
    const std::string svg = pareto_svg(pb, f, {point(5.5, 0.9, 128, 4)}, opt);
    CHECK(svg.rfind("<svg ", 0) == 0);
    CHECK(count(svg, "fill=\"#4e79a7\"") == 12);  // front markers
    CHECK(count(svg, "fill=\"#bbbbbb\"") == 1);   // the other plan
    CHECK(count(svg, "stroke=\"#e15759\"") == 1); // the ring
    CHECK(svg.find("(chosen)") != std::string::npos);
    const auto boxes = label_boxes(svg);
    CHECK(boxes.size() >= 6);  // crowded points may go without a label (the tooltip stays)
    for (std::size_t a = 0; a < boxes.size(); ++a) {
        CHECK(boxes[a][0] >= 0);
        CHECK(boxes[a][2] <= opt.width);
        for (std::size_t b = a + 1; b < boxes.size(); ++b) {
            const bool apart = boxes[a][2] <= boxes[b][0] || boxes[b][2] <= boxes[a][0] || boxes[a][3] <= boxes[b][1] || boxes[b][3] <= boxes[a][1];
            CAPTURE(a);
            CAPTURE(b);
            CHECK(apart);
        }
    }
    // No point: a page that says so.
    CHECK(pareto_svg(pb, pareto_result{}).find("no plan") != std::string::npos);
}
