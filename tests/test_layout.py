"""The package layout of DESIGN.md: method modules are cheap to import and never depend on experiments,
experiments modules never import another chapter's experiments, one public name has one meaning, and
exported notebook cells stay small."""
import ast, json, re, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG, NBS = ROOT / 'relrep_nb', ROOT / 'nbs'
# modules that are not methods: data and encoders (real data/models), the claims runner, the CLI and its
# `python -m relrep_nb` entry point, scale-out
NOT_METHOD = {'data', 'encoders', 'claims', 'cli', '__main__', 'scale', '_modidx', '__init__'}
METHOD_MODULES = sorted(p.stem for p in PKG.glob('*.py') if p.stem not in NOT_METHOD)
EXPERIMENT_MODULES = sorted(p.stem for p in (PKG / 'experiments').glob('*.py') if p.stem != '__init__')
FORBIDDEN_IN_METHODS = ('relrep_nb.data', 'relrep_nb.encoders', 'relrep_nb.claims', 'relrep_nb.experiments',
                        'relrep_nb.cli', 'pandas', 'matplotlib', 'networkx', 'transformers')
# names that every experiments module defines by protocol (DESIGN.md, "Experiments API")
PROTOCOL_NAMES = {'SIZES', 'run', 'claims'}
# exported cells allowed over the size rule: registries and tables (notebook stem, first defined name)
SIZE_ALLOW = {('06_models', 'fit'),  # the one training loop of the package (early stopping, history, progress)
              ('14_latent_gw', 'LearnedGW'),  # the constructor: 30 documented parameters, one per line (the docs' parameter table)
              }
MAX_EXPORT_LINES = 40

def module_path(mod:str) -> Path: return PKG / (mod.replace('.', '/') + '.py')

def top_level_imports(path:Path) -> list[str]:
    "Absolute names of the modules imported at module level (inside if/try too, not inside functions)."
    pkg = path.relative_to(ROOT).with_suffix('').parts[:-1]
    out = []
    def visit(nodes):
        for n in nodes:
            if isinstance(n, ast.Import): out.extend(a.name for a in n.names)
            elif isinstance(n, ast.ImportFrom):
                if n.level:
                    base = '.'.join(pkg[:len(pkg) - n.level + 1])
                    mod = f'{base}.{n.module}' if n.module else base
                else: mod = n.module
                out.extend([mod] + [f'{mod}.{a.name}' for a in n.names])
            elif isinstance(n, (ast.If, ast.Try, ast.With)):
                visit(n.body); visit(getattr(n, 'orelse', [])); visit(getattr(n, 'finalbody', []))
                for h in getattr(n, 'handlers', []): visit(h.body)
    visit(ast.parse(path.read_text()).body)
    return out

def forbidden(imports, prefixes):
    return sorted({i for i in imports for f in prefixes if i == f or i.startswith(f + '.')})

@pytest.mark.parametrize('mod', METHOD_MODULES)
def test_method_module_imports(mod):
    bad = forbidden(top_level_imports(module_path(mod)), FORBIDDEN_IN_METHODS)
    assert not bad, f'relrep_nb/{mod}.py imports {bad} at module level: a method module imports only numpy, torch, ' \
                    f'scipy, the foundation and other method modules (import optional things inside the function)'

@pytest.mark.parametrize('mod', EXPERIMENT_MODULES)
def test_experiments_module_imports(mod):
    others = [f'relrep_nb.experiments.{m}' for m in EXPERIMENT_MODULES if m not in (mod, 'common')]
    bad = forbidden(top_level_imports(module_path(f'experiments.{mod}')), others)
    assert not bad, f'relrep_nb/experiments/{mod}.py imports another chapter\'s experiments {bad}: ' \
                    f'move what they share to experiments/common.py'

def test_forbidden_import_is_detected(tmp_path):
    "The checker itself can fail: a module importing pandas at top level (in a try block) is caught."
    p = PKG / '_layout_probe.py'
    try:
        p.write_text('import numpy\ntry:\n    import pandas as pd\nexcept ImportError: pass\nfrom .experiments import core\n'
                     'def f():\n    import matplotlib\n')
        bad = forbidden(top_level_imports(p), FORBIDDEN_IN_METHODS)
        assert bad == ['pandas', 'relrep_nb.experiments', 'relrep_nb.experiments.core']
    finally: p.unlink()

def public_definitions(path:Path) -> set[str]:
    "Public names a module defines itself (functions, classes, assignments), not the ones it imports."
    names = set()
    for n in ast.parse(path.read_text()).body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not any('patch' in (getattr(d, 'id', None), getattr(d, 'attr', None)) for d in n.decorator_list): names.add(n.name)  # a patched method is no module name
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(e, ast.Name): names.add(e.id)
    return {x for x in names if not x.startswith('_')}

def test_one_meaning_per_public_name():
    seen, dups = {}, {}
    mods = [(m, module_path(m)) for m in METHOD_MODULES + sorted(NOT_METHOD - {'_modidx', '__init__'}) if module_path(m).exists()]
    mods += [(f'experiments.{m}', module_path(f'experiments.{m}')) for m in EXPERIMENT_MODULES]
    for mod, path in mods:
        for name in public_definitions(path):
            if mod.startswith('experiments.') and name in PROTOCOL_NAMES: continue
            if name in seen: dups.setdefault(name, [seen[name]]).append(mod)
            else: seen[name] = mod
    assert not dups, f'public names defined in more than one module (rename one, or import it): {dups}'

def export_cells():
    for nb in sorted(NBS.glob('*.ipynb')):
        for c in json.loads(nb.read_text())['cells']:
            src = ''.join(c['source'])
            if c['cell_type'] == 'code' and re.match(r'#\|\s*export', src): yield nb.stem, src

def test_export_cells_are_small():
    big = []
    for stem, src in export_cells():
        # code lines: blank lines, directives and docstring examples (`>>>`, `...`) do not count
        lines = [l for l in src.splitlines() if l.strip() and not l.startswith('#|') and not l.lstrip().startswith(('>>>', '... '))]
        if len(lines) <= MAX_EXPORT_LINES: continue
        m = re.search(r'^(?:class|def|async def)\s+(\w+)|^(\w+)\s*[:=]', src, re.M)
        name = (m.group(1) or m.group(2)) if m else '?'
        if (stem, name) not in SIZE_ALLOW: big.append(f'{stem}: {name} ({len(lines)} lines)')
    assert not big, f'exported cells over {MAX_EXPORT_LINES} lines (split them: one definition per cell, ' \
                    f'methods with relrep_nb.core.patch): {big}'

def test_methods_import_cheaply():
    "Importing the chapters' methods brings in no pandas, matplotlib, transformers or networkx."
    mods = [m for m in ('gw', 'param', 'product', 'bootstrap', 'asif', 'robust', 'fmri') if module_path(m).exists()]
    code = ('import sys, importlib\n' + ''.join(f'importlib.import_module("relrep_nb.{m}")\n' for m in mods) +
            'print(sorted(m for m in ("pandas", "matplotlib", "transformers", "networkx") if m in sys.modules))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == '[]', f'importing {mods} imported {out.stdout.strip()}'

def test_discovery_imports_only_experiments():
    "Chapters register from relrep_nb.experiments; no method module registers anything."
    for mod in METHOD_MODULES:
        src = module_path(mod).read_text()
        assert 'register_chapter' not in src, f'relrep_nb/{mod}.py registers a chapter: that belongs in experiments/'

FOUNDATION = ('core', 'anchors', 'metrics', 'translate', 'models', 'claims')
DOCTEST_ALLOW = set()   # public names allowed without a `>>>` example (none today)
REAL_WORLD = ('data', 'encoders', 'cli', 'scale')   # loaders, encoders, CLI and scale-out: examples too

def test_public_api_has_doctests():
    "Every public function and class of the foundation, the method modules, data, encoders, CLI and scale shows a `>>>` example."
    import importlib, inspect
    missing = []
    for mod in sorted(set(METHOD_MODULES) | set(FOUNDATION) | set(REAL_WORLD)):
        m = importlib.import_module(f'relrep_nb.{mod}')
        for name in getattr(m, '__all__', []):
            o = getattr(m, name, None)
            if not (inspect.isfunction(o) or inspect.isclass(o)) or getattr(o, '__module__', '') != m.__name__: continue
            if '>>>' not in (o.__doc__ or '') and f'{mod}.{name}' not in DOCTEST_ALLOW: missing.append(f'{mod}.{name}')
    assert not missing, f'public names without a >>> example in their docstring: {missing}'

def test_no_definition_exported_twice():
    "nbdev 2's `nbdev_export` appends `#| export experiments.x` cells to existing modules: `tools/export.py` must be used."
    dups = {}
    for path in list(PKG.glob('*.py')) + list((PKG / 'experiments').glob('*.py')):
        names = [n.name for n in ast.parse(path.read_text()).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                 and not any('patch' in (getattr(d, 'id', None), getattr(d, 'attr', None)) for d in n.decorator_list)]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice: dups[str(path.relative_to(ROOT))] = twice
    assert not dups, f'definitions repeated within a module (regenerate with `python tools/export.py`): {dups}'

def test_no_private_torch_api():
    "The package calls torch's public API only: no `torch._...` function and no `torch.ops.aten` kernel."
    pat = re.compile(r'torch\.(_[A-Za-z]|ops\.aten)')
    bad = [f'{p.relative_to(ROOT)}:{i}' for p in sorted(PKG.rglob('*.py')) if p.name != '_modidx.py'
           for i, line in enumerate(p.read_text().splitlines(), 1) if pat.search(line)]
    assert not bad, f'private torch API used at {bad}'
