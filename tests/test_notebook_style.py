"""Checks of the notebooks' shape that nbdev's tools rely on.

`nbdev_proc_nbs` (the docs build) executes every code cell that contains an import statement, in
isolation from the other cells and whatever its flags (`#| slow` included): such a cell must hold
nothing but imports and setup, or the docs build runs experiments (or fails on undefined names). A cell a
reader sees may hold imports only (a chapter's opening example shows where its names come from)."""
import ast, json, re
from pathlib import Path
import pytest

NBS = Path(__file__).resolve().parent.parent / 'nbs'
NOTEBOOKS = sorted(p for p in NBS.rglob('*.ipynb') if not any(part.startswith(('_', '.')) for part in p.relative_to(NBS).parts))
IMPORT = re.compile(r'^(import|from)\s+\S')

def has_import(lines) -> bool:
    "An import anywhere in the cell, a function body included (nbdev_proc_nbs walks the whole syntax tree)."
    code = '\n'.join(l for l in lines if not l.lstrip().startswith(('%', '!')))
    try: tree = ast.parse(code)
    except SyntaxError: return any(IMPORT.match(l.lstrip()) for l in lines)
    return any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree))

def only_imports(lines) -> bool:
    "A cell whose statements are all imports."
    try: tree = ast.parse('\n'.join(l for l in lines if not l.lstrip().startswith(('%', '!'))))
    except SyntaxError: return False
    return bool(tree.body) and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body)

def mixed_import_cells(nb_path):
    bad = []
    for i, c in enumerate(json.loads(nb_path.read_text())['cells']):
        if c['cell_type'] != 'code': continue
        lines = ''.join(c['source']).splitlines()
        directives = [l for l in lines if l.startswith('#|')]
        if any(re.match(r'#\|\s*(export|exporti|hide)\b', d) for d in directives): continue
        if has_import(lines) and not only_imports(lines) and nb_path.stem != 'index': bad.append(i)
    return bad

@pytest.mark.parametrize('nb', NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_imports_only_in_setup_cells(nb):
    bad = mixed_import_cells(nb)
    assert not bad, (f'{nb.name}: code cells {bad} contain import statements: move the imports to the '
                     f'notebook\'s top `#| hide` (or `#| export`) cell, since nbdev_proc_nbs executes them alone')

@pytest.mark.parametrize('nb', NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_has_title_and_default_exp(nb):
    cells = json.loads(nb.read_text())['cells']
    assert cells and cells[0]['cell_type'] == 'markdown' and ''.join(cells[0]['source']).startswith('# '), \
        f'{nb.name}: the first cell must be markdown starting with "# Title"'
    if nb.stem != 'index':
        assert any('#| default_exp' in ''.join(c['source']) for c in cells if c['cell_type'] == 'code'), \
            f'{nb.name}: no `#| default_exp` cell'
