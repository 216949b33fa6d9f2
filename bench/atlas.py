"""Single-cell alignment as the data grow: `align` with its defaults against POT's entropic GW and moscot's low-rank GW.

Data: `relrep_nb.gw.unpaired_modalities(n, seed)`: two unpaired modalities with twelve cell types of unequal sizes (a
50-d one, and a saturating map of independent draws into 30-d). Each method's coordinates are read as `align` writes
them (the first modality carried onto the second's by the plan); the score is 5-NN label transfer from the second
modality to the first. Every point runs in its own process (its own peak RSS), one thread (XLA's too), with a time limit; a point
that runs out of time or memory is recorded as such and larger sizes of that method are skipped.

    python bench/atlas.py point --method ours --n 100000 --seed 0          # one point, printed as JSON
    python bench/atlas.py scaling --sizes 2000 10000 30000 100000 --seeds 0 1 2 --json bench/results/atlas_scaling.json
    python bench/atlas.py figure bench/results/atlas_scaling.json          # the log-log figure (bench/results/atlas_scaling.png)
    python bench/atlas.py million --n 1000000 --fraction 0.01 --json bench/results/atlas_million.json   # 1M per side on a LocalCluster

moscot runs in its own environment (tools/setup_moscot.sh builds .venv-moscot); POT in the package's .venv.
"""
import argparse, json, os, resource, subprocess, sys, tempfile, time
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHONS = {'ours': os.path.join(ROOT, '.venv/bin/python'), 'pot': os.path.join(ROOT, '.venv/bin/python'),
           'moscot': os.path.join(ROOT, '.venv-moscot/bin/python')}

def peak_gib(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20

def label_transfer(zx, zy, lx, ly, k:int=5) -> float:
    "5-NN label transfer: each first-modality cell takes the majority type of its k nearest second-modality cells."
    from sklearn.neighbors import KNeighborsClassifier        # a tree search: no n x n distance matrix
    return float((KNeighborsClassifier(k).fit(zy, ly).predict(zx) == lx).mean())

def _ours(x, y, args):
    import anndata
    from relrep_nb.gw import align
    A, B = anndata.AnnData(X=x), anndata.AnnData(X=y)
    cp = align(A, B, seed=args.seed, progress=False)
    return A.obsm['X_gw'], B.obsm['X_gw'], dict(plan=type(cp).__name__, restarts=cp.model.restarts_)

def _pot(x, y, args):
    from relrep_nb.experiments.latent_gw import scot_gw
    from relrep_nb.gw import align_k
    r = scot_gw(x, y, k=align_k(len(x), len(y)), epsilons=(5e-3,), max_iter=args.pot_iter)
    return r['x_aligned'], r['y'], dict(eps=r['eps'], max_iter=args.pot_iter)

def _moscot(x, y, args):
    import anndata
    from moscot.problems.cross_modality import TranslationProblem
    yn = y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)
    xn = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    A, B = anndata.AnnData(X=xn.astype(np.float32)), anndata.AnnData(X=yn.astype(np.float32))
    A.obsm['X_norm'], B.obsm['X_norm'] = A.X, B.X
    tp = TranslationProblem(adata_src=A, adata_tgt=B).prepare(src_attr='X_norm', tgt_attr='X_norm')
    tp = tp.solve(epsilon=args.moscot_eps, rank=args.rank)
    zx = np.asarray(tp.translate(source='src', target='tgt', forward=True))
    return zx, yn, dict(rank=args.rank, epsilon=args.moscot_eps)

def point(args):
    import torch
    torch.set_num_threads(args.threads)
    from relrep_nb.core import torch_threads
    from relrep_nb.gw import unpaired_modalities
    x, y, lx, ly = unpaired_modalities(args.n, seed=args.seed)
    base = peak_gib()
    t0, c0 = time.perf_counter(), time.process_time()
    with torch_threads(args.threads):
        zx, zy, extra = {'ours': _ours, 'pot': _pot, 'moscot': _moscot}[args.method](x, y, args)
    return dict(method=args.method, n=args.n, seed=args.seed, seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0,
                peak_rss_gib=peak_gib(), peak_rss_before_gib=base, label_transfer=label_transfer(zx, zy, lx, ly), threads=args.threads, **extra)

def _run_point(method, n, seed, args) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'r.json')
        cmd = [PYTHONS[method], os.path.abspath(__file__), 'point', '--method', method, '--n', str(n), '--seed', str(seed),
               '--threads', str(args.threads), '--rank', str(args.rank), '--pot-iter', str(args.pot_iter), '--json', out]
        t0 = time.perf_counter()
        try:
            env = dict(os.environ, XLA_FLAGS='--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1') if method == 'moscot' else None
            p = subprocess.run(cmd, timeout=args.limit, capture_output=True, text=True, cwd=ROOT, env=env)
        except subprocess.TimeoutExpired:
            return dict(method=method, n=n, seed=seed, status=f'not finished in {args.limit} s')
        if p.returncode != 0 or not os.path.exists(out):
            tail = (p.stderr or '').strip().splitlines()[-1:] or ['']
            return dict(method=method, n=n, seed=seed, status=f'failed (exit {p.returncode}) after {time.perf_counter() - t0:.0f} s: {tail[0][:200]}')
        with open(out) as f: return dict(json.load(f), status='ok')

def scaling(args):
    rows, stopped = [], set()
    for n in args.sizes:
        for method in args.methods:
            if method in stopped or n > {'ours': 10 ** 9, 'pot': args.pot_max, 'moscot': args.moscot_max}[method]: continue
            for seed in args.seeds:
                r = _run_point(method, n, seed, args)
                rows.append(r); print(json.dumps(r, default=float), flush=True)
                if r['status'] != 'ok' or r.get('peak_rss_gib', 0) > 16: stopped.add(method); break
    return dict(part='scaling', rows=rows, threads=args.threads, limit_seconds=args.limit, rank=args.rank, pot_iter=args.pot_iter,
                data='relrep_nb.gw.unpaired_modalities(n, seed)', loadavg_1min_end=os.getloadavg()[0])

def figure(args):
    import matplotlib; matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    with open(args.results) as f: res = json.load(f)
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    names = {'ours': 'align (LearnedGW)', 'pot': "POT entropic GW", 'moscot': 'moscot low-rank GW'}
    for method in names:
        ok = [r for r in res['rows'] if r['method'] == method and r['status'] == 'ok']
        if not ok: continue
        ns = sorted({r['n'] for r in ok})
        for ax, key in zip(axes, ('cpu_seconds', 'peak_rss_gib', 'label_transfer')):
            v = [np.mean([r[key] for r in ok if r['n'] == n]) for n in ns]
            ax.plot(ns, v, 'o-', label=names[method])
    for ax, lab in zip(axes, ('CPU seconds', 'peak RSS (GiB)', '5-NN label transfer')):
        ax.set_xscale('log'); ax.set_xlabel('cells per side'); ax.set_ylabel(lab)
        if lab != '5-NN label transfer': ax.set_yscale('log')
    axes[0].legend(fontsize=8); fig.tight_layout()
    out = args.results.replace('.json', '.png'); fig.savefig(out, dpi=110); print(out)

def million(args):
    """`align`'s fit on n cells per side (training does not grow with n), then the placement of a fraction of the first
    modality's cells against all of the second's, chunk by chunk on a dask LocalCluster (`Placement` through
    `relrep_nb.scale.transform_dask`); the time of the whole placement is extrapolated from the fraction (linear in the
    cells placed: each chunk's cost is its rows times the m targets)."""
    import torch
    from dask.distributed import Client, LocalCluster
    import dask.array as da
    from relrep_nb.core import torch_threads
    from relrep_nb.gw import LearnedGW, ALIGN_CONFIG, align_k, unpaired_modalities
    from relrep_nb.scale import transform_dask
    x, y, lx, ly = unpaired_modalities(args.n, seed=args.seed)
    t0, c0 = time.perf_counter(), time.process_time()
    with torch_threads(1):
        m = LearnedGW(**{**ALIGN_CONFIG, 'k': align_k(2048, 2048), 'seed': args.seed, 'progress': False}).fit(x, y)
        t_fit, c_fit = time.perf_counter() - t0, time.process_time() - c0
        pl = m.placement(x, y)
    t_pot = time.perf_counter() - t0 - t_fit
    n_place = int(args.n * args.fraction)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        t1 = time.perf_counter()
        z = transform_dask(pl, da.from_array(x[:n_place], chunks=(args.chunk, x.shape[1]))).compute()
        t_place = time.perf_counter() - t1
    zy = pl.target.float().numpy()
    return dict(part='million', n=args.n, seed=args.seed, fit_seconds=t_fit, fit_cpu_seconds=c_fit, potential_seconds=t_pot,
                placed=n_place, place_seconds=t_place, workers=args.workers, chunk_rows=args.chunk,
                place_all_seconds_extrapolated=t_place * args.n / n_place, peak_rss_gib_main=peak_gib(),
                label_transfer_placed=label_transfer(z, zy, lx[:n_place], ly), loadavg_1min_end=os.getloadavg()[0])

def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest='part', required=True)
    a = sub.add_parser('point'); a.add_argument('--method', choices=list(PYTHONS), default='ours'); a.add_argument('--n', type=int, default=2000)
    a.add_argument('--seed', type=int, default=0)
    b = sub.add_parser('scaling'); b.add_argument('--sizes', type=int, nargs='+', default=[2000, 10_000, 30_000, 100_000, 300_000])
    b.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2]); b.add_argument('--methods', nargs='+', default=list(PYTHONS))
    b.add_argument('--limit', type=int, default=1800, help='seconds per point'); b.add_argument('--pot-max', type=int, default=10_000)
    b.add_argument('--moscot-max', type=int, default=100_000)
    for s in (a, b):
        s.add_argument('--threads', type=int, default=1); s.add_argument('--json', default=None)
        s.add_argument('--rank', type=int, default=100, help="moscot's low-rank GW rank"); s.add_argument('--pot-iter', type=int, default=100)
        s.add_argument('--moscot-eps', dest='moscot_eps', type=float, default=1e-3)
    c = sub.add_parser('figure'); c.add_argument('results')
    d = sub.add_parser('million'); d.add_argument('--n', type=int, default=1_000_000); d.add_argument('--seed', type=int, default=0)
    d.add_argument('--fraction', type=float, default=0.01); d.add_argument('--workers', type=int, default=2)
    d.add_argument('--chunk', type=int, default=2000); d.add_argument('--json', default=None)
    args = p.parse_args()
    if args.part == 'figure': return figure(args)
    res = {'point': point, 'scaling': scaling, 'million': million}[args.part](args)
    print(json.dumps(res, indent=1, default=float))
    if args.json:
        with open(args.json, 'w') as f: json.dump(res, f, indent=1, default=float)

if __name__ == '__main__': main()
