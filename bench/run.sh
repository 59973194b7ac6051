#!/usr/bin/env bash
# rtfprof benchmark: the one command.  See bench/README.md.
#
#   bench/run.sh [--regenerate] [--quick] [--no-perf] [--no-scale]
#                [--rtfprof PATH | --no-build | --head]
#                [--max-wait-idle=SECONDS] [--idle-load=LOAD]
#
# 1. If TensorFlow is importable (TF_PYTHON, default /work/tfvenv/bin/python),
#    generates bench/data/ when files are missing (or all of it with
#    --regenerate) with bench/gen_data.py.
# 2. Builds rtfprof (`cargo build --release`) unless --rtfprof PATH or
#    --no-build is given (--head: build the committed HEAD alone, without
#    uncommitted changes), and copies the binary to bench/data/rtfprof.bench
#    so a rebuild during the run cannot change what is measured.
# 3. Runs bench/run.py: times rtfprof (and tfprof's engine when TF is
#    importable), writes bench/results.md and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."

TF_PYTHON=${TF_PYTHON:-/work/tfvenv/bin/python}
REGEN=()
PASS=()
RTFPROF=""
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --regenerate) REGEN=(--regenerate) ;;
    --rtfprof) RTFPROF=$2; shift ;;
    --rtfprof=*) RTFPROF=${1#--rtfprof=} ;;
    --no-build) BUILD=0 ;;
    --head) BUILD=head ;;
    --quick|--no-perf|--no-scale) PASS+=("$1") ;;
    --max-wait-idle=*|--idle-load=*) PASS+=("$1") ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

# ---- TensorFlow available?
HAVE_TF=0
if [ -x "$TF_PYTHON" ] || command -v "$TF_PYTHON" >/dev/null 2>&1; then
  if TF_CPP_MIN_LOG_LEVEL=3 "$TF_PYTHON" -c 'import tensorflow' >/dev/null 2>&1; then
    HAVE_TF=1
  fi
fi

# ---- data
if [ "$HAVE_TF" = 1 ]; then
  echo "== data (TensorFlow at $TF_PYTHON)" >&2
  TF_CPP_MIN_LOG_LEVEL=2 "$TF_PYTHON" bench/gen_data.py "${REGEN[@]}" 2>&1 \
    | grep -v -e '^WARNING' -e '^Instructions for updating' -e '^This API was' \
              -e '^[IW]0000' -e 'All log messages before' -e 'To enable the following' \
              -e 'tensor_shape_from_node_def_name' >&2 || true
  [ -f bench/data/x1/graph.pb ] || { echo "data generation failed" >&2; exit 1; }
else
  echo "== TensorFlow not importable ($TF_PYTHON): rtfprof alone on existing bench/data/" >&2
  if [ ! -f bench/data/x1/graph.pb ]; then
    echo "bench/data/x1 is missing and cannot be generated without TensorFlow" >&2
    exit 1
  fi
  [ ${#REGEN[@]} -eq 0 ] || echo "--regenerate ignored: no TensorFlow" >&2
fi

# ---- binary
LABEL=""
if [ -z "$RTFPROF" ] && [ "$BUILD" = head ]; then
  # The committed HEAD, exported (git archive) to bench/data/head/src and built
  # with its own target dir, so uncommitted work in src/ is not measured.
  HEAD=$(git rev-parse HEAD)
  H=bench/data/head
  # Re-export only when the sources changed (keeps cargo's incremental state).
  KEY=$(git rev-parse HEAD:src HEAD:crates HEAD:Cargo.toml HEAD:Cargo.lock | tr '\n' ' ')
  if [ "$(cat $H/KEY 2>/dev/null)" != "$KEY" ]; then
    rm -rf $H/src && mkdir -p $H/src
    git archive "$HEAD" | tar -x -C $H/src
    echo "$KEY" > $H/KEY
  fi
  echo "== cargo build --release of HEAD ${HEAD:0:12} in $H" >&2
  cargo build --release --manifest-path $H/src/Cargo.toml --target-dir $H/target >&2
  cp $H/target/release/rtfprof bench/data/rtfprof.bench
  RTFPROF=bench/data/rtfprof.bench
  LABEL="committed HEAD ${HEAD:0:12} built alone (git archive + cargo build --release)"
  export RTFPROF_BENCH_COMMIT=$HEAD
elif [ -z "$RTFPROF" ]; then
  if [ "$BUILD" = 1 ]; then
    echo "== cargo build --release" >&2
    cargo build --release >&2
  fi
  cp target/release/rtfprof bench/data/rtfprof.bench
  RTFPROF=bench/data/rtfprof.bench
  if [ "$BUILD" = 1 ]; then
    LABEL="target/release/rtfprof (cargo build --release), copied to $RTFPROF"
  else
    LABEL="target/release/rtfprof as found (--no-build), copied to $RTFPROF"
    export RTFPROF_BENCH_UNKNOWN=1
  fi
else
  LABEL="$RTFPROF"
  export RTFPROF_BENCH_UNKNOWN=1
fi

# ---- hyperfine / time: optional, the driver falls back without them
command -v hyperfine >/dev/null || echo "hyperfine not found (apt-get install -y hyperfine): Python timing loop" >&2
[ -x /usr/bin/time ] || echo "/usr/bin/time not found (apt-get install -y time): RSS from wait4" >&2

TFARG=()
[ "$HAVE_TF" = 1 ] && TFARG=(--tf-python "$TF_PYTHON")
echo "== benchmark" >&2
exec python3 bench/run.py --rtfprof "$RTFPROF" --rtfprof-label "$LABEL" \
  "${TFARG[@]}" "${PASS[@]}"
