// Launch configurations (io/export_framework.hpp): Megatron-LM arguments, DeepSpeed config,
// TorchTitan TOML. Expected texts are hand-written from the plans below; every option written is
// checked against the names the frameworks' own sources define (lists below, with where they
// were read), and DeepSpeed's batch rule is checked on every export.
#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>

#include "hetplan/fixtures/gpus.hpp"
#include "hetplan/io/export_framework.hpp"

using namespace hetplan;

namespace {

// NVIDIA/Megatron-LM megatron/training/arguments.py (commit 000c4ac24f61), add_argument flags.
const std::set<std::string> megatron_flags{"--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--num-layers", "--hidden-size",
                                           "--num-attention-heads", "--max-position-embeddings", "--seq-length", "--micro-batch-size",
                                           "--global-batch-size", "--fp16", "--bf16", "--num-layers-per-virtual-pipeline-stage",
                                           "--num-virtual-stages-per-pipeline-rank", "--decoder-first-pipeline-num-layers",
                                           "--decoder-last-pipeline-num-layers", "--pipeline-model-parallel-layout", "--use-distributed-optimizer",
                                           "--recompute-granularity", "--recompute-method", "--recompute-num-layers"};
// deepspeedai/DeepSpeed docs/_pages/config-json.md and deepspeed/runtime/{constants,config}.py,
// zero/config.py, zero/offload_config.py: key paths.
const std::set<std::string> deepspeed_keys{"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                                           "zero_optimization", "zero_optimization.stage", "zero_optimization.offload_param",
                                           "zero_optimization.offload_param.device", "zero_optimization.offload_param.pin_memory",
                                           "zero_optimization.offload_optimizer", "zero_optimization.offload_optimizer.device",
                                           "fp16", "fp16.enabled", "bf16", "bf16.enabled", "activation_checkpointing",
                                           "activation_checkpointing.partition_activations", "activation_checkpointing.cpu_checkpointing"};
// pytorch/torchtitan torchtitan/config/job_config.py (commit 000204a4a8bf): section.key.
const std::set<std::string> torchtitan_keys{"training.local_batch_size", "training.global_batch_size", "training.seq_len", "training.steps",
                                            "training.mixed_precision_param", "parallelism.data_parallel_replicate_degree",
                                            "parallelism.data_parallel_shard_degree", "parallelism.tensor_parallel_degree",
                                            "parallelism.pipeline_parallel_degree", "parallelism.pipeline_parallel_schedule",
                                            "parallelism.pipeline_parallel_split_points", "parallelism.pipeline_parallel_microbatch_size",
                                            "parallelism.fsdp_reshard_after_forward", "activation_checkpoint.mode"};

void check_names(io::framework f, const std::string& text) {
    std::istringstream in(text);
    std::string line, section;
    if (f == io::framework::megatron) {
        while (std::getline(in, line)) {
            CAPTURE(line);
            CHECK(megatron_flags.count(line.substr(0, line.find(' '))) == 1);
        }
    } else if (f == io::framework::torchtitan) {
        while (std::getline(in, line)) {
            if (line.empty()) continue;
            if (line.front() == '[') {
                section = line.substr(1, line.size() - 2);
                continue;
            }
            CAPTURE(line);
            CHECK(torchtitan_keys.count(section + "." + line.substr(0, line.find(' '))) == 1);
        }
    } else {
        const io::json j = io::json::parse(text);
        auto walk = [](const auto& self, const io::json& node, const std::string& prefix) -> void {
            for (const auto& [k, v] : node.items()) {
                const std::string path = prefix.empty() ? k : prefix + "." + k;
                CAPTURE(path);
                CHECK(deepspeed_keys.count(path) == 1);
                if (v.is_object()) self(self, v, path);
            }
        };
        walk(walk, j, "");
        // DeepSpeed's batch assertion (runtime/config.py): train = micro x accumulation x DP size.
        const int dp = j["train_batch_size"].get<int>() / (j["train_micro_batch_size_per_gpu"].get<int>() * j["gradient_accumulation_steps"].get<int>());
        CHECK(j["train_batch_size"].get<int>() == j["train_micro_batch_size_per_gpu"].get<int>() * j["gradient_accumulation_steps"].get<int>() * dp);
    }
}

worker_group wg(int tp, int mbs, int n) { return worker_group{gpu_type_id{0}, zone_id{0}, tp, mbs, n, 1.0, -1}; }

/// One pipeline; stage s holds layers [cuts[s], cuts[s+1]) with `replicas` workers of TP `tp`.
plan uniform(const std::vector<int>& cuts, int replicas, int tp, int mbs, int n) {
    plan pl;
    pipeline p;
    for (std::size_t s = 0; s + 1 < cuts.size(); ++s) {
        stage st;
        st.layers.push_back({cuts[s], cuts[s + 1]});
        for (int r = 0; r < replicas; ++r) st.workers.push_back(wg(tp, mbs, n));
        for (auto& w : st.workers) w.state_share = 1.0 / replicas;
        p.stages.push_back(st);
    }
    pl.pipelines.push_back(p);
    return pl;
}

struct inputs {
    model_spec model = make_transformer({"gpt-8", 8, 64, 4, 128, 32});  // embedding, 8 blocks, head: 10 layers
    job_spec job;
    inputs() {
        job.sequence_length = 32;
        job.prec = precision::bf16_mixed;
    }
};

}  // namespace

TEST_CASE("export: a uniform plan in all three frameworks, by hand") {
    // P = 2 (blocks 4 + 4), 2 replicas per stage at TP 2, microbatch 2 x 4: global batch 16.
    const inputs in;
    const plan pl = uniform({0, 5, 10}, 2, 2, 2, 4);
    const auto m = io::export_megatron(pl, in.model, in.job);
    REQUIRE(m.ok());
    CHECK(m.text ==
          "--tensor-model-parallel-size 2\n--pipeline-model-parallel-size 2\n--num-layers 8\n--micro-batch-size 2\n--global-batch-size 16\n"
          "--seq-length 32\n--max-position-embeddings 32\n--hidden-size 64\n--bf16\n");
    check_names(io::framework::megatron, m.text);
    const auto d = io::export_deepspeed(pl, in.model, in.job);
    REQUIRE(d.ok());
    const io::json ds = io::json::parse(d.text);
    CHECK(ds["train_batch_size"] == 16);
    CHECK(ds["train_micro_batch_size_per_gpu"] == 2);
    CHECK(ds["gradient_accumulation_steps"] == 4);
    CHECK(ds["zero_optimization"]["stage"] == 0);
    CHECK(ds["bf16"]["enabled"] == true);
    check_names(io::framework::deepspeed, d.text);
    const auto t = io::export_torchtitan(pl, in.model, in.job);
    REQUIRE(t.ok());
    CHECK(t.text ==
          "[training]\nlocal_batch_size = 8\nglobal_batch_size = 16\nseq_len = 32\nmixed_precision_param = \"bfloat16\"\n\n"
          "[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 1\ntensor_parallel_degree = 2\n"
          "pipeline_parallel_degree = 2\npipeline_parallel_schedule = \"1F1B\"\npipeline_parallel_microbatch_size = 2\n"
          "pipeline_parallel_split_points = [\"layers.4\"]\n\n[activation_checkpoint]\nmode = \"none\"\n");
    check_names(io::framework::torchtitan, t.text);
}

TEST_CASE("export: uneven splits — Megatron's first/last counts or its layout, TorchTitan's split points") {
    const inputs in;
    {  // blocks 3 + 5: the first and the last stage's counts
        const auto m = io::export_megatron(uniform({0, 4, 10}, 1, 1, 1, 4), in.model, in.job);
        REQUIRE(m.ok());
        CHECK(m.text.find("--decoder-first-pipeline-num-layers 3\n--decoder-last-pipeline-num-layers 5\n") != std::string::npos);
        check_names(io::framework::megatron, m.text);
    }
    {  // blocks 1, 3, 2, 2: the middle stages differ, so a layout
        const plan pl = uniform({0, 2, 5, 7, 10}, 1, 1, 1, 4);
        const auto m = io::export_megatron(pl, in.model, in.job);
        REQUIRE(m.ok());
        CHECK(m.text.find("--pipeline-model-parallel-layout Et|ttt|tt|ttL\n") != std::string::npos);
        CHECK(m.text.find("--decoder-first") == std::string::npos);
        check_names(io::framework::megatron, m.text);
        const auto t = io::export_torchtitan(pl, in.model, in.job);
        REQUIRE(t.ok());
        CHECK(t.text.find("pipeline_parallel_split_points = [\"layers.1\", \"layers.4\", \"layers.6\"]\n") != std::string::npos);
        const auto d = io::export_deepspeed(pl, in.model, in.job);  // PipelineModule partitions uniformly or by parameters
        CHECK_FALSE(d.ok());
    }
    {  // a stage with the embedding alone: Megatron's layout allows an empty stage, TorchTitan's split points do not
        const plan pl = uniform({0, 1, 10}, 1, 1, 1, 4);
        const auto m = io::export_megatron(pl, in.model, in.job);
        REQUIRE(m.ok());
        CHECK(m.text.find("--pipeline-model-parallel-layout E|ttttttttL\n") != std::string::npos);
        CHECK_FALSE(io::export_torchtitan(pl, in.model, in.job).ok());
    }
}

TEST_CASE("export: ZeRO, recomputation and offloading map to each framework's switches, or are named as missing") {
    const inputs in;
    plan pl = uniform({0, 10}, 4, 1, 2, 2);
    pl.memory.zero_stage = 3;
    pl.memory.recompute = true;
    const auto m = io::export_megatron(pl, in.model, in.job);
    REQUIRE_FALSE(m.ok());
    CHECK(m.missing.front().find("ZeRO stage 3") != std::string::npos);
    const auto d = io::export_deepspeed(pl, in.model, in.job);
    REQUIRE(d.ok());
    CHECK(io::json::parse(d.text)["zero_optimization"]["stage"] == 3);
    check_names(io::framework::deepspeed, d.text);
    const auto t = io::export_torchtitan(pl, in.model, in.job);
    REQUIRE(t.ok());
    CHECK(t.text.find("data_parallel_shard_degree = 4\n") != std::string::npos);
    // No pipeline: the local batch is one microbatch, accumulated global / (local x DP) = 2 times.
    CHECK(t.text.find("local_batch_size = 2\nglobal_batch_size = 16\n") != std::string::npos);
    CHECK(t.text.find("mode = \"full\"\n") != std::string::npos);
    check_names(io::framework::torchtitan, t.text);
    pl.memory.zero_stage = 1;
    const auto m1 = io::export_megatron(pl, in.model, in.job);
    REQUIRE(m1.ok());
    CHECK(m1.text.find("--use-distributed-optimizer\n--recompute-granularity full\n--recompute-method uniform\n--recompute-num-layers 1\n") != std::string::npos);
    check_names(io::framework::megatron, m1.text);
    pl.memory.offload_params = true;
    CHECK_FALSE(io::export_deepspeed(pl, in.model, in.job).ok());  // offload_param needs stage 3
    pl.memory.zero_stage = 3;
    const auto d3 = io::export_deepspeed(pl, in.model, in.job);
    REQUIRE(d3.ok());
    CHECK(io::json::parse(d3.text)["zero_optimization"]["offload_param"]["device"] == "cpu");
    check_names(io::framework::deepspeed, d3.text);
}

TEST_CASE("export: DeepSpeed's pipeline engine takes ZeRO 0-1 only") {
    const inputs in;
    plan pl = uniform({0, 5, 10}, 2, 1, 2, 4);
    pl.memory.zero_stage = 1;
    CHECK(io::export_deepspeed(pl, in.model, in.job).ok());
    pl.memory.zero_stage = 2;
    const auto d = io::export_deepspeed(pl, in.model, in.job);
    REQUIRE_FALSE(d.ok());
    CHECK(d.missing.front().find("ZeRO stage 2 or 3 with pipeline stages") != std::string::npos);
}

TEST_CASE("export: a heterogeneous plan names every feature the frameworks lack") {
    const inputs in;
    // Sailor-style: TP 1 and 2 in one stage, 3 replicas then 2, uneven microbatch counts.
    plan pl = uniform({0, 5, 10}, 1, 1, 2, 4);
    pl.pipelines[0].stages[0].workers = {wg(1, 2, 2), wg(1, 2, 1), wg(2, 2, 1)};
    pl.pipelines[0].stages[1].workers = {wg(2, 2, 2), wg(2, 2, 2)};
    for (io::framework f : {io::framework::megatron, io::framework::deepspeed, io::framework::torchtitan}) {
        CAPTURE(io::to_string(f));
        const auto x = io::export_for(f, pl, in.model, in.job);
        REQUIRE_FALSE(x.ok());
        CHECK(x.text.empty());
        auto names = [&](const char* what) {
            return std::any_of(x.missing.begin(), x.missing.end(), [&](const std::string& s) { return s.find(what) != std::string::npos; });
        };
        CHECK(names("different TP degrees"));
        CHECK(names("number of replicas per stage"));
        CHECK(names("microbatch counts"));
    }
    // AutoHet-style: two pipelines that split the layers differently.
    plan two = uniform({0, 5, 10}, 1, 1, 2, 4);
    two.pipelines.push_back(uniform({0, 3, 10}, 1, 1, 2, 4).pipelines[0]);
    CHECK(io::export_megatron(two, in.model, in.job).missing.front().find("asymmetric pipelines") != std::string::npos);
    // Two identical pipelines are data parallelism.
    plan same = uniform({0, 5, 10}, 1, 1, 2, 4);
    same.pipelines.push_back(same.pipelines[0]);
    const auto ok = io::export_megatron(same, in.model, in.job);
    REQUIRE(ok.ok());
    CHECK(ok.text.find("--global-batch-size 16\n") != std::string::npos);
}

TEST_CASE("export: a model without an embedding, a block and a head is refused by name") {
    inputs in;
    in.model.layers.resize(2);
    CHECK_THROWS_WITH_AS((void)io::export_megatron(uniform({0, 2}, 1, 1, 1, 1), in.model, in.job), doctest::Contains("3 layers or more"), input_error);
}
