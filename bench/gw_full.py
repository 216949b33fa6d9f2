"""The learned-GW chapter at full size, one part at a time: `run('full', parts=[p])` for each part of `PARTS`, each in its
own process (its peak memory is its own), its tables written as CSV as soon as it ends; then the claims as JSON.

    python bench/gw_full.py                       # every part not yet recorded, then bench/results/gw_claims_full.json
    python bench/gw_full.py --parts singlecell annealing     # only these parts (the others are read if recorded)
    python bench/gw_full.py --claims-only         # the claims from whatever parts are recorded (missing tables: NaN claims)

A part whose tables exist in bench/results/gw_full/ is not rerun (delete its CSV files to rerun it), so an interrupted
full run resumes where it stopped. The JSON has the format of `relrep-nb reproduce --json`; its `parts` field says which
parts were measured and how long each took, and the chapter's Results section renders it.
"""
import argparse, json, subprocess, sys, time
from pathlib import Path

def _read(path):
    import pandas as pd
    return pd.read_csv(path) if path.stat().st_size else pd.DataFrame()

def _part(name, out, threads):
    "Run one part in this process and write its tables."
    from relrep_nb.core import torch_threads
    from relrep_nb.experiments.latent_gw import run
    t0, c0 = time.perf_counter(), time.process_time()
    with torch_threads(threads): res = run('full', parts=[name])
    for table, df in res.items():
        p = out / f'{table}.csv'
        if df.shape[1]: df.to_csv(p, index=False)
        else: p.write_text('')
    log = out / 'parts.json'
    rec = json.loads(log.read_text()) if log.exists() else {}
    rec[name] = dict(seconds=round(time.perf_counter() - t0, 1), cpu_seconds=round(time.process_time() - c0, 1))
    log.write_text(json.dumps(rec, indent=2))

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--out', default='bench/results', help='folder of gw_claims_full.json and gw_full/')
    ap.add_argument('--parts', nargs='*', default=None, help='parts to run (default: every part not yet recorded)')
    ap.add_argument('--part', default=None, help=argparse.SUPPRESS)       # internal: run one part in this process
    ap.add_argument('--claims-only', action='store_true', help='do not run anything; claims from the recorded tables')
    ap.add_argument('--threads', type=int, default=1, help='torch threads')
    a = ap.parse_args(argv)
    from relrep_nb.experiments.latent_gw import PARTS, claims
    out = Path(a.out) / 'gw_full'; out.mkdir(parents=True, exist_ok=True)
    if a.part: return _part(a.part, out, a.threads)
    todo = [] if a.claims_only else [p for p in (a.parts or PARTS) if a.parts or not all((out / f'{t}.csv').exists() for t in PARTS[p])]
    for p in todo:
        print(f'== part {p}', flush=True)
        r = subprocess.run([sys.executable, __file__, '--out', a.out, '--part', p, '--threads', str(a.threads)])
        if r.returncode: print(f'part {p} failed (exit {r.returncode}): its claims stay unmeasured', flush=True)
    tables = {t: (_read(out / f'{t}.csv') if (out / f'{t}.csv').exists() else __import__('pandas').DataFrame())
              for ts in PARTS.values() for t in ts}
    log = out / 'parts.json'
    parts = json.loads(log.read_text()) if log.exists() else {}
    cl = claims(tables)
    rec = {'latent_gw': {'seconds': round(sum(v['seconds'] for v in parts.values()), 1), 'size': 'full', 'parts': parts,
                         'note': f"run part by part by bench/gw_full.py; parts measured: {sorted(parts)}, not measured: "
                                 f"{sorted(set(PARTS) - set(parts))}", 'claims': [c.to_dict() for c in cl]}}
    (Path(a.out) / 'gw_claims_full.json').write_text(json.dumps(rec, indent=2))
    for c in cl: print(f"{'holds' if c.holds else 'FAILS'} {c.name} = {c.value} ({c.rule}) {c.what}")

if __name__ == '__main__': main()
