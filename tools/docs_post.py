#!/usr/bin/env python
"""Make the offline docs self-contained: API cross-links to the local pages, KaTeX served from the site.

nbdev writes doc links to `doc_host`/`doc_baseurl` with its own page names (`core.html`); the offline
site (smalldocs) keeps the notebook names (`00_core.html`). KaTeX comes from Debian's `libjs-katex`
(copied into `_docs/katex/`) instead of a CDN. Usage: python tools/docs_post.py _docs
"""
import re, shutil, sys
from configparser import ConfigParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KATEX_DIRS = [Path('/usr/share/javascript/katex'), Path('/usr/share/nodejs/katex/dist')]

def page_map() -> dict:
    "nbdev's page name (number prefix dropped) -> the local page (the notebook's name)."
    out = {}
    for nb in (ROOT / 'nbs').glob('*.ipynb'):
        out[re.sub(r'^\d+[a-z]?_', '', nb.stem) + '.html'] = nb.stem + '.html'
        out[nb.stem + '.html'] = nb.stem + '.html'
    return out

def host_prefix() -> str:
    cfg = ConfigParser(delimiters=['=']); cfg.read(ROOT / 'settings.ini'); c = cfg['DEFAULT']
    return c['doc_host'].replace('%(user)s', c['user']) + c['doc_baseurl'].replace('%(repo)s', c['repo'])

def fix_links(html:str, pages:dict, prefix:str) -> tuple[str, int]:
    n = 0
    def sub(m):
        nonlocal n
        page, anchor = m.group(1), m.group(2) or ''
        if page in pages: n += 1; return f'href="{pages[page]}{anchor}"'
        return m.group(0)
    pat = re.compile(r'href="' + re.escape(prefix.rstrip('/')) + r'/([\w.-]+\.html)(#[^"]*)?"')
    return pat.sub(sub, html), n

def drop_missing_anchors(site:Path) -> int:
    "Links to a name the target page does not document (a private helper named in prose) go to the page itself."
    ids = {f.name: set(re.findall(r'\sid="([^"]+)"', f.read_text(encoding='utf-8'))) for f in site.glob('*.html')}
    n = 0
    for f in site.glob('*.html'):
        html = f.read_text(encoding='utf-8')
        def sub(m):
            nonlocal n
            page, anchor = m.group(1), m.group(2)
            if page in ids and anchor not in ids[page]: n += 1; return f'href="{page}"'
            return m.group(0)
        f.write_text(re.sub(r'href="([\w.-]+\.html)#([^"]+)"', sub, html), encoding='utf-8')
    return n

def katex_dir():
    return next((d for d in KATEX_DIRS if (d / 'katex.min.js').exists()), None)

def fix_katex(html:str) -> str:
    "Point KaTeX's script and style tags (any CDN) at the local copy."
    html = re.sub(r'(src|href)="[^"]*?/katex(?:@[\d.]+)?/dist/([\w./-]+)"', r'\1="katex/\2"', html)
    return re.sub(r'(src|href)="https?://[^"]*?katex[^"]*?/(katex(?:\.min)?\.(?:js|css)|contrib/[\w.-]+)"', r'\1="katex/\2"', html)

def main(site='_docs'):
    site = Path(site); pages, prefix = page_map(), host_prefix()
    kd = katex_dir()
    if kd:
        shutil.copytree(kd, site / 'katex', dirs_exist_ok=True)
        for f in (site / 'katex').rglob('*.js'):      # Debian ships some scripts unminified only
            mini = f.with_name(f.stem + '.min.js')
            if not f.stem.endswith('.min') and not mini.exists(): shutil.copy(f, mini)
    else: print('docs_post: libjs-katex not installed: math keeps the CDN (install the Debian package libjs-katex)', file=sys.stderr)
    total = 0
    for f in site.glob('*.html'):
        html, n = fix_links(f.read_text(encoding='utf-8'), pages, prefix)
        if kd: html = fix_katex(html)
        f.write_text(html, encoding='utf-8'); total += n
    dropped = drop_missing_anchors(site)
    print(f'docs_post: {total} API links made local ({dropped} to undocumented names point to their page)'
          + (', KaTeX served from katex/' if kd else ''))

if __name__ == '__main__': main(*sys.argv[1:])
