#!/usr/bin/env bash
# make_torch_venv.sh X.Y.Z [DIR]: a venv (default /work/venvs/torch-X.Y.Z)
# with PyPI's torch X.Y.Z for tools/torch/gen_key_averages.py. PyPI's Linux
# wheels link against the nvidia-* CUDA libraries and do not import without
# them, even on a machine without a GPU: they are installed from the pins of
# the wheel's METADATA (cuda-toolkit[...] from 2.15), less triton, which the
# CPU programs do not use. About 4-5 GB a venv, 3-5 minutes. Run as it is
# for 2.9.1; the venvs of 2.0.0, 2.3.1, 2.5.1, 2.13.0 and 2.15.0 were made
# the same way by hand or by an earlier form of it.
set -euo pipefail
v=$1
d=${2:-/work/venvs/torch-$v}
python3 -m venv "$d"
"$d/bin/pip" install -q --no-deps "torch==$v"
meta=$(ls -d "$d"/lib/python3*/site-packages/torch-"$v".dist-info)/METADATA
# "Requires-Dist: nvidia-cudnn-cu12 (==9.1.0.70) ; platform_system == ..." -> nvidia-cudnn-cu12==9.1.0.70
mapfile -t cuda < <(sed -n 's/^Requires-Dist: \(\(nvidia\|cuda\)-[^;]*\).*/\1/p' "$meta" | sed 's/ *(\(.*\))/\1/; s/ *$//')
"$d/bin/pip" install -q filelock typing-extensions sympy networkx jinja2 mpmath MarkupSafe fsspec 'numpy<2' "${cuda[@]}"
"$d/bin/python" -W ignore -c "import torch; print(torch.__version__)"
