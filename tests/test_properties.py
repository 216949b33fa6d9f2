"""Property tests of the core operator (hypothesis): invariances hold for random transformations,
and each similarity is shown one transformation it is NOT invariant to."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st, HealthCheck

from relrep_nb.core import relative_projection, RelativeProjector

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

def space(seed, n=40, d=6, k=12):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    return x, x[torch.randperm(n, generator=g)[:k]], g

def rotation(d, g):
    q, r = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))

def close(a, b, tol=1e-9): return torch.allclose(a, b, atol=tol, rtol=0)

@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), scale=st.floats(0.01, 100))
def test_cosine_rotation_scale(seed, scale):
    x, a, g = space(seed); q = rotation(x.shape[1], g)
    assert close(relative_projection(scale * x @ q, scale * a @ q), relative_projection(x, a))

@SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_cosine_not_translation(seed):
    x, a, g = space(seed); b = 3 * torch.randn(x.shape[1], generator=g, dtype=torch.float64)
    assert not close(relative_projection(x + b, a + b), relative_projection(x, a), 1e-3)

@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), shift=st.floats(-50, 50))
def test_euclidean_rotation_translation(seed, shift):
    x, a, g = space(seed); q = rotation(x.shape[1], g)
    b = shift * torch.randn(x.shape[1], generator=g, dtype=torch.float64)
    assert close(relative_projection(x @ q + b, a @ q + b, 'euclidean'), relative_projection(x, a, 'euclidean'), 1e-8)

@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), scale=st.floats(1.5, 10))
def test_euclidean_not_scale(seed, scale):
    x, a, _ = space(seed)
    assert not close(relative_projection(scale * x, scale * a, 'euclidean'), relative_projection(x, a, 'euclidean'), 1e-3)

@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), sim=st.sampled_from(['l1', 'linf']))
def test_lp_permutation_translation(seed, sim):
    x, a, g = space(seed); d = x.shape[1]
    perm = torch.randperm(d, generator=g); signs = torch.randint(0, 2, (d,), generator=g).double() * 2 - 1
    b = torch.randn(d, generator=g, dtype=torch.float64)
    f = lambda t: t[:, perm] * signs + b
    assert close(relative_projection(f(x), f(a), sim), relative_projection(x, a, sim), 1e-10)

@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), sim=st.sampled_from(['l1', 'linf']))
def test_lp_not_rotation(seed, sim):
    x, a, g = space(seed); q = rotation(x.shape[1], g)
    assert not close(relative_projection(x @ q, a @ q, sim), relative_projection(x, a, sim), 1e-3)

@SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_wip_affine(seed):
    x, a, g = space(seed); d = x.shape[1]
    A = torch.randn(d, d, generator=g, dtype=torch.float64)
    if torch.linalg.cond(A) > 1e4: A = A + 3 * torch.eye(d, dtype=torch.float64)
    b = torch.randn(d, generator=g, dtype=torch.float64)
    r0 = relative_projection(x, a, 'wip', reference=x)
    r1 = relative_projection(x @ A + b, a @ A + b, 'wip', reference=x @ A + b)
    assert close(r1, r0, 1e-6 * r0.abs().max().item())

@SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_wip_not_nonlinear(seed):
    x, a, _ = space(seed)
    f = lambda t: torch.tanh(2 * t)
    r0 = relative_projection(x, a, 'wip', reference=x)
    assert not close(relative_projection(f(x), f(a), 'wip', reference=f(x)), r0, 1e-3)

@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 30), budget=st.integers(1, 5000),
       sim=st.sampled_from(['cosine', 'inner', 'angular', 'euclidean', 'l1', 'linf']),
       post=st.sampled_from([None, 'l2', 'layernorm', 'standardize']))
def test_rows_independent_of_batch(seed, n, budget, sim, post):
    x, a, _ = space(seed)
    p = RelativeProjector(sim, post=post, memory_budget=budget).fit(a, reference=x)
    full = RelativeProjector(sim, post=post).fit(a, reference=x).transform(x)
    # arccos has an infinite slope at +-1: a 1e-16 matmul difference becomes ~1e-8 in angle
    assert close(p.transform(x[:n]), full[:n], 1e-7 if sim == 'angular' else 1e-10)

@pytest.mark.parametrize('sim', ['cosine', 'inner', 'angular', 'euclidean', 'l1', 'linf'])
def test_numpy_roundtrip(sim):
    x, a, _ = space(0)
    out = relative_projection(x.numpy(), a.numpy(), sim)
    assert isinstance(out, np.ndarray) and out.shape == (40, 12)
    np.testing.assert_allclose(out, relative_projection(x, a, sim).numpy(), atol=1e-12)

@pytest.mark.parametrize('bad, match', [
    (dict(x=torch.randn(3, 4, dtype=torch.float64)), 'width 4'),
    (dict(anchors=torch.empty(0, 6, dtype=torch.float64)), 'empty'),
    (dict(x=torch.full((2, 6), float('nan'), dtype=torch.float64)), 'NaN'),
    (dict(x=torch.randn(6)), '2-dimensional'),
    (dict(similarity='nope'), 'unknown similarity'),
    (dict(similarity=3), 'registered name or a callable'),
])
def test_bad_input(bad, match):
    x, a, _ = space(0)
    kw = dict(x=x, anchors=a, similarity='cosine'); kw.update(bad)
    with pytest.raises((ValueError, TypeError), match=match): relative_projection(**kw)

@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), n_ex=st.integers(0, 20))
def test_exclude_equals_dropping_rows(seed, n_ex):
    "`exclude=` is exactly the metric on the remaining rows, for every retrieval metric."
    from relrep_nb.metrics import mrr, recall_at_k, foscttm, jaccard_at_k, match_ranks
    g = np.random.default_rng(seed)
    x, y = g.normal(size=(40, 5)), g.normal(size=(40, 5))
    ex = g.choice(40, n_ex, replace=False); keep = np.setdiff1d(np.arange(40), ex)
    for f in (mrr, recall_at_k, foscttm):
        assert f(x, y, exclude=ex) == f(x[keep], y[keep])
    np.testing.assert_array_equal(match_ranks(x, y, exclude=ex), match_ranks(x[keep], y[keep]))
    assert jaccard_at_k(x, y, k=5, exclude=ex) == jaccard_at_k(x[keep], y[keep], k=5)
