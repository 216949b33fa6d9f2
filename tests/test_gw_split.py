"""The learned-GW method module after the method/experiments split: estimator protocol, safe save/load, cheap import."""
import hashlib, inspect, io, os, pickle, struct, subprocess, sys
from pathlib import Path
import numpy as np
import pytest
import torch
from relrep_nb.core import RelativeProjector
from relrep_nb.base import load_state, save_state, _MAGIC, _FORMAT
from relrep_nb.gw import LearnedGW, clustered_pair

pytestmark = pytest.mark.usefixtures('one_thread')   # conftest.py: small fits, one torch thread

ROOT = Path(__file__).resolve().parent.parent

@pytest.fixture(scope='module')
def fitted():
    x, y, _ = clustered_pair(80, d=6, seed=0)
    return LearnedGW(n_steps=5, n_restarts=2, seed=1).fit(x, y[:, :4]), x, y[:, :4]

class _Payload:
    "Unpickling this object calls `open(path, 'w')`: a stand-in for code a crafted file would run."
    def __init__(self, path): self.path = str(path)
    def __reduce__(self): return (open, (self.path, 'w'))

def test_fit_returns_self_and_params_are_init_args():
    x, y, _ = clustered_pair(40, d=3, seed=0)
    m = LearnedGW(dim=4, n_steps=2)
    assert not [k for k in vars(m) if k.endswith('_')]
    assert m.fit(x, y) is m
    init = [p for p, v in inspect.signature(LearnedGW.__init__).parameters.items() if p != 'self']
    assert sorted(m.get_params(deep=False)) == sorted(init) and len(init) <= 16
    assert all(v.kind == v.KEYWORD_ONLY for p, v in inspect.signature(LearnedGW.__init__).parameters.items() if p != 'self')
    assert all(getattr(m, p) == v for p, v in m.get_params(deep=False).items())

def test_methods_are_defined_on_the_class():
    for name in ('fit', 'embed_x', 'embed_y', 'fit_transform', 'coupling', 'gw_loss', 'score', 'state_dict', 'to'):
        assert getattr(LearnedGW, name).__qualname__ == f'LearnedGW.{name}', name

def test_save_load_round_trip_identical_embeddings(fitted, tmp_path):
    m, x, y = fitted
    m.save(tmp_path / 'gw.pt')
    m2 = LearnedGW.load(tmp_path / 'gw.pt')
    assert torch.equal(torch.as_tensor(m2.embed_x(x)), torch.as_tensor(m.embed_x(x)))
    assert torch.equal(torch.as_tensor(m2.embed_y(y)), torch.as_tensor(m.embed_y(y)))
    assert m2.get_params() == m.get_params() and m2.restarts_ == m.restarts_ and m2.gw_ == m.gw_
    np.testing.assert_array_equal(m2.history_, m.history_)
    sd = load_state(tmp_path / 'gw.pt', 'LearnedGW')                # the file is a weights-only state
    assert all(type(v) in (int, float, bool, str, type(None), tuple, dict) for v in sd['config'].values())

def _wrapped(body:bytes) -> bytes:
    "`body` behind relrep_nb's header and a valid checksum: only the weights-only unpickler stands in the way."
    return _MAGIC + struct.pack('<I', _FORMAT) + hashlib.sha256(body).digest() + body

@pytest.mark.parametrize('writer', ['torch', 'pickle', 'torch-unwrapped'])
def test_load_refuses_a_malicious_file(tmp_path, writer):
    target = tmp_path / 'pwned'
    evil = dict(kind='LearnedGW', state=dict(config={}, tensors={}, payload=_Payload(target)))
    buf = io.BytesIO(); torch.save(evil, buf)
    body = buf.getvalue() if writer.startswith('torch') else pickle.dumps(evil, protocol=2)
    path = tmp_path / 'evil.pt'
    path.write_bytes(body if writer == 'torch-unwrapped' else _wrapped(body))
    with pytest.raises(ValueError, match='not a relrep_nb file' if writer == 'torch-unwrapped' else 'could not be read safely'):
        LearnedGW.load(path)
    assert not target.exists()                                      # the payload never ran

def test_load_refuses_foreign_files(tmp_path):
    save_state(dict(config={}, tensors={}), tmp_path / 'empty.pt', 'LearnedGW')
    with pytest.raises(ValueError, match='not a LearnedGW file'):
        LearnedGW.load(tmp_path / 'empty.pt')
    RelativeProjector().fit(np.eye(3)).save(tmp_path / 'rp.pt')
    with pytest.raises(ValueError, match='not a LearnedGW'):
        LearnedGW.load(tmp_path / 'rp.pt')

def test_method_module_import_is_cheap():
    code = ("import sys, relrep_nb.gw; print([m for m in ('pandas', 'matplotlib', 'transformers', 'networkx', 'ot', 'anndata', "
            "'relrep_nb.data', 'relrep_nb.encoders', 'relrep_nb.claims', 'relrep_nb.experiments') if m in sys.modules])")
    env = {**os.environ, 'PYTHONPATH': str(ROOT)}
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env=env, check=True).stdout.strip()
    assert out == '[]', out

def test_to_moves_weights_and_statistics(fitted):
    m, x, _ = fitted
    before = m.embed_x(x)
    assert m.to('cpu') is m and m.mean_x_.device.type == 'cpu' and next(m.f_.parameters()).device.type == 'cpu'
    assert m.device is None                                          # the parameter (where `fit` trains) is not changed by `to`
    np.testing.assert_array_equal(m.embed_x(x), before)

def test_defaults_restart_and_centre(fitted):
    m, x, y = fitted
    assert LearnedGW().n_restarts == 3                               # a swap mode is kept only if every restart falls into it
    np.testing.assert_allclose(np.asarray(m.embed_x(x)).mean(0), 0, atol=1e-5)   # the common space is centred on the training data
    np.testing.assert_allclose(np.asarray(m.embed_y(y)).mean(0), 0, atol=1e-5)

def test_gw_loss_reference_is_shared_and_checked(fitted):
    m, x, y = fitted
    assert m.gw_loss(x, y) == m.gw_loss(x, y, metric='euclidean', rank=False)   # the model's own reference by default
    assert m.gw_loss(x, y, rank=True) != m.gw_loss(x, y)
    assert m.score(x, y) == -m.gw_loss(x, y) < 0                             # `score` is higher-is-better
    with pytest.raises(ValueError, match='metric'):
        m.gw_loss(x, y, metric='cosine')

def test_parameters_checked_at_fit_and_old_keywords_refused():
    from sklearn.exceptions import NotFittedError
    x, y, _ = clustered_pair(20, d=3, seed=0)
    m = LearnedGW(metric='cosine')                                    # construction only stores
    with pytest.raises(ValueError, match='metric'): m.fit(x, y)
    with pytest.raises(NotFittedError, match=r'\.fit\(x, y\)'): LearnedGW().embed_x(x)
    for old in ('sinkhorn_iter', 'n_iter', 'eps_end', 'anneal', 'precision', 'input_pcs', 'shared_layers', 'n_layers'):
        with pytest.raises(TypeError, match=old): LearnedGW(**{old: 7})
    with pytest.raises(ValueError, match='device'): LearnedGW(device='cuda:99', n_steps=1).fit(x, y)

def test_fit_transform_is_both_embeddings():
    x, y, _ = clustered_pair(30, d=3, seed=0)
    ex, ey = LearnedGW(n_steps=2, n_restarts=1, seed=0).fit_transform(x, y)
    m = LearnedGW(n_steps=2, n_restarts=1, seed=0).fit(x, y)
    np.testing.assert_array_equal(ex, m.embed_x(x)); np.testing.assert_array_equal(ey, m.embed_y(y))

def test_align_defaults_are_align_config_with_align_k():
    import anndata
    from relrep_nb.gw import ALIGN_CONFIG, align, align_k
    x, y, _ = clustered_pair(60, d=4, seed=0)
    A, B = anndata.AnnData(X=x), anndata.AnnData(X=y[:50])
    plan = align(A, B, progress=False)
    cfg = plan.model.get_params(deep=False)
    assert cfg['k'] == align_k(60, 50) == 10 and cfg['n_restarts'] == ALIGN_CONFIG['n_restarts'] == 3
    plain = lambda d: {k: v.get_params() if hasattr(v, 'get_params') else v for k, v in d.items() if k != 'k'}
    assert plain({k: cfg[k] for k in ALIGN_CONFIG}) == plain(ALIGN_CONFIG)
    assert cfg['objective'] is not ALIGN_CONFIG['objective']        # a copy: ALIGN_CONFIG's own object is never changed
    assert A.uns['X_gw']['config'] == {k: repr(v) for k, v in cfg.items()}
    assert [align_k(n, 10**6) for n in (10, 177, 287, 1047, 5000)] == [2, 35, 50, 104, 150]
