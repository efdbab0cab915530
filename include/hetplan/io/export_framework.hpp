#pragma once
// A plan as three training frameworks launch it (docs/formats.md, `hetplan export`): Megatron-LM
// command-line arguments, a DeepSpeed config JSON, a TorchTitan TOML. Each framework runs one
// shape: one TP degree, P contiguous stages, the same number of replicas per stage, one
// microbatch size and count, even ZeRO/FSDP shards. A plan outside it (TP per stage or per GPU
// type, stages with different replica counts, asymmetric pipelines, uneven batch shares or
// shards, ministages) is not written; `missing` names each feature the framework lacks, and the
// `ranks` format (export_ranks.hpp) is the way to run it.
//
// Layers: the frameworks count transformer blocks; hetplan's models (and Sailor's and Zorse's
// profiles) put the embedding first and the LM head last, so the blocks are the model's layers
// but its first and last. Option names as the frameworks' own sources define them (the tests
// list them with where they were read).
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "hetplan/core/error.hpp"
#include "hetplan/io/json_reader.hpp"
#include "hetplan/plan/plan.hpp"
#include "hetplan/workload/job.hpp"
#include "hetplan/workload/model.hpp"

namespace hetplan::io {

enum class framework { megatron, deepspeed, torchtitan };

[[nodiscard]] constexpr std::string_view to_string(framework f) {
    switch (f) {
        case framework::megatron: return "megatron";
        case framework::deepspeed: return "deepspeed";
        case framework::torchtitan: return "torchtitan";
    }
    return "megatron";
}

/// What a framework gets: the file's text, what it cannot express (then no text), and what the
/// user sets elsewhere (model code, launcher).
struct framework_export {
    std::string text;
    std::vector<std::string> missing;
    std::vector<std::string> notes;
    [[nodiscard]] bool ok() const { return missing.empty(); }
};

/// The plan in the terms the frameworks share, and what falls outside them.
struct uniform_plan {
    int tp = 1, pp = 1, dp = 1;  ///< dp: replicas per stage, over every pipeline
    int micro = 1, microbatches = 1, global_batch = 0, blocks = 0;
    std::vector<int> stage_blocks;  ///< transformer blocks per stage
    std::vector<std::string> missing;
    [[nodiscard]] bool even_split() const { return std::adjacent_find(stage_blocks.begin(), stage_blocks.end(), std::not_equal_to<>{}) == stage_blocks.end(); }
    [[nodiscard]] bool empty_stage() const { return std::find(stage_blocks.begin(), stage_blocks.end(), 0) != stage_blocks.end(); }
};

/// Reads the shared shape of `pl`; `missing` lists every way it departs from it.
[[nodiscard]] inline uniform_plan uniform_view(const plan& pl, const model_spec& model) {
    uniform_plan u;
    if (model.num_layers() < 3)
        throw input_error("model", "layers", "export: the frameworks need the embedding, at least one transformer block and the LM head (3 layers or more); '" +
                                                 model.name + "' has " + std::to_string(model.num_layers()));
    if (pl.pipelines.empty() || pl.pipelines.front().stages.empty() || pl.pipelines.front().stages.front().workers.empty())
        throw input_error("plan", "pipelines", "export: the plan has no workers");
    u.blocks = model.num_layers() - 2;
    auto miss = [&u](std::string s) {
        if (std::find(u.missing.begin(), u.missing.end(), s) == u.missing.end()) u.missing.push_back(std::move(s));
    };
    const pipeline& first = pl.pipelines.front();
    const worker_group& w0 = first.stages.front().workers.front();
    u.tp = w0.tp, u.micro = w0.microbatch_size, u.microbatches = w0.num_microbatches;
    u.pp = static_cast<int>(first.stages.size());
    const std::size_t per_stage = first.stages.front().workers.size();
    for (const pipeline& p : pl.pipelines) {
        u.global_batch += p.batch();
        bool same_split = p.stages.size() == first.stages.size();
        for (std::size_t s = 0; same_split && s < p.stages.size(); ++s) same_split = p.stages[s].layers == first.stages[s].layers;
        if (!same_split) miss("pipelines that differ in depth or layer split (asymmetric pipelines, AutoHet)");
        for (const stage& st : p.stages) {
            if (st.layers.size() > 1) miss("stages holding non-contiguous layer ranges (ministages, Zorse)");
            if (st.workers.size() != per_stage) miss("a different number of replicas per stage (data-parallel degree per stage, Sailor/Metis)");
            for (const worker_group& w : st.workers) {
                if (w.tp != u.tp) miss("different TP degrees per stage or per GPU type");
                if (w.microbatch_size != u.micro) miss("different microbatch sizes per replica");
                if (w.num_microbatches != u.microbatches) miss("different microbatch counts per replica (uneven batch shares)");
                if (pl.memory.zero_stage > 0 && std::abs(w.state_share - 1.0 / double(st.workers.size())) > 1e-9)
                    miss("uneven ZeRO/FSDP shards (state shares that differ between replicas)");
            }
        }
    }
    u.dp = static_cast<int>(per_stage * pl.pipelines.size());
    for (const stage& st : first.stages) {
        int n = 0;
        for (const layer_range& r : st.layers) n += std::max(0, std::min(r.end, model.num_layers() - 1) - std::max(r.begin, 1));
        u.stage_blocks.push_back(n);
    }
    return u;
}

namespace detail {

[[nodiscard]] inline std::string join_ints(const std::vector<int>& v, const char* sep) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
    return s;
}

/// The start every exporter shares: the plan's shape read, what falls outside every
/// framework's shape, and layered gradient accumulation (Cephalo), which none of them runs.
[[nodiscard]] inline framework_export start_export(const plan& pl, const model_spec& model, uniform_plan& u) {
    u = uniform_view(pl, model);
    framework_export out;
    out.missing = std::move(u.missing);
    if (pl.schedule == schedule_kind::layered_gradient_accumulation) out.missing.push_back("layered gradient accumulation (Cephalo)");
    return out;
}

}  // namespace detail

/// Megatron-LM's arguments (megatron/training/arguments.py), one per line.
[[nodiscard]] inline framework_export export_megatron(const plan& pl, const model_spec& model, const job_spec& job) {
    uniform_plan u;
    framework_export out = detail::start_export(pl, model, u);
    const memory_options& m = pl.memory;
    if (pl.schedule == schedule_kind::gpipe && u.pp > 1) out.missing.push_back("the GPipe schedule (Megatron runs 1F1B, or interleaved 1F1B)");
    if (m.zero_stage == 3) out.missing.push_back("ZeRO stage 3 (Megatron's distributed optimizer shards optimizer state and gradients, not parameters)");
    if (m.offload_params || m.offload_activations) out.missing.push_back("offloading parameters or activations to host memory");
    // Megatron splits blocks evenly over the stages; with the first and the last stage's counts
    // given, evenly over the rest; any other split (also a stage without blocks) as a layout:
    // E (embedding), t per block, L (loss), | between stages.
    const std::vector<int>& b = u.stage_blocks;
    const bool even = u.even_split();
    bool middle_even = true;
    for (std::size_t s = 2; s + 1 < b.size(); ++s) middle_even = middle_even && b[s] == b[1];
    const bool first_last = !even && middle_even && !u.empty_stage();
    if (!out.ok()) return out;
    std::string& t = out.text;
    auto arg = [&t](const std::string& name, const std::string& value = {}) { t += name + (value.empty() ? "" : " " + value) + "\n"; };
    arg("--tensor-model-parallel-size", std::to_string(u.tp));
    arg("--pipeline-model-parallel-size", std::to_string(u.pp));
    arg("--num-layers", std::to_string(u.blocks));
    if (first_last) {
        arg("--decoder-first-pipeline-num-layers", std::to_string(b.front()));
        arg("--decoder-last-pipeline-num-layers", std::to_string(b.back()));
    } else if (!even) {
        std::string layout = "E";
        for (std::size_t s = 0; s < b.size(); ++s) layout += (s ? "|" : "") + std::string(static_cast<std::size_t>(b[s]), 't');
        arg("--pipeline-model-parallel-layout", layout + "L");  // unquoted: the file is split on whitespace
    }
    arg("--micro-batch-size", std::to_string(u.micro));
    arg("--global-batch-size", std::to_string(u.global_batch));
    arg("--seq-length", std::to_string(job.sequence_length));
    arg("--max-position-embeddings", std::to_string(job.sequence_length));
    if (model.hidden_size > 0) arg("--hidden-size", std::to_string(model.hidden_size));
    if (job.prec == precision::fp16_mixed) arg("--fp16");
    if (job.prec == precision::bf16_mixed) arg("--bf16");
    if (m.zero_stage >= 1) arg("--use-distributed-optimizer");
    if (m.recompute) arg("--recompute-granularity", "full"), arg("--recompute-method", "uniform"), arg("--recompute-num-layers", "1");
    out.notes.push_back("data-parallel size " + std::to_string(u.dp) + " follows from the world size " + std::to_string(u.tp * u.pp * u.dp) +
                        " (launch " + std::to_string(u.tp * u.pp * u.dp) + " processes)");
    if (pl.pipelines.size() > 1) out.notes.push_back("the plan's " + std::to_string(pl.pipelines.size()) + " identical pipelines become data-parallel replicas");
    out.notes.push_back("the model's own flags (--num-attention-heads, --ffn-hidden-size, tokenizer, data) come from its Megatron config");
    return out;
}

/// A DeepSpeed config (docs: config-json): batch, ZeRO, precision, offload.
[[nodiscard]] inline framework_export export_deepspeed(const plan& pl, const model_spec& model, const job_spec& job) {
    uniform_plan u;
    framework_export out = detail::start_export(pl, model, u);
    const memory_options& m = pl.memory;
    if (pl.schedule == schedule_kind::gpipe && u.pp > 1) out.missing.push_back("the GPipe schedule (DeepSpeed's pipeline engine runs its 1F1B train schedule)");
    if (m.offload_params && m.zero_stage < 3) out.missing.push_back("offloading parameters below ZeRO stage 3 (DeepSpeed's offload_param needs stage 3)");
    if (u.pp > 1 && m.zero_stage >= 2) out.missing.push_back("ZeRO stage 2 or 3 with pipeline stages (DeepSpeed's pipeline engine refuses them)");
    if (u.pp > 1) {
        if (!u.even_split()) out.missing.push_back("an uneven layer split (PipelineModule partitions uniformly or by parameters; blocks per stage " +
                                         detail::join_ints(u.stage_blocks, ", ") + ")");
    }
    if (!out.ok()) return out;
    json c = {{"train_batch_size", u.global_batch},
              {"train_micro_batch_size_per_gpu", u.micro},
              {"gradient_accumulation_steps", u.microbatches},
              {"zero_optimization", {{"stage", m.zero_stage}}}};
    if (m.offload_params) c["zero_optimization"]["offload_param"] = {{"device", "cpu"}, {"pin_memory", true}};
    if (m.offload_activations) c["activation_checkpointing"] = {{"partition_activations", true}, {"cpu_checkpointing", true}};
    else if (m.recompute) c["activation_checkpointing"] = {{"partition_activations", false}};
    if (job.prec == precision::fp16_mixed) c["fp16"] = {{"enabled", true}};
    if (job.prec == precision::bf16_mixed) c["bf16"] = {{"enabled", true}};
    out.text = c.dump(2) + "\n";
    if (u.pp > 1)
        out.notes.push_back("pipeline: PipelineModule(num_stages=" + std::to_string(u.pp) +
                            ", partition_method=\"type:<the block class>\") in the model code (\"uniform\" counts the embedding and head too)");
    if (u.tp > 1) out.notes.push_back("TP " + std::to_string(u.tp) + " comes from the model code (e.g. Megatron-DeepSpeed's --tensor-model-parallel-size)");
    if (m.recompute) out.notes.push_back("recomputation: checkpoint every block in the model code (deepspeed.checkpointing.checkpoint, or activation_checkpoint_interval=1)");
    out.notes.push_back("train_batch_size = micro batch x accumulation x data-parallel size " + std::to_string(u.dp));
    return out;
}

/// A TorchTitan job config (TOML): [training], [parallelism], [activation_checkpoint].
[[nodiscard]] inline framework_export export_torchtitan(const plan& pl, const model_spec& model, const job_spec& job) {
    uniform_plan u;
    framework_export out = detail::start_export(pl, model, u);
    const memory_options& m = pl.memory;
    if (m.offload_params || m.offload_activations) out.missing.push_back("offloading parameters or activations to host memory");
    if (job.prec == precision::fp16_mixed) out.missing.push_back("fp16 mixed precision (TorchTitan's FSDP mixed precision is bf16 or fp32)");
    if (u.empty_stage())
        out.missing.push_back("a pipeline stage without transformer blocks (blocks per stage " + detail::join_ints(u.stage_blocks, ", ") + ")");
    if (!out.ok()) return out;
    std::string& t = out.text;
    auto line = [&t](const std::string& k, const std::string& v) { t += k + " = " + v + "\n"; };
    t += "[training]\n";
    // With pipeline stages the local batch is split into microbatches of the given size; without,
    // TorchTitan runs the local batch at once and accumulates global / (local x DP) of them.
    line("local_batch_size", std::to_string(u.pp > 1 ? u.micro * u.microbatches : u.micro));
    line("global_batch_size", std::to_string(u.global_batch));
    line("seq_len", std::to_string(job.sequence_length));
    line("mixed_precision_param", job.prec == precision::fp32 ? "\"float32\"" : "\"bfloat16\"");
    t += "\n[parallelism]\n";
    // ZeRO 0 is plain data parallelism (replicate); 1-3 shard (FSDP2; stages 1-2 keep the
    // parameters unsharded after the forward pass).
    line("data_parallel_replicate_degree", std::to_string(m.zero_stage == 0 ? u.dp : 1));
    line("data_parallel_shard_degree", std::to_string(m.zero_stage == 0 ? 1 : u.dp));
    if (m.zero_stage == 1 || m.zero_stage == 2) line("fsdp_reshard_after_forward", "\"never\"");
    line("tensor_parallel_degree", std::to_string(u.tp));
    line("pipeline_parallel_degree", std::to_string(u.pp));
    if (u.pp > 1) {
        line("pipeline_parallel_schedule", pl.schedule == schedule_kind::gpipe ? "\"GPipe\"" : "\"1F1B\"");
        line("pipeline_parallel_microbatch_size", std::to_string(u.micro));
        std::string points;
        int block = 0;
        for (std::size_t s = 0; s + 1 < u.stage_blocks.size(); ++s) {
            block += u.stage_blocks[s];
            points += (s ? ", " : "") + std::string("\"layers.") + std::to_string(block) + "\"";
        }
        line("pipeline_parallel_split_points", "[" + points + "]");
    }
    t += "\n[activation_checkpoint]\n";
    line("mode", m.recompute ? "\"full\"" : "\"none\"");
    out.notes.push_back("data-parallel degree " + std::to_string(u.dp) + ", world size " + std::to_string(u.tp * u.pp * u.dp));
    if (m.zero_stage == 0 && u.dp > 1 && (u.tp > 1 || u.pp > 1))
        out.notes.push_back("replicated data parallelism (DDP) beside TP or PP needs a TorchTitan recent enough to compose them; older ones ask for "
                            "data_parallel_shard_degree instead");
    return out;
}

[[nodiscard]] inline framework_export export_for(framework f, const plan& pl, const model_spec& model, const job_spec& job) {
    switch (f) {
        case framework::megatron: return export_megatron(pl, model, job);
        case framework::deepspeed: return export_deepspeed(pl, model, job);
        case framework::torchtitan: return export_torchtitan(pl, model, job);
    }
    return export_megatron(pl, model, job);
}

}  // namespace hetplan::io
