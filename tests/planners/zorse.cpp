// Zorse's models and planner (Zorse §3) on small hand-made inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>

#include "../support.hpp"
#include "hetplan/fixtures/example.hpp"
#include "hetplan/planners/zorse.hpp"
#include "../planner_outcomes.hpp"
#include "hetplan/search/pipeline/ministages.hpp"

using namespace hetplan;

namespace {

/// One machine of 2 fast "F" GPUs (24 GB, 100 GB/s inside) and one of 2 slow "S" GPUs (12 GB,
/// 10 GB/s inside), 1 GB/s between machines, one zone. 4 layers of 1e8 parameters, 1e5 boundary
/// and 2e5 working activation elements per sample; fp32 (weights and gradients 4 B, Adam 8 B).
/// Per layer and microbatch of m: F forward 1 ms x m, backward 2 ms x m; S twice as slow.
struct zorse_world {
    cluster hw;
    model_spec model;
    job_spec job;
    profile_table profiles;
    gpu_type_id f{}, s{};
    zone_id z{};

    explicit zorse_world(int fast_machines = 1, int slow_machines = 1, int batch = 16) {
        gpu_spec gf;
        gf.type_name = "F";
        gf.memory_capacity = gigabytes(24);
        gpu_spec gs = gf;
        gs.type_name = "S";
        gs.memory_capacity = gigabytes(12);
        f = hw.add_gpu(gf, 2);
        s = hw.add_gpu(gs, 2);
        z = hw.add_zone("r1-a");
        hw.pool.set(f, z, 2 * fast_machines);
        hw.pool.set(s, z, 2 * slow_machines);
        hw.network.set_default(alpha_beta_link{seconds{0}, bytes_per_second{1e9}});
        hw.network.set_intra_node(f, 2, alpha_beta_link{seconds{0}, bytes_per_second{1e11}});
        hw.network.set_intra_node(s, 2, alpha_beta_link{seconds{0}, bytes_per_second{1e10}});
        model.name = "four";
        for (int i = 0; i < 4; ++i) {
            layer_spec l;
            l.name = "l" + std::to_string(i);
            l.params = 1e8;
            l.act_input_elems = l.act_output_elems = 1e5;
            l.act_mem_elems = 2e5;
            l.flops_fwd = 1e9;
            model.layers.push_back(l);
        }
        job.global_batch = batch;
        job.sequence_length = 16;
        for (auto [name, k] : {std::pair{"F", 1.0}, std::pair{"S", 2.0}}) {
            profile_curve c;
            for (int m = 1; m <= 4; ++m) c.add_point(m, std::vector<layer_timing>(4, {milliseconds(k * m), milliseconds(2 * k * m), seconds{0}}));
            linear_tail t;
            t.fwd_slope.assign(4, k * 1e-3);
            t.fwd_intercept.assign(4, 0);
            t.bwd_slope.assign(4, 2 * k * 1e-3);
            t.bwd_intercept.assign(4, 0);
            c.tail = t;
            profiles.set_curve(name, 1, c);
        }
    }
    [[nodiscard]] problem pb() const { return {hw, model, job, profiles}; }

    /// Two groups, F's machine then S's, each GPU with `n` microbatches of `m`, state halved.
    [[nodiscard]] plan two_groups(std::vector<layer_range> first, std::vector<layer_range> second, int m, int n) const {
        plan pl;
        pl.schedule = schedule_kind::interleaved_ministages;
        pl.memory.zero_stage = 3;
        pl.memory.recompute = true;
        pl.memory.offload_params = pl.memory.offload_activations = true;
        pipeline p;
        for (auto [gpu, layers] : {std::pair{f, first}, std::pair{s, second}}) {
            stage st;
            st.layers.assign(layers.begin(), layers.end());
            for (int k = 0; k < 2; ++k) st.workers.push_back({gpu, z, 1, m, n, 0.5, 0});
            p.stages.push_back(st);
        }
        pl.pipelines.push_back(p);
        return pl;
    }
};

}  // namespace

TEST_CASE("zorse latency model (§3.3.4) by hand: two groups, one ministage each") {
    const zorse_world w;
    // 16 samples in microbatches of 2: 8 microbatches, 4 per GPU.
    const plan pl = w.two_groups({{0, 2}}, {{2, 4}}, 2, 4);
    const auto t = zorse_time_model{}.estimate(w.pb(), pl);
    // Group F, layers 0-1, one microbatch: forward 2 x 2 ms = 4 ms, backward 2 x (2 + 4) = 12 ms
    // (forward recomputed). AllGather per layer, ring of 2 on one machine: 1 step of 2e8 B at
    // 100 GB/s = 2 ms; ReduceScatter the same; the ministage: 4 ms each. Point-to-point: 1e5 x 2
    // samples x 4 B = 0.8 MB at 1 GB/s = 0.8 ms. Forward max(4 x 4, 4) = 16, backward
    // max(4 x 12, 8) = 48: 64 ms. Group S: 8 and 24 ms per microbatch, collectives 20 ms per
    // layer at 10 GB/s: forward max(32, 40) = 40, backward max(96, 80) = 96: 136 ms, the core.
    // Fill: group F's first AllGather 4 + its forward 4 + send 0.8 = 8.8 ms; drain: its
    // ReduceScatter 4 + backward 12 + send 0.8 = 16.8 ms. Total 161.6 ms.
    CHECK(t.iteration.value == doctest::Approx(0.1616));
    REQUIRE(t.stages.size() == 2);
    CHECK(t.stages[1].bubble.value == doctest::Approx(0.0));
    CHECK(t.stages[0].bubble.value == doctest::Approx(0.136 - 0.064));
    CHECK(t.stages[1].sync.value == doctest::Approx(0.136 - 0.128));  // 8 ms of AllGather exposed in the forward
    CHECK(t.pipelines[0].ramp.value == doctest::Approx(0.0256));
    // The spans of the plan picture (issue 21), by hand: F's forward waits for its AllGather
    // (4 ms) and runs 4-20 ms; S starts when F's first microbatch has arrived (4 + 4 + 0.8) and
    // runs its 40 ms to 48.8. S's backward follows its forward, 48.8-144.8; F's starts at
    // S's first microbatch (48.8 + 24 + 0.8 = 73.6) and ends no earlier than S's last one plus
    // a send and one of its own (144.8 + 0.8 + 12), then its ReduceScatter: 161.6 ms, the model's.
    REQUIRE(t.spans.size() == 4);
    const auto at = [&](std::size_t stage, bool backward) {
        for (const auto& sp : t.spans)
            if (sp.stage == stage && sp.backward == backward) return sp;
        FAIL("no span");
        return work_span{};
    };
    CHECK(at(0, false).start.value == doctest::Approx(0.004));
    CHECK(at(0, false).end.value == doctest::Approx(0.020));
    CHECK(at(1, false).start.value == doctest::Approx(0.0088));
    CHECK(at(1, false).end.value == doctest::Approx(0.0488));
    CHECK(at(1, false).compute.value == doctest::Approx(0.032));
    CHECK(at(1, true).end.value == doctest::Approx(0.1448));
    CHECK(at(0, true).start.value == doctest::Approx(0.0736));
    CHECK(at(0, true).end.value == doctest::Approx(0.1616));
    CHECK(t.spans[0].stage == 0);  // by stage, then start
}

TEST_CASE("zorse latency model: interleaving shortens fill and drain, memory drops with smaller ministages") {
    const zorse_world w;
    // Two ministages of one layer per group (Fig. 3): F holds 0 and 2, S holds 1 and 3.
    const plan pl = w.two_groups({{0, 1}, {2, 3}}, {{1, 2}, {3, 4}}, 2, 4);
    const auto t = zorse_time_model{}.estimate(w.pb(), pl);
    // Per ministage, F: max(4 x 2, 2) + max(4 x 6, 4) = 32 ms, twice; S: max(16, 20) + max(48, 40)
    // = 68 ms, twice: core 136 ms as before. Fill 2 + 2 + 0.8, drain 2 + 6 + 0.8: 149.6 ms.
    CHECK(t.iteration.value == doctest::Approx(0.1496));
    // Spans in layer order F0 S0 F1 S1, backwards the reverse (hand-placed as in the test above):
    // F1 waits for S0's first microbatch and ends after its last (24.8 + 0.8 + 2 = 27.6); S1
    // backward 44.8-92.8; F0's backward ends at 147.6, + its ReduceScatter 2 ms = 149.6, the model's.
    REQUIRE(t.spans.size() == 8);
    auto span = [&](std::size_t stage, int part, bool backward) {
        for (const auto& sp : t.spans)
            if (sp.stage == stage && sp.part == part && sp.backward == backward) return sp;
        FAIL("no span");
        return work_span{};
    };
    CHECK(span(0, 0, false).start.value == doctest::Approx(0.002));
    CHECK(span(1, 0, false).end.value == doctest::Approx(0.0248));
    CHECK(span(0, 1, false).start.value == doctest::Approx(0.010));
    CHECK(span(0, 1, false).end.value == doctest::Approx(0.0276));
    CHECK(span(1, 1, false).end.value == doctest::Approx(0.0448));
    CHECK(span(1, 1, true).end.value == doctest::Approx(0.0928));
    CHECK(span(0, 1, true).end.value == doctest::Approx(0.0996));
    CHECK(span(1, 0, true).end.value == doctest::Approx(0.1408));
    CHECK(span(0, 0, true).end.value == doctest::Approx(0.1496));
    // Memory of an F GPU: weights of two ministages materialised 2e8 x 4 B = 0.8 GB; gradients
    // of the largest ministage 1e8 x 4 = 0.4 GB (0.8 GB with one ministage of two layers);
    // optimizer half of 2e8 x 8 B = 0.8 GB; activations 3 x 1e5 x 2 x 4 + 2e5 x 2 x 4 = 4 MB;
    // 2 GiB reserved. Host: half of 2e8 x 4 B + 2 boundaries x 1e5 x 8 B x 4 microbatches.
    const auto m = zorse_memory_model{}.estimate(w.pb(), pl);
    REQUIRE(m.workers.size() == 4);
    CHECK(m.workers[0].weights.value == doctest::Approx(0.8e9));
    CHECK(m.workers[0].gradients.value == doctest::Approx(0.4e9));
    CHECK(m.workers[0].optimizer.value == doctest::Approx(0.8e9));
    CHECK(m.workers[0].activations.value == doctest::Approx(4e6));
    CHECK(m.workers[0].total.value == doctest::Approx(2.004e9 + gibibytes(2).value));
    CHECK(m.workers[0].host.value == doctest::Approx(0.4e9 + 6.4e6));
    const auto whole = zorse_memory_model{}.estimate(w.pb(), w.two_groups({{0, 2}}, {{2, 4}}, 2, 4));
    CHECK(whole.workers[0].gradients.value == doctest::Approx(0.8e9));
    // Host memory per machine: the two GPUs of each.
    const auto host = zorse_memory_model{}.host_per_machine(w.pb(), pl);
    REQUIRE(host.size() == 2);
    CHECK(host.begin()->second.value == doctest::Approx(2 * (0.4e9 + 6.4e6)));
    // Not a pipeline of GPU groups: a clear error.
    plan bad = pl;
    bad.pipelines.push_back(bad.pipelines[0]);
    CHECK_THROWS_AS((void)zorse_time_model{}.estimate(w.pb(), bad), model_error);
}

namespace {
/// Every configuration Phase 2 considers, built from the public pieces and priced by the
/// simulator (not by the planner's own arithmetic): the fastest valid plan's iteration time.
/// Layers follow Zorse's rule (by group speed, from the proportional microbatch split); the
/// microbatches of every GPU are either Zorse's proportional split, or every split (brute force).
double best_by_simulation(const problem& pb, const zorse_options& opt, bool every_split) {
    const auto ms = machines_of(pb.hw, pb.pool());
    const zorse_simulator sim{opt.memory, {}, {}};
    double best = std::numeric_limits<double>::infinity();
    const int L = pb.model.num_layers(), B = pb.job.global_batch;
    for (auto groups : search::cluster_partitions(pb.hw, ms, opt.partition).partitions) {
        // Descending intra-group ring bandwidth.
        auto ring_bw = [&](const search::machine_group& g) {
            std::vector<machine> ring;
            for (int i : g)
                for (int k = 0; k < ms[std::size_t(i)].gpus; ++k) ring.push_back(ms[std::size_t(i)]);
            double bw = std::numeric_limits<double>::infinity();
            for (std::size_t k = 0; k < ring.size(); ++k) bw = std::min(bw, gpu_link(pb.hw, ring[k], ring[(k + 1) % ring.size()]).bandwidth(megabytes(64)).value);
            return bw;
        };
        std::stable_sort(groups.begin(), groups.end(), [&](const auto& a, const auto& b) { return ring_bw(a) > ring_bw(b); });
        for (int m = 1; m <= B; ++m) {
            if (B % m) continue;
            auto whole = [&](gpu_type_id t) {
                double s = 0;
                for (std::size_t l = 0; l < std::size_t(L); ++l) {
                    const auto x = pb.profiles.lookup(pb.hw.gpu(t), 1, m, pb.model, l, pb.job.compute_dtype(), 16).first;
                    s += x.fwd.value + x.backward_pass(true).value;
                }
                return s;
            };
            std::vector<std::vector<int>> n;
            std::vector<double> speed;
            bool ok = true;
            for (const auto& g : groups) {
                std::vector<double> rate;
                std::vector<gpu_type_id> types;
                for (int i : g)
                    for (int k = 0; k < ms[std::size_t(i)].gpus; ++k) rate.push_back(1 / whole(ms[std::size_t(i)].gpu)), types.push_back(ms[std::size_t(i)].gpu);
                n.push_back(search::proportional_split(B / m, rate, 1));
                if (n.back().empty()) { ok = false; break; }
                double slowest = 0;
                for (std::size_t i = 0; i < types.size(); ++i) slowest = std::max(slowest, n.back()[i] * whole(types[i]));
                speed.push_back(1 / slowest);
            }
            if (!ok) continue;
            const auto layers = search::proportional_split(L, speed, 1);
            if (layers.empty()) continue;
            for (int S = 1; S <= *std::min_element(layers.begin(), layers.end()); ++S) {
                const auto layout = search::interleaved_layout(layers, S);
                auto price = [&](const std::vector<std::vector<int>>& counts) {
                    plan pl;
                    pl.schedule = schedule_kind::interleaved_ministages;
                    pl.memory.zero_stage = 3;
                    pl.memory.recompute = pl.memory.offload_params = pl.memory.offload_activations = true;
                    pipeline p;
                    for (std::size_t g = 0; g < groups.size(); ++g) {
                        stage st;
                        st.layers.assign(layout[g].begin(), layout[g].end());
                        int gpus = 0, i = 0;
                        for (int k : groups[g]) gpus += ms[std::size_t(k)].gpus;
                        for (int k : groups[g])
                            for (int j = 0; j < ms[std::size_t(k)].gpus; ++j, ++i)
                                st.workers.push_back({ms[std::size_t(k)].gpu, ms[std::size_t(k)].zone, 1, m, counts[g][std::size_t(i)], 1.0 / gpus, ms[std::size_t(k)].index});
                        p.stages.push_back(st);
                    }
                    pl.pipelines.push_back(p);
                    if (validate(pb, pl, sim.memory).ok()) best = std::min(best, sim.run(pb, pl).time.iteration.value);
                };
                if (!every_split) {
                    price(n);
                    continue;
                }
                // Every split of B / m microbatches over every group's GPUs, each at least one.
                std::vector<std::vector<int>> counts = n;
                auto rec = [&](auto&& self, std::size_t g, std::size_t i, int left) -> void {
                    if (g == counts.size()) return price(counts);
                    const std::size_t last = counts[g].size() - 1;
                    if (i == last) {
                        counts[g][i] = left;
                        return self(self, g + 1, 0, B / m);
                    }
                    for (int v = 1; v <= left - int(last - i); ++v) {
                        counts[g][i] = v;
                        self(self, g, i + 1, left - v);
                    }
                };
                rec(rec, 0, 0, B / m);
            }
        }
    }
    return best;
}
}  // namespace

TEST_CASE("zorse planner: the optimum of its search space, priced exactly as the simulator prices it") {
    for (const auto& shape : {std::tuple{1, 1, 16}, std::tuple{2, 2, 32}, std::tuple{2, 1, 24}}) {
        const int fast = std::get<0>(shape), slow = std::get<1>(shape), batch = std::get<2>(shape);
        CAPTURE(fast);
        CAPTURE(slow);
        const zorse_world w(fast, slow, batch);
        const auto r = test::zorse_run(w.pb());
        REQUIRE(r.pl);
        CHECK(validate(w.pb(), *r.pl, zorse_memory_model{}).ok());
        CHECK(r.est.time.iteration.value == doctest::Approx(r.predicted.value).epsilon(1e-9));
        // Never slower than Zorse's proportional split; on the smallest world, the optimum over
        // every split (brute force, priced by the simulator).
        CHECK(r.est.time.iteration.value <= best_by_simulation(w.pb(), {}, false) * (1 + 1e-12));
        if (fast + slow == 2) CHECK(r.est.time.iteration.value == doctest::Approx(best_by_simulation(w.pb(), {}, true)).epsilon(1e-12));
        // Groups follow machines: 100 or 10 GB/s inside, 1 GB/s between.
        for (const auto& g : r.groups) CHECK(g.size() == 1);
        CHECK(static_cast<int>(r.groups.size()) == fast + slow);
        // The F machines (100 GB/s inside) run first.
        CHECK(r.machines[std::size_t(r.groups.front().front())].gpu == w.f);
        // Deterministic.
        CHECK(test::zorse_run(w.pb()).pl == r.pl);
    }
}

TEST_CASE("microbatch split: extreme times bound the counts without overflow (found by fuzzing)") {
    // One kind 10^91 times slower than the other (a peak of 311e-92 TFLOP/s did this): the
    // bound on each kind's count was cast from 10^91 to long long.
    const test::small_world any;
    const std::vector<int> counts{1, 2};
    const std::vector<double> a{1e91, 1e-3}, b{2e91, 2e-3}, ag{0}, agrs{0};
    const auto got = search::microbatch_split{}.solve(any.pb(), search::microbatch_split_problem{15, counts, a, b, ag, agrs}, max_throughput{}, {});
    REQUIRE(got);
    CHECK(got->most[0] == 1);  // the slow GPU takes its one microbatch
    CHECK(got->total[0] + got->total[1] == 15);
}

TEST_CASE("microbatch split: exact, by brute force on random groups") {
    test::xorshift gen(20261123);
    const test::small_world any;
    for (int trial = 0; trial < 200; ++trial) {
        const int K = 1 + gen.below(3), S = 1 + gen.below(3);
        std::vector<int> counts(std::size_t(K), 0);
        int gpus = 0;
        for (auto& c : counts) gpus += c = 1 + gen.below(2);
        const int M = gpus + gen.below(10);
        std::vector<double> a, b, ag, agrs;
        for (int k = 0; k < K; ++k) {
            const double speed = gen.between(1, 4);
            for (int s = 0; s < S; ++s) a.push_back(speed * gen.between(1, 2)), b.push_back(speed * gen.between(2, 5));
        }
        for (int s = 0; s < S; ++s) ag.push_back(gen.between(0, 20)), agrs.push_back(ag.back() + gen.between(0, 20));
        const search::microbatch_split_problem p{M, counts, a, b, ag, agrs};
        const auto got = search::microbatch_split{}.solve(any.pb(), p, max_throughput{}, {});
        REQUIRE(got);
        // Brute force over every per-GPU count (each at least one, sum M).
        std::vector<int> kind;
        for (int k = 0; k < K; ++k)
            for (int c = 0; c < counts[std::size_t(k)]; ++c) kind.push_back(k);
        double best = std::numeric_limits<double>::infinity();
        std::vector<int> n(kind.size());
        auto rec = [&](auto&& self, std::size_t i, int left) -> void {
            if (i + 1 == n.size()) {
                n[i] = left;
                std::vector<int> most(std::size_t(K), 0);
                for (std::size_t j = 0; j < n.size(); ++j) most[std::size_t(kind[j])] = std::max(most[std::size_t(kind[j])], n[j]);
                best = std::min(best, p.term(most));
                return;
            }
            for (int v = 1; v <= left - int(n.size() - 1 - i); ++v) n[i] = v, self(self, i + 1, left - v);
        };
        rec(rec, 0, M);
        CAPTURE(trial);
        CHECK(got->terms.iteration == doctest::Approx(best).epsilon(1e-12));
        // The counts it returns: at least one each, M in all, and the term it reports.
        int total = 0;
        std::vector<int> most(std::size_t(K), 0);
        for (int k = 0; k < K; ++k)
            for (int j = 0; j < counts[std::size_t(k)]; ++j) {
                const int x = got->of(std::size_t(k), j, counts[std::size_t(k)]);
                CHECK(x >= 1);
                total += x;
                most[std::size_t(k)] = std::max(most[std::size_t(k)], x);
            }
        CHECK(total == M);
        CHECK(p.term(most) == doctest::Approx(got->terms.iteration).epsilon(1e-12));
    }
}

TEST_CASE("zorse planner: tight memory takes more ministages; no plan is never a crash") {
    zorse_world w(1, 1, 16);
    // 8 layers of 4e8 parameters (fp32 Adam): on S (12 GB) one ministage of its layers would
    // not fit; smaller ministages do.
    w.model.layers.assign(8, w.model.layers.front());
    for (auto& l : w.model.layers) l.params = 4e8;
    for (const char* name : {"F", "S"}) {
        const double k = std::string(name) == "F" ? 1.0 : 2.0;
        profile_curve c;
        c.add_point(1, std::vector<layer_timing>(8, {milliseconds(k), milliseconds(2 * k), seconds{0}}));
        w.profiles.set_curve(name, 1, c);
    }
    const auto r = test::zorse_run(w.pb());
    REQUIRE(r.pl);
    CHECK(r.est.memory.fits());
    CHECK(r.ministages > 1);
    zorse_options one;
    one.max_ministages = 1;
    CHECK_FALSE(test::zorse_run(w.pb(), one).pl);
    // An empty pool: no plan, with a note. (Four samples on eight GPUs do plan: every group of
    // two sees all four microbatches.)
    zorse_world none(0, 0, 16);
    const auto e = test::zorse_run(none.pb());
    CHECK_FALSE(e.pl);
    CHECK_FALSE(e.notes.empty());
    CHECK(test::zorse_run(zorse_world(2, 2, 4).pb()).pl);
}

TEST_CASE("zorse planner: GPUs left out when the whole pool has no plan, with a note (issue 16)") {
    auto has_note = [](const test::zorse_outcome& r, const std::string& text) {
        return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
    };
    auto gpus_of = [](const plan& pl) {
        int n = 0;
        pl.for_each_worker([&](std::size_t, std::size_t, std::size_t, const worker_group& x) { n += x.tp; });
        return n;
    };
    // One sample on eight GPUs: every group needs a microbatch per GPU, so the whole pool has
    // none; the fastest GPU (an F) takes it alone.
    const zorse_world one_sample(2, 2, 1);
    const auto tiny = test::zorse_run(one_sample.pb());
    REQUIRE(tiny.pl);
    CHECK(gpus_of(*tiny.pl) == 1);
    CHECK(tiny.pl->pipelines[0].stages[0].workers[0].gpu == one_sample.f);
    CHECK(has_note(tiny, "global batch 1 < 8 GPUs: planned on the 1 fastest per sample, the other 7 left out"));
    CHECK(validate(one_sample.pb(), *tiny.pl, zorse_memory_model{}).ok());
    // S with 2.5 GB: the 2 GiB reserved per GPU leaves too little for any layer's shard and
    // working memory, so every partition fails in memory; F alone plans.
    zorse_world small(1, 1, 16);
    small.hw.gpus[small.s.index()].memory_capacity = gigabytes(2.5);
    const auto r = test::zorse_run(small.pb());
    REQUIRE(r.pl);
    r.pl->for_each_worker([&](std::size_t, std::size_t, std::size_t, const worker_group& x) { CHECK(x.gpu == small.f); });
    CHECK(has_note(r, "planned without the 2 GPUs of least memory (S)"));
    // Nothing fits even alone: the note says the fewer GPUs were tried too.
    small.hw.gpus[small.f.index()].memory_capacity = gigabytes(2.5);
    const auto none = test::zorse_run(small.pb());
    CHECK_FALSE(none.pl);
    CHECK(has_note(none, "fits in memory (Zorse §3.3.3), on the whole pool or on fewer GPUs"));
}

TEST_CASE("zorse planner: groupings given by hand are planned as given, and checked") {
    const zorse_world w(1, 1, 16);
    const auto free = test::zorse_run(w.pb());
    REQUIRE(free.pl);
    zorse_options own;
    own.partitions = {{{1}, {0}}};  // the planner's own groups, written in another order
    const auto same = test::zorse_run(w.pb(), own);
    REQUIRE(same.pl);
    CHECK(same.pl == free.pl);
    zorse_options one;
    one.partitions = {{{0, 1}}};  // every GPU in one group: a single stage of four workers
    const auto r = test::zorse_run(w.pb(), one);
    REQUIRE(r.pl);
    CHECK(r.pl->pipelines[0].stages.size() == 1);
    CHECK(r.pl->pipelines[0].stages[0].workers.size() == 4);
    CHECK(r.predicted.value >= free.predicted.value);
    zorse_options two;
    two.min_ministages = two.max_ministages = 2;
    const auto s2 = test::zorse_run(w.pb(), two);
    REQUIRE(s2.pl);
    CHECK(s2.ministages == 2);
    for (const auto& st : s2.pl->pipelines[0].stages) CHECK(st.layers.size() == 2);
    auto error_of = [&](std::vector<search::cluster_partition> ps) {
        zorse_options o;
        o.partitions = std::move(ps);
        try {
            (void)test::zorse_run(w.pb(), o);
        } catch (const input_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(error_of({{{0}}}).find("partitions[0] uses machine 1 0 times") != std::string::npos);
    CHECK(error_of({{{0, 1}, {1}}}).find("uses machine 1 2 times") != std::string::npos);
    CHECK(error_of({{{0, 1}}, {{0}, {7}}}).find("partitions[1] names machine 7; the pool has 2") != std::string::npos);
    zorse_options bad;
    bad.min_ministages = 0;
    CHECK_THROWS_AS((void)test::zorse_run(w.pb(), bad), input_error);
}

TEST_CASE("zorse Phase 1 at scale: no more groups than layers, bounded storage, class weights without the machine graph (issue 16)") {
    const zorse_world w(6, 6, 48);  // 12 machines of 2 GPUs, 4 layers
    const auto ms = machines_of(w.hw, w.hw.pool);
    search::partition_options all;
    const auto full = search::cluster_partitions(w.hw, ms, all);
    search::partition_options four = all;
    four.max_groups = 4;
    const auto bounded = search::cluster_partitions(w.hw, ms, four);
    CHECK(bounded.partitions.size() < full.partitions.size());
    for (const auto& p : bounded.partitions) CHECK(p.size() <= 4);
    // Past machine_level_max the class graph comes from one machine pair per class pair: the
    // same class-level candidates, which lead the full list.
    search::partition_options classes_only = all;
    classes_only.machine_level_max = 0;
    const auto by_class = search::cluster_partitions(w.hw, ms, classes_only);
    REQUIRE(by_class.partitions.size() <= full.partitions.size());
    CHECK(std::equal(by_class.partitions.begin(), by_class.partitions.end(), full.partitions.begin()));
    // At most max_stored_machines indices over all candidates (each lists all 12 machines).
    search::partition_options small = classes_only;
    small.max_stored_machines = 12 * 5;
    const auto capped = search::cluster_partitions(w.hw, ms, small);
    CHECK(capped.truncated);
    CHECK(capped.partitions.size() == 5);
}

TEST_CASE("zorse Phase 1: coordinated even runs beyond max_run_combinations, coarse vertices, the stop polled (issue 16)") {
    const zorse_world w(6, 6, 48);  // 12 machines of 2 GPUs: classes F and S of 6 machines each
    const auto ms = machines_of(w.hw, w.hw.pool);
    search::partition_options classes_only;
    classes_only.machine_level = false;
    const auto every = search::cluster_partitions(w.hw, ms, classes_only);
    search::partition_options coordinated = classes_only;
    coordinated.max_run_combinations = 1;
    const auto few = search::cluster_partitions(w.hw, ms, coordinated);
    // At k = 2 (F | S) every combination is 4 x 4 divisors of 6; coordinated: both cut to the same
    // run length (4 targets: 12, 6, 4, 2 GPUs) or one cut alone (3 + 3), the whole pair once.
    CHECK(few.partitions.size() < every.partitions.size());
    auto runs_of = [&](const search::cluster_partition& p, gpu_type_id t) {
        std::vector<std::size_t> sizes;
        for (const auto& g : p)
            if (ms[std::size_t(g.front())].gpu == t) sizes.push_back(g.size());
        return sizes;
    };
    std::set<std::pair<std::size_t, std::size_t>> seen;  // (runs of F, runs of S) at k = 2
    for (const auto& p : few.partitions) {
        std::vector<int> uses(ms.size(), 0);
        for (const auto& g : p)
            for (int i : g) ++uses[std::size_t(i)];
        CHECK(std::all_of(uses.begin(), uses.end(), [](int u) { return u == 1; }));
        const auto f = runs_of(p, w.f), s = runs_of(p, w.s);
        const bool one_class_groups = std::all_of(p.begin(), p.end(), [&](const auto& g) {
            return std::all_of(g.begin(), g.end(), [&](int i) { return ms[std::size_t(i)].gpu == ms[std::size_t(g.front())].gpu; });
        });
        if (one_class_groups) seen.insert({f.size(), s.size()});
    }
    for (std::size_t d : {1, 2, 3, 6}) {
        CHECK(seen.count({d, d}) == 1);  // both cut alike
        CHECK(seen.count({d, 1}) == 1);  // F alone
        CHECK(seen.count({1, d}) == 1);  // S alone
    }
    CHECK(seen.count({2, 3}) == 0);  // a mixed combination: only below max_run_combinations
    // Beyond class_level_max classes, the vertices are zones (one here), then regions.
    CHECK(search::coarse_vertices(w.hw, ms, 2).size() == 2);
    CHECK(search::coarse_vertices(w.hw, ms, 1).size() == 1);
    search::partition_options coarse = classes_only;
    coarse.class_level_max = 1;
    const auto whole = search::cluster_partitions(w.hw, ms, coarse);
    REQUIRE(whole.partitions.size() == 1);
    CHECK(whole.partitions[0].size() == 1);  // one group of every machine
    // A stop condition already past ends Phase 1 at once, and says so.
    const stop_condition late{{}, stop_condition::clock::now()};
    const auto stopped = search::cluster_partitions(w.hw, ms, classes_only, &late);
    CHECK(stopped.stopped);
    CHECK(stopped.partitions.empty());
}

TEST_CASE("zorse planner: a group of more GPU types than the exact split takes uses Zorse's rule (issue 16)") {
    // 17 types, one GPU each (found with 200 types x 5 zones: "microbatch split: 1 to 16 kinds"
    // reached the user).
    cluster hw;
    const zone_id z = hw.add_zone("r1-a");
    for (int t = 0; t < 17; ++t) {
        gpu_spec g = fixtures::a100_40();
        g.type_name = "G" + std::to_string(t);
        g.with_peak(dtype::fp16, teraflops(100 + 10 * t));
        hw.pool.set(hw.add_gpu(g, 1), z, 1);
    }
    hw.network.set_default(alpha_beta_link{seconds{1e-5}, gigabits_per_second(100)});
    job_spec job;
    job.global_batch = 64;
    job.sequence_length = 128;
    job.prec = precision::fp16_mixed;
    profile_table profiles;
    profiles.enable_analytical({});
    const problem pb{hw, fixtures::tiny_gpt(), job, profiles};
    const auto r = test::zorse_run(pb);
    REQUIRE(r.pl);
    CHECK(validate(pb, *r.pl, zorse_memory_model{}).ok());
    int gpus = 0;
    r.pl->for_each_worker([&](std::size_t, std::size_t, std::size_t, const worker_group& x) { gpus += x.tp; });
    CHECK(gpus == 17);
}
