"""Study: `align`'s training steps with bfloat16 matrix products (`LearnedGW(precision="bfloat16")`). A rule fixed before the run.

The networks' matrix products are about half of an `align` fit on small data (`bench/gw_align_profile.py`: on the held-out
PBMC pair, 930 Adam steps of two 3-layer networks on ~380 genes). This core (AMD EPYC, AVX512-BF16) multiplies bfloat16
matrices at ~190 GFLOP/s against ~95 for float32 (the networks' largest product, timed alone). With
`precision="bfloat16"` the fixed-point steps round the inputs, weights and output gradients to bfloat16 for their
products (accumulated in float32, returned as float32); the weights, Adam's moments, the plans, the GW targets and every
embedding stay float32. bfloat16 keeps 8 bits of mantissa, so each product carries ~0.4 % relative noise: whether the
networks still fit the fixed-point targets as well is what the kept GW loss tells.

Groups: the seven tuning groups of the earlier `align` studies, none from PBMC (held out):
    snareseq halves, scgem halves, snareseq, scgem     as bench/gw_coarse_start.py `study_rows` builds them
    snareseq wide, scgem wide, fmri                    as bench/gw_align_inputs.py `rows` builds them (400- and 100-feature sides)

Candidates (on top of ALIGN_CONFIG): precision="bfloat16". One thread for torch and every BLAS/OpenMP pool, runs one
after another in one process.

Rule (RULE): the candidate is eligible if its mean kept-GW-loss ratio to base (per run, averaged per group, then over
the seven groups) is <= 1.01, its ratio in every group is <= 1.03, and its mean CPU ratio to base (per group, then
averaged over the seven groups) is <= 0.9 (bfloat16 changes no setting of the model, only the rounding of its products,
so a smaller saving than the 0.8 asked of model changes is enough). Adopted: ALIGN_CONFIG['precision'] = 'auto'
(bfloat16 where the device multiplies it natively, float32 elsewhere, so that no machine gets slower); base when not
eligible. FOSCTTM and label transfer are reported, never used. If adopted, the held-out checks follow once: `bench/gw.py
align` on the PBMC pair and on SNARE-seq against POT.

    cd bench && python gw_align_precision.py results/gw_settings_align_precision.json

Measured (one thread, AMD EPYC with AVX512-BF16, ~6 min): not eligible, base stays (`precision` remains an option,
"float32" by default). The kept GW loss is unchanged (0.9999x base on average, worst group scGEM halves 1.0084x), but
the CPU time rose to 1.133x on average: 0.93x on SNARE-seq wide and 0.98x on SNARE-seq (where the plan updates dominate),
1.00x on scGEM wide, and 1.08-1.48x on the narrow sides (scGEM's 34 and 27 features, SNARE-seq halves' 10 and 19,
fMRI's 100), whose first-layer products are small: rounding the inputs, weights and gradients to bfloat16 costs more
than the faster products save. FOSCTTM and label transfer moved by at most 0.015. On the held-out PBMC pair (382 and 383
genes, not part of the rule) bfloat16 took 3.9-4.0 CPU-s per fit against 4.3-4.5 for float32 in alternating runs.
"""
import sys, numpy as np
from gw_align_width import main as run_study

CANDS = {'base': {}, 'precision=bfloat16': dict(precision='bfloat16')}
RULE = ('eligible: mean kept-GW-loss ratio to base (per run, averaged per group, then over the seven groups) <= 1.01, <= 1.03 in '
        'every group, and mean CPU ratio (per group, averaged over the seven groups) <= 0.9; adopted as ALIGN_CONFIG precision="auto"; else base')

def choose(summary:dict) -> tuple:
    "(per candidate: mean and worst GW ratio over every group, mean CPU ratio; the eligible; the chosen)."
    gs = list(summary); cands = [c for c in summary[gs[0]] if c != 'base']
    stats = {c: dict(gw=float(np.mean([summary[g][c]['gw_ratio'] for g in gs])), worst=max(summary[g][c]['gw_ratio'] for g in gs),
                     cpu=float(np.mean([summary[g][c]['cpu_ratio'] for g in gs]))) for c in cands}
    ok = [c for c, v in stats.items() if v['gw'] <= 1.01 and v['worst'] <= 1.03 and v['cpu'] <= 0.9]
    return stats, ok, (min(ok, key=lambda c: stats[c]['cpu']) if ok else 'base')

if __name__ == '__main__': run_study(CANDS, RULE, sys.argv[1], choose)
