#pragma once
// Profile files in hetplan's own format (docs/formats.md):
// {"profiles": [{"gpu": "A100-40", "tp": 1,
//                "points": [{"microbatch_size": 1, "layers": [[fwd_s, bwd_s, update_s], ...]}],
//                "tail": {"fwd": [[slope_s, intercept_s], ...], "bwd": [[...], ...]}}],
//  "analytical_fallback": {}}   (or {"efficiency": 0.4}: that fraction of peak for every layer)
#include <filesystem>
#include <string>
#include <vector>

#include "hetplan/core/separate_compilation.hpp"
#include "hetplan/io/json_reader.hpp"
#include "hetplan/workload/profile.hpp"

namespace hetplan::io {

inline layer_timing read_layer_timing(const cursor& c) {
    if (c.size() != 3) c.fail("a layer timing is [forward_s, backward_s, update_s]");
    const double max = limits::max_layer_time_s;
    return {seconds{c.at(0).non_negative(max)}, seconds{c.at(1).non_negative(max)}, seconds{c.at(2).non_negative(max)}};
}

inline void read_profiles(const cursor& root, profile_table& out) {
    root.known_fields({"profiles", "analytical_fallback"});
    root["profiles"].for_each_item([&](const cursor& pc) {
        pc.known_fields({"gpu", "tp", "points", "tail"});
        const std::string gpu = pc["gpu"].string();
        const int tp = pc["tp"].integer(1, limits::max_tp);
        profile_curve curve;
        pc["points"].for_each_item([&](const cursor& pt) {
            pt.known_fields({"microbatch_size", "layers"});
            std::vector<layer_timing> layers;
            pt["layers"].for_each_item([&](const cursor& l) { layers.push_back(read_layer_timing(l)); });
            if (!curve.points.empty() && layers.size() != curve.points.front().size())
                pt["layers"].fail("layer count differs from the first point's");
            curve.add_point(pt["microbatch_size"].integer(1, limits::max_global_batch), std::move(layers));
        });
        if (curve.points.empty()) pc["points"].fail("no measured point");
        if (auto t = pc.find("tail")) {
            t->known_fields({"fwd", "bwd"});
            linear_tail tail;
            auto line = [&](const cursor& arr, std::vector<double>& slope, std::vector<double>& icpt) {
                arr.for_each_item([&](const cursor& p) {
                    if (p.size() != 2) p.fail("a tail is [slope_s_per_sample, intercept_s]");
                    slope.push_back(p.at(0).bounded(limits::max_layer_time_s));
                    icpt.push_back(p.at(1).bounded(limits::max_layer_time_s));
                });
                if (slope.size() != curve.points.front().size()) arr.fail("tail needs one line per layer");
            };
            line((*t)["fwd"], tail.fwd_slope, tail.fwd_intercept);
            line((*t)["bwd"], tail.bwd_slope, tail.bwd_intercept);
            curve.tail = std::move(tail);
        }
        out.set_curve(gpu, tp, std::move(curve));
    });
    if (auto fb = root.find("analytical_fallback")) {
        fb->known_fields({"efficiency"});
        analytical_fallback f;
        if (fb->find("efficiency")) {
            f.efficiency = number_or(*fb, "efficiency", analytical_fallback::uncalibrated);
            if (!(*f.efficiency > 0 && *f.efficiency <= 1)) (*fb)["efficiency"].fail("must be in (0, 1]");
        }
        out.enable_analytical(f);
    }
}

/// One (GPU type, TP degree)'s curve as an entry of "profiles" (the format read_profiles reads).
inline json write_profile(const std::string& gpu, int tp, const profile_curve& c) {
    json points = json::array();
    for (std::size_t i = 0; i < c.mbs.size(); ++i) {
        json layers = json::array();
        for (const layer_timing& t : c.points[i]) layers.push_back({t.fwd.value, t.bwd.value, t.update.value});
        points.push_back({{"microbatch_size", c.mbs[i]}, {"layers", std::move(layers)}});
    }
    json j = {{"gpu", gpu}, {"tp", tp}, {"points", std::move(points)}};
    if (c.tail) {
        json f = json::array(), b = json::array();
        for (std::size_t l = 0; l < c.tail->fwd_slope.size(); ++l) {
            f.push_back({c.tail->fwd_slope[l], c.tail->fwd_intercept[l]});
            b.push_back({c.tail->bwd_slope[l], c.tail->bwd_intercept[l]});
        }
        j["tail"] = {{"fwd", std::move(f)}, {"bwd", std::move(b)}};
    }
    return j;
}

/// Every curve of `t` for the cluster's GPU types, and the analytical fallback if enabled: the
/// file read_profiles reads.
[[nodiscard]] inline json write_profiles(const profile_table& t, const std::vector<std::string>& gpu_names) {
    json profiles = json::array();
    for (const std::string& gpu : gpu_names)
        for (int tp : t.tp_degrees(gpu))
            if (const profile_curve* c = t.find(gpu, tp)) profiles.push_back(write_profile(gpu, tp, *c));
    json out = {{"profiles", std::move(profiles)}};
    if (t.fallback()) {
        out["analytical_fallback"] = json::object();
        if (t.fallback()->efficiency) out["analytical_fallback"]["efficiency"] = *t.fallback()->efficiency;
    }
    return out;
}

#if HETPLAN_HEADER_BODIES
HETPLAN_DECL profile_table read_profiles_file(const std::filesystem::path& file) {
    const json j = parse_file(file);
    profile_table t;
    read_profiles(cursor(j, file.string()), t);
    return t;
}
#else
profile_table read_profiles_file(const std::filesystem::path& file);  // src/io_functions.cpp
#endif

}  // namespace hetplan::io
