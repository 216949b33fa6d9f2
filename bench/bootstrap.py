"""Benchmark: one bootstrap (mini-batch OT, no n x m plan) at 20k x 20k rows vs POT's dense log-domain Sinkhorn
on the full 20k x 20k plan of the same relative rows. Time and peak memory (max RSS of a fresh process each), ratio.

Usage (repository root): python bench/bootstrap.py [--n 20000] [--threads 1] [--pot-iter 100] [--steps 300] [--json PATH]
Writes bench/results/bootstrap_bench.json. Data: the MiniLM-L6 / MPNet input token tables (first n shared words).
"""
import argparse, json, resource, subprocess, sys, time
from pathlib import Path

CHILD = r'''
import json, resource, sys, time
import numpy as np, torch
from relrep_nb.core import torch_threads, relative_projection
from relrep_nb.experiments.bootstrap import token_tables
kind, n, threads, pot_iter, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
_, x, y = token_tables(n=n)
x, y = x - x.mean(0), y - y.mean(0)
ia = np.random.default_rng(0).choice(n, 300, replace=False)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with torch_threads(threads):
    t = time.perf_counter(); c0 = time.process_time()
    if kind == 'bootstrap':
        from relrep_nb.bootstrap import bootstrap_anchors
        r = bootstrap_anchors(x, y, ia, np.stack([ia[:15]] * 2, 1), n_steps=steps)
        extra = dict(steps=len(r.loss), batch_size=1000)
    else:
        import ot
        rx = torch.from_numpy(relative_projection(x, x[ia]))
        ry = torch.from_numpy(relative_projection(y, y[ia]))
        C = torch.cdist(rx, ry).pow(2) / rx.shape[1]
        a = torch.full((n,), 1 / n); b = torch.full((n,), 1 / n)
        P = ot.bregman.sinkhorn_log(a, b, C, 0.01 * float(C.mean()), numItermax=pot_iter, stopThr=0)
        extra = dict(iterations=pot_iter, plan_shape=list(P.shape))
    sec = time.perf_counter() - t; cpu = time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps(dict(kind=kind, n=n, seconds=sec, cpu_seconds=cpu, peak_rss_mib=peak / 1024, data_rss_mib=base / 1024, **extra)))
'''

def main():
    p = argparse.ArgumentParser()
    p.add_argument('--n', type=int, default=20000); p.add_argument('--threads', type=int, default=1)
    p.add_argument('--pot-iter', type=int, default=100)
    p.add_argument('--steps', type=int, default=300, help="bootstrap's optimiser steps (300: the method's default)")
    p.add_argument('--json', default=None, help='where to write the results (default bench/results/bootstrap_bench.json)')
    a = p.parse_args()
    out = {}
    for kind in ('bootstrap', 'pot_dense_sinkhorn'):
        r = subprocess.run([sys.executable, '-c', CHILD, kind, str(a.n), str(a.threads), str(a.pot_iter), str(a.steps)],
                           capture_output=True, text=True)
        if r.returncode: out[kind] = dict(error=r.stderr[-2000:]); print(kind, 'failed', r.stderr[-500:]); continue
        out[kind] = json.loads(r.stdout.strip().splitlines()[-1]); print(out[kind])
    if all('seconds' in v for v in out.values()):
        b, d = out['bootstrap'], out['pot_dense_sinkhorn']
        out['ratio'] = dict(time_pot_over_bootstrap=d['seconds'] / b['seconds'],
                            cpu_pot_over_bootstrap=d['cpu_seconds'] / b['cpu_seconds'],
                            peak_rss_pot_over_bootstrap=d['peak_rss_mib'] / b['peak_rss_mib'])
        print(out['ratio'])
    out_path = Path(a.json) if a.json else Path(__file__).parent / 'results' / 'bootstrap_bench.json'
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(dict(args=vars(a), **out), indent=1) + '\n')

if __name__ == '__main__': main()
