// One iteration as a timeline of microbatches (cost/schedule_timeline.hpp): the makespan of equal
// stages by hand, the schedules' dependencies and in-flight limits on uneven stages, and the
// aggregated form for schedules without a per-microbatch order.
#include <doctest/doctest.h>

#include <map>
#include <tuple>
#include <vector>

#include "hetplan/cost/schedule_timeline.hpp"

using namespace hetplan;

namespace {

/// A pipeline of S stages, each one worker running M microbatches, with per-stage forward,
/// backward and p2p times (seconds per microbatch), the pipeline term `phase` and sync 0.5.
std::pair<plan, estimate> pipeline_of(schedule_kind k, int M, const std::vector<std::tuple<double, double, double>>& fbp, double phase) {
    plan pl;
    pl.schedule = k;
    pl.pipelines.emplace_back();
    estimate e;
    for (std::size_t s = 0; s < fbp.size(); ++s) {
        pl.pipelines[0].stages.push_back({{}, {worker_group{gpu_type_id{0}, zone_id{0}, 1, 1, M, 1.0, -1}}});
        const auto [f, b, p] = fbp[s];
        stage_time t;
        t.stage = s;
        t.forward = seconds{f};
        t.compute = seconds{f + b};
        t.p2p = seconds{p};
        t.sync = seconds{0.5};
        t.update = seconds{0.25};
        e.time.stages.push_back(t);
    }
    e.time.pipeline = seconds{phase};
    return {pl, e};
}

}  // namespace

TEST_CASE("schedule timeline: equal stages take (M + S - 1)(f + b) in 1F1B and GPipe alike") {
    // Hand calculation: 4 stages, 8 microbatches, forward 1 s, backward 2 s, no p2p. The last
    // stage's first forward starts at 3 s; with equal stages both schedules keep every stage busy
    // for M (f + b) after its warm-up of s forwards and before its cool-down, so the first stage
    // ends at (M + S - 1)(f + b) = 11 x 3 = 33 s.
    for (schedule_kind k : {schedule_kind::one_f_one_b, schedule_kind::gpipe}) {
        const auto [pl, e] = pipeline_of(k, 8, {{1, 2, 0}, {1, 2, 0}, {1, 2, 0}, {1, 2, 0}}, 33);
        const schedule_timeline tl = make_schedule_timeline(pl, e);
        CHECK(tl.exact);
        REQUIRE(tl.pipeline_end.size() == 1);
        CHECK(tl.pipeline_end[0] == doctest::Approx(33));
        std::size_t computes = 0;
        for (const auto& b : tl.blocks) computes += b.kind == block_kind::forward || b.kind == block_kind::backward;
        CHECK(computes == 2 * 4 * 8);
        // Sync then update after the pipeline phase, on every stage.
        for (const auto& b : tl.blocks) {
            if (b.kind == block_kind::sync) {
                CHECK(b.start == doctest::Approx(33));
                CHECK(b.end == doctest::Approx(33.5));
            }
            if (b.kind == block_kind::update) CHECK(b.start == doctest::Approx(33.5));
        }
    }
}

TEST_CASE("schedule timeline: dependencies, one block at a time, and 1F1B's in-flight limit, on uneven stages") {
    const std::vector<std::tuple<double, double, double>> stages = {{0.3, 0.7, 0.1}, {1.1, 2.0, 0.2}, {0.2, 0.5, 0.05}, {0.6, 1.3, 0.1}, {0.9, 1.6, 0}};
    for (schedule_kind k : {schedule_kind::one_f_one_b, schedule_kind::gpipe})
        for (int M : {1, 3, 12}) {
            CAPTURE(M);
            const auto [pl, e] = pipeline_of(k, M, stages, 1.0);
            const schedule_timeline tl = make_schedule_timeline(pl, e);
            std::map<std::tuple<std::size_t, int, bool>, timeline_block> at;  // (stage, microbatch, backward)
            for (const auto& b : tl.blocks)
                if (b.kind == block_kind::forward || b.kind == block_kind::backward) at[{b.stage, b.microbatch, b.kind == block_kind::backward}] = b;
            const std::size_t S = stages.size();
            REQUIRE(at.size() == 2 * S * std::size_t(M));
            for (std::size_t s = 0; s < S; ++s)
                for (int m = 0; m < M; ++m) {
                    const auto& f = at[{s, m, false}];
                    const auto& b = at[{s, m, true}];
                    CHECK(f.end - f.start == doctest::Approx(std::get<0>(stages[s])));
                    CHECK(b.end - b.start == doctest::Approx(std::get<1>(stages[s])));
                    CHECK(b.start >= f.end - 1e-12);
                    if (s > 0) CHECK(f.start >= at[{s - 1, m, false}].end + std::get<2>(stages[s - 1]) / 2 - 1e-12);
                    if (s + 1 < S) CHECK(b.start >= at[{s + 1, m, true}].end + std::get<2>(stages[s + 1]) / 2 - 1e-12);
                }
            // A stage runs one block at a time; under 1F1B stage s holds at most S - s
            // microbatches between their forward and their backward.
            for (std::size_t s = 0; s < S; ++s) {
                std::vector<timeline_block> row;
                for (const auto& b : tl.blocks)
                    if (b.stage == s && (b.kind == block_kind::forward || b.kind == block_kind::backward)) row.push_back(b);
                for (std::size_t i = 1; i < row.size(); ++i) CHECK(row[i].start >= row[i - 1].end - 1e-12);
                int open = 0, most = 0;
                for (const auto& b : row) most = std::max(most, open += b.kind == block_kind::forward ? 1 : -1);
                if (k == schedule_kind::one_f_one_b) CHECK(most <= std::min<int>(M, int(S - s)));
                else CHECK(most == M);  // GPipe: every forward before any backward
            }
            // Sync starts where the later of the schedule and the time model's phase ends.
            for (const auto& b : tl.blocks)
                if (b.kind == block_kind::sync) CHECK(b.start == doctest::Approx(std::max(1.0, tl.pipeline_end[0])));
        }
}

TEST_CASE("schedule timeline: ministages and layer-by-layer accumulation are one block per stage, said") {
    for (schedule_kind k : {schedule_kind::interleaved_ministages, schedule_kind::layered_gradient_accumulation}) {
        auto [pl, e] = pipeline_of(k, 4, {{1, 2, 0.5}, {1, 1, 0}}, 15);
        e.time.stages[0].busy = seconds{14};  // the model's busy time wins where it has one
        const schedule_timeline tl = make_schedule_timeline(pl, e);
        CHECK_FALSE(tl.exact);
        std::vector<timeline_block> agg;
        for (const auto& b : tl.blocks)
            if (b.kind == block_kind::aggregate) agg.push_back(b);
        REQUIRE(agg.size() == 2);
        CHECK(agg[0].end == doctest::Approx(14));
        CHECK(agg[1].end == doctest::Approx(4 * 2.0));
        CHECK(tl.pipeline_end[0] == doctest::Approx(14));
    }
}

TEST_CASE("schedule timeline: a time model's spans are the blocks, compute then what is not hidden, no sync after") {
    auto [pl, e] = pipeline_of(schedule_kind::layered_gradient_accumulation, 4, {{1, 2, 0}}, 10);
    // Two FSDP units: forwards 0-2 s (1 s compute) and 2-3 s, backwards 3-6 s and 6-10 s.
    e.time.spans = {{0, 0, 0, false, seconds{0}, seconds{2}, seconds{1}}, {0, 0, 1, false, seconds{2}, seconds{3}, seconds{1}},
                    {0, 0, 1, true, seconds{3}, seconds{6}, seconds{3}}, {0, 0, 0, true, seconds{6}, seconds{10}, seconds{2}}};
    const schedule_timeline tl = make_schedule_timeline(pl, e);
    CHECK(tl.exact);
    CHECK(tl.pipeline_end[0] == doctest::Approx(10));
    std::vector<std::tuple<block_kind, int, double, double>> got;
    for (const auto& b : tl.blocks) {
        CHECK(b.kind != block_kind::sync);  // the spans hold the communication
        if (b.kind != block_kind::update) got.emplace_back(b.kind, b.part, b.start, b.end);
    }
    const std::vector<std::tuple<block_kind, int, double, double>> want{
        {block_kind::forward, 0, 0, 1}, {block_kind::exposed, 0, 1, 2}, {block_kind::forward, 1, 2, 3}, {block_kind::backward, 1, 3, 6},
        {block_kind::backward, 0, 6, 8}, {block_kind::exposed, 0, 8, 10}};
    CHECK(got == want);
    // The optimizer step follows at the model's pipeline term.
    CHECK(tl.blocks.back().kind == block_kind::update);
    CHECK(tl.blocks.back().start == doctest::Approx(10));
}
