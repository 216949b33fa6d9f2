"""Benchmark: ASIF's encoding step (exact top-k of n queries against K unit anchors) on CPU.

Variants, each in its own process (peak memory is its own; the same seeded unit vectors are built first and
resident memory is read before the variant runs):
  exact      relrep_nb.asif.topk_inner: blocks of queries x blocks of anchors under `--budget`, top-k merged
  dense      plain `topk(x @ A.T)` over the full anchor width, a block of queries at a time under the same budget
  faiss-flat faiss.IndexFlatIP (exact); index build included in the time
  faiss-ivf  faiss.IndexIVFFlat (nlist = sqrt(K) by default; k-means, 10 iterations on 64 points per cell), trained
             once; search time and recall@k against exact, for each `--nprobe`
`--data random` draws uniform unit vectors (no structure: the hardest case for IVF); `--data clustered` draws
them around 1000 centres, closer to real embeddings.
Ratios are reported against faiss-flat within one run. The issue's setting is n = 1e5 queries, K = 1.6M,
d = 512, k = 800; on a shared 2-core machine the defaults scale n and K down (pass them to run the full size).

    python bench/asif.py                                  # n=2000, K=200k, d=512, k=800, 1 thread
    python bench/asif.py --n 100000 --K 1600000 --threads 2 --json bench/results/asif_full.json
"""
import argparse, json, math, os, subprocess, sys, time

def rss_mb():
    with open('/proc/self/statm') as f: return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20

def reset_peak():
    "Reset the kernel's peak-RSS mark (VmHWM) so that building the inputs does not count in the variant's peak."
    with open('/proc/self/clear_refs', 'w') as f: f.write('5')

def peak_mb():
    with open('/proc/self/status') as f:
        return next(int(l.split()[1]) for l in f if l.startswith('VmHWM')) / 1024

def data(n, K, d, kind='random', seed=0):
    "Unit vectors: 'random' (uniform on the sphere) or 'clustered' (1000 Gaussian clusters, spread 0.5, on the sphere)."
    import torch
    g = torch.Generator().manual_seed(seed)
    C = torch.randn(1000, d, generator=g) / math.sqrt(d)
    def draw(m):
        v = torch.randn(m, d, generator=g)
        if kind == 'clustered': v = C[torch.randint(0, 1000, (m,), generator=g)] * math.sqrt(d) + 0.5 * v
        return torch.nn.functional.normalize(v, dim=1)
    x, A = draw(n), torch.empty(K, d)
    for i in range(0, K, 100_000): A[i:i + 100_000] = draw(min(100_000, K - i))   # in blocks: no second (K, d) temporary
    return x, A

def one(variant, n, K, d, k, budget, threads, nprobes, out_ids=None, kind='random', nlist=None):
    import numpy as np, torch
    from relrep_nb.asif import topk_inner
    if variant.startswith('faiss'): import faiss; faiss.omp_set_num_threads(threads)
    torch.set_num_threads(threads)
    x, A = data(n, K, d, kind)
    import gc; gc.collect()
    base = rss_mb(); reset_peak()
    res = dict(variant=variant, data=kind, n=n, K=K, d=d, k=k, threads=threads, budget_mb=budget / 2**20)
    if variant == 'exact':
        t0 = time.perf_counter(); v, i = topk_inner(x, A, k, memory_budget=budget); res['seconds'] = time.perf_counter() - t0
        if out_ids: np.save(out_ids, i.numpy())
    elif variant == 'dense':
        rows = max(1, budget // (K * 4 + k * 12))
        t0 = time.perf_counter()
        out = [torch.topk(x[r:r + rows] @ A.T, k, dim=1) for r in range(0, n, rows)]
        res['seconds'] = time.perf_counter() - t0
        res['rows_per_block'] = rows
    else:
        xa, Aa = x.numpy(), A.numpy()
        if variant == 'faiss-flat':
            t0 = time.perf_counter(); idx = faiss.IndexFlatIP(d); idx.add(Aa); D, I = idx.search(xa, k)
            res['seconds'] = time.perf_counter() - t0
        else:
            exact = np.load(out_ids)
            nlist = nlist or int(math.sqrt(K))
            t0 = time.perf_counter()
            idx = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
            idx.cp.seed, idx.cp.niter = 0, 10
            idx.train(Aa[np.random.default_rng(0).choice(K, min(K, 64 * nlist), replace=False)]); idx.add(Aa)
            res['build_seconds'], res['nlist'], res['curve'] = time.perf_counter() - t0, nlist, []
            for nprobe in nprobes:
                idx.nprobe = nprobe
                t0 = time.perf_counter(); D, I = idx.search(xa, k); s = time.perf_counter() - t0
                rec = float(np.mean([len(np.intersect1d(a, b)) / k for a, b in zip(I, exact)]))
                res['curve'].append(dict(nprobe=nprobe, seconds=s, recall_at_k=rec))
    res['peak_above_inputs_mb'] = peak_mb() - base
    res['inputs_mb'] = (n + K) * d * 4 / 2**20
    return res

def main():
    p = argparse.ArgumentParser()
    p.add_argument('--n', type=int, default=2000); p.add_argument('--K', type=int, default=200_000)
    p.add_argument('--d', type=int, default=512); p.add_argument('--k', type=int, default=800)
    p.add_argument('--budget', type=int, default=256 * 2**20, help='memory_budget in bytes for exact and dense')
    p.add_argument('--threads', type=int, default=1)
    p.add_argument('--data', choices=['random', 'clustered'], default='random'); p.add_argument('--nlist', type=int, default=None)
    p.add_argument('--nprobe', type=int, nargs='+', default=[1, 4, 16, 64, 128, 256])
    p.add_argument('--variants', nargs='+', default=['exact', 'dense', 'faiss-flat', 'faiss-ivf'])
    p.add_argument('--json', default=None); p.add_argument('--one', default=None, help=argparse.SUPPRESS)
    p.add_argument('--ids', default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        print(json.dumps(one(a.one, a.n, a.K, a.d, a.k, a.budget, a.threads, a.nprobe, a.ids, a.data, a.nlist))); return
    ids = f'/tmp/asif_bench_ids_{os.getpid()}.npy'
    rows = []
    for v in a.variants:
        cmd = [sys.executable, __file__, '--one', v, '--n', str(a.n), '--K', str(a.K), '--d', str(a.d), '--k', str(a.k),
               '--budget', str(a.budget), '--threads', str(a.threads), '--ids', ids, '--data', a.data,
               *(['--nlist', str(a.nlist)] if a.nlist else []), '--nprobe', *map(str, a.nprobe)]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
        rows.append(r)
        print(json.dumps(r), flush=True)
    if os.path.exists(ids): os.remove(ids)
    by = {r['variant']: r for r in rows}
    summary = {}
    if 'faiss-flat' in by:
        f = by['faiss-flat']['seconds']
        for v in ('exact', 'dense'):
            if v in by: summary[f'{v}_over_faiss_flat_time'] = by[v]['seconds'] / f
    if 'exact' in by and 'faiss-ivf' in by:
        ok = [c for c in by['faiss-ivf']['curve'] if c['recall_at_k'] >= 0.95]
        summary['ivf_fastest_at_recall_0.95'] = min(ok, key=lambda c: c['seconds']) if ok else None
        if ok: summary['exact_over_ivf_time_at_recall_0.95'] = by['exact']['seconds'] / summary['ivf_fastest_at_recall_0.95']['seconds']
    if 'exact' in by: summary['exact_peak_above_inputs_mb'], summary['budget_mb'] = by['exact']['peak_above_inputs_mb'], a.budget / 2**20
    print(json.dumps(summary, indent=1))
    if a.json:
        with open(a.json, 'w') as fh: json.dump(dict(args=vars(a), load_avg=os.getloadavg(), results=rows, summary=summary), fh, indent=1)

if __name__ == '__main__': main()
