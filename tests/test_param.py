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
    p = PARAM(4, n_steps=5, seed=1)
    assert p.fit(sup) is p
    sig = inspect.signature(PARAM).parameters
    assert sorted(p.get_params()) == sorted(sig)
    assert not any(q.kind == q.VAR_KEYWORD for q in sig.values())   # no **kw: an unknown keyword is a TypeError
    assert p.n_features_in_ == 5 and p.support_size_ == 40
    assert PARAM(**p.get_params()).get_params() == p.get_params()
    p.save(tmp_path / 'p.pt'); q = PARAM.load(tmp_path / 'p.pt')
    assert q.get_params() == p.get_params() and q.history_ == p.history_
    held_out = torch.randn(40, 3, generator=torch.Generator().manual_seed(2))
    assert torch.equal(q.anchors_for(held_out), p.anchors_for(held_out))
    x = torch.randn(10, 3, generator=torch.Generator().manual_seed(3))
    assert torch.equal(q.projector_for(held_out).transform(x), p.projector_for(held_out).transform(x))

def test_defaults_fit_400_rows_and_init_only_stores():
    sup = _supports(k=400)
    p = PARAM().fit(sup)
    assert p.n_anchors == 64 and p.mixing.shape == (64, 400)
    assert PARAM(0).n_anchors == 0                               # checked at fit, not at construction
    with pytest.raises((ValueError, TypeError), match='n_anchors'): PARAM(0).fit(sup)
    with pytest.raises(ValueError, match=r'K=40 support points, fewer than n_anchors=64'): PARAM().fit(_supports())

def test_old_steps_name_is_gone():
    from sklearn.base import clone
    p = PARAM(4, n_steps=3)
    assert p.n_steps == 3 and clone(p).get_params() == p.get_params()
    with pytest.raises(TypeError, match='unexpected keyword'): PARAM(4, steps=3)
    with pytest.raises(TypeError, match='unexpected keyword'): PARAM(4, stepz=3)

def test_unfitted_and_random():
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError): PARAM(4).anchors_for(torch.randn(40, 3))
    with pytest.raises(NotFittedError): PARAM(4).projector_for(torch.randn(40, 3))
    r = PARAM.random(4, 40)
    assert r.anchors_for(torch.randn(40, 3)).shape == (4, 3)      # a random PARAM counts as fitted
    with pytest.raises(ValueError, match='similarity'): PARAM.random(4, 40, similarity='l1')

def test_foreign_file_is_refused(tmp_path):
    torch.save({'config': {}}, tmp_path / 'x.pt')
    with pytest.raises(ValueError): PARAM.load(tmp_path / 'x.pt')

_FITTED = PARAM(3, n_steps=3).fit(_supports(k=12, widths=(4, 6)))   # soft mixing rows

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

# ---- the chapter's claims, on small hand-made tables ------------------------------------------------------------
import pandas as pd
from relrep_nb.experiments import param_wip as pw

def _zs(gain, encs=('a', 'b', 'c'), seeds=(0, 1, 2), cosine_bonus=0.1):
    "A `zero_shot`-shaped table: F1 = 0.5 + gain[method]; Random-Cosine gets `cosine_bonus` more in the (a, b) cell."
    methods = ('Random-Cosine', 'Random-WIP', 'PARAM-Cosine', 'PARAM-WIP Single', 'PARAM-WIP Multi')
    rows = [dict(seed=s, method=m, test=t, classifier=c, n_anchors=m_, rr_std=0.1 + gain.get(m, 0),
                 f1=0.5 + gain.get(m, 0) + (cosine_bonus if (m, t, c) == ('Random-Cosine', 'a', 'b') else 0),
                 mrr=0.4 + gain.get(m, 0) + 0.01 * s * (m == 'PARAM-WIP Multi'), r1=0.3 + gain.get(m, 0))
            for m_ in (25, 300) for s in seeds for m in methods for t in encs for c in encs]
    rows += [dict(seed=s, method='absolute', test=t, classifier=t, f1=0.82, n_anchors=25) for s in seeds for t in encs]
    return pd.DataFrame(rows)

def _stress(param=0.031, cosine=0.06):
    return pd.DataFrame([dict(seed=s, method=m, encoder=e, mse=v) for s in (0, 1, 2) for m, e, v in
                         [('absolute', 'AE1', 0.02), ('absolute', 'AE4', 0.03), ('PARAM-WIP Multi', 'AE4', param),
                          ('Random-Cosine', 'AE4', cosine), ('PARAM-WIP Multi', 'AE1', 0.5), ('mean image', '-', 0.07)]])

def _results(**kw):
    good = _zs({'PARAM-WIP Single': 0.2, 'PARAM-WIP Multi': 0.3})
    return dict(dict(vision=good, text=good, sentences=good, ablation=good, stress=_stress()), **kw)

def test_claims_are_the_preregistered_ones():
    cl = pw.claims(_results())
    assert [c.name for c in cl] == ['param_beats_random_cosine_vision', 'param_beats_random_cosine_text', 'param_near_absolute_vision',
                                    'slm_retrieval', 'param_adds_to_wip', 'multi_improves_alignment', 'anisotropic_stress',
                                    'anisotropic_param_near_absolute', 'rr_std_higher']
    assert [c.rule for c in cl] == ['>= 0.9', '>= 0.9', '<= 0.05', '> 0', '> 0', '>= 2', '>= 0.5', '<= 1.1', '> 1']
    assert all(c.holds for c in cl), [(c.name, c.value) for c in cl if not c.holds]

def test_claim_values_on_known_tables():
    v = {c.name: c.value for c in pw.claims(_results())}
    assert v['param_beats_random_cosine_vision'] == 1.0                 # every (pair x seed) cell
    assert v['param_near_absolute_vision'] == pytest.approx(0.82 - 0.8)
    assert v['slm_retrieval'] == pytest.approx(0.3)                     # R@1 difference, not a ratio
    assert v['param_adds_to_wip'] == pytest.approx(0.3)                 # only m <= 100 counts
    assert v['multi_improves_alignment'] == pytest.approx(0.11 / (0.01 / np.sqrt(3)))
    assert v['anisotropic_stress'] == pytest.approx((0.06 - 0.03) / (0.07 - 0.03))   # the held-out AE4, not AE1
    assert v['anisotropic_param_near_absolute'] == pytest.approx(0.031 / 0.03)
    assert v['rr_std_higher'] == pytest.approx(0.4 / 0.1)

def test_claims_fail_when_the_data_say_so():
    bad = _zs({'PARAM-WIP Single': 0.01, 'PARAM-WIP Multi': 0.01}, cosine_bonus=0.05)   # Random-Cosine ahead in 1 of 6 pairs
    cl = {c.name: c for c in pw.claims(_results(text=bad, stress=_stress(param=0.05, cosine=0.04)))}
    assert cl['param_beats_random_cosine_text'].value == pytest.approx(5 / 6) and not cl['param_beats_random_cosine_text'].holds
    assert not cl['anisotropic_stress'].holds and not cl['anisotropic_param_near_absolute'].holds
    assert cl['param_beats_random_cosine_vision'].holds

def test_cells_count_pairs_and_seeds():
    df = _zs({'PARAM-WIP Multi': 0.3})
    df.loc[(df.method == 'PARAM-WIP Multi') & (df.seed == 0) & (df.test == 'a') & (df.classifier == 'c'), 'f1'] = 0.0
    assert pw._cell_wins(df) == pytest.approx(1 - 1 / 18)    # 6 ordered pairs x 3 seeds; one (pair, seed) cell lost
