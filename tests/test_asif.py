"""Unit tests of `relrep_nb.asif.ASIF` (the list of issue #15): sparsity and norm, blocked = unblocked,
add/remove round trip, top-k locality, clear errors, the optional FAISS extra."""
import sys
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from relrep_nb.asif import ASIF, topk_inner, sparse_weights

def pairs(n=300, da=12, db=7, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, da, generator=g, dtype=dtype), torch.randn(n, db, generator=g, dtype=dtype)

@given(k=st.integers(1, 60), p=st.floats(0.5, 16), seed=st.integers(0, 1000), negative=st.sampled_from(['sign', 'clamp']))
@settings(max_examples=25, deadline=None)
def test_k_nonzeros_unit_norm(k, p, seed, negative):
    a, b = pairs(seed=seed)
    m = ASIF(k=k, p=p, negative=negative).fit(a, b)
    x = pairs(20, seed=seed + 1)[0]
    r = m.embed_x(x)
    assert r.layout == torch.sparse_csr and r.shape == (20, 300)
    assert torch.equal(r.crow_indices().diff(), torch.full((20,), k))          # exactly k stored entries per row
    d = r.to_dense()
    norms = d.norm(dim=1)
    if negative == 'sign':
        assert torch.allclose(norms, torch.ones(20, dtype=d.dtype), atol=1e-12)
        assert ((d != 0).sum(1) == k).all()
    else:                                                                       # clamp: unit norm or a zero row
        assert (((norms - 1).abs() < 1e-12) | (norms == 0)).all() and (d >= 0).all()

def test_numpy_in_scipy_out():
    a, b = pairs(dtype=torch.float32)
    m = ASIF(k=10).fit(a.numpy(), b.numpy())
    r = m.embed_y(b[:5].numpy())
    import scipy.sparse as sp
    assert sp.isspmatrix_csr(r) and (np.diff(r.indptr) == 10).all()
    assert isinstance(m.scores(a[:4].numpy(), b[:6].numpy()), np.ndarray)
    assert isinstance(m.predict(a[:4].numpy(), b[:6].numpy()), np.ndarray)

def test_blocked_equals_unblocked_exactly():
    g = torch.Generator().manual_seed(3)
    x = torch.cat([torch.randint(-8, 9, (40, 10), generator=g).double(), torch.ones(40, 1, dtype=torch.float64)], 1)
    A = torch.cat([torch.randint(-8, 9, (500, 10), generator=g).double(), torch.arange(500.)[:, None].double() / 1024], 1)
    full = (x @ A.T).topk(30, dim=1)
    for budget in (None, 3900, 4500, 10**5):                 # blocks of 30 and 37 anchors (candidate-table scan), one block
        v, i = topk_inner(x, A, 30, memory_budget=budget)
        assert torch.equal(v, full.values) and torch.equal(i, full.indices), budget

def test_blocked_scores_match_unblocked():
    a, b = pairs(2000)
    x, y = pairs(50, seed=9)
    s1 = ASIF(k=40).fit(a, b).scores(x, y)
    s2 = ASIF(k=40, memory_budget=7000).fit(a, b).scores(x, y)           # one query row, about 60 anchors per block
    assert torch.allclose(s1, s2, atol=1e-12, rtol=0)

def test_add_then_remove_identical():
    a, b = pairs(400)
    x, y = pairs(30, seed=5)
    m = ASIF(k=25, p=6).fit(a[:300], b[:300])
    before = m.scores(x, y)
    m.add(a[300:], b[300:], ids=np.arange(10_000, 10_100))
    assert m.n_anchors == 400 and not torch.equal(m.scores(x, y), before)
    m.remove(np.arange(10_000, 10_100))
    assert torch.equal(m.scores(x, y), before)
    m.add(a[300:], b[300:])                                 # default ids continue after the largest
    assert m.ids_[-1].item() == 399

def test_replacing_anchor_outside_topk_changes_nothing():
    a, b = pairs()
    x, y = pairs(1, seed=11)[0], pairs(40, seed=12)[1]
    m = ASIF(k=20).fit(a, b)
    before = m.scores(x, y)
    _, top = topk_inner(torch.nn.functional.normalize(x, dim=1), m.anchors_a_, 20)
    out = torch.ones(300, dtype=torch.bool); out[top[0]] = False
    xn = torch.nn.functional.normalize(x, dim=1)[0]
    r = torch.randn(int(out.sum()), 12, dtype=torch.float64)
    r = r - (r @ xn)[:, None] * xn - 0.5 * xn                # negative cosine with x: stays outside its top-k
    a2 = a.clone(); a2[out] = r
    assert torch.equal(ASIF(k=20).fit(a2, b).scores(x, y), before)

@pytest.mark.parametrize('kw,fit_args,msg', [
    (dict(k=0), None, 'positive int'),
    (dict(k=-3), None, 'positive int'),
    (dict(k=5, p=0), None, '`p`'),
    (dict(k=5, similarity='l1'), None, '`similarity`'),
    (dict(k=5, index='hnsw'), None, '`index`'),
    (dict(k=5), 'mismatch', 'has 299'),
    (dict(k=5), 'dup', 'duplicates'),
    (dict(k=5), 'nan', 'NaN'),
])
def test_bad_input(kw, fit_args, msg):
    a, b = pairs()
    ids = None
    if fit_args == 'mismatch': b = b[:299]
    if fit_args == 'dup': ids = [0] * 300
    if fit_args == 'nan': a = a.clone(); a[3, 2] = float('nan')
    with pytest.raises((ValueError, TypeError), match=msg): ASIF(**kw).fit(a, b, ids=ids)

def test_bad_update_and_query():
    a, b = pairs()
    m = ASIF(k=5).fit(a, b)
    with pytest.raises(ValueError, match='not anchors'): m.remove([12345])
    with pytest.raises(ValueError, match='duplicates'): m.remove([1, 1])
    with pytest.raises(ValueError, match='already anchors'): m.add(a[:2], b[:2], ids=[0, 1])
    with pytest.raises(ValueError, match='NaN'): m.embed_x(torch.full((2, 12), float('nan'), dtype=torch.float64))
    with pytest.raises(ValueError, match='width'): m.embed_y(a[:2])
    with pytest.raises(ValueError, match='not fitted'): ASIF(k=5).embed_x(a)
    with pytest.raises(TypeError, match='`ids` must be integers'): ASIF(k=5).fit(a, b, ids=[str(i) for i in range(300)])

def test_k_larger_than_pairs_is_clamped_with_a_warning():
    a, b = pairs()
    with pytest.warns(UserWarning, match=r'k=301 is larger than the 300 anchor pairs'): m = ASIF(k=301).fit(a, b)
    assert (m.k, m.k_) == (301, 300)
    assert torch.equal(m.embed_x(a[:4]).crow_indices().diff(), torch.full((4,), 300))
    with pytest.raises(ValueError, match='fewer than k_=300'): m.remove([0])
    m.add(*pairs(10, seed=3))                               # k_ stays the one of fit
    assert m.k_ == 300 and m.n_anchors == 310

def test_defaults_fit_400_pairs():
    a, b = pairs(400)
    with pytest.warns(UserWarning, match='k=800'): m = ASIF().fit(a, b)
    assert m.k_ == 400 and m.scores(a[:3], b[:5]).shape == (3, 5)

def test_old_names_are_gone():
    "The names used before the vocabulary was fixed (`anchors_a`/`anchors_b`, `encode_a`/`encode_b`) are refused."
    a, b = pairs()
    m = ASIF(k=10).fit(a, b)
    with pytest.raises(TypeError, match='unexpected keyword'): ASIF(k=10).fit(anchors_a=a, anchors_b=b)
    with pytest.raises(TypeError, match='unexpected keyword'): m.add(a[:2], anchors_b=b[:2])
    assert m.n_anchors == len(a)                             # the refused call changed nothing
    assert not hasattr(m, 'encode_a') and not hasattr(m, 'encode_b')
    with pytest.raises(TypeError, match=r'fit\(x, y\)'): ASIF(k=10).fit(a)

def test_fit_transform_and_protocol():
    from sklearn.base import clone
    a, b = pairs()
    ex, ey = ASIF(k=10).fit_transform(a, b)
    m = ASIF(k=10).fit(a, b)
    assert torch.equal(ex.to_dense(), m.embed_x(a).to_dense()) and torch.equal(ey.to_dense(), m.embed_y(b).to_dense())
    assert ASIF(k=0).k == 0                                  # __init__ only stores
    c = clone(m)
    assert c.get_params() == m.get_params() and not hasattr(c, 'ids_') and m.n_features_in_ == 12

def test_sparse_weights_rules():
    s = torch.tensor([[0.9, -0.95]], dtype=torch.float64)
    w = sparse_weights(s, p=2)
    assert w[0, 1] < 0 < w[0, 0]                            # even p does not turn a dissimilar anchor into a similar one
    assert sparse_weights(s, p=2, negative='clamp')[0, 1] == 0

def test_faiss_missing_names_extra(monkeypatch):
    a, b = pairs(dtype=torch.float32)
    monkeypatch.setitem(sys.modules, 'faiss', None)
    with pytest.raises(ImportError, match=r'relrep_nb\[asif\]'): ASIF(k=5, index='faiss-flat').fit(a, b).embed_x(a[:2])

def test_faiss_flat_matches_exact():
    pytest.importorskip('faiss')
    a, b = pairs(dtype=torch.float32)
    x, y = pairs(20, seed=4, dtype=torch.float32)
    s_exact = ASIF(k=15).fit(a, b).scores(x, y)
    s_flat = ASIF(k=15, index='faiss-flat').fit(a, b).scores(x, y)
    assert torch.allclose(s_exact, s_flat, atol=1e-5)

def test_save_load_roundtrip(tmp_path):
    a, b = pairs()
    m = ASIF(k=10, p=3, negative='clamp').fit(a, b, ids=np.arange(300) * 2)
    m.save(tmp_path / 'm.pt')
    back = ASIF.load(tmp_path / 'm.pt')
    assert back.negative == 'clamp' and torch.equal(back.ids_, m.ids_)
    x, y = pairs(5, seed=2)
    assert torch.equal(back.scores(x, y), m.scores(x, y))
