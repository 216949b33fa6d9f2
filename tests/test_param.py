"""PARAM (relrep_nb.param): the estimator protocol and the properties its notebook states."""
import inspect
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from relrep_nb.param import PARAM, check_supports, support_grams

def _supports(seed=0, k=40, widths=(5, 7)):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(k, w, generator=g) for w in widths]

def test_protocol(tmp_path):
    sup = _supports()
    p = PARAM(4, steps=5, seed=1)
    assert p.fit(sup) is p
    assert list(p.get_params()) == [n for n in inspect.signature(PARAM).parameters]
    assert PARAM(**p.get_params()).get_params() == p.get_params()
    p.save(tmp_path / 'p.pt'); q = PARAM.load(tmp_path / 'p.pt')
    assert q.get_params() == p.get_params() and q.history_ == p.history_
    held_out = torch.randn(40, 3, generator=torch.Generator().manual_seed(2))
    assert torch.equal(q.anchors_for(held_out), p.anchors_for(held_out))
    x = torch.randn(10, 3, generator=torch.Generator().manual_seed(3))
    assert torch.equal(q.projector_for(held_out).transform(x), p.projector_for(held_out).transform(x))

def test_foreign_file_is_refused(tmp_path):
    torch.save({'config': {}}, tmp_path / 'x.pt')
    with pytest.raises(ValueError): PARAM.load(tmp_path / 'x.pt')

_FITTED = PARAM(3, steps=3).fit(_supports(k=12, widths=(4, 6)))   # soft mixing rows

@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.1, 10.))
def test_anchors_commute_with_affine_maps(seed, scale):
    "Mixing rows sum to one, so the anchors of an affinely mapped support are the mapped anchors."
    p = _FITTED
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(12, 4, generator=g, dtype=torch.float64)
    A, b = scale * torch.randn(4, 4, generator=g, dtype=torch.float64), torch.randn(4, generator=g, dtype=torch.float64)
    torch.testing.assert_close(p.anchors_for(s @ A + b), p.anchors_for(s) @ A + b, atol=1e-5, rtol=1e-5)  # P is float32

@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_wip_gram_is_affine_invariant(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(30, 4, generator=g, dtype=torch.float64)
    A = torch.randn(4, 4, generator=g, dtype=torch.float64) + 4 * torch.eye(4, dtype=torch.float64)
    a, b = support_grams(x, shrinkage=0., eps=0.), support_grams(x @ A + 1., shrinkage=0., eps=0.)
    torch.testing.assert_close(a['wip'], b['wip'], atol=1e-8, rtol=1e-6)

def test_bad_supports():
    with pytest.raises(ValueError, match='row counts'): check_supports([np.zeros((5, 2)), np.zeros((4, 2))])
    with pytest.raises(TypeError, match='non-empty list'): check_supports([])
