"""Record the tables and claims of the bootstrap chapter's `run(size)` (the chapter renders them).

Usage (repository root): python bench/bootstrap_tables.py [quick|full]
Writes bench/results/bootstrap_<size>_<table>.csv and bench/results/bootstrap_<size>_claims.json
(`seconds`: wall time of `run` + `claims` on one torch/BLAS thread, as `relrep-nb reproduce` runs it).
"""
import json, sys, time
from pathlib import Path
from relrep_nb.core import torch_threads
from relrep_nb.experiments.bootstrap import run, claims

size = sys.argv[1] if len(sys.argv) > 1 else 'quick'
out = Path(__file__).parent / 'results'
out.mkdir(exist_ok=True)
t0 = time.perf_counter()
with torch_threads(1):
    tables = run(size)
    cl = claims(tables)
secs = time.perf_counter() - t0
for name, df in tables.items(): df.to_csv(out / f'bootstrap_{size}_{name}.csv', index=False)
report = {'bootstrap': dict(seconds=round(secs, 1), size=size, claims=[c.to_dict() for c in cl])}
(out / f'bootstrap_{size}_claims.json').write_text(json.dumps(report, indent=1) + '\n')
for c in cl: print(f"[{'holds' if c.holds else 'FAILS'}] {c.name} = {c.value:.4g} ({c.rule})")
print(f'{secs:.1f} s')
