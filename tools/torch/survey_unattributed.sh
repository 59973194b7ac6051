#!/usr/bin/env bash
# How much of each published trace's GPU time the op view leaves
# `(unattributed)`: the survey behind docs/book/src/reference/pytorch_schemas.md.
#
#   python3 tools/torch/published_traces.py /work/.mirror /work/published
#   tools/torch/survey_unattributed.sh target/release/rtfprof /work/published
#
# One line per trace: its GPU time (µs, summed over steps) and the share
# under `(unattributed)`, or the error rtfprof gave.
set -uo pipefail
bin=${1:?usage: survey_unattributed.sh RTFPROF PUBLISHED_DIR}
dir=${2:?usage: survey_unattributed.sh RTFPROF PUBLISHED_DIR}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for f in "$dir"/*/*; do
  case $f in *MANIFEST*) continue;; esac
  rm -f "$out/op.json"
  if ! err=$("$bin" op --pytorch_path "$f" --select accelerator_micros --output "json:outfile=$out/op.json" 2>&1 >/dev/null); then
    echo "$(basename "$f") ERROR $(echo "$err" | tail -1)"
    continue
  fi
  python3 - "$f" "$out/op.json" <<'PY'
import json, os, sys
root = json.load(open(sys.argv[2]))["root"]
def micros(node, part):
    if "per_step" in node:
        return sum(node["per_step"]["metrics"]["accelerator_micros"]["values"])
    return node[part]["accelerator_micros"]
total = micros(root, "total")
left = sum(micros(c, "own") for c in root["children"] if c["name"] == "(unattributed)")
print(f"{os.path.basename(sys.argv[1])[:60]:60s} gpu_us={total:12.0f} unattributed={left / total * 100 if total else 0:6.1f}%")
PY
done
