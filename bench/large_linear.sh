#!/usr/bin/env bash
# Time linear in size (issue 49): each command that reads a large Kineto
# trace a window of steps at a time, on a 1/20 trace and the 10 GB one
# (both repeats of the shared GPT-2 H200 trace, tools/torch/repeat_trace_large.py),
# in the same windows of 128 MB, on a quiet machine. Prints wall and user
# CPU for both and their ratios against the ratio of sizes
# (bench/large_pytorch.md, "Time against size").
#
#   bench/large_linear.sh DIR     (DIR holds tx_500mb.pt.trace.json and
#                                  tx_10000mb.pt.trace.json)
#   REPEAT=3 COMMANDS="steps op" bench/large_linear.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
bin=target/release/rtfprof
small="$dir/tx_500mb.pt.trace.json"
large="$dir/tx_10000mb.pt.trace.json"
size_ratio=$(echo "scale=4; $(stat -L -c %s "$large") / $(stat -L -c %s "$small")" | bc)
# Both traces in the page cache first, so the runs time the reading, not the disk.
cat "$small" "$large" > /dev/null
echo "size ratio: $size_ratio; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| command | 500 MB wall (s) | user (s) | 10 GB wall (s) | user (s) | wall ratio / size ratio | user ratio / size ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for command in ${COMMANDS:-steps kernels ranks op memory partial report}; do
  case $command in
    op) output=(--output "file:outfile=$out/o") ;;
    report) output=(--output "html:outfile=$out/o") ;;
    partial) output=(-o "$out/o") ;;
    *) output=(--output "json:outfile=$out/o") ;;
  esac
  best=()
  for trace in "$small" "$large"; do
    # The fastest of REPEAT runs (default 1): the least disturbed.
    w=; u=
    for _ in $(seq "${REPEAT:-1}"); do
      /usr/bin/time -f "%e %U" -o "$out/time" "$bin" "$command" --pytorch_path "$trace" --window_mb 128 "${output[@]}" > /dev/null
      read -r wall user < "$out/time"
      if [ -z "$w" ] || [ "$(echo "$wall < $w" | bc)" = 1 ]; then w=$wall; u=$user; fi
    done
    best+=("$w" "$u")
  done
  wr=$(echo "scale=3; ${best[2]} / ${best[0]} / $size_ratio" | bc)
  ur=$(echo "scale=3; ${best[3]} / ${best[1]} / $size_ratio" | bc)
  echo "| $command | ${best[0]} | ${best[1]} | ${best[2]} | ${best[3]} | $wr | $ur |"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
