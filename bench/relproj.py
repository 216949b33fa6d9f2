"""Benchmark: relative_projection (cosine, float32) against the bare floor (normalise + one matmul).

Each variant runs in its own process (so peak memory is its own): the same seeded x (n, d) and anchors
(k, d) are built, resident memory is read, the variant runs `--repeat` times and reports its best time
and its peak resident memory above the inputs. Prints one table and the throughput ratio.

    python bench/relproj.py                    # n=200k, d=768, k=1024 (the issue's setting)
    python bench/relproj.py --n 20000 --json out.json
"""
import argparse, json, os, resource, subprocess, sys, time

def rss_mb():
    with open('/proc/self/statm') as f: return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20

def peak_mb(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def one(variant, n, d, k, repeat, budget):
    import torch
    from relrep_nb.core import relative_projection
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, d, generator=g)
    a = torch.randn(k, d, generator=g)
    base = rss_mb()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        if variant == 'floor':
            out = torch.nn.functional.normalize(x, dim=1) @ torch.nn.functional.normalize(a, dim=1).T
        else:
            out = relative_projection(x, a, 'cosine', memory_budget=budget)
        times.append(time.perf_counter() - t0)
        del out
    return dict(variant=variant, best_s=min(times), median_s=sorted(times)[len(times) // 2],
                peak_above_inputs_mb=peak_mb() - base, output_mb=n * k * 4 / 2**20, threads=torch.get_num_threads())

def main():
    p = argparse.ArgumentParser()
    p.add_argument('--n', type=int, default=200_000); p.add_argument('--d', type=int, default=768)
    p.add_argument('--k', type=int, default=1024); p.add_argument('--repeat', type=int, default=3)
    p.add_argument('--budget', type=int, default=None, help='memory_budget in bytes (default: the package default)')
    p.add_argument('--one', default=None, help=argparse.SUPPRESS)
    p.add_argument('--json', default=None)
    a = p.parse_args()
    if a.one:
        print(json.dumps(one(a.one, a.n, a.d, a.k, a.repeat, a.budget))); return
    rows = []
    for v in ('floor', 'relative_projection'):
        cmd = [sys.executable, __file__, '--one', v, '--n', str(a.n), '--d', str(a.d), '--k', str(a.k),
               '--repeat', str(a.repeat)] + (['--budget', str(a.budget)] if a.budget else [])
        rows.append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1]))
    from relrep_nb.core import DEFAULT_MEMORY_BUDGET
    print(f"cosine relative projection, float32, n={a.n}, d={a.d}, k={a.k}, best of {a.repeat}, "
          f"{rows[0]['threads']} threads, budget {(a.budget or DEFAULT_MEMORY_BUDGET) / 2**20:.0f} MiB")
    print(f"{'variant':22s} {'best s':>8s} {'rows/s':>12s} {'peak MiB above inputs':>22s} {'(output MiB)':>13s}")
    for r in rows:
        print(f"{r['variant']:22s} {r['best_s']:8.3f} {a.n / r['best_s']:12.0f} {r['peak_above_inputs_mb']:22.0f} {r['output_mb']:13.0f}")
    ratio = rows[0]['best_s'] / rows[1]['best_s']
    print(f"throughput ratio relative_projection / floor = {ratio:.2f} (goal >= 0.95; bench/run.py runs every benchmark)")
    if a.json:
        with open(a.json, 'w') as f: json.dump(dict(rows=rows, ratio=ratio, n=a.n, d=a.d, k=a.k), f, indent=2)

if __name__ == '__main__': main()
