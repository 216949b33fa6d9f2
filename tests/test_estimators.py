"""One estimator protocol (DESIGN.md, relrep_nb.base) for all eight estimators of the package: scikit-learn's parameter
contract (construct with no arguments, clone, get/set_params), validation at fit, NotFittedError, save -> relrep_nb.load,
defaults that fit on 400 samples, scikit-learn's own estimator checks, pipelines and grid search, and the vocabulary
(the names used before it are gone)."""
import inspect, os, pickle, warnings
import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import relrep_nb
from relrep_nb.base import TensorState

def _data(seed=0, n=60, d=6):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=torch.float64), torch.randn(n, d + 2, generator=g, dtype=torch.float64)

def _subjects(n=60, d=6, seed=0):
    from relrep_nb.fmri import synthetic_subjects
    return synthetic_subjects(n_subjects=2, n_timepoints=n, n_features=d, seed=seed)[0]

def _dense(v):
    if torch.is_tensor(v): return v.to_dense() if v.layout != torch.strided else v
    return torch.as_tensor(v.toarray() if hasattr(v, 'toarray') else np.asarray(v))

# name -> (small estimator, fit (est, x, y), output of a fitted estimator (est, x, y), (parameter, invalid value))
CASES = {
    'RelativeProjector': (lambda: relrep_nb.RelativeProjector('wip', pre='center', post='standardize', sim_kw=dict(shrinkage=0.1)),
                          lambda e, x, y: e.fit(x[:20], reference=x), lambda e, x, y: e.transform(x), ('pre', 'whiten')),
    'ProductProjector': (lambda: relrep_nb.ProductProjector(), lambda e, x, y: e.fit(x[:20], reference=x),
                         lambda e, x, y: e.transform(x), ('similarities', ['cosine', 'cosine'])),
    'RobustProjector': (lambda: relrep_nb.RobustProjector(center=True), lambda e, x, y: e.fit(x[:20]),
                        lambda e, x, y: e.transform(x), ('rtol', -1.0)),
    'Translator': (lambda: relrep_nb.Translator('affine', std_scale='global'), lambda e, x, y: e.fit(x, y),
                   lambda e, x, y: e.transform(x), ('method', 'rotation')),
    'ASIF': (lambda: relrep_nb.ASIF(k=10, p=4), lambda e, x, y: e.fit(x, y),
             lambda e, x, y: e.scores(x[:7], y[:9]), ('similarity', 'euclid')),
    'LearnedGW': (lambda: relrep_nb.LearnedGW(dim=4, hidden=(16, 16), n_steps=5, n_restarts=1, batch_size=32),
                  lambda e, x, y: e.fit(x, y), lambda e, x, y: e.embed_x(x), ('dim', 0)),
    'PARAM': (lambda: relrep_nb.PARAM(n_anchors=4, n_steps=5), lambda e, x, y: e.fit([x, y]),
              lambda e, x, y: e.anchors_for(y), ('temperature', 0.0)),
    'SubjectRelative': (lambda: relrep_nb.SubjectRelative('pca', n_components=3),
                        lambda e, x, y: e.fit(_subjects(), np.arange(0, 60, 6)), lambda e, x, y: e.transform(_subjects()),
                        ('encoder', 'cnn')),
}

@pytest.fixture(params=sorted(CASES))
def case(request): return request.param, *CASES[request.param]

def _init_names(cls):
    sig = inspect.signature(cls.__init__).parameters
    return {k for k, p in sig.items() if k != 'self' and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}

def test_default_construction_clone_and_params(case):
    name, make, *_ = case
    cls = type(make())
    est = cls()                                                    # every estimator constructs with no arguments
    assert isinstance(est, TensorState), f'{name} must use relrep_nb.base.TensorState'
    assert set(est.get_params(deep=True)) == _init_names(cls), f'{name}.get_params must list exactly the __init__ parameters'
    c = clone(make())
    assert type(c) is cls and c.get_params() == make().get_params()
    assert type(est)(**est.get_params()).get_params() == est.get_params()
    assert repr(est).startswith(name + '(')

def test_init_stores_arguments_unchanged(case):
    name, make, *_ = case
    est = make()
    for k, v in est.get_params().items(): assert getattr(est, k) is v or getattr(est, k) == v
    public_fitted = [k for k in vars(est) if k.endswith('_') and not k.startswith('_')]
    assert not public_fitted, f'{name}.__init__ sets fitted attributes {public_fitted}'

def test_set_params_round_trip(case):
    name, make, _, _, (param, _bad) = case
    est = make(); p = est.get_params()
    key = 'seed' if 'seed' in p else param
    new = 7 if key == 'seed' else p[key]
    assert est.set_params(**{key: new}) is est and est.get_params()[key] == new
    with pytest.raises(ValueError): est.set_params(not_a_parameter=1)

def test_invalid_value_refused_by_fit_not_init(case):
    name, make, fit, _, (param, bad) = case
    x, y = _data()
    est = make().set_params(**{param: bad})                         # accepted and stored as given ...
    assert est.get_params()[param] == bad
    with pytest.raises((ValueError, TypeError)) as e: fit(est, x, y)  # ... refused by fit, naming the parameter
    assert param in str(e.value), f'{name}: the error for an invalid `{param}` does not name it: {e.value}'

def test_unfitted_use_raises_not_fitted(case, tmp_path):
    name, make, fit, out, _ = case
    x, y = _data(); est = make()
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)
    with pytest.raises(NotFittedError): out(est, x, y)
    with pytest.raises(NotFittedError): check_is_fitted(est)
    with pytest.raises(NotFittedError): est.save(tmp_path / 'e.pt')
    assert fit(est, x, y) is est, f'{name}.fit must return self'
    check_is_fitted(est)

def test_save_load_identical(case, tmp_path):
    name, make, fit, out, _ = case
    x, y = _data(); est = make(); fit(est, x, y)
    est.save(tmp_path / 'e.pt')
    est2 = relrep_nb.load(tmp_path / 'e.pt')                        # the generic loader returns the right class
    assert type(est2) is type(est) and est2.get_params() == est.get_params()
    assert torch.equal(_dense(out(est, x, y)), _dense(out(est2, x, y))), f'{name}: loaded estimator gives different outputs'
    est3 = type(est).load(tmp_path / 'e.pt')
    assert torch.equal(_dense(out(est, x, y)), _dense(out(est3, x, y)))
    check_is_fitted(est2)

def test_pickle_round_trip(case):
    name, make, fit, out, _ = case
    x, y = _data(); est = make(); fit(est, x, y)
    assert torch.equal(_dense(out(est, x, y)), _dense(out(pickle.loads(pickle.dumps(est)), x, y)))

class _Evil:
    def __reduce__(self): return (os.system, ('touch /tmp/relrep_nb_pwned',))

def test_malicious_file_refused(case, tmp_path):
    name, make, _, _, _ = case
    p = tmp_path / 'evil.pt'
    torch.save({'config': {}, 'tensors': {}, 'x': _Evil()}, p)
    with pytest.raises(ValueError): type(make()).load(p)
    with pytest.raises(ValueError): relrep_nb.load(p)
    p.write_bytes(pickle.dumps(_Evil()))
    with pytest.raises(ValueError): relrep_nb.load(p)
    assert not os.path.exists('/tmp/relrep_nb_pwned')

def test_failed_save_keeps_previous_file(case, tmp_path, monkeypatch):
    name, make, fit, out, _ = case
    x, y = _data(); est = make(); fit(est, x, y)
    est.save(tmp_path / 'e.pt'); before = (tmp_path / 'e.pt').read_bytes()
    import relrep_nb.base as base
    def boom(*a, **k): raise OSError('disk full')
    monkeypatch.setattr(base.os, 'fsync', boom)
    with pytest.raises(OSError): est.save(tmp_path / 'e.pt')
    assert (tmp_path / 'e.pt').read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ['e.pt']

def test_fitted_state_is_owned(case):
    "Mutating the caller's arrays after fit does not change the fitted estimator's outputs."
    name, make, fit, out, _ = case
    if name == 'SubjectRelative': pytest.skip('SubjectRelative copies its subjects on input (numpy, float32)')
    x, y = _data(); est = make(); fit(est, x, y)
    before = _dense(out(est, x.clone(), y.clone()))
    xx, yy = x.clone(), y.clone()
    x.mul_(-3).add_(1); y.mul_(2)
    assert torch.equal(_dense(out(est, xx, yy)), before), f'{name} keeps a view of the data it was fitted on'

# ---- defaults that work on a user's small data ----------------------------------------------------------------------

def _fit_defaults(name, n=400):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 12)).astype(np.float32); y = x @ rng.standard_normal((12, 9)).astype(np.float32)
    cls = type(CASES[name][0]())
    if name == 'SubjectRelative':
        from relrep_nb.fmri import synthetic_subjects
        xs = synthetic_subjects(n_subjects=2, n_timepoints=n, n_features=12, seed=0)[0]
        return cls().fit(xs, np.arange(0, n, 10))
    if name == 'PARAM': return cls().fit([x, y])
    if name in ('Translator', 'ASIF', 'LearnedGW'): return cls().fit(x, y)
    return cls().fit(x)

@pytest.mark.parametrize('name', sorted(n for n in CASES if n != 'LearnedGW'))
def test_defaults_fit_on_400_samples(name):
    with warnings.catch_warnings(record=True):
        warnings.simplefilter('always')
        check_is_fitted(_fit_defaults(name))

@pytest.mark.skipif('slow' not in os.environ.get('RELREP_NB_TEST_FLAGS', '').split(), reason='slow: RELREP_NB_TEST_FLAGS=slow runs it')
def test_learned_gw_defaults_fit_on_400_samples():
    check_is_fitted(_fit_defaults('LearnedGW'))

def test_asif_default_k_clamped_with_warning():
    rng = np.random.default_rng(0)
    with pytest.warns(UserWarning, match='k'):
        m = relrep_nb.ASIF().fit(rng.standard_normal((400, 5)), rng.standard_normal((400, 4)))
    assert m.k == 800 and m.k_ == 400            # the parameter is unchanged; the fitted value is clamped

def test_requested_device_that_torch_cannot_use():
    if torch.cuda.is_available(): pytest.skip('CUDA is available here')
    x, y = _data()
    with pytest.raises(ValueError, match='CUDA requested'):
        relrep_nb.LearnedGW(n_steps=1, n_restarts=1, device='cuda').fit(x, y)

# ---- the front door ---------------------------------------------------------------------------------------------------

def test_front_door_is_lazy():
    import subprocess, sys
    code = ('import sys, relrep_nb as rr; before = sorted(m for m in ("pandas", "matplotlib", "transformers", "networkx", '
            '"relrep_nb.experiments", "relrep_nb.gw") if m in sys.modules); '
            'names = [rr.RelativeProjector, rr.relative_projection, rr.sample_anchors, rr.load, rr.ASIF, rr.LearnedGW]; '
            'print(before, "pandas" in sys.modules)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == '[]', f'import relrep_nb loaded {out}'
    with pytest.raises(AttributeError): relrep_nb.NoSuchThing

# ---- scikit-learn's own checks, pipelines, grid search ------------------------------------------------------------------

from sklearn.utils.estimator_checks import parametrize_with_checks
from relrep_nb.core import RelativeProjector
from relrep_nb.robust import RobustProjector

@parametrize_with_checks([RelativeProjector(), RobustProjector()])
def test_sklearn_check_estimator(estimator, check):
    check(estimator)

def test_pipeline_and_grid_search_on_digits():
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = load_digits(return_X_y=True)                          # scikit-learn's 1797 real 8x8 handwritten digits
    X, y = X[:900], y[:900]
    pipe = make_pipeline(StandardScaler(), RelativeProjector(n_anchors=100, anchor_method='stratified', seed=0),
                         LogisticRegression(max_iter=2000))
    acc = cross_val_score(pipe, X, y, cv=3).mean()
    assert acc > 0.85, acc                                       # chance is 0.1; the labels reach fit as `y`
    grid = GridSearchCV(pipe, {'relativeprojector__n_anchors': [10, 100]}, cv=3).fit(X, y)
    assert grid.best_params_['relativeprojector__n_anchors'] == 100
    assert grid.cv_results_['mean_test_score'][1] > grid.cv_results_['mean_test_score'][0]

# ---- the names used before the vocabulary are gone -----------------------------------------------------------------------

def test_old_spellings_are_refused():
    "The package was never released: an old keyword is Python's own TypeError, not a deprecation shim."
    x, y = _data()
    with pytest.raises(TypeError, match="unexpected keyword argument 'x_anchors'"): relrep_nb.Translator().fit(x_anchors=x, y_anchors=y)
    with pytest.raises(TypeError, match="unexpected keyword argument 'steps'"): relrep_nb.PARAM(n_anchors=3, steps=4)
    with pytest.raises(TypeError, match="unexpected keyword argument 'anchors'"): RelativeProjector().fit(anchors=x[:10])

def test_learned_gw_score_is_higher_better():
    x, y = _data(n=40)
    m = relrep_nb.LearnedGW(dim=4, hidden=(16, 16), n_steps=3, n_restarts=1, batch_size=20).fit(x, y)
    assert m.score(x, y) == -m.gw_loss(x, y)

def test_vocabulary_table():
    "The vocabulary of DESIGN.md: paired sides `x`/`y`, `embed_x`/`embed_y`, `n_steps`/`n_iter`, `n_anchors`, `seed`."
    fit_sides = {n: list(inspect.signature(type(CASES[n][0]()).fit).parameters)[1:3] for n in ('Translator', 'ASIF', 'LearnedGW')}
    assert all(v == ['x', 'y'] for v in fit_sides.values()), fit_sides
    for n in ('ASIF', 'LearnedGW'): assert callable(getattr(type(CASES[n][0]()), 'embed_x')) and callable(getattr(type(CASES[n][0]()), 'embed_y'))
    old = {'steps', 'sinkhorn_iter', 'anchors_a', 'anchors_b', 'x_anchors', 'y_anchors'}
    for n, (make, *_) in CASES.items():
        cls = type(make())
        params = set(cls().get_params())
        assert not params & old, f'{n} still has {params & old}'
        assert 'seed' in params, f'{n} has no `seed`'
        for m in ('__init__', 'fit', 'add'):                     # no old keyword and no **kw kept for one
            if not hasattr(cls, m): continue
            sig = inspect.signature(getattr(cls, m)).parameters
            assert not set(sig) & old, f'{n}.{m} still accepts {set(sig) & old}'
            assert not any(p.kind == p.VAR_KEYWORD for p in sig.values()), f'{n}.{m} takes **kwargs'
    assert 'anchors' not in inspect.signature(RelativeProjector.fit).parameters        # `fit(X)`
    assert 'anchors' not in inspect.signature(relrep_nb.SubjectRelative.fit).parameters  # `fit(xs, anchor_idx)`
    for m in ('encode_a', 'encode_b'): assert not hasattr(relrep_nb.ASIF, m), m          # `embed_x` / `embed_y`
    for n in ('RelativeProjector', 'ProductProjector', 'RobustProjector', 'PARAM'):
        assert 'n_anchors' in type(CASES[n][0]())().get_params(), n
