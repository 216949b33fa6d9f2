<script>
/* injected by tools/docs_check.py into every page it measures: what a reader sees at 1400x900 */
(function(){
function run(){
  const main = document.querySelector('main#quarto-document-content') || document.body;
  const top = e => Math.round(e.getBoundingClientRect().top + window.scrollY);
  // the text column: the width of the page's paragraphs (the main element also spans the margins)
  const paras = [...main.querySelectorAll('p')].filter(p => !p.closest('.cell-output, table, figure'))
    .map(p => p.getBoundingClientRect().width).filter(w => w > 0).sort((a, b) => a - b);
  const colW = paras.length ? paras[Math.floor(paras.length / 2)] : main.clientWidth;
  const outs = [...main.querySelectorAll('.cell-output-stdout, .cell-output-display, .cell-output img, figure img')]
    .filter(e => !(e.classList.contains('cell-output-markdown') && !e.querySelector('table, img')));
  const wide = [];
  for (const e of main.querySelectorAll('table, img, figure, svg')) {
    if (e.closest('pre, .katex')) continue;
    const w = Math.max(e.getBoundingClientRect().width, e.scrollWidth || 0);
    if (w > colW + 2) wide.push(e.tagName.toLowerCase() + ' ' + Math.round(w) + 'px at ' + top(e));
  }
    // a code block (not a printed output) that scrolls sideways; folded code (closed <details>) is not on screen
  const longest = p => p.innerText.split('\n').sort((a, b) => b.length - a.length)[0].slice(0, 90);
  const scrolling = [...main.querySelectorAll('pre')]
    .filter(p => p.scrollWidth > p.clientWidth + 1 && !p.closest('details:not([open])'));
  const code = scrolling.filter(p => !p.closest('.cell-output'));
  const overflowingCode = code.length;
  const scrollingText = code.map(longest);
  const scrollingOutput = scrolling.filter(p => p.closest('.cell-output')).map(longest);
  const missing = [...main.querySelectorAll('img')].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src').slice(0, 80));
  const clone = main.cloneNode(true);
  clone.querySelectorAll('pre, code.sourceCode, script, style').forEach(e => e.remove());
  const text = clone.innerText || clone.textContent;
  clone.querySelectorAll('.cell-output').forEach(e => e.remove());
  const prose = clone.innerText || clone.textContent;
  const all = main.innerText || main.textContent;
  const figs = [...main.querySelectorAll('.cell-output img, .cell-output-display svg')];
  const uncaptioned = figs.filter(i => { const f = i.closest('figure'); return !(f && f.querySelector('figcaption') && f.querySelector('figcaption').innerText.trim()); }).length;
  const r = {viewport: [window.innerWidth, window.innerHeight], mainLeft: Math.round(main.getBoundingClientRect().left), height: document.documentElement.scrollHeight, colW: Math.round(colW),
    first: outs.length ? top(outs[0]) : null, wide, overflowingCode, scrollingText, scrollingOutput, missing, figures: figs.length, uncaptioned, prose, text, all};
  const pre = document.createElement('pre'); pre.id = 'docs-measure'; pre.style.display = 'none';
  pre.textContent = JSON.stringify(r); document.body.appendChild(pre);
}
window.addEventListener('load', () => setTimeout(run, 300));
})();
</script>
