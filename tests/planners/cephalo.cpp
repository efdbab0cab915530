// Cephalo's models and optimizer (Cephalo §2.3-2.4, §3.3) on small hand-made inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "../support.hpp"
#include "hetplan/planners/cephalo_baselines.hpp"
#include "../planner_outcomes.hpp"

using namespace hetplan;
using namespace hetplan::search;

namespace {

/// Fast "F" (24 GB) and slow "S" (12 GB) GPUs, two of each, one zone, 1 TB/s links (compute
/// bound: a layer's AllGather over 4 GPUs takes 0.3 ms, its compute milliseconds); 4 layers of
/// 1e8 parameters (fp32 Adam: 1.6 GB of state each, 6.4 GB in all). Per layer and microbatch of
/// size m: F forward 1 ms x m, backward 2 ms x m; S twice as slow. Compute memory 1 GB + 0.5 GB/m.
struct fsdp_world {
    cluster hw;
    model_spec model;
    job_spec job;
    profile_table profiles;
    compute_memory_fit mem{gigabytes(1), gigabytes(0.5)};

    explicit fsdp_world(int fast = 2, int slow = 2, int batch = 16, double params = 1e8) {
        gpu_spec f;
        f.type_name = "F";
        f.memory_capacity = gigabytes(24);
        f.price = usd_per_hour{3.6};
        gpu_spec s = f;
        s.type_name = "S";
        s.memory_capacity = gigabytes(12);
        s.price = usd_per_hour{1.8};
        const auto gf = hw.add_gpu(f, 4), gs = hw.add_gpu(s, 4);
        const auto z = hw.add_zone("r1-a");
        hw.pool.set(gf, z, fast);
        hw.pool.set(gs, z, slow);
        hw.network.set_default(alpha_beta_link{seconds{0}, bytes_per_second{1e12}});
        model.name = "four";
        for (int i = 0; i < 4; ++i) {
            layer_spec l;
            l.name = "l" + std::to_string(i);
            l.params = params;
            l.act_output_elems = l.act_input_elems = l.act_mem_elems = 1e5;
            l.flops_fwd = 1e9;
            model.layers.push_back(l);
        }
        job.global_batch = batch;
        job.sequence_length = 16;
        for (auto [name, k] : {std::pair{"F", 1.0}, std::pair{"S", 2.0}}) {
            profile_curve c;
            for (int m = 1; m <= 4; ++m)
                c.add_point(m, std::vector<layer_timing>(4, {milliseconds(k * m), milliseconds(2 * k * m), milliseconds(0)}));
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
};

}  // namespace

TEST_CASE("cephalo memory: 16 bytes per parameter of the shard plus a compute term linear in m (§2.3)") {
    const fsdp_world w;
    const problem pb = w.pb();
    CHECK(cephalo_memory_model::state_bytes_per_param(pb.job) == 16.0);
    const std::vector<std::pair<gpu_type_id, zone_id>> workers{{gpu_type_id{0}, zone_id{0}}, {gpu_type_id{1}, zone_id{0}}};
    const plan pl = make_fsdp_plan(pb, workers, {{2, 3}, {1, 10}}, {0.75, 0.25}, 0.8);
    const auto r = cephalo_memory_model{w.mem}.estimate(pb, pl);
    REQUIRE(r.workers.size() == 2);
    // Hand: 0.75 x 4e8 params x 16 B = 4.8 GB state; compute 1 + 0.5 x 2 = 2 GB; 80% of 24 GB.
    CHECK(r.workers[0].total.value == doctest::Approx(4.8e9 + 2e9));
    CHECK(r.workers[0].capacity.value == doctest::Approx(0.8 * 24e9));
    // Independent of the number of microbatches: 1.6 GB + 1.5 GB.
    CHECK(r.workers[1].total.value == doctest::Approx(1.6e9 + 1.5e9));
    // Mixed precision adds the fp32 master copy: 2 + 2 + 4 + 8.
    job_spec mixed = pb.job;
    mixed.prec = precision::fp16_mixed;
    CHECK(cephalo_memory_model::state_bytes_per_param(mixed) == 16.0);
}

TEST_CASE("compute memory fit recovers a line from profiled points") {
    const std::vector<std::pair<int, bytes>> pts{{1, gigabytes(1.5)}, {2, gigabytes(2.0)}, {3, gigabytes(2.5)}, {4, gigabytes(3.0)}};
    const auto f = compute_memory_fit::from_points(pts);
    CHECK(f.intercept.value == doctest::Approx(1e9));
    CHECK(f.per_sample.value == doctest::Approx(0.5e9));
    CHECK_THROWS_AS((void)compute_memory_fit::from_points({}), input_error);
}

TEST_CASE("state partition: water-filling and the fewest uneven FSDP units (§2.4, §3.3)") {
    // Hand: GPU 1 starts empty, GPU 0 at 20%; raising GPU 1 to 20% places 2; the last 2 spread
    // over 20 of capacity: level 0.3, so GPU 0 holds 1 and GPU 1 holds 3.
    const auto w = water_fill({2, 0}, {10, 10}, 4);
    CHECK(w.utilisation == doctest::Approx(0.3));
    CHECK(w.shares[0] == doctest::Approx(0.25));
    CHECK(w.shares[1] == doctest::Approx(0.75));
    // Placing nothing leaves the utilisation of compute memory alone.
    CHECK(water_fill({5, 1}, {10, 10}, 0).utilisation == doctest::Approx(0.5));

    // The paper's example: two identical units split 3:1 over two GPUs -> one 1:1, one 1:0.
    const auto u = unit_shards({0.75, 0.25}, 2);
    CHECK(u.uneven == 1);
    CHECK(u.unit[0][0] == doctest::Approx(0.5));
    CHECK(u.unit[1][0] == doctest::Approx(1.0));
    CHECK(u.unit[1][1] == doctest::Approx(0.0));
    // Even shares: no uneven unit; every GPU's total equals its share.
    CHECK(unit_shards({0.25, 0.25, 0.25, 0.25}, 7).uneven == 0);
    const std::vector<double> s{0.4, 0.35, 0.15, 0.1};
    const auto v = unit_shards(s, 10);
    CHECK(v.uneven == 6);  // floor(4 x 10 x 0.1) = 4 even units
    for (std::size_t g = 0; g < 4; ++g) {
        double sum = 0;
        for (const auto& row : v.unit) sum += row[g];
        CHECK(sum == doctest::Approx(10 * s[g]));
    }
    for (const auto& row : v.unit) {
        double sum = 0;
        for (double x : row) sum += x;
        CHECK(sum == doctest::Approx(1.0));
    }
}

TEST_CASE("cephalo time model: Eqs. 2-3 by hand") {
    fsdp_world w;
    // Slow links so that communication shows: 1e8 B/s.
    w.hw.network.set_default(alpha_beta_link{seconds{0}, bytes_per_second{1e8}});
    const problem pb = w.pb();
    const std::vector<std::pair<gpu_type_id, zone_id>> workers{{gpu_type_id{0}, zone_id{0}}, {gpu_type_id{1}, zone_id{0}}};
    // F: m 2 x 3 -> forward 6 ms, backward 18 ms per layer (12 ms + the recomputed 6 ms, §4.1);
    // S: m 1 x 2 -> 4 ms, 12 ms.
    const plan even = make_fsdp_plan(pb, workers, {{2, 3}, {1, 2}}, {0.5, 0.5}, 0.8);
    const auto t = cephalo_time_model{}.estimate(pb, even);
    // AllGather of 4e8 B over 2 GPUs: 1 step of 2e8 B at 1e8 B/s = 2 s; reduce-scatter the same.
    // Per layer: max(6 ms, 2 s) + max(18 ms, 4 s) = 6 s; 4 layers = 24 s.
    CHECK(t.iteration.value == doctest::Approx(24.0));
    // The plan picture's spans: forwards of units 0-3 (2 s each, 6 ms of it compute), then the
    // backwards of units 3-0 (4 s each, 18 ms compute), ending at the iteration's 24 s.
    REQUIRE(t.spans.size() == 8);
    for (std::size_t k = 0; k < 8; ++k) {
        const bool backward = k >= 4;
        CHECK(t.spans[k].backward == backward);
        CHECK(t.spans[k].part == (backward ? 7 - int(k) : int(k)));
        CHECK(t.spans[k].start.value == doctest::Approx(backward ? 8.0 + 4.0 * double(k - 4) : 2.0 * double(k)));
        CHECK(t.spans[k].compute.value == doctest::Approx(backward ? 0.018 : 0.006));
    }
    CHECK(t.spans.back().end.value == doctest::Approx(24.0));
    // Uneven shares make every unit but floor(2 x 4 x 0.25) = 2 uneven: 15% more on those.
    const plan uneven = make_fsdp_plan(pb, workers, {{2, 3}, {1, 2}}, {0.75, 0.25}, 0.8);
    CHECK(cephalo_time_model{}.estimate(pb, uneven).iteration.value == doctest::Approx(2 * 6.0 + 2 * 6.0 * 1.15));
    // Fast links: compute bound, the slowest GPU per pass: 4 x (6 + 18) ms.
    w.hw.network.set_default(alpha_beta_link{seconds{0}, bytes_per_second{1e15}});
    CHECK(cephalo_time_model{}.estimate(w.pb(), even).iteration.value == doctest::Approx(0.096).epsilon(1e-6));
    // Without recomputation the backward is the profiled one alone: 4 x (6 + 12) ms.
    plan kept = even;
    kept.memory.recompute = false;
    CHECK(cephalo_time_model{}.estimate(w.pb(), kept).iteration.value == doctest::Approx(0.072).epsilon(1e-6));
    // Not an FSDP plan: a clear error.
    plan two = even;
    two.pipelines[0].stages.push_back(two.pipelines[0].stages[0]);
    CHECK_THROWS_AS((void)cephalo_time_model{}.estimate(pb, two), model_error);
}

TEST_CASE("cephalo DP table: Algorithm 1's T(m, l) with even and uneven collectives, by hand") {
    fsdp_world w(2, 2, 16);
    w.hw.network.set_default(alpha_beta_link{seconds{0}, bytes_per_second{1e10}});
    cephalo_options opt;
    opt.compute_memory = w.mem;
    std::vector<std::string> notes;
    const auto in = make_cephalo_inputs(w.pb(), opt, notes);
    REQUIRE(in.dp.types.size() == 2);
    const auto& F = in.dp.types[0];
    const auto& S = in.dp.types[1];
    // (II): M(m) = 1 + 0.5 m GB within 80% of 12 GB allows m <= 17 on S; B = 16 caps both.
    CHECK(F.max_mbs() == 16);
    CHECK(S.max_mbs() == 16);
    CHECK(F.max_microbatches(3) == 5);
    // Per layer, rings of 4 GPUs: AG = RS = 3 x 1e8 B / 1e10 B/s = 30 ms. F at m 1, l 1:
    // max(1, 30) + max(1 + 2, 30 + 30) = 90 ms (backward with the recomputed forward); 4 layers.
    CHECK(F.at(1, 1) == doctest::Approx(0.360));
    // 16 microbatches: max(16, 30) + max(48, 60) = 90 ms, still communication bound.
    CHECK(F.at(1, 16) == doctest::Approx(0.360));
    // S at m 14: 1 + 7 GB compute + 1.6 GB even state <= 9.6 GB: max(28, 30) + max(84, 60) = 114 ms.
    CHECK(S.at(14, 1) == doctest::Approx(0.456));
    // S at m 15: 1 + 7.5 + 1.6 > 9.6 GB, so the uneven collectives, 15% slower:
    // max(30, 34.5) + max(90, 69) = 124.5 ms.
    CHECK(S.at(15, 1) == doctest::Approx(0.498));
    // (III): 57.6 GB usable - 6.4 GB state - 4 x 1 GB intercepts = 47.2 GB, / 0.5 GB = 94.
    CHECK(in.dp.max_mbs_sum == 94);
    // Communication bound everywhere: the best makespan is the floor, and Eqs. 2-3 agree.
    const auto r = test::cephalo_run(w.pb(), opt);
    REQUIRE(r.pl);
    CHECK(r.predicted.value == doctest::Approx(0.360));
    CHECK(r.est.time.iteration.value == doctest::Approx(0.360));
    // Here uneven units would cost 15% of exposed communication: the even split is kept.
    CHECK(r.uneven_units == 0);
    CHECK(r.pl->pipelines[0].stages[0].workers[0].state_share == doctest::Approx(0.25));
}

TEST_CASE("batch DP: stopped at any moment, the fast search returns nothing or a whole assignment (found by fuzzing)") {
    // A stop inside the last, recording pass left its choices half-written, and they were read:
    // a microbatch size of 0, then a division by it. Deadlines spread over the whole solve.
    batch_problem bp;
    bp.batch = 20000;
    for (const double t : {1.0, 1.7, 2.9}) bp.types.push_back(fsdp_gpu_type::proportional(40, std::vector<double>{t, 1.8 * t, 2.5 * t, 3.1 * t}, bp.batch));
    const auto t0 = std::chrono::steady_clock::now();
    const auto whole = fast_batch_dp(bp);
    REQUIRE(whole);
    const auto full = std::chrono::steady_clock::now() - t0;
    int stopped = 0;
    for (int i = 0; i <= 200; ++i) {
        const stop_condition stop = stop_condition::after(full * i / 200);
        const auto got = fast_batch_dp(bp, &stop);
        if (!got) {
            ++stopped;
            continue;
        }
        int batch = 0;
        for (const auto& g : got->gpus) {
            CHECK(g.mbs >= 1);
            batch += g.batch();
        }
        CHECK(batch == bp.batch);
    }
    CHECK(stopped > 0);
}

TEST_CASE("batch DP: the fast search equals Eq. 4 on random small instances") {
    test::xorshift gen(0x9E3779B97F4A7C15ull);
    auto rnd = [&](int n) { return gen.below(n); };
    int compared = 0, infeasible = 0;
    for (int trial = 0; trial < 60; ++trial) {
        batch_problem bp;
        bp.batch = 4 + rnd(20);
        const int T = 1 + rnd(3);
        for (int t = 0; t < T; ++t) {
            const int count = 1 + rnd(2), mmax = 1 + rnd(5);
            std::vector<double> time;
            double v = 0;
            for (int m = 1; m <= mmax; ++m) time.push_back(v += 0.5 + rnd(10) * 0.1);  // increasing, sublinear or not
            if (rnd(2) == 0) {
                bp.types.push_back(fsdp_gpu_type::proportional(count, time, bp.batch));
            } else {
                // Algorithm 1's shape: a communication floor that l microbatches must cover.
                const double floor = 0.5 + rnd(20) * 0.2;
                bp.types.push_back(fsdp_gpu_type::tabulate(count, mmax, bp.batch, [&](int m, int l) {
                    return std::max(l * time[static_cast<std::size_t>(m - 1)], floor);
                }));
            }
        }
        bp.max_mbs_sum = rnd(3) == 0 ? -1 : bp.gpus() + rnd(8);
        const auto slow = straightforward_batch_dp(bp);
        const auto fast = fast_batch_dp(bp);
        CAPTURE(trial);
        REQUIRE(slow.has_value() == fast.has_value());
        if (!slow) {
            ++infeasible;
            continue;
        }
        ++compared;
        CHECK(fast->makespan == doctest::Approx(slow->makespan).epsilon(1e-12));
        // Both assignments meet (I)-(III) and reach the makespan they report.
        for (const auto* a : {&*slow, &*fast}) {
            int total = 0;
            long long sum_m = 0;
            double worst = 0;
            std::size_t i = 0;
            for (const auto& t : bp.types)
                for (int c = 0; c < t.count; ++c, ++i) {
                    const auto& g = a->gpus[i];
                    CHECK(g.mbs >= 1);
                    CHECK(g.microbatches >= 1);
                    CHECK(g.mbs <= t.max_mbs());
                    total += g.batch();
                    sum_m += g.mbs;
                    worst = std::max(worst, t.at(g.mbs, g.microbatches));
                }
            CHECK(total == bp.batch);
            if (bp.max_mbs_sum >= 0) CHECK(sum_m <= bp.max_mbs_sum);
            CHECK(worst == doctest::Approx(a->makespan));
        }
    }
    CHECK(compared > 20);
    CHECK(infeasible > 0);
}

TEST_CASE("separate maxima: the exact Eqs. 2-3 optimum, by brute force on random small instances") {
    test::xorshift gen(0x2545F4914F6CDD1Dull);
    auto rnd = [&](int n) { return gen.below(n); };
    int compared = 0, improved = 0;
    for (int trial = 0; trial < 80; ++trial) {
        CAPTURE(trial);
        batch_problem bp;
        bp.batch = 3 + rnd(8);
        identical_units u;
        u.count = 1 + rnd(4);
        u.all_gather = rnd(3) * 0.4;
        u.reduce_scatter = rnd(3) * 0.3;
        const int types = 1 + rnd(2);
        for (int t = 0; t < types; ++t) {
            const int mmax = 1 + rnd(4);
            std::vector<double> f, b;
            double vf = 0, vb = 0;
            for (int m = 1; m <= mmax; ++m) f.push_back(vf += 0.2 + rnd(8) * 0.1), b.push_back(vb += 0.3 + rnd(12) * 0.1);
            u.fwd.push_back(f);
            u.bwd.push_back(b);
            u.even_mbs.push_back(rnd(mmax + 1));
            // The table Eq. 4 reads, with Algorithm 1's per-GPU collectives.
            bp.types.push_back(fsdp_gpu_type::tabulate(1 + rnd(2), mmax, bp.batch, [&, t](int m, int l) {
                const double k = m <= u.even_mbs[std::size_t(t)] ? 1.0 : u.uneven_factor;
                const auto i = std::size_t(m - 1);
                return u.count * (std::max(l * u.fwd[std::size_t(t)][i], u.all_gather * k) +
                                  std::max(l * u.bwd[std::size_t(t)][i], (u.all_gather + u.reduce_scatter) * k));
            }));
        }
        bp.max_mbs_sum = rnd(3) == 0 ? -1 : bp.gpus() + rnd(6);
        // Brute force: every (m, l) per GPU meeting (I)-(III).
        std::vector<const fsdp_gpu_type*> gpu;
        for (const auto& t : bp.types)
            for (int c = 0; c < t.count; ++c) gpu.push_back(&t);
        batch_assignment cur;
        cur.gpus.resize(gpu.size());
        double best = std::numeric_limits<double>::infinity();
        auto rec = [&](auto&& self, std::size_t i, int left, long long msum) -> void {
            if (i == gpu.size()) {
                if (left == 0 && (bp.max_mbs_sum < 0 || msum <= bp.max_mbs_sum)) best = std::min(best, separate_maxima_time(bp, u, cur));
                return;
            }
            for (int m = 1; m <= std::min(gpu[i]->max_mbs(), left); ++m)
                for (int l = 1; l * m <= left; ++l) {
                    cur.gpus[i] = {m, l};
                    self(self, i + 1, left - l * m, msum + m);
                }
        };
        rec(rec, 0, bp.batch, 0);
        const auto got = separate_maxima_batch_search(bp, u);
        REQUIRE(got.has_value() == std::isfinite(best));
        if (!got) continue;
        ++compared;
        CHECK(got->makespan == doctest::Approx(best).epsilon(1e-12));
        CHECK(separate_maxima_time(bp, u, *got) == doctest::Approx(got->makespan).epsilon(1e-12));
        int total = 0;
        for (const auto& g : got->gpus) total += g.batch();
        CHECK(total == bp.batch);
        // Never worse than Eq. 4's assignment under Eqs. 2-3, and bounded searches agree.
        const auto eq4 = fast_batch_dp(bp);
        REQUIRE(eq4.has_value());
        const double eq4_time = separate_maxima_time(bp, u, *eq4);
        CHECK(got->makespan <= eq4_time * (1 + 1e-12));
        const auto bounded = separate_maxima_batch_search(bp, u, eq4_time);
        CHECK(bounded.has_value() == (got->makespan < eq4_time));
        if (bounded) CHECK(bounded->makespan == doctest::Approx(got->makespan).epsilon(1e-12));
        improved += got->makespan < eq4_time * (1 - 1e-9) ? 1 : 0;
    }
    CHECK(compared > 40);
    MESSAGE(improved << " of " << compared << " instances faster than Eq. 4's assignment under Eqs. 2-3");
    CHECK(improved > 0);
}

TEST_CASE("cephalo planner: a valid plan, faster GPUs take more batch, deterministic") {
    const fsdp_world w(2, 2, 24);
    const problem pb = w.pb();
    cephalo_options opt;
    opt.compute_memory = w.mem;
    const auto r = test::cephalo_run(pb, opt);
    REQUIRE(r.pl);
    CHECK(validate(pb, *r.pl, cephalo_memory_model{w.mem}).ok());
    const auto& ws = r.pl->pipelines[0].stages[0].workers;
    REQUIRE(ws.size() == 4);
    int batch = 0;
    for (const auto& x : ws) batch += x.batch();
    CHECK(batch == 24);
    // F is twice as fast: with 24 samples over 2 F + 2 S the balanced split is 8/8/4/4.
    CHECK(ws[0].batch() == 8);
    CHECK(ws[1].batch() == 8);
    CHECK(ws[2].batch() == 4);
    CHECK(ws[3].batch() == 4);
    // Communication is hidden, so the state is split to balance memory utilisation (§2.4,
    // Fig. 9) at no cost in time: the 24 GB GPUs hold more of it than the 12 GB ones.
    CHECK(ws[0].state_share > ws[2].state_share);
    CHECK(r.uneven_units > 0);
    // Same plan from the straightforward DP's optimum.
    opt.straightforward = true;
    const auto s = test::cephalo_run(pb, opt);
    REQUIRE(s.pl);
    CHECK(s.predicted.value == doctest::Approx(r.predicted.value));
    CHECK(test::cephalo_run(pb, cephalo_options{0.8, w.mem, 64, false}).pl == r.pl);
}

TEST_CASE("cephalo planner: a global batch of 10^6 in units of 250 samples; a prime above 65535 says why (issue 16)") {
    fsdp_world w(2, 2, 1'000'000);
    cephalo_options opt;
    opt.compute_memory = w.mem;
    const auto r = test::cephalo_run(w.pb(), opt);
    REQUIRE(r.pl);
    CHECK(validate(w.pb(), *r.pl, cephalo_memory_model{w.mem}).ok());
    const auto& ws = r.pl->pipelines[0].stages[0].workers;
    REQUIRE(ws.size() == 4);
    long long batch = 0;
    for (const auto& x : ws) {
        batch += x.batch();
        CHECK(x.num_microbatches % 250 == 0);
    }
    CHECK(batch == 1'000'000);
    // 4 GPUs: at most max(4,096, 64 x 4) units, so the smallest divisor of 10^6 leaving at most
    // 4,096 units is 250 (4,000 units). F is twice as fast as S: each F takes twice an S's
    // samples, to within a unit.
    CHECK(double(ws[0].batch()) / double(ws[2].batch()) == doctest::Approx(2.0).epsilon(0.01));
    CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("4000 units of 250 samples") != std::string::npos; }));
    // 65,537 is prime: no unit of at most 1,024 samples divides it.
    w.job.global_batch = 65537;
    const auto none = test::cephalo_run(w.pb(), opt);
    CHECK_FALSE(none.pl);
    CHECK(std::any_of(none.notes.begin(), none.notes.end(), [](const std::string& n) { return n.find("no divisor up to 1024") != std::string::npos; }));
}

TEST_CASE("cephalo planner: memory limits force accumulation; the ablation baselines (§4.4)") {
    // 128 samples: without accumulation S would take about 21 (1 + 10.5 GB compute > 9.6 GB
    // usable, 80% of 12 GB). Layers of 6e8 parameters: 38.4 GB of state, 9.6 GB per GPU if
    // even, which cannot sit on S next to any compute memory.
    fsdp_world w(2, 2, 128, 6e8);
    const problem pb = w.pb();
    cephalo_options opt;
    opt.compute_memory = w.mem;
    const auto r = test::cephalo_run(pb, opt);
    REQUIRE(r.pl);
    CHECK(r.est.memory.fits());
    bool accumulates = false;
    for (const auto& x : r.pl->pipelines[0].stages[0].workers) accumulates = accumulates || x.num_microbatches > 1;
    CHECK(accumulates);
    // Memory is tight now: the 24 GB GPUs hold more of the state than the 12 GB ones.
    const auto& ws = r.pl->pipelines[0].stages[0].workers;
    CHECK(ws[0].state_share > ws[2].state_share);
    CHECK(r.utilisation <= 1.0);
    const auto even = cephalo_baseline(pb, fsdp_balance::even, opt);
    const auto cb = cephalo_baseline(pb, fsdp_balance::compute_only, opt);
    const auto mb = cephalo_baseline(pb, fsdp_balance::memory_only, opt);
    // Compute-only balancing runs out of memory at this batch; plain FSDP too (16 per GPU on
    // the 12 GB GPUs); memory-only fits but is no faster than Cephalo.
    CHECK_FALSE(cb.fits);
    CHECK_FALSE(even.fits);
    CHECK(mb.fits);
    CHECK(r.est.time.iteration <= mb.est.time.iteration);
    // Where compute-only balancing fits (small batch), Cephalo is at least as fast.
    fsdp_world small(2, 2, 12);
    const auto cb_small = cephalo_baseline(small.pb(), fsdp_balance::compute_only, opt);
    const auto r_small = test::cephalo_run(small.pb(), opt);
    REQUIRE(r_small.pl);
    CHECK(cb_small.fits);
    CHECK(r_small.est.time.iteration.value <= cb_small.est.time.iteration.value * (1 + 1e-12));
}

TEST_CASE("cephalo planner: bad or empty inputs give a clear answer, never a crash") {
    cephalo_options opt;
    opt.compute_memory = compute_memory_fit{gigabytes(1), gigabytes(0.5)};
    auto has_note = [](const test::cephalo_outcome& r, const std::string& what) {
        for (const auto& n : r.notes)
            if (n.find(what) != std::string::npos) return true;
        return false;
    };
    // An empty pool: no plan, and why.
    fsdp_world none(0, 0, 16);
    const auto r0 = test::cephalo_run(none.pb(), opt);
    CHECK_FALSE(r0.pl);
    CHECK(has_note(r0, "no GPU in the pool"));
    // Fewer samples than GPUs: every GPU of Eq. 4 needs one (l >= 1), so the slowest are left
    // out, with a note (issue 16: no plan at all before).
    fsdp_world crowded(2, 2, 3);
    const auto r1 = test::cephalo_run(crowded.pb(), opt);
    REQUIRE(r1.pl);
    const auto& kept = r1.pl->pipelines[0].stages[0].workers;
    CHECK(kept.size() == 3);
    CHECK(std::count_if(kept.begin(), kept.end(), [&](const worker_group& w) { return w.gpu == crowded.hw.gpu_id("F"); }) == 2);
    CHECK(has_note(r1, "global batch 3 < 4 GPUs"));
    CHECK(has_note(r1, "1 of them, the slowest per sample, are left out"));
    // A GPU type whose compute memory alone exceeds 80% of it is left out, with a note.
    opt.compute_memory = compute_memory_fit{gigabytes(10), gigabytes(0.5)};  // > 9.6 GB usable on S
    const auto r2 = test::cephalo_run(fsdp_world(2, 2, 16).pb(), opt);
    REQUIRE(r2.pl);
    CHECK(r2.pl->pipelines[0].stages[0].workers.size() == 2);
    CHECK(has_note(r2, "2 x S left out"));
    // No layers, or a bad option: input_error naming the field.
    fsdp_world empty_model;
    empty_model.model.layers.clear();
    CHECK_THROWS_WITH_AS((void)test::cephalo_run(empty_model.pb(), opt), doctest::Contains("has no layers"), input_error);
    opt.usable_fraction = 0;
    CHECK_THROWS_AS((void)test::cephalo_run(fsdp_world().pb(), opt), input_error);
}
