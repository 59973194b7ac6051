#!/usr/bin/env bash
# Runs the same outputs through two rtfprof binaries and compares them byte
# for byte: the check behind every "output unchanged" claim of a speed or
# memory change.
#
#   tools/compare_binaries.sh OLD_BINARY NEW_BINARY [OUT_DIR] [EXTRA_XPLANE_DIR...]
#
# Inputs: every XPlane fixture under testdata/xplane, the shared TPU, JAX GPU and
# 8-GPU traces (../shared/traces, when present), any EXTRA_XPLANE_DIR (e.g.
# bench/data/xplane/x1), the PyTorch traces (testdata/pytorch and the shared
# H200 ones: views, advise, steps), the TF1 fixtures cnn and gpu_synth (run_meta list
# and profile), an event file and two jobs. Outputs: the four views as text
# and CSV with every time column, `--step` views, timelines, op JSON,
# advise, steps (text, JSON, CSV), memory (text, JSON), hlo and kernels,
# ranks, partial profiles, jobs, diff and the HTML report. Prints one line per
# difference and a count; exits 1 if any output differs or a command's
# exit status does.
set -uo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2
out=${3:-$(mktemp -d)}
shift $(( $# < 3 ? $# : 3 ))
# (Outputs of an earlier run in OUT_DIR would be taken for this run's.)
rm -rf "$out/old" "$out/new" "$out/run"
mkdir -p "$out/old" "$out/new" "$out/run"

sel=micros,accelerator_micros,cpu_micros,occurrence,device,bytes,peak_bytes,float_ops,op_types
cases=()
add() { cases+=("$*"); }

xplanes=()
for d in testdata/xplane/*/; do
  [ -d "$d/plugins" ] && xplanes+=("$d")
done
for shared in ../shared/traces/xla_tpu_inference/run ../shared/traces/tf2_bert_8gpu/run ../shared/traces/jax_h200/*/; do
  [ -d "$shared" ] && xplanes+=("$shared")
done
xplanes+=("$@")
for x in "${xplanes[@]}"; do
  in="--xplane_path $x"
  for view in scope op code graph; do
    add "$view $in --select $sel --max_depth 6"
    add "$view $in --select $sel --max_depth 100 --output csv:outfile=@"
  done
  add "op $in --step 0 --select micros,occurrence,device"
  add "op $in --select micros,occurrence --order_by micros --output json:outfile=@"
  add "scope $in --step 0 --max_depth 100 --output timeline:outfile=@"
  add "graph $in --step 0 --max_depth 100000 --output timeline:outfile=@"
  add "advise $in"
  add "steps $in"
  add "steps $in --output json:outfile=@"
  add "steps $in --output csv:outfile=@"
  add "memory $in"
  add "memory $in --output json:outfile=@"
  for table in hlo kernels; do
    add "$table $in --max_depth 8"
    add "$table $in --output json:outfile=@"
    add "$table $in --output csv:outfile=@"
  done
  add "report $in --output html:outfile=@"
  add "ranks $in"
  add "ranks $in --output json:outfile=@"
  add "partial $in -o @"
done
torches=(testdata/pytorch/*.pt.trace.json*)
for shared in ../shared/traces/torch_h200/*/; do
  [ -d "$shared" ] && torches+=("$shared")
done
for t in "${torches[@]}"; do
  in="--pytorch_path $t"
  add "op $in --select $sel --max_depth 6"
  add "scope $in --select $sel --max_depth 100 --output csv:outfile=@"
  add "advise $in"
  add "steps $in"
  add "steps $in --output json:outfile=@"
  add "steps $in --output csv:outfile=@"
  add "memory $in"
  add "partial $in -o @"
done
for job in testdata/pytorch/ranks16 testdata/pytorch/gloo3; do
  add "ranks --pytorch_path $job"
  add "ranks --pytorch_path $job --output json:outfile=@"
  add "ranks --pytorch_path $job --output csv:outfile=@"
done
for fixture in cnn gpu_synth; do
  d=testdata/$fixture
  for in in "--graph_path $d/graph.pb --run_meta_path $d/run_meta_0,$d/run_meta_1,$d/run_meta_2 --op_log_path $d/tfprof_log" "--profile_path $d/profile"; do
    for view in scope op code graph; do
      add "$view $in --select $sel --max_depth 6"
      add "$view $in --select $sel --max_depth 100 --output csv:outfile=@"
    done
    add "graph $in --step 1 --max_depth 100000 --output timeline:outfile=@"
    add "advise $in"
    add "steps $in"
    add "memory $in"
    add "memory $in --output json:outfile=@"
    add "report $in --output html:outfile=@"
  done
done
add "scope --events_path testdata/events/tutorial --select $sel"
add "steps --events_path testdata/events/tutorial"
add "jobs --job w0=testdata/jobs/worker0 --job w1=testdata/jobs/worker1"
for metric in bytes micros; do
  add "diff --metric $metric --delta 0 --min_size 1 --left_profile_path testdata/cnn/profile --right_profile_path testdata/gpu_synth/profile --max_depth 100"
  add "diff --metric $metric --left_profile_path testdata/cnn/profile --right_profile_path testdata/gpu_synth/profile --output html:outfile=@"
done
add "scope --job w0=testdata/jobs/worker0 --job w1=testdata/jobs/worker1 --select $sel"

differ=0 failed=0
for i in "${!cases[@]}"; do
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    # (The same output path for both: stdout may name it.)
    file="$out/run/$i.out"
    # shellcheck disable=SC2086 # the case is a word list
    args=(${cases[$i]//@/$file})
    "$bin" "${args[@]}" > "$out/$side/$i.stdout" 2> "$out/$side/$i.stderr"
    echo $? > "$out/$side/$i.status"
    # (Timelines are written to PATH_<step>.)
    for f in "$file" "$file"_*; do [ -e "$f" ] && mv "$f" "$out/$side/$i.out"; done
  done
  [ "$(cat "$out/new/$i.status")" = 0 ] || failed=$((failed + 1))
  for kind in stdout stderr status out; do
    a="$out/old/$i.$kind" b="$out/new/$i.$kind"
    if [ -e "$a" ] || [ -e "$b" ]; then
      if ! cmp -s "$a" "$b"; then
        echo "DIFFERS ($kind): ${cases[$i]}"
        differ=$((differ + 1))
        break
      fi
    fi
  done
done
echo "${#cases[@]} cases ($failed refused by both, e.g. code and graph views of XPlane traces), $differ differ (outputs in $out)"
[ $differ = 0 ]
