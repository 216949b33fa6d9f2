"""Regression tests for bad input and faults (issue: reliability): each case below once gave silent garbage,
a crash deep inside torch, or an unsafe load. Each asserts the defined behaviour, and can fail."""
import math, os, stat, subprocess, sys, warnings
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st, HealthCheck

from relrep_nb.core import relative_projection, RelativeProjector, register_similarity, save_state, load_state
from relrep_nb.metrics import mrr, recall_at_k, foscttm, jaccard_at_k, paired_cosine
from relrep_nb.anchors import sample_anchors
from relrep_nb.translate import Translator

SET = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])

@SET
@given(n=st.integers(10, 80), d=st.integers(1, 16), seed=st.integers(0, 1000))
def test_collapsed_embeddings_score_chance(n, d, seed):
    "A model mapping every input to one vector scores no better than a random ranking on every retrieval metric."
    x = np.random.default_rng(seed).normal(size=(n, d))
    c = np.ones((n, d))
    assert mrr(x, c) <= np.mean(1 / np.arange(1, n + 1)) + 1e-9
    assert recall_at_k(x, c, 1) <= 1 / n + 1e-9
    assert foscttm(c, c) >= 0.5 - 1e-9
    k = min(5, n - 1)
    assert jaccard_at_k(c, c, k=k) < 0.9

def test_float16_between_float64_calls_leaves_state():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(50, 6, generator=g, dtype=torch.float64)
    p = RelativeProjector('wip', pre='standardize', post='standardize', sim_kw=dict(shrinkage=0.2)).fit(x[:20], reference=x)
    a = p.transform(x); p.transform(x.half()); b = p.transform(x)
    assert torch.equal(a, b)

@pytest.mark.parametrize('call', [
    lambda x: relative_projection(x, x[:3], shrinkge=0.9),
    lambda x: RelativeProjector('cosine', alpha=2),
])
def test_unknown_keyword_named(call):
    with pytest.raises(TypeError, match='shrinkge|alpha'): call(torch.randn(10, 4))

def test_complex_refused():
    x = torch.randn(10, 4, dtype=torch.complex64)
    with pytest.raises(TypeError, match='is complex'): relative_projection(x, x[:3])

@pytest.mark.parametrize('sim', ['cosine', 'euclidean', 'l1', 'linf'])
def test_constant_feature_does_not_flatten(sim):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(40, 5, generator=g, dtype=torch.float64)
    xc = torch.cat([x, torch.full((40, 1), 3.0, dtype=torch.float64)], 1)
    r = RelativeProjector(sim, pre='standardize').fit(xc[:10]).transform(xc)
    assert r.abs().max() > 1e-3 and torch.isfinite(r).all()

@pytest.mark.parametrize('sim', ['cosine', 'euclidean', 'l1', 'linf'])
def test_huge_float32_is_finite(sim):
    x = torch.randn(30, 40, generator=torch.Generator().manual_seed(2)) * 1e20
    r = relative_projection(x, x[:5], sim)
    assert torch.isfinite(r).all() and r.abs().max() > 0

def test_inner_overflow_is_named():
    x = torch.randn(30, 40) * 1e20
    with pytest.raises(ValueError, match="overflowed"): relative_projection(x, x[:5], 'inner')

def test_paired_cosine_huge():
    x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32) * 1e30
    assert abs(paired_cosine(x, x) - 1) < 1e-5

@pytest.mark.parametrize('method', ['fps', 'kmeans'])
def test_anchors_distinct_at_any_scale(method):
    x = torch.randn(100, 4) * 1e20
    assert len(set(sample_anchors(x, 20, method=method).tolist())) == 20

def test_seed_none_named():
    with pytest.raises(TypeError, match='`seed`'): sample_anchors(torch.randn(10, 3), 3, seed=None)
    from relrep_nb.data import subset_indices
    with pytest.raises(TypeError, match='`seed`'): subset_indices(10, 3, seed=None)

def test_register_similarity_not_callable():
    with pytest.raises(TypeError, match='callable'): register_similarity('nope', 42)

@pytest.mark.parametrize('value', ['lots', 'inf', '1e400'])
def test_malformed_memory_budget_env_named(value):
    "A malformed budget is a ValueError naming the variable ('inf' and '1e400' were a raw OverflowError)."
    env = dict(os.environ, RELREP_NB_MEMORY_BUDGET=value)
    out = subprocess.run([sys.executable, '-c', 'import relrep_nb.core'], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and 'RELREP_NB_MEMORY_BUDGET' in out.stderr and 'ValueError' in out.stderr

def test_numpy_scalars_in_config_round_trip(tmp_path):
    x = torch.randn(30, 4, dtype=torch.float64)
    p = RelativeProjector('wip', sim_kw=dict(shrinkage=np.float64(0.1))).fit(x[:10], reference=x)
    p.save(tmp_path / 'p.pt')
    q = RelativeProjector.load(tmp_path / 'p.pt')
    assert type(q.sim_kw['shrinkage']) is float and torch.equal(q.transform(x), p.transform(x))

@pytest.mark.parametrize('content', [b'', b'garbage', b'RELREPNB\x01\x00\x00\x00' + b'\x00' * 40])
def test_bad_files_one_clear_error(tmp_path, content):
    f = tmp_path / 't.pt'; f.write_bytes(content)
    with pytest.raises(ValueError): Translator.load(f)

def test_bit_flip_detected(tmp_path):
    t = Translator().fit(torch.randn(20, 3, dtype=torch.float64), torch.randn(20, 3, dtype=torch.float64))
    t.save(tmp_path / 't.pt'); raw = bytearray((tmp_path / 't.pt').read_bytes())
    for pos in (len(raw) // 2, len(raw) - 5):
        bad = bytearray(raw); bad[pos] ^= 0x10; (tmp_path / 'b.pt').write_bytes(bytes(bad))
        with pytest.raises(ValueError, match='corrupt|not a relrep_nb'): Translator.load(tmp_path / 'b.pt')

def test_cache_row_count_and_permissions(tmp_path, monkeypatch):
    monkeypatch.setenv('RELREP_NB_CACHE', str(tmp_path))
    import relrep_nb.encoders as enc
    class Toy(enc.Encoder):
        def _load(self): self.model = object()
        def _weights_id(self): return 'toy-weights'
        def _encode_batch(self, batch, device): return torch.ones(len(batch), 2)
    e = Toy('toy-enc', dim=2)
    items = ['a', 'b', 'c']
    out = enc.cached_encode(e, items)
    path = enc._cache_path(e, enc.embedding_key(e, e.check_inputs(items)))
    mode = stat.S_IMODE(path.stat().st_mode)
    assert mode & 0o044 == (0o644 & ~os.umask(os.umask(0))) & 0o044, oct(mode)
    with pytest.raises(ValueError, match='rows cached'): enc._read_cached(path, enc.embedding_key(e, e.check_inputs(items)), 5)

def test_unwritable_cache_root_clear(tmp_path, monkeypatch):
    blocker = tmp_path / 'a_file'; blocker.write_text('not a folder')    # unwritable even for root
    monkeypatch.setenv('RELREP_NB_CACHE', str(blocker / 'cache'))
    import relrep_nb.encoders as enc
    with pytest.raises(PermissionError, match='RELREP_NB_CACHE'): enc.cache_dir('x')
    enc.list_encoders()      # availability checks never create folders

# ---- saved files and fitted state (estimator protocol, relrep_nb.base) ------------------------------------------------

@pytest.mark.parametrize('make', [lambda: RelativeProjector(), lambda: __import__('relrep_nb.product', fromlist=['x']).ProductProjector()])
def test_saved_projector_holds_only_its_anchors(make, tmp_path):
    "A projector fitted on a slice of a large tensor saves the slice, not the tensor it was cut from."
    big = torch.randn(200_000, 16)
    make().fit(big[:10]).save(tmp_path / 'p.pt')
    assert os.path.getsize(tmp_path / 'p.pt') < 200_000          # the whole tensor would be 12.8 MB

@pytest.mark.parametrize('make', [lambda: RelativeProjector('euclidean'), lambda: __import__('relrep_nb.robust', fromlist=['x']).RobustProjector(),
                                  lambda: __import__('relrep_nb.product', fromlist=['x']).ProductProjector()])
def test_fitted_state_owns_its_anchors(make):
    "Mutating the caller's anchors after fit leaves the fitted projector's outputs unchanged."
    x = torch.randn(30, 8, dtype=torch.float64)
    p = make().fit(x[:10]); before = p.transform(x[10:])
    x[:10].mul_(-2).add_(1)
    assert torch.equal(p.transform(x[10:]), before)

def test_non_regular_files_refused_at_once(tmp_path):
    from relrep_nb.base import load
    with pytest.raises(ValueError, match='not a regular file'): load('/dev/zero')     # would read forever
    fifo = tmp_path / 'fifo'; os.mkfifo(fifo)
    with pytest.raises(ValueError, match='not a regular file'): load(fifo)           # would block forever
    with pytest.raises(ValueError, match='not a regular file'): load(tmp_path)

def test_forged_files_refused(tmp_path):
    from relrep_nb.base import load, save_state
    a = torch.randn(5, 4)
    good = RelativeProjector().fit(a).state_dict()
    bad_nan = dict(good, tensors=dict(good['tensors'], anchors_=torch.full((5, 4), float('nan'))))
    save_state(bad_nan, tmp_path / 'nan.pt', 'RelativeProjector')
    with pytest.raises(ValueError, match='non-finite'): load(tmp_path / 'nan.pt')
    shadow = dict(good, tensors=dict(good['tensors'], transform=torch.ones(2)))
    save_state(shadow, tmp_path / 'shadow.pt', 'RelativeProjector')
    with pytest.raises(ValueError, match='not a fitted attribute'): load(tmp_path / 'shadow.pt')
    badcfg = dict(good, config=dict(good['config'], pre='whiten'))
    save_state(badcfg, tmp_path / 'cfg.pt', 'RelativeProjector')
    with pytest.raises(ValueError, match='invalid parameters.*pre'): load(tmp_path / 'cfg.pt')
    unknown = dict(good, config=dict(good['config'], hidden=[20000]))
    save_state(unknown, tmp_path / 'unk.pt', 'RelativeProjector')
    with pytest.raises(ValueError, match='unknown parameters'): load(tmp_path / 'unk.pt')

def test_concurrent_saves_and_long_names(tmp_path):
    import threading
    p = RelativeProjector().fit(torch.randn(5, 4)); errors = []
    def save():
        try:
            for _ in range(20): p.save(tmp_path / 'race.pt')
        except Exception as e: errors.append(e)
    ts = [threading.Thread(target=save) for _ in range(2)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert not errors and torch.equal(RelativeProjector.load(tmp_path / 'race.pt').anchors_, p.anchors_)
    long = tmp_path / ('n' * 246 + '.pt')                      # a legal 249-character name
    p.save(long); assert torch.equal(RelativeProjector.load(long).anchors_, p.anchors_)
    assert [f.name for f in tmp_path.iterdir() if f.suffix == '.tmp'] == []

# ---- labels, claims, cache files -------------------------------------------------------------------------------------

def test_f1_memory_follows_classes_not_label_values():
    "Labels are coded as classes first: [0, 8000] allocated an 8001 x 8001 count table (1.28 GB), label 10**12 overflowed."
    from relrep_nb.metrics import macro_f1, weighted_f1
    from sklearn.metrics import f1_score
    assert macro_f1([0, 8000], [0, 8000]) == 1.0
    assert macro_f1([0, 10**12, 10**12], [0, 10**12, 0]) == pytest.approx(f1_score([0, 1, 1], [0, 1, 0], average='macro'))
    rng = np.random.default_rng(0)
    t, p = rng.choice([3, 70, 900, 5000], 200), rng.choice([3, 70, 900, 5000, 12], 200)
    assert macro_f1(t, p) == pytest.approx(f1_score(t, p, average='macro'))
    assert weighted_f1(t, p) == pytest.approx(f1_score(t, p, average='weighted'))

@pytest.mark.parametrize('v', [float('inf'), -float('inf'), float('nan')])
def test_non_finite_claim_is_strict_json(v):
    import json
    from relrep_nb.claims import Claim
    c = Claim('demo', v, '> 0')
    assert c.holds == (v == float('inf'))                            # NaN never holds; an infinite ratio is > 0
    d = c.to_dict(); json.dumps(d, allow_nan=False)                 # strict JSON: no Infinity/NaN
    assert d['value'] is None and (math.isnan(v) or 'not finite' in d['what'])

@pytest.mark.parametrize('content', ['{"core": 5}', '[1, 2]', '{"core": {"quick": "fast"}}', 'not json'])
def test_malformed_chapter_times_ignored(content, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv('RELREP_NB_CACHE', str(tmp_path))
    from relrep_nb import claims, cli
    (tmp_path / 'chapter_times.json').write_text(content)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        assert claims.chapter_times() == {}
        assert any('ignoring' in str(x.message) for x in w)
        assert cli.main(['list']) == 0                              # `relrep-nb list` crashed on {"core": 5}
        claims._record_time('core', 'quick', 1.5)                  # the next run replaces the bad table
    assert claims.chapter_times() == {'core': {'quick': 1.5}}

@pytest.mark.parametrize('kw, name', [(dict(lr=float('inf')), 'lr'), (dict(eps_end=float('nan')), 'eps_end'),
                                      (dict(eps_start=0.), 'eps_start'), (dict(anneal=2.), 'anneal'), (dict(lr='fast'), 'lr')])
def test_learned_gw_numeric_parameters_named(kw, name):
    "lr=inf was accepted (NaN embeddings); every numeric parameter is finite and in range, checked at fit."
    from relrep_nb.gw import LearnedGW
    x = torch.randn(30, 4)
    with pytest.raises((ValueError, TypeError), match=f'`{name}`'): LearnedGW(n_steps=1, n_restarts=1, **kw).fit(x, x)
