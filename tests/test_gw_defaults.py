"""The documented entry points with their defaults, on a held-out unpaired single-cell pair that no default was tuned on
(scanpy's bundled PBMC subset split into disjoint cells and disjoint genes; `relrep_nb.experiments.latent_gw.pbmc_unpaired`)."""
import os
import numpy as np
import pytest
import torch

anndata = pytest.importorskip('anndata'); pytest.importorskip('scanpy')
from relrep_nb.gw import LearnedGW, align

pytestmark = pytest.mark.usefixtures('one_thread')   # conftest.py: small fits, one torch thread
from relrep_nb.experiments.latent_gw import knn_labels, label_transfer, pbmc_unpaired

CHANCE = 0.2   # five cell types; the largest holds 0.39 of side y's cells

@pytest.fixture(scope='module')
def pair():
    return pbmc_unpaired(seed=0)

def test_learnedgw_defaults_transfer_labels(pair):
    x, y, lx, ly = pair
    torch.manual_seed(0)
    acc = label_transfer(LearnedGW().fit(x, y), x, y, lx, ly)
    assert acc['plan'] >= 3 * CHANCE and acc['knn'] >= 3 * CHANCE, acc     # well above chance: no cluster swap

def test_align_common_coordinates_match_pot_on_scgem():
    """On scGEM with the pairing hidden, FOSCTTM in the coordinates `align` writes is within 0.02 of POT's entropic GW
    under SCOT's protocol (k and eps as SCOT published them for scGEM), read out the same way."""
    from relrep_nb import data
    from relrep_nb.experiments.latent_gw import scot_gw
    from relrep_nb.metrics import foscttm
    x, y, _ = data.load_scgem(as_anndata=False)
    x, y = x.astype(np.float32), y.astype(np.float32)
    perm = np.random.default_rng(0).permutation(len(y))
    A, B = anndata.AnnData(X=x), anndata.AnnData(X=y[perm])
    align(A, B, progress=False)
    ours = foscttm(A.obsm['X_gw'], B.obsm['X_gw'][np.argsort(perm)])
    r = scot_gw(x, y, k=35, epsilons=(5e-3,))
    pot = foscttm(r['x_aligned'], r['y'])
    assert ours <= pot + 0.02, (ours, pot)

@pytest.mark.skipif('slow' not in os.environ.get('RELREP_NB_TEST_FLAGS', '').split(), reason='slow: RELREP_NB_TEST_FLAGS=slow runs it')
def test_align_defaults_transfer_labels_like_pot(pair):
    """Held-out PBMC pair, 3 splits: `align`'s mean 5-NN label transfer in X_gw is within 0.05 of POT's under SCOT's protocol.
    (With three random restarts only, both swapped cell types on 2 of 3 splits: 0.31 vs 0.39; the coarse-started restart,
    chosen on other data, measured 0.69.)"""
    from relrep_nb.gw import align_k
    from relrep_nb.experiments.latent_gw import scot_gw
    ours, pot = [], []
    for s in (0, 1, 2):
        x, y, lx, ly = pbmc_unpaired(seed=s)
        A, B = anndata.AnnData(X=x), anndata.AnnData(X=y)
        align(A, B, seed=s, progress=False)
        ours.append((knn_labels(A.obsm['X_gw'], B.obsm['X_gw'], lx) == ly).mean())
        r = scot_gw(x, y, k=align_k(len(x), len(y)), epsilons=(1e-3, 5e-3, 1e-2), select='gw')
        pot.append((knn_labels(r['x_aligned'], r['y'], lx) == ly).mean())
    assert np.mean(ours) >= np.mean(pot) - 0.05, (ours, pot)

def test_align_coarse_start_leaves_a_cell_line_swap():
    """Unpaired halves of SNARE-seq (split 1 of the coarse-start study, bench/README.md: disjoint cells, RNA of one half, ATAC of the
    other): three random restarts swap cell lines there (5-NN label transfer 0.03), the coarse-started restart of the
    defaults does not (measured 0.85), and it is kept by the training GW loss alone."""
    from relrep_nb.experiments.latent_gw import _load_pair
    x, y, ct = _load_pair('snareseq', None, 0)
    p = np.random.default_rng(501).permutation(len(x)); h = len(x) // 2
    A, B = anndata.AnnData(X=x[p[:h]]), anndata.AnnData(X=y[p[h:]])
    plan = align(A, B, seed=1, progress=False)
    kept = min((r for r in plan.model.restarts_ if not r['pruned']), key=lambda r: r['gw'])
    acc = (knn_labels(A.obsm['X_gw'], B.obsm['X_gw'], ct[p[:h]]) == ct[p[h:]]).mean()
    assert kept['start'] == 'coarse' and acc >= 0.6, (kept, acc)
