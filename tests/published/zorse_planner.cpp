// Zorse reproduction (issue 5) on Zorse's published latencies, FP16 (§5.1), on the clusters of
// Table 2: A (2 x 2 H100 NVL + 2 x 8 A100-80GB, 50 Gbps, sequence 4096), B (8 A100-40GB,
// 16 A10G, 16 V100, 24 T4 in 8-GPU VMs, sequence 1024), C (two regions: 16 A10G + 48 T4 and
// 16 V100 + 48 T4, sequence 512). Expected shapes from §5.2 and §5.5.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "data_dir.hpp"
#include "hetplan/io/import/zorse_world.hpp"
#include "hetplan/planners/zorse.hpp"
#include "../planner_outcomes.hpp"

using namespace hetplan;

namespace {

io::zorse::world load(const io::zorse::world_spec& spec) { return io::zorse::load_world(test::data_dir() / "zorse", spec); }

/// A group as the paper describes it: GPU type, GPU count, region, layers and microbatches per GPU.
struct group_view {
    std::string type;
    std::set<std::size_t> zones;
    int gpus = 0, layers = 0;
    std::vector<int> microbatches;
};

std::vector<group_view> groups_of(const io::zorse::world& w, const test::zorse_outcome& r) {
    std::vector<group_view> out;
    for (const auto& st : r.pl->pipelines[0].stages) {
        group_view g;
        std::set<std::string> types;
        for (const auto& wk : st.workers) {
            types.insert(w.hw.gpu(wk.gpu).type_name);
            g.zones.insert(wk.zone.index());
            g.microbatches.push_back(wk.num_microbatches);
        }
        for (const auto& t : types) g.type += (g.type.empty() ? "" : "+") + t;
        g.gpus = static_cast<int>(st.workers.size());
        for (const auto& r2 : st.layers) g.layers += r2.size();
        out.push_back(std::move(g));
    }
    return out;
}

/// TFLOP/s as Zorse counts them (HFU, §5.1): forward, backward and the recomputed forward,
/// 4 x forward FLOPs per sample per iteration.
double tflops(const io::zorse::world& w, const test::zorse_outcome& r) {
    double fwd = 0;
    for (const auto& l : w.model.layers) fwd += l.flops_fwd;
    return 4.0 * fwd * w.job.global_batch / r.est.time.iteration.value / 1e12;
}

std::string describe(const io::zorse::world& w, const test::zorse_outcome& r) {
    std::ostringstream os;
    os << "m " << r.microbatch_size << ", S " << r.ministages << ", " << r.est.time.iteration.value << " s/it, " << tflops(w, r)
       << " TFLOP/s, " << r.partitions << " partitions, " << r.configurations << " configurations, " << r.elapsed.value * 1e3 << " ms;";
    for (const auto& g : groups_of(w, r)) {
        os << " [" << g.type << " x" << g.gpus << " z";
        for (auto z : g.zones) os << z;
        os << " L" << g.layers << " n" << *std::min_element(g.microbatches.begin(), g.microbatches.end()) << "-"
           << *std::max_element(g.microbatches.begin(), g.microbatches.end()) << "]";
    }
    return os.str();
}

/// The machines of `w` grouped by key(machine): a grouping given by hand.
template <class Key>
search::cluster_partition grouping(const io::zorse::world& w, Key key) {
    const auto ms = machines_of(w.hw);
    std::map<decltype(key(ms[0])), search::machine_group> by;
    for (std::size_t i = 0; i < ms.size(); ++i) by[key(ms[i])].push_back(static_cast<int>(i));
    search::cluster_partition p;
    for (auto& [k, g] : by) p.push_back(g);
    return p;
}

test::zorse_outcome plan_zorse(const io::zorse::world& w, zorse_options opt = {}) {
    const auto r = test::zorse_run(w.pb(), std::move(opt));
    REQUIRE(r.pl);
    CHECK(r.est.memory.fits());
    return r;
}


/// Plans `w` freely and with the paper's grouping (§5.2) under the same models: the planner may
/// not be slower (it searches a superset of the paper's choices except that grouping itself, so
/// this checks Phase 1 + Phase 2), and the paper's grouping stays close (`within`).
template <class Key>
test::zorse_outcome against_paper_grouping(const io::zorse::world& w, const std::string& name, Key key, double within) {
    const auto ours = plan_zorse(w);
    zorse_options fixed;
    fixed.partitions = {grouping(w, key)};
    const auto paper = plan_zorse(w, fixed);
    MESSAGE(name << " planned: " << describe(w, ours));
    MESSAGE(name << " paper's grouping: " << describe(w, paper) << " (x" << paper.predicted.value / ours.predicted.value << ")");
    CHECK(ours.predicted.value <= paper.predicted.value * (1 + 1e-9));
    CHECK(paper.predicted.value <= within * ours.predicted.value);
    return ours;
}

}  // namespace

TEST_CASE("Cluster C, Llama 13B and 33B (§5.2): no group spans regions; the paper's groups are close") {
    // The paper's groups: the A10Gs one group, the V100s two 8-GPU groups, the T4s two 24-GPU
    // groups per region.
    for (const std::string model : {"deepspeedllama_13b", "deepspeedllama_33b"}) {
        const auto c = load(io::zorse::cluster_c(model));
        CHECK(c.notes.empty());  // every GPU has published FP16 latencies at sequence 512
        const auto r = against_paper_grouping(c, "C " + model, [&](const machine& x) {
            const auto& t = c.hw.gpu(x.gpu).type_name;
            return std::tuple{t, x.zone.index(), t == "V100-16" ? x.index : t == "T4" ? x.index / 3 : 0};
        }, 1.05);
        for (const auto& g : groups_of(c, r)) CHECK(g.zones.size() == 1);
        if (model == "deepspeedllama_33b") {
            // 33B: the A10Gs alone, as in the paper (13B mixes them with the T4s of their region).
            const auto gs = groups_of(c, r);
            CHECK(std::count_if(gs.begin(), gs.end(), [](const group_view& g) { return g.type == "A10G" && g.gpus == 16; }) == 1);
        }
    }
}

TEST_CASE("Cluster C, Llama 33B: a slower cross-region link costs throughput, and groups still keep to a region") {
    double last = 0;
    for (double gbps : {10.0, 5.0, 2.0, 1.0, 0.5}) {
        const auto c = load(io::zorse::cluster_c("deepspeedllama_33b", 2048, gigabits_per_second(gbps)));
        const auto r = plan_zorse(c);
        MESSAGE("C 33B, " << gbps << " Gbps between regions: " << describe(c, r));
        for (const auto& g : groups_of(c, r)) CHECK(g.zones.size() == 1);
        CHECK(r.predicted.value >= last);
        last = r.predicted.value;
    }
}

TEST_CASE("Cluster A (§5.2): H100s and A100s never share a group from 13B on; the per-node grouping is close") {
    for (const std::string model : {"deepspeedllama_13b", "deepspeedllama_33b", "deepspeedllama_65b"}) {
        const auto a = load(io::zorse::cluster_a(model));
        CHECK(a.notes.empty());
        const auto r = against_paper_grouping(a, "A " + model, [](const machine& x) { return std::pair{x.gpu.index(), x.index}; }, 1.05);
        for (const auto& g : groups_of(a, r)) CHECK(g.type.find('+') == std::string::npos);
    }
}

TEST_CASE("Cluster B (§5.2): the A100s and the V100s keep to themselves; the by-type grouping is within 12 %") {
    for (const std::string model : {"deepspeedllama_7b", "deepspeedllama_13b", "deepspeedllama_33b"}) {
        const auto b = load(io::zorse::cluster_b(model));
        CHECK(b.notes.empty());
        const auto r = against_paper_grouping(b, "B " + model, [](const machine& x) { return x.gpu.index(); }, 1.12);
        for (const auto& g : groups_of(b, r))
            if (g.type.find("A100") != std::string::npos || g.type.find("V100") != std::string::npos) CHECK(g.type.find('+') == std::string::npos);
    }
}

TEST_CASE("§5.5: more ministages per GPU, markedly less memory at a small change in iteration time") {
    // 16 A10G (2 VMs, PCIe inside, 100 Gbps between), one group per VM, microbatch size 4.
    for (const std::string model : {"deepspeedllama_7b", "deepspeedllama_13b"}) {
        io::zorse::world_spec spec = io::zorse::cluster_b(model);
        spec.vms = {spec.vms[1]};
        const auto w = load(spec);
        std::vector<std::pair<double, double>> seen;  // (seconds, peak GB) per S that fits
        int first_fit = 0;
        for (int S = 1; S <= 16; S *= 2) {
            zorse_options opt;
            opt.min_ministages = opt.max_ministages = S;
            opt.microbatch_sizes = {4};
            opt.partitions = {grouping(w, [](const machine& x) { return x.index; })};
            const auto r = test::zorse_run(w.pb(), opt);
            if (!r.pl) {
                MESSAGE(model << " S " << S << ": does not fit");
                CHECK(seen.empty());  // once a count fits, every larger one does
                continue;
            }
            if (seen.empty()) first_fit = S;
            bytes peak{0};
            for (const auto& wm : r.est.memory.workers) peak = max(peak, wm.total);
            seen.emplace_back(r.est.time.iteration.value, peak.value / 1e9);
            MESSAGE(model << " S " << S << ": " << seen.back().first << " s, peak " << seen.back().second << " GB");
        }
        REQUIRE(seen.size() >= 2);
        for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i].second < seen[i - 1].second);
        // 7B fits from S = 1 and its peak falls by more than half; 13B fits from S = 4 on.
        CHECK(seen.back().second < (first_fit == 1 ? 0.5 : 0.8) * seen.front().second);
        CHECK(std::abs(seen.back().first / seen.front().first - 1) < 0.10);
        if (model == "deepspeedllama_13b") CHECK(first_fit > 1);  // 13B needs interleaving to fit at all
    }
}

TEST_CASE("Table 3: predicted TFLOP/s next to the paper's measured ones") {
    // The models leave out framework overheads, interference of overlapped communication with
    // compute, and offloading traffic: they predict more than was measured. A unit or scaling
    // error would leave [0.95, most]; Cluster C 33B is far above the paper (docs/reproduction.md).
    struct row { char cluster; const char* model; double paper, most; };
    for (const row& t : {row{'A', "deepspeedllama_7b", 4370.56, 1.3}, row{'A', "deepspeedllama_13b", 4917.87, 1.3},
                         row{'A', "deepspeedllama_33b", 5281.64, 1.3}, row{'A', "deepspeedllama_65b", 5239.13, 1.3},
                         row{'B', "deepspeedllama_7b", 3412.88, 1.6}, row{'B', "deepspeedllama_13b", 2965.64, 1.6},
                         row{'B', "deepspeedllama_33b", 2658.29, 1.6}, row{'C', "deepspeedllama_7b", 3936.94, 1.6},
                         row{'C', "deepspeedllama_13b", 3357.97, 1.6}, row{'C', "deepspeedllama_33b", 1548.60, 3.0}}) {
        const auto w = load(t.cluster == 'A' ? io::zorse::cluster_a(t.model) : t.cluster == 'B' ? io::zorse::cluster_b(t.model)
                                                                                                : io::zorse::cluster_c(t.model));
        const auto r = plan_zorse(w);
        const double ours = tflops(w, r);
        // §3.1.3: the host holds every ministage and boundary activation; the paper's largest
        // workload needed 130 GB, its VMs have 1152 GB or more.
        bytes host{0};
        for (const auto& [m, b] : zorse_memory_model{}.host_per_machine(w.pb(), *r.pl)) host = max(host, b);
        CHECK(host.value > 0);
        CHECK(host.value < 1152e9);
        MESSAGE("largest host memory per VM " << host.value / 1e9 << " GB");
        MESSAGE(std::string(1, t.cluster) << " " << std::string(t.model) << ": paper " << t.paper << ", predicted " << ours << " (x" << ours / t.paper << "); " << describe(w, r));
        CHECK(ours / t.paper > 0.95);
        CHECK(ours / t.paper < t.most);
    }
}

TEST_CASE("Zorse's own 4-GPU example (L4, L4, A6000, P40; Llama-tiny, batch 128, m 2, S 1): the exact split") {
    // One machine (cluster_info.json): every GPU pair over PCIe, 11.08 GB/s as Zorse's profiler
    // measured (intranode_bandwidth_results_0.json); each GPU type its own "VM" of hetplan's.
    const auto pcie = io::zorse::bw::pcie();
    const auto w = load({"deepspeedllama_tiny", 128, 512,
                         {{"L4", "l4", 1, 2, pcie, pcie, "paper103"}, {"A6000", "a6000", 1, 1, pcie, pcie, "paper103"},
                          {"P40", "p40", 1, 1, pcie, pcie, "paper103"}},
                         pcie});
    REQUIRE(w.notes.empty());
    zorse_options opt;
    opt.microbatch_sizes = {2};
    opt.max_ministages = 1;
    opt.partitions = {{{0, 1, 2}}};  // one group, as training_config.json has it
    const auto exact = zorse_planner<>(opt).plan(w.pb());
    const auto proportional = zorse_planner<search::proportional_microbatches>(opt).plan(w.pb());
    REQUIRE(exact.best());
    REQUIRE(proportional.best());
    auto counts = [&](const plan& pl) {
        std::map<std::string, std::vector<int>> n;
        for (const auto& x : pl.pipelines[0].stages[0].workers) n[w.hw.gpu(x.gpu).type_name].push_back(x.num_microbatches);
        return n;
    };
    // The published split (training_config.json): L4 18 and 17, A6000 28, P40 1.
    plan published = exact.best()->pl;
    for (auto& x : published.pipelines[0].stages[0].workers) {
        const std::string t = w.hw.gpu(x.gpu).type_name;
        x.num_microbatches = t == "A6000" ? 28 : t == "P40" ? 1 : x.num_microbatches;
    }
    published.pipelines[0].stages[0].workers[0].num_microbatches = 18;
    published.pipelines[0].stages[0].workers[1].num_microbatches = 17;
    const double published_s = zorse_simulator{}.run(w.pb(), published).time.iteration.value;
    const double exact_s = exact.best()->iteration().value, proportional_s = proportional.best()->iteration().value;
    MESSAGE("4-GPU example: exact " << exact_s << " s (A6000 " << counts(exact.best()->pl)["A6000"][0] << ", P40 "
                                    << counts(exact.best()->pl)["P40"][0] << "), Zorse's proportional rule " << proportional_s
                                    << " s, the published 18/17/28/1 " << published_s << " s");
    // Worked out with hetplan's own models (issue 14): 18/18/26/2 5.607 s, 18/18/27/1 5.439 s
    // (the optimum, by brute force), 18/17/28/1 5.498 s.
    CHECK(proportional_s == doctest::Approx(5.607).epsilon(1e-3));
    CHECK(exact_s == doctest::Approx(5.439).epsilon(1e-3));
    CHECK(published_s == doctest::Approx(5.498).epsilon(1e-3));
    CHECK(counts(exact.best()->pl)["A6000"] == std::vector<int>{27});
    CHECK(counts(exact.best()->pl)["P40"] == std::vector<int>{1});
    CHECK(exact_s < published_s);
}
