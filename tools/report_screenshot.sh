#!/usr/bin/env bash
# Regenerates the README's pictures of `rtfprof report` in headless
# Chromium (apt-get install -y chromium): docs/report.png and
# docs/report_memory.png (the TF1 cnn fixture: scope view by execution time
# with one node's values in the info bar, and the memory tab),
# docs/report_jax.png (a JAX GPU trace: GPU time by JAX op),
# docs/report_pytorch.png (a PyTorch H200 trace: the module tree) and
# docs/report_ranks.png (16 PyTorch ranks: the ranks tab's heat map).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
target/release/rtfprof report --graph_path testdata/cnn/graph.pb \
  --run_meta_path testdata/cnn/run_meta_0,testdata/cnn/run_meta_1,testdata/cnn/run_meta_2 \
  --op_log_path testdata/cnn/tfprof_log --output "html:outfile=$tmp/report.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --disable-background-networking --user-data-dir="$tmp/profile" \
  --window-size=1280,640 --virtual-time-budget=5000 --screenshot=docs/report.png \
  "file://$tmp/report.html#tab=scope&hover=gradients/conv1/Conv2D_grad/Conv2DBackpropFilter" 2>/dev/null
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --disable-background-networking --user-data-dir="$tmp/profile" \
  --window-size=1280,760 --virtual-time-budget=5000 --screenshot=docs/report_memory.png \
  "file://$tmp/report.html#tab=memory" 2>/dev/null
shoot() { # shoot <picture> <height> <page and fragment>
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --disable-background-networking --user-data-dir="$tmp/profile" \
    --window-size=1280,"$2" --virtual-time-budget=5000 --screenshot="$1" "file://$tmp/$3" 2>/dev/null
}
target/release/rtfprof report --xplane_path testdata/xplane/jax_gpu_mlp --output "html:outfile=$tmp/jax.html"
shoot docs/report_jax.png 640 "jax.html#tab=scope"
target/release/rtfprof report --pytorch_path testdata/pytorch/h200_resnet18.steps2-3.pt.trace.json.gz --output "html:outfile=$tmp/pytorch.html"
shoot docs/report_pytorch.png 640 "pytorch.html#tab=scope"
target/release/rtfprof report --pytorch_path testdata/pytorch/ranks16 --output "html:outfile=$tmp/ranks.html"
shoot docs/report_ranks.png 1400 "ranks.html#tab=ranks"
echo "wrote docs/report.png, report_memory.png, report_jax.png, report_pytorch.png and report_ranks.png"
