#!/usr/bin/env python
"""Convert a percent-format script (`# %%` code cells, `# %% [markdown]` markdown cells) to a notebook.

Usage: python tools/py2nb.py SRC.py [DST.ipynb]

Chapters are authored or edited either in Jupyter or as percent scripts; the notebook in `nbs/`
is the source of truth that is committed. Markdown cells are written as `# ` comment lines.
"""
import json, re, sys
from pathlib import Path

def _cell(kind, lines):
    while lines and not lines[-1].strip(): lines.pop()
    while lines and not lines[0].strip(): lines.pop(0)
    if kind == 'markdown': lines = [re.sub(r'^# ?', '', l) for l in lines]
    src = [l + '\n' for l in lines]
    if src: src[-1] = src[-1].rstrip('\n')
    c = {'cell_type': kind, 'metadata': {}, 'source': src}
    if kind == 'code': c.update(execution_count=None, outputs=[])
    return c

def convert(text):
    cells, kind, buf = [], None, []
    for line in text.splitlines():
        m = re.match(r'^# %%( \[markdown\])?\s*$', line)
        if m:
            if kind is not None: cells.append(_cell(kind, buf))
            kind, buf = ('markdown' if m.group(1) else 'code'), []
        elif kind is not None: buf.append(line)
    if kind is not None: cells.append(_cell(kind, buf))
    return {'cells': [c for c in cells if c['source']],
            'metadata': {'kernelspec': {'display_name': 'python3', 'language': 'python', 'name': 'python3'}},
            'nbformat': 4, 'nbformat_minor': 5}

if __name__ == '__main__':
    src = Path(sys.argv[1]); dst = Path(sys.argv[2]) if len(sys.argv) > 2 else src.with_suffix('.ipynb')
    dst.write_text(json.dumps(convert(src.read_text()), indent=1) + '\n')
    print(f'{src} -> {dst}')
