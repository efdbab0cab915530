#!/usr/bin/env bash
# Renders `hetplan plan --svg` and `hetplan pareto --svg` in headless Chromium and checks the screenshot is a picture; a
# blank SVG through the same path must be rejected (so the check can fail).
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
shoot() {  # svg png
  local h
  h=$(sed -n 's/.*<svg [^>]*height="\([0-9]*\).*/\1/p' "$1" | head -1)
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$out/profile" \
    --screenshot="$2" --window-size="1100,${h:-800}" "file://$1" >"$out/chromium.log" 2>&1
  [[ -s $2 ]] || { echo "svg screenshot: chromium wrote no $2"; cat "$out/chromium.log"; exit 1; }
}
"$bin" plan --svg "$out/plan.svg" >"$out/plan.txt"
shoot "$out/plan.svg" "$out/plan.png"
python3 "$here/png_not_blank.py" "$out/plan.png"
"$bin" pareto --points 4 --svg "$out/pareto.svg" >"$out/pareto.txt"
shoot "$out/pareto.svg" "$out/pareto.png"
python3 "$here/png_not_blank.py" "$out/pareto.png"
printf '<svg xmlns="http://www.w3.org/2000/svg" width="1100" height="600"><rect width="100%%" height="100%%" fill="white"/></svg>\n' >"$out/blank.svg"
shoot "$out/blank.svg" "$out/blank.png"
if python3 "$here/png_not_blank.py" "$out/blank.png"; then echo "svg screenshot: a blank page passed the check"; exit 1; fi
echo "svg screenshot: ok"
