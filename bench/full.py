"""Full-size runs outside `relrep-nb reproduce`: relreps' stitching trained per dataset, bootstrap in its own file naming.

Their tables and claims go to bench/results/, where the chapters' slow cells read them. The latent-GW and PARAM-WIP
full runs are the command line's own (`relrep-nb reproduce --full <chapter> --tables DIR`, `--parts`, `--from-tables`;
bench/README.md gives the commands).

    python bench/full.py relreps_ae                 # every dataset of IMAGE_DATASETS
    python bench/full.py relreps_ae --datasets mnist5k   # only these; the table keeps the other datasets' recorded rows
    python bench/full.py bootstrap quick            # everything in one process (or `full`)
    python bench/full.py bootstrap full --parts words,ablation   # some parts only (separate jobs) ...
    python bench/full.py bootstrap full --merge     # ... then merge the parts' tables and compute the claims

relreps_ae: reconstruction stitching of the relreps chapter at the authors' configuration (`SIZES['full']['stitching']`),
per dataset. Each trained model is kept in relrep_nb's cache (`cache_dir('relreps_ae')`, named by a hash of its
configuration), so an interrupted run resumes where it stopped and a rerun only stitches. The table goes to
bench/results/relreps_ae_full_stitching.csv and each dataset's training seconds (summed over its models, as measured
when each was trained) to bench/results/relreps_ae_full.json. Cost at one thread: about 1 CPU-hour for mnist5k (3,600
training images), about 10 CPU-hours for Fashion-MNIST (54,000).

bootstrap: the tables and claims of the bootstrap chapter's `run(size)`: bench/results/bootstrap_<size>_<table>.csv and
bench/results/bootstrap_<size>_claims.json (`seconds`: wall time and `cpu_seconds`: user + sys CPU time of `run` +
`claims` on one torch/BLAS thread, as `relrep-nb reproduce` runs it; summed over the parts when merged). Parts write
bootstrap_<size>-<parts>_<table>.csv and bootstrap_<size>-<parts>_time.json. (Not `relrep-nb reproduce --tables`: the
chapter reads this flat naming, and its parts add rows to the same tables, which one folder of tables cannot hold.)
"""
import argparse, json, time
from pathlib import Path

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
                                 epilog='\n'.join(__doc__.splitlines()[6:11]))
    sub = ap.add_subparsers(dest='command', required=True)

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
