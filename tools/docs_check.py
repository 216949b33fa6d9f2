#!/usr/bin/env python
"""Check the built docs as a reader would: served on localhost, opened in headless Chromium.

Fails on: a console error or failed request in the index, the core page or a chapter page; raw TeX left
unrendered on a page with math; a local link (page or #anchor) that points nowhere, on any page; a page
whose notebook has figures but that shows none. Usage: python tools/docs_check.py [_docs] [page ...]
"""
import functools, http.server, json, re, shutil, subprocess, sys, tempfile, threading
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PAGES = ['index.html', '00_core.html', '14_latent_gw.html']

class _Links(HTMLParser):
    def __init__(self):
        super().__init__(); self.hrefs, self.ids, self.imgs = [], set(), []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if 'id' in a: self.ids.add(a['id'])
        if tag == 'a' and a.get('href'): self.hrefs.append(a['href'])
        if tag == 'img' and a.get('src'): self.imgs.append(a['src'])

def parse(path:Path) -> _Links:
    p = _Links(); p.feed(path.read_text(encoding='utf-8', errors='replace')); return p

def static_problems(site:Path) -> list[str]:
    "Local links and anchors that point nowhere; figures missing on pages whose notebook has some."
    pages = {f.name: parse(f) for f in site.glob('*.html')}
    out = []
    for name, p in pages.items():
        for h in p.hrefs:
            if re.match(r'^[a-z]+:', h) or h.startswith('//'): continue
            target, _, anchor = h.partition('#')
            target = target or name
            if not target.endswith('.html'):
                if target and not (site / target).exists(): out.append(f'{name}: link to missing file {target}')
                continue
            if target not in pages: out.append(f'{name}: link to missing page {target}'); continue
            if anchor and anchor not in pages[target].ids: out.append(f'{name}: link to missing anchor {target}#{anchor}')
        for src in p.imgs:
            if not src.startswith('data:') and not re.match(r'^[a-z]+:', src) and not (site / src).exists():
                out.append(f'{name}: missing image {src}')
        nb = ROOT / 'nbs' / (Path(name).stem + '.ipynb')
        if nb.exists() and 'image/png' in nb.read_text() and not p.imgs:
            out.append(f'{name}: its notebook has figures but the page shows none')
    return out

def serve(site:Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv

def chromium() -> str|None:
    return next((shutil.which(c) for c in ('chromium', 'chromium-browser', 'google-chrome') if shutil.which(c)), None)

def browse(url:str, exe:str) -> tuple[str, str]:
    "The rendered DOM and Chromium's log of one page."
    with tempfile.TemporaryDirectory() as prof:
        r = subprocess.run([exe, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                            '--disable-background-networking', '--disable-component-update', '--disable-sync',
                            f'--user-data-dir={prof}', '--enable-logging=stderr', '--v=0',
                            '--virtual-time-budget=8000', '--dump-dom', url],
                           capture_output=True, text=True, timeout=120)
    return r.stdout, r.stderr

def browser_problems(site:Path, pages:list[str]) -> list[str]:
    exe = chromium()
    if exe is None: return ['Chromium not found (Debian package chromium): the browser check cannot run']
    srv = serve(site); out = []
    try:
        for page in pages:
            if not (site / page).exists(): out.append(f'{page}: missing'); continue
            url = f'http://127.0.0.1:{srv.server_address[1]}/{page}'
            dom, log = browse(url, exe)
            errs = [l for l in log.splitlines() if 'CONSOLE' in l and re.search(r'error|Uncaught', l, re.I)]
            errs += [l for l in log.splitlines() if 'Failed to load resource' in l]
            out += [f'{page}: console: {l.strip()[:200]}' for l in errs]
            src = (site / page).read_text(encoding='utf-8', errors='replace')
            has_math = bool(re.search(r'\$\$|\\\(|\\\[|class="math', src))
            if has_math and 'class="katex' not in dom: out.append(f'{page}: math not rendered (no KaTeX output in the page)')
            body = re.sub(r'<(script|style)[^>]*>.*?</\1>', '', dom, flags=re.S)
            text = re.sub(r'<span class="katex.*?</span></span></span>', '', body, flags=re.S)
            if re.search(r'\$\$[^$]+\$\$|\\\([^)]*\\\)', re.sub(r'<[^>]+>', '', text)): out.append(f'{page}: raw TeX left in the page')
    finally: srv.shutdown()
    return out

def main(site='_docs', *pages):
    site = Path(site)
    problems = static_problems(site) + browser_problems(site, list(pages) or DEFAULT_PAGES)
    for p in problems: print('docs_check:', p)
    print(f'docs_check: {len(problems)} problem(s) in {site}')
    return 1 if problems else 0

if __name__ == '__main__': sys.exit(main(*sys.argv[1:]))
