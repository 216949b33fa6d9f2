"""Unit and property tests of relrep_nb.fmri on synthetic subjects (no data files, a few seconds)."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from relrep_nb.fmri import (check_subjects, segment_split, autocorr_lag, random_basis, synthetic_subjects,
                            SubjectRelative, cross_subject_accuracy, window_identification)

@given(T=st.integers(10, 400), n_segments=st.integers(1, 20), n_test=st.integers(1, 10), gap=st.integers(0, 10))
@settings(max_examples=300, deadline=None)
def test_split_gap_property(T, n_segments, n_test, gap):
    "No test TR lies within `gap` TRs of a training TR; every segment has both; the sets are disjoint."
    L = T // n_segments if n_segments <= T else 0
    if n_segments > T or L - n_test - 2 * gap < 1:
        with pytest.raises(ValueError): segment_split(T, n_segments, n_test, gap)
        return
    y, train, test = segment_split(T, n_segments, n_test, gap)
    assert np.abs(test[:, None] - train[None]).min() > gap
    assert set(y[train]) == set(y[test]) == set(range(n_segments))
    assert len(train) + len(test) <= T and train.max() < T and test.max() < T and (y[:L * n_segments] >= 0).all()

def test_relative_transfers_absolute_does_not():
    xs, y = synthetic_subjects(n_subjects=5, n_timepoints=240, n_features=40, n_segments=6, seed=3)
    _, train, test = segment_split(240, 6, n_test=10, gap=4)
    anchors = train[::2]
    rel = SubjectRelative('identity').fit(xs, anchors, train=train).transform(xs)
    acc_rel, acc_abs = cross_subject_accuracy(rel, y, train, test).mean(), cross_subject_accuracy(xs, y, train, test).mean()
    assert acc_rel > 0.9 and acc_abs < acc_rel - 0.3, (acc_rel, acc_abs)
    # an unknown orthogonal basis per subject leaves the relative space unchanged
    xr = [x @ random_basis(40, seed=s) for s, x in enumerate(xs)]
    np.testing.assert_allclose(SubjectRelative('identity').fit(xr, anchors, train=train).transform(xr), rel, atol=1e-4)

def test_task_informed_encoders_transfer_and_save(tmp_path):
    xs, y = synthetic_subjects(n_subjects=3, n_timepoints=200, n_features=30, n_segments=5, seed=1)
    _, train, test = segment_split(200, 5, n_test=8, gap=3)
    sr = SubjectRelative('mlp', hidden=(16,), epochs=30).fit(xs, train[::3], y=y, train=train)
    rel = sr.transform(xs)
    assert cross_subject_accuracy(rel, y, train, test).mean() > 0.8
    sr.save(tmp_path / 'sr.pt')
    np.testing.assert_allclose(SubjectRelative.load(tmp_path / 'sr.pt').transform(xs), rel, atol=1e-5)

def test_window_identification_on_shared_signal():
    xs, _ = synthetic_subjects(n_subjects=2, n_timepoints=150, seed=0)
    rel = SubjectRelative('identity').fit(xs, np.arange(0, 150, 3)).transform(xs)
    w = window_identification(rel[0], rel[1], width=10)
    assert w['accuracy'] > 10 * w['chance'] and w['accuracy'] <= w['mrr'] <= 1

def test_bad_input_errors():
    xs, y = synthetic_subjects(n_subjects=2, n_timepoints=60, seed=0)
    _, train, test = segment_split(60, 3, n_test=4, gap=2)
    with pytest.raises(ValueError, match='different lengths'): check_subjects([xs[0], xs[1][:50]])
    with pytest.raises(ValueError, match='training TRs'): SubjectRelative('identity').fit(xs, test[:3], train=train)
    with pytest.raises(ValueError, match='n_segments'): segment_split(5, 10, 1)
    with pytest.raises(ValueError, match='cannot hold'): segment_split(30, 3, n_test=5, gap=3)
    with pytest.raises(ValueError, match='one label per TR'): SubjectRelative('mlp').fit(xs, train[:3], y=y[:10], train=train)
    with pytest.raises(ValueError, match='outside'): SubjectRelative('identity').fit(xs, np.array([0, 60]))
    with pytest.raises(ValueError, match='NaN'): check_subjects([np.full((5, 3), np.nan)])
    with pytest.raises(TypeError, match='list of 2-d'): check_subjects('subjects')
    with pytest.raises(ValueError, match='subjects'): SubjectRelative('identity').fit(xs, train[:3], train=train).encode(xs[:1])
    with pytest.raises(ValueError, match='width'): window_identification(xs[0], xs[1], width=60)
    with pytest.raises(ValueError, match='kind'): random_basis(4, 'shear')

def test_autocorr_lag_is_deterministic_and_bounded():
    x = np.random.default_rng(0).standard_normal((300, 5))
    assert autocorr_lag(x, 0.1) == 1
    with pytest.raises(ValueError, match='stays above'): autocorr_lag(np.cumsum(x, 0), 1e-3, max_lag=3)

def test_estimator_protocol(tmp_path):
    "SubjectRelative follows the package's estimator protocol (tests/test_estimators.py): params, save/load, no code from files."
    import inspect, os, pickle
    from relrep_nb.core import TensorState
    xs, y = synthetic_subjects(n_subjects=2, n_timepoints=60, n_features=8, seed=0)
    est = SubjectRelative('mlp', hidden=(8,), epochs=3)
    assert isinstance(est, TensorState)
    named = {k for k in inspect.signature(SubjectRelative.__init__).parameters if k != 'self'}
    assert set(est.get_params()) == named and SubjectRelative(**est.get_params()).get_params() == est.get_params()
    assert est.fit(xs, np.arange(0, 40, 4), y=y, train=np.arange(40)) is est
    est.save(tmp_path / 'e.pt')
    a, b = est.transform(xs), SubjectRelative.load(tmp_path / 'e.pt').transform(xs)
    assert torch.equal(torch.as_tensor(a), torch.as_tensor(b))
    class Evil:
        def __reduce__(self): return (os.system, ('touch /tmp/relrep_nb_fmri_pwned',))
    (tmp_path / 'evil.pt').write_bytes(pickle.dumps(Evil()))
    with pytest.raises(ValueError): SubjectRelative.load(tmp_path / 'evil.pt')
    assert not os.path.exists('/tmp/relrep_nb_fmri_pwned')


def test_defaults_need_no_labels_and_mlp_needs_them():
    xs, y = synthetic_subjects(n_subjects=2, n_timepoints=80, n_features=10, seed=0)
    sr = SubjectRelative().fit(xs, np.arange(0, 80, 4))                       # default encoder: PCA, no labels
    assert sr.encoder == 'pca' and sr.n_features_in_ == 10 and sr.transform(xs).shape == (2, 80, 20)
    with pytest.raises(ValueError, match='give `y`'): SubjectRelative('mlp').fit(xs, np.arange(0, 80, 4))
    with pytest.raises(ValueError, match='encoder'): SubjectRelative('cnn').fit(xs, np.arange(0, 80, 4))   # checked at fit, not init

def test_mlp_head_has_one_output_per_distinct_label():
    xs, y = synthetic_subjects(n_subjects=2, n_timepoints=100, n_features=12, n_segments=4, seed=2)
    a = SubjectRelative('mlp', hidden=(8,), epochs=5).fit(xs, np.arange(0, 100, 5), y=y, train=np.arange(100))
    b = SubjectRelative('mlp', hidden=(8,), epochs=5).fit(xs, np.arange(0, 100, 5), y=100 * y + 3, train=np.arange(100))
    assert a.states_[0]['shape'].tolist() == b.states_[0]['shape'].tolist() == [12, 4]    # not max label + 1
    np.testing.assert_allclose(a.transform(xs), b.transform(xs), atol=1e-6)

def test_anchor_idx_and_not_fitted():
    from sklearn.exceptions import NotFittedError
    xs, _ = synthetic_subjects(n_subjects=2, n_timepoints=60, n_features=8, seed=0)
    m = SubjectRelative().fit(xs, anchor_idx=np.arange(0, 60, 6))
    np.testing.assert_array_equal(m.transform(xs), SubjectRelative().fit(xs, np.arange(0, 60, 6)).transform(xs))
    with pytest.raises(TypeError, match='unexpected keyword'): SubjectRelative().fit(xs, anchors=np.arange(0, 60, 6))   # the old name is gone
    with pytest.raises(TypeError, match='anchor_idx'): SubjectRelative().fit(xs)
    with pytest.raises(NotFittedError, match='anchor_idx'): SubjectRelative().transform(xs)
    with pytest.raises(ValueError, match='expecting 8 features'): m.encode([x[:, :5] for x in xs])
