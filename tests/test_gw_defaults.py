"""The documented entry points with their defaults, on a held-out unpaired single-cell pair that no default was tuned on
(scanpy's bundled PBMC subset split into disjoint cells and disjoint genes; `relrep_nb.experiments.latent_gw.pbmc_unpaired`)."""
import numpy as np
import pytest
import torch

anndata = pytest.importorskip('anndata'); pytest.importorskip('scanpy')
from relrep_nb.gw import LearnedGW, align

pytestmark = pytest.mark.usefixtures('one_thread')   # conftest.py: small fits, one torch thread
from relrep_nb.experiments.latent_gw import label_transfer, pbmc_unpaired

CHANCE = 0.2   # five cell types; the largest holds 0.39 of side y's cells

@pytest.fixture(scope='module')
def pair():
    return pbmc_unpaired(seed=0)

def _knn(ex, ey, lx, k=5):
    nn = torch.cdist(torch.as_tensor(ey), torch.as_tensor(ex)).topk(k, largest=False).indices.numpy()
    cls = np.unique(lx)
    return cls[np.stack([(lx[nn] == c).sum(1) for c in cls], 1).argmax(1)]

def test_learnedgw_defaults_transfer_labels(pair):
    x, y, lx, ly = pair
    torch.manual_seed(0)
    acc = label_transfer(LearnedGW().fit(x, y), x, y, lx, ly)
    assert acc['plan'] >= 3 * CHANCE and acc['knn'] >= 3 * CHANCE, acc     # well above chance: no cluster swap

def test_align_defaults_transfer_labels(pair):
    x, y, lx, ly = pair
    A, B = anndata.AnnData(X=x), anndata.AnnData(X=y)
    plan = align(A, B)
    pred = _knn(A.obsm['X_gw'], B.obsm['X_gw'], lx)                       # 5-NN label transfer in the common space
    assert (pred == ly).mean() >= 3 * CHANCE, (pred == ly).mean()
    P = np.asarray(plan)
    cls = np.unique(lx)
    assert (cls[np.stack([P[lx == c].sum(0) for c in cls], 1).argmax(1)] == ly).mean() >= 3 * CHANCE
    assert A.uns['X_gw']['selected'] in ('single-cell (geodesic, l2)', 'euclidean (z-score)')
