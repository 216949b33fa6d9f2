"""Unit and property tests of `relrep_nb.robust`: the invariance group of the robust projection, the MST death
times against gudhi, the densification loss's gradient, and the input errors."""
import math
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from relrep_nb.core import relative_projection
from relrep_nb.robust import (RobustProjector, robust_projection, random_monomial, apply_monomial, mst_death_times,
                              topo_densification_loss, class_pure_batches, cyclic_weight, RelativeClassifier, fit_densified)

def _change(r0, r1): return float((r1 - r0).abs().max() / r0.abs().max())

def _space(seed, n=120, d=24, k=30):
    g = torch.Generator().manual_seed(seed)
    scales = 10 ** (torch.rand(d, generator=g, dtype=torch.float64) * 2 - 1)   # anisotropic, like real features
    x = torch.randn(n, d, generator=g, dtype=torch.float64) * scales + torch.randn(d, generator=g, dtype=torch.float64)
    return x, x[torch.randperm(n, generator=g)[:k]]

@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), decades=st.floats(0.5, 6), signs=st.booleans())
def test_invariant_to_permutation_and_diagonal_rescaling(seed, decades, signs):
    x, a = _space(seed)
    t = random_monomial(x.shape[1], decades=decades, signs=signs, seed=seed + 1)
    xt, at = apply_monomial(x, t), apply_monomial(a, t)
    assert _change(robust_projection(x, a), robust_projection(xt, at)) <= 1e-6
    assert _change(robust_projection(x, a, center=True), robust_projection(xt, at, center=True)) <= 1e-6

@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_centred_invariant_to_translations_too(seed):
    x, a = _space(seed)
    t = random_monomial(x.shape[1], decades=4, shift=10., seed=seed + 1)
    assert _change(robust_projection(x, a, center=True), robust_projection(apply_monomial(x, t), apply_monomial(a, t), center=True)) <= 1e-6

@pytest.mark.parametrize('seed', range(5))
def test_plain_cosine_is_not_invariant(seed):
    x, a = _space(seed)
    t = random_monomial(x.shape[1], decades=2, seed=seed + 1)
    assert _change(relative_projection(x, a), relative_projection(apply_monomial(x, t), apply_monomial(a, t))) >= 1e-2
    q = torch.linalg.qr(torch.randn(x.shape[1], x.shape[1], generator=torch.Generator().manual_seed(seed), dtype=torch.float64))[0]
    assert _change(robust_projection(x, a), robust_projection(x @ q, a @ q)) >= 1e-2     # rotations are not in the group

def test_statistics_from_anchors_only():
    x, a = _space(0)
    p = RobustProjector().fit(a)
    torch.testing.assert_close(p.transform(x)[:5], p.transform(x[:5]), rtol=0, atol=1e-12)
    ref = torch.randn(50, x.shape[1], dtype=torch.float64)
    torch.testing.assert_close(RobustProjector().fit(a, reference=ref).inv_scale_, 1 / ref.std(0))

def _gudhi_deaths(p):
    gudhi = pytest.importorskip('gudhi')
    st_ = gudhi.RipsComplex(points=p, max_edge_length=math.inf).create_simplex_tree(max_dimension=1)
    d = [d for dim, (b, d) in st_.persistence() if dim == 0 and np.isfinite(d)]
    return np.sort(np.r_[np.zeros(len(p) - 1 - len(d)), d])   # gudhi omits bars of length 0 (coincident points)

@pytest.mark.parametrize('n,d,seed', [(2, 1, 0), (5, 3, 1), (16, 8, 2), (60, 4, 3), (30, 50, 4)])
def test_mst_death_times_match_gudhi(n, d, seed):
    p = np.random.default_rng(seed).normal(size=(n, d))
    np.testing.assert_allclose(mst_death_times(torch.from_numpy(p)).numpy(), _gudhi_deaths(p), rtol=0, atol=1e-9)

def test_mst_death_times_with_ties_and_duplicates():
    p = np.array([[0., 0.], [1., 0.], [0., 1.], [1., 1.], [1., 1.]])   # equal edges and a duplicated point
    np.testing.assert_allclose(mst_death_times(torch.from_numpy(p)).numpy(), _gudhi_deaths(p), atol=1e-12)

def test_gradient_finite_and_zero_at_beta():
    z = torch.randn(48, 6, dtype=torch.float64, requires_grad=True)
    y = torch.arange(48) % 3
    topo_densification_loss(z, y, beta=0.3, sub_batch=8).backward()
    assert torch.isfinite(z.grad).all() and z.grad.abs().sum() > 0
    dup = torch.zeros(6, 2, dtype=torch.float64, requires_grad=True)
    topo_densification_loss(dup, torch.zeros(6, dtype=torch.long), beta=1.).backward()
    assert torch.isfinite(dup.grad).all()
    for p in (1, 2):   # two classes, each on a line with spacing exactly beta = 0.25: every death time is beta
        line = torch.arange(8, dtype=torch.float64) * 0.25
        z = torch.cat([torch.stack([line, torch.zeros(8, dtype=torch.float64)], 1),
                       torch.stack([torch.full((8,), 5., dtype=torch.float64), line], 1)]).requires_grad_()
        loss = topo_densification_loss(z, torch.repeat_interleave(torch.arange(2), 8), beta=0.25, sub_batch=8, p=p)
        loss.backward()
        assert loss.item() == 0 and z.grad.abs().max().item() == 0

def test_loss_is_mean_over_sub_batches_of_summed_deviation():
    z, y = torch.tensor([[0., 0.], [2., 0.], [9., 9.], [9., 10.]]), torch.tensor([0, 0, 1, 1])
    assert topo_densification_loss(z, y, beta=1.).item() == pytest.approx((1 + 0) / 2)
    assert topo_densification_loss(z, y, beta=1., p=2).item() == pytest.approx((1 + 0) / 2)

@pytest.mark.parametrize('kw,msg', [
    (dict(sub_batch=4, n=17), 'single sample'),        # a class whose last sub-batch has one sample
    (dict(y_len=10), 'one label per row'),             # labels not matching the rows
    (dict(beta=-0.1), 'beta'),                         # beta < 0
    (dict(beta=float('nan')), 'beta'),
    (dict(sub_batch=1), 'sub_batch'),
    (dict(y_float=True), 'integer'),
    (dict(p=3), '`p`'),
])
def test_bad_inputs(kw, msg):
    n = kw.get('n', 32)
    z, y = torch.randn(n, 3), torch.arange(n) % 4
    if 'y_len' in kw: y = y[:kw['y_len']]
    if kw.get('y_float'): y = y.float()
    with pytest.raises((ValueError, TypeError), match=msg):
        topo_densification_loss(z, y, kw.get('beta', 1.), sub_batch=kw.get('sub_batch', 4), p=kw.get('p', 1))

def test_projector_bad_inputs():
    with pytest.raises(ValueError, match='at least 2 rows'): RobustProjector().fit(torch.randn(1, 4))
    with pytest.raises(ValueError, match='constant'): RobustProjector().fit(torch.ones(6, 4))
    with pytest.raises(ValueError, match='width'): RobustProjector().fit(torch.randn(6, 4)).transform(torch.randn(3, 5))
    with pytest.raises(ValueError, match='NaN'): robust_projection(torch.full((3, 4), float('nan')), torch.randn(6, 4))
    with pytest.raises(TypeError, match='center'): RobustProjector(center=1).fit(torch.randn(6, 4))
    with pytest.raises(ValueError, match='rtol'): RobustProjector(rtol=-1.).fit(torch.randn(6, 4))
    with pytest.raises(ValueError, match='at least 2 points'): mst_death_times(torch.randn(1, 3))
    with pytest.raises(ValueError, match='fewer than 2'): class_pure_batches(np.array([0, 1, 1, 1]), 2)
    with pytest.raises(ValueError, match='ratio'): cyclic_weight(0, 10, 1., ratio=0)

def test_save_load_roundtrip(tmp_path):
    x, a = _space(3)
    p = RobustProjector(center=True).fit(a); p.save(tmp_path / 'p.pt')
    q = RobustProjector.load(tmp_path / 'p.pt')
    assert q.center and torch.equal(q.transform(x), p.transform(x))

def test_recipe_schedule_and_batches():
    assert [cyclic_weight(s, 12, 2., n_cycle=3, ratio=0.5) for s in range(4)] == [0., 1., 2., 2.]
    y = np.repeat(np.arange(4), [3, 9, 20, 33])
    for b in class_pure_batches(y, sub_batch=5, seed=2):
        lab = y[b.numpy()]
        assert len(b) == 20 and all((lab[i * 5:(i + 1) * 5] == lab[i * 5]).all() for i in range(4))

def test_classifier_trains_with_densification():
    g = torch.Generator().manual_seed(0)
    y = torch.arange(120) % 3
    x = torch.randn(120, 6, generator=g) + 3 * torch.nn.functional.one_hot(y, 6).float()
    torch.manual_seed(0)
    m = RelativeClassifier(torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8)), 8, 3,
                           anchors=x[:20], projection='robust', seed=0)
    hist = fit_densified(m, x, y, epochs=3, sub_batch=8, lam=0.1, beta_pre=0.1, beta_post=0.1, seed=0)
    assert len(hist) == 3 and all(math.isfinite(h['ce']) and math.isfinite(h['topo']) for h in hist)
    with pytest.raises(ValueError, match='beta'): fit_densified(m, x, y, epochs=1, lam=0.1)

def test_constant_feature_dropped_tiny_feature_kept_gradient_finite():
    g = torch.Generator().manual_seed(0)
    z, a = torch.randn(10, 4, generator=g), torch.randn(6, 4, generator=g)
    z[:, 2], a[:, 2] = 3., 3.                                   # constant over the anchors: dropped
    z[:, 1], a[:, 1] = 1e-12 * z[:, 1], 1e-12 * a[:, 1]         # tiny: the projection is scale-blind, it is kept
    z.requires_grad_(); a.requires_grad_()
    p = RobustProjector(center=True).fit(a)
    assert p.inv_scale_[2].item() == 0 and p.inv_scale_[1].item() > 0
    r = robust_projection(z, a, center=True)
    torch.testing.assert_close(r, robust_projection(z[:, [0, 1, 3]] * torch.tensor([1., 1e12, 1.]), a[:, [0, 1, 3]] * torch.tensor([1., 1e12, 1.]), center=True))
    r.sum().backward()
    assert torch.isfinite(z.grad).all() and torch.isfinite(a.grad).all()
