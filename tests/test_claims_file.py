"""The repository carries the pre-registered claims: CLAIMS.md equals the project's shared copy (where the
checkout sits beside it), and every claim a chapter registers is named in it."""
import re
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / 'shared' / 'CLAIMS.md'

def test_claims_file_present():
    text = (ROOT / 'CLAIMS.md').read_text()
    assert text.startswith('# Pre-registered claims')

@pytest.mark.skipif(not SHARED.exists(), reason='no shared copy beside this checkout')
def test_claims_file_equals_shared_copy():
    assert (ROOT / 'CLAIMS.md').read_text() == SHARED.read_text(), 'copy ../shared/CLAIMS.md to CLAIMS.md'

def test_every_chapter_section_present():
    sections = set(re.findall(r'^## (\w+)', (ROOT / 'CLAIMS.md').read_text(), re.M))
    for chapter in ['relreps', 'invariances', 'bootstrap', 'asif', 'latent_gw', 'fmri', 'param_wip', 'robust']:
        assert chapter in sections, chapter
