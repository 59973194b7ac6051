#!/usr/bin/env bash
# Bounded memory on large Kineto traces (issue 49, bench/large_pytorch.md):
# each command that reads a large trace a window of steps at a time, on 1 GB
# and 10 GB repeats of the shared GPT-2 H200 trace, read whole and in
# windows; wall time, peak RSS, and whether both readings write the same
# output.
#
#   bench/large_pytorch.sh [DIR]   (DIR: where the traces go, ~12 GB free)
#   SIZES="10000" COMMANDS="op memory" bench/large_pytorch.sh DIR   (some rows)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-bench/data/large}
mkdir -p "$dir"
src=$(ls ../shared/traces/torch_h200/torch_tx/*.pt.trace.json.gz)
bin=target/release/rtfprof
[ -x "$bin" ] || cargo build --release
sizes=${SIZES:-1000 10000}
for size in $sizes; do
  out="$dir/tx_${size}mb.pt.trace.json"
  [ -f "$out" ] || python3 tools/torch/repeat_trace_large.py "$src" --size "$size" --out "$out"
done
[ ! -f "$dir/tx_1000mb.pt.trace.json" ] || [ -f "$dir/tx_1000mb.pt.trace.json.gz" ] || gzip -1 -c "$dir/tx_1000mb.pt.trace.json" > "$dir/tx_1000mb.pt.trace.json.gz"
echo "| command | trace | reading | wall (s) | MB/s | peak RSS (MB) | output as whole |"
echo "|---|---|---|---:|---:|---:|---|"
traces=()
for size in $sizes; do
  traces+=("$dir/tx_${size}mb.pt.trace.json")
  [ "$size" != 1000 ] || traces+=("$dir/tx_1000mb.pt.trace.json.gz")
done
for command in ${COMMANDS:-steps kernels ranks op memory partial}; do
  for trace in "${traces[@]}"; do
    mb=$(( $(stat -L -c %s "${trace%.gz}") / 1000000 ))
    for window in 0 128; do
      [ "$window" = 0 ] && [ "$mb" -gt 5000 ] && [ -z "${WHOLE_10G:-}" ] && continue
      out="$dir/$command.$window.out"
      case $command in
        op) output=(--output "file:outfile=$out") ;;
        partial) output=(-o "$out") ;;
        *) output=(--output "json:outfile=$out") ;;
      esac
      /usr/bin/time -f "%e %M" -o "$dir/time" "$bin" "$command" --pytorch_path "$trace" --window_mb "$window" "${output[@]}" > "$out.txt"
      read -r wall kb < "$dir/time"
      same=-
      if [ "$window" != 0 ] && [ -f "$dir/$command.0.out" ]; then
        # (partial's stdout names its output file.)
        cmp -s "$dir/$command.0.out" "$out" && { [ "$command" = partial ] || cmp -s "$dir/$command.0.out.txt" "$out.txt"; } && same=yes || same=NO
      fi
      reading=$([ "$window" = 0 ] && echo whole || echo "windows of ${window} MB")
      echo "| $command | $(basename "$trace") | $reading | $wall | $(echo "$mb / $wall" | bc) | $(( kb / 1024 )) | $same |"
    done
    rm -f "$dir/$command.0.out" "$dir/$command.0.out.txt"
  done
done
