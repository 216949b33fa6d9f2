"""`Encoder.encode`, `cached_encode` and `encode_dataset` return torch or numpy as `output` asks (issue #30)."""
import numpy as np
import pytest
import torch
from relrep_nb.encoders import Encoder, ImageEncoder, cached_encode

class _Lengths(Encoder):
    "Toy text encoder: length and number of spaces; counts its forward passes."
    calls = 0
    def _load(self): return 'no weights'
    def _weights_id(self): return 'lengths-v1'
    def _encode_batch(self, batch, device):
        type(self).calls += 1
        return torch.tensor([[float(len(t)), float(t.count(' '))] for t in batch])

class _MeanColour(ImageEncoder):
    "Toy image encoder without parameters: the mean of each preprocessed channel."
    def _load(self): return torch.nn.Identity()
    def _weights_id(self): return 'mean-colour-v1'
    def _features(self, x): return x.mean((2, 3))

TEXTS = ['a cat', 'the dog sat', '', 'x']

@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch): monkeypatch.setenv('RELREP_NB_CACHE', str(tmp_path))

def test_text_output():
    enc = _Lengths('lengths', dim=2)
    t = enc.encode(TEXTS)
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.shape == (4, 2)
    assert isinstance(enc.encode(TEXTS, output='torch'), torch.Tensor)
    a = enc.encode(TEXTS, output='numpy', batch_size=3)
    assert isinstance(a, np.ndarray) and a.dtype == np.float32 and a.flags.c_contiguous
    np.testing.assert_array_equal(a, t.numpy())
    np.testing.assert_array_equal(a[:, 0], [len(s) for s in TEXTS])

def test_image_output():
    enc = _MeanColour('mean-colour', dim=3, size=32)
    x = np.random.default_rng(0).integers(0, 256, (3, 28, 28), dtype=np.uint8)
    a = enc.encode(x)                                  # default: numpy images give numpy
    assert isinstance(a, np.ndarray) and a.shape == (3, 3)
    t = enc.encode(x, output='torch')
    assert isinstance(t, torch.Tensor) and t.device.type == 'cpu'
    np.testing.assert_array_equal(t.numpy(), a)
    xt = torch.from_numpy(x)
    assert isinstance(enc.encode(xt), torch.Tensor)    # default: tensors give tensors
    b = enc.encode(xt, output='numpy')
    assert isinstance(b, np.ndarray)
    np.testing.assert_allclose(b, a, atol=1e-6)

def test_cached_output():
    _Lengths.calls = 0
    first = cached_encode(_Lengths('lengths', dim=2), TEXTS, output='numpy')    # a miss
    assert isinstance(first, np.ndarray)
    calls = _Lengths.calls
    fresh = _Lengths('lengths', dim=2)
    hit = cached_encode(fresh, TEXTS, output='numpy')                         # a hit: the model is not loaded
    assert isinstance(hit, np.ndarray) and not fresh.loaded and _Lengths.calls == calls
    np.testing.assert_array_equal(hit, first)
    t = fresh.encode(TEXTS, cache=True)                                       # default on a hit: torch for texts
    assert isinstance(t, torch.Tensor) and not fresh.loaded
    np.testing.assert_array_equal(t.numpy(), first)
    assert isinstance(fresh.encode(TEXTS, cache=True, output='torch'), torch.Tensor)

@pytest.mark.parametrize('bad', ['list', 'np', 'Torch', 1])
def test_bad_output(bad):
    enc = _Lengths('lengths', dim=2)
    with pytest.raises(ValueError, match="`output` must be 'torch', 'numpy' or None"): enc.encode(TEXTS, output=bad)
    with pytest.raises(ValueError, match='`output`'): cached_encode(enc, TEXTS, output=bad)
    assert not enc.loaded                              # refused before anything is loaded

def test_encode_dataset_output():
    pytest.importorskip('distributed')
    from distributed import Client
    from relrep_nb.scale import encode_dataset
    enc = _Lengths('lengths', dim=2)
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        a = encode_dataset(enc, TEXTS, client, chunk_size=2, progress=False, output='numpy')
        assert isinstance(a, np.ndarray) and a.shape == (4, 2)
        t = encode_dataset(enc, TEXTS, client, progress=False)                # a cache hit, default torch
    assert isinstance(t, torch.Tensor)
    np.testing.assert_array_equal(t.numpy(), a)
