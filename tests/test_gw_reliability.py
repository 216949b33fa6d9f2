"""Regression tests for numerical faults of the learned GW solver (issue #27): each case once gave NaN embeddings, a
plan whose mass was not 1, or infinities in a coupling. Each asserts the defined behaviour: a plan of mass 1, or a
ValueError naming the parameter."""
import numpy as np
import pytest
import torch
from relrep_nb.gw import LearnedGW, clustered_pair

pytestmark = pytest.mark.usefixtures('one_thread')   # conftest.py: small fits, one torch thread

@pytest.fixture(scope='module')
def pair():
    x, y, lab = clustered_pair(60, d=5, seed=0)
    return x.astype(np.float32), y.astype(np.float32), lab

def _mass_ok(cp):
    P = np.asarray(cp)
    assert np.isfinite(P).all()
    assert abs(P.sum() - 1) <= 1e-4, P.sum()
    return P

@pytest.mark.parametrize('factor', [1e30, 1e-30])
def test_huge_or_tiny_inputs_fit_in_a_safe_scale(pair, factor):
    x, y, lab = pair
    xs, ys = (x * factor).astype(np.float32), (y * factor).astype(np.float32)
    assert np.isfinite(xs).all() and np.isfinite(ys).all()
    m = LearnedGW(n_steps=30, n_restarts=1, seed=0).fit(xs, ys)
    ex, ey = m.embed_x(xs), m.embed_y(ys)
    assert np.isfinite(ex).all() and np.isfinite(ey).all()
    cp = m.coupling(xs, ys)
    _mass_ok(cp)
    assert len(np.unique(cp.match())) > 1                       # not the all-zero match of NaN embeddings
    ref = LearnedGW(n_steps=30, n_restarts=1, seed=0).fit(x, y)   # the same fit as on unscaled inputs (up to float32 rounding of x * factor)
    np.testing.assert_allclose(ex, ref.embed_x(x), rtol=0, atol=2e-2)

def test_tiny_eps_end_plan_has_mass_one_or_is_refused(pair):
    x, y, _ = pair
    from relrep_nb.ot import EpsSchedule
    m = LearnedGW(eps=EpsSchedule(1.0, 1e-9), n_steps=10, n_restarts=1, seed=0).fit(x, y)
    try: cp = m.coupling(x, y)
    except ValueError as e: assert '`eps`' in str(e); return
    _mass_ok(cp)

@pytest.mark.parametrize('eps', [1e-9, 1e-30])
def test_tiny_coupling_eps_finite_or_refused(pair, eps):
    x, y, _ = pair
    m = LearnedGW(n_steps=10, n_restarts=1, seed=0).fit(x, y)
    try: cp = m.coupling(x, y, eps=eps)
    except ValueError as e: assert '`eps`' in str(e); return
    _mass_ok(cp)
    assert np.isfinite(cp.barycentric()).all()

@pytest.mark.parametrize('eps', [float('inf'), float('nan'), 0.0, -1.0])
def test_bad_coupling_eps_named(pair, eps):
    x, y, _ = pair
    m = LearnedGW(n_steps=2, n_restarts=1, seed=0).fit(x, y)
    with pytest.raises(ValueError, match='`eps`'): m.coupling(x, y, eps=eps)

@pytest.mark.parametrize('objective', ['fixed_point', 'direct'])
def test_default_plan_mass_is_one(pair, objective):
    x, y, _ = pair
    _mass_ok(LearnedGW(objective=objective, n_steps=10, n_restarts=1, seed=0).fit(x, y).coupling(x, y))

def test_forged_file_declaring_a_huge_network_allocates_nothing(pair, tmp_path):
    "A file whose config declares hidden=20000 (1.6 GB of weights) but holds small tensors: refused after a meta-device shape check."
    import resource
    from relrep_nb.base import save_state
    x, y, _ = pair
    sd = LearnedGW(n_steps=2, n_restarts=1, seed=0).fit(x, y).state_dict()
    sd['config']['hidden'] = (20000, 20000)
    save_state(sd, tmp_path / 'forged.pt', 'LearnedGW')
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss          # KiB on Linux
    with pytest.raises(ValueError, match='declares an architecture'): LearnedGW.load(tmp_path / 'forged.pt')
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 400 * 1024     # nothing near 1.6 GB was allocated

def test_seed_checked_with_check_seed(pair):
    x, y, _ = pair
    for bad in (-1, 2 ** 63, 1.5):
        with pytest.raises((ValueError, TypeError), match='`seed`'): LearnedGW(seed=bad, n_steps=1).fit(x, y)

@pytest.mark.parametrize('objective', ['fixed_point', 'direct'])
def test_coupling_eps_in_the_units_of_training(pair, objective):
    "`coupling`'s ε (its default `eps_end` and an explicit one) is in the units the model was trained in: for 'direct' relative to the cost's standard deviation, as in `_direct_plan`; for 'fixed_point' relative to its mean."
    from relrep_nb.ot import sqeuclidean, sinkhorn
    x, y, _ = pair
    m = LearnedGW(objective=objective, n_steps=20, n_restarts=1, seed=0).fit(x, y)
    ex, ey = torch.as_tensor(m.embed_x(x)).double(), torch.as_tensor(m.embed_y(y)).double()
    C = sqeuclidean(ex, ey)
    Cs = (C - C.mean()) / C.std() if objective == 'direct' else C / C.mean()       # the cost ε is relative to in training
    for eps in (None, 0.05):
        e = m._schedule().end if eps is None else eps
        ref = sinkhorn(Cs, e, n_iter=3000, tol=1e-8)[0].numpy()
        P = np.asarray(m.coupling(x, y, eps=eps, n_iter=3000, tol=1e-8))
        np.testing.assert_allclose(P, ref, rtol=0, atol=1e-4 * ref.max())

def test_blockwise_passes_do_not_grow_the_heap():
    """Before: `match` kept one small result per block between the blocks' large freed temporaries (and recomputed the
    other side's squared norms, 4 MiB here, per block); with many blocks the heap grew by about one block's temporaries
    per block (a 20,000 x 20,000 coupling in 4-row blocks passed 20 GiB and was killed). In 16-row blocks: 500 blocks."""
    import subprocess, sys
    code = '''
import torch
from relrep_nb.ot import Coupling
hwm = lambda: int([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]) * 1024   # this process's peak
g = torch.Generator().manual_seed(0)
ex, ey = (torch.randn(8000, 64, generator=g, dtype=torch.float64) for _ in range(2))
budget = 3 * 8000 * 8 * 16
Coupling.solve(ex[:100], ey[:100], 0.5, n_iter=1, tol=0, memory_budget=budget)   # warm up the allocator
before = hwm()
c = Coupling.solve(ex, ey, 0.5, n_iter=2, tol=0, memory_budget=budget, numpy=False)
c.match(); c.barycentric()
print(hwm() - before)'''
    grew = int(subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.split()[-1])
    assert grew < 64 * 2**20, grew / 2**20
