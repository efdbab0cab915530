#!/bin/bash
# Step 1 of the analytical fallback's calibration study (docs/validation.md): imports every
# published (model, cluster/GPU) combination that `hetplan import` accepts.
# Usage: HETPLAN_DATA_DIR=../shared/data HETPLAN=build/default/apps/hetplan CALIB_DIR=/tmp/calib \
#        scripts/calibration/import_all.sh   (writes $CALIB_DIR/imp/<source>_<model>_<sel>/ and imp/log.txt)
set -u
D=$(realpath "${HETPLAN_DATA_DIR:?set HETPLAN_DATA_DIR to the published data folder}")
H=$(realpath "${HETPLAN:-build/default/apps/hetplan}")
mkdir -p "${CALIB_DIR:=/tmp/calib}" && cd "$CALIB_DIR"
mkdir -p imp
: > imp/log.txt
run() { local out=$1; shift; echo "\$ hetplan $* --out $out" >> imp/log.txt; if $H "$@" --out "$out" >> imp/log.txt 2>&1; then echo "ok $out" >> imp/log.txt; else echo "FAILED $out" >> imp/log.txt; rm -rf "$out"; fi; }
# Sailor: one import per (model, GPU type) so that every profile folder is tried. GPT-Neo-2.7 on
# GH-96 (a profile of 26 layers for 34) is refused since the import checks the files against each
# other: logged as FAILED, its rows are no longer in points.csv (they were excluded anyway).
for m in $(ls $D/sailor/profiles); do
  for g in $(ls $D/sailor/profiles/$m); do
    run imp/sailor_${m}_$g import sailor $D/sailor --model-name $m --available $g@us-central1-a=1
  done
done
models=$(python3 -c "import json;print(' '.join(json.load(open('$D/zorse/model_stats.json'))))")
for m in $models; do
  for c in A B C; do run imp/zorse_${m}_$c import zorse $D/zorse --cluster-name $c --model-name $m; done
  for c in A B; do run imp/cephalo_${m}_$c import cephalo $D/cephalo --cluster-name $c --model-name $m --batch 256; done
done
