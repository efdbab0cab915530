#!/usr/bin/env bash
# The published scenarios of docs/reproduction.md from the command line (issue 20): each read
# straight from the published folder (`--from`) and through `hetplan import` + hetplan's files;
# both must give the same plan. Exit 77 (CTest skip) without HETPLAN_DATA_DIR.
# Usage: cli_scenarios.sh HETPLAN_CLI OUT_DIR SOURCE_DIR
set -euo pipefail
cli=$1 out=$2 src=$3
data=${HETPLAN_DATA_DIR:-}
[[ -z "$data" ]] && { echo "HETPLAN_DATA_DIR is not set"; exit 77; }
[[ "$data" != /* ]] && data="$src/$data"
[[ -d "$data/sailor" ]] || { echo "no published data at $data"; exit 77; }
mkdir -p "$out"

# name  kind  selection...  -- planner options
run() {
  local name=$1 kind=$2; shift 2
  local sel=() opts=()
  while [[ $# -gt 0 && $1 != -- ]]; do sel+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  opts=("$@")
  "$cli" import "$kind" "$data/$kind" "${sel[@]}" --out "$out/$name" >/dev/null
  "$cli" plan --from "$kind:$data/$kind" "${sel[@]}" "${opts[@]}" --json "$out/$name.from.json" >"$out/$name.from.txt"
  "$cli" plan --cluster "$out/$name/cluster.json" --model "$out/$name/model.json" --job "$out/$name/job.json" \
    --profiles "$out/$name/profiles.json" "${opts[@]}" --json "$out/$name.files.json" >/dev/null
  python3 - "$out/$name.from.json" "$out/$name.files.json" "$name" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
pa, pb = a["plans"], b["plans"]
assert len(pa) == len(pb) > 0, f"{sys.argv[3]}: {len(pa)} plan(s) from the folder, {len(pb)} from the imported files"
assert pa[0]["plan"] == pb[0]["plan"], f"{sys.argv[3]}: the imported files give another plan"
ta, tb = pa[0]["iteration_s"], pb[0]["iteration_s"]
assert abs(ta - tb) <= 1e-9 * ta, f"{sys.argv[3]}: iteration {ta} s from the folder, {tb} s from the files"
print(f"{sys.argv[3]}: {pa[0]['gpus']} GPUs, {ta:.4f} s/iteration, {pa[0]['cost_usd']:.4f} USD/iteration (same plan both ways)")
PY
}

# Sailor §5.2.2-§5.2.4 (items 1-4 of the published-data suite).
run sailor_opt_a128_v128 sailor --model-name OPT-350 --available A100-40@us-central1-a=128,V100-16@us-central1-a=128
run sailor_neo_a32_v96 sailor --model-name GPT-Neo-2.7 --available A100-40@us-central1-a=32,V100-16@us-central1-a=96
run sailor_geo_a100 sailor --model-name OPT-350 \
  --available A100-40@us-central1-a=32,A100-40@us-central1-b=32,A100-40@us-central1-c=32,A100-40@us-central1-f=32,A100-40@us-west1-b=32
run sailor_2z_mincost sailor --model-name OPT-350 \
  --available A100-40@us-central1-a=128,V100-16@us-central1-a=128,A100-40@us-central1-b=128,V100-16@us-central1-b=128 \
  -- --objective cost --min-throughput 0.2
# Zorse §5.1 clusters and Cephalo §4.1 clusters, each with its planner.
run zorse_b_llama13b zorse --cluster-name B --model-name deepspeedllama_13b -- --planner zorse
run cephalo_a_llama3b cephalo --cluster-name A --model-name deepspeedllama_3b --batch 256 -- --planner cephalo
