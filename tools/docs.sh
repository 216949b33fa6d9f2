#!/usr/bin/env bash
# Build the docs offline: nbdev_proc_nbs runs nbdev's processors (show_doc, directives) into _proc/,
# tools/docs_pre.py shows docstring examples as code, smalldocs renders that quarto project to HTML in _proc/_docs/ (quarto itself is not installable
# here; the GitHub workflow uses the real quarto through nbdev_docs), tools/docs_post.py makes links
# local and serves KaTeX from the site. Output: _docs/.
# It never leaves the sandbox: the venv's bin ($VIRTUAL_ENV, else .venv) comes first on PATH, and a no-op `quarto` shim stops nbdev's
# quarto check (which would run sudo, download quarto and pip-install into the first pip on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
shim="$PWD/.cache/docs-shim"; mkdir -p "$shim"
printf '#!/bin/sh\n# no-op quarto for the offline docs build (tools/docs.sh)\nexit 0\n' > "$shim/quarto"; chmod +x "$shim/quarto"
venv="${VIRTUAL_ENV:-$PWD/.venv}"     # an activated virtual environment, else the project's .venv
[ -x "$venv/bin/nbdev_proc_nbs" ] || { echo "docs: no nbdev in $venv (run tools/setup.sh, or activate a venv with the docs extra)" >&2; exit 1; }
export PATH="$shim:$venv/bin:$PATH" PIP_NO_INDEX=1
rm -rf _proc _docs
nbdev_proc_nbs --n_workers 0
python tools/docs_pre.py _proc
smalldocs render --quiet _proc
mv _proc/_docs _docs
python tools/docs_post.py _docs
test -s _docs/index.html && test -s _docs/00_core.html
echo "docs: $(ls _docs/*.html | wc -l) pages in _docs/ (serve: $venv/bin/python -m http.server -d _docs 8000)"
