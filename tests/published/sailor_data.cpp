// Sailor's published profiles, model sizes and network fits (shared/data/sailor), simulated by
// hetplan and checked against an independent calculation written here from the paper's formulas
// (Sailor §4.3) that reads the raw JSON itself.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "data_dir.hpp"
#include "hetplan/hetplan.hpp"
#include "hetplan/io.hpp"

using namespace hetplan;
namespace fs = std::filesystem;

namespace {

fs::path sailor() { return test::data_dir() / "sailor"; }

struct world {
    cluster hw;
    model_spec model;
    job_spec job;
    profile_table profiles;
    io::json llm, net;
    std::map<std::string, io::json> raw_profiles;

    world(const std::string& model_name, int global_batch) {
        const auto cfg = io::parse_file(sailor() / "configs/basic_cluster_config.json");
        auto nodes = io::sailor::import_cluster_config(io::cursor(cfg, "basic_cluster_config.json"));
        auto a = fixtures::a100_40();
        a.memory_capacity = nodes.at("A100-40").memory;
        auto v = fixtures::v100_16();
        v.memory_capacity = nodes.at("V100-16").memory;
        const auto ga = hw.add_gpu(a, nodes.at("A100-40").gpus_per_node);
        const auto gv = hw.add_gpu(v, nodes.at("V100-16").gpus_per_node);
        for (const char* z : {"us-central1-a", "us-central1-b", "us-west1-b"}) {
            const auto zid = hw.add_zone(z);
            hw.pool.set(ga, zid, 128);
            hw.pool.set(gv, zid, 128);
        }
        net = io::parse_file(sailor() / "network/multizone_bandwidths_het.json");
        io::sailor::import_network(io::cursor(net, "net"), hw);
        const auto cost = io::parse_file(sailor() / "network/gcp/communication_cost.json");
        io::sailor::import_egress_prices(io::cursor(cost, "cost"), hw);
        llm = io::parse_file(sailor() / "llm_info.json");
        model = io::sailor::import_llm_info(io::cursor(llm, "llm_info.json"), model_name, 2048);
        job.global_batch = global_batch;
        job.sequence_length = 2048;
        for (const char* g : {"A100-40", "V100-16"}) {
            const fs::path f = sailor() / "profiles" / model_name / g / "profile.json";
            raw_profiles[g] = io::parse_file(f);
            io::sailor::import_profile(io::cursor(raw_profiles[g], f.string()), g, profiles);
        }
    }
    [[nodiscard]] problem pb() const { return {hw, model, job, profiles}; }
};

/// A single pipeline: stage i holds `ranges[i]` and D identical workers (gpu, zone, tp, mbs).
plan uniform(const world& w, const std::vector<std::pair<int, int>>& ranges, const std::vector<std::string>& gpus, int tp, int dp,
             int mbs, const std::string& zone = "us-central1-a") {
    plan pl;
    pipeline p;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        stage s;
        s.layers.push_back({ranges[i].first, ranges[i].second});
        for (int d = 0; d < dp; ++d)
            s.workers.push_back({w.hw.gpu_id(gpus[i]), w.hw.zone_id_of(zone), tp, mbs, w.job.global_batch / (mbs * dp), 1.0 / dp, -1});
        p.stages.push_back(s);
    }
    pl.pipelines.push_back(p);
    return pl;
}

// ---- The independent calculation: raw JSON, Sailor §4.3 formulas, one zone, uniform stages. ----
double raw_bw(const io::json& fit, double bytes_) {  // GB/s polynomial in log2(MB), capped
    const auto& c = fit[0];
    double hi = 14.0;  // a concave quadratic is held at its vertex (docs: bandwidth never decreases)
    if (c.size() == 3 && c[0].get<double>() < 0) hi = std::min(hi, -c[1].get<double>() / (2 * c[0].get<double>()));
    const double x = std::clamp(std::log2(bytes_ / 1e6), 0.0, std::max(hi, 0.0));
    double v = 0;
    for (const auto& k : c) v = v * x + k.get<double>();
    return std::min(v * 1e9, fit[1].get<double>());
}
double raw_ring(const io::json& fit, double size, int n) {  // 500 MB buckets, 2(n-1) chunk transfers each
    if (n < 2) return 0;
    double t = 0;
    for (double left = size; left > 0; left -= 5e8) {
        const double chunk = std::min(left, 5e8) / n;
        t += 2.0 * (n - 1) * chunk / raw_bw(fit, chunk);
    }
    return t;
}
struct reference {
    double iteration, memory_stage0;
};
reference independent(const world& w, const std::vector<std::pair<int, int>>& ranges, const std::vector<std::string>& gpus, int tp,
                      int dp, int mbs) {
    const int P = static_cast<int>(ranges.size());
    const int m = w.job.global_batch / (mbs * dp);
    const std::string z = "us-central1-a", t = std::to_string(tp), mb = std::to_string(mbs);
    std::vector<double> comp(P), x(P, 0.0), sync(P), upd(P);
    for (int i = 0; i < P; ++i) {
        const auto& prof = w.raw_profiles.at(gpus[i])[mb][t];
        double params = 0;
        for (int l = ranges[i].first; l < ranges[i].second; ++l) {
            const auto& e = prof[std::to_string(l)];
            comp[i] += e[0].get<double>() + e[1].get<double>();
            upd[i] += e[2].get<double>();
            params += w.llm[w.model.name]["1"][std::to_string(l)]["params_floats"].get<double>();
        }
        sync[i] = raw_ring(w.net[z][gpus[i]][t][z][gpus[i]][t], params * 4, dp);
    }
    for (int i = 0; i + 1 < P; ++i) {
        const double act = w.llm[w.model.name]["1"][std::to_string(ranges[i].second - 1)]["act_output_floats"].get<double>() * 4 * mbs;
        x[i] += act / raw_bw(w.net[z][gpus[i]][t][z][gpus[i + 1]][t], act);
        x[i + 1] += act / raw_bw(w.net[z][gpus[i + 1]][t][z][gpus[i]][t], act);
    }
    double ramp = 0, straggler = 0;
    for (int i = 0; i < P; ++i) {
        ramp += comp[i] + x[i];
        straggler = std::max(straggler, comp[i] + x[i]);
    }
    const double iteration = ramp + (m - 1) * straggler + *std::max_element(sync.begin(), sync.end()) +
                             *std::max_element(upd.begin(), upd.end());
    // Memory of a stage-0 worker: params at TP x 24 B + act_mem at TP x 4 B x mbs x P in flight + 2/3 GB.
    double params = 0, act = 0;
    for (int l = ranges[0].first; l < ranges[0].second; ++l) {
        const auto& e = w.llm[w.model.name][t][std::to_string(l)];
        params += e["params_floats"].get<double>();
        act += e["act_mem_floats"].get<double>();
    }
    return {iteration, params * 24 + act * 4 * mbs * std::min(P, m) + (tp == 1 ? 2e9 : 3e9)};
}

void check_against_reference(const world& w, const std::vector<std::pair<int, int>>& ranges, const std::vector<std::string>& gpus, int tp,
                             int dp, int mbs) {
    const plan pl = uniform(w, ranges, gpus, tp, dp, mbs);
    const auto rep = validate(w.pb(), pl, sailor_memory_model{});
    CHECK_MESSAGE(rep.ok(), rep.summary());
    const estimate e = simulator<>{}.run(w.pb(), pl);
    const reference r = independent(w, ranges, gpus, tp, dp, mbs);
    MESSAGE(w.model.name << " PP" << ranges.size() << " TP" << tp << " DP" << dp << " mbs" << mbs << ": iteration "
                         << e.time.iteration.value << " s, stage-0 memory " << e.memory.workers[0].total.value / 1e9 << " GB, cost "
                         << e.money.total.value << " USD");
    CHECK(e.time.iteration.value == doctest::Approx(r.iteration).epsilon(1e-9));
    CHECK(e.memory.workers[0].total.value == doctest::Approx(r.memory_stage0).epsilon(1e-9));
}

}  // namespace

TEST_CASE("every Sailor profile and network file loads") {
    const auto llm = io::parse_file(sailor() / "llm_info.json");
    int profiles = 0;
    for (const auto& model_dir : fs::directory_iterator(sailor() / "profiles")) {
        const std::string model = model_dir.path().filename().string();
        const model_spec m = io::sailor::import_llm_info(io::cursor(llm, "llm_info.json"), model);
        CHECK_NOTHROW(m.check());
        for (const auto& gpu_dir : fs::directory_iterator(model_dir.path())) {
            profile_table t;
            io::sailor::import_profile_file(gpu_dir.path() / "profile.json", gpu_dir.path().filename().string(), t);
            CHECK_NOTHROW(t.check());
            // The published GH-96 profile of GPT-Neo-2.7 covers 26 layers while llm_info.json
            // lists 34: reported, not fatal; the profiles used below must match.
            const std::string gpu = gpu_dir.path().filename().string();
            for (int tp : t.tp_degrees(gpu)) {
                const std::size_t n = t.find(gpu, tp)->points.front().size();
                if (n != m.layers.size()) MESSAGE(model << "/" << gpu << " TP" << tp << ": " << n << " layers, llm_info.json has " << m.layers.size());
                if (gpu == "A100-40" || gpu == "V100-16") CHECK(n == m.layers.size());
            }
            ++profiles;
        }
    }
    CHECK(profiles >= 17);
    cluster hw;
    for (const char* g : {"A100-40", "V100-16", "GH-96", "A100-80", "Titan-RTX", "RTX-2080", "RTX-3090"}) {
        auto spec = fixtures::a100_40();
        spec.type_name = g;
        hw.add_gpu(spec, 4);
    }
    for (const char* z : {"us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f", "us-west1-b"}) hw.add_zone(z);
    for (const char* f : {"multizone_bandwidths_het.json", "multizone_bandwidths.json"}) {
        const auto j = io::parse_file(sailor() / "network" / f);
        CHECK(io::sailor::import_network(io::cursor(j, f), hw) > 0);
    }
    const auto homo = io::parse_file(sailor() / "network/network_coeffs_all_homo.json");
    CHECK_NOTHROW(io::sailor::import_homogeneous_network(io::cursor(homo, "homo"), hw));
    for (const char* f : {"network/intra_node_bandwidths.json", "network/gcp/intra_node_bandwidths.json"}) {
        const auto j = io::parse_file(sailor() / f);
        CHECK_NOTHROW(io::sailor::import_intra_node(io::cursor(j, f), hw));
    }
    CHECK(hw.network.intra_node(hw.gpu_id("A100-40"), 4) != nullptr);
    const auto cost = io::parse_file(sailor() / "network/gcp/communication_cost.json");
    io::sailor::import_egress_prices(io::cursor(cost, "cost"), hw);
    CHECK(hw.network.egress_price(hw.zone_id_of("us-central1-a"), hw.zone_id_of("us-west1-b")).value == doctest::Approx(0.02e-9));
    for (const char* f : {"training_config_opt_350.json", "training_config_gpt_neo27.json"}) {
        const auto j = io::parse_file(sailor() / "configs" / f);
        const auto [job, model] = io::sailor::import_training_config(io::cursor(j, f));
        CHECK(job.sequence_length == 2048);
        CHECK(!model.empty());
    }
}

TEST_CASE("simulated plans match the independent calculation (global batch 2048, sequence 2048)") {
    SUBCASE("OPT-350") {
        const world w("OPT-350", 2048);
        check_against_reference(w, {{0, 26}}, {"A100-40"}, 4, 8, 8);
        check_against_reference(w, {{0, 26}}, {"V100-16"}, 4, 16, 1);
        check_against_reference(w, {{0, 13}, {13, 26}}, {"V100-16", "A100-40"}, 4, 4, 4);
    }
    SUBCASE("GPT-Neo-2.7") {
        const world w("GPT-Neo-2.7", 2048);
        check_against_reference(w, {{0, 17}, {17, 34}}, {"A100-40", "A100-40"}, 4, 8, 2);
        check_against_reference(w, {{0, 9}, {9, 17}, {17, 26}, {26, 34}}, {"V100-16", "V100-16", "A100-40", "A100-40"}, 4, 4, 1);
    }
}

TEST_CASE("cross-check with the public implementation's plan: OPT-350, 32 A100, global batch 1024") {
    // peers.md: PP1 TP4 DP8 mbs 8 -> 8.10 s = 16 x 0.4753 s + all-reduce 0.4688 s + update 0.0244 s.
    // hetplan caps the fitted bandwidth at its measured maximum, which makes the all-reduce ~1%
    // longer; the tolerance is 1%.
    const world w("OPT-350", 1024);
    const estimate e = simulator<>{}.run(w.pb(), uniform(w, {{0, 26}}, {"A100-40"}, 4, 8, 8));
    CHECK(e.time.pipelines[0].straggler.value == doctest::Approx(0.4753).epsilon(1e-3));
    CHECK(e.time.update.value == doctest::Approx(0.0244).epsilon(2e-3));
    CHECK(e.time.sync.value == doctest::Approx(0.4688).epsilon(0.011));
    CHECK(e.time.iteration.value == doctest::Approx(8.10).epsilon(0.01));
}

TEST_CASE("monotonicity on published data") {
    const world w("OPT-350", 2048);
    const simulator<> sim;
    // Memory grows with the microbatch size.
    double prev = 0;
    for (int mbs : {1, 2, 4, 8}) {
        const double mem = sim.run(w.pb(), uniform(w, {{0, 26}}, {"A100-40"}, 4, 8, mbs)).memory.workers[0].total.value;
        CHECK(mem > prev);
        prev = mem;
    }
    // ... and toward earlier stages: activations per layer and sample decrease along the pipeline.
    const auto four = sim.run(w.pb(), uniform(w, {{1, 7}, {7, 13}, {13, 19}, {19, 25}}, {"A100-40", "A100-40", "A100-40", "A100-40"}, 4, 2, 2));
    std::set<std::size_t> seen;
    double prev_act = 1e300;
    for (const auto& m : four.memory.workers) {
        if (!seen.insert(m.stage).second) continue;
        CHECK(m.activations.value < prev_act);
        CHECK(m.total.value <= (seen.size() == 1 ? 1e300 : prev_act + 1e12));
        prev_act = m.activations.value;
    }
    // Iteration time grows when replicas are removed.
    const double t8 = sim.run(w.pb(), uniform(w, {{0, 26}}, {"A100-40"}, 4, 8, 4)).time.iteration.value;
    const double t4 = sim.run(w.pb(), uniform(w, {{0, 26}}, {"A100-40"}, 4, 4, 4)).time.iteration.value;
    CHECK(t4 > t8);
    // Sync time grows with a slower link: moving half of the replicas to the other region puts
    // the much slower us-central1 <-> us-west1 link into the ring.
    plan local = uniform(w, {{0, 26}}, {"A100-40"}, 4, 8, 4, "us-central1-a");
    plan split = local;
    for (std::size_t k = 4; k < 8; ++k) split.pipelines[0].stages[0].workers[k].zone = w.hw.zone_id_of("us-west1-b");
    const auto fast = sim.run(w.pb(), local);
    const auto slow = sim.run(w.pb(), split);
    CHECK(slow.time.sync.value > 2 * fast.time.sync.value);
    CHECK(slow.money.communication.value > 0);
    CHECK(fast.money.communication.value == 0);
}

TEST_CASE("GPT-Neo-2.7 on one V100-16 runs out of memory; a split plan fits") {
    const world w("GPT-Neo-2.7", 2048);
    const plan single = uniform(w, {{0, 34}}, {"V100-16"}, 1, 1, 1);
    const auto bad = validate(w.pb(), single, sailor_memory_model{});
    CHECK(bad.has(violation_kind::memory));
    MESSAGE(bad.summary());
    const plan split = uniform(w, {{0, 9}, {9, 17}, {17, 26}, {26, 34}}, {"V100-16", "V100-16", "V100-16", "V100-16"}, 4, 2, 1);
    const auto good = validate(w.pb(), split, sailor_memory_model{});
    CHECK_MESSAGE(good.ok(), good.summary());
}

TEST_CASE("Zorse/Cephalo latency and model files import") {
    const fs::path dir = test::data_dir();
    const auto lat = io::parse_file(dir / "cephalo/model_latencies.json");
    profile_table t;
    io::cephalo::import_latencies(io::cursor(lat, "model_latencies.json"), {"deepspeedgpt_2.7b", "a6000", 512, "float32"}, "A6000", 32, t);
    const auto* c = t.find("A6000", 1);
    REQUIRE(c != nullptr);
    // Measured at microbatch sizes 1..16 (6.0345 ms forward at 1, 58.531 ms at 10); beyond them
    // the fit 6.0693 ms x m - 1.2964 ms: at m = 20, 120.09 ms.
    CHECK(c->mbs.size() == 16);
    CHECK(c->at(1, 0).first.fwd.value == doctest::Approx(6.03454e-3).epsilon(1e-4));
    CHECK(c->at(10, 31).first.fwd.value == doctest::Approx(58.53132e-3).epsilon(1e-6));
    CHECK(c->at(20, 31).first.fwd.value == doctest::Approx(6.069280323529418e-3 * 20 - 1.2964015000000995e-3).epsilon(1e-9));
    const auto stats = io::parse_file(dir / "zorse/model_stats.json");
    const model_spec m = io::cephalo::import_model_stats(io::cursor(stats, "model_stats.json"), "deepspeedgpt_2.7b", 512);
    CHECK(m.num_layers() == 32);
    // 32 blocks of 78,676,480 parameters; the file's total of 2,774,553,600 includes embeddings
    // and head, spread over the blocks.
    CHECK(m.layers[0].params == doctest::Approx(2774553600.0 / 32));
    CHECK(m.total_params() == doctest::Approx(2774553600.0));
}
