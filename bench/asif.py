"""Benchmark: ASIF's encoding step (exact top-k of n queries against K unit anchors) on CPU.

Variants, each in its own process (peak memory is its own; the inputs are loaded first and the peak-RSS mark is
reset before the variant runs, so `peak_above_inputs_mb` is what the variant adds: its intermediates, its outputs
(n x k values and int64 indices, `outputs_mb`) and, for FAISS, the index's own copy of the anchors):
  exact      relrep_nb.asif.topk_inner: blocks of queries x blocks of anchors under `--budget`, threshold + candidate table
  dense      plain `topk(x @ A.T)` over the full anchor width, a block of queries at a time under the same budget
  faiss-flat faiss.IndexFlatIP (exact); index build included in the time
  faiss-ivf  faiss.IndexIVFFlat for each `--nlist` (default sqrt(K) and 4 sqrt(K); k-means, 10 iterations on 64 points
             per cell, at most 2^17 training points), trained once; search time and recall@k against exact for each `--nprobe`
  faiss-hnsw faiss.IndexHNSWFlat (a proximity graph) for each `--hnsw-m` (neighbours per node; FAISS's default
             efConstruction 40), built once; search time and recall@k against exact for each efSearch = `--ef` x k
`--data random` draws uniform unit vectors (no structure: the hardest case for IVF); `--data clustered` draws them
around 1000 centres; `--data fmnist` uses real embeddings: the 60 000 Fashion-MNIST training images through
EfficientNet-Lite0 (1280-d, the chapter's image anchors) as anchors and test images as queries.
The timed variants run `--rounds` times, alternating (the order rotates every round), so that a load change on a
shared machine hits every variant alike; times are medians over rounds and ratios are taken within each round.

    python bench/asif.py                                  # n=1000, K=200k, d=512, k=800, 1 thread
    python bench/asif.py --n 1000 --K 1600000 --threads 2 --rounds 3 --json bench/results/asif_n1000_K1600k_random.json
    python bench/asif.py --data fmnist --n 2000 --variants exact faiss-flat faiss-ivf --json bench/results/asif_fmnist.json
    python bench/asif.py --data fmnist --n 1000 --K 60000 --k 100 --threads 2 --variants exact faiss-flat faiss-ivf faiss-hnsw \
        --json bench/results/asif_fmnist_n1000_K60k_k100.json
"""
import argparse, json, math, os, statistics, subprocess, sys, time

def rss_mb():
    with open('/proc/self/statm') as f: return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20

def reset_peak():
    "Reset the kernel's peak-RSS mark (VmHWM) so that building the inputs does not count in the variant's peak."
    with open('/proc/self/clear_refs', 'w') as f: f.write('5')

def peak_mb():
    with open('/proc/self/status') as f:
        return next(int(l.split()[1]) for l in f if l.startswith('VmHWM')) / 1024

def data(n, K, d, kind='random', seed=0):
    "Unit vectors: 'random' (uniform on the sphere), 'clustered' (1000 Gaussian clusters, spread 0.5) or 'fmnist' (real)."
    import torch
    if kind == 'fmnist':
        from relrep_nb.experiments.asif import fashion_data
        D = fashion_data(None, None)
        x, A = torch.from_numpy(D['test'][:n]), torch.from_numpy(D['pool'][:K])
        return torch.nn.functional.normalize(x, dim=1), torch.nn.functional.normalize(A, dim=1)
    g = torch.Generator().manual_seed(seed)
    C = torch.randn(1000, d, generator=g) / math.sqrt(d)
    def draw(m):
        v = torch.randn(m, d, generator=g)
        if kind == 'clustered': v = C[torch.randint(0, 1000, (m,), generator=g)] * math.sqrt(d) + 0.5 * v
        return torch.nn.functional.normalize(v, dim=1)
    x, A = draw(n), torch.empty(K, d)
    for i in range(0, K, 100_000): A[i:i + 100_000] = draw(min(100_000, K - i))   # in blocks: no second (K, d) temporary
    return x, A

def load(a):
    "The inputs, drawn once by the parent and saved to `a.cache` (.npy) so that every process reads the same arrays."
    import numpy as np, torch
    x, A = np.load(a.cache + '_x.npy'), np.load(a.cache + '_A.npy')
    return torch.from_numpy(x), torch.from_numpy(A)

def recall_curve(idx, xa, exact, k, settings, apply, key, tag) -> list:
    "Search time and recall@k against the exact ids at each setting (`apply(idx, setting)` sets it), until recall reaches 0.999."
    import numpy as np
    curve = []
    for v in settings:
        apply(idx, v)
        t0 = time.perf_counter(); D, I = idx.search(xa, k); s = time.perf_counter() - t0
        rec = float(np.mean([len(np.intersect1d(u, w)) / k for u, w in zip(I, exact)]))
        curve.append({key: v, 'seconds': s, 'recall_at_k': rec})
        print(json.dumps(dict(tag, **curve[-1])), file=sys.stderr, flush=True)
        if rec >= 0.999: break
    return curve

def one(a, variant):
    import numpy as np, torch
    from relrep_nb.asif import topk_inner
    if variant.startswith('faiss'): import faiss; faiss.omp_set_num_threads(a.threads)
    torch.set_num_threads(a.threads)
    x, A = load(a)
    (n, d), K, k = x.shape, A.shape[0], a.k
    import gc; gc.collect()
    base = rss_mb(); reset_peak()
    res = dict(variant=variant, data=a.data, n=n, K=K, d=d, k=k, threads=a.threads, budget_mb=a.budget / 2**20,
               outputs_mb=n * k * 12 / 2**20, inputs_mb=(n + K) * d * 4 / 2**20)
    if variant == 'exact':
        t0 = time.perf_counter(); v, i = topk_inner(x, A, k, memory_budget=a.budget); res['seconds'] = time.perf_counter() - t0
        if not os.path.exists(a.cache + '_ids.npy'): np.save(a.cache + '_ids.npy', i.numpy())
    elif variant == 'dense':
        rows = max(1, a.budget // (K * 4 + k * 12 * 2))
        t0 = time.perf_counter()
        out = [torch.topk(x[r:r + rows] @ A.T, k, dim=1) for r in range(0, n, rows)]
        res['seconds'], res['rows_per_block'] = time.perf_counter() - t0, rows
    elif variant == 'faiss-flat':
        xa, Aa = x.numpy(), A.numpy()
        t0 = time.perf_counter(); idx = faiss.IndexFlatIP(d); idx.add(Aa); D, I = idx.search(xa, k)
        res['seconds'] = time.perf_counter() - t0
    elif variant == 'faiss-hnsw':
        xa, Aa, exact = x.numpy(), A.numpy(), np.load(a.cache + '_ids.npy')
        res['hnsw'] = []
        for M in a.hnsw_m:
            t0 = time.perf_counter()
            idx = faiss.IndexHNSWFlat(d, M, faiss.METRIC_INNER_PRODUCT); idx.add(Aa)
            build = time.perf_counter() - t0
            efs = list(dict.fromkeys(max(k, int(round(f * k))) for f in a.ef))     # efSearch below k is raised to k by FAISS
            curve = recall_curve(idx, xa, exact, k, efs, lambda i, v: setattr(i.hnsw, 'efSearch', v), 'ef_search', dict(M=M))
            res['hnsw'].append(dict(M=M, build_seconds=build, curve=curve))
            del idx
    else:
        xa, Aa, exact = x.numpy(), A.numpy(), np.load(a.cache + '_ids.npy')
        res['ivf'] = []
        for nlist in a.nlist or [int(math.sqrt(K)), int(4 * math.sqrt(K))]:
            t0 = time.perf_counter()
            idx = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
            idx.cp.seed, idx.cp.niter = 0, 10
            idx.train(Aa[np.random.default_rng(0).choice(K, min(K, 64 * nlist, 2**17), replace=False)]); idx.add(Aa)
            build = time.perf_counter() - t0
            probes = sorted({p for p in a.nprobe if p < nlist} | {nlist})          # up to every cell (= exhaustive)
            curve = recall_curve(idx, xa, exact, k, probes, lambda i, v: setattr(i, 'nprobe', v), 'nprobe', dict(nlist=nlist))
            res['ivf'].append(dict(nlist=nlist, build_seconds=build, curve=curve))
            del idx
    res['peak_above_inputs_mb'] = peak_mb() - base
    return res

APPROX = ('faiss-ivf', 'faiss-hnsw')     # measured once, after the timed rounds, as curves of recall against time

def summarize(rows, variants):
    "Medians over rounds, ratios within rounds, and the fastest IVF and HNSW settings at recall >= 0.95 (against exact's median time)."
    by = {v: [r for r in rows if r['variant'] == v] for v in variants}
    s = {f'{v}_seconds_median': statistics.median(r['seconds'] for r in by[v]) for v in variants if v not in APPROX and by[v]}
    rounds = sorted({r['round'] for r in rows if 'round' in r})
    if by.get('faiss-flat'):
        for v in ('exact', 'dense'):
            if not by.get(v): continue
            per = [next(r['seconds'] for r in by[v] if r['round'] == i) / next(r['seconds'] for r in by['faiss-flat'] if r['round'] == i)
                   for i in rounds if any(r['round'] == i for r in by[v]) and any(r['round'] == i for r in by['faiss-flat'])]
            s[f'{v}_over_faiss_flat_time_per_round'], s[f'{v}_over_faiss_flat_time'] = per, statistics.median(per)
    if by.get('exact'):
        s['exact_peak_above_inputs_mb'] = max(r['peak_above_inputs_mb'] for r in by['exact'])
        s['exact_intermediates_mb'] = s['exact_peak_above_inputs_mb'] - by['exact'][0]['outputs_mb']
        s['budget_mb'] = by['exact'][0]['budget_mb']
    for v, name, key in (('faiss-ivf', 'ivf', 'nlist'), ('faiss-hnsw', 'hnsw', 'M')):   # build time excluded: an index is built once per anchor set
        if not (by.get(v) and by.get('exact')): continue
        ok = [{key: b[key], 'build_seconds': b['build_seconds'], **c} for b in by[v][0][name] for c in b['curve'] if c['recall_at_k'] >= 0.95]
        best = min(ok, key=lambda c: c['seconds']) if ok else None
        s[f'{name}_fastest_at_recall_0.95'] = best
        s[f'exact_over_{name}_time_at_recall_0.95'] = s['exact_seconds_median'] / best['seconds'] if best else None
    return s

def main():
    p = argparse.ArgumentParser()
    p.add_argument('--n', type=int, default=1000); p.add_argument('--K', type=int, default=200_000)
    p.add_argument('--d', type=int, default=512); p.add_argument('--k', type=int, default=800)
    p.add_argument('--budget', type=int, default=256 * 2**20, help='memory_budget in bytes for exact and dense')
    p.add_argument('--threads', type=int, default=1); p.add_argument('--rounds', type=int, default=1)
    p.add_argument('--data', choices=['random', 'clustered', 'fmnist'], default='random')
    p.add_argument('--nlist', type=int, nargs='*', default=None)
    p.add_argument('--nprobe', type=int, nargs='+', default=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096])
    p.add_argument('--hnsw-m', dest='hnsw_m', type=int, nargs='+', default=[8, 16, 32])
    p.add_argument('--ef', type=float, nargs='+', default=[1, 1.25, 1.5, 2, 3, 4], help='efSearch of faiss-hnsw, in multiples of k')
    p.add_argument('--variants', nargs='+', default=['exact', 'dense', 'faiss-flat', 'faiss-ivf'])
    p.add_argument('--json', default=None); p.add_argument('--one', default=None, help=argparse.SUPPRESS)
    p.add_argument('--cache', default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        print(json.dumps(one(a, a.one))); return
    import numpy as np
    a.cache = f'/tmp/asif_bench_{os.getpid()}'
    x, A = data(a.n, a.K, a.d, a.data)
    np.save(a.cache + '_x.npy', x.numpy()); np.save(a.cache + '_A.npy', A.numpy())
    a.n, a.K, a.d = x.shape[0], A.shape[0], x.shape[1]
    del x, A
    timed = [v for v in a.variants if v not in APPROX]
    if set(APPROX) & set(a.variants) and 'exact' not in timed: sys.exit('faiss-ivf and faiss-hnsw need the exact variant (their recall reference)')
    rows, t0 = [], time.time()
    def call(v, r):
        cmd = [sys.executable, __file__, '--one', v, '--n', str(a.n), '--K', str(a.K), '--d', str(a.d), '--k', str(a.k),
               '--budget', str(a.budget), '--threads', str(a.threads), '--cache', a.cache, '--data', a.data,
               '--nprobe', *map(str, a.nprobe), *(['--nlist', *map(str, a.nlist)] if a.nlist else []),
               '--hnsw-m', *map(str, a.hnsw_m), '--ef', *map(str, a.ef)]
        out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
        res = dict(json.loads(out.strip().splitlines()[-1]), round=r, load_avg=os.getloadavg()[0])
        rows.append(res); print(json.dumps(res), flush=True)
    try:
        for r in range(a.rounds):
            for v in timed[r % len(timed):] + timed[:r % len(timed)]: call(v, r)
        for v in APPROX:
            if v in a.variants: call(v, a.rounds)
    finally:
        for f in ('_x', '_A', '_ids'):
            if os.path.exists(a.cache + f + '.npy'): os.remove(a.cache + f + '.npy')
    summary = summarize(rows, a.variants)
    print(json.dumps(summary, indent=1))
    if a.json:
        args = {k: v for k, v in vars(a).items() if k not in ('cache', 'one')}
        with open(a.json, 'w') as fh:
            json.dump(dict(args=args, wall_seconds=time.time() - t0, results=rows, summary=summary), fh, indent=1)

if __name__ == '__main__': main()
