#pragma once
// Plan files (docs/formats.md):
// {"schedule": "1f1b", "memory": {"zero_stage": 0, ...},
//  "pipelines": [{"stages": [{"layers": [[0, 13]],
//      "workers": [{"gpu": "A100-40", "zone": "us-central1-a", "tp": 4, "microbatch_size": 8,
//                   "microbatches": 16, "state_share": 0.5, "node": 0}]}]}]}
// "state_share" defaults to an even split over the stage's workers; "node" to unpinned.
#include <filesystem>

#include "hetplan/core/separate_compilation.hpp"
#include "hetplan/io/cluster_json.hpp"
#include "hetplan/io/job_json.hpp"
#include "hetplan/plan/plan.hpp"

namespace hetplan::io {

inline schedule_kind read_schedule(const cursor& c) {
    const std::string s = c.string();
    for (auto k : {schedule_kind::one_f_one_b, schedule_kind::gpipe, schedule_kind::interleaved_ministages,
                   schedule_kind::layered_gradient_accumulation})
        if (to_string(k) == s) return k;
    c.fail("unknown schedule '" + s + "'");
}

inline plan read_plan(const cursor& root, const cluster& hw) {
    plan pl;
    if (auto s = root.find("schedule")) pl.schedule = read_schedule(*s);
    root.known_fields({"schedule", "memory", "pipelines"});
    if (auto m = root.find("memory")) {
        m->known_fields({}, memory_option_fields);
        pl.memory = read_memory_options(*m);
    }
    root["pipelines"].for_each_item([&](const cursor& pc) {
        pc.known_fields({"stages"});
        pipeline pipe;
        pc["stages"].for_each_item([&](const cursor& sc) {
            sc.known_fields({"layers", "workers"});
            stage st;
            sc["layers"].for_each_item([&](const cursor& r) {
                if (r.size() != 2) r.fail("a layer range is [first, one past last]");
                st.layers.push_back({r.at(0).integer(0), r.at(1).integer(0)});
            });
            bool explicit_share = false;
            sc["workers"].for_each_item([&](const cursor& wc) {
                wc.known_fields({"gpu", "zone", "tp", "microbatch_size", "microbatches", "state_share", "node"});
                worker_group w;
                w.gpu = gpu_ref(hw, wc["gpu"]);
                w.zone = zone_ref(hw, wc["zone"]);
                w.tp = wc.find("tp") ? wc["tp"].integer(1, limits::max_tp) : 1;
                w.microbatch_size = wc["microbatch_size"].integer(1);
                w.num_microbatches = wc["microbatches"].integer(1);
                if (auto s = wc.find("state_share")) {
                    w.state_share = s->non_negative();
                    explicit_share = true;
                }
                if (auto n = wc.find("node")) w.node = n->integer(-1);
                st.workers.push_back(w);
            });
            if (!explicit_share)
                for (auto& w : st.workers) w.state_share = 1.0 / double(st.workers.size());
            pipe.stages.push_back(std::move(st));
        });
        pl.pipelines.push_back(std::move(pipe));
    });
    return pl;
}

#if HETPLAN_HEADER_BODIES
HETPLAN_DECL plan read_plan_file(const std::filesystem::path& file, const cluster& hw) {
    const json j = parse_file(file);
    return read_plan(cursor(j, file.string()), hw);
}
#else
plan read_plan_file(const std::filesystem::path& file, const cluster& hw);  // src/io_functions.cpp
#endif

inline json write_plan(const plan& pl, const cluster& hw) {
    json pipes = json::array();
    for (const auto& pipe : pl.pipelines) {
        json stages = json::array();
        for (const auto& st : pipe.stages) {
            json layers = json::array(), workers = json::array();
            for (const auto& r : st.layers) layers.push_back({r.begin, r.end});
            for (const auto& w : st.workers) {
                json wj = {{"gpu", hw.gpu(w.gpu).type_name}, {"zone", hw.zone(w.zone).name}, {"tp", w.tp},
                           {"microbatch_size", w.microbatch_size}, {"microbatches", w.num_microbatches},
                           {"state_share", w.state_share}};
                if (w.node >= 0) wj["node"] = w.node;
                workers.push_back(wj);
            }
            stages.push_back({{"layers", layers}, {"workers", workers}});
        }
        pipes.push_back({{"stages", stages}});
    }
    return {{"schedule", std::string(to_string(pl.schedule))}, {"memory", write_memory_options(pl.memory)}, {"pipelines", pipes}};
}

}  // namespace hetplan::io
