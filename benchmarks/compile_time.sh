#!/usr/bin/env bash
# What a consumer pays to compile hetplan: CPU seconds (user + sys) of the compiler at -O2, the
# fastest of N runs, for
#   - two consumers, header-only and against hetplan::compiled (HETPLAN_SEPARATE_COMPILATION and
#     the static library; linking included): examples/plan_in_ten_lines.cpp (one planner, no I/O)
#     and examples/plan_from_files.cpp (Sailor's planner and three JSON files);
#   - each top-level header alone (-fsyntax-only: parsing and what it instantiates).
# A report, not a test: timings depend on the machine (README, "Compile time", quotes this one).
#
# usage: benchmarks/compile_time.sh [BUILD_DIR (default build/default)] [RUNS (default 3)]
# env:   CXX (default g++), CXXFLAGS (default -O2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
runs=${2:-3}
cxx=${CXX:-g++}
flags=${CXXFLAGS:--O2}
lib=$build/libhetplan.a
[[ -f $lib ]] || { echo "compile_time: $lib not found: build hetplan_compiled first (cmake --build --preset default --target hetplan_compiled)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The fastest of $runs runs of "$@", in CPU seconds; a failing command stops the script with
# its errors (callers assign the result first: `set -e` does not reach into an echo's $(...)).
cpu() {
    local best= t i
    for ((i = 0; i < runs; i++)); do
        if ! t=$( { TIMEFORMAT='%U %S'; time "$@" >/dev/null 2>"$work/err"; } 2>&1 ); then
            echo "compile_time: failed: $*" >&2
            cat "$work/err" >&2
            return 1
        fi
        t=$(awk 'END {printf "%.2f", $1 + $2}' <<<"$t")
        if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$t; fi
    done
    echo "$best"
}

echo "compiler: $($cxx --version | head -1), flags: -std=c++20 $flags; fastest of $runs; CPU s = user + sys"
echo
echo "| consumer | header-only | hetplan::compiled | goal |"
echo "| --- | ---: | ---: | ---: |"
for c in plan_in_ten_lines:6 plan_from_files:10; do
    name=${c%%:*} goal=${c##*:}
    src=$root/examples/$name.cpp
    ho=$(cpu "$cxx" -std=c++20 $flags -I"$root/include" "$src" -o "$work/a.out")
    sep=$(cpu "$cxx" -std=c++20 $flags -I"$root/include" -DHETPLAN_SEPARATE_COMPILATION "$src" "$lib" -o "$work/b.out")
    echo "| examples/$name.cpp | $ho s | $sep s | <= $goal s |"
done
echo
echo "| header alone (-fsyntax-only) | CPU s |"
echo "| --- | ---: |"
for h in core/units.hpp hardware/cluster.hpp workload/model.hpp plan/plan.hpp plan/validator.hpp cost/simulator.hpp \
         search/run.hpp planners/sailor.hpp planners/zorse.hpp planners/cephalo.hpp planners/autohet.hpp planners/metis.hpp \
         planners.hpp io.hpp render/plan_svg.hpp hetplan.hpp; do
    printf '#include "hetplan/%s"\n' "$h" >"$work/h.cpp"
    t=$(cpu "$cxx" -std=c++20 $flags -I"$root/include" -fsyntax-only "$work/h.cpp")
    echo "| hetplan/$h | $t |"
done
