#!/usr/bin/env bash
# Peak memory of every command on a large XPlane trace (issue 49, item 2;
# bench/large_xplane.md): wall time and peak RSS of each command, one
# after the other, with its output kept so that two binaries' outputs can
# be compared (`cmp -s OUT_A/steps.txt OUT_B/steps.txt`, ...).
#
#   bench/large_xplane.sh XPLANE [BIN] [OUT]
#
# XPLANE: an XPlane log directory, run directory or .xplane.pb (e.g. the
# 1.06 GB flax_cnn_nocb x3400 trace that `tools/xplane/repeat_trace.py SRC
# OUT 3400 --gpu` makes from ../shared/traces/jax_h200/flax_cnn_nocb);
# BIN: the rtfprof binary (default target/release/rtfprof); OUT: where the
# outputs go (default bench/data/large_xplane/out). `jobs` reads the
# trace as a job (--job NAME=FILE: the host's .xplane.pb file), `diff`
# compares two steps of it, `check` compares it with itself.
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:?usage: bench/large_xplane.sh XPLANE [BIN] [OUT]}
bin=${2:-target/release/rtfprof}
out=${3:-bench/data/large_xplane/out}
mkdir -p "$out"
[ -x "$bin" ] || cargo build --release
run() {
  local name=$1
  shift
  local status=0
  /usr/bin/time -f "%e %M" -o "$out/time" "$bin" "$@" > "$out/$name.txt" 2> "$out/$name.err" || status=$?
  read -r wall kb < <(tail -n 1 "$out/time")
  [ "$status" = 0 ] || echo "($name: exit status $status, see $out/$name.err)" >&2
  echo "| \`$name\` | $wall | $(( kb / 1024 )) |"
}
echo "| command | wall (s) | peak RSS (MiB) |"
echo "|---|---:|---:|"
# (`graph` needs a GraphDef, which an XPlane trace has not.)
for view in scope op code advise memory steps hlo kernels ranks; do
  run "$view" "$view" --xplane_path "$trace"
done
host=$trace
[ -d "$host" ] && host=$(find "$host" -name '*.xplane.pb' | sort | tail -n 1)
run jobs jobs --job "host=$host"
run report report --xplane_path "$trace" --output "html:outfile=$out/report.html"
run partial partial --xplane_path "$trace" -o "$out/partial.rtfprof"
run cut cut --xplane_path "$trace" --steps 10..12 -o "$out/cut.xplane.pb"
run check check "$trace" "$trace"
run diff diff --xplane_path "$trace" --left_step 10 --right_step 11 --metric micros
rm -f "$out/time"
