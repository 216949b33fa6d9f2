"""The paper's row of the learned GW solver (`objective="direct"`: the GW loss backpropagated through the Sinkhorn
plan) on data none of its defaults was chosen on: scikit-learn's digits (64-d, standardised), 200 training samples
whose second view is the first under a random orthogonal map (one side shuffled: the pairing is hidden), the other
samples held out. Seeds 0, 1, 2: each its own split, map and shuffle. The defaults were chosen on synthetic
Gaussian clusters (`clustered_pair`) and a low-rank Gaussian mixture, the inputs' principal components
(`normalize="auto"` -> "pca" for this objective) and the two restarts of lowest GW loss side by side (`ensemble="auto"`
-> 2) on breast-cancer features, that mixture and isotropic clusters (studies `normalize` and
`ensemble`, bench/README.md), never on digits."""
import functools, os, time
import numpy as np
import pytest
import torch

pytest.importorskip('sklearn')
from sklearn.datasets import load_digits
from relrep_nb.gw import LearnedGW

pytestmark = pytest.mark.usefixtures('one_thread')   # conftest.py: small fits, one torch thread

slow = pytest.mark.skipif('slow' not in os.environ.get('RELREP_NB_TEST_FLAGS', '').split(),
                          reason='slow (about 1 CPU-minute): RELREP_NB_TEST_FLAGS=slow runs it')

def digits_pair(seed:int, n_train:int=200):
    "(x, y, labels) of the training samples and of the held-out ones; y = x R for a random orthogonal R."
    X, lab = load_digits(return_X_y=True)
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    rng = np.random.default_rng(seed)
    R = np.linalg.qr(rng.normal(size=(64, 64)))[0]
    idx = rng.permutation(len(X)); tr, te = idx[:n_train], idx[n_train:]
    X = X.astype(np.float32); Y = (X @ R).astype(np.float32)
    return (X[tr], Y[tr], lab[tr]), (X[te], Y[te], lab[te])

def fit_and_score(seed:int, **kw) -> dict:
    "Fit on the shuffled training pairs; exact-match rate of the training coupling, same-class rate of unseen nearest neighbours."
    (xtr, ytr, _), (xte, yte, lte) = digits_pair(seed)
    perm = np.random.default_rng(1000 + seed).permutation(len(ytr))
    t0 = time.process_time()
    m = LearnedGW(objective='direct', seed=seed, **kw).fit(xtr, ytr[perm])
    cpu = time.process_time() - t0
    exact = float((m.coupling(xtr, ytr).match() == np.arange(len(xtr))).mean())
    nn = torch.cdist(torch.as_tensor(m.embed_x(xte)), torch.as_tensor(m.embed_y(yte))).argmin(1).numpy()
    return dict(seed=seed, exact=exact, unseen_class=float((lte[nn] == lte).mean()), cpu_seconds=cpu, gw=float(m.gw_))

# issue #28's goal: exact >= 0.95 on the training pairs and >= 0.90 of unseen samples to their class, in every seed.
# Measured with the defaults (one held-out run after the `ensemble` study chose them): exact 1.000 in each seed, unseen
# class 0.986, 0.987, 0.974. Before: one restart on principal components 0.946, 0.884, 0.877; z-scored 0.895, 0.905, 0.857.

_defaults = functools.lru_cache(fit_and_score)      # one fit per seed for both slow tests

@slow
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_direct_defaults_recover_the_isometry(seed):
    r = _defaults(seed)
    assert r['exact'] >= 0.95, r

@slow
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_direct_defaults_carry_unseen_samples_to_their_class(seed):
    r = _defaults(seed)
    assert r['unseen_class'] >= 0.90, r

def test_direct_defaults_match_the_training_pairs():
    "The fast variant: one seed, the defaults (3 restarts, the two of lowest training GW loss side by side: a single run can land in a mismatch mode)."
    r = _defaults(0)
    assert r['exact'] >= 0.95, r
