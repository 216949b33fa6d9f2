"""Full-size runs of the chapters too long for `relrep-nb reproduce`, one subcommand per chapter.

Their tables and claims go to bench/results/, where the chapters' slow cells read them.

    python bench/full.py latent_gw                  # every part not yet recorded, then bench/results/gw_claims_full.json
    python bench/full.py latent_gw --parts singlecell annealing   # only these parts (the others are read if recorded)
    python bench/full.py latent_gw --claims-only    # the claims from whatever parts are recorded (missing tables: NaN claims)
    python bench/full.py param_wip                  # bench/results/param_wip_full/*.csv and bench/results/param_wip_full.json
    python bench/full.py param_wip --from-tables    # the claims again from the recorded CSV tables (no rerun)
    python bench/full.py relreps_ae                 # every dataset of IMAGE_DATASETS
    python bench/full.py relreps_ae --datasets mnist5k   # only these; the table keeps the other datasets' recorded rows
    python bench/full.py bootstrap quick            # everything in one process (or `full`)
    python bench/full.py bootstrap full --parts words,ablation   # some parts only (separate jobs) ...
    python bench/full.py bootstrap full --merge     # ... then merge the parts' tables and compute the claims

latent_gw: `run('full', parts=[p])` for each part of `PARTS`, each in its own process (its peak memory is its own), its
tables written to bench/results/gw_full/*.csv as soon as it ends (times in gw_full/parts.json), then the claims as
bench/results/gw_claims_full.json. A part whose tables exist is not rerun (delete its CSV files to rerun it), so an
interrupted run resumes where it stopped. The JSON has the format of `relrep-nb reproduce --json`; its `parts` field
says which parts were measured and how long each took.

param_wip: `run('full')` of the PARAM-WIP chapter, about 17 minutes on one thread with 6 seeds. `--from-tables`
recomputes the claims from the recorded tables (e.g. after a protocol amendment that only changes which cells a claim
reads) and keeps the recorded run time.

relreps_ae: reconstruction stitching of the relreps chapter at the authors' configuration (`SIZES['full']['stitching']`),
per dataset. Each trained model is kept in relrep_nb's cache (`cache_dir('relreps_ae')`, named by a hash of its
configuration), so an interrupted run resumes where it stopped and a rerun only stitches. The table goes to
bench/results/relreps_ae_full_stitching.csv and each dataset's training seconds (summed over its models, as measured
when each was trained) to bench/results/relreps_ae_full.json. Cost at one thread: about 1 CPU-hour for mnist5k (3,600
training images), about 10 CPU-hours for Fashion-MNIST (54,000).

bootstrap: the tables and claims of the bootstrap chapter's `run(size)`: bench/results/bootstrap_<size>_<table>.csv and
bench/results/bootstrap_<size>_claims.json (`seconds`: wall time and `cpu_seconds`: user + sys CPU time of `run` +
`claims` on one torch/BLAS thread, as `relrep-nb reproduce` runs it; summed over the parts when merged). Parts write
bootstrap_<size>-<parts>_<table>.csv and bootstrap_<size>-<parts>_time.json.
"""
import argparse, json, subprocess, sys, time
from pathlib import Path

# --- latent_gw ---------------------------------------------------------------------------------------------------------

def _read(path):
    import pandas as pd
    return pd.read_csv(path) if path.stat().st_size else pd.DataFrame()

def _gw_part(name, out, threads):
    "Run one part of the latent-GW chapter in this process and write its tables."
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

def latent_gw(a):
    import pandas as pd
    from relrep_nb.experiments.latent_gw import PARTS, claims
    out = Path(a.out) / 'gw_full'; out.mkdir(parents=True, exist_ok=True)
    if a.part: return _gw_part(a.part, out, a.threads)
    todo = [] if a.claims_only else [p for p in (a.parts or PARTS) if a.parts or not all((out / f'{t}.csv').exists() for t in PARTS[p])]
    for p in todo:
        print(f'== part {p}', flush=True)
        r = subprocess.run([sys.executable, __file__, 'latent_gw', '--out', a.out, '--part', p, '--threads', str(a.threads)])
        if r.returncode: print(f'part {p} failed (exit {r.returncode}): its claims stay unmeasured', flush=True)
    tables = {t: (_read(out / f'{t}.csv') if (out / f'{t}.csv').exists() else pd.DataFrame()) for ts in PARTS.values() for t in ts}
    log = out / 'parts.json'
    parts = json.loads(log.read_text()) if log.exists() else {}
    cl = claims(tables)
    rec = {'latent_gw': {'seconds': round(sum(v['seconds'] for v in parts.values()), 1), 'size': 'full', 'parts': parts,
                         'note': f"run part by part by bench/full.py latent_gw; parts measured: {sorted(parts)}, not measured: "
                                 f"{sorted(set(PARTS) - set(parts))}", 'claims': [c.to_dict() for c in cl]}}
    (Path(a.out) / 'gw_claims_full.json').write_text(json.dumps(rec, indent=2))
    for c in cl: print(f"{'holds' if c.holds else 'FAILS'} {c.name} = {c.value} ({c.rule}) {c.what}")

# --- param_wip ---------------------------------------------------------------------------------------------------------

def param_wip(a):
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

# --- relreps_ae --------------------------------------------------------------------------------------------------------

def relreps_ae(a):
    import pandas as pd
    from relrep_nb.experiments.relreps import SIZES, IMAGE_DATASETS, autoencoder_stitching
    from relrep_nb.encoders import cache_dir
    datasets = list(IMAGE_DATASETS) if a.datasets is None else a.datasets
    bad = [d for d in datasets if d not in IMAGE_DATASETS]
    if bad: a.parser.error(f"argument --datasets: invalid choice: {bad[0]!r} (choose from {', '.join(map(repr, IMAGE_DATASETS))})")
    out = Path(a.out); table, log = out / 'relreps_ae_full_stitching.csv', out / 'relreps_ae_full.json'
    rec = json.loads(log.read_text()) if log.exists() else {}
    for kw in SIZES['full']['stitching']:
        if kw['dataset'] not in datasets: continue
        t0, c0 = time.perf_counter(), time.process_time()
        df = autoencoder_stitching(**kw, threads=a.threads, cache=cache_dir('relreps_ae'), progress=True)
        old = pd.read_csv(table) if table.exists() else pd.DataFrame(columns=df.columns)
        pd.concat([old[old.dataset != kw['dataset']], df], ignore_index=True).to_csv(table, index=False)
        own = df[~df.stitched]      # one row per model: the seconds its training took when it was trained (cached or not)
        rec[kw['dataset']] = dict(models=len(own), training_seconds=round(float(own.enc_train_s.sum()), 1), threads=a.threads,
                                  this_run_seconds=round(time.perf_counter() - t0, 1), this_run_cpu_seconds=round(time.process_time() - c0, 1),
                                  mean_image_mse=df.attrs['mean_image_mse'])
        log.write_text(json.dumps(rec, indent=2))
        print(f"{kw['dataset']}: {rec[kw['dataset']]}", flush=True)

# --- bootstrap ---------------------------------------------------------------------------------------------------------

def bootstrap(a):
    import pandas as pd
    from relrep_nb.core import torch_threads
    from relrep_nb.experiments.bootstrap import run, claims
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
            print(f'{secs:.1f} s wall, {cpu:.1f} s CPU'); return
    cl = claims(tables)
    for name, df in tables.items(): df.to_csv(out / f'bootstrap_{a.size}_{name}.csv', index=False)
    report = {'bootstrap': dict(seconds=round(secs, 1), cpu_seconds=round(cpu, 1), size=a.size, claims=[c.to_dict() for c in cl])}
    (out / f'bootstrap_{a.size}_claims.json').write_text(json.dumps(report, indent=1) + '\n')
    for c in cl: print(f"[{'holds' if c.holds else 'FAILS'}] {c.name} = {c.value:.4g} ({c.rule})")
    print(f'{secs:.1f} s wall, {cpu:.1f} s CPU')

# --- command line ------------------------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog='\n'.join(__doc__.splitlines()[4:15]))
    sub = ap.add_subparsers(dest='command', required=True)

    g = sub.add_parser('latent_gw', help='the learned-GW chapter, one part at a time -> gw_full/*.csv, gw_claims_full.json')
    g.add_argument('--out', default='bench/results', help='folder of gw_claims_full.json and gw_full/')
    g.add_argument('--parts', nargs='*', default=None, help='parts to run (default: every part not yet recorded)')
    g.add_argument('--part', default=None, help=argparse.SUPPRESS)       # internal: run one part in this process
    g.add_argument('--claims-only', action='store_true', help='do not run anything; claims from the recorded tables')
    g.add_argument('--threads', type=int, default=1, help='torch threads')
    g.set_defaults(func=latent_gw)

    p = sub.add_parser('param_wip', help='the PARAM-WIP chapter -> param_wip_full/*.csv, param_wip_full.json')
    p.add_argument('--out', default='bench/results', help='folder of param_wip_full.json and param_wip_full/')
    p.add_argument('--threads', type=int, default=1, help='torch threads')
    p.add_argument('--from-tables', action='store_true', help='recompute the claims from the recorded tables, keep the recorded run time')
    p.set_defaults(func=param_wip)

    r = sub.add_parser('relreps_ae', help="relreps' reconstruction stitching at the authors' configuration -> relreps_ae_full*")
    r.add_argument('--datasets', nargs='*', default=None,
                   help='datasets of relrep_nb.experiments.relreps.IMAGE_DATASETS (default: all of them)')
    r.add_argument('--out', default='bench/results')
    r.add_argument('--threads', type=int, default=1, help='torch threads')
    r.set_defaults(func=relreps_ae, parser=r)

    b = sub.add_parser('bootstrap', help="the bootstrap chapter's run(size) -> bootstrap_<size>_*.csv, bootstrap_<size>_claims.json")
    b.add_argument('size', nargs='?', default='quick', help='quick or full')
    b.add_argument('--parts', default=None, help='comma-separated parts of run(size), written as bootstrap_<size>-<parts>_*')
    b.add_argument('--merge', action='store_true', help="merge the parts' tables of this size and compute the claims")
    b.set_defaults(func=bootstrap)

    a = ap.parse_args(argv)
    a.func(a)

if __name__ == '__main__': main()
