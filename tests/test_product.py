"""The product-of-invariances estimator under the package's estimator protocol (DESIGN.md)."""
import inspect
import numpy as np
import pytest
import torch
from relrep_nb.core import save_state
from relrep_nb.product import ProductProjector, ProductDecoder, SPACES, fit_decoder, accuracy

@pytest.fixture
def data():
    g = torch.Generator().manual_seed(0)
    return torch.randn(40, 8, generator=g), torch.randn(7, 8, generator=g), torch.randn(30, 8, generator=g)

@pytest.mark.parametrize('kw', [dict(), dict(pre='center', post='standardize'), dict(similarities=['l1', 'cosine'], pre='l2')])
def test_save_load_identical_outputs(tmp_path, data, kw):
    x, anchors, ref = data
    pp = ProductProjector(**kw).fit(anchors, reference=ref)
    pp.save(tmp_path / 'pp.pt')
    back = ProductProjector.load(tmp_path / 'pp.pt')
    assert back.get_params() == pp.get_params()
    assert torch.equal(back.transform(x), pp.transform(x))
    assert np.array_equal(back.transform(x.numpy()), pp.transform(x.numpy()))

def test_fit_returns_self(data):
    x, anchors, _ = data
    pp = ProductProjector()
    assert pp.fit(anchors) is pp

def test_get_params_lists_exactly_init_parameters():
    params = [p for p in inspect.signature(ProductProjector.__init__).parameters if p != 'self']
    pp = ProductProjector(['cosine', 'linf'], post='layernorm', memory_budget=1 << 20)
    assert list(pp.get_params()) == params
    assert pp.get_params() == dict(similarities=['cosine', 'linf'], pre=None, post='layernorm', memory_budget=1 << 20)
    assert ProductProjector(**pp.get_params()).names == pp.names

def test_init_stores_parameters_only():
    pp = ProductProjector()
    assert set(vars(pp)) == {'similarities', 'pre', 'post', 'memory_budget'}
    assert not any(k.endswith('_') for k in vars(pp))

def test_unfitted_and_foreign_files(tmp_path, data):
    x, anchors, _ = data
    with pytest.raises(ValueError, match='not fitted'): ProductProjector().transform(x)
    with pytest.raises(ValueError, match='not fitted'): ProductProjector().save(tmp_path / 'x.pt')
    torch.save(dict(config=dict(similarities=list(SPACES)), tensors={}), tmp_path / 'foreign.pt')
    with pytest.raises(ValueError, match='not a relrep_nb file'): ProductProjector.load(tmp_path / 'foreign.pt')
    save_state(dict(config=dict(similarities=list(SPACES)), tensors={}), tmp_path / 'nospaces.pt', 'ProductProjector')
    with pytest.raises(ValueError, match='not a ProductProjector file'): ProductProjector.load(tmp_path / 'nospaces.pt')
    ProductProjector(['cosine']).fit(anchors).save(tmp_path / 'one.pt')
    with pytest.raises(ValueError, match='holds a ProductProjector, not a RelativeProjector'):
        __import__('relrep_nb.core').core.RelativeProjector.load(tmp_path / 'one.pt')

def test_loaded_projector_feeds_a_trained_decoder(tmp_path, data):
    x, anchors, _ = data
    pp = ProductProjector(post='standardize').fit(anchors, reference=x)
    r, y = pp.transform(x), (x[:, 0] > 0).long()
    dec = fit_decoder(ProductDecoder(4, 7, 2, width=8, seed=0), r, y, epochs=2)
    pp.save(tmp_path / 'pp.pt')
    assert accuracy(dec, ProductProjector.load(tmp_path / 'pp.pt').transform(x), y) == accuracy(dec, r, y)
