"When does the restart that wins at the end of align's fit lead? GW loss (_restart_gw) of each restart every 15 steps, SNARE-seq."
# python bench/gw_restart_curves.py  (about 2 CPU-minutes): when does the final winner among the restarts take the lead?
import numpy as np, torch, json
torch.set_num_threads(1)
from relrep_nb.gw import LearnedGW, ALIGN_CONFIG, align_k, _check_side, _batch_dists, _safe_scale
from relrep_nb.experiments.latent_gw import _load_pair
x, y, _ = _load_pair('snareseq', None, 0)
out = {}
for s in (0, 1, 2):
    y_ = y[np.random.default_rng(10_000 + s).permutation(len(y))]
    m = LearnedGW(**{**ALIGN_CONFIG, 'k': align_k(len(x), len(y_)), 'seed': s, 'progress': False})
    tx, _ = _check_side(x, 'x'); ty, _ = _check_side(y_, 'y'); tx, ty = tx.float(), ty.float()
    m._fit_stats(tx, ty); xs, ys, mx, my, Gx, Gy = m._spaces(tx, ty)
    idx = torch.arange(len(xs)); idy = torch.arange(len(ys))
    Sx, Sy = _batch_dists(mx, Gx, idx, m.rank), _batch_dists(my, Gy, idy, m.rank)
    curves = []
    for r in range(3):
        c = []
        for i, (f, g, h) in enumerate(m._fit_run(xs, ys, mx, my, Gx, Gy, s + r)):
            if (i + 1) % 15 == 0: c.append(m._restart_gw(f, g, xs, ys, Sx, Sy))
        curves.append(c)
    C = np.array(curves); win = C[:, -1].argmin()
    lead = C.argmin(0)
    out[s] = dict(curves=C.tolist(), winner=int(win), leader_by_step={int(15 * (j + 1)): int(l) for j, l in enumerate(lead)})
    print(s, 'winner', win, 'leaders', ''.join(map(str, lead)), flush=True)
json.dump(out, open('bench/results/gw_align_prune/snareseq_restart_curves.json', 'w'))
