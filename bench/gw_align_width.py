"""Study (session 27): narrower networks for `align` (`hidden` 64 or 32 instead of 128). A rule fixed before the run.

`align`'s networks (3 layers, `hidden`=128 from SINGLECELL_CONFIG) cost most of a fit on small data: on the held-out
PBMC pair (400 and 287 cells) the matrix products of the networks' steps are about half of its 4.5 CPU-s, and the
plan updates little; issue #28 asks for 10x less CPU than POT's entropic GW (35.9 CPU-s there). Most products scale with
`hidden` (the middle layer with its square), so `hidden`=64 makes them roughly 2-2.5x cheaper. The common space keeps
`dim`=16. Whether the narrower networks still fit the fixed-point targets as well is what the kept GW loss tells.

Groups: the seven tuning groups of the earlier `align` studies, none from PBMC (held out):
    snareseq halves, scgem halves, snareseq, scgem     as bench/gw_coarse_start.py `study_rows` builds them
    snareseq wide, scgem wide, fmri                    as bench/gw_align_inputs.py `rows` builds them (400- and 100-feature sides)

Candidates (on top of ALIGN_CONFIG): hidden=64 and hidden=32. One thread for torch and every BLAS/OpenMP pool,
runs one after another in one process.

Rule (RULE): eligible are the candidates whose mean kept-GW-loss ratio to base (per run, averaged per group, then over the
seven groups) is <= 1.01, whose ratio in every group is <= 1.03, and whose mean CPU ratio to base (per group, then
averaged over the seven groups) is <= 0.8. Adopted in ALIGN_CONFIG: the eligible candidate of lowest mean CPU ratio;
base when none is eligible. FOSCTTM and label transfer are reported, never used. If one is adopted, the held-out checks
follow once: `bench/gw.py align` on the PBMC pair and on SNARE-seq against POT.

    python bench/gw_align_width.py bench/results/gw_settings_align_width.json

Measured (one thread, AMD EPYC): no candidate eligible, base stays. Narrower networks fit the fixed-point targets less
well: hidden=64 kept GW 1.017x base on average (scGEM 1.064x, scGEM wide 1.020x, SNARE-seq halves 1.013x), CPU 0.776x;
hidden=32 1.032x (scGEM 1.051x, SNARE-seq 1.036x), CPU 0.689x. Label transfer on the halves fell with both (SNARE-seq
halves 0.800 -> 0.734 / 0.677, scGEM halves 0.513 -> 0.427 / 0.464), FOSCTTM moved by at most 0.003 except SNARE-seq
wide with hidden=32 (0.389 -> 0.591: one split fell into a swap).
"""
import sys, json, numpy as np, torch
from threadpoolctl import threadpool_limits
import gw_coarse_start, gw_align_inputs
from gw_align_inputs import summarize, choose

CANDS = {'base': {}, 'hidden=64': dict(hidden=64), 'hidden=32': dict(hidden=32)}
RULE = ('eligible: mean kept-GW-loss ratio to base (per run, averaged per group, then over the seven groups) <= 1.01, <= 1.03 in '
        'every group, and mean CPU ratio (per group, averaged over the seven groups) <= 0.8; adopt the eligible one of lowest mean CPU ratio; else base')

def main(cands:dict, rule:str, out:str, choose=choose):
    "Run `cands` (name -> align settings, 'base' first) on the seven tuning groups, one thread; summarise, apply `choose`, write `out`."
    torch.set_num_threads(1)
    import ot  # noqa: F401  (imported once before any timing: every candidate's coarse restart uses POT)
    gw_align_inputs.CANDS = cands
    with threadpool_limits(1):
        rs = gw_coarse_start.study_rows(cands) + gw_align_inputs.rows(gw_align_inputs.WIDE)
        summary = summarize(rs); stats, ok, chosen = choose(summary)
    print(json.dumps(dict(summary=summary, stats=stats, eligible=ok, chosen=chosen), indent=1))
    json.dump(dict(rule=rule, rows=rs, summary=summary, stats=stats, eligible=ok, chosen=chosen), open(out, 'w'), indent=1)

if __name__ == '__main__': main(CANDS, RULE, sys.argv[1])
