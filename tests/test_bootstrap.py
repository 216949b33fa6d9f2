"""Unit tests of relrep_nb.bootstrap: anchor recovery on a rotated pair, the OT plan, input errors, determinism."""
import numpy as np
import pytest
import torch
from relrep_nb.core import torch_threads
from relrep_nb.bootstrap import bootstrap_anchors, ot_match_loss, rotated_pair, seed_init, UnitRows


@pytest.fixture(autouse=True, scope='module')
def one_thread():
    with torch_threads(1): yield   # small matrices: one thread is faster on a shared machine


@pytest.fixture(scope='module')
def pair():
    return rotated_pair(n=1000, d=32, k=100, n_seeds=15, seed=1)


def test_rotation_recovers_anchors_from_15_seeds(pair):
    x, y, ia, sp, iy = pair
    r = bootstrap_anchors(x, y, ia, sp, n_steps=100, batch_size=500)
    assert (r.y_anchor_idx == iy).mean() >= 0.9
    assert np.array_equal(r.y_anchor_idx[:15], sp[:, 1])
    assert r.y_anchors.shape == (100, 32) and isinstance(r.y_anchors, np.ndarray)
    assert np.isfinite(r.loss).all() and len(r.loss) == 100


def test_torch_input_gives_torch_anchors(pair):
    x, y, ia, sp, _ = pair
    r = bootstrap_anchors(torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(ia), torch.from_numpy(sp), n_steps=3, batch_size=100)
    assert isinstance(r.y_anchors, torch.Tensor) and r.y_anchors.dtype == torch.float32
    torch.testing.assert_close(r.y_anchors.norm(dim=1), torch.ones(100))


def test_deterministic_and_seed_dependent(pair):
    x, y, ia, sp, _ = pair
    a, b = [bootstrap_anchors(x, y, ia, sp, n_steps=5, batch_size=200, seed=4, init='random') for _ in range(2)]
    c = bootstrap_anchors(x, y, ia, sp, n_steps=5, batch_size=200, seed=5, init='random')
    assert np.array_equal(a.loss, b.loss) and np.array_equal(a.y_anchor_idx, b.y_anchor_idx)
    assert not np.array_equal(a.loss, c.loss)


@pytest.mark.parametrize('n,m', [(40, 40), (37, 53)])
def test_sinkhorn_plan_marginals(n, m):
    g = torch.Generator().manual_seed(0)
    rx, ry = torch.randn(n, 10, generator=g), torch.randn(m, 10, generator=g, requires_grad=True)
    loss, P = ot_match_loss(rx, ry, epsilon=0.05, n_iter=500)
    torch.testing.assert_close(P.sum(1), torch.full((n,), 1 / n), atol=1e-4, rtol=0)
    torch.testing.assert_close(P.sum(0), torch.full((m,), 1 / m), atol=1e-4, rtol=0)
    torch.testing.assert_close(P.sum(), torch.tensor(1.), atol=1e-5, rtol=0)
    loss.backward()
    assert ry.grad is not None and torch.isfinite(ry.grad).all()


def test_seed_init_and_unit_rows():
    r = torch.randn(30, 5, generator=torch.Generator().manual_seed(2)); perm = torch.randperm(30)
    assert torch.equal(seed_init(r, torch.arange(30), r[perm]), perm.argsort())
    torch.testing.assert_close(UnitRows()(torch.randn(4, 7)).norm(dim=1), torch.ones(4))


def _args():
    x, y, ia, sp, _ = rotated_pair(n=60, d=4, k=10, n_seeds=3)
    return x, y, ia, sp


@pytest.mark.parametrize('change,err,msg', [
    (lambda a: a[:3] + (a[3][:1],), ValueError, 'at least 2 pairs'),
    (lambda a: a[:3] + (np.stack([a[3][:, 0], [0, 1, 60]], 1),), ValueError, '`y` has 60 rows'),
    (lambda a: a[:3] + (np.stack([a[3][:, 0], [0, 1, -1]], 1),), ValueError, 'seed_pairs[:, 1]'),
    (lambda a: (a[0], a[1], a[2][:3], a[3]), ValueError, 'more anchors than the 3 seed pairs'),
    (lambda a: (a[0], a[1], np.r_[a[2], 60], a[3]), ValueError, '`x` has 60 rows'),
    (lambda a: (a[0], a[1], np.r_[a[2], a[2][0]], a[3]), ValueError, 'distinct'),
    (lambda a: (a[0], a[1], a[2].astype(float), a[3]), TypeError, 'integer index'),
    (lambda a: a[:3] + (a[3][:, :1],), ValueError, '(s, 2)'),
    (lambda a: a[:3] + (a[3][::-1].copy(),), ValueError, 'first s entries'),
    (lambda a: (np.where(np.arange(60)[:, None] == 5, np.nan, a[0]), *a[1:]), ValueError, 'NaN'),
    (lambda a: (a[0], np.full_like(a[1], np.inf), *a[2:]), ValueError, 'inf'),
])
def test_bad_input(change, err, msg):
    with pytest.raises(err, match=None) as e: bootstrap_anchors(*change(_args()), n_steps=1)
    assert msg in str(e.value), str(e.value)


def test_widths_may_differ_but_init_must_match_y():
    x, y, ia, sp = _args()
    y6 = np.c_[y, np.zeros((len(y), 2), np.float32)]          # the target may be wider than the source
    assert bootstrap_anchors(x, y6, ia, sp, n_steps=2, batch_size=30).y_anchors.shape == (10, 6)
    with pytest.raises(ValueError, match=r'\(K - s, d_y\)'): bootstrap_anchors(x, y6, ia, sp, init=np.zeros((7, 4)))
    bootstrap_anchors(x, y6, ia, sp, n_steps=1, init=np.ones((7, 6)))
    with pytest.raises(ValueError, match='init'): bootstrap_anchors(x, y, ia, sp, init='nearest')
    with pytest.raises(ValueError, match='n_steps'): bootstrap_anchors(x, y, ia, sp, n_steps=0)
    with pytest.raises(ValueError, match='epsilon'): bootstrap_anchors(x, y, ia, sp, epsilon=0)
    with pytest.raises(ValueError, match='same number of anchors'): ot_match_loss(torch.ones(3, 2), torch.ones(3, 4))
