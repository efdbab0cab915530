// Property suite at scale (issue 16): every built-in planner on HETPLAN_PROPERTY_INSTANCES random
// pools (default 2,000; the longer documented run uses 10,000). For each plan returned:
//   - the planner's validator accepts it, and so does the independent check below, written
//     from docs/formats.md's plan semantics without the library's validator;
//   - the planner's models price it to what the planner reported;
// for each instance: planning twice gives the same JSON byte for byte (every fourth instance),
// and a planner with no plan says why in a note (always; the summary counts the instances where
// another planner found one, and the notes). Run: ctest -L property (or the binary directly).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "../random_pool.hpp"
#include "hetplan/io.hpp"
#include "hetplan/planners/registry.hpp"

namespace hetplan::test {
namespace {

/// Independent of plan/validator.hpp: each pipeline places every layer once, its stages carry
/// equal batches, the pipelines' batches sum to the global batch, and no (GPU type, zone)
/// or pinned node is used beyond what the pool offers.
std::string independent_violation(const problem& pb, const plan& pl) {
    const int L = static_cast<int>(pb.model.layers.size());
    long long total = 0;
    std::map<std::pair<std::size_t, std::size_t>, long long> used;
    std::map<std::tuple<std::size_t, std::size_t, int>, long long> on_node;
    for (const pipeline& p : pl.pipelines) {
        std::vector<int> placed(static_cast<std::size_t>(L), 0);
        long long batch = -1;
        for (const stage& s : p.stages) {
            if (s.workers.empty()) return "a stage without workers";
            for (const layer_range& r : s.layers) {
                if (r.begin < 0 || r.end > L || r.begin >= r.end) return "a layer range outside the model";
                for (int l = r.begin; l < r.end; ++l) ++placed[static_cast<std::size_t>(l)];
            }
            long long b = 0;
            for (const worker_group& w : s.workers) {
                if (w.tp < 1 || w.microbatch_size < 1 || w.num_microbatches < 1) return "a worker with TP, microbatch size or count < 1";
                b += static_cast<long long>(w.microbatch_size) * w.num_microbatches;
                used[{w.gpu.index(), w.zone.index()}] += w.tp;
                if (w.node >= 0) on_node[{w.gpu.index(), w.zone.index(), w.node}] += w.tp;
            }
            if (batch >= 0 && b != batch) return "stages of one pipeline carry different batches";
            batch = b;
        }
        for (int n : placed)
            if (n != 1) return "a layer placed " + std::to_string(n) + " times in one pipeline";
        total += batch;
    }
    if (!pl.pipelines.empty() && total != pb.job.global_batch) return "batches sum to " + std::to_string(total) + ", not the global batch";
    for (const auto& [gz, n] : used)
        if (n > pb.pool().available(gpu_type_id{gz.first}, zone_id{gz.second})) return "more GPUs of a (type, zone) than the pool has";
    for (const auto& [gzn, n] : on_node)
        if (n > pb.hw.gpus_per_node(gpu_type_id{std::get<0>(gzn)})) return "more GPUs on a node than it holds";
    return {};
}

std::string as_json(const plan_result& r, const cluster& hw) {
    io::json j = {{"notes", r.notes}, {"plans", io::json::array()}};
    for (const auto& c : r.plans) j["plans"].push_back({{"plan", io::write_plan(c.pl, hw)}, {"s", c.est.time.iteration.value}, {"usd", c.est.money.total.value}});
    return j.dump();
}

int instances() {
    const char* e = std::getenv("HETPLAN_PROPERTY_INSTANCES");
    return e ? std::max(1, std::atoi(e)) : 2000;
}

}  // namespace

TEST_CASE("every planner on random pools: valid, independently checked, priced as reported, deterministic, explained") {
    std::vector<any_planner> planners = builtin_planners();
    const int n = instances();
    std::map<std::string, int> with_plan, without, without_but_other;
    std::map<std::string, double> seconds_in;
    std::map<std::string, int> why;  // planner: its last note, when it had no plan
    int plans = 0;
    for (int seed = 1; seed <= n; ++seed) {
        // Pools of 2-3 GPU types over 1-3 zones; every fourth with a batch below the GPU count.
        random_pool rp(static_cast<unsigned>(seed), 3, 0, 0x9e37u);
        if (seed % 4 == 0) rp.job.global_batch = 4;
        const problem pb = rp.pb();
        std::vector<bool> found;
        std::vector<plan_result> results;
        for (any_planner& p : planners) {
            planning_request rq;
            rq.top = 2;
            rq.stop = stop_condition::after(std::chrono::seconds(5));
            const auto t0 = std::chrono::steady_clock::now();
            plan_result r = p.plan(pb, rq);
            seconds_in[p.name()] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            INFO("seed " << seed << ", planner " << p.name());
            if (seed % 4 == 1) {  // determinism on every fourth instance (it costs a second search)
                const plan_result again = p.plan(pb, rq);
                if (!r.stopped && !again.stopped) CHECK(as_json(r, pb.hw) == as_json(again, pb.hw));
            }
            for (const auto& c : r.plans) {
                ++plans;
                const validation_report v = p.check(pb, c.pl);
                CHECK_MESSAGE(v.ok(), v.summary());
                const std::string bad = independent_violation(pb, c.pl);
                CHECK_MESSAGE(bad.empty(), bad);
                CHECK(p.price(pb, c.pl).time.iteration.value == c.est.time.iteration.value);
            }
            if (r.plans.empty()) {
                CHECK_MESSAGE(!r.notes.empty(), "no plan and no note");
                if (!r.notes.empty()) ++why[p.name() + ": " + r.notes.back().substr(0, 90)];
            }
            found.push_back(!r.plans.empty());
            results.push_back(std::move(r));
        }
        for (std::size_t k = 0; k < planners.size(); ++k) {
            const std::string name = planners[k].name();
            if (found[k]) ++with_plan[name];
            else {
                ++without[name];
                for (std::size_t o = 0; o < planners.size(); ++o)
                    if (found[o]) {
                        ++without_but_other[name];
                        break;
                    }
            }
        }
    }
    std::printf("property suite: %d instances, %d plans checked\n", n, plans);
    for (const auto& p : planners)
        std::printf("  %-8s plan on %d, none on %d (another planner had one on %d; each with a note); %.1f s planning\n", p.name().c_str(),
                    with_plan[p.name()], without[p.name()], without_but_other[p.name()], seconds_in[p.name()]);
    for (const auto& [note, count] : why) std::printf("  %5d x %s\n", count, note.c_str());
}

}  // namespace hetplan::test
