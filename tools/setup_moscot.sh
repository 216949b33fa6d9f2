#!/bin/bash
# The moscot environment for the learned-GW head-to-head (a peer that the benchmarks page compared once): .venv-moscot with moscot
# (on ott-jax and jax, CPU) and the package's core install. Kept out of the default .venv: jax and its
# dependencies are a peer's, not ours.
# Usage: bash tools/setup_moscot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
py="${PYTHON:-python3}"
t0=$(date +%s)
[ -x .venv-moscot/bin/python ] || "$py" -m venv .venv-moscot
.venv-moscot/bin/python -m pip install -q --upgrade pip
.venv-moscot/bin/python -m pip install -q "torch==2.13.0" "moscot==0.5.2" -e "."
.venv-moscot/bin/python -m pip check || true
echo "setup_moscot: done in $(( $(date +%s) - t0 ))s, $(du -sm .venv-moscot | cut -f1) MB ($(.venv-moscot/bin/python -c \
  'import moscot, ott, jax; print("moscot", moscot.__version__, "ott-jax", ott.__version__, "jax", jax.__version__)'))"
