#pragma once
// The model to train, layer by layer. Sizes are per sample (one sequence) at the model's
// sequence length; element counts, so that the job's precision decides the bytes.
#include <cmath>
#include <string>
#include <vector>

#include <boost/container/flat_map.hpp>

#include "hetplan/core/error.hpp"
#include "hetplan/core/limits.hpp"

namespace hetplan {

/// What one GPU of a TP group holds of a layer, when measured (Sailor's llm_info.json).
struct tp_layer_stats {
    double params = 0;         ///< parameters on one GPU of the TP group
    double act_mem_elems = 0;  ///< activation elements kept for backward, per sample, on one GPU
};

struct layer_spec {
    std::string name;
    double params = 0;            ///< parameters of the whole layer
    double act_output_elems = 0;  ///< output activation per sample: what crosses a stage boundary
    double act_input_elems = 0;   ///< input activation per sample
    double act_mem_elems = 0;     ///< activation elements kept for backward per sample (TP 1)
    double flops_fwd = 0;         ///< forward FLOPs per sample (the analytical fallback's input)
    boost::container::flat_map<int, tp_layer_stats> per_tp;  ///< measured values at TP > 1

    /// Parameters on one GPU of a TP group of size `tp`: measured if known, else an even split.
    [[nodiscard]] double params_at(int tp) const {
        if (auto it = per_tp.find(tp); it != per_tp.end()) return it->second.params;
        return params / tp;
    }
    /// Activation elements per sample on one GPU of a TP group of size `tp`.
    [[nodiscard]] double act_mem_at(int tp) const {
        if (auto it = per_tp.find(tp); it != per_tp.end()) return it->second.act_mem_elems;
        return act_mem_elems / tp;
    }
};

struct model_spec {
    std::string name;
    int sequence_length = 0;  ///< sequence length the per-sample sizes were taken at
    int hidden_size = 0;
    std::vector<layer_spec> layers;

    [[nodiscard]] int num_layers() const { return static_cast<int>(layers.size()); }
    [[nodiscard]] double total_params() const {
        double p = 0;
        for (const auto& l : layers) p += l.params;
        return p;
    }
    [[nodiscard]] double params_in(int begin, int end) const {
        double p = 0;
        for (int i = begin; i < end; ++i) p += layers[static_cast<std::size_t>(i)].params;
        return p;
    }
    [[nodiscard]] double total_flops_fwd() const {
        double f = 0;
        for (const auto& l : layers) f += l.flops_fwd;
        return f;
    }

    /// Throws input_error naming the layer when a size is negative or not finite.
    void check(const std::string& source = {}) const {
        if (layers.empty()) throw input_error(source, "layers", "model '" + name + "' has no layers");
        if (layers.size() > std::size_t{limits::max_layers})
            throw input_error(source, "layers", std::to_string(layers.size()) + " layers, more than the limit " + std::to_string(limits::max_layers));
        if (sequence_length < 0 || sequence_length > limits::max_sequence)
            throw input_error(source, "sequence_length", "must be in [0, " + std::to_string(limits::max_sequence) + "]");
        for (std::size_t i = 0; i < layers.size(); ++i) {
            const auto& l = layers[i];
            const std::string where = "layers[" + std::to_string(i) + "]";
            // Within the limits, no size x bytes x batch product overflows a double.
            auto need = [&](double v, double max, const std::string& field) {
                if (!std::isfinite(v) || v < 0 || v > max)
                    throw input_error(source, where + field, "must be finite, >= 0 and at most " + std::to_string(max) + " (core/limits.hpp)");
            };
            need(l.params, limits::max_layer_elems, ".params");
            need(l.act_output_elems, limits::max_layer_elems, ".act_output_elems");
            need(l.act_input_elems, limits::max_layer_elems, ".act_input_elems");
            need(l.act_mem_elems, limits::max_layer_elems, ".act_mem_elems");
            need(l.flops_fwd, limits::max_layer_flops, ".flops_fwd");
            for (const auto& [tp, s] : l.per_tp) {
                const std::string at = ".per_tp." + std::to_string(tp);
                if (tp < 1 || tp > limits::max_tp) throw input_error(source, where + at, "TP degree outside [1, " + std::to_string(limits::max_tp) + "]");
                need(s.params, limits::max_layer_elems, at + ".params");
                need(s.act_mem_elems, limits::max_layer_elems, at + ".act_mem_elems");
            }
        }
    }
};

/// A decoder-only transformer described by its architecture, with sizes computed from the usual
/// formulas: 12h^2 + 13h parameters per block, 24·s·h^2 + 4·s^2·h forward FLOPs per block and
/// sample (Narayanan et al., SC'21), and activation memory per block and sample of
/// s·h·(34 + 5·a·s/h) bytes at 16 bits (Korthikanti et al., 2022), i.e. half that in elements.
/// Layer 0 is the embedding, the last layer the LM head, as in Sailor's profiles.
struct transformer_shape {
    std::string name;
    int layers = 0, hidden = 0, heads = 0, vocab = 0, sequence = 0;
};

inline model_spec make_transformer(const transformer_shape& t) {
    if (t.layers < 1 || t.hidden < 1 || t.heads < 1 || t.vocab < 1 || t.sequence < 1)
        throw input_error("transformer '" + t.name + "': every dimension must be >= 1");
    if (t.layers > limits::max_layers - 2 || t.hidden > limits::max_hidden || t.vocab > limits::max_vocab || t.sequence > limits::max_sequence)
        throw input_error("transformer '" + t.name + "': a dimension is beyond core/limits.hpp (layers " + std::to_string(limits::max_layers - 2) +
                          ", hidden " + std::to_string(limits::max_hidden) + ", vocab " + std::to_string(limits::max_vocab) + ", sequence " +
                          std::to_string(limits::max_sequence) + ")");
    const double h = t.hidden, s = t.sequence, a = t.heads, v = t.vocab;
    model_spec m;
    m.name = t.name;
    m.sequence_length = t.sequence;
    m.hidden_size = t.hidden;
    layer_spec embed;
    embed.name = "embedding";
    embed.params = v * h + s * h;
    embed.act_input_elems = s;
    embed.act_output_elems = s * h;
    embed.act_mem_elems = s * h;
    embed.flops_fwd = 2.0 * s * h;
    m.layers.push_back(embed);
    for (int i = 0; i < t.layers; ++i) {
        layer_spec b;
        b.name = "block" + std::to_string(i);
        b.params = 12.0 * h * h + 13.0 * h;
        b.act_input_elems = s * h;
        b.act_output_elems = s * h;
        b.act_mem_elems = s * h * (34.0 + 5.0 * a * s / h) / 2.0;
        b.flops_fwd = 24.0 * s * h * h + 4.0 * s * s * h;
        m.layers.push_back(b);
    }
    layer_spec head;
    head.name = "lm_head";
    head.params = 2.0 * h;  // final layer norm; the output projection is tied to the embedding
    head.act_input_elems = s * h;
    head.act_output_elems = s * v;
    head.act_mem_elems = 2.0 * s * v;
    head.flops_fwd = 2.0 * s * h * v;
    m.layers.push_back(head);
    return m;
}

}  // namespace hetplan
