#!/usr/bin/env bash
# Regenerates docs/report.png and docs/report_memory.png, the README's
# pictures of `rtfprof report`: the cnn fixture's page in headless Chromium
# (apt-get install -y chromium), scope view by execution time with one
# node's values in the info bar, and the memory tab.
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
echo "wrote docs/report.png and docs/report_memory.png"
