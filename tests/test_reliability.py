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

@pytest.mark.parametrize('kw, name', [(dict(lr=float('inf')), 'lr'), (dict(eps=float('nan')), 'eps'),
                                      (dict(eps=0.), 'eps'), (dict(lr='fast'), 'lr')])
def test_learned_gw_numeric_parameters_named(kw, name):
    "lr=inf was accepted (NaN embeddings); every numeric parameter is finite and in range, checked at fit."
    from relrep_nb.gw import LearnedGW
    x = torch.randn(30, 4)
    with pytest.raises((ValueError, TypeError), match=f'`{name}`'): LearnedGW(n_steps=1, n_restarts=1, **kw).fit(x, x)

def _zarr_case(tmp_path):
    pytest.importorskip('zarr'); pytest.importorskip('dask')
    from relrep_nb.scale import project_to_zarr
    x = np.random.default_rng(0).normal(size=(300, 8)).astype(np.float32)
    p = RelativeProjector().fit(torch.from_numpy(x[:10]))
    return project_to_zarr, p, x

def test_project_to_zarr_refuses_to_overwrite_its_source(tmp_path):
    "Before: dest == source with overwrite=True deleted the source, wrote zeros and marked the store complete."
    import zarr
    project_to_zarr, p, x = _zarr_case(tmp_path)
    zarr.create_array(str(tmp_path/'x.zarr'), data=x, chunks=(100, 8))
    np.save(tmp_path/'x.npy', x)
    for src, dest in [(tmp_path/'x.zarr', tmp_path/'x.zarr'), (tmp_path/'x.zarr', tmp_path),
                      (tmp_path/'x.zarr', tmp_path/'x.zarr'/'out.zarr'), (tmp_path/'x.npy', tmp_path)]:
        with pytest.raises(ValueError, match='lies inside `source`'):
            project_to_zarr(p, src, dest, overwrite=True, progress=False)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path/'x.zarr'))[:], x)   # source intact

def test_store_with_missing_chunk_is_refused(tmp_path):
    "Before: a complete store with a deleted chunk opened and read zeros for its rows."
    from relrep_nb.scale import open_store, open_embeddings, IncompleteStoreError
    project_to_zarr, p, x = _zarr_case(tmp_path)
    np.save(tmp_path/'x.npy', np.zeros_like(x))   # all-zero chunks must be on disk too (zarr skips them by default)
    project_to_zarr(p, tmp_path/'x.npy', tmp_path/'rel.zarr', chunk_rows=100, progress=False)
    assert open_store(tmp_path/'rel.zarr').nchunks_initialized == 3
    (tmp_path/'rel.zarr'/'c'/'1'/'0').unlink()
    for f in (open_store, open_embeddings):
        with pytest.raises(IncompleteStoreError, match='holds 2 of the 3 chunks'): f(tmp_path/'rel.zarr')

@pytest.mark.parametrize('scale', [1e20, 1e30, 1e-30, 1e-40])
def test_retrieval_metrics_at_extreme_scales(scale):
    "Before: foscttm(x*1e20, x*1e20) = -0.017 (outside [0, 1]), mrr(x*1e30, euclidean) = 0.0; the ranks of one positive scale are the ranks at 1."
    x = np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32)
    xs = x * np.float32(scale)
    assert foscttm(xs, xs) == 0.0
    for sim in ('euclidean', 'cosine', 'inner'):
        assert mrr(xs, xs, similarity=sim) == pytest.approx(mrr(x, x, similarity=sim), abs=1e-12)
    assert recall_at_k(xs, xs, 1, similarity='euclidean') == 1.0

def test_asif_inner_overflow_named():
    "Before: ASIF(similarity='inner') at 1e19 gave NaN scores and predict returned zeros."
    from relrep_nb.asif import ASIF
    g = np.random.default_rng(0); a, b = g.normal(size=(40, 8)).astype(np.float32), g.normal(size=(40, 6)).astype(np.float32)
    m = ASIF(k=5, similarity='inner').fit(a * 1e19, b)
    with pytest.raises(ValueError, match='inner similarity of `x` to the anchors overflowed'): m.predict(a * 1e19, b)
    with pytest.raises(ValueError, match='`candidates` is empty'): ASIF(k=5).fit(a, b).predict(a, b[:0])

@pytest.mark.parametrize('case, err, msg', [
    (lambda x: RelativeProjector().fit(x[:10].astype('>f4')).transform(x.astype('>f4')), None, None),   # big-endian: converted
    (lambda x: RelativeProjector().fit(x[:10].astype(np.longdouble)).transform(x), None, None),          # float128: float64
    (lambda x: sample_anchors(x, 5, seed=2**70), ValueError, r'`seed` must be in \[0, 9223372036854775807\]'),
    (lambda x: RelativeProjector(n_anchors=5, seed=2**70).fit(x), ValueError, '`seed` must be in'),
    (lambda x: sample_anchors(x, 5, method='kmeans', memory_budget='a'), TypeError, '`memory_budget` must be a number of bytes'),
    (lambda x: sample_anchors(x, 5, method='kmeans', memory_budget=float('inf')), ValueError, '`memory_budget` must be a positive, finite'),
    (lambda x: relative_projection(x, x[:5], similarity='wip', shrinkage='a'), TypeError, '`shrinkage` must be a real number'),
    (lambda x: relative_projection(x, x[:5], similarity='wip', eps=float('nan')), ValueError, '`eps` must be finite'),
    (lambda x: RelativeProjector().fit(torch.empty(10, 6, device='meta')), ValueError, 'meta tensor'),
    (lambda x: Translator('linear').fit(x, x[:, :0]), ValueError, r'`y` has 0 feature\(s\)'),
    (lambda x: RelativeProjector(pre='center').fit(x[:5], reference=x[:0]), ValueError, '`reference` is empty'),
])
def test_raw_torch_errors_are_named(case, err, msg):
    "Before: each raised torch's or numpy's own error (byte order, longdouble, long-long overflow, int('a'), oneMKL, eigh)."
    x = np.random.default_rng(0).normal(size=(60, 6)).astype(np.float32)
    if err is None: assert np.isfinite(case(x)).all()
    else:
        with pytest.raises(err, match=msg): case(x)

def test_seeds_named_everywhere():
    from relrep_nb.asif import ASIF
    from relrep_nb.param import PARAM
    x = np.random.default_rng(0).normal(size=(60, 6)).astype(np.float32)
    with pytest.raises(TypeError, match='`seed` must be an int'): ASIF(seed='a', index='faiss-ivf').fit(x, x)
    with pytest.raises(TypeError, match='`seed` must be an int'): PARAM.random(2, 5, seed='x')

def test_wip_scale_free_at_tiny_scale():
    "Before: data at scale 1e-11 with shrinkage=0.5 was called singular (an absolute floor of 1e-12 on the eigenvalues)."
    x = np.random.default_rng(0).normal(size=(60, 6))
    kw = dict(similarity='wip', shrinkage=0.5)
    np.testing.assert_allclose(relative_projection(x * 1e-11, x[:10] * 1e-11, **kw), relative_projection(x, x[:10], **kw), rtol=1e-8)
    with pytest.raises(ValueError, match='singular'): relative_projection(x, np.zeros((10, 6)), similarity='wip')

def test_bootstrap_epsilon_named():
    "Before: epsilon=1e-45 said '`eps` must be > 0, got nan' (the name and value of an internal variable)."
    from relrep_nb.bootstrap import bootstrap_anchors
    x = np.random.default_rng(0).normal(size=(100, 8)).astype(np.float32)
    sp = np.stack([np.arange(5)] * 2, 1)
    with pytest.raises(ValueError, match='`epsilon`=1e-45 is too small'):
        bootstrap_anchors(x, x, np.arange(20), sp, n_steps=2, epsilon=1e-45)
    with pytest.raises(ValueError, match='`lr` must be finite'): bootstrap_anchors(x, x, np.arange(20), sp, lr=float('inf'))

@pytest.mark.parametrize('out, err, msg', [
    (lambda x, a: (x @ a.T).T, ValueError, r'returned shape \(5, \d+\) for \d+ rows and 5 anchors'),
    (lambda x, a: torch.cat([x @ a.T, x[:, :1]], 1), ValueError, r'returned shape \(\d+, 6\)'),
    (lambda x, a: (x @ a.T).numpy(), TypeError, 'must return a torch.Tensor'),
])
def test_custom_similarity_output_checked(out, err, msg):
    "Before: a wrong shape was returned as is unchunked and failed with a RuntimeError chunked."
    x = torch.randn(40, 6)
    for budget in (None, 64):      # one chunk, many chunks: the same error
        with pytest.raises(err, match=msg): relative_projection(x, x[:5], similarity=out, memory_budget=budget)

def test_custom_similarity_dtype_consistent():
    "Before: a float64 output was returned as float64 unchunked and float32 chunked."
    x = torch.randn(40, 6)
    f = lambda x, a: (x @ a.T).double()
    for budget in (None, 64): assert relative_projection(x, x[:5], similarity=f, memory_budget=budget).dtype == torch.float32

def test_subject_relative_continuous_labels_named():
    "Before: float labels gave a raw torch error (or a class per distinct float)."
    from relrep_nb.fmri import SubjectRelative
    x = np.random.default_rng(0).normal(size=(60, 6)).astype(np.float32)
    with pytest.raises(ValueError, match='`y` holds continuous values'):
        SubjectRelative('mlp').fit([x, x], np.arange(10), y=np.random.default_rng(1).random(60))
    SubjectRelative('mlp', epochs=2).fit([x, x], np.arange(10), y=np.arange(60) % 3 * 1.0)   # integral floats are classes

def test_product_projector_peak_memory_bounded():
    "Before: with memory_budget=4 MiB, transform peaked at twice its output (S outputs, then their stacked copy)."
    code = '''
import resource, numpy as np
from relrep_nb.product import ProductProjector
rss = lambda: int(open('/proc/self/statm').read().split()[1]) * 4096
hwm = lambda: int([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]) * 1024   # this process's peak (ru_maxrss survives exec: the parent's)
x = np.random.default_rng(0).normal(size=(20000, 64)).astype(np.float32)
p = ProductProjector(memory_budget=4 * 2**20).fit(x[:256]); p.transform(x[:100])
base = rss(); r = p.transform(x)
print(hwm() - base, r.nbytes)'''
    extra, out = map(int, subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.split())
    assert extra < out + 24 * 2**20, (extra / 2**20, out / 2**20)

def test_forged_architecture_refused_before_allocation(tmp_path):
    "Before: a 6.5 KB file with a valid checksum declaring hidden=[20000] allocated about 1 GB before failing."
    from relrep_nb.models import MLP, save_model, load_model
    from relrep_nb.base import save_state
    m = MLP(784, 10, hidden=(8,), seed=0)
    save_model(m, tmp_path/'m.pt')
    d = load_state(tmp_path/'m.pt', 'model')
    d['hparams']['hidden'] = (20000, 20000)
    save_state(d, tmp_path/'forged.pt', 'model')
    code = f'''
from relrep_nb.models import load_model
hwm = lambda: int([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])   # KiB; ru_maxrss survives exec
before = hwm()
try: load_model({str(tmp_path/'forged.pt')!r})
except ValueError as e: print(type(e).__name__, 'architecture its weights do not match' in str(e))
print(hwm() - before)'''
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.split()
    assert out[:2] == ['ValueError', 'True'] and int(out[2]) * 1024 < 64 * 2**20, out   # < 64 MiB (declared: 1.6 GB)
    torch.testing.assert_close(load_model(tmp_path/'m.pt')(torch.ones(1, 784)), m.eval()(torch.ones(1, 784)))

def test_unexpandable_cache_root_named(monkeypatch):
    "Before: RELREP_NB_CACHE='~nouser/x' raised pathlib's RuntimeError ('Could not determine home directory') and `relrep-nb list` crashed."
    import relrep_nb.encoders as enc
    from relrep_nb.claims import chapter_times
    monkeypatch.setenv('RELREP_NB_CACHE', '~nouser_relrep/x')
    with pytest.raises(ValueError, match="RELREP_NB_CACHE='~nouser_relrep/x' cannot be expanded"): enc.cache_dir('x')
    with pytest.warns(UserWarning, match='no chapter times'): assert chapter_times() == {}
    r = subprocess.run([sys.executable, '-c', 'import sys; from relrep_nb.cli import main; sys.exit(main(["list"]))'], capture_output=True, text=True,
                       env=dict(os.environ, RELREP_NB_CACHE='~nouser_relrep/x'))
    assert r.returncode == 0 and 'latent_gw' in r.stdout, r.stderr[-500:]

def test_zero_rows_under_cosine_warn():
    "Before: all-zero rows (or anchors) under cosine gave zero relative vectors without a word."
    x = torch.randn(10, 3); x[2] = 0
    with pytest.warns(UserWarning, match='rows of `x` with zero norm'): r = relative_projection(x, x[3:7])
    assert torch.equal(r[2], torch.zeros(4))
    a = x[3:7].clone(); a[1] = 0
    with pytest.warns(UserWarning, match='an anchor has zero norm'): relative_projection(x[3:], a)

def test_mixed_numpy_torch_follow_x():
    "The decided rule: the output's type is the data argument's; the other arguments are converted."
    x = np.random.default_rng(0).random((10, 3)).astype(np.float32)
    assert isinstance(relative_projection(x, torch.from_numpy(x[:3])), np.ndarray)
    assert isinstance(relative_projection(torch.from_numpy(x), x[:3]), torch.Tensor)
    assert isinstance(RelativeProjector().fit(torch.from_numpy(x[:3])).transform(x.tolist()), np.ndarray)

def test_subject_relative_forged_hidden_refused(tmp_path):
    "A SubjectRelative file whose `hidden` declares a larger network than its weights is refused before allocating it."
    from relrep_nb.fmri import SubjectRelative
    from relrep_nb.base import save_state, load
    x = np.random.default_rng(0).normal(size=(60, 6)).astype(np.float32)
    m = SubjectRelative('mlp', hidden=(8,), epochs=2).fit([x, x], np.arange(10), y=np.arange(60) % 3)
    m.save(tmp_path/'s.pt')
    d = load_state(tmp_path/'s.pt', 'SubjectRelative'); d['config']['hidden'] = (20000, 20000)
    save_state(d, tmp_path/'forged.pt', 'SubjectRelative')
    with pytest.raises(ValueError, match='declares an architecture its weights do not match'):
        load(tmp_path/'forged.pt').transform([x, x])
    np.testing.assert_allclose(load(tmp_path/'s.pt').transform([x, x])[0], m.transform([x, x])[0])
