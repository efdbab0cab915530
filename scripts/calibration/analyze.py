#!/usr/bin/env python3
"""Reads $CALIB_DIR/points.csv and writes $CALIB_DIR/tables.md (and prints it).

Usable point: point_kind == measured, empty note, a peak for the compute dtype, FLOPs > 0, fwd > 0.
FLOPs used: flops_fwd (model.json) where > 0, else flops_derived (Sailor only; docs/validation.md).
Unique measurements: rows identical in (source, model, gpu, dtype, seq, tp, mbs, layer_kind, fwd, bwd)
are one measurement (Zorse/Cephalo store one measured layer copied to every block; Sailor repeats
equal blocks). All statistics below are over unique measurements.

Achieved efficiency e = flops*mbs / (fwd * peak * tp); hetplan's fallback predicts fwd at e = 0.4, so
measured/predicted(0.4) = 0.4 / e.
Fitted model: e(w) = e_max * w / (w + w_half), w = flops*mbs/tp, i.e. predicted fwd = (w + w_half)/(e_max*peak):
least squares on log(measured fwd / predicted fwd) (= on log of measured time), each unique measurement
weight 1; e_max closed form for a given w_half, w_half by grid + golden-section search over log10 w_half.
"""
import csv, math, os, sys
from collections import defaultdict, Counter

CALIB = os.environ.get('CALIB_DIR', '/tmp/calib')
IN = os.path.join(CALIB, 'points.csv')
OUT = os.path.join(CALIB, 'tables.md')
out_lines = []


def P(s=''):
    out_lines.append(s)


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float('nan')
    k = (len(xs) - 1) * q
    f = math.floor(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def med(xs):
    return pct(xs, 0.5)


def g3(x):
    if x != x:
        return 'nan'
    if x == 0:
        return '0'
    a = abs(x)
    if a >= 1e4 or a < 1e-3:
        return f'{x:.2e}'
    return f'{x:.3g}'


def trio(xs):
    return f'{g3(med(xs))} [{g3(pct(xs, .1))}, {g3(pct(xs, .9))}]'


rows = list(csv.DictReader(open(IN)))
for r in rows:
    for k in ('flops_fwd', 'flops_derived', 'fwd_s', 'bwd_s'):
        r[k] = float(r[k])
    for k in ('tp', 'mbs', 'layer'):
        r[k] = int(r[k])
    r['peak'] = float(r['peak_flops']) if r['peak_flops'] else 0.0
    r['pk16'] = float(r['peak_fp16']) if r['peak_fp16'] else 0.0
    r['family'] = 'sailor' if r['source'] == 'sailor' else 'zorse/cephalo'

# ---------------------------------------------------------------- accounting
P('## Row accounting (points.csv)')
P()
P(f'rows: {len(rows)}')
acc = Counter()
for r in rows:
    if r['point_kind'] != 'measured':
        why = 'fit-derived mbs-1 point (no measured list)'
    elif r['note'].startswith('excluded'):
        why = 'excluded: GH-96 GPT-Neo-2.7 copy of OPT-350 profile'
    elif 'catalogue' in r['note']:
        why = 'GPU type not in hetplan catalogue (no peak)'
    elif 'model_stats' in r['note']:
        why = 'model not in model_stats.json (no FLOPs)'
    elif r['peak'] <= 0:
        why = f"no peak for {r['dtype']} in catalogue"
    elif r['flops_fwd'] == 0 and r['flops_derived'] == 0:
        why = 'flops 0 (no derivation)'
    else:
        why = 'usable' + (' (model.json flops_fwd == 0: derived flops)' if r['flops_fwd'] == 0 else '')
    r['why'] = why
    acc[(r['source'], why)] += 1
P()
P('| source | status | rows |')
P('|---|---|---:|')
for (s, w), n in sorted(acc.items()):
    P(f'| {s} | {w} | {n} |')
zero = Counter((r['source'], r['model']) for r in rows if r['flops_fwd'] == 0)
P()
P('Rows whose flops_fwd (as hetplan import / model.json gives it) is 0, by source: ' +
  ', '.join(f'{s}: {n}' for s, n in sorted(Counter(r["source"] for r in rows if r["flops_fwd"] == 0).items())))
P()
P('GPU types / dtypes without a peak (rows): ' + ', '.join(
    f'{g} {d}: {n}' for (g, d), n in sorted(Counter((r['gpu'], r['dtype']) for r in rows if r['peak'] <= 0).items())))

# ---------------------------------------------------------------- unique usable measurements
uniq = {}
for r in rows:
    if not r['why'].startswith('usable'):
        continue
    if r['fwd_s'] <= 0:
        continue
    r['F'] = r['flops_fwd'] if r['flops_fwd'] > 0 else r['flops_derived']
    key = (r['source'], r['model'], r['gpu'], r['dtype'], r['seq'], r['tp'], r['mbs'], r['layer_kind'], r['fwd_s'], r['bwd_s'])
    if key not in uniq:
        uniq[key] = r
U = list(uniq.values())
for r in U:
    r['w'] = r['F'] * r['mbs'] / r['tp']
    r['eff'] = r['w'] / (r['fwd_s'] * r['peak'])
    r['ratio04'] = 0.4 / r['eff']
    r['eff16'] = r['w'] / (r['fwd_s'] * r['pk16']) if r['pk16'] > 0 else float('nan')
    r['grp'] = (r['gpu'], r['dtype'], r['family'])

P()
P(f'Unique usable measurements: {len(U)} (blocks {sum(r["layer_kind"]=="block" for r in U)}, '
  f'embedding {sum(r["layer_kind"]=="embedding" for r in U)}, head {sum(r["layer_kind"]=="head" for r in U)})')

blocks = [r for r in U if r['layer_kind'] == 'block']
groups = sorted({r['grp'] for r in blocks})


def gname(g):
    return f'{g[0]} {g[1]} ({g[2]})'


# ---------------------------------------------------------------- table 1: efficiency at 0.4
P()
P('## 1. Achieved efficiency and measured/predicted at e = 0.4 (transformer blocks)')
P()
P('e = flops*mbs/(fwd*peak*tp); median [p10, p90]. measured/predicted(0.4) = 0.4/e. bwd/fwd median [p10, p90].')
P()
P('| GPU dtype (family) | n | via import / raw | models | achieved e | e / 0.4 | measured/predicted(0.4) | bwd/fwd |')
P('|---|---:|---|---:|---|---|---|---|')
for g in groups:
    xs = [r for r in blocks if r['grp'] == g]
    e = [r['eff'] for r in xs]
    P(f'| {gname(g)} | {len(xs)} | {sum(r["via"] == "import" for r in xs)} / {sum(r["via"] == "raw" for r in xs)} | {len({r["model"] for r in xs})} | {trio(e)} | {trio([x / 0.4 for x in e])} | '
      f'{trio([r["ratio04"] for r in xs])} | {trio([r["bwd_s"] / r["fwd_s"] for r in xs])} |')
allb = blocks
P(f'| all blocks | {len(allb)} | | | {trio([r["eff"] for r in allb])} | | {trio([r["ratio04"] for r in allb])} | '
  f'{trio([r["bwd_s"] / r["fwd_s"] for r in allb])} |')
for fam in ('sailor', 'zorse/cephalo'):
    xs = [r for r in allb if r['family'] == fam]
    P(f'| all {fam} blocks | {len(xs)} | | | {trio([r["eff"] for r in xs])} | | {trio([r["ratio04"] for r in xs])} | '
      f'{trio([r["bwd_s"] / r["fwd_s"] for r in xs])} |')

# Sailor with FP16 peaks instead of the job's fp32
P()
P('### 1b. Sailor blocks against the FP16 peak instead of the job\'s fp32 (sensitivity)')
P()
import json
CAT = json.load(open(os.path.join(CALIB, 'catalogue_peaks.json')))  # TFLOP/s, written by build_points.py
P('| GPU (sailor) | model | n | achieved e vs fp32 peak | vs tf32 peak | vs fp16 peak |')
P('|---|---|---:|---|---|---|')
for g in groups:
    if g[2] != 'sailor':
        continue
    for m in sorted({r['model'] for r in blocks if r['grp'] == g}):
        xs = [r for r in blocks if r['grp'] == g and r['model'] == m]
        t32 = CAT[g[0]]['tf32'] * 1e12
        P(f'| {g[0]} | {m} | {len(xs)} | {trio([r["eff"] for r in xs])} | {trio([r["w"] / (r["fwd_s"] * t32) for r in xs])} | '
          f'{trio([r["eff16"] for r in xs])} |')

# ---------------------------------------------------------------- embedding / head
P()
P('## 2. Embedding and head layers (Sailor only; not used in the fits)')
P()
P('| GPU | model | kind | n | achieved e (job dtype fp32) | e vs fp16 peak | fwd ms median | bwd/fwd median |')
P('|---|---|---|---:|---|---|---:|---:|')
eh = defaultdict(list)
for r in U:
    if r['layer_kind'] != 'block':
        eh[(r['gpu'], r['model'], r['layer_kind'])].append(r)
for k in sorted(eh):
    xs = eh[k]
    P(f'| {k[0]} | {k[1]} | {k[2]} | {len(xs)} | {trio([r["eff"] for r in xs])} | {trio([r["eff16"] for r in xs])} | '
      f'{g3(med([r["fwd_s"] * 1e3 for r in xs]))} | {g3(med([r["bwd_s"] / r["fwd_s"] for r in xs]))} |')

# ---------------------------------------------------------------- table 3: efficiency by decade of w
P()
P('## 3. Median achieved efficiency by decade of w = flops*mbs/tp (blocks; count in parentheses)')
P()
decs = sorted({math.floor(math.log10(r['w'])) for r in blocks})
P('| GPU dtype (family) | ' + ' | '.join(f'1e{d}' for d in decs) + ' |')
P('|---|' + '---|' * len(decs))
for g in groups:
    cells = []
    for d in decs:
        xs = [r['eff'] for r in blocks if r['grp'] == g and math.floor(math.log10(r['w'])) == d]
        cells.append(f'{g3(med(xs))} ({len(xs)})' if xs else '')
    P(f'| {gname(g)} | ' + ' | '.join(cells) + ' |')


# ---------------------------------------------------------------- fits
def sse_for(pts, wh):
    """Given w_half, closed-form log e_max; returns (sse, e_max)."""
    a = [math.log((r['w'] + wh) / r['peak']) - math.log(r['fwd_s']) for r in pts]
    le = sum(a) / len(a)
    return sum((x - le) ** 2 for x in a), math.exp(le)


def fit_one(pts):
    best = None
    cand = [0.0] + [10 ** (6 + i * 0.02) for i in range(0, 551)]  # 1e6 .. 1e17
    for wh in cand:
        s, e = sse_for(pts, wh)
        if best is None or s < best[0]:
            best = (s, wh, e)
    s, wh, e = best
    if wh > 0:  # golden section on log10(wh) within +-0.02
        lo, hi = math.log10(wh) - 0.02, math.log10(wh) + 0.02
        phi = (math.sqrt(5) - 1) / 2
        for _ in range(40):
            m1, m2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
            if sse_for(pts, 10 ** m1)[0] < sse_for(pts, 10 ** m2)[0]:
                hi = m2
            else:
                lo = m1
        wh = 10 ** ((lo + hi) / 2)
        s, e = sse_for(pts, wh)
    return dict(e_max=e, w_half=wh, sse=s, at_bound=(wh >= 1e16 or wh == 0.0))


def fit_shared(groups_pts):
    def total(wh):
        return sum(sse_for(p, wh)[0] for p in groups_pts.values())
    cand = [0.0] + [10 ** (6 + i * 0.02) for i in range(0, 551)]
    wh = min(cand, key=total)
    if wh > 0:
        lo, hi = math.log10(wh) - 0.02, math.log10(wh) + 0.02
        phi = (math.sqrt(5) - 1) / 2
        for _ in range(40):
            m1, m2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
            if total(10 ** m1) < total(10 ** m2):
                hi = m2
            else:
                lo = m1
        wh = 10 ** ((lo + hi) / 2)
    return wh, {g: sse_for(p, wh)[1] for g, p in groups_pts.items()}


def pred(r, e_max, wh):
    return (r['w'] + wh) / (e_max * r['peak'])


gp = {g: [r for r in blocks if r['grp'] == g] for g in groups}
fits = {g: fit_one(p) for g, p in gp.items()}
const = {g: sse_for(p, 0.0)[1] for g, p in gp.items()}
shared_wh, shared_e = fit_shared(gp)
for g, p in gp.items():
    for r in p:
        f = fits[g]
        r['rf'] = r['fwd_s'] / pred(r, f['e_max'], f['w_half'])
        r['rs'] = r['fwd_s'] / pred(r, shared_e[g], shared_wh)
        r['rc'] = r['fwd_s'] / pred(r, const[g], 0.0)

P()
P('## 4. Fitted e(w) = e_max * w / (w + w_half) per GPU type (blocks)')
P()
P('Least squares on log(measured fwd / predicted fwd). measured/predicted: median [p10, p90]. '
  '"const e" = best single efficiency (w_half = 0) for comparison. '
  f'Shared fit: one w_half = {g3(shared_wh)} FLOP for all groups, e_max per group.')
P()
P('| GPU dtype (family) | n | e_max | w_half (FLOP) | meas/pred per-type fit | const e | meas/pred const e | e_max (shared w_half) | meas/pred shared fit | meas/pred at 0.4 |')
P('|---|---:|---:|---:|---|---:|---|---:|---|---|')
for g in groups:
    f, p = fits[g], gp[g]
    P(f'| {gname(g)} | {len(p)} | {g3(f["e_max"])} | {g3(f["w_half"])}{" (bound)" if f["at_bound"] else ""} | '
      f'{trio([r["rf"] for r in p])} | {g3(const[g])} | {trio([r["rc"] for r in p])} | {g3(shared_e[g])} | '
      f'{trio([r["rs"] for r in p])} | {trio([r["ratio04"] for r in p])} |')
P(f'| all blocks | {len(blocks)} | | | {trio([r["rf"] for r in blocks])} | | {trio([r["rc"] for r in blocks])} | | '
  f'{trio([r["rs"] for r in blocks])} | {trio([r["ratio04"] for r in blocks])} |')

P()
P('### 4b. Errors per source (blocks)')
P()
P('| source | n | meas/pred per-type fit | meas/pred shared-w_half fit | meas/pred const e | meas/pred at 0.4 |')
P('|---|---:|---|---|---|---|')
for s in ('sailor', 'zorse', 'cephalo'):
    xs = [r for r in blocks if r['source'] == s]
    P(f'| {s} | {len(xs)} | {trio([r["rf"] for r in xs])} | {trio([r["rs"] for r in xs])} | {trio([r["rc"] for r in xs])} | '
      f'{trio([r["ratio04"] for r in xs])} |')
for s_ in ('zorse', 'cephalo'):
    for v_ in ('import', 'raw'):
        xs = [r for r in blocks if r['source'] == s_ and r['via'] == v_]
        P(f'| {s_} via {v_} | {len(xs)} | {trio([r["rf"] for r in xs])} | {trio([r["rs"] for r in xs])} | {trio([r["rc"] for r in xs])} | '
          f'{trio([r["ratio04"] for r in xs])} |')
P()
P('### 4c. Errors per (GPU, source) under the per-type fit (blocks)')
P()
P('| GPU dtype | source | n | meas/pred per-type fit | meas/pred at 0.4 |')
P('|---|---|---:|---|---|')
for g in groups:
    for s in ('sailor', 'zorse', 'cephalo'):
        xs = [r for r in gp[g] if r['source'] == s]
        if xs:
            P(f'| {g[0]} {g[1]} | {s} | {len(xs)} | {trio([r["rf"] for r in xs])} | {trio([r["ratio04"] for r in xs])} |')

# ---------------------------------------------------------------- Sailor re-labelled fp16 fits (sensitivity)
P()
P('### 4d. Sensitivity: Sailor blocks against FP16 peaks, fitted per GPU')
P()
P('| GPU (sailor, fp16 peak) | n | e_max | w_half (FLOP) | meas/pred fit |')
P('|---|---:|---:|---:|---|')
for g in groups:
    if g[2] != 'sailor':
        continue
    p = [dict(r, peak=r['pk16']) for r in gp[g] if r['pk16'] > 0]
    f = fit_one(p)
    rr = [r['fwd_s'] / pred(r, f['e_max'], f['w_half']) for r in p]
    P(f'| {g[0]} | {len(p)} | {g3(f["e_max"])} | {g3(f["w_half"])}{" (bound)" if f["at_bound"] else ""} | {trio(rr)} |')

# ---------------------------------------------------------------- TP scaling (Sailor)
P()
P('## 5. Tensor-parallel scaling (Sailor, blocks): fwd(tp = base) / fwd(tp), same model, GPU, mbs, layer')
P()
P('Ideal = tp/base. Base = TP 1 where measured, else the smallest TP measured.')
P()
P('| GPU | model | base tp | tp | n | speed-up median [p10, p90] | ideal |')
P('|---|---|---:|---:|---:|---|---:|')
sail = [r for r in rows if r['source'] == 'sailor' and r['point_kind'] == 'measured' and not r['note'].startswith('excluded')
        and r['layer_kind'] == 'block' and r['fwd_s'] > 0]
by = defaultdict(dict)
for r in sail:
    by[(r['gpu'], r['model'], r['mbs'], r['layer'])][r['tp']] = r['fwd_s']
sp = defaultdict(list)
bases = {}
for (gpu, m, mbs, l), d in by.items():
    base = min(d)
    for tp, t in d.items():
        if tp != base:
            sp[(gpu, m, base, tp)].append(d[base] / t)
for k in sorted(sp):
    P(f'| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {len(sp[k])} | {trio(sp[k])} | {k[3] // k[2]} |')

# ---------------------------------------------------------------- bwd/fwd
P()
P('## 6. bwd/fwd (unique measurements), median [p10, p90]')
P()
P('| GPU | source | blocks | embedding | head |')
P('|---|---|---|---|---|')
for gpu in sorted({r['gpu'] for r in U}):
    for s in ('sailor', 'zorse', 'cephalo'):
        cells = []
        for kind in ('block', 'embedding', 'head'):
            xs = [r['bwd_s'] / r['fwd_s'] for r in U if r['gpu'] == gpu and r['source'] == s and r['layer_kind'] == kind]
            cells.append(f'{trio(xs)} (n={len(xs)})' if xs else '')
        if any(cells):
            P(f'| {gpu} | {s} | ' + ' | '.join(cells) + ' |')
for s in ('sailor', 'zorse', 'cephalo'):
    xs = [r['bwd_s'] / r['fwd_s'] for r in blocks if r['source'] == s]
    P(f'| all | {s} | {trio(xs)} (n={len(xs)}) | | |')
xs = [r['bwd_s'] / r['fwd_s'] for r in blocks]
P(f'| all | all | {trio(xs)} (n={len(xs)}) | | |')

# ---------------------------------------------------------------- per model (surprises)
P()
P('## 7. Median achieved efficiency per model and GPU (blocks; n in parentheses)')
P()
pm = defaultdict(list)
for r in blocks:
    pm[(r['model'], r['seq'], r['dtype'])].append(r)
gl = sorted({(r['gpu']) for r in blocks})
P('| model | seq | dtype | ' + ' | '.join(gl) + ' |')
P('|---|---:|---|' + '---|' * len(gl))
for k in sorted(pm):
    cells = []
    for gpu in gl:
        xs = [r['eff'] for r in pm[k] if r['gpu'] == gpu]
        cells.append(f'{g3(med(xs))} ({len(xs)})' if xs else '')
    P(f'| {k[0]} | {k[1]} | {k[2]} | ' + ' | '.join(cells) + ' |')

open(OUT, 'w').write('\n'.join(out_lines) + '\n')
print('\n'.join(out_lines))
