#!/usr/bin/env python3
"""Make testdata/xplane/gpu_nccl_synth: a real GPU trace with collectives added.

    /work/venvs/tf/bin/python tools/xplane/make_nccl_synth.py [--stretch K] [--out DIR]

No XPlane trace this project can read has GPU collectives inside its steps
(../shared/traces/README.md: the 8-GPU TF trace reduces on the host; the
H200 traces ran one GPU). This SYNTHETIC trace stands in for a data-parallel
JAX step, to test that `check` and `ranks` count each host's communication
the same way. It starts from the real H200 trace
../shared/traces/jax_h200/jax_mlp_nocb/vm.xplane.pb (10 steps, all kept)
and adds, on a new line `Stream #99(Compute)` of `/device:GPU:0`, one NCCL
all-reduce kernel a step, as a gradient's all-reduce runs beside the rest of
the backward pass:

- it starts when the step's gradient of `dense_1`'s weights (the
  matrix multiplication kernel, not the memset before it, whose `name`
  stat is `jit(step)/grad/transpose(jvp(dense_1))/transpose`) ends, and lasts K
  times as long as that matrix multiplication (K = --stretch, 1 by default),
  so that the backward pass's next kernels overlap part of it;
- it is named `ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)` (NCCL 2.19's
  name; XProf's and rtfprof's rule is the `nccl` prefix) and has a
  `correlation_id` stat, as CUPTI's kernel events do, and no other stat
  (no `hlo_op`: it adds to no XLA instruction).

Everything else is the real trace's, byte for byte after re-serialization.
"""
import argparse
import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from tensorflow.tsl.profiler.protobuf import xplane_pb2  # noqa: E402
from make_gpu_synth import metadata_id  # noqa: E402  (this folder's)

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "../shared/traces/jax_h200/jax_mlp_nocb/vm.xplane.pb"
GRADIENT = "jit(step)/grad/transpose(jvp(dense_1))/transpose"
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stretch", type=float, default=1.0, help="the all-reduce's length, in gradient lengths")
    parser.add_argument("--out", type=Path, default=ROOT / "testdata/xplane/gpu_nccl_synth")
    args = parser.parse_args()
    space = xplane_pb2.XSpace()
    space.ParseFromString(SRC.read_bytes())
    gpu = next(p for p in space.planes if p.name == "/device:GPU:0")
    stat_names = {k: m.name for k, m in gpu.stat_metadata.items()}
    op_name, correlation = metadata_id(gpu.stat_metadata, "name"), metadata_id(gpu.stat_metadata, "correlation_id")
    stream = next(line for line in gpu.lines if line.events)
    gradients = []
    last_correlation = 0
    for event in stream.events:
        for stat in event.stats:
            if stat.metadata_id == correlation:
                last_correlation = max(last_correlation, stat.uint64_value)
            is_memset = gpu.event_metadata[event.metadata_id].name.startswith("Memset")
            if stat.metadata_id == op_name and stat_names.get(stat.ref_value) == GRADIENT and not is_memset:
                gradients.append(event)
    if not gradients:
        raise SystemExit(f"{SRC}: no kernel of {GRADIENT}")
    nccl = gpu.lines.add()
    nccl.id = 99
    nccl.name = "Stream #99(Compute)"
    nccl.display_name = nccl.name
    nccl.timestamp_ns = stream.timestamp_ns
    kernel = metadata_id(gpu.event_metadata, NCCL)
    for i, gradient in enumerate(sorted(gradients, key=lambda e: e.offset_ps)):
        e = nccl.events.add()
        e.metadata_id = kernel
        e.offset_ps = gradient.offset_ps + gradient.duration_ps
        e.duration_ps = int(gradient.duration_ps * args.stretch)
        s = e.stats.add()
        s.metadata_id = correlation
        s.uint64_value = last_correlation + 1 + i
    dst = args.out / "plugins/profile/run0/vm.xplane.pb"
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(space.SerializeToString())
    print("wrote", dst, dst.stat().st_size, "bytes,", len(gradients), "all-reduces")


if __name__ == "__main__":
    main()
