#!/usr/bin/env bash
# Bounded memory on large Kineto traces (issue 49, bench/large_pytorch.md):
# `rtfprof steps` and `rtfprof kernels` on 1 GB and 10 GB repeats of the
# shared GPT-2 H200 trace, read whole and a window of steps at a time; wall
# time, peak RSS, and whether both readings write the same output.
#
#   bench/large_pytorch.sh [DIR]   (DIR: where the traces go, ~12 GB free)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-bench/data/large}
mkdir -p "$dir"
src=$(ls ../shared/traces/torch_h200/torch_tx/*.pt.trace.json.gz)
bin=target/release/rtfprof
[ -x "$bin" ] || cargo build --release
for size in 1000 10000; do
  out="$dir/tx_${size}mb.pt.trace.json"
  [ -f "$out" ] || python3 tools/torch/repeat_trace_large.py "$src" --size "$size" --out "$out"
done
[ -f "$dir/tx_1000mb.pt.trace.json.gz" ] || gzip -1 -c "$dir/tx_1000mb.pt.trace.json" > "$dir/tx_1000mb.pt.trace.json.gz"
echo "| command | trace | reading | wall (s) | MB/s | peak RSS (MB) | output as whole |"
echo "|---|---|---|---:|---:|---:|---|"
for command in steps kernels; do
  for trace in "$dir/tx_1000mb.pt.trace.json" "$dir/tx_1000mb.pt.trace.json.gz" "$dir/tx_10000mb.pt.trace.json"; do
    mb=$(( $(stat -L -c %s "${trace%.gz}") / 1000000 ))
    for window in 0 128; do
      [ "$window" = 0 ] && [ "$mb" -gt 5000 ] && [ -z "${WHOLE_10G:-}" ] && continue
      out="$dir/$command.$window.out"
      /usr/bin/time -f "%e %M" -o "$dir/time" "$bin" "$command" --pytorch_path "$trace" --window_mb "$window" --output "json:outfile=$out" > "$out.txt"
      read -r wall kb < "$dir/time"
      same=-
      if [ "$window" != 0 ] && [ -f "$dir/$command.0.out" ]; then
        cmp -s "$dir/$command.0.out" "$out" && cmp -s "$dir/$command.0.out.txt" "$out.txt" && same=yes || same=NO
      fi
      reading=$([ "$window" = 0 ] && echo whole || echo "windows of ${window} MB")
      echo "| $command | $(basename "$trace") | $reading | $wall | $(echo "$mb / $wall" | bc) | $(( kb / 1024 )) | $same |"
    done
    rm -f "$dir/$command.0.out" "$dir/$command.0.out.txt"
  done
done
