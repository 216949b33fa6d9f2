"""The PARAM-WIP chapter at full size: `run('full')`, its tables as CSV files and its claims as JSON.

    python bench/param_wip_full.py            # writes bench/results/param_wip_full/*.csv and bench/results/param_wip_full.json
    python bench/param_wip_full.py --from-tables   # the claims again from the recorded CSV tables (no rerun; e.g. after
                                                   # a protocol amendment that only changes which cells a claim reads)

The JSON has the format of `relrep-nb reproduce --json`; the chapter's Results section renders both files.
"""
import argparse, json, time
from pathlib import Path

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--out', default='bench/results', help='folder of param_wip_full.json and param_wip_full/')
    ap.add_argument('--threads', type=int, default=1, help='torch threads')
    ap.add_argument('--from-tables', action='store_true', help='recompute the claims from the recorded tables, keep the recorded run time')
    a = ap.parse_args(argv)
    from relrep_nb.core import torch_threads
    from relrep_nb.experiments.param_wip import run, claims
    out, t0 = Path(a.out), time.time()
    if a.from_tables:
        import pandas as pd
        res = {p.stem: pd.read_csv(p) for p in sorted((out / 'param_wip_full').glob('*.csv'))}
        cl, seconds = claims(res), json.loads((out / 'param_wip_full.json').read_text())['param_wip']['seconds']
        for c in cl: print(c.name, c.value, c.rule, c.holds)
        (out / 'param_wip_full.json').write_text(json.dumps(
            {'param_wip': {'seconds': seconds, 'size': 'full', 'claims': [c.to_dict() for c in cl],
                           'note': 'claims recomputed from the recorded tables (param_wip_full/*.csv) with --from-tables'}}, indent=2))
        return
    with torch_threads(a.threads): res = run('full')
    cl, seconds = claims(res), round(time.time() - t0, 1)
    (out / 'param_wip_full').mkdir(parents=True, exist_ok=True)
    for name, df in res.items(): df.to_csv(out / 'param_wip_full' / f'{name}.csv', index=False)
    (out / 'param_wip_full.json').write_text(json.dumps(
        {'param_wip': {'seconds': seconds, 'size': 'full', 'claims': [c.to_dict() for c in cl]}}, indent=2))
    for c in cl: print(c.name, c.value, c.rule, c.holds)

if __name__ == '__main__': main()
