import os
os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('MPLBACKEND', 'Agg')


import pytest

@pytest.fixture(scope='module')
def one_thread():
    "Small matrices: one torch thread (a second mostly spins on a shared 2-core machine and slows small fits several-fold)."
    import torch
    n = torch.get_num_threads(); torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
