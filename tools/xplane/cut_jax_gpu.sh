#!/usr/bin/env bash
# Cuts the small JAX GPU fixtures of testdata/xplane from the real H200
# traces in ../shared/traces/jax_h200 (which the repository does not keep):
# the last steps of each, byte for byte (tools/xplane/trim_trace.py), then
# XProf's goldens for them (tools/xplane/xprof_goldens.py).
#
#   PYTHON=/path/to/python-with-xplane_pb2 XPROF_PYTHON=/work/venvs/xprof/bin/python \
#     tools/xplane/cut_jax_gpu.sh
#
# PYTHON needs tsl's xplane_pb2 (TensorFlow's, or one compiled from
# crates/proto/proto/tsl/profiler/protobuf/xplane.proto with grpcio-tools on PYTHONPATH).
#
# RECORDED=DIR also cuts the fixtures of programs recorded for this project
# by tools/xplane/record_heldout.py (DIR/<program>/vm.xplane.pb, as its
# --unpack writes them): the conditionals probe `cond_gemm`, recorded on an
# H200 on 2026-11-27 (not kept elsewhere: the committed cut is its record).
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-python3}
xprof=${XPROF_PYTHON:-/work/venvs/xprof/bin/python}
shared=../shared/traces/jax_h200
# fixture  source trace  steps kept
cuts=(
  "jax_gpu_mlp $shared/jax_mlp 2"
  "jax_gpu_mlp_nocb $shared/jax_mlp_nocb 2"
  "jax_gpu_cnn $shared/flax_cnn 2"
  "jax_gpu_lstm $shared/jax_lstm 1"
  "jax_gpu_lstm_nocb $shared/jax_lstm_nocb 1"
  "jax_gpu_xfer $shared/jax_xfer 2"
)
if [[ -n "${RECORDED:-}" ]]; then
  cuts=(
    "jax_gpu_cond $RECORDED/cond_gemm 6"
    "jax_gpu_cond_nocb $RECORDED/cond_gemm_nocb 6"
  )
fi
names=()
for cut in "${cuts[@]}"; do
  read -r fixture source steps <<<"$cut"
  rm -rf "testdata/xplane/$fixture"
  "$python" tools/xplane/trim_trace.py "$source/vm.xplane.pb" "testdata/xplane/$fixture" "$steps"
  names+=("$fixture")
done
"$xprof" tools/xplane/xprof_goldens.py "${names[@]}"
