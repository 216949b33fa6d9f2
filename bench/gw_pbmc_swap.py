"""Is `align`'s cell-type swap on the held-out PBMC pair a failure of the GW objective or of its optimisation?

For each split of `pbmc_unpaired`, the GW loss (align's own reference: L2-normalised rows, SCOT's hop-count graph with
`align_k`, distance ranks) of: align's plan; a plan that respects the cell types (exact OT of the cost 1[types differ],
random within types: an oracle, it reads the labels); and POT's entropic GW (ε = 5e-3, 200 iterations) started from
each of the two. Label transfer (5-NN, x carried onto y's rows by the plan) beside each.

    python bench/gw_pbmc_swap.py bench/results/gw_pbmc_swap.json        # about 1 CPU-minute

Measured: on the two splits where align swaps types (0 and 2), GW descent started from the types reaches a lower GW loss
(0.0694 and 0.0657) than started from align's plan (0.0718 and 0.0735), which keeps the swap (label transfer 0.056 and
0.070): the objective prefers the right types and the swap is a local optimum that the restarts do not leave.
"""
import json, sys, warnings
import numpy as np, torch
import anndata, ot
torch.set_num_threads(1)
from relrep_nb.gw import align, align_k, graph_distances, rank_distances, gw_loss
from relrep_nb.experiments.latent_gw import pbmc_unpaired, knn_labels
warnings.filterwarnings('ignore')
def l2(v): v = v.astype(np.float64); return v / np.linalg.norm(v, axis=1, keepdims=True)
rows = []
for s in (0, 1, 2):
    x, y, lx, ly = pbmc_unpaired(s)
    k = align_k(len(x), len(y))
    xn, yn = l2(x), l2(y)
    Dx = rank_distances(torch.as_tensor(graph_distances(xn, k, normalize=False)))
    Dy = rank_distances(torch.as_tensor(graph_distances(yn, k, normalize=False)))
    G = lambda P: float(gw_loss(torch.as_tensor(P, dtype=torch.float64), Dx, Dy))
    lt = lambda P: float((knn_labels((P @ yn) / P.sum(1, keepdims=True), yn, lx) == ly).mean())
    A, B = anndata.AnnData(X=x), anndata.AnnData(X=y)
    cp = align(A, B, seed=s, progress=False)
    P_ours = np.asarray(cp.dense(), dtype=np.float64)
    p, q = ot.unif(len(x)), ot.unif(len(y))
    # a plan that respects the cell types: the OT plan of the cost 1[type differs] (exact, as many same-type pairs as the proportions allow)
    P_blk = ot.emd(p, q, (lx[:, None] != ly[None, :]).astype(np.float64))
    Dxn, Dyn = Dx.numpy(), Dy.numpy()
    out = {}
    for name, G0 in (('from ours', P_ours), ('from cell-type plan', P_blk)):
        T = ot.gromov.entropic_gromov_wasserstein(Dxn, Dyn, p, q, 'square_loss', epsilon=5e-3, max_iter=200, tol=1e-9, G0=G0)
        out[name] = T
    same = float((P_blk * (lx[:, None] == ly[None, :])).sum())
    print(f"split {s}: n={len(x)}/{len(y)}, k={k}, same-type mass of the cell-type plan {same:.3f}")
    for name, P in (('align (ours)', P_ours), ('cell-type plan (oracle, random within types)', P_blk),
                    ('POT eGW from ours', out['from ours']), ('POT eGW from the cell-type plan', out['from cell-type plan'])):
        rows.append(dict(split=s, plan=name, gw=G(P), label_transfer=lt(P)))
        print(f"   {name:48s} GW {rows[-1]['gw']:.5f}  label transfer {rows[-1]['label_transfer']:.3f}", flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], 'w') as f: json.dump(dict(rows=rows, eps=5e-3, max_iter=200), f, indent=1)
