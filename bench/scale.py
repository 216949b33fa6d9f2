"""Benchmark: rows on disk -> relative projection (cosine, k anchors) -> zarr, with relrep_nb.scale.

n rows of width d (float32, seeded Gaussian) are written to a `.npy` file; a cosine RelativeProjector is fitted on
k of them and saved. Then each variant runs in its own process and writes the (n, k) projection to an uncompressed
zarr store with `project_to_zarr`, chunk by chunk:

- `1 process`: dask's synchronous scheduler, one thread, in the benchmark's own process;
- `W workers`: a `LocalCluster` of W worker processes with one thread each (started and warmed before the clock).

Both run at n and at n/8 (the first n/8 rows): rows/s counts the projection only; the peak resident memory of each
process (VmHWM) is reported next to its resident memory before the run, to show that it is bounded by the
chunk, not by n. The outputs are checked (identical between variants; first and last chunk identical to the
in-memory transform of the same rows). The data are deleted afterwards unless --keep.

    python bench/scale.py                          # n = 2M, d = 256, k = 512, chunks of 65,536 rows
    python bench/scale.py --rows 10000000          # the 10 GB in / 20 GB out setting (needs ~32 GB of disk)
    python bench/scale.py --rows 100000 --json /tmp/s.json
"""
import argparse, json, os, resource, shutil, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def rss_mb():
    with open('/proc/self/statm') as f: return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20

def peak_mb():
    "This process's peak resident memory (VmHWM: reset by exec, unlike ru_maxrss, which a child inherits at fork)."
    with open('/proc/self/status') as f:
        return next(int(l.split()[1]) for l in f if l.startswith('VmHWM:')) / 1024

def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime

def make_rows(path:Path, n:int, d:int, chunk:int, seed:int=0) -> float:
    "Write n seeded Gaussian float32 rows of width d to a .npy file, chunk by chunk; returns seconds."
    import numpy as np
    t0 = time.perf_counter()
    mm = np.lib.format.open_memmap(path, mode='w+', dtype=np.float32, shape=(n, d))
    rng = np.random.default_rng(seed)
    for i in range(0, n, chunk):
        mm[i:i + chunk] = rng.standard_normal((min(chunk, n - i), d), dtype=np.float32)
        mm.flush()
    del mm
    return time.perf_counter() - t0

def variant(kind:str, workers:int, npy:str, proj:str, out:str, rows:int, chunk:int) -> dict:
    "One run in this process: project the first `rows` rows of `npy` to `out`; timings and peak memory."
    from relrep_nb.core import RelativeProjector
    from relrep_nb.scale import open_embeddings, project_to_zarr
    p = RelativeProjector.load(proj)
    x = open_embeddings(npy, chunk_rows=chunk)[:rows]
    res = dict(variant='1 process' if kind == 'local' else f'{workers} workers', rows=rows, processes=1 if kind == 'local' else workers)
    if kind == 'local':
        base, c0 = rss_mb(), cpu_s()
        info = project_to_zarr(p, x, out, chunk_rows=chunk, scheduler='synchronous', threads=1, overwrite=True, progress=False)
        res.update(rss_before_mb=[round(base)], peak_rss_mb=[round(peak_mb())], cpu_s=[round(cpu_s() - c0, 1)])
    else:
        from dask.distributed import Client, LocalCluster
        t0 = time.perf_counter()
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
             Client(cluster) as client:
            client.run(lambda: __import__('relrep_nb.scale') and None)     # workers import torch and relrep_nb now
            res['startup_s'] = round(time.perf_counter() - t0, 2)
            base, c0, cc0 = client.run(rss_mb), client.run(cpu_s), cpu_s()
            info = project_to_zarr(p, x, out, chunk_rows=chunk, client=client, threads=1, overwrite=True, progress=False)
            peak, c1 = client.run(peak_mb), client.run(cpu_s)
        res.update(rss_before_mb=[round(base[w]) for w in sorted(base)], peak_rss_mb=[round(peak[w]) for w in sorted(peak)],
                   cpu_s=[round(c1[w] - c0[w], 1) for w in sorted(c1)], client_peak_rss_mb=round(peak_mb()),
                   client_cpu_s=round(cpu_s() - cc0, 1))
    res.update(seconds=round(info['seconds'], 2), rows_per_s=round(info['rows_per_s']),
               rows_per_s_per_process=round(info['rows_per_s'] / res['processes']),
               rows_per_cpu_s=round(rows / sum(res['cpu_s'])))
    return res

def check(npy:str, proj:str, outs:list, chunk:int) -> dict:
    "Outputs identical to each other, and their first and last chunk identical to the in-memory transform."
    import numpy as np, zarr
    from relrep_nb.core import RelativeProjector, torch_threads
    from relrep_nb.scale import open_store
    p, x = RelativeProjector.load(proj), np.load(npy, mmap_mode='r')
    zs = [open_store(o) for o in outs]
    n = zs[0].shape[0]; last = (n - 1) // chunk * chunk
    same = all(np.array_equal(zs[0][i:i + chunk], z[i:i + chunk]) for z in zs[1:] for i in range(0, n, chunk))
    with torch_threads(1):
        ref = [p.transform(np.array(x[s:min(s + chunk, n)])) for s in (0, last)]
    exact = all(np.array_equal(zs[0][s:s + len(r)], r) for s, r in zip((0, last), ref))
    return dict(variants_identical=bool(same), in_memory_identical=bool(exact))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rows', type=int, default=2_000_000); ap.add_argument('--dim', type=int, default=256)
    ap.add_argument('--k', type=int, default=512); ap.add_argument('--chunk-rows', type=int, default=65_536)
    ap.add_argument('--workers', type=int, default=2); ap.add_argument('--small', type=int, default=8, help='also run at n/SMALL')
    ap.add_argument('--dir', default=str(ROOT/'.cache'/'bench_scale')); ap.add_argument('--json', default=None)
    ap.add_argument('--keep', action='store_true'); ap.add_argument('--_variant', nargs=7, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._variant:
        kind, workers, npy, proj, out, rows, chunk = a._variant
        print(json.dumps(variant(kind, int(workers), npy, proj, out, int(rows), int(chunk)))); return
    d = Path(a.dir); d.mkdir(parents=True, exist_ok=True)
    npy, proj = d/'rows.npy', d/'projector.pt'
    need = a.rows * (a.dim + a.k) * 4 * 1.05
    if shutil.disk_usage(d).free < need: sys.exit(f'not enough disk under {d}: {need / 1e9:.1f} GB needed')
    res = dict(rows=a.rows, dim=a.dim, k=a.k, chunk_rows=a.chunk_rows, workers=a.workers, cpus=os.cpu_count(),
               input_gb=round(a.rows * a.dim * 4 / 1e9, 2), output_gb=round(a.rows * a.k * 4 / 1e9, 2),
               chunk_in_mb=round(a.chunk_rows * a.dim * 4 / 2**20), chunk_out_mb=round(a.chunk_rows * a.k * 4 / 2**20))
    try:
        res['write_rows_s'] = round(make_rows(npy, a.rows, a.dim, a.chunk_rows), 2)
        import numpy as np
        from relrep_nb.core import RelativeProjector
        idx = np.sort(np.random.default_rng(1).choice(a.rows, a.k, replace=False))
        RelativeProjector('cosine').fit(np.load(npy, mmap_mode='r')[idx]).save(proj)
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''),
                   OMP_NUM_THREADS='1', MKL_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
        res['variants'], outs = [], []
        for rows in (a.rows, a.rows // a.small):
            for kind in ('local', 'cluster'):
                out = d/f'out_{kind}_{rows}.zarr'
                cmd = [sys.executable, __file__, '--_variant', kind, str(a.workers), str(npy), str(proj), str(out), str(rows), str(a.chunk_rows)]
                r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
                if r.returncode: sys.exit(f'{kind} at {rows} rows failed:\n{r.stderr[-3000:]}')
                v = json.loads(r.stdout.strip().splitlines()[-1]); res['variants'].append(v); print(json.dumps(v), flush=True)
                if rows == a.rows: outs.append(str(out))
                else: shutil.rmtree(out)
        res.update(check(str(npy), str(proj), outs, a.chunk_rows))
        for o in outs: shutil.rmtree(o)
        full = [v for v in res['variants'] if v['rows'] == a.rows]
        res['speedup'] = round(full[1]['rows_per_s'] / full[0]['rows_per_s'], 2)
        per = min(v['rows_per_cpu_s'] for v in full)    # the slower of the two: a worker's rows per CPU-second
        res['rows_per_cpu_s'] = per
        res['cpu_hours_for_1e9_rows'] = round(1e9 / per / 3600, 1)
        res['output_tb_for_1e9_rows'] = round(1e9 * a.k * 4 / 1e12, 2)
    finally:
        if not a.keep: shutil.rmtree(d, ignore_errors=True)
    print(json.dumps({k: v for k, v in res.items() if k != 'variants'}, indent=1))
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True); Path(a.json).write_text(json.dumps(res, indent=1) + '\n')

if __name__ == '__main__': main()
