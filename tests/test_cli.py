"""The command line as a user runs it: the console script and `python -m`, each in its own process."""
import json, os, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).parent / 'relrep-nb'
DATASETS = ['snareseq', 'scgem', 'fmri_hyperalignment', 'fashion_mnist', 'mnist5k', 'digits', 'fortunes', 'freedict']

def run(*args, env=None, **kw):
    e = {**os.environ, **(env or {})}
    return subprocess.run(list(args), capture_output=True, text=True, cwd=ROOT, env=e, timeout=300, **kw)

@pytest.fixture(scope='module')
def cache(tmp_path_factory):
    "A private cache with one recorded local run, so that `list` shows a time measured 'here'."
    p = tmp_path_factory.mktemp('cache')
    (p / 'chapter_times.json').write_text(json.dumps({'core': {'quick': 42.4}}))
    return str(p)

def test_info_text_is_complete(cache):
    r = run(sys.executable, '-m', 'relrep_nb', 'info', env=dict(RELREP_NB_CACHE=cache))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert 'rows x' not in out and '...' not in out and '…' not in out, out
    lines = out.splitlines()
    assert f'cache: {cache}' in lines, out
    header = next(i for i, l in enumerate(lines) if l == 'datasets:')
    assert lines[header + 1].split() == ['name', 'loader', 'returns', 'pip', 'debian', 'licence', 'available']
    rows = [l.split()[0] for l in lines[header + 2:] if l.startswith('  ')]
    for name in DATASETS: assert name in rows, out
    assert any(l.startswith('  torch ') for l in lines)

def test_info_cache_follows_xdg(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != 'RELREP_NB_CACHE'}
    env['XDG_CACHE_HOME'] = str(tmp_path)
    r = subprocess.run([sys.executable, '-m', 'relrep_nb.cli', 'info', '--json'], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d['cache'] == str(tmp_path / 'relrep_nb')
    assert not (tmp_path / 'relrep_nb').exists(), 'info must not create the cache folder'
    assert isinstance(d['datasets'], list) and all(isinstance(x, dict) for x in d['datasets'])
    assert {x['name'] for x in d['datasets']} >= set(DATASETS)
    assert isinstance(d['packages'], dict) and isinstance(d['chapters'], list) and d['chapters'][0] == 'core'

@pytest.mark.parametrize('how', ['script', 'module', 'cli_module'])
def test_list_shows_times(how, cache):
    cmd = {'script': [str(SCRIPT)], 'module': [sys.executable, '-m', 'relrep_nb'],
           'cli_module': [sys.executable, '-m', 'relrep_nb.cli']}[how]
    if how == 'script' and not SCRIPT.exists(): pytest.skip('console script not installed')
    r = run(*cmd, 'list', env=dict(RELREP_NB_CACHE=cache))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines and lines[0].split()[0] == 'core', r.stdout
    assert 'here: quick 42 s; reference run (2 cores): quick 3 s' in lines[0]
    assert 'not run here' not in r.stdout
    for l in lines[1:]: assert 'reference run (2 cores): quick' in l, l

def test_module_without_command_shows_usage():
    r = run(sys.executable, '-m', 'relrep_nb')
    assert r.returncode == 2 and 'usage: relrep-nb' in r.stderr

def test_closed_pipe_exits_quietly(cache):
    "`relrep-nb list | head -1`: the reader closes the pipe before the output is written."
    env = {**os.environ, 'RELREP_NB_CACHE': cache}
    p = subprocess.Popen([sys.executable, '-m', 'relrep_nb', 'list'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=ROOT, env=env)
    p.stdout.close()                    # as `head` does once it has its line
    err = p.stderr.read().decode(); p.wait(timeout=300)
    assert 'Traceback' not in err and 'BrokenPipe' not in err, err
    assert p.returncode in (0, 141)

def test_head_in_a_shell(cache):
    r = run('/bin/sh', '-c', f'"{sys.executable}" -m relrep_nb list | head -1', env=dict(RELREP_NB_CACHE=cache))
    assert r.returncode == 0 and r.stdout.split()[0] == 'core' and 'Traceback' not in r.stderr, r.stderr

def test_tables_then_claims_from_tables(tmp_path, cache):
    "`--tables DIR` keeps the run's tables; `--from-tables` runs nothing and gives the same claims from them."
    t = tmp_path / 'tables'
    r = run(sys.executable, '-m', 'relrep_nb', 'reproduce', '--quick', 'core', '--quiet', '--tables', str(t),
            '--json', str(tmp_path / 'run.json'), env=dict(RELREP_NB_CACHE=cache))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in t.iterdir()) == ['invariance.csv', 'parts.json']
    r = run(sys.executable, '-m', 'relrep_nb', 'reproduce', '--quick', 'core', '--quiet', '--tables', str(t), '--from-tables',
            '--json', str(tmp_path / 'again.json'), env=dict(RELREP_NB_CACHE=cache))
    assert r.returncode == 0, r.stderr
    first, again = [json.loads((tmp_path / f).read_text())['core'] for f in ('run.json', 'again.json')]
    assert again['claims'] == first['claims'] and sorted(again) == sorted(first) == ['claims', 'seconds', 'size']
    assert again['seconds'] == json.loads((t / 'parts.json').read_text())['all']['seconds']

def test_from_tables_without_tables_refused():
    r = run(sys.executable, '-m', 'relrep_nb', 'reproduce', '--from-tables', 'core')
    assert r.returncode == 2 and 'error: --from-tables reads the tables of --tables DIR' in r.stderr, r.stderr

# A chapter in three parts, at module level so that a spawned worker can import it (a chapter the command line cannot
# reach: registered here, run through `reproduce`).
PARTS = {'first': ('first',), 'second': ('second',), 'third': ('third',)}

def _pid_run(size, parts=tuple(PARTS)):
    import pandas as pd
    return {p: pd.DataFrame({'pid': [os.getpid()]}) for p in parts}

def _pid_claims(res):
    from relrep_nb.claims import Claim
    return [Claim('processes', len({int(res[p].pid.iloc[0]) for p in PARTS if len(res[p])}), '>= 3')]

def test_parts_run_in_their_own_processes(tmp_path, monkeypatch):
    "`--jobs 2` with parts: each part in a fresh process (its peak memory its own), its tables written by the parent."
    import io
    from relrep_nb.claims import CHAPTERS, register_chapter, reproduce
    monkeypatch.setenv('RELREP_NB_CACHE', str(tmp_path / 'cache'))
    register_chapter('pid_parts', _pid_run, _pid_claims)
    try: rep = reproduce(['pid_parts'], parts=[], tables=str(tmp_path / 't'), jobs=2, out=io.StringIO())['pid_parts']
    finally: CHAPTERS.pop('pid_parts')
    pids = {int((tmp_path / 't' / f'{p}.csv').read_text().split()[1]) for p in PARTS}
    assert len(pids) == 3 and os.getpid() not in pids, pids
    assert sorted(rep['parts']) == sorted(PARTS) and rep['claims'][0]['holds'] and 'error' not in rep, rep
