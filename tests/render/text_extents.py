#!/usr/bin/env python3
"""Checks an SVG's text as a browser lays it out (issue 21): every text element inside the
picture, and no two overlapping. Writes an HTML page that embeds the SVG and measures each
<text> as laid out once rendered, runs headless Chromium on it (--dump-dom prints the page
after the script ran) and reads the verdict the script wrote.
usage: text_extents.py CHROMIUM OUT_DIR SVG...   (exit 1 on the first SVG that fails)"""
import html
import pathlib
import subprocess
import sys

SCRIPT = """
<script>
window.addEventListener('load', () => {
  const svg = document.querySelector('svg');
  const W = svg.width.baseVal.value, H = svg.height.baseVal.value, o = svg.getBoundingClientRect();
  // Boxes as laid out on the page, transforms (rotated axis titles) applied.
  const boxes = [...svg.querySelectorAll('text')].map(t => {
    const r = t.getBoundingClientRect();
    return {b: {x: r.left - o.left, y: r.top - o.top, width: r.width, height: r.height}, s: t.textContent};
  });
  const bad = [];
  for (const {b, s} of boxes)
    if (b.x < -0.5 || b.y < -0.5 || b.x + b.width > W + 0.5 || b.y + b.height > H + 0.5) bad.push('outside: ' + s);
  for (let i = 0; i < boxes.length; ++i)
    for (let j = i + 1; j < boxes.length; ++j) {
      const a = boxes[i].b, c = boxes[j].b, tol = 0.5;
      if (a.x + tol < c.x + c.width && c.x + tol < a.x + a.width && a.y + tol < c.y + c.height && c.y + tol < a.y + a.height)
        bad.push('overlap: "' + boxes[i].s + '" and "' + boxes[j].s + '"');
    }
  const out = document.createElement('pre');
  out.id = 'verdict';
  out.textContent = (bad.length ? 'TEXT-FAIL ' + bad.slice(0, 10).join(' | ') : 'TEXT-OK') + ' (' + boxes.length + ' texts)';
  document.body.appendChild(out);
});
</script>
"""

def check(browser, out, svg_path):
    svg = pathlib.Path(svg_path).read_text()
    page = pathlib.Path(out) / (pathlib.Path(svg_path).stem + ".extents.html")
    page.write_text("<!DOCTYPE html><html><body style='margin:0'>" + svg + SCRIPT + "</body></html>")
    # Chromium now and then hangs on a loaded machine: 60 s, then one more try with a fresh profile.
    dom = ""
    for attempt in (1, 2):
        try:
            dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={out}/profile-extents{attempt}",
                                  "--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri()],
                                 capture_output=True, text=True, timeout=60).stdout
            break
        except subprocess.TimeoutExpired:
            print(f"{svg_path}: chromium timed out (try {attempt})")
    start = dom.find('<pre id="verdict">')
    if start < 0:
        print(f"{svg_path}: the page's script wrote no verdict")
        return False
    verdict = html.unescape(dom[start + len('<pre id="verdict">'):dom.find("</pre>", start)])
    print(f"{svg_path}: {verdict}")
    return verdict.startswith("TEXT-OK")

browser, out, svgs = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.exit(0 if all(check(browser, out, s) for s in svgs) else 1)
