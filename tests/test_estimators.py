"""One estimator protocol (DESIGN.md) for every estimator of the package: `fit` returns self, `get_params` lists
exactly the `__init__` parameters, save -> load gives identical outputs, and loading never runs code from the file."""
import inspect, os, pickle
import numpy as np
import pytest
import torch

from relrep_nb.core import RelativeProjector, TensorState
from relrep_nb.translate import Translator

def _data(seed=0, n=60, d=6):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=torch.float64), torch.randn(n, d + 2, generator=g, dtype=torch.float64)

# name -> (make estimator, fit it (est, x, y) -> returned value, output of a fitted estimator (est, x, y))
CASES = {
    'RelativeProjector': (lambda: RelativeProjector('wip', pre='center', post='standardize', shrinkage=0.1),
                          lambda e, x, y: e.fit(x[:20], reference=x), lambda e, x, y: e.transform(x)),
    'Translator': (lambda: Translator('affine', std_scale='global'),
                   lambda e, x, y: e.fit(x, y), lambda e, x, y: e.transform(x)),
}

def _optional(name, module, make, fit, out):
    try: mod = __import__(f'relrep_nb.{module}', fromlist=['x'])
    except ImportError: return
    if hasattr(mod, name): CASES[name] = (lambda: make(mod), fit, out)

_optional('ProductProjector', 'product', lambda m: m.ProductProjector(),
          lambda e, x, y: e.fit(x[:20], reference=x), lambda e, x, y: e.transform(x))
_optional('PARAM', 'param', lambda m: m.PARAM(4, steps=5),
          lambda e, x, y: e.fit([x, y]), lambda e, x, y: e.anchors_for(y))
_optional('RobustProjector', 'robust', lambda m: m.RobustProjector(),
          lambda e, x, y: e.fit(x[:20]), lambda e, x, y: e.transform(x))

@pytest.fixture(params=sorted(CASES))
def case(request): return request.param, *CASES[request.param]

def test_fit_returns_self(case):
    name, make, fit, _ = case
    x, y = _data(); est = make()
    assert fit(est, x, y) is est, f'{name}.fit must return self'

def test_get_params_lists_init_parameters(case):
    name, make, _, _ = case
    est = make()
    assert isinstance(est, TensorState), f'{name} must use relrep_nb.core.TensorState'
    sig = inspect.signature(type(est).__init__).parameters
    named = {k for k, p in sig.items() if k != 'self' and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    assert named <= set(est.get_params()), f'{name}.get_params misses {named - set(est.get_params())}'
    extra = set(est.get_params()) - named
    has_kw = any(p.kind == p.VAR_KEYWORD for p in sig.values())
    assert has_kw or not extra, f'{name}.get_params lists {extra}, which are not __init__ parameters'
    assert type(est)(**est.get_params()).get_params() == est.get_params()

def test_save_load_identical(case, tmp_path):
    name, make, fit, out = case
    x, y = _data(); est = make(); fit(est, x, y)
    est.save(tmp_path / 'e.pt')
    est2 = type(est).load(tmp_path / 'e.pt')
    a, b = out(est, x, y), out(est2, x, y)
    assert torch.equal(torch.as_tensor(a), torch.as_tensor(b)), f'{name}: loaded estimator gives different outputs'

class _Evil:
    def __reduce__(self): return (os.system, ('touch /tmp/relrep_nb_pwned',))

def test_malicious_file_refused(case, tmp_path):
    name, make, _, _ = case
    p = tmp_path / 'evil.pt'
    torch.save({'config': {}, 'tensors': {}, 'x': _Evil()}, p)
    with pytest.raises(ValueError): type(make()).load(p)
    p.write_bytes(pickle.dumps(_Evil()))
    with pytest.raises(ValueError): type(make()).load(p)
    assert not os.path.exists('/tmp/relrep_nb_pwned')

def test_failed_save_keeps_previous_file(case, tmp_path, monkeypatch):
    name, make, fit, out = case
    x, y = _data(); est = make(); fit(est, x, y)
    est.save(tmp_path / 'e.pt'); before = (tmp_path / 'e.pt').read_bytes()
    import relrep_nb.core as core
    def boom(*a, **k): raise OSError('disk full')
    monkeypatch.setattr(core.os, 'fsync', boom)
    with pytest.raises(OSError): est.save(tmp_path / 'e.pt')
    assert (tmp_path / 'e.pt').read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ['e.pt']
