"""CPU cost of the product decoder's aggregations at the paper's k: forward + backward per batch, ours vs the authors'.

    python bench/aggregation_cost.py                       # k = 1280, S = 4, batches of 128, one thread
    python bench/aggregation_cost.py --k 320 --json out.json
"""
import argparse, json, statistics, time
import torch
import torch.nn.functional as F
from relrep_nb.product import AGGREGATIONS, ProductDecoder

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--k', type=int, default=1280); ap.add_argument('--spaces', type=int, default=4)
    ap.add_argument('--batch', type=int, default=128); ap.add_argument('--classes', type=int, default=10)
    ap.add_argument('--width', type=int, default=128); ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--reps', type=int, default=30); ap.add_argument('--json')
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(0)
    r, y = torch.randn(a.batch, a.spaces, a.k, generator=g), torch.randint(0, a.classes, (a.batch,), generator=g)
    rows = []
    for name in AGGREGATIONS:
        dec = ProductDecoder(a.spaces, a.k, a.classes, name, a.width, seed=0)
        times = []
        for i in range(a.reps + 5):                       # 5 warm-up batches
            dec.zero_grad(set_to_none=True)
            t0 = time.perf_counter(); F.cross_entropy(dec(r), y).backward(); t = time.perf_counter() - t0
            if i >= 5: times.append(t)
        rows.append(dict(aggregation=name, params=sum(p.numel() for p in dec.parameters()),
                         ms_median=1e3 * statistics.median(times), ms_min=1e3 * min(times)))
        print(f"{name:24s} {rows[-1]['params']:>10,d} params  {rows[-1]['ms_median']:8.2f} ms (median)  {rows[-1]['ms_min']:8.2f} ms (min)")
    if a.json: json.dump(dict(config=vars(a), rows=rows), open(a.json, 'w'), indent=1)

if __name__ == '__main__': main()
