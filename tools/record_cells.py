#!/usr/bin/env python
"""Record the outputs of chosen `#| slow` cells of a chapter in a real Jupyter kernel.

The full-size reproductions of a chapter live in cells flagged `slow`, which the tests skip; their
outputs are the chapter's recorded results. This script runs the notebook top to bottom in a kernel
(nbclient): every cell the tests run, plus the slow cells named by index, and writes back the outputs
of the named cells only (every other cell keeps what it had). Other slow cells are not executed.

Usage (from the repository root):
    python tools/record_cells.py nbs/17_robust.ipynb 74 75 76 [--timeout 7200]
    python tools/record_cells.py nbs/17_robust.ipynb --list     # show the slow cells and their indices
"""
import argparse, copy, os, re, sys, time
from pathlib import Path
import nbformat
from nbclient import NotebookClient

_FLAG = re.compile(r'^#\|\s*(slow|gpu|eval:\s*false)\b', re.M)

def flags(src:str) -> set:
    "The nbdev flags of a cell that make the tests skip it."
    return {m.group(1).replace(' ', '') for m in _FLAG.finditer(src)}

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('notebook'); p.add_argument('cells', nargs='*', type=int, help='indices of the cells whose outputs are recorded (slow cells among them are run)')
    p.add_argument('--list', action='store_true', help='list the skipped (slow/gpu/eval: false) cells and exit')
    p.add_argument('--timeout', type=int, default=4 * 3600, help='seconds per cell')
    a = p.parse_args(argv)
    path = Path(a.notebook)
    nb = nbformat.read(path, 4)
    skipped = {i: flags(c.source) for i, c in enumerate(nb.cells) if c.cell_type == 'code' and flags(c.source)}
    if a.list:
        for i, f in skipped.items(): print(i, sorted(f), nb.cells[i].source.splitlines()[1][:100] if '\n' in nb.cells[i].source else '')
        return 0
    bad = [i for i in a.cells if not 0 <= i < len(nb.cells) or nb.cells[i].cell_type != 'code' or 'gpu' in skipped.get(i, ())]
    if bad: sys.exit(f'cells {bad} are not runnable code cells of {path} (see --list)')
    run = copy.deepcopy(nb)
    for i in skipped:
        if i not in a.cells: run.cells[i].source = ''   # not executed
    # a kernel started with MPLBACKEND set (e.g. Agg, as the tests use) draws no inline figures: the recorded cell would
    # lose its plots; the kernel gets the environment without it
    if os.environ.pop('MPLBACKEND', None) is not None: print('MPLBACKEND unset for the kernel (figures are recorded inline)')
    t0 = time.time()
    NotebookClient(run, timeout=a.timeout, kernel_name='python3', resources={'metadata': {'path': str(path.parent)}}).execute()
    nb = nbformat.read(path, 4)     # re-read: the notebook may have changed while the cells ran (another recording)
    moved = [i for i in a.cells if i >= len(nb.cells) or nb.cells[i].source != run.cells[i].source]
    if moved: sys.exit(f'cells {moved} of {path} changed while they ran: nothing written')
    for i in a.cells:
        nb.cells[i].outputs = run.cells[i].outputs
        nb.cells[i].execution_count = None
    nbformat.write(nb, path)
    print(f'recorded cells {a.cells} of {path} in {time.time() - t0:.0f} s')
    return 0

if __name__ == '__main__': sys.exit(main())
