#!/usr/bin/env bash
# `rtfprof check A B` against reading A and B (issue 48: "check on two
# 500 MB traces takes no longer than reading them"; bench/check.md): the
# wall time, CPU time and peak RSS of `check A B`, of `steps` on each
# trace (the step table: one read of the trace) and of `op` on each (the
# node model), ROUNDS times, alternating.
#
#   bench/check.sh pytorch|xplane A B [BIN] [ROUNDS]
#
# A, B: two traces of the kind (a .pt.trace.json, or an XPlane log
# directory); BIN: the rtfprof binary (default target/release/rtfprof);
# ROUNDS: how many times each command runs (default 2). Prints a Markdown
# table, a row a run, then the sums that compare check with reading.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: bench/check.sh pytorch|xplane A B [BIN] [ROUNDS]}
a=${2:?A}
b=${3:?B}
bin=${4:-target/release/rtfprof}
rounds=${5:-2}
[ "$kind" = pytorch ] || [ "$kind" = xplane ] || { echo "bench/check.sh: kind $kind is not pytorch or xplane" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One run: its wall and user seconds and peak RSS (KB) appended to
# $tmp/NAME, one line a round.
run() {
  local name=$1
  shift
  local status=0
  /usr/bin/time -f "%e s %U user %M KB" -o "$tmp/time" "$bin" "$@" > /dev/null 2> "$tmp/err" || status=$?
  # check exits 1 on a regression: that is a result, not a failure.
  if [ "$status" != 0 ] && { [ "$name" != check ] || [ "$status" != 1 ]; }; then
    echo "bench/check.sh: $name exited $status: $(cat "$tmp/err")" >&2
    exit 1
  fi
  tail -n 1 "$tmp/time" >> "$tmp/$name"
}
for _ in $(seq "$rounds"); do
  run steps_a steps "--${kind}_path" "$a"
  run steps_b steps "--${kind}_path" "$b"
  run op_a op "--${kind}_path" "$a"
  run op_b op "--${kind}_path" "$b"
  run check check "$a" "$b" --output none
done
mb() { echo $(( $(du -sb "$1" | cut -f1) / 1000000 )); }
echo "A: $a ($(mb "$a") MB), B: $b ($(mb "$b") MB), $rounds rounds"
echo
echo "| command | wall (s) | user (s) | peak RSS (MB) |"
echo "|---|---:|---:|---:|"
for name in steps_a steps_b op_a op_b check; do
  while read -r wall _ user _ kb _; do
    echo "| ${name/_/ } | $wall | $user | $(( kb / 1000 )) |"
  done < "$tmp/$name"
done
echo
# Medians over the rounds (the lower middle one for an even count).
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
field() { awk -v f="$2" '{ print $f }' "$tmp/$1" | median; }
echo "| median of $rounds rounds | wall (s) | user (s) |"
echo "|---|---:|---:|"
for pair in "steps A + steps B:steps_a steps_b" "op A + op B:op_a op_b" "check A B:check"; do
  label=${pair%%:*}
  read -r -a names <<< "${pair#*:}"
  wall=0 user=0
  for name in "${names[@]}"; do
    wall=$(echo "$wall + $(field "$name" 1)" | bc)
    user=$(echo "$user + $(field "$name" 3)" | bc)
  done
  printf "| %s | %.2f | %.2f |\n" "$label" "$wall" "$user"
done
