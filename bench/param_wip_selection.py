"""Hyper-parameter selection of the PARAM-WIP chapter on each modality's encoders (training rows only).

`python bench/param_wip_selection.py --json bench/results/param_wip_selection.json` runs
`relrep_nb.experiments.param_wip.select_hparams` on the three fortune-text encoders and on the four real vision
encoders; the chapter uses each modality's best grid point on the *other* modality (`chosen_hparams`).
"""
import argparse, json, time
from pathlib import Path

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--json', default='bench/results/param_wip_selection.json', help='where to write the selection tables')
    ap.add_argument('--threads', type=int, default=1, help='torch threads')
    a = ap.parse_args(argv)
    from relrep_nb.core import torch_threads
    from relrep_nb.experiments.param_wip import (text_features, vision_features, select_hparams, chosen_hparams, APART,
                                                 SELECTION_GRID)
    out, t0 = {}, time.time()
    with torch_threads(a.threads):
        ttr, _, tytr, _, _ = text_features()
        vtr, _, vytr, _ = vision_features(variants=(0, 1, 2))
        sel = {'text': select_hparams(ttr, tytr, n_steps=150),
               'vision': select_hparams({e: f for e, f in vtr.items() if e not in APART}, vytr, n_steps=150)}
    out = {'grid': SELECTION_GRID, 'seconds': round(time.time() - t0, 1), 'chosen': chosen_hparams(sel),
           'tables': {k: v.to_dict(orient='records') for k, v in sel.items()}}
    Path(a.json).write_text(json.dumps(out, indent=2))
    print(json.dumps(out['chosen']))

if __name__ == '__main__': main()
