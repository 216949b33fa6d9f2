"Issue 60, items 2, 8, 10, 11, 15, 17, 18 and 19: a dask source reading the destination, DataFrame columns (names, order, missing values, non-numeric types), k-means anchors on few distinct rows, thread limits under concurrency, bfloat16 subjects, seeds at the top of their range, sparse matrices in plots."
import threading, warnings
import numpy as np
import pandas as pd
import pytest
import torch

import relrep_nb
from relrep_nb.core import RelativeProjector, as_tensor
from relrep_nb.robust import RobustProjector
from relrep_nb.translate import Translator


def _x(n=40, d=6, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)


# ---- item 2: a dask source that reads the destination store -------------------------------------------------------------

def _store(path, x):
    zarr = pytest.importorskip('zarr')
    z = zarr.create_array(str(path), shape=x.shape, chunks=(10, x.shape[1]), dtype=x.dtype)
    z[:] = x
    return path


@pytest.mark.parametrize('make', ['open_embeddings', 'derived', 'from_zarr'])
def test_project_to_zarr_refuses_a_dask_source_reading_dest(tmp_path, make):
    da = pytest.importorskip('dask.array')
    from relrep_nb.scale import open_embeddings, open_store, project_to_zarr
    x = _x()
    dest = _store(tmp_path / 'x.zarr', x)
    p = RelativeProjector().fit(x[:6])                       # 6 anchors: the output has the input's width
    src = {'open_embeddings': lambda: open_embeddings(dest), 'derived': lambda: open_embeddings(dest)[:, :] * 2,
           'from_zarr': lambda: da.from_zarr(str(dest))}[make]()
    with pytest.raises(ValueError, match='dest.*source'):
        project_to_zarr(p, src, dest, overwrite=True, scheduler='synchronous', progress=False)
    assert np.array_equal(open_store(dest)[:], x)            # nothing deleted, nothing written
    assert open_store(dest).attrs.get('complete', True) is True


def test_project_to_zarr_dask_source_elsewhere_still_works(tmp_path):
    pytest.importorskip('dask.array')
    from relrep_nb.scale import open_embeddings, open_store, project_to_zarr
    x = _x()
    src = _store(tmp_path / 'x.zarr', x)
    p = RelativeProjector().fit(x[:6])
    project_to_zarr(p, open_embeddings(src), tmp_path / 'y.zarr', scheduler='synchronous', progress=False)
    project_to_zarr(p, open_embeddings(src), tmp_path / 'y.zarr', overwrite=True, scheduler='synchronous', progress=False)
    assert np.allclose(open_store(tmp_path / 'y.zarr')[:], p.transform(x), atol=1e-6)
    assert np.array_equal(open_store(src)[:], x)


# ---- item 8: feature names recorded at fit and checked at transform -----------------------------------------------------

_COLS = [f'f{i}' for i in range(6)]


@pytest.mark.parametrize('make', [lambda: RelativeProjector(), lambda: RobustProjector(),
                                  lambda: relrep_nb.ProductProjector(), lambda: RelativeProjector('wip', n_anchors=10)])
def test_reordered_or_renamed_columns_refused(make):
    x = _x(); df = pd.DataFrame(x, columns=_COLS)
    est = make().fit(df)
    assert isinstance(est.feature_names_in_, np.ndarray) and est.feature_names_in_.dtype == object
    assert est.feature_names_in_.tolist() == _COLS
    with warnings.catch_warnings():
        warnings.simplefilter('error')                        # the fitted names given again: no warning
        same = est.transform(df)
    with pytest.raises(ValueError, match='same order') as e: est.transform(df[_COLS[::-1]])
    assert "['f5', 'f4'" in str(e.value) and "['f0', 'f1'" in str(e.value)    # both orders named
    with pytest.raises(ValueError, match='unseen at fit time'): est.transform(df.rename(columns={'f2': 'g2'}))
    with pytest.warns(UserWarning, match='does not have valid feature names'): out = est.transform(x)
    assert np.array_equal(out, same)


def test_translator_reordered_columns_refused():
    x, y = _x(), _x(d=4, seed=1)
    t = Translator('affine').fit(pd.DataFrame(x, columns=_COLS), y)
    assert t.feature_names_in_.tolist() == _COLS
    with pytest.raises(ValueError, match='feature names should match'): t.transform(pd.DataFrame(x, columns=_COLS)[_COLS[::-1]])
    assert np.allclose(t.transform(pd.DataFrame(x, columns=_COLS)), Translator('affine').fit(x, y).transform(x))


def test_feature_names_saved_loaded_and_forgotten(tmp_path):
    x = _x(); df = pd.DataFrame(x, columns=_COLS)
    p = RelativeProjector('euclidean').fit(df); p.save(tmp_path / 'p.pt')
    q = relrep_nb.load(tmp_path / 'p.pt')
    assert isinstance(q.feature_names_in_, np.ndarray) and q.feature_names_in_.tolist() == _COLS
    with pytest.raises(ValueError, match='same order'): q.transform(df[_COLS[::-1]])
    assert not hasattr(p.fit(x), 'feature_names_in_')                             # a refit on an array forgets them
    assert not hasattr(RelativeProjector().fit(pd.DataFrame(x)), 'feature_names_in_')   # integer column names: none
    with pytest.warns(UserWarning, match='fitted without feature names'): RelativeProjector().fit(x).transform(df)


@pytest.mark.parametrize('est', [RelativeProjector(), RobustProjector()], ids=['RelativeProjector', 'RobustProjector'])
def test_sklearn_dataframe_column_names_check(est):
    from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency
    check_dataframe_column_names_consistency(type(est).__name__, est)


# ---- item 19: DataFrame columns that are not numbers -------------------------------------------------------------------

def _frame():
    return pd.DataFrame({'a': np.arange(4.), 'b': [1., 2., 3., 4.]})


@pytest.mark.parametrize('col, err, msg', [
    (pd.array([1, None, 3, 4], dtype='Int64'), ValueError, r"`x` contains missing values \(pd.NA.*column 'c'"),
    (pd.array([1.5, None, 3, 4], dtype='Float64'), ValueError, r"`x` contains missing values \(pd.NA.*column 'c'"),
    (['u', 'v', 'w', 'z'], TypeError, r"`x` has a non-numeric column 'c' \(object"),
    (pd.array(['u', 'v', 'w', 'z'], dtype='string'), TypeError, r"`x` has a non-numeric column 'c' \(string"),
    (pd.date_range('2020-01-01', periods=4), TypeError, r"`x` has a non-numeric column 'c' \(datetime64"),
    (pd.to_timedelta([1, 2, 3, 4], unit='s'), TypeError, r"`x` has a non-numeric column 'c' \(timedelta64"),
    (pd.Categorical(['u', 'v', 'u', 'v']), TypeError, r"`x` has a non-numeric column 'c' \(category"),
])
def test_dataframe_columns_named(col, err, msg):
    df = _frame().assign(c=col)
    with pytest.raises(err, match=msg): as_tensor(df)
    p = RelativeProjector().fit(_frame().assign(c=1.))
    with pytest.raises(err, match=msg): p.transform(df)
    with pytest.raises(err, match=msg.replace('`x`', '`anchors`')): RelativeProjector().fit(df)


def test_dataframe_numeric_columns_accepted():
    df = _frame().assign(c=pd.array([1, 2, 3, 4], dtype='Int64'), d=pd.array([0.5, 1, 2, 3], dtype='Float64'),
                         e=[True, False, True, True], f=pd.Categorical([1., 2., 1., 2.]))
    t, was_numpy = as_tensor(df)
    assert was_numpy and t.shape == (4, 6) and t.is_floating_point()
    assert t[:, 2].tolist() == [1., 2., 3., 4.] and t[:, 5].tolist() == [1., 2., 1., 2.]
    assert as_tensor(_frame().astype(np.float32))[0].dtype == torch.float32         # plain numpy columns keep their dtype
    with pytest.raises(ValueError, match='`x` contains NaN'): as_tensor(_frame().assign(c=[1., np.nan, 2., 3.]))
    t1, _ = as_tensor(pd.Series([1., 2.], name='s'), ndim=1)
    assert t1.tolist() == [1., 2.]
    with pytest.raises(ValueError, match="`x` contains missing values"): as_tensor(pd.Series(pd.array([1, None], dtype='Int64')), ndim=1)


# ---- item 10: k-means anchors on data with few distinct rows ------------------------------------------------------------

def _few_distinct(n, distinct=5, d=8, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(distinct, d))[rng.integers(0, distinct, n)].astype(np.float32)


def _old_nearest_distinct(x, c):
    "The greedy rule, one conflict settled per claimed row and pass (the reference for the result)."
    k, n = c.shape[0], x.shape[0]
    taken = torch.zeros(n, dtype=torch.bool); out = torch.full((k,), -1, dtype=torch.long); todo = torch.arange(k)
    while len(todo):
        d = (x.pow(2).sum(1)[:, None] - 2 * x @ c[todo].T + c[todo].pow(2).sum(1)[None]).clamp_min(0)
        d[taken] = float('inf')
        best_d, best_i = d.min(0)
        order = torch.argsort(best_d, stable=True)
        first = torch.ones(len(order), dtype=torch.bool)
        srt, perm = torch.sort(best_i[order], stable=True)
        dup = torch.zeros(len(srt), dtype=torch.bool); dup[1:] = srt[1:] == srt[:-1]
        first[perm[dup]] = False
        win = order[first]
        out[todo[win]] = best_i[win]; taken[best_i[win]] = True
        todo = todo[order[~first]]
    return out


def test_kmeans_anchors_few_distinct_rows_settle_together(monkeypatch):
    from relrep_nb import anchors
    n, k = 3000, 300
    x = _few_distinct(n)
    seen = []
    real = anchors._sqdist
    def counting(xb, sq, c):
        seen.append(xb.shape[0] * c.shape[0]); return real(xb, sq, c)
    monkeypatch.setattr(anchors, '_sqdist', counting)
    t = torch.from_numpy(x); c = t[torch.randint(0, n, (k,), generator=torch.Generator().manual_seed(0))] + 0.01
    out = anchors._nearest_distinct(t, t.pow(2).sum(1), c, None)
    assert len(set(out.tolist())) == k and int(out.min()) >= 0
    assert sum(seen) <= 2 * n * k, sum(seen) / (n * k)   # one pass over every row (before: about k / 5 passes)
    assert torch.equal(out, _old_nearest_distinct(t, c))  # the same rule, the same anchors


@pytest.mark.parametrize('dup', [False, True])
def test_nearest_distinct_same_rule_as_before(dup):
    from relrep_nb import anchors
    g = torch.Generator().manual_seed(1)
    x = torch.randn(200, 5, generator=g, dtype=torch.float64)
    if dup: x = x[torch.randint(0, 30, (200,), generator=g)]
    c = x[torch.randint(0, 200, (40,), generator=g)] + 0.05 * torch.randn(40, 5, generator=g, dtype=torch.float64)
    assert torch.equal(anchors._nearest_distinct(x, x.pow(2).sum(1), c, None), _old_nearest_distinct(x, c))


def test_sample_anchors_kmeans_few_distinct_rows():
    from relrep_nb.anchors import sample_anchors
    x = _few_distinct(4000)
    idx = sample_anchors(x, 400, method='kmeans', n_iter=2)
    assert len(np.unique(idx)) == 400 and idx.min() >= 0 and idx.max() < len(x)
    assert len(np.unique(x[idx], axis=0)) == 5               # every distinct row is among the anchors


# ---- item 11: process-wide thread limits under concurrent use ------------------------------------------------------------

def _limits():
    threadpoolctl = pytest.importorskip('threadpoolctl')
    return sorted((i['internal_api'], i['prefix'], i['num_threads']) for i in threadpoolctl.threadpool_info())


def _fresh_thread_torch():
    out = []; t = threading.Thread(target=lambda: out.append(torch.get_num_threads())); t.start(); t.join()
    return out[0]


def test_concurrent_use_restores_thread_limits(tmp_path):
    da = pytest.importorskip('dask.array')
    from concurrent.futures import ThreadPoolExecutor
    from relrep_nb.asif import ASIF
    from relrep_nb.scale import project_to_zarr, transform_dask
    before, torch_before, fresh_before = _limits(), torch.get_num_threads(), _fresh_thread_torch()
    x = _x(1200, 16)
    p = RelativeProjector().fit(x[:20])
    m = ASIF(k=10).fit(x[:200], _x(200, 8, seed=1))
    def work(i):
        for j in range(4):
            transform_dask(p, da.from_array(x, chunks=(100, 16))).compute(scheduler='threads')
            m.predict(x[:600], _x(50, 8, seed=2))
            project_to_zarr(p, da.from_array(x, chunks=(300, 16)), tmp_path / f'o{i}_{j}.zarr', progress=False)
    with ThreadPoolExecutor(6) as ex: list(ex.map(work, range(6)))
    assert _limits() == before
    assert torch.get_num_threads() == torch_before and _fresh_thread_torch() == fresh_before


def test_torch_threads_nested_and_concurrent():
    from relrep_nb.core import torch_threads
    before = _limits()
    with torch_threads(1):
        assert all(n == 1 for *_, n in _limits())
        with torch_threads(2): assert torch.get_num_threads() == 2
        assert torch.get_num_threads() == 1
    assert _limits() == before
    entered, second_in, first_gone = threading.Event(), threading.Event(), threading.Event()
    def first():                                             # enters first, leaves (and ends) while the second is inside
        with torch_threads(1):
            entered.set(); second_in.wait()
    def second():
        entered.wait()
        with torch_threads(1):
            second_in.set(); first_gone.wait(); x = torch.randn(64, 64); float((x @ x).sum())
    a, b = threading.Thread(target=first), threading.Thread(target=second)
    a.start(); b.start(); a.join(); first_gone.set(); b.join()
    assert _limits() == before                                # before: the second restored the first's limit of 1


# ---- item 15: SubjectRelative on bfloat16 subjects ----------------------------------------------------------------------

@pytest.mark.parametrize('encoder', ['pca', 'identity'])
def test_subject_relative_bfloat16(encoder):
    from relrep_nb.fmri import SubjectRelative, synthetic_subjects
    xs = synthetic_subjects(n_subjects=2, n_timepoints=60, n_features=6, seed=0)[0]
    xb = torch.as_tensor(np.asarray(xs)).to(torch.bfloat16)
    ref = torch.as_tensor(np.asarray(xs)).to(torch.bfloat16).float()       # the same values in float32
    m = SubjectRelative(encoder, n_components=3).fit(xb, np.arange(0, 60, 6))
    r = SubjectRelative(encoder, n_components=3).fit(ref, np.arange(0, 60, 6))
    assert np.allclose(m.transform(xb), r.transform(ref), atol=1e-5)
    assert np.allclose(m.transform([x for x in xb]), r.transform(ref), atol=1e-5)


# ---- item 17: every accepted seed works end to end ------------------------------------------------------------------------

@pytest.mark.parametrize('seed', [2**31, 2**62, 2**63 - 1])
def test_subject_relative_mlp_large_seed(seed):
    from relrep_nb.fmri import SubjectRelative, synthetic_subjects
    xs, y = synthetic_subjects(n_subjects=2, n_timepoints=40, n_features=6, seed=0)
    m = SubjectRelative('mlp', hidden=(8,), epochs=2, seed=seed).fit(xs, np.arange(0, 40, 4), y=y)
    assert m.transform(xs).shape[0] == 2


@pytest.mark.parametrize('seed', [2**31, 2**32 + 5, 2**63 - 1])
def test_asif_faiss_ivf_large_seed(seed):
    pytest.importorskip('faiss')
    from relrep_nb.asif import ASIF
    xa, ya = _x(400, 8), _x(400, 6, seed=1)
    m = ASIF(k=10, index='faiss-ivf', seed=seed).fit(xa, ya)
    assert m.predict(xa[:5], ya[:20]).shape[0] == 5


# ---- item 18: sparse matrices in the plots -------------------------------------------------------------------------------

def test_plots_accept_sparse_matrices():
    sp = pytest.importorskip('scipy.sparse')
    pytest.importorskip('matplotlib')
    import matplotlib; matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from relrep_nb.plot import coupling_plot, similarity_heatmap
    r = sp.random(10, 60, density=0.2, random_state=0, format='csr')
    ax = similarity_heatmap(r, labels=[0, 1] * 5)
    assert ax.images[0].get_array().shape == (10, 60)
    assert np.allclose(np.sort(np.asarray(ax.images[0].get_array()).ravel()), np.sort(r.toarray().ravel()))
    for P in (sp.coo_matrix(np.eye(4) / 4), sp.csr_array(np.eye(4) / 4), torch.eye(4).to_sparse() / 4):
        ax = coupling_plot(P, labels_x=[0, 0, 1, 1], labels_y=[0, 1, 0, 1])
        assert ax.get_title() == 'mass within classes: 0.50'
    plt.close('all')
    with pytest.raises(ValueError, match='`r` is a sparse'): similarity_heatmap(sp.csr_matrix((200_000, 200_000)))


def test_project_to_zarr_progress_false_is_silent(tmp_path, capfd):
    "A flag named like the progress-bar helper used to shadow it: `progress=False` still drew the bar."
    pytest.importorskip('dask.array')
    from relrep_nb.scale import project_to_zarr
    x = _x()
    np.save(tmp_path / 'x.npy', x)
    project_to_zarr(RelativeProjector().fit(x[:6]), tmp_path / 'x.npy', tmp_path / 'y.zarr', scheduler='synchronous', progress=False)
    assert 'projecting' not in capfd.readouterr().err
