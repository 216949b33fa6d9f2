"""`align`'s CPU time on the held-out PBMC pair: this checkout against an earlier revision, in alternating processes.

This machine's speed drifts within hours (the same fit 4.1-4.9 CPU-s), so two versions are compared in pairs of
processes run one after the other, several times: each process loads the three PBMC splits, fits `align` once to warm
up, then times one `align` per split (one thread, torch and BLAS). The earlier revision is checked out with
`git worktree` under `.cache/gw_ab/<rev>` (inside the repository; removed with `git worktree remove`) and imported
from there through PYTHONPATH; both run in this checkout's environment.

    python bench/gw_align_ab.py --base 384d9b7 --pairs 3 --json bench/results/gw_ab_align_pbmc.json

Measured (2-core AMD EPYC, the hand-written fixed-point gradient and fused Adam against 384d9b7): base 5.08 / 4.48 /
4.75, new 4.06 / 4.53 / 4.03 CPU-s per fit (means over the three splits, per process): 0.88x.
"""
import argparse, json, os, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def child():
    "One process: warm-up fit, then (CPU seconds, 5-NN label transfer) of one `align` per PBMC split."
    import torch, anndata
    from threadpoolctl import threadpool_limits
    import ot  # noqa: F401  (imported before any timing, as in bench/gw.py)
    from relrep_nb.gw import align
    from relrep_nb.experiments.latent_gw import pbmc_unpaired, knn_labels
    torch.set_num_threads(1)
    out = []
    with threadpool_limits(1):
        data = [pbmc_unpaired(s) for s in (0, 1, 2)]
        align(anndata.AnnData(X=data[0][0]), anndata.AnnData(X=data[0][1]), seed=0, progress=False)
        for s, (x, y, lx, ly) in enumerate(data):
            A, B = anndata.AnnData(X=x), anndata.AnnData(X=y)
            c = time.process_time(); align(A, B, seed=s, progress=False); t = time.process_time() - c
            out.append(dict(split=s, cpu_seconds=t, label_transfer=float((knn_labels(A.obsm['X_gw'], B.obsm['X_gw'], lx) == ly).mean())))
    print(json.dumps(out))

def run(src:Path) -> list:
    env = {**os.environ, 'PYTHONPATH': str(src)}
    r = subprocess.run([sys.executable, __file__, '--child'], cwd=src, env=env, capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--base', default=None, help='the earlier revision (a commit); required unless --child')
    p.add_argument('--pairs', type=int, default=3); p.add_argument('--json', default=None); p.add_argument('--child', action='store_true')
    a = p.parse_args()
    if a.child: return child()
    if not a.base: p.error('--base is required')
    wt = ROOT / '.cache' / 'gw_ab' / a.base
    if not wt.exists(): subprocess.run(['git', '-C', str(ROOT), 'worktree', 'add', '--detach', str(wt), a.base], check=True, capture_output=True)
    rows = []
    for k in range(a.pairs):
        for name, src in (('base', wt), ('new', ROOT)):
            r = run(src); m = sum(x['cpu_seconds'] for x in r) / len(r)
            rows.append(dict(pair=k, version=name, rev=a.base if name == 'base' else 'HEAD', mean_cpu_seconds=m, splits=r)); print(json.dumps(rows[-1]), flush=True)
    mean = {v: sum(r['mean_cpu_seconds'] for r in rows if r['version'] == v) / a.pairs for v in ('base', 'new')}
    res = dict(dataset='pbmc (held out)', base=a.base, pairs=a.pairs, rows=rows, mean_cpu_seconds=mean, ratio_new_over_base=mean['new'] / mean['base'])
    print(json.dumps({k: v for k, v in res.items() if k != 'rows'}, indent=1))
    if a.json: Path(a.json).write_text(json.dumps(res, indent=1))

if __name__ == '__main__': main()
