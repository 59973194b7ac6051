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
# proto/tsl/profiler/protobuf/xplane.proto with grpcio-tools on PYTHONPATH).
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-python3}
xprof=${XPROF_PYTHON:-/work/venvs/xprof/bin/python}
shared=../shared/traces/jax_h200
# fixture  source trace  steps kept
cuts=(
  "jax_gpu_mlp jax_mlp 2"
  "jax_gpu_mlp_nocb jax_mlp_nocb 2"
  "jax_gpu_cnn flax_cnn 2"
  "jax_gpu_lstm jax_lstm 1"
  "jax_gpu_lstm_nocb jax_lstm_nocb 1"
  "jax_gpu_xfer jax_xfer 2"
)
names=()
for cut in "${cuts[@]}"; do
  read -r fixture source steps <<<"$cut"
  rm -rf "testdata/xplane/$fixture"
  "$python" tools/xplane/trim_trace.py "$shared/$source/vm.xplane.pb" "testdata/xplane/$fixture" "$steps"
  names+=("$fixture")
done
"$xprof" tools/xplane/xprof_goldens.py "${names[@]}"
