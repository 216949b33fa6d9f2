"""Study: `align`'s training steps with bfloat16 products in the networks' first layers only
(`LearnedGW(precision="bfloat16", precision_layers="first")`). A rule fixed before the run.

The earlier study (`bench/gw_align_precision.py`) rounded every layer's products to bfloat16. It kept the GW loss
(0.9999x) but cost 1.13x the CPU time on the seven tuning groups: rounding the hidden activations and gradients of
every layer at every step costs more than the faster products save on narrow inputs. The first layers are different:
they read the samples, whose rounding happens once per minibatch, and on wide inputs they hold most of the products
(256 x 382 by 382 x 128 in float32 takes ~255 us here, in bfloat16 ~130). With `precision_layers="first"` only those
products (forward and weight gradient) are in bfloat16; the hidden and output layers, the weights, Adam's moments, the
plans, the targets and every embedding stay float32.

Groups: the seven tuning groups of the earlier `align` studies, none from PBMC (held out):
    snareseq halves, scgem halves, snareseq, scgem     as bench/gw_coarse_start.py `study_rows` builds them
    snareseq wide, scgem wide, fmri                    as bench/gw_align_inputs.py `rows` builds them (400- and 100-feature sides)

Candidates (on top of ALIGN_CONFIG): precision="bfloat16", precision_layers="first". One thread for torch and every
BLAS/OpenMP pool, runs one after another in one process (each seed runs base, then the candidate).

Rule (RULE), written after the all-layer study and before this run: the change rounds products and changes no setting
of the model, and it can only save time where the first layers are large, so, as the input_pcs study did, the saving is
judged on the wide groups, and the narrow ones must not get slower. Eligible if the mean kept-GW-loss ratio to base (per
run, averaged per group, then over the seven groups) is <= 1.01, <= 1.03 in every group, the mean CPU ratio over the
three wide groups (snareseq wide, scgem wide, fmri) is <= 0.95, and the CPU ratio of every group is <= 1.05. Adopted:
ALIGN_CONFIG precision="auto", precision_layers="first" (bfloat16 where the device multiplies it natively, float32
elsewhere). FOSCTTM and label transfer are reported, never used. If adopted, the held-out checks follow once:
`bench/gw.py align` on the PBMC pair and on SNARE-seq against POT.

    cd bench && python gw_align_precision_first.py results/gw_settings_align_precision_first.json

Measured (one thread, AMD EPYC with AVX512-BF16, ~9 min): not eligible, base stays (`precision_layers` remains an
option, "all" by default). The kept GW loss is unchanged (0.99998x base on average, worst scGEM wide 1.0095x), but the
CPU time fell only on the 400-feature groups, and too little: SNARE-seq wide 0.976x (its 1,047 cells per side make the
plan updates most of a fit), scGEM wide 0.905x, fMRI (100 features) 1.124x, so 1.002x on average over the wide groups
against <= 0.95. The narrow groups got slower, against <= 1.05 in every group: SNARE-seq halves 1.063x, scGEM halves
1.202x, SNARE-seq 1.088x, scGEM 1.105x. Timed alone, a first layer's two products (forward and weight gradient, 256 or
177 rows, 128 units) cost 0.55-0.72x float32's in bfloat16 from 256 features on, 0.86-1.0x at 100-128 features and
1.1-1.5x below 64, and inside a fit the casts cost more than alone. On the held-out PBMC pair (382 and 383 genes, not
part of the rule) one fit took 3.39 CPU-s against 3.69-3.98 in float32 (0.87x), its GW loss 0.07470 against 0.07456.
A variant that rounds only sides of >= 256 features would leave the narrow groups as they are, but on the wide groups
it is this candidate (SNARE-seq wide 0.976x, scGEM wide 0.905x, fMRI unchanged: ~0.96x on average): it would not meet
the rule either, so it was not run.
"""
import sys, numpy as np
from gw_align_width import main as run_study

CANDS = {'base': {}, 'precision=bfloat16, first layers': dict(precision='bfloat16', precision_layers='first')}
WIDE = ('snareseq wide', 'scgem wide', 'fmri')
RULE = ('eligible: mean kept-GW-loss ratio to base (per run, averaged per group, then over the seven groups) <= 1.01, <= 1.03 in '
        'every group, mean CPU ratio over the three wide groups <= 0.95 and CPU ratio <= 1.05 in every group; adopted as '
        'ALIGN_CONFIG precision="auto", precision_layers="first"; else base')

def choose(summary:dict) -> tuple:
    "(per candidate: mean and worst GW ratio over every group, mean CPU ratio over the wide groups, worst CPU ratio; the eligible; the chosen)."
    gs = list(summary); cands = [c for c in summary[gs[0]] if c != 'base']
    stats = {c: dict(gw=float(np.mean([summary[g][c]['gw_ratio'] for g in gs])), worst=max(summary[g][c]['gw_ratio'] for g in gs),
                     cpu_wide=float(np.mean([summary[g][c]['cpu_ratio'] for g in WIDE])),
                     cpu_worst=max(summary[g][c]['cpu_ratio'] for g in gs)) for c in cands}
    ok = [c for c, v in stats.items() if v['gw'] <= 1.01 and v['worst'] <= 1.03 and v['cpu_wide'] <= 0.95 and v['cpu_worst'] <= 1.05]
    return stats, ok, (min(ok, key=lambda c: stats[c]['cpu_wide']) if ok else 'base')

if __name__ == '__main__': run_study(CANDS, RULE, sys.argv[1], choose)
