"Issue 60, items 5-7, 9, 13, 14 and 16: metrics right at float32/bfloat16 and at any scale, ASIF in half precision and on 0 queries, labels as classes."
import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import f1_score

from relrep_nb.asif import ASIF
from relrep_nb.metrics import (foscttm, jaccard_at_k, linear_probe, macro_f1, match_ranks, mrr, recall_at_k,
                               similarity_pearson, weighted_f1)


def _exact_ranks(x, y):
    "Euclidean ranks of the true match from explicit float64 differences (ties: expected rank)."
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    d = np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))
    own = np.diag(d)[:, None]
    return 1 + (d < own).sum(1) + ((d == own).sum(1) - 1) / 2


def _exact_mrr(x, y): return float(np.mean(1 / _exact_ranks(x, y)))


def _exact_foscttm(x, y):
    n = len(x)
    return float(np.mean(((_exact_ranks(x, y) - 1) + (_exact_ranks(y, x) - 1)) / (2 * (n - 1))))


def _far_row_data(seed=3, n=240, d=12, far=2e4):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)); y = x + 0.8 * rng.normal(size=(n, d))
    x[5] *= far; y[5] *= far                          # one far-away pair
    return x.astype(np.float32), y.astype(np.float32)


# item 5: one far row must not turn every other query's Euclidean ranks into ties
def test_far_row_float32_euclidean_ranks_exact():
    x, y = _far_row_data()
    ref = _exact_ranks(x, y)
    assert match_ranks(x, y, 'euclidean').tolist() == pytest.approx(ref.tolist())
    assert mrr(x, y, similarity='euclidean') == pytest.approx(_exact_mrr(x, y), abs=1e-9)
    assert recall_at_k(x, y, k=3, similarity='euclidean') == pytest.approx(float(np.mean(ref <= 3)), abs=1e-9)
    assert foscttm(x, y) == pytest.approx(_exact_foscttm(x, y), abs=1e-9)


def test_heavy_tailed_float32_euclidean_matches_float64():
    rng = np.random.default_rng(7)
    x = rng.standard_t(1.2, size=(300, 6)); y = x + rng.standard_t(1.2, size=(300, 6))   # heavy tails: a few huge rows
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    assert mrr(x32, y32, similarity='euclidean') == pytest.approx(_exact_mrr(x32, y32), abs=1e-3)
    assert foscttm(x32, y32) == pytest.approx(_exact_foscttm(x32, y32), abs=1e-3)


def test_far_row_exact_ties_still_counted():
    x, y = _far_row_data(seed=4, n=50)
    y[11] = y[10]                                     # query 10's match has an exact duplicate: rank 1.5 if nearest
    x[10] = y[10]
    r = match_ranks(x, y, 'euclidean')
    assert r[10] == 1.5 and r[11] >= 1.5
    assert match_ranks(np.ones((4, 3), np.float32), np.ones((4, 3), np.float32), 'euclidean').tolist() == [2.5] * 4


def test_far_row_inner_and_l1_ranks_exact():
    x, y = _far_row_data(seed=5, n=120)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    s = x64 @ y64.T; own = np.diag(s)[:, None]
    ref = 1 + (s > own).sum(1) + ((s == own).sum(1) - 1) / 2
    assert match_ranks(x, y, 'inner').tolist() == pytest.approx(ref.tolist())
    d = np.abs(x64[:, None] - y64[None]).sum(-1); own = np.diag(d)[:, None]
    ref = 1 + (d < own).sum(1) + ((d == own).sum(1) - 1) / 2
    r = np.asarray(match_ranks(x, y, 'l1'))         # float32 sums of 12 terms: a near-tie (within rounding) may count half
    assert np.abs(r - ref).max() <= 0.5 and np.mean(r == ref) > 0.95


# item 6: half-precision embeddings are scored in float32
@pytest.mark.parametrize('dtype', [torch.bfloat16, torch.float16])
def test_low_precision_retrieval_equals_float32(dtype):
    g = torch.Generator().manual_seed(11)
    x = torch.randn(400, 24, generator=g); y = x + 0.6 * torch.randn(400, 24, generator=g)
    xl, yl = x.to(dtype), y.to(dtype)
    xf, yf = xl.float(), yl.float()                   # the same values in float32
    for sim in ('cosine', 'euclidean', 'inner'):
        assert mrr(xl, yl, similarity=sim) == pytest.approx(mrr(xf, yf, similarity=sim), abs=1e-12)
        assert recall_at_k(xl, yl, k=5, similarity=sim) == pytest.approx(recall_at_k(xf, yf, k=5, similarity=sim), abs=1e-12)
    assert foscttm(xl, yl) == pytest.approx(foscttm(xf, yf), abs=1e-12)
    assert jaccard_at_k(xl, yl, k=5) == pytest.approx(jaccard_at_k(xf, yf, k=5), abs=1e-12)


# item 7: jaccard_at_k and similarity_pearson do not depend on the data's scale
@pytest.mark.parametrize('scale', [1e20, 1e-25, 3e30])
@pytest.mark.parametrize('sim', ['cosine', 'euclidean'])
def test_jaccard_and_pearson_scale_free(scale, sim):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(150, 10)); y = x + rng.normal(size=(150, 10))
    for dt in (np.float64, np.float32):
        if dt == np.float32 and not 1e-30 < scale < 1e30: continue     # not representable in float32
        xs, ys = (x * scale).astype(dt), (y * scale).astype(dt)
        base_j = jaccard_at_k(x.astype(dt), y.astype(dt), k=6, similarity=sim)
        base_p = similarity_pearson(x.astype(dt), y.astype(dt), similarity=sim)
        j, p = jaccard_at_k(xs, ys, k=6, similarity=sim), similarity_pearson(xs, ys, similarity=sim)
        assert j == pytest.approx(base_j, abs=0.02 if dt == np.float32 else 1e-12)
        assert np.isfinite(p) and p == pytest.approx(base_p, abs=1e-5 if dt == np.float32 else 1e-9)


def test_pearson_small_scale_not_called_constant_but_constant_still_refused():
    rng = np.random.default_rng(9)
    x = rng.normal(size=(40, 5)) * 1e-7; y = x + rng.normal(size=(40, 5)) * 1e-7   # inside the unscaled range
    assert similarity_pearson(x, y, similarity='inner') == pytest.approx(similarity_pearson(x * 1e7, y * 1e7, similarity='inner'), abs=1e-9)
    with pytest.raises(ValueError, match='`x` are constant'):
        similarity_pearson(np.ones((10, 3)) * 1e-30, y[:10], similarity='cosine')


# item 13: ASIF fitted in float16/bfloat16 scores in float32
@pytest.mark.parametrize('dtype', [torch.float16, torch.bfloat16])
def test_asif_half_precision_scores_predict_explain(dtype):
    rng = np.random.default_rng(4)
    A, B = rng.normal(size=(60, 6)), rng.normal(size=(60, 5))
    m = ASIF(k=6, p=3).fit(torch.tensor(A).to(dtype), torch.tensor(B).to(dtype))
    q, c = torch.tensor(A[:8] + 0.01).to(dtype), torch.tensor(B[:8]).to(dtype)
    ref = ASIF(k=6, p=3).fit(torch.tensor(A).to(dtype).float(), torch.tensor(B).to(dtype).float())
    s = m.scores(q, c)
    assert s.dtype == torch.float32 and torch.isfinite(s).all()
    # the anchors are stored (normalised) in `dtype`: close to a float32 model of the same values, not equal
    assert torch.allclose(s, ref.scores(q.float(), c.float()), atol=3e-2 if dtype == torch.bfloat16 else 3e-3)
    assert m.predict(q, c).tolist() == s.argmax(1).tolist()
    e = m.explain(q, c, i=2)
    assert e['candidate'] == int(s[2].argmax()) and e['score'] == pytest.approx(float(s[2].max()), abs=1e-5)


# item 14: ASIF.predict on 0 queries: an empty result, as embed_x and scores
def test_asif_predict_zero_queries():
    rng = np.random.default_rng(5)
    A, B = rng.normal(size=(30, 4)), rng.normal(size=(30, 3))
    m = ASIF(k=4).fit(A, B)
    out = m.predict(A[:0], B[:5])
    assert isinstance(out, np.ndarray) and out.shape == (0,) and out.dtype == np.int64
    t = m.predict(torch.tensor(A[:0]), torch.tensor(B[:5]))
    assert isinstance(t, torch.Tensor) and t.shape == (0,) and t.dtype == torch.long
    assert m.scores(A[:0], B[:5]).shape == (0, 5)


# item 16: labels as classes first (scikit-learn's behaviour), or an error naming the argument
def test_f1_strings_categoricals_uint64_negative():
    t, p = ['ant', 'bee', 'bee', 'cow', 'ant'], ['ant', 'bee', 'cow', 'cow', 'bee']
    for avg, f in (('macro', macro_f1), ('weighted', weighted_f1)):
        want = f1_score(t, p, average=avg)
        assert f(t, p) == pytest.approx(want)
        assert f(pd.Categorical(t), pd.Categorical(p)) == pytest.approx(want)
        assert f(pd.Series(t, dtype='category'), np.array(p, dtype=object)) == pytest.approx(want)
    u = np.array([3, 2**64 - 1, 2**63 + 1, 3], dtype=np.uint64); v = np.array([3, 2**64 - 1, 3, 2**63 + 1], dtype=np.uint64)
    assert macro_f1(u, v) == pytest.approx(f1_score(u.astype(str), v.astype(str), average='macro'))
    assert macro_f1([-1, 0, 0, 7], [-1, 0, -1, 7]) == pytest.approx(f1_score([-1, 0, 0, 7], [-1, 0, -1, 7], average='macro'))
    with pytest.raises(TypeError, match='`y_pred`'): macro_f1([0, 1], [0.5, 1.0])
    with pytest.raises(TypeError, match='`y_true` holds strings and `y_pred` numbers'): macro_f1(['a', 'b'], [0, 1])
    with pytest.raises(TypeError, match='`y_true`'): weighted_f1(pd.Categorical(['a', None]), ['a', 'b'])


# item 9: linear_probe codes labels as classes
def test_linear_probe_labels_as_classes():
    rng = np.random.default_rng(6)
    x = np.r_[rng.normal(0, 1, (20, 3)), rng.normal(4, 1, (20, 3))]
    for lo, hi in ((0, 50_000_000), ('no', 'yes'), (-1, 0), (2**64 - 2, 2**64 - 1)):
        y = np.array([lo] * 20 + [hi] * 20, dtype=np.uint64 if isinstance(hi, int) and hi > 2**62 else None)
        pred = linear_probe(x, y, x[[0, 39]], epochs=50)
        assert pred.tolist() == [lo, hi]
    pred = linear_probe(x, pd.Categorical(['a'] * 20 + ['b'] * 20), x[[1, 38]], epochs=50)
    assert pred.tolist() == ['a', 'b']
    with pytest.raises(TypeError, match='`y_train`'): linear_probe(x, np.r_[np.zeros(20), np.ones(20) + 0.5], x)
