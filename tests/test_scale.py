"""relrep_nb.scale on a real dask.distributed LocalCluster (two worker processes, one thread each):
results identical to the in-memory path, the fitted state sent once per worker, the encoder loaded once
per worker, a worker killed mid-run, failures and a killed driver leaving a store marked incomplete."""
import os, signal, subprocess, sys, textwrap, threading, time
from pathlib import Path
import numpy as np
import pytest

da = pytest.importorskip('dask.array')
zarr = pytest.importorskip('zarr')
distributed = pytest.importorskip('distributed')
import cloudpickle
from relrep_nb.core import RelativeProjector, torch_threads
from relrep_nb import scale

ROOT = Path(__file__).resolve().parent.parent
cloudpickle.register_pickle_by_value(sys.modules[__name__])   # the helper classes below travel by value to the workers

@pytest.fixture(scope='module')
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       memory_limit='2GiB')
    c = distributed.Client(cluster)
    try: yield c
    finally:
        c.close(); cluster.close()

def by_blocks(p, x, rows):
    "The in-memory path on the same row blocks (one thread, as the workers run)."
    with torch_threads(1): return np.concatenate([p.transform(x[i:i + rows]) for i in range(0, len(x), rows)])

def data(n=2000, d=32, k=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x, RelativeProjector('cosine', pre='center').fit(x[rng.choice(n, k, replace=False)])

class Logged:
    "A fitted projector that appends its process id to `log` each time it is unpickled."
    def __init__(self, p, log): self.p, self.log = p, str(log)
    def transform(self, x): return self.p.transform(x)
    def __setstate__(self, s):
        self.__dict__.update(s)
        with open(self.log, 'a') as f: f.write(f'{os.getpid()}\n')

class Slow:
    "A fitted projector that sleeps `secs` per block and fails on a block containing row `fail_at`."
    def __init__(self, p, secs=0., fail_at=None, n=None): self.p, self.secs, self.fail_at, self.n = p, secs, fail_at, n
    def transform(self, x):
        time.sleep(self.secs if len(x) > 1 else 0)
        if self.fail_at is not None and len(x) > 1 and bool((np.asarray(x)[:, 0] == self.fail_at).any()):
            raise ValueError('a block that cannot be projected')
        return self.p.transform(x)

def test_transform_dask_identical_and_state_sent_once(client, tmp_path):
    x, p = data()
    log = tmp_path/'unpickled.txt'; log.touch()
    y = scale.transform_dask(Logged(p, log), da.from_array(x, chunks=(100, 8))).compute()
    np.testing.assert_array_equal(y, by_blocks(p, x, 100))
    np.testing.assert_allclose(y, p.transform(x), atol=1e-6)
    worker_pids = set(client.run(os.getpid).values())
    pids = log.read_text().split()
    on_workers = [q for q in pids if int(q) in worker_pids]
    # 20 blocks; the state reaches each worker once (not once per block)
    assert 1 <= len(on_workers) <= 2 and len(set(on_workers)) == len(on_workers), pids

def test_project_to_zarr_identical_on_cluster(client, tmp_path):
    x, p = data(3000)
    np.save(tmp_path/'x.npy', x)
    info = scale.project_to_zarr(p, tmp_path/'x.npy', tmp_path/'r.zarr', chunk_rows=256, client=client, progress=False)
    assert info['rows'] == 3000 and info['chunks'] == 12
    z = scale.open_store(tmp_path/'r.zarr')
    assert z.attrs['complete'] is True and z.chunks == (256, 64)
    np.testing.assert_array_equal(z[:], by_blocks(p, x, 256))
    # a zarr source with other row chunks: rechunked to the requested rows, same result
    zarr.create_array(str(tmp_path/'x.zarr'), data=x, chunks=(1000, 16))
    scale.project_to_zarr(p, tmp_path/'x.zarr', tmp_path/'r2.zarr', chunk_rows=256, client=client, progress=False)
    np.testing.assert_array_equal(scale.open_store(tmp_path/'r2.zarr')[:], z[:])

def test_worker_killed_mid_run(client, tmp_path):
    x, p = data(4000)
    np.save(tmp_path/'x.npy', x)
    out, box = tmp_path/'r.zarr', {}
    def run():
        try: box['info'] = scale.project_to_zarr(Slow(p, 0.25), tmp_path/'x.npy', out, chunk_rows=100, client=client, progress=False)
        except Exception as e: box['error'] = e
    t = threading.Thread(target=run); t.start()
    deadline = time.time() + 60
    while time.time() < deadline and len(list((out/'c').rglob('*')) if (out/'c').exists() else []) < 8: time.sleep(0.05)
    assert zarr.open_array(str(out)).attrs['complete'] is False       # marked incomplete while it runs
    victim = next(iter(client.run(os.getpid).values()))
    os.kill(victim, signal.SIGKILL)
    t.join(120)
    assert not t.is_alive()
    client.wait_for_workers(2, timeout=60)
    if 'error' in box:                       # allowed: a clear error, and the store says it is incomplete
        assert 'marked incomplete' in str(box['error'])
        with pytest.raises(scale.IncompleteStoreError): scale.open_store(out)
    else:                                    # expected: dask reruns the lost tasks and the run completes
        print('worker killed: the run completed', box['info'])
        assert box['info']['rows'] == 4000
        np.testing.assert_array_equal(scale.open_store(out)[:], by_blocks(p, x, 100))

def test_failed_task_leaves_store_marked(client, tmp_path):
    x, p = data(1000)
    x[:, 0] = np.arange(1000)
    with pytest.raises(RuntimeError, match='marked incomplete'):
        scale.project_to_zarr(Slow(p, 0., fail_at=650), da.from_array(x, chunks=(100, 32)), tmp_path/'r.zarr',
                              client=client, progress=False)
    assert zarr.open_array(str(tmp_path/'r.zarr')).attrs['complete'] is False
    with pytest.raises(scale.IncompleteStoreError, match='incomplete'): scale.open_store(tmp_path/'r.zarr')
    with pytest.raises(scale.IncompleteStoreError): scale.open_embeddings(tmp_path/'r.zarr')
    with pytest.raises(FileExistsError, match='incomplete'):
        scale.project_to_zarr(p, da.from_array(x, chunks=(100, 32)), tmp_path/'r.zarr', progress=False)
    scale.project_to_zarr(p, da.from_array(x, chunks=(100, 32)), tmp_path/'r.zarr', overwrite=True, progress=False)
    assert scale.open_store(tmp_path/'r.zarr').attrs['complete'] is True

def test_killed_driver_leaves_store_marked(tmp_path):
    "The process that runs project_to_zarr is killed mid-run: the store on disk is marked incomplete."
    x, p = data(2000)
    np.save(tmp_path/'x.npy', x); p.save(tmp_path/'p.pt')
    code = textwrap.dedent(f"""
        import time, numpy as np
        from relrep_nb.core import RelativeProjector
        from relrep_nb.scale import project_to_zarr
        class Slow:
            def __init__(self, p): self.p = p
            def transform(self, x): time.sleep(0.3 if len(x) > 1 else 0); return self.p.transform(x)
        p = RelativeProjector.load({str(tmp_path/'p.pt')!r})
        project_to_zarr(Slow(p), {str(tmp_path/'x.npy')!r}, {str(tmp_path/'r.zarr')!r}, chunk_rows=50,
                        scheduler='synchronous', progress=False)
    """)
    proc = subprocess.Popen([sys.executable, '-c', code], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    chunks, deadline = tmp_path/'r.zarr'/'c', time.time() + 120
    while time.time() < deadline and len(list(chunks.rglob('*')) if chunks.exists() else []) < 6: time.sleep(0.05)
    proc.kill(); proc.wait()
    assert chunks.exists(), 'the run wrote no chunk before the deadline'
    assert zarr.open_array(str(tmp_path/'r.zarr')).attrs['complete'] is False
    with pytest.raises(scale.IncompleteStoreError, match='rerun it with overwrite=True'): scale.open_store(tmp_path/'r.zarr')

def test_encode_dataset_on_cluster(client, tmp_path, monkeypatch):
    from relrep_nb.encoders import get_encoder, cached_encode, list_encoders
    from relrep_nb.data import load_fortunes
    if 'wordllama' not in list_encoders(): pytest.skip('wordllama is not installed')
    monkeypatch.setenv('RELREP_NB_CACHE', str(tmp_path/'cache'))
    texts = load_fortunes(n=400, max_chars=200)['text'].tolist()
    before = client.run(lambda: sum(scale.WORKER_LOADS.values()))
    emb = scale.encode_dataset('wordllama', texts, client, chunk_size=40, progress=False)
    loads = {w: n - before[w] for w, n in client.run(lambda: sum(scale.WORKER_LOADS.values())).items()}
    assert all(v <= 1 for v in loads.values()) and sum(loads.values()) >= 1, loads   # 10 chunks, at most one load per worker
    ref = get_encoder('wordllama').encode(texts)
    np.testing.assert_allclose(emb.numpy(), ref.numpy(), atol=1e-5)
    enc = get_encoder('wordllama')
    hit = cached_encode(enc, texts)                  # the package's cache format: a hit, the model is not loaded
    assert not enc.loaded and np.array_equal(hit.numpy(), emb.numpy())
    files = list((tmp_path/'cache'/'embeddings'/'wordllama').glob('*.npz'))
    assert len(files) == 1 and set(np.load(files[0]).files) == {'emb', 'meta'}
    again = scale.encode_dataset(get_encoder('wordllama'), texts, client, progress=False)   # from the cache
    assert np.array_equal(again.numpy(), emb.numpy())
    with pytest.raises(TypeError, match='`encoder` must be'): scale.encode_dataset(3, texts, client)

def test_without_the_extra():
    "Without dask and zarr the module still imports, and each function names the extra to install."
    code = textwrap.dedent("""
        import sys
        for m in ('dask', 'dask.array', 'distributed', 'zarr'): sys.modules[m] = None
        import relrep_nb.scale as s
        for f, args in ((s.open_embeddings, ('x.npy',)), (s.transform_dask, (None, None)), (s.encode_dataset, ('wordllama', ['a']))):
            try: f(*args)
            except ImportError as e: assert 'pip install relrep_nb[scale]' in str(e), e
            else: raise SystemExit(f'{f.__name__} did not raise')
        print('ok')
    """)
    out = subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0 and out.stdout.strip() == 'ok', out.stderr
