// Cephalo reproduction (issue 4) on Cephalo's published profiles, full precision, sequence 512
// (§4.1): Cluster A (2 x L4 + A6000 + P40 on one machine, 2 x P40 + 2 x P100 on the other,
// 50 Gbps) for Fig. 9, Table 4 and the ablation of §4.4 (Fig. 7); Cluster B (16 A10G, 16 V100,
// 32 T4 in 8-GPU VMs, 100 Gbps) for Table 5.
#include <doctest/doctest.h>

#include <map>
#include <sstream>

#include "data_dir.hpp"
#include "hetplan/io.hpp"
#include "hetplan/planners/cephalo_baselines.hpp"
#include "../planner_outcomes.hpp"

using namespace hetplan;

namespace {

struct fsdp_cluster : io::cephalo::world {
    cephalo_options opt;
    explicit fsdp_cluster(const io::cephalo::world_spec& spec) : io::cephalo::world(io::cephalo::load_world(test::data_dir() / "cephalo", spec)) {
        opt.compute_memory = compute_memory;
    }
};

fsdp_cluster cluster_a(const std::string& model_name, int batch) { return fsdp_cluster(io::cephalo::cluster_a(model_name, batch)); }
fsdp_cluster cluster_b(const std::string& model_name, int batch) { return fsdp_cluster(io::cephalo::cluster_b(model_name, batch)); }

std::string describe(const fsdp_cluster& c, const test::cephalo_outcome& r) {
    std::ostringstream os;
    os << r.throughput() * c.job.global_batch << " samples/s, search " << r.elapsed.value * 1e3 << " ms, uneven units " << r.uneven_units
       << ", peak utilisation " << r.utilisation << ";";
    // One line per GPU type: batch (m x l) and state share of each of its GPUs.
    std::map<std::string, std::string> per_type;
    for (const auto& w : r.pl->pipelines[0].stages[0].workers) {
        std::ostringstream g;
        g << " " << w.batch() << "(" << w.microbatch_size << "x" << w.num_microbatches << ")/" << std::round(w.state_share * 1000) / 1000;
        per_type[c.hw.gpu(w.gpu).type_name] += g.str();
    }
    for (const auto& [name, text] : per_type) os << " " << name << ":" << text;
    return os.str();
}

/// Plans `c` and compares the predicted samples/s with the paper's measured `paper`: the models
/// leave out framework overheads, so they predict more than was measured; a unit or scaling
/// error would leave the band [0.95, most] (docs/reproduction.md).
test::cephalo_outcome plan_against_paper(const fsdp_cluster& c, const char* name, double paper, double most) {
    const auto r = test::cephalo_run(c.pb(), c.opt);
    REQUIRE(r.pl);
    const double ours = r.throughput() * c.job.global_batch;
    MESSAGE(std::string(name) << " batch " << c.job.global_batch << ": paper " << paper << ", predicted " << ours << " (x" << ours / paper
                              << "); " << describe(c, r));
    CHECK(r.est.memory.fits());
    CHECK(ours / paper > 0.95);
    CHECK(ours / paper < most);
    return r;
}

}  // namespace

TEST_CASE("Cluster A, batch 256: the A6000 takes the largest batch and state, the L4s about half (Fig. 9)") {
    for (const std::string name : {"deepspeedvit_g", "deepspeedllama_3b"}) {
        CAPTURE(name);
        const auto c = cluster_a(name, 256);
        const auto r = test::cephalo_run(c.pb(), c.opt);
        REQUIRE(r.pl);
        MESSAGE(name << ": " << describe(c, r));
        CHECK(r.est.memory.fits());
        std::map<std::string, std::pair<double, double>> per_type;  // type -> (batch, state) of one GPU
        for (const auto& w : r.pl->pipelines[0].stages[0].workers) {
            auto& [b, s] = per_type[c.hw.gpu(w.gpu).type_name];
            b = std::max(b, double(w.batch()));
            s = std::max(s, w.state_share);
        }
        const auto [b_a6000, s_a6000] = per_type["A6000"];
        const auto [b_l4, s_l4] = per_type["L4"];
        const auto [b_p40, s_p40] = per_type["P40"];
        const auto [b_p100, s_p100] = per_type["P100"];
        for (double b : {b_l4, b_p40, b_p100}) CHECK(b_a6000 > b);
        for (double s : {s_l4, s_p40, s_p100}) CHECK(s_a6000 > s);
        // "Roughly half" of the A6000's batch (Fig. 9): within 30-70% here.
        CHECK(b_l4 / b_a6000 > 0.3);
        CHECK(b_l4 / b_a6000 < 0.7);
        // P40 and P100 compute alike; the P40's 24 GB hold more state than the P100's 12 GB.
        CHECK(s_p40 > s_p100);
    }
}

TEST_CASE("Cluster A, the fast DP equals Eq. 4 as written on the published profiles") {
    for (const std::string name : {"deepspeedvit_g", "deepspeedllama_3b", "deepspeedbert_large"})
        for (int batch : {32, 64}) {
            CAPTURE(name);
            CAPTURE(batch);
            const auto c = cluster_a(name, batch);
            std::vector<std::string> notes;
            const auto in = make_cephalo_inputs(c.pb(), c.opt, notes);
            const auto fast = search::fast_batch_dp(in.dp);
            const auto slow = search::straightforward_batch_dp(in.dp);
            REQUIRE(fast.has_value());
            REQUIRE(slow.has_value());
            CHECK(fast->makespan == doctest::Approx(slow->makespan).epsilon(1e-12));
        }
}

TEST_CASE("Table 4: every model on Cluster A at batch 128 and 256, next to the paper's measured throughput") {
    // Samples per second measured by the paper (Table 4, Cephalo row).
    const std::vector<std::tuple<const char*, double, double>> rows{
        {"deepspeedvit_g", 6.38, 6.41},       {"deepspeedvit_e", 3.02, 3.23},     {"deepspeedbert_large", 33.56, 33.69},
        {"deepspeedbert_xlarge", 11.47, 11.72}, {"deepspeedgpt_1.3b", 6.83, 7.09}, {"deepspeedgpt_2.7b", 4.57, 4.67},
        {"deepspeedllama_tiny", 12.58, 12.91}, {"deepspeedllama_3b", 4.51, 4.85}};
    for (const auto& [model, at128, at256] : rows)
        for (int batch : {128, 256}) {
            const char* const name = model;  // CAPTURE takes no structured binding in clang 14
            CAPTURE(name);
            CAPTURE(batch);
            const auto c = cluster_a(name, batch);
            const auto r = plan_against_paper(c, name, batch == 128 ? at128 : at256, 1.35);
            const auto even = cephalo_baseline(c.pb(), fsdp_balance::even, c.opt);
            if (even.fits) CHECK(r.est.time.iteration <= even.est.time.iteration * (1 + 1e-9));
        }
}

TEST_CASE("Table 5: Cluster B (64 GPUs) at batch 512 and 1024") {
    const std::vector<std::tuple<const char*, double, double>> rows{
        {"deepspeedvit_e", 20.37, 26.08}, {"deepspeedgpt_6.7b", 11.62, 17.04}, {"deepspeedllama_7b", 13.12, 17.74}};
    for (const auto& [model, at512, at1024] : rows)
        for (int batch : {512, 1024}) {
            const char* const name = model;  // CAPTURE takes no structured binding in clang 14
            CAPTURE(name);
            CAPTURE(batch);
            const auto c = cluster_b(name, batch);
            // More optimistic at 512, where the paper measured markedly less than at 1024 and the
            // models see no bound at 100 Gbps (docs/reproduction.md).
            const auto r = plan_against_paper(c, name, batch == 512 ? at512 : at1024, 2.0);
            // Faster GPUs take more samples each: A10G > V100 > T4 in their profiles.
            std::map<std::string, int> most;
            for (const auto& w : r.pl->pipelines[0].stages[0].workers) most[c.hw.gpu(w.gpu).type_name] = std::max(most[c.hw.gpu(w.gpu).type_name], w.batch());
            CHECK(most["A10G"] >= most["V100-16"]);
            CHECK(most["V100-16"] > most["T4"]);
        }
}

TEST_CASE("ablation (§4.4, Fig. 7): Cephalo beats even FSDP, compute-only and memory-only balancing") {
    for (const std::string name : {"deepspeedvit_e", "deepspeedgpt_2.7b", "deepspeedllama_3b"})
        for (int batch : {32, 64, 128, 256}) {
            CAPTURE(name);
            CAPTURE(batch);
            const auto c = cluster_a(name, batch);
            const auto r = test::cephalo_run(c.pb(), c.opt);
            REQUIRE(r.pl);
            const auto even = cephalo_baseline(c.pb(), fsdp_balance::even, c.opt);
            const auto cb = cephalo_baseline(c.pb(), fsdp_balance::compute_only, c.opt);
            const auto mb = cephalo_baseline(c.pb(), fsdp_balance::memory_only, c.opt);
            auto rate = [&](const fsdp_baseline& b) { return b.fits ? batch / b.est.time.iteration.value : 0.0; };
            auto show = [&](const fsdp_baseline& b) { return std::to_string(rate(b)) + (b.fits ? "" : " (OOM)"); };
            const double ours = batch / r.est.time.iteration.value;
            MESSAGE(name << " batch " << batch << ": Cephalo " << ours << " samples/s; FSDP " << show(even) << "; CB " << show(cb)
                         << "; MB " << show(mb));
            CHECK(r.est.memory.fits());
            CHECK(ours >= rate(even) * (1 - 1e-9));
            CHECK(ours >= rate(cb) * (1 - 1e-9));
            CHECK(ours >= rate(mb) * (1 - 1e-9));
        }
}
