"""Every benchmark of relrep_nb in one run: ours against the library a user would pick instead (or the hardware floor).

    python bench/run.py --quick                       # small sizes, about 5-10 minutes on 2 cores
    python bench/run.py --json bench/results/all.json  # the issue's sizes (n = 200k projection, GW at 1k/2k/4k, ...)
    python bench/run.py --device cuda --tasks relproj  # on a GPU (CUDA memory statistics instead of RSS)

Each variant (ours, the floor, each peer) runs in its own process, so its peak memory is its own: the inputs are
built first, the peak mark is reset, then the variant runs. Variants alternate (ours, peer, ours, peer, ...) for
`rounds` rounds of `repeat` timed calls each, and the best time is kept, so that a ratio compares the two under the
same load of a shared machine. Ratios are throughputs, peer seconds / our seconds: above 1, ours is faster.

Tasks: relproj (cosine/euclidean/l1/wip vs the floor `normalize + one matmul` and latentis 0.0.8), gw (LearnedGW vs
POT's entropic GW), anchors (fps/kmeans vs scikit-learn's k-means++ init and KMeans), asif (bench/asif.py: exact
top-k vs faiss), bootstrap (bench/bootstrap.py: mini-batch OT vs POT's dense Sinkhorn).
"""
import argparse, datetime, gc, json, math, os, platform, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
D, K = 768, 1024   # relative projection: width and anchors (the setting)
GIB4 = 4 * 1024    # MiB: the memory ceiling of "largest n within 4 GiB"
SIZES = {
    'quick': dict(relproj=[2_000, 10_000], relproj_l1=[500, 1_000], gw=[200, 400, 800], anchors=[2_000, 10_000],
                  asif=[20_000, 50_000], asif_n=500, bootstrap=dict(n=1000, steps=5), rounds=2, repeat=2, gw_rounds=1),
    'full': dict(relproj=[50_000, 100_000, 200_000], relproj_l1=[5_000, 10_000, 20_000], gw=[1000, 2000, 4000],
                 anchors=[50_000, 200_000], asif=[50_000, 200_000], asif_n=2000, bootstrap=dict(n=5000, steps=300),
                 rounds=2, repeat=2, gw_rounds=1),
}
GOALS = {('relproj', 'cosine', 'floor'): 0.95, ('relproj', 'wip', 'ours cosine'): 0.8}

# ---------------------------------------------------------------- measuring, inside a variant's process
def _rss_mib():
    with open('/proc/self/statm') as f: return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20

def _hwm_mib():
    with open('/proc/self/status') as f: return next(int(l.split()[1]) for l in f if l.startswith('VmHWM')) / 1024

def _mem_reset(device):
    "Forget the peak so far (inputs built before this call do not count); return the current level."
    gc.collect()
    if device == 'cuda':
        import torch
        torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); return torch.cuda.memory_allocated() / 2**20
    try:
        import ctypes; ctypes.CDLL('libc.so.6').malloc_trim(0)      # freed heap back to the OS: a reused block would hide a peak
    except OSError: pass
    with open('/proc/self/clear_refs', 'w') as f: f.write('5')   # resets VmHWM to the current RSS
    return _rss_mib()

def _mem_peak(device, base):
    if device == 'cuda':
        import torch
        torch.cuda.synchronize(); return torch.cuda.max_memory_allocated() / 2**20 - base
    return _hwm_mib() - base

def timed(f, repeat, device):
    "Best wall time of `repeat` calls of `f`, the largest peak memory above the level before each call, the last output."
    best, peak, out = math.inf, 0., None
    for _ in range(repeat):
        out = None; base = _mem_reset(device)
        t0 = time.perf_counter(); out = f()
        if device == 'cuda':
            import torch; torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0); peak = max(peak, _mem_peak(device, base))
    return best, peak, out

# ---------------------------------------------------------------- the variants
def relproj(variant, cfg, device):
    import torch, torch.nn.functional as F
    from relrep_nb.core import relative_projection, RelativeProjector, DEFAULT_MEMORY_BUDGET
    sims = {'floor': ['cosine'], 'ours': ['cosine', 'euclidean', 'l1', 'wip'], 'latentis': ['cosine', 'euclidean', 'l1']}[variant]
    sims = [s for s in sims if s in cfg.get('cases', sims)]
    if variant == 'latentis':
        try: from latentis.transform import projection as LP
        except Exception as e: return [dict(skipped=f'latentis not importable ({type(e).__name__}: {e}); pip install "relrep_nb[bench]"')]
        fns = dict(cosine=LP.cosine_proj, euclidean=LP.euclidean_proj, l1=LP.l1_proj)
    rows, sizes = [], sorted({n for s in sims for n in (cfg['relproj_l1'] if s == 'l1' else cfg['relproj'])})
    for n in sizes:
        g = torch.Generator().manual_seed(0)
        x, a = torch.randn(n, D, generator=g).to(device), torch.randn(K, D, generator=g).to(device)
        here = [s for s in sims if n in (cfg['relproj_l1'] if s == 'l1' else cfg['relproj'])]
        calls, extra = {}, {s: {} for s in here}
        for sim in here:
            if variant == 'floor': calls[sim] = lambda: F.normalize(x, dim=1) @ F.normalize(a, dim=1).T
            elif variant == 'latentis': calls[sim] = lambda f=fns[sim]: f(x, anchors=a)
            elif sim == 'wip':
                t0 = time.perf_counter(); p = RelativeProjector('wip', sim_kw=dict(shrinkage=0.1)).fit(a)
                extra[sim]['fit_s'] = time.perf_counter() - t0     # fitted once: the time is the transform's
                calls[sim] = p.transform
            else: calls[sim] = lambda sim=sim: relative_projection(x, a, sim)
        best, errs = {s: (math.inf, 0.) for s in here}, {}
        for rep in range(cfg['repeat']):       # similarities alternate within the process too (wip vs cosine)
            for sim in here:
                s_, peak, out = timed((lambda: calls[sim](x)) if variant == 'ours' and sim == 'wip' else calls[sim], 1, device)
                best[sim] = (min(best[sim][0], s_), max(best[sim][1], peak))
                if rep: del out; continue
                m = min(n, 200)     # accuracy: largest |error| against our float64 computation, first 200 rows
                ref = relative_projection(x[:m].double(), a.double(), sim, **({'shrinkage': 0.1} if sim == 'wip' else {}))
                if variant == 'latentis' and sim != 'cosine': ref = -ref      # latentis returns distances, not their negation
                errs[sim] = float((out[:m].double() - ref).abs().max() / ref.abs().max())
                del out
        for sim in here:
            rows.append(dict(task='relproj', case=sim, n=n, d=D, k=K, variant=variant, seconds=best[sim][0], peak_mib=best[sim][1],
                             output_mib=n * K * 4 / 2**20, budget_mib=DEFAULT_MEMORY_BUDGET / 2**20,
                             quality=dict(rel_max_error_vs_float64=errs[sim]), **extra[sim]))
        del x, a
    return rows

def gw(variant, cfg, device):
    import numpy as np, torch
    from relrep_nb.gw import LearnedGW, clustered_pair
    rows = []
    for n in [60] + list(cfg['gw']):     # n = 60: an untimed warm-up (first-call allocations are not the method's)
        x, y, lab = clustered_pair(n, d=10, n_clusters=5, seed=0)     # y = x Q + 10% noise, Q orthogonal
        perm = np.random.default_rng(0).permutation(n); yp = y[perm]  # the pairing is hidden
        if variant == 'ours':
            f = lambda: LearnedGW(seed=0, device=device, **({'n_steps': 2} if n == 60 else {})).fit(x, yp).coupling(x, yp).match()
        else:
            import ot
            def f():
                Cx, Cy = [np.sqrt(((v[:, None] - v[None]) ** 2).sum(-1)) for v in (x, yp)]
                Cx, Cy = Cx / Cx.max(), Cy / Cy.max()
                if device == 'cuda': Cx, Cy = torch.from_numpy(Cx).cuda(), torch.from_numpy(Cy).cuda()
                with np.errstate(all='ignore'):
                    T = ot.gromov.entropic_gromov_wasserstein(Cx, Cy, ot.unif(n), ot.unif(n), 'square_loss',
                                                              epsilon=5e-3, max_iter=1000, tol=1e-9)
                T = T.cpu().numpy() if hasattr(T, 'cpu') else T
                return T.argmax(1)
        s, peak, mt = timed(f, 1, device)
        if n == 60: continue
        rows.append(dict(task='gw', case='align', n=n, variant=variant, seconds=s, peak_mib=peak,
                         quality=dict(cluster_accuracy=float((lab[perm][mt] == lab).mean()),
                                      exact_match=float((perm[mt] == np.arange(n)).mean()))))
    return rows

def anchors(variant, cfg, device):
    import numpy as np, torch
    from relrep_nb.anchors import sample_anchors
    from threadpoolctl import threadpool_limits
    k, d, rows = 256, 64, []
    for n in cfg['anchors']:
        g = torch.Generator().manual_seed(0)
        c = torch.randn(50, d, generator=g) * 3
        x = (c[torch.randint(0, 50, (n,), generator=g)] + torch.randn(n, d, generator=g)).to(device)
        xn = x.cpu().numpy()
        for method in ('fps', 'kmeans'):
            if variant == 'ours': f = lambda: x[sample_anchors(x, k, method, seed=0)]
            elif method == 'fps':
                from sklearn.cluster import kmeans_plusplus
                f = lambda: torch.from_numpy(kmeans_plusplus(xn, k, random_state=0)[0]).to(device)
            else:
                from sklearn.cluster import KMeans
                f = lambda: torch.from_numpy(KMeans(k, init='k-means++', n_init=1, max_iter=10, random_state=0,
                                                    algorithm='lloyd').fit(xn).cluster_centers_).to(device)
            with threadpool_limits(limits=torch.get_num_threads()): s, peak, A = timed(f, cfg['repeat'], device)
            near = lambda C: torch.cat([torch.cdist(x[i:i + 8192], C.to(x.dtype)).min(1).values for i in range(0, n, 8192)])
            dmin = near(A)
            # k-means centroids are not rows; anchors must be: the peer's centroids snapped to their nearest rows
            # (medoids) is the like-for-like quality (ours are rows already: the same number)
            snap = torch.cat([torch.cdist(A[j:j + 1024].to(x.dtype), x).argmin(1) for j in range(0, len(A), 1024)])
            dmed = near(x[snap.unique()])
            rows.append(dict(task='anchors', case=method, n=n, d=d, k=k, variant=variant, seconds=s, peak_mib=peak,
                             quality=dict(inertia=float(dmin.pow(2).mean()), covering_radius=float(dmin.max()),
                                          medoid_inertia=float(dmed.pow(2).mean()))))
    return rows

VARIANTS = {'relproj': (relproj, ['ours', 'floor', 'latentis']), 'gw': (gw, ['ours', 'pot']),
            'anchors': (anchors, ['ours', 'sklearn'])}

def child(task, variant, cfg, device, threads):
    import torch
    torch.set_num_threads(threads)
    return VARIANTS[task][0](variant, cfg, device)

# ---------------------------------------------------------------- the chapters' own benchmarks (their own scripts)
def _script(args, env):
    r = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, env=env, cwd=ROOT)
    if r.returncode: raise RuntimeError(f'{args[0]} failed: {r.stderr[-1500:]}')
    return r.stdout

def asif_rows(cfg, threads, env):
    rows = []
    for K_ in cfg['asif']:
        with tempfile.TemporaryDirectory() as tmp:
            _script(['bench/asif.py', '--n', cfg['asif_n'], '--K', K_, '--k', 100, '--threads', threads,
                     '--variants', 'exact', 'faiss-flat', '--data', 'clustered', '--json', f'{tmp}/a.json'], env)
            res = json.loads(Path(f'{tmp}/a.json').read_text())['results']
        for r in res:
            rows.append(dict(task='asif', case='exact top-k', n=r['K'], queries=r['n'], d=r['d'], k=r['k'],
                             variant='ours' if r['variant'] == 'exact' else r['variant'], seconds=r['seconds'],
                             peak_mib=r['peak_above_inputs_mb']))
    return rows

def bootstrap_rows(cfg, threads, env):
    b = cfg['bootstrap']
    with tempfile.TemporaryDirectory() as tmp:
        _script(['bench/bootstrap.py', '--n', b['n'], '--steps', b['steps'], '--threads', threads, '--json', f'{tmp}/b.json'], env)
        res = json.loads(Path(f'{tmp}/b.json').read_text())
    return [dict(task='bootstrap', case='anchor matching', n=r['n'], variant='ours' if kind == 'bootstrap' else 'pot',
                 seconds=r['seconds'], peak_mib=r['peak_rss_mib'] - r['data_rss_mib'], steps=r.get('steps'))
            for kind, r in res.items() if isinstance(r, dict) and 'seconds' in r]

# ---------------------------------------------------------------- the table
PEERS = {'relproj': [('floor', 'floor'), ('latentis', 'latentis')], 'gw': [('pot', 'POT entropic GW')],
         'anchors': [('sklearn', 'scikit-learn')], 'asif': [('faiss-flat', 'faiss IndexFlatIP')],
         'bootstrap': [('pot', 'POT dense Sinkhorn')]}
PEER_OF = {('anchors', 'fps'): 'k-means++ init', ('anchors', 'kmeans'): 'KMeans (10 Lloyd)'}

def best_rows(raw):
    "One row per (task, case, n, variant): the best time over rounds, the largest peak."
    out = {}
    for r in raw:
        if 'skipped' in r: continue
        key = (r['task'], r['case'], r['n'], r['variant'])
        if key not in out: out[key] = dict(r)
        else:
            o = out[key]; o['peak_mib'] = max(o['peak_mib'], r['peak_mib'])
            if r['seconds'] < o['seconds']: o.update({k: v for k, v in r.items() if k != 'peak_mib'})
    return out

def _quality(task, o, p):
    if task == 'relproj': return f"err {o['quality']['rel_max_error_vs_float64']:.1e}" + (f" / {p['quality']['rel_max_error_vs_float64']:.1e}" if p else '')
    if task == 'gw': return f"acc {o['quality']['cluster_accuracy']:.2f} / {p['quality']['cluster_accuracy']:.2f}"
    if task == 'anchors':
        q = 'covering_radius' if o['case'] == 'fps' else 'inertia'
        out = f"{q.replace('_', ' ')} {o['quality'][q]:.3g} / {p['quality'][q]:.3g}"
        if q == 'inertia' and 'medoid_inertia' in p['quality']:   # like for like: the peer's centroids snapped to rows
            out += f" (peer's centroids as rows: {p['quality']['medoid_inertia']:.3g})"
        return out
    return ''

def round_ratios(raw, ours, peer):
    "peer s / ours s of each round: the i-th run of `ours` with the i-th run of `peer` ((task, case, n, variant) keys), in the order they ran."
    runs = lambda key: [r['seconds'] for r in raw if 'skipped' not in r and (r['task'], r['case'], r['n'], r['variant']) == key]
    return [p / o for o, p in zip(runs(ours), runs(peer)) if o > 0]

def table(raw):
    import statistics
    by = best_rows(raw)
    rows = []
    for (task, case, n, variant), o in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        if variant != 'ours': continue
        peers = [(v, name) for v, name in PEERS.get(task, []) if (task, case, n, v) in by]
        if task == 'relproj' and case == 'wip' and (task, 'cosine', n, 'ours') in by:
            peers = [('ours cosine', 'ours cosine')]; by[(task, case, n, 'ours cosine')] = by[(task, 'cosine', n, 'ours')]
        for v, name in peers or [(None, '-')]:
            p = by.get((task, case, n, v))
            ratio = p['seconds'] / o['seconds'] if p else None
            rr = round_ratios(raw, (task, case, n, 'ours'), (task, 'cosine', n, 'ours') if v == 'ours cosine' else (task, case, n, v)) if p else []
            spread = dict(rounds=len(rr), ratio_min=min(rr), ratio_median=statistics.median(rr), ratio_max=max(rr)) if rr else {}
            goal = GOALS.get((task, case, v))
            rows.append(dict(task=task, case=case, n=n, ours_s=o['seconds'], peer=PEER_OF.get((task, case), name),
                             peer_s=p['seconds'] if p else None, ratio=ratio, goal=goal,
                             met=None if goal is None or ratio is None else bool(ratio >= goal),
                             ours_peak_mib=o['peak_mib'], peer_peak_mib=p['peak_mib'] if p else None,
                             quality=_quality(task, o, p) if task in ('relproj', 'gw', 'anchors') and (p or task == 'relproj') else '', **spread))
    return rows

def largest_n_within(raw, task='gw', limit_mib=GIB4):
    "Per variant: fit peak = c n^p (least squares in log-log over the measured sizes) and solve for `limit_mib`."
    import numpy as np
    out = {}
    for v in {r['variant'] for r in raw if r.get('task') == task}:
        pts = sorted((r['n'], max(r['peak_mib'], 1.)) for r in best_rows(raw).values() if r['task'] == task and r['variant'] == v)
        if len(pts) < 2: continue
        ln, lp = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
        p, c = np.polyfit(ln, lp, 1)
        n_max = float(np.exp((np.log(limit_mib) - c) / p)) if p > 0.05 else float('inf')
        out[v] = dict(exponent=float(p), n_max=n_max, measured=pts)
    return out

def _spread(r):
    return f"{r['ratio_min']:.2f}-{r['ratio_median']:.2f}-{r['ratio_max']:.2f}" if r.get('rounds', 0) > 1 else '-'

def fmt(rows):
    h = f"{'task':9s} {'case':16s} {'n':>7s} {'ours s':>8s} {'peer':>18s} {'peer s':>8s} {'ratio':>6s} {'min-med-max':>16s} {'goal':>5s} {'ours MiB':>9s} {'peer MiB':>9s}  quality (ours / peer)"
    lines = [h, '-' * len(h)]
    for r in rows:
        f = lambda v, w, p: f'{v:{w}.{p}f}' if v is not None else f"{'-':>{w}s}"
        lines.append(f"{r['task']:9s} {r['case']:16s} {r['n']:7d} {f(r['ours_s'], 8, 3)} {r['peer'][:18]:>18s} "
                     f"{f(r['peer_s'], 8, 3)} {f(r['ratio'], 6, 2)} {_spread(r):>16s} {f(r['goal'], 5, 2)} {f(r['ours_peak_mib'], 9, 0)} "
                     f"{f(r['peer_peak_mib'], 9, 0)}  {r['quality']}" + ('' if r['met'] is None else ('  goal met' if r['met'] else '  GOAL NOT MET')))
    return '\n'.join(lines)

# ---------------------------------------------------------------- driver
def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--quick', action='store_true', help='small sizes (about 5-10 minutes on 2 cores)')
    ap.add_argument('--json', default=None, help='write meta, raw measurements and the table here')
    ap.add_argument('--device', choices=['cpu', 'cuda'], default='cpu')
    ap.add_argument('--threads', type=int, default=1, help='torch/BLAS threads per variant (1: stable on a shared machine)')
    ap.add_argument('--tasks', nargs='+', default=['relproj', 'gw', 'anchors', 'asif', 'bootstrap'])
    ap.add_argument('--rounds', type=int, default=None, help="alternating rounds per variant (default: the size's)")
    ap.add_argument('--cases', nargs='+', default=None, help='relproj similarities to run (default: all)')
    ap.add_argument('--one', nargs=2, default=None, help=argparse.SUPPRESS)
    ap.add_argument('--cfg', default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(child(*a.one, json.loads(a.cfg), a.device, a.threads))); return
    size = 'quick' if a.quick else 'full'
    cfg = dict(SIZES[size], **({'cases': a.cases} if a.cases else {}))
    if a.rounds: cfg['rounds'] = a.rounds
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
               MALLOC_MMAP_THRESHOLD_='1048576',    # large blocks mmapped and unmapped on free: RSS peaks are the variant's
               **{v: str(a.threads) for v in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS')})
    t_start, load0 = time.perf_counter(), os.getloadavg()
    raw, notes = [], []
    for task in a.tasks:
        t0 = time.perf_counter()
        if task in VARIANTS:
            rounds = cfg['gw_rounds'] if task == 'gw' else cfg['rounds']
            for _ in range(rounds):
                for v in VARIANTS[task][1]:     # alternate: ours, peer, ours, peer, ...
                    r = subprocess.run([sys.executable, __file__, '--one', task, v, '--cfg', json.dumps(cfg),
                                        '--device', a.device, '--threads', str(a.threads)],
                                       capture_output=True, text=True, env=env, cwd=ROOT)
                    if r.returncode: notes.append(f'{task}/{v} failed: {r.stderr.strip()[-800:]}'); continue
                    got = json.loads(r.stdout.strip().splitlines()[-1])
                    notes += [f"{task}/{v}: {g['skipped']}" for g in got if 'skipped' in g and f"{task}/{v}: {g['skipped']}" not in notes]
                    raw += got
        elif a.device == 'cuda': notes.append(f'{task}: CPU-only benchmark, skipped with --device cuda'); continue
        else:
            for _ in range(cfg['rounds']):      # each round runs ours then the peer, in fresh processes
                try: raw += (asif_rows if task == 'asif' else bootstrap_rows)(cfg, a.threads, env)
                except Exception as e: notes.append(f'{task} failed: {e}'); break
        print(f'[{task}: {time.perf_counter() - t0:.0f} s]', file=sys.stderr, flush=True)
    rows = table(raw)
    fits = largest_n_within(raw) if 'gw' in a.tasks else {}
    meta = dict(size=size, device=a.device, threads=a.threads, date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
                seconds=time.perf_counter() - t_start, loadavg_start=load0, loadavg_end=os.getloadavg(),
                cpu_count=os.cpu_count(), machine=platform.machine(), python=platform.python_version(),
                rounds=cfg['rounds'], repeat=cfg['repeat'], notes=notes)
    try:
        import torch; meta['torch'] = torch.__version__
        if a.device == 'cuda': meta['gpu'] = torch.cuda.get_device_name()
    except ImportError: pass
    print(f"relrep_nb benchmarks ({size}, {a.device}, {a.threads} thread(s) per variant, best of {cfg['rounds']}x{cfg['repeat']}, "
          f"load average {load0[0]:.1f} -> {meta['loadavg_end'][0]:.1f}); ratio = peer s / ours s (throughput)")
    print(fmt(rows))
    for v, fit in fits.items():
        print(f"gw {v}: peak memory ~ n^{fit['exponent']:.2f}; largest n within 4 GiB ~ {fit['n_max']:.3g} (extrapolated from n = {[p[0] for p in fit['measured']]})")
    for n_ in notes: print('note:', n_)
    print(f"total {meta['seconds']:.0f} s")
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(dict(meta=meta, table=rows, gw_largest_n_4gib=fits, raw=raw), indent=1, default=float) + '\n')

if __name__ == '__main__': main()
