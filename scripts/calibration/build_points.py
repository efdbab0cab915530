#!/usr/bin/env python3
"""Builds $CALIB_DIR/points.csv from the `hetplan import` outputs in imp/ (see import_all.sh),
plus the published entries that `hetplan import` cannot produce (read raw, marked via=raw).

One row per (source, model, gpu, tp, mbs, layer index). Columns:
  source        sailor | zorse | cephalo
  via           import (from imp/<dir>/*.json written by `hetplan import`) | raw (read from the published file)
  selection     the import folder, or the raw key
  model, gpu, tp, mbs, layer, layer_kind (embedding|block|head)
  seq           sequence length
  flops_fwd     per-sample forward FLOPs as in model.json (raw rows: as the importer's formula would give; Sailor: 0)
  flops_derived per-sample forward FLOPs derived by us where flops_fwd == 0 (Sailor; docs/validation.md), else = flops_fwd
  dtype         compute dtype (job precision: fp16_mixed -> fp16, bf16_mixed -> bf16, fp32 -> fp32)
  peak_flops    peak FLOP/s of that gpu for dtype from cluster.json (hetplan's catalogue); empty if none
  peak_fp16     peak FP16 FLOP/s of that gpu (for the Sailor sensitivity check); empty if none
  fwd_s, bwd_s  measured
  point_kind    measured | fit_mbs1 (Zorse/Cephalo entries without measured lists: the mbs-1 point the
                importer builds from the published linear fit; not a measurement)
  note          why a row is not usable, if it is not
"""
import csv, json, os, glob, sys

D = os.environ['HETPLAN_DATA_DIR']
CALIB = os.environ.get('CALIB_DIR', '/tmp/calib')
IMP = os.path.join(CALIB, 'imp')
OUT = os.path.join(CALIB, 'points.csv')

# hetplan GPU name -> key in model_latencies.json (io/import/zorse_world.hpp, cephalo_world.hpp)
KEY_OF = {'H100-NVL': 'h100-nvl', 'A100-80': 'a100x80', 'A100-40': 'a100x40', 'A10G': 'a10g', 'V100-16': 'v100x16',
          'T4': 't4', 'L4': 'l4', 'A6000': 'a6000', 'P40': 'p40', 'P100': 'p100'}
GPU_OF = {v: k for k, v in KEY_OF.items()}
DTYPE_OF_PREC = {'fp16_mixed': 'fp16', 'bf16_mixed': 'bf16', 'fp32': 'fp32'}
DTYPE_OF_FILE = {'float16': 'fp16', 'float32': 'fp32'}

# Sailor shapes for the derived FLOPs (checked against llm_info.json below)
SAILOR_SHAPE = {  # hidden, sequence, vocab
    'OPT-350': (1024, 2048, 50304), 'GPT-Neo-2.7': (2560, 2048, 50304),
    'OPT-30': (7168, 2048, 50304), 'LLAMA-3-8': (4096, 8192, 50304)}

rows = []
peaks = {}  # gpu -> {dtype: FLOP/s} from every cluster.json seen
llm = json.load(open(f'{D}/sailor/llm_info.json'))


def sailor_derived_flops(model, layer, nlayers):
    """hetplan's make_transformer convention (workload/model.hpp): embedding 2sh, head 2shv; blocks
    2*s*params + 4*s^2*h (= 24sh^2 + 4s^2h for a GPT block up to the bias terms; also right for
    Sailor's LLAMA-3-8 blocks, 16h^2 parameters). LLAMA-3-8 has 35 layers: a separate final norm
    (layer 33, kind final_norm, FLOPs 0) before the head."""
    h, s, v = SAILOR_SHAPE[model]
    p = llm[model]['1'][str(layer)]
    if layer == 0:
        return 2.0 * s * h, 'embedding'
    if layer == nlayers - 1:
        return 2.0 * s * h * v, 'head'
    if p['params_floats'] < 1e5:  # LLAMA-3-8 layer 33: the final norm alone (h parameters); no GEMM
        return 0.0, 'final_norm'
    assert abs(p['act_output_floats'] - s * h) < 2, (model, layer)
    return 2.0 * s * p['params_floats'] + 4.0 * s * s * h, 'block'


def check_sailor_shapes():
    for m, (h, s, v) in SAILOR_SHAPE.items():
        emb = llm[m]['1']['0']['params_floats']
        assert emb / h in (v + s, v), (m, emb / h)  # learned positions (OPT, Neo) or none (LLaMA)
        assert llm[m]['1']['1']['act_output_floats'] == s * h, m


check_sailor_shapes()


def load_import(d):
    name = os.path.basename(d)
    source = name.split('_')[0]
    cl = json.load(open(f'{d}/cluster.json'))
    model = json.load(open(f'{d}/model.json'))
    job = json.load(open(f'{d}/job.json'))
    prof = json.load(open(f'{d}/profiles.json'))
    dtype = DTYPE_OF_PREC[job['precision']]
    gp = {}
    for g in cl['gpus']:
        pk = {k: v * 1e12 for k, v in g.get('peak_tflops', {}).items() if v}
        gp[g['name']] = pk
        peaks.setdefault(g['name'], {}).update(pk)
    layers = model['layers']
    # expand "repeat" if present
    flat = []
    for l in layers:
        flat += [l] * int(l.get('repeat', 1))
    L = len(flat)
    seq = model.get('sequence_length') or job.get('sequence_length')
    for p in prof['profiles']:
        gpu, tp = p['gpu'], p['tp']
        raw_kind = None
        if source in ('zorse', 'cephalo'):
            key = (model['name'], KEY_OF[gpu], str(seq), 'float16' if dtype == 'fp16' else 'float32')
            raw = lat[source][key[0]][key[1]][key[2]][key[3]]
            raw_kind = 'measured' if len(raw) == 4 else 'fit_mbs1'
            covered[source].add(key)
            covered_vals.append((key, json.dumps(raw)))
        for pt in p['points']:
            mbs = pt['microbatch_size']
            note = ''
            if source == 'sailor' and model['name'] == 'GPT-Neo-2.7' and gpu == 'GH-96':
                note = 'excluded: GH-96 GPT-Neo-2.7 profile holds the 26 layers of the OPT-350 GH-96 profile (equal values; the model has 34)'
            for li, t in enumerate(pt['layers']):
                if li < L:
                    lspec = flat[li]
                    ff = float(lspec.get('flops_fwd', 0) or 0)
                else:
                    ff = 0.0
                if source == 'sailor':
                    if li < L and note == '':
                        fd, kind = sailor_derived_flops(model['name'], li, L)
                    else:
                        fd, kind = 0.0, ('embedding' if li == 0 else 'head' if li == len(pt['layers']) - 1 else 'block')
                else:
                    fd, kind = ff, 'block'
                rows.append(dict(source=source, via='import', selection=name, model=model['name'], gpu=gpu, tp=tp,
                                 mbs=mbs, layer=li, layer_kind=kind, seq=seq, flops_fwd=ff, flops_derived=fd,
                                 dtype=dtype, peak_flops=gp[gpu].get(dtype, ''), peak_fp16=gp[gpu].get('fp16', ''),
                                 fwd_s=t[0], bwd_s=t[1], point_kind=raw_kind if raw_kind == 'fit_mbs1' else 'measured',
                                 note=note))


lat = {s: json.load(open(f'{D}/{s}/model_latencies.json')) for s in ('zorse', 'cephalo')}
stats = json.load(open(f'{D}/zorse/model_stats.json'))
covered = {'zorse': set(), 'cephalo': set()}
covered_vals = []

for d in sorted(glob.glob(f'{IMP}/*/')):
    load_import(d.rstrip('/'))

# hetplan's catalogue peaks (every GPU in `hetplan list` appears in some import's cluster.json)
CAT_PEAKS = peaks

# ---- raw supplement: Zorse/Cephalo entries the imports did not produce -------------------------
seen_vals = set(covered_vals)
raw_skipped = []
for source in ('zorse', 'cephalo'):
    d = lat[source]
    for m in d:
        for gk in d[m]:
            for sq in d[m][gk]:
                for dt, v in d[m][gk][sq].items():
                    key = (m, gk, sq, dt)
                    if key in covered[source]:
                        continue
                    if (key, json.dumps(v)) in seen_vals:
                        raw_skipped.append((source, key, 'identical to an entry already taken'))
                        continue
                    if not isinstance(v, list):
                        raw_skipped.append((source, key, 'entry is a bare number, not [fwd_fit, bwd_fit, fwd_ms?, bwd_ms?]'))
                        continue
                    if len(v) not in (2, 4) or not all(isinstance(x, list) for x in v):
                        raw_skipped.append((source, key, 'entry is a list of numbers, not [fwd_fit, bwd_fit, fwd_ms?, bwd_ms?]'))
                        continue
                    seen_vals.add((key, json.dumps(v)))
                    gpu = GPU_OF.get(gk, gk)
                    dtype = DTYPE_OF_FILE[dt]
                    note = ''
                    if m not in stats:
                        note = 'no model_stats.json entry: FLOPs unknown'
                        L, ff = 1, 0.0
                    else:
                        st = stats[m]
                        L = st['num_layers']
                        h, s = st['hidden_size'], int(sq)
                        per_layer = st['total_parameters'] / L  # io/import/cephalo.hpp import_model_stats
                        ff = 2.0 * per_layer * s + 4.0 * s * s * h
                    pk = CAT_PEAKS.get(gpu, {})
                    if gpu not in CAT_PEAKS:
                        note = (note + '; ' if note else '') + f"GPU key '{gk}' has no hetplan catalogue type"
                    if len(v) == 4:
                        pts = [(i + 1, v[2][i] * 1e-3, v[3][i] * 1e-3, 'measured') for i in range(len(v[2]))]
                    else:
                        pts = [(1, max(v[0][0] + v[0][1], 0) * 1e-3, max(v[1][0] + v[1][1], 0) * 1e-3, 'fit_mbs1')]
                    for mbs, f, b, kind in pts:
                        for li in range(L):
                            rows.append(dict(source=source, via='raw', selection=f'{m}/{gk}/{sq}/{dt}', model=m, gpu=gpu,
                                             tp=1, mbs=mbs, layer=li, layer_kind='block', seq=s if m in stats else int(sq),
                                             flops_fwd=ff, flops_derived=ff, dtype=dtype, peak_flops=pk.get(dtype, ''),
                                             peak_fp16=pk.get('fp16', ''), fwd_s=f, bwd_s=b, point_kind=kind, note=note))

# ---- raw supplement: Sailor profiles the import refuses (no training config / no catalogue GPU) --
imported_sailor = {(r['model'], r['gpu']) for r in rows if r['source'] == 'sailor'}
for f in sorted(glob.glob(f'{D}/sailor/profiles/*/*/profile.json')):
    m, g = f.split('/')[-3], f.split('/')[-2]
    if (m, g) in imported_sailor:
        continue
    prof = json.load(open(f))
    L = len(llm[m]['1'])
    pk = CAT_PEAKS.get(g, {})
    note = '' if g in CAT_PEAKS else f"GPU type '{g}' has no hetplan catalogue entry (import refuses it)"
    for mb, per_tp in prof.items():
        for tp, per_layer in per_tp.items():
            n = len(per_layer)
            for ls, t in per_layer.items():
                li = int(ls)
                fd, kind = sailor_derived_flops(m, li, L) if n == L else (0.0, 'block')
                rows.append(dict(source='sailor', via='raw', selection=f'{m}/{g}', model=m, gpu=g, tp=int(tp), mbs=int(mb),
                                 layer=li, layer_kind=kind, seq=SAILOR_SHAPE[m][1], flops_fwd=0.0, flops_derived=fd,
                                 dtype='fp32',  # what hetplan's Sailor import writes (job.json precision fp32)
                                 peak_flops=pk.get('fp32', ''), peak_fp16=pk.get('fp16', ''), fwd_s=t[0], bwd_s=t[1],
                                 point_kind='measured', note=note))

rows.sort(key=lambda r: (r['source'], r['via'], r['model'], r['gpu'], str(r['seq']), r['dtype'], r['tp'], r['mbs'], r['layer']))
cols = ['source', 'via', 'selection', 'model', 'gpu', 'tp', 'mbs', 'layer', 'layer_kind', 'seq', 'flops_fwd', 'flops_derived',
        'dtype', 'peak_flops', 'peak_fp16', 'fwd_s', 'bwd_s', 'point_kind', 'note']
with open(OUT, 'w', newline='') as fh:
    w = csv.DictWriter(fh, fieldnames=cols)
    w.writeheader()
    w.writerows(rows)
with open(os.path.join(CALIB, 'raw_skipped.txt'), 'w') as fh:
    for s in raw_skipped:
        fh.write(repr(s) + '\n')
with open(os.path.join(CALIB, 'catalogue_peaks.json'), 'w') as fh:
    json.dump({g: {k: v / 1e12 for k, v in p.items()} for g, p in CAT_PEAKS.items()}, fh, indent=1, sort_keys=True)
print(len(rows), 'rows;', len(raw_skipped), 'raw entries skipped')
