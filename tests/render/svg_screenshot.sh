#!/usr/bin/env bash
# Renders `hetplan plan --svg` and `hetplan pareto --svg` in headless Chromium and checks the screenshot is a picture; a
# blank SVG through the same path must be rejected (so the check can fail). Then the text of the
# pictures as Chromium lays it out (text_extents.py).
# usage: svg_screenshot.sh HETPLAN_BINARY OUT_DIR
# Exit 77 (skipped) when Chromium or python3 is missing, unless HETPLAN_REQUIRE_BROWSER=1.
set -euo pipefail
bin=$1 out=$2 here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z $browser ]] || ! command -v python3 >/dev/null; then
  echo "svg screenshot: chromium or python3 not installed (HETPLAN_WITH_BROWSER=1 scripts/install-deps.sh)"
  [[ ${HETPLAN_REQUIRE_BROWSER:-0} == 1 ]] && exit 1
  exit 77
fi
# Headless Chromium now and then hangs on a loaded machine (CI runs two tests at once): each call
# gets 60 s and one more try with a fresh profile; what the pictures hold is checked either way.
shoot() {  # svg png
  local h try
  h=$(sed -n 's/.*<svg [^>]*height="\([0-9]*\).*/\1/p' "$1" | head -1)
  for try in 1 2; do
    rm -f "$2"
    timeout 60 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$out/profile$try" \
      --screenshot="$2" --window-size="1100,${h:-800}" "file://$1" >"$out/chromium.log" 2>&1 || true
    [[ -s $2 ]] && return 0
    echo "svg screenshot: chromium wrote no $2 (try $try)"
  done
  cat "$out/chromium.log"
  exit 1
}
"$bin" plan --svg "$out/plan.svg" >"$out/plan.txt"
shoot "$out/plan.svg" "$out/plan.png"
python3 "$here/png_not_blank.py" "$out/plan.png"
"$bin" pareto --points 4 --svg "$out/pareto.svg" >"$out/pareto.txt"
shoot "$out/pareto.svg" "$out/pareto.png"
python3 "$here/png_not_blank.py" "$out/pareto.png"
# Text as the browser lays it out: inside the picture, never overlapping (issue 21), for the
# plan pictures of three schedules (1F1B, ministages, layer by layer) and the Pareto scatters;
# two overlapping labels must fail the same check.
"$bin" plan --planner zorse --svg "$out/plan_zorse.svg" >/dev/null
"$bin" plan --planner cephalo --svg "$out/plan_cephalo.svg" >/dev/null
"$bin" pareto --against gpus --points 4 --svg "$out/pareto_gpus.svg" >/dev/null
python3 "$here/text_extents.py" "$browser" "$out" "$out/plan.svg" "$out/plan_zorse.svg" "$out/plan_cephalo.svg" "$out/pareto.svg" "$out/pareto_gpus.svg"
printf '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="100"><text x="10" y="50" font-size="14">overlapping label</text><text x="40" y="52" font-size="14">another label</text></svg>\n' >"$out/overlap.svg"
if python3 "$here/text_extents.py" "$browser" "$out" "$out/overlap.svg"; then echo "svg text extents: overlapping labels passed the check"; exit 1; fi
printf '<svg xmlns="http://www.w3.org/2000/svg" width="1100" height="600"><rect width="100%%" height="100%%" fill="white"/></svg>\n' >"$out/blank.svg"
shoot "$out/blank.svg" "$out/blank.png"
if python3 "$here/png_not_blank.py" "$out/blank.png"; then echo "svg screenshot: a blank page passed the check"; exit 1; fi
echo "svg screenshot: ok"
