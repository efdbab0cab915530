#!/usr/bin/env bash
# The GPU half of docs/validation.md: profiles a GPT (8 blocks, hidden 1024, 16 heads, vocabulary
# 32768, sequence 1024; 135 M parameters) on this machine's first GPU, then trains one-GPU plans
# at microbatch sizes 1 to 16 (global batch 16: 16 to 1 microbatches of gradient accumulation),
# some with activation recomputation, printing each measured step time and device memory next to
# the simulator's prediction; then plans with Sailor's planner on that profile and runs its plan.
#   scripts/gpu-validation.sh HETPLAN_BINARY OUT_DIR [cuda|cuda-bf16|cuda-own-gemm]
set -euo pipefail
H=${1:?usage: gpu-validation.sh HETPLAN_BINARY OUT_DIR [DEVICE]}
out=${2:?usage: gpu-validation.sh HETPLAN_BINARY OUT_DIR [DEVICE]}
device=${3:-cuda}
mkdir -p "$out"
cat >"$out/model.json" <<'JSON'
{"name": "gpt-1024x8", "transformer": {"layers": 8, "hidden": 1024, "heads": 16, "vocab": 32768, "sequence": 1024}}
JSON
cat >"$out/cluster.json" <<'JSON'
{"gpus": [{"name": "GPU", "memory_gib": 80, "gpus_per_node": 1, "price_per_hour": 1.0, "vendor": "any", "peak_tflops": {"fp32": 60}}],
 "zones": [{"name": "local", "region": "local"}],
 "available": [{"gpu": "GPU", "zone": "local", "count": 1}],
 "network": {"default": {"latency_s": 1e-6, "bandwidth_gbit_s": 400}}}
JSON
cat >"$out/job.json" <<'JSON'
{"global_batch": 16, "sequence_length": 1024, "precision": "fp32", "optimizer": "sgd"}
JSON
inputs=(--cluster "$out/cluster.json" --model "$out/model.json" --job "$out/job.json" --profiles "$out/profile-$device.json")
"$H" profile --model "$out/model.json" --gpu GPU --mbs 1,2,4,8,16 --repeats 5 --device "$device" --json "$out/profile-$device.json"
one_gpu_plan() {  # microbatch size, recompute (true|false)
  cat <<JSON
{"schedule": "1f1b", "memory": {"zero_stage": 0, "recompute": $2},
 "pipelines": [{"stages": [{"layers": [[0, 10]],
   "workers": [{"gpu": "GPU", "zone": "local", "tp": 1, "microbatch_size": $1, "microbatches": $((16 / $1))}]}]}]}
JSON
}
for m in 1 2 4 8 16; do
  one_gpu_plan $m false >"$out/plan_$m.json"
  "$H" run "${inputs[@]}" --plan "$out/plan_$m.json" --steps 6 --device "$device"
done
for m in 1 4 16; do  # with activation recomputation
  one_gpu_plan $m true >"$out/plan_${m}_recompute.json"
  "$H" run "${inputs[@]}" --plan "$out/plan_${m}_recompute.json" --steps 6 --device "$device"
done
# The profile end to end: Sailor's planner picks the plan, the GPU runs it.
"$H" plan "${inputs[@]}" --json "$out/plan_sailor-$device.json"
"$H" run "${inputs[@]}" --plan "$out/plan_sailor-$device.json" --steps 6 --device "$device"
