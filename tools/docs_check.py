#!/usr/bin/env python
"""Check the built docs as a reader would: served on localhost, opened in headless Chromium.

Fails on: a console error or failed request in the index, the core page or a chapter page; raw TeX left
unrendered on a page with math; a local link (page or #anchor) that points nowhere, on any page; a page
whose notebook has figures but that shows none. Every page is also measured at 1400x900 as a reader sees
it (`measure`): the home page and each chapter's first page show a printed result or a figure within
FIRST_RESULT_PX of the top; no page is taller than MAX_HEIGHT_PX; no table or figure is wider than the text
column; no code block scrolls sideways (printed outputs may: they are listed by `--measure`); no raw markdown link, no missing image, no figure
without a caption, no development-log phrase (benchmark paths, commit hashes, issue numbers, run records,
machine names). Usage: python tools/docs_check.py [_docs] [page ...]; `--measure` prints the figures only.
"""
import functools, html, http.server, json, re, shutil, subprocess, sys, tempfile, threading
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PAGES = ['index.html', '00_core.html', '14_latent_gw.html']
FIRST_RESULT_PX, MAX_HEIGHT_PX = 2000, 25000
# the home page and the first page of each research chapter open with the method working
FIRST_PAGES = ['index.html', '10_relreps.html', '10b_relreps_stitching.html', '11_invariances.html', '12_bootstrap.html',
               '13_asif.html', '14_latent_gw.html', '15_fmri.html', '16_param_wip.html', '17_robust.html']
DEV_LOG = [  # (what, pattern, where): 'all' is everything on the page, 'text' leaves out code, 'prose' outputs too
    ('benchmark path', r'\bbench/[\w./-]+', 'all'),
    ('commit hash', r'(?<![\w.+-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f][0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w.])', 'prose'),
    ('issue number', r'(?i)\b(?:issue|PR|pull request)s? ?#?\d+|(?<![\w&/])#\d{1,4}\b', 'prose'),
    ('run record', r'(?i)previous record|the one before|fixed before the run|rule,? fixed before|this session|'
                   r'previous session|\(seed \d{3}\)', 'all'),
    ('per-run CPU figure', r'(?i)\d\s*(?:user )?CPU[- ]s\b|\bs of CPU\b', 'prose'),
    ('machine name', r'\b(?:AMD|Intel|EPYC|Xeon|Ryzen|H100|H200|\d-core)\b', 'prose'),
]
DEV_LOG_ALLOWED = {'19_benchmarks.html': {'benchmark path', 'machine name', 'per-run CPU figure'}}
RAW_LINK = r'\[[^\]\n]{1,120}\]\((?:https?:|[\w./-]+\.html|#)[^)\s]*\)'

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

MEASURE_JS = (ROOT / 'tools' / 'docs_measure.js').read_text()

def measure(site:Path, pages:list[str], exe:str) -> dict:
    "Each page as a reader sees it at 1400x900: the figures `tools/docs_measure.js` reports (its JSON)."
    class Inject(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            f = site / self.path.lstrip('/').split('?')[0]
            if f.suffix != '.html' or not f.is_file(): return super().do_GET()
            body = f.read_text(encoding='utf-8', errors='replace').replace('</body>', MEASURE_JS + '</body>').encode()
            self.send_response(200); self.send_header('Content-Type', 'text/html; charset=utf-8')
            self.send_header('Content-Length', str(len(body))); self.end_headers(); self.wfile.write(body)
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Inject, directory=str(site)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    out = {}
    try:
        for page in pages:
            with tempfile.TemporaryDirectory() as prof:
                r = subprocess.run([exe, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--hide-scrollbars',
                                    '--disable-background-networking', '--disable-component-update', '--disable-sync',
                                    f'--user-data-dir={prof}', '--window-size=1400,900', '--virtual-time-budget=10000',
                                    '--dump-dom', f'http://127.0.0.1:{srv.server_address[1]}/{page}'],
                                   capture_output=True, text=True, timeout=120)
            m = re.search(r'<pre id="docs-measure"[^>]*>(.*?)</pre>', r.stdout, re.S)
            out[page] = json.loads(html.unescape(m.group(1))) if m else None
    finally: srv.shutdown()
    return out

def dev_log(page:str, m:dict) -> list[str]:
    "Development-log phrases on a page: (what, the phrase)."
    hits = []
    for what, pat, where in DEV_LOG:
        if what in DEV_LOG_ALLOWED.get(page, ()): continue
        hits += [(what, x.group(0)) for x in re.finditer(pat, m[where])]
    return hits

def reader_problems(site:Path, ms:dict) -> list[str]:
    "What a reader meets: late first result, very long pages, wide tables, raw links, missing images, dev log."
    out = []
    for page, m in ms.items():
        if m is None: out.append(f'{page}: not measured (the page did not finish loading)'); continue
        if page in FIRST_PAGES and (m['first'] is None or m['first'] > FIRST_RESULT_PX):
            out.append(f'{page}: first printed result or figure at {m["first"]} px (at most {FIRST_RESULT_PX})')
        if m['height'] > MAX_HEIGHT_PX: out.append(f'{page}: {m["height"]} px tall (at most {MAX_HEIGHT_PX})')
        out += [f'{page}: wider than the text column ({m["colW"]} px): {w}' for w in m['wide']]
        out += [f'{page}: code scrolls sideways (a line longer than the column): {t!r}' for t in m['scrollingText']]
        out += [f'{page}: missing image {src}' for src in m['missing']]
        if m['uncaptioned']: out.append(f'{page}: {m["uncaptioned"]} of {m["figures"]} figure(s) without a caption')
        out += [f'{page}: raw markdown link {x[:80]}' for x in re.findall(RAW_LINK, m['all'])]
        out += [f'{page}: development log ({what}): {x[:80]!r}' for what, x in dev_log(page, m)]
    return out

def report(ms:dict):
    print(f'{"page":34s} {"first":>6s} {"height":>7s} {"wide":>4s} {"code>":>5s} {"figs":>4s} {"nocap":>5s} {"rawlink":>7s} {"devlog":>6s}')
    for page, m in ms.items():
        if m is None: print(f'{page:34s} not measured'); continue
        print(f'{page:34s} {str(m["first"]):>6s} {m["height"]:7d} {len(m["wide"]):4d} {m["overflowingCode"]:5d} {m["figures"]:4d} '
              f'{m["uncaptioned"]:5d} {len(re.findall(RAW_LINK, m["all"])):7d} {len(dev_log(page, m)):6d}')

def main(site='_docs', *pages):
    only_measure = '--measure' in pages
    pages = [p for p in pages if p != '--measure']
    site = Path(site)
    exe = chromium()
    every = sorted(f.name for f in site.glob('*.html'))
    ms = measure(site, pages or every, exe) if exe else {}
    if only_measure:
        report(ms)
        for page, m in ms.items():
            for what, x in (dev_log(page, m) if m else []): print(f'  {page}: {what}: {x[:70]!r}')
            for t in (m['scrollingOutput'] if m else []): print(f'  {page}: a printed output scrolls: {t!r}')
        return 0
    problems = static_problems(site) + browser_problems(site, pages or DEFAULT_PAGES) + reader_problems(site, ms)
    for p in problems: print('docs_check:', p)
    print(f'docs_check: {len(problems)} problem(s) in {site}')
    return 1 if problems else 0

if __name__ == '__main__': sys.exit(main(*sys.argv[1:]))
