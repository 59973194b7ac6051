#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from the committed fixtures (the corpora
# themselves are not committed: corpus/ and artifacts/ are gitignored).
# Usage: fuzz/seed.sh   (from anywhere; existing corpus files are kept)
set -euo pipefail
fuzz="$(cd "$(dirname "$0")" && pwd)"
data="$fuzz/../testdata"
models=(mlp cnn while gpu_synth)

seed() { # seed <target> <source file> <name>
    mkdir -p "$fuzz/corpus/$1"
    cp "$2" "$fuzz/corpus/$1/$3"
}

for m in "${models[@]}"; do
    seed graph "$data/$m/graph.pb" "$m.graph.pb"
    seed graph "$data/$m/graph.pbtxt" "$m.graph.pbtxt"
    seed graph_text "$data/$m/graph.pbtxt" "$m.graph.pbtxt"
    for r in "$data/$m"/run_meta_*; do
        seed run_meta "$r" "$m.$(basename "$r")"
    done
    seed op_log "$data/$m/tfprof_log" "$m.tfprof_log"
    seed profile "$data/$m/profile" "$m.profile"
done

# checkpoint: [index length u32 LE][P.index][P.data-00000-of-00001]
le32() { # the 4 little-endian bytes of $1
    local n=$1
    printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((n & 255)) $((n >> 8 & 255)) $((n >> 16 & 255)) $((n >> 24 & 255))
}
ckpt="$data/ckpt/model.ckpt"
if [ -e "$ckpt.index" ]; then
    mkdir -p "$fuzz/corpus/checkpoint"
    {
        printf "$(le32 "$(stat -c %s "$ckpt.index")")"
        cat "$ckpt.index" "$ckpt.data-00000-of-00001"
    } > "$fuzz/corpus/checkpoint/model.ckpt"
    # The index alone, without data.
    { printf "$(le32 "$(stat -c %s "$ckpt.index")")"; cat "$ckpt.index"; } > "$fuzz/corpus/checkpoint/index_only"
fi

# text_differential: each top-level block of the text graphs (whole graphs
# are too big to mutate quickly), the small text fixtures, and a few graphs
# with the text-format forms TensorFlow itself does not write.
mkdir -p "$fuzz/corpus/text_differential"
for m in "${models[@]}"; do
    awk -v out="$fuzz/corpus/text_differential/$m.block" \
        '/^[a-z_]+ [{<]/ { n++; f = sprintf("%s%04d", out, n) } f { print > f } /^[}>]/ { close(f); f = "" }' \
        "$data/$m/graph.pbtxt"
done
for f in "$data"/bad/graph.*.pbtxt; do
    seed text_differential "$f" "bad.$(basename "$f")"
done
features() { # features <name> <text>
    printf '%s\n' "$2" > "$fuzz/corpus/text_differential/features.$1"
}
features lists "node: [{ name: 'a' op: \"Const\" input: ['x', \"y:1\"] input: [] }, < name: \"b\"; op: 'B', >]"
features tensor 'node { name: "c" op: "Const" attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: -1 } unknown_rank: true } float_val: [1.5, -inf, nan, 1e-3f, .5, 5., -0.0] double_val: [Infinity, -1E+300] int64_val: -9223372036854775808 uint64_val: 0xFFFFFFFFFFFFFFFF uint32_val: 017 bool_val: [t, False, 1] tensor_content: "\000\x01\377\\\"" string_val: "a" "\u00e9" "\U0001F600\n" } } } }'
features attrs 'node < name: "l" op: "L" attr: < key: "l" value: < list { i: [1, -0x10, 017] f: [0, 1e38] b: true type: [DT_INT32, 3] shape { } } > > attr { key: "f" value { func { name: "g" attr { key: "k" value { placeholder: "T" } } } } } # comment
  attr { key: "t" value { type: DT_HALF } } attr { key: "b" value { b: f } } device: "/cpu:0" >'
features library 'library { function { signature { name: "f" input_arg { name: "x" type: DT_FLOAT } is_stateful: True } ret { key: "y" value: "x" } arg_attr { key: 0 value { attr { key: "k" value { s: "v" } } } } resource_arg_unique_id { key: 1 value: 2 } node_def { name: "n" op: "Identity" } } gradient { function_name: "f" gradient_func: "g" } }
versions { producer: 1 min_consumer: 0 bad_consumers: [1, 2] }'
features debug_info 'debug_info { files: "f.py" traces { key: "t" value { file_line_cols { line: 1 col: 2 func: "main" } frame_id: [1, 2] } } name_to_trace_id { key: "n" value: 18446744073709551615 } frames_by_id { key: 7 value { file_index: 0 } } }'

# Regression inputs found by earlier runs, by target prefix.
if [ -d "$data/bad" ]; then
    for t in graph graph_text run_meta op_log profile cli_args checkpoint; do
        for f in "$data/bad/$t".*; do
            [ -e "$f" ] && seed "$t" "$f" "bad.$(basename "$f")"
        done
    done
fi

# tfprof_text: tfprof's own saved scope outputs (the goldens).
for f in "$data"/golden/*.scope.select.*.out "$data"/golden/*.scope.diff_side.out; do
    seed tfprof_text "$f" "$(basename "$f")"
done
# cli_args: one seed per golden case, the case name dropped (view + flags).
mkdir -p "$fuzz/corpus/cli_args"
n=0
while read -r name rest; do
    case "$name" in ''|'#'*) continue ;; esac
    n=$((n + 1))
    printf '%s\n' "$rest" > "$fuzz/corpus/cli_args/case$n"
done < "$data/golden/cases.txt"

# events: each committed log as is (mode byte 0) and as its records for the
# target to frame (mode byte 1: `[length: u32 LE][data]` each).
mkdir -p "$fuzz/corpus/events"
find "$data/events" -name '*tfevents*' | while read -r f; do
    name="$(echo "${f#"$data/events/"}" | tr / _)"
    { printf '\x00'; cat "$f"; } > "$fuzz/corpus/events/raw.$name"
    python3 - "$f" "$fuzz/corpus/events/records.$name" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
out, at = [b"\x01"], 0
while at + 12 <= len(data):
    (n,) = struct.unpack_from("<Q", data, at)
    out.append(struct.pack("<I", n) + data[at + 12:at + 12 + n])
    at += 16 + n
open(sys.argv[2], "wb").write(b"".join(out))
PY
done

for t in "$fuzz"/corpus/*; do
    echo "$(basename "$t"): $(ls "$t" | wc -l) seeds"
done

# hlo: the JAX GPU traces, mostly their XLA programs.
for t in "$data"/xplane/jax_gpu_*/plugins/profile/run0/*.xplane.pb; do
    seed hlo "$t" "$(echo "${t#"$data/xplane/"}" | cut -d/ -f1)"
done

# xplane: every committed trace.
find "$data/xplane" -name '*.xplane.pb' | while read -r t; do
    seed xplane "$t" "$(echo "${t#"$data/xplane/"}" | tr / _)"
done

# pytorch: each committed trace as is, read at once (mode byte 0) and in
# small pieces (1), and a GPU trace's first events (the shared traces are
# too big to mutate quickly).
mkdir -p "$fuzz/corpus/pytorch"
for t in "$data"/pytorch/*.pt.trace.json* "$data"/bad/pytorch.*; do
    [ -e "$t" ] || continue
    { printf '\x00'; cat "$t"; } > "$fuzz/corpus/pytorch/at_once.$(basename "$t")"
    { printf '\x01'; cat "$t"; } > "$fuzz/corpus/pytorch/pieces.$(basename "$t")"
done
gpu="$fuzz/../../shared/traces/torch_h200/torch_resnet18"
if [ -d "$gpu" ]; then
    python3 - "$gpu" "$fuzz/corpus/pytorch/gpu_head.json" <<'PY'
import glob, gzip, json, sys
trace = json.load(gzip.open(glob.glob(sys.argv[1] + "/*.pt.trace.json.gz")[0], "rt"))
events = trace["traceEvents"]
# The profiler span and 40 events of each category, in file order.
keep, seen = [], {}
for e in events:
    c = e.get("cat")
    if c == "Trace" or seen.get(c, 0) < 40:
        seen[c] = seen.get(c, 0) + 1
        keep.append(e)
trace["traceEvents"] = keep
open(sys.argv[2], "w").write("\x02" + json.dumps(trace))
PY
fi

# partial: partial profiles of a few fixtures, written by the release
# binary when it is built (target/release/rtfprof); skipped otherwise.
bin="$fuzz/../target/release/rtfprof"
if [ -x "$bin" ]; then
    mkdir -p "$fuzz/corpus/partial"
    "$bin" partial --pytorch_path "$data/pytorch/shapes_merges.pt.trace.json" -o "$fuzz/corpus/partial/shapes_merges.rtfprof" >/dev/null
    "$bin" partial --profile_path "$data/mlp/profile" -o "$fuzz/corpus/partial/mlp.rtfprof" >/dev/null
    "$bin" partial --xplane_path "$data/xplane/jax_jit" -o "$fuzz/corpus/partial/jax_jit.rtfprof" >/dev/null
fi
