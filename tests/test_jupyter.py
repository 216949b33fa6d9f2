"""A chapter runs in a real Jupyter kernel, as it does in JupyterLab (`.venv/bin/jupyter lab nbs/`)."""
import os
from pathlib import Path
import pytest

nbclient = pytest.importorskip('nbclient', reason='the dev extra installs nbclient with JupyterLab')
nbformat = pytest.importorskip('nbformat')

NBS = Path(__file__).resolve().parent.parent / 'nbs'

def test_claims_chapter_in_kernel():
    nb = nbformat.read(NBS / '07_claims.ipynb', as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name='python3', resources={'metadata': {'path': str(NBS)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == 'code' for o in c.get('outputs', []) if o.get('output_type') == 'error']
    assert not errors, errors
    assert any(c.cell_type == 'code' and c.get('execution_count') for c in nb.cells)
