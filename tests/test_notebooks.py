"""Every notebook in nbs/ is a test: run it with nbdev's machinery (cells flagged `slow`/`gpu` skipped
unless RELREP_NB_TEST_FLAGS names them, e.g. RELREP_NB_TEST_FLAGS="slow")."""
import os
from pathlib import Path
import pytest
import nbdev.test as nbt

NBS = Path(__file__).resolve().parent.parent / 'nbs'
NOTEBOOKS = sorted(p for p in NBS.rglob('*.ipynb') if not any(part.startswith(('_', '.')) for part in p.relative_to(NBS).parts))

@pytest.mark.parametrize('nb', NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook(nb):
    force = os.environ.get('RELREP_NB_TEST_FLAGS', '').split()
    skip = nbt.get_config().tst_flags.split()
    ok, secs = nbt.test_nb(nb, skip_flags=skip, force_flags=force, basepath=NBS.parent)
    assert ok, f'{nb.name} failed (rerun: nbdev_test --path {nb.relative_to(NBS.parent)} --n_workers 0)'
