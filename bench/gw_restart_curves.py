"""When does the restart that wins at the end of align's fit take the lead? The GW loss by which `fit` compares restarts
(`LearnedGW._restart_gw`), for each restart every 15 steps, with align's settings on SNARE-seq (pairing hidden).

    python bench/gw_restart_curves.py      # about 2 CPU-minutes -> bench/results/gw_align_prune/snareseq_restart_curves.json

The recorded curves were measured with align's earlier plan-update interval (every 10 steps, `PLAN_EVERY` below);
`align` now updates every 20 (bench/gw_align_settings.py).
"""
import json
import numpy as np, torch
from relrep_nb.gw import LearnedGW, ALIGN_CONFIG, align_k
from relrep_nb.experiments.latent_gw import _load_pair

PLAN_EVERY = 10         # the interval the recorded curves (and the chapter's pruning figures) were measured with

def main():
    torch.set_num_threads(1)
    x, y, _ = _load_pair('snareseq', None, 0)
    out = {}
    for s in (0, 1, 2):
        y_ = y[np.random.default_rng(10_000 + s).permutation(len(y))]       # the permutation bench/gw.py align uses
        m = LearnedGW(**{**ALIGN_CONFIG, 'plan_every': PLAN_EVERY, 'k': align_k(len(x), len(y_)), 'seed': s, 'progress': False})
        m._check_params(); p = m._prepare(x, y_)                            # what fit shares between restarts
        score = lambda f, g: m._restart_gw(f, g, p['xs'][p['sx']], p['ys'][p['sy']], p['Sx'], p['Sy'])
        C = np.array([[score(f, g) for i, (f, g, _) in enumerate(m._fit_run(p['xs'], p['ys'], p['mx'], p['my'], p['Gx'], p['Gy'], s + r))
                       if (i + 1) % 15 == 0] for r in range(m.n_restarts)])
        lead = C.argmin(0)
        out[s] = dict(curves=C.tolist(), winner=int(C[:, -1].argmin()), leader_by_step={15 * (j + 1): int(l) for j, l in enumerate(lead)})
        print(s, 'winner', out[s]['winner'], 'leaders', ''.join(map(str, lead)), flush=True)
    with open('bench/results/gw_align_prune/snareseq_restart_curves.json', 'w') as f: json.dump(out, f)

if __name__ == '__main__': main()
