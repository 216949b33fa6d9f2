"""Regression tests for issue 60, items 1, 3, 4 and 20: writes that would replace a device, a FIFO or a directory
(or a symlink, or create a directory named `~`), a fitted estimator changed by `set_params`, fitted attributes kept
from an earlier fit, and `relrep-nb list`/`info` on a full device. Device cases use stand-ins made with `os.mknod`
inside a temporary directory only, never the machine's own /dev entries."""
import errno, io, json, os, stat, subprocess, sys
from pathlib import Path
import numpy as np
import pytest
import torch

import relrep_nb
from relrep_nb.base import NotFittedError, atomic_write, load_state, save_state
from relrep_nb.core import RelativeProjector
from test_estimators import CASES, _data

ROOT = Path(__file__).resolve().parent.parent

def _x(n=30, d=5, seed=0):
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)

def _stand_in(tmp_path, kind):
    "A non-regular file inside `tmp_path`: a character device stand-in (1, 3), a FIFO or a directory."
    p = tmp_path / f'dest_{kind}'
    if kind == 'chardev':
        try: os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except (PermissionError, OSError) as e: pytest.skip(f'cannot make a device node here ({e})')
    elif kind == 'fifo': os.mkfifo(p)
    else: p.mkdir()
    return p

_IS = dict(chardev=stat.S_ISCHR, fifo=stat.S_ISFIFO, dir=stat.S_ISDIR)

def _writers():
    "Every way the package writes a file at a path the user gives: (name, write(path))."
    from relrep_nb.claims import _check_writable, _write_json
    from relrep_nb.models import MLP, save_model
    p = RelativeProjector().fit(_x())
    return [('save', p.save), ('save_state', lambda f: save_state({'a': 1}, f, 'Demo')),
            ('atomic_write', lambda f: atomic_write(f, lambda fh: fh.write(b'x'))),
            ('save_model', lambda f: save_model(MLP(2, 1, seed=0), f)),
            ('reproduce --json (checked before running)', _check_writable),
            ('reproduce --json (written after a chapter)', lambda f: _write_json(f, {'core': {}}))]

# ---- item 1: never replace a device, a FIFO or a directory; symlinks; `~`

@pytest.mark.parametrize('kind', ['chardev', 'fifo', 'dir'])
def test_writes_refuse_non_regular_destination(tmp_path, kind):
    dest = _stand_in(tmp_path, kind)
    for name, write in _writers():
        with pytest.raises(ValueError, match='not a regular file'): write(dest)
        assert _IS[kind](os.lstat(dest).st_mode), f'{name} replaced the {kind} at {dest}'
    link = tmp_path / 'link'; link.symlink_to(dest)          # a symlink to it is refused the same way
    for name, write in _writers():
        with pytest.raises(ValueError, match='not a regular file'): write(link)
        assert link.is_symlink() and _IS[kind](os.stat(link).st_mode), f'{name} replaced the link to the {kind}'
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([dest.name, 'link'])   # no temporary file left behind

@pytest.mark.parametrize('kind', ['chardev', 'fifo', 'dir'])
def test_cli_json_refuses_non_regular_destination(tmp_path, kind, capsys):
    from relrep_nb.cli import main
    dest = _stand_in(tmp_path, kind)
    assert main(['reproduce', '--json', str(dest), 'core']) == 2          # refused before any chapter runs
    err = capsys.readouterr().err
    assert 'json_path' in err and 'not a regular file' in err and len(err.strip().splitlines()) == 1, err
    assert _IS[kind](os.lstat(dest).st_mode)

def test_writes_go_through_a_symlink_to_a_regular_file(tmp_path):
    from relrep_nb.claims import _check_writable, _write_json
    target, link = tmp_path / 'real.pt', tmp_path / 'link.pt'
    target.write_bytes(b'old'); link.symlink_to(target)
    p = RelativeProjector('euclidean').fit(_x())
    p.save(link)
    assert link.is_symlink() and os.readlink(link) == str(target)        # the link stays a link ...
    assert torch.equal(relrep_nb.load(target).transform(_x()), p.transform(_x()))   # ... and its target holds the save
    assert torch.equal(relrep_nb.load(link).transform(_x()), p.transform(_x()))
    jt, jl = tmp_path / 'r.json', tmp_path / 'r_link.json'
    jt.write_text('{}'); jl.symlink_to(jt)
    assert _check_writable(jl) == jt.resolve()
    _write_json(jl, {'core': {'seconds': 1}})
    assert jl.is_symlink() and json.loads(jt.read_text()) == {'core': {'seconds': 1}}
    dangling = tmp_path / 'dangling.pt'; dangling.symlink_to(tmp_path / 'missing' / 'x.pt')
    with pytest.raises(ValueError, match='symbolic link to nothing'): p.save(dangling)
    assert dangling.is_symlink() and not (tmp_path / 'missing').exists()

def test_tilde_is_expanded_everywhere(tmp_path, monkeypatch):
    from relrep_nb.claims import _check_writable
    from relrep_nb.models import MLP, save_model, load_model
    home, cwd = tmp_path / 'home', tmp_path / 'cwd'
    home.mkdir(); cwd.mkdir()
    monkeypatch.setenv('HOME', str(home)); monkeypatch.chdir(cwd)
    p = RelativeProjector('cosine').fit(_x())
    p.save('~/m.pt')
    save_state({'a': 2}, '~/s.pt', 'Demo')
    save_model(MLP(2, 1, seed=0), '~/mlp.pt')
    assert not (cwd / '~').exists(), 'a directory named ~ was created in the working directory'
    assert (home / 'm.pt').is_file() and (home / 's.pt').is_file() and (home / 'mlp.pt').is_file()
    assert torch.equal(relrep_nb.load('~/m.pt').transform(_x()), p.transform(_x()))
    assert RelativeProjector.load('~/m.pt').n_features_in_ == 5 and load_state('~/s.pt', 'Demo') == {'a': 2}
    assert type(load_model('~/mlp.pt')).__name__ == 'MLP'
    assert _check_writable('~/r.json') == home.resolve() / 'r.json'

# ---- item 3: a fitted estimator changed by set_params must be refit before it is used or saved

_REFIT = 'refit after set_params'

@pytest.mark.parametrize('params', [dict(pre='center'), dict(post='standardize'), dict(similarity='wip'),
                                    dict(pre='standardize', post='l2')])
def test_relative_projector_set_params_after_fit(params, tmp_path):
    x = _x()
    p = RelativeProjector('cosine').fit(x[:10], reference=x)
    p.set_params(**params)
    for use in (lambda: p.transform(x), lambda: p.save(tmp_path / 'p.pt'), lambda: p._check_width(x)):
        with pytest.raises(NotFittedError, match=_REFIT): use()
    assert not (tmp_path / 'p.pt').exists()
    from sklearn.exceptions import NotFittedError as SkNotFitted
    from sklearn.utils.validation import check_is_fitted
    with pytest.raises(SkNotFitted): check_is_fitted(p)
    p.fit(x[:10], reference=x)                                   # the next fit clears the mark
    ref = RelativeProjector(**{'similarity': 'cosine', **params}).fit(x[:10], reference=x)
    assert torch.equal(p.transform(x), ref.transform(x))
    p.save(tmp_path / 'p.pt'); assert torch.equal(relrep_nb.load(tmp_path / 'p.pt').transform(x), ref.transform(x))

def test_unchanged_or_unfitted_set_params_marks_nothing():
    x = _x()
    p = RelativeProjector('wip', pre='center', sim_kw=dict(shrinkage=0.1)).set_params(pre='standardize').fit(x)
    a = p.transform(x)
    p.set_params(**p.get_params(deep=False))                     # the same values: still usable
    p.set_params(sim_kw=dict(shrinkage=0.1), pre='standardize', similarity='wip')   # equal values
    assert torch.equal(p.transform(x), a)

def test_product_projector_set_params_after_fit(tmp_path):
    x = _x()
    p = relrep_nb.ProductProjector().fit(x[:10]).set_params(similarities=['cosine', 'euclidean'])
    with pytest.raises(NotFittedError, match=_REFIT): p.transform(x)
    with pytest.raises(NotFittedError, match=_REFIT): p.save(tmp_path / 'p.pt')
    p.fit(x[:10]); p.save(tmp_path / 'p.pt')
    assert relrep_nb.load(tmp_path / 'p.pt').transform(x).shape == (30, 2, 10)

def test_learned_gw_set_params_after_fit(tmp_path):
    x, y = _data()
    m = relrep_nb.LearnedGW(dim=4, hidden=(8, 8), n_steps=3, n_restarts=1, batch_size=32).fit(x, y)
    m.set_params(hidden=(16,))
    with pytest.raises(NotFittedError, match=_REFIT): m.save(tmp_path / 'g.pt')
    with pytest.raises(NotFittedError, match=_REFIT): m.embed_x(x)
    assert not (tmp_path / 'g.pt').exists()
    m.fit(x, y); m.save(tmp_path / 'g.pt')                        # a file `save` writes always loads
    assert relrep_nb.load(tmp_path / 'g.pt').embed_x(x).shape == (60, 4)

def test_every_estimator_marked_by_set_params_after_fit(tmp_path):
    for name, (make, fit, out, (param, bad)) in CASES.items():
        x, y = _data(); est = make(); fit(est, x, y)
        key, new = ('seed', 7) if 'seed' in est.get_params() else (param, bad)
        est.set_params(**{key: new})
        with pytest.raises(NotFittedError, match=_REFIT): out(est, x, y)
        with pytest.raises(NotFittedError, match=_REFIT): est.save(tmp_path / f'{name}.pt')
        fit(est, x, y); out(est, x, y); est.save(tmp_path / f'{name}.pt')
        assert type(relrep_nb.load(tmp_path / f'{name}.pt')).__name__ == type(est).__name__, name   # by name: a notebook run in this process may have defined the class again

def test_sklearn_pipeline_set_params_after_fit():
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline
    x = _x().numpy()
    pipe = Pipeline([('rp', RelativeProjector('cosine'))]).fit(x[:10])
    pipe.transform(x)
    pipe.set_params(rp__pre='center')
    from sklearn.exceptions import NotFittedError as SkNotFitted
    with pytest.raises(SkNotFitted): pipe.transform(x)           # the pipeline sees its step as not fitted
    with pytest.raises(NotFittedError, match=_REFIT): pipe.named_steps['rp'].transform(x)
    c = clone(pipe.named_steps['rp'])                            # a clone is a fresh, unmarked estimator
    assert c.fit(x[:10]).transform(x).shape == (30, 10)
    assert pipe.fit(x[:10]).transform(x).shape == (30, 10)

# ---- item 4: a refit keeps no fitted attribute of an earlier fit

def _fitted_names(est): return {k for k in vars(est) if k.endswith('_') and not k.startswith('_')}

def test_refit_drops_attributes_it_no_longer_sets(tmp_path):
    x = _x()
    p = RelativeProjector(n_anchors=5, pre='standardize', post='standardize').fit(x)
    assert {'anchor_idx_', 'post_mean_', 'post_std_', 'pre_mean_', 'pre_std_'} <= _fitted_names(p)
    p.set_params(n_anchors=None, pre=None, post=None).fit(x[:3])
    assert not {'anchor_idx_', 'post_mean_', 'post_std_', 'pre_mean_', 'pre_std_'} & _fitted_names(p), _fitted_names(p)
    p.save(tmp_path / 'p.pt')
    sd = load_state(tmp_path / 'p.pt', 'RelativeProjector')
    assert 'anchor_idx_' not in sd['tensors'] and 'post_mean_' not in sd['tensors']
    q = relrep_nb.ProductProjector(n_anchors=5).fit(x)
    assert 'anchor_idx_' in _fitted_names(q)
    assert 'anchor_idx_' not in _fitted_names(q.set_params(n_anchors=None).fit(x[:4]))

def test_every_fit_starts_afresh():
    for name, (make, fit, out, _) in CASES.items():
        x, y = _data(); est = make(); fit(est, x, y)
        est.stale_ = torch.zeros(1)                              # stands for a fitted attribute the next fit does not set
        fit(est, x, y)
        assert not hasattr(est, 'stale_'), f'{name}.fit keeps fitted attributes of an earlier fit'
        out(est, x, y)

def test_subclass_fit_calling_super_keeps_its_own_attributes():
    class Tagged(RelativeProjector):
        def fit(self, X, y=None, **kw):
            self.tag_ = 'mine'
            return super().fit(X, y, **kw)
    t = Tagged().fit(_x()); t.extra_ = 1
    t.fit(_x())
    assert t.tag_ == 'mine' and not hasattr(t, 'extra_')

# ---- item 20: `relrep-nb list`/`info` on a full device: one line, a non-zero exit

class _FullStream(io.TextIOBase):
    "A text stream standing in for a full device: every write and flush raises OSError(ENOSPC)."
    def writable(self): return True
    def write(self, s): raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    def flush(self): raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

@pytest.mark.parametrize('argv', [['list'], ['info'], ['info', '--json']])
def test_cli_full_output_is_one_line(argv, monkeypatch, capsys):
    from relrep_nb.cli import main
    capsys.readouterr()
    monkeypatch.setattr(sys, 'stdout', _FullStream())
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc not in (0, None) and len(err.strip().splitlines()) == 1 and 'No space left on device' in err, err

@pytest.mark.parametrize('cmd', ['list', 'info'])
def test_cli_full_device_stand_in(tmp_path, cmd):
    full = tmp_path / 'full'
    try: os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # a stand-in for /dev/full, inside tmp_path
    except (PermissionError, OSError) as e: pytest.skip(f'cannot make a device node here ({e})')
    with open(full, 'w') as out:
        r = subprocess.run([sys.executable, '-m', 'relrep_nb', cmd], stdout=out, stderr=subprocess.PIPE, text=True,
                           cwd=ROOT, timeout=300, env={**os.environ, 'RELREP_NB_CACHE': str(tmp_path / 'cache')})
    assert r.returncode != 0 and 'Traceback' not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert 'No space left on device' in r.stderr
    assert stat.S_ISCHR(os.lstat(full).st_mode)

def test_progress_bars_do_not_flood_a_log():
    "A fit with its progress bar on, stderr a pipe (a log file, CI): a handful of lines, not one redraw per step."
    import subprocess, sys, textwrap
    code = textwrap.dedent('''
        import numpy as np
        from relrep_nb.gw import LearnedGW
        rng = np.random.default_rng(0)
        LearnedGW(n_steps=200, batch_size=64, dim=4, hidden=(16,), progress=True).fit(
            rng.normal(size=(80, 5)).astype('float32'), rng.normal(size=(70, 6)).astype('float32'))
    ''')
    import time
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr[-2000:]
    redraws = r.stderr.count('\r') + r.stderr.count('\n')
    # at most one redraw every ten seconds (plus the first and the last line); a live bar redraws ten times a second
    assert 'LearnedGW' in r.stderr and redraws <= 4 + elapsed / 10, (redraws, elapsed, r.stderr[-500:])
