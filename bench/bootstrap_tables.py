"""Record the tables and claims of the bootstrap chapter's `run(size)` (the chapter renders them).

Usage (repository root):
  python bench/bootstrap_tables.py [quick|full]                    # everything in one process
  python bench/bootstrap_tables.py full --parts words,ablation     # some parts only (separate jobs) ...
  python bench/bootstrap_tables.py full --merge                    # ... then merge the parts' tables and compute the claims
Writes bench/results/bootstrap_<size>_<table>.csv and bench/results/bootstrap_<size>_claims.json
(`seconds`: wall time and `cpu_seconds`: user + sys CPU time of `run` + `claims` on one torch/BLAS thread, as
`relrep-nb reproduce` runs it; summed over the parts when merged). Parts write bootstrap_<size>-<parts>_<table>.csv.
"""
import argparse, json, time
from pathlib import Path
import pandas as pd
from relrep_nb.core import torch_threads
from relrep_nb.experiments.bootstrap import run, claims

p = argparse.ArgumentParser()
p.add_argument('size', nargs='?', default='quick'); p.add_argument('--parts', default=None); p.add_argument('--merge', action='store_true')
a = p.parse_args()
out = Path(__file__).parent / 'results'
out.mkdir(exist_ok=True)
if a.merge:
    tags = sorted({f.name.split('_')[1] for f in out.glob(f'bootstrap_{a.size}-*_*.csv')})
    tables = {}
    for f in sorted(out.glob(f'bootstrap_{a.size}-*_*.csv')):
        name = f.stem.split('_', 2)[2]
        try: df = pd.read_csv(f)
        except pd.errors.EmptyDataError: continue
        tables[name] = pd.concat([tables.get(name), df], ignore_index=True)
    times = [json.loads((out / f'bootstrap_{t}_time.json').read_text()) for t in tags]
    secs, cpu = sum(t['seconds'] for t in times), sum(t['cpu_seconds'] for t in times)
else:
    t0, c0 = time.perf_counter(), time.process_time()
    with torch_threads(1):
        tables = run(a.size, parts=tuple(a.parts.split(','))) if a.parts else run(a.size)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    if a.parts:
        tag = f"{a.size}-{a.parts.replace(',', '+').replace('_', '')}"
        for name, df in tables.items(): df.to_csv(out / f'bootstrap_{tag}_{name}.csv', index=False)
        (out / f'bootstrap_{tag}_time.json').write_text(json.dumps(dict(seconds=round(secs, 1), cpu_seconds=round(cpu, 1))) + '\n')
        print(f'{secs:.1f} s wall, {cpu:.1f} s CPU'); raise SystemExit
cl = claims(tables)
for name, df in tables.items(): df.to_csv(out / f'bootstrap_{a.size}_{name}.csv', index=False)
report = {'bootstrap': dict(seconds=round(secs, 1), cpu_seconds=round(cpu, 1), size=a.size, claims=[c.to_dict() for c in cl])}
(out / f'bootstrap_{a.size}_claims.json').write_text(json.dumps(report, indent=1) + '\n')
for c in cl: print(f"[{'holds' if c.holds else 'FAILS'}] {c.name} = {c.value:.4g} ({c.rule})")
print(f'{secs:.1f} s wall, {cpu:.1f} s CPU')
