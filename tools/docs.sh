#!/usr/bin/env bash
# Build the docs offline: nbdev_proc_nbs runs nbdev's processors (show_doc, directives) into _proc/,
# smalldocs renders that quarto project to HTML in _proc/_docs/ (quarto itself is not installable
# here; the GitHub workflow uses the real quarto through nbdev_docs). Output: _docs/.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf _proc _docs
.venv/bin/nbdev_proc_nbs --n_workers 0
.venv/bin/smalldocs render --quiet _proc
mv _proc/_docs _docs
test -s _docs/index.html && test -s _docs/00_core.html
echo "docs: $(ls _docs/*.html | wc -l) pages in _docs/"
