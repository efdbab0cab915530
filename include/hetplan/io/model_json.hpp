#pragma once
// Model files (docs/formats.md):
// {"name": "OPT-350", "sequence_length": 2048, "hidden_size": 1024,
//  "layers": [{"name": "block", "repeat": 24, "params": 12596224, "act_output_elems": 2097152,
//              "act_input_elems": 2097152, "act_mem_elems": 90181632, "flops_fwd": 5.5e10,
//              "per_tp": {"2": {"params": 6299136, "act_mem_elems": 45090816}}}]}
// or {"transformer": {"layers": 24, "hidden": 1024, "heads": 16, "vocab": 50272, "sequence": 2048}}.
#include <filesystem>

#include "hetplan/core/separate_compilation.hpp"
#include "hetplan/io/json_reader.hpp"
#include "hetplan/workload/model.hpp"

namespace hetplan::io {

inline model_spec read_model(const cursor& root) {
    if (auto t = root.find("transformer")) {
        root.known_fields({"name", "transformer"});
        t->known_fields({"layers", "hidden", "heads", "vocab", "sequence"});
        transformer_shape s;
        s.name = root.find("name") ? root["name"].string() : "transformer";
        s.layers = (*t)["layers"].integer(1, limits::max_layers - 2);  // + embedding and head
        s.hidden = (*t)["hidden"].integer(1, limits::max_hidden);
        s.heads = (*t)["heads"].integer(1, s.hidden);
        s.vocab = (*t)["vocab"].integer(1, limits::max_vocab);
        s.sequence = (*t)["sequence"].integer(1, limits::max_sequence);
        return make_transformer(s);
    }
    root.known_fields({"name", "sequence_length", "hidden_size", "layers"});
    model_spec m;
    m.name = root["name"].string();
    m.sequence_length = root.find("sequence_length") ? root["sequence_length"].integer(0, limits::max_sequence) : 0;
    m.hidden_size = root.find("hidden_size") ? root["hidden_size"].integer(0, limits::max_hidden) : 0;
    root["layers"].for_each_item([&](const cursor& c) {
        c.known_fields({"name", "repeat", "params", "act_output_elems", "act_input_elems", "act_mem_elems", "flops_fwd", "per_tp"});
        layer_spec l;
        l.name = c.find("name") ? c["name"].string() : "layer";
        l.params = c["params"].non_negative(limits::max_layer_elems);
        l.act_output_elems = c["act_output_elems"].non_negative(limits::max_layer_elems);
        l.act_input_elems = c.find("act_input_elems") ? c["act_input_elems"].non_negative(limits::max_layer_elems) : l.act_output_elems;
        l.act_mem_elems = c["act_mem_elems"].non_negative(limits::max_layer_elems);
        l.flops_fwd = c.find("flops_fwd") ? c["flops_fwd"].non_negative(limits::max_layer_flops) : 0.0;
        if (auto per = c.find("per_tp"))
            per->for_each_member([&](const std::string& key, const cursor& v) {
                const int tp = cursor::integer_key(key, *per);
                if (tp < 1 || tp > limits::max_tp) v.fail("TP degree must be in [1, " + std::to_string(limits::max_tp) + "]");
                v.known_fields({"params", "act_mem_elems"});
                l.per_tp[tp] = {v["params"].non_negative(limits::max_layer_elems), v["act_mem_elems"].non_negative(limits::max_layer_elems)};
            });
        const int repeat = c.find("repeat") ? c["repeat"].integer(1, limits::max_layers) : 1;
        if (m.layers.size() + std::size_t(repeat) > std::size_t{limits::max_layers})
            c.fail("the model would have more than " + std::to_string(limits::max_layers) + " layers (docs/formats.md, limits)");
        for (int i = 0; i < repeat; ++i) m.layers.push_back(l);
    });
    if (m.layers.empty()) root["layers"].fail("model has no layers");
    return m;
}

#if HETPLAN_HEADER_BODIES
HETPLAN_DECL model_spec read_model_file(const std::filesystem::path& file) {
    const json j = parse_file(file);
    return read_model(cursor(j, file.string()));
}
#else
model_spec read_model_file(const std::filesystem::path& file);  // src/io_functions.cpp
#endif

inline json write_model(const model_spec& m) {
    json layers = json::array();
    for (const auto& l : m.layers) {
        json per = json::object();
        for (const auto& [tp, s] : l.per_tp) per[std::to_string(tp)] = {{"params", s.params}, {"act_mem_elems", s.act_mem_elems}};
        layers.push_back({{"name", l.name}, {"params", l.params}, {"act_output_elems", l.act_output_elems},
                          {"act_input_elems", l.act_input_elems}, {"act_mem_elems", l.act_mem_elems},
                          {"flops_fwd", l.flops_fwd}, {"per_tp", per}});
    }
    return {{"name", m.name}, {"sequence_length", m.sequence_length}, {"hidden_size", m.hidden_size}, {"layers", layers}};
}

}  // namespace hetplan::io
