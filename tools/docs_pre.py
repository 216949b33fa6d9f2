#!/usr/bin/env python
"""Show docstring examples as code in the docs: `>>>` lines (and the output lines after them) become fenced
Python blocks in the processed notebooks, before they are rendered (as markdown they would turn into nested
blockquotes with typographic quotes). Usage: python tools/docs_pre.py _proc
Also: the documentation of experiment helpers (`relrep_nb.experiments.*`, the code behind a chapter's tables)
is demoted from `###` to `####`, so that a method page's table of contents lists the methods, not the helpers.
And the settings that only quarto reads (`output-file` in each page's front matter, `keep-md`, the commonmark
format in `_quarto.yml`) are dropped from the processed copy, so the offline renderer does not warn about them.
And the links nbdev writes into the parameter comments of a signature (a code block, where markdown does not
render) become the plain names they link.
"""
import json, re, sys
from pathlib import Path

def fence(lines:list[str]) -> list[str]:
    "Wrap each run of doctest lines (a `>>>` line, its `...` continuations and output, up to a blank line) in a code fence."
    out, i = [], 0
    while i < len(lines):
        if lines[i].lstrip().startswith('>>>'):
            j = i
            while j < len(lines) and lines[j].strip() and not lines[j].strip().startswith('"""'): j += 1
            block = [l if l.endswith('\n') else l + '\n' for l in lines[i:j]]
            out += ['\n```python\n'] + block + ['```\n']
            i = j
        else: out.append(lines[i]); i += 1
    return out

def demote_experiments(md:list[str]) -> list[str]:
    "A show_doc of an experiments helper with its `### name` heading as `#### name` (out of the table of contents)."
    if not any('/relrep_nb/experiments/' in l for l in md[:6]): return md
    return [re.sub(r'^### ', '#### ', l) for l in md]

def drop_quarto_only(folder:Path):
    "Remove `output-file:` front-matter lines and `keep-md`/`commonmark` settings from the processed project."
    q = folder / '_quarto.yml'
    if q.exists():
        q.write_text(''.join(l for l in q.read_text().splitlines(keepends=True) if l.strip() not in ('keep-md: true', 'commonmark: default')))
    for p in folder.rglob('*.ipynb'):
        nb = json.loads(p.read_text(encoding='utf-8'))
        c = nb.get('cells', [{}])[0]
        if c.get('cell_type') == 'raw' and any(l.startswith('output-file:') for l in c['source']):
            c['source'] = [l for l in c['source'] if not l.startswith('output-file:')]
            p.write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding='utf-8')

_LINK = re.compile(r'\[(`[^`\]]+`)\]\([^)\s]+\)')

def unlink_code(md:list[str]) -> list[str]:
    "Inside fenced code blocks, ``[`name`](url)`` -> `` `name` `` (a link cannot render inside code)."
    out, inside = [], False
    for l in md:
        if l.lstrip().startswith('```'): inside = not inside
        out.append(_LINK.sub(r'\1', l) if inside else l)
    return out

def main(folder='_proc'):
    drop_quarto_only(Path(folder))
    n = 0
    for p in Path(folder).rglob('*.ipynb'):
        nb = json.loads(p.read_text(encoding='utf-8')); changed = False
        for c in nb.get('cells', []):
            for o in c.get('outputs', []):
                md = o.get('data', {}).get('text/markdown')
                if md and demote_experiments(md) != md: o['data']['text/markdown'] = md = demote_experiments(md); changed = True
                if md and unlink_code(md) != md: o['data']['text/markdown'] = md = unlink_code(md); changed = True
                if md and any(l.lstrip().startswith('>>>') for l in md):
                    o['data']['text/markdown'] = fence(md); changed = True; n += 1
        if changed: p.write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding='utf-8')
    print(f'docs_pre: {n} docstring examples shown as code')

if __name__ == '__main__': main(*sys.argv[1:])
