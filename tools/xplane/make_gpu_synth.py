#!/usr/bin/env python3
"""Make testdata/xplane/gpu_synth: a GPU-shaped trace built from a real one.

    /work/venvs/tf/bin/python tools/xplane/make_gpu_synth.py

No machine here has a GPU, so this SYNTHETIC trace stands in for one in CI
(the real 8-GPU trace in ../shared/traces/ is not part of the repository).
It starts from the real tf_loop trace (testdata/xplane/tf_loop) and adds
what a GPU run records, in the newer layout:

- a plane `/device:GPU:0` with a line `Stream #7(Compute)`: for every
  `<name>:<type>` op event of the host's `tf_Compute` lines, one kernel that
  starts when the host event ends and lasts half as long, with a `tf_op`
  stat `<name>:<type>` (a ref to a stat metadata, as TF writes strings it
  repeats), and for every third op a memcpy `MEMCPYHToD` named through the
  `level 0` stat instead, with a `#bytes=…#` suffix as TF adds;
- host `MemoryAllocation` / `MemoryDeallocation` events on the same line:
  each op allocates `allocation_bytes` = 256 × (its index mod 7 + 1) at its
  start (`requested_bytes` 8 fewer), with `tf_op`, `allocator_name`
  `GPU_0_bfc`, `addr` and the allocator's running `bytes_allocated`; two ops
  in three free it at their end, the others keep it (residual bytes).

Everything else (step markers, eager ops, timings) is the real trace's.
"""
import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from tensorflow.tsl.profiler.protobuf import xplane_pb2  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "testdata/xplane/tf_loop/plugins/profile/run0/host0.xplane.pb"
DST = ROOT / "testdata/xplane/gpu_synth/plugins/profile/run0/host0.xplane.pb"


def metadata_id(table, name):
    """The id of `name` in a plane's stat or event metadata, added if new."""
    for k, m in table.items():
        if m.name == name:
            return k
    k = max(list(table.keys()) + [0]) + 1
    table[k].id = k
    table[k].name = name
    return k


def stat_id(plane, name):
    return metadata_id(plane.stat_metadata, name)


def event_id(plane, name):
    return metadata_id(plane.event_metadata, name)


def is_op(name):
    if ":" not in name:
        return False
    op, typ = name.split(":", 1)
    return bool(op) and (op[0].isalnum() or op[0] == ".") and bool(typ) and (typ[0].isupper() or typ[0] == "_") \
        and " " not in typ


def main():
    space = xplane_pb2.XSpace()
    space.ParseFromString(SRC.read_bytes())
    host = next(p for p in space.planes if p.name == "/host:CPU")
    gpu = space.planes.add()
    gpu.id = max(p.id for p in space.planes) + 1
    gpu.name = "/device:GPU:0"
    stream = gpu.lines.add()
    stream.id = 7
    stream.name = "Stream #7(Compute)"
    tf_op_g = stat_id(gpu, "tf_op")
    level0 = stat_id(gpu, "level 0")
    names = {}
    alloc = {n: stat_id(host, n) for n in
             ["allocator_name", "bytes_allocated", "requested_bytes", "allocation_bytes", "addr", "tf_op"]}
    ev_alloc, ev_free = event_id(host, "MemoryAllocation"), event_id(host, "MemoryDeallocation")
    base = None
    kernels = []
    in_use = 0
    index = 0
    for line in host.lines:
        if not line.name.startswith("tf_Compute"):
            continue
        base = line.timestamp_ns if base is None else min(base, line.timestamp_ns)
        added = []
        for event in list(line.events):
            name = host.event_metadata[event.metadata_id].name
            if not is_op(name):
                continue
            start = line.timestamp_ns * 1000 + event.offset_ps
            end = start + event.duration_ps
            kernels.append((end, max(event.duration_ps // 2, 1000), name, index % 3 == 2))
            size = 256 * (index % 7 + 1)
            addr = 0x7f0000000000 + 4096 * index
            in_use += size
            added.append((event.offset_ps, ev_alloc, name, size, addr, in_use))
            if index % 3 != 0:
                in_use -= size
                added.append((event.offset_ps + event.duration_ps, ev_free, name, size, addr, in_use))
            index += 1
        for offset, meta, name, size, addr, used in added:
            e = line.events.add()
            e.metadata_id = meta
            e.offset_ps = offset
            for key, value in [("allocator_name", "GPU_0_bfc"), ("tf_op", name.split(":")[0])]:
                s = e.stats.add()
                s.metadata_id = alloc[key]
                s.str_value = value
            for key, value in [("bytes_allocated", used), ("requested_bytes", size - 8),
                               ("allocation_bytes", size), ("addr", addr)]:
                s = e.stats.add()
                s.metadata_id = alloc[key]
                s.int64_value = value
        events = sorted(line.events, key=lambda e: (e.offset_ps, -e.duration_ps))
        del line.events[:]
        line.events.extend(events)
    stream.timestamp_ns = base
    for end, duration, name, memcpy in sorted(kernels):
        e = stream.events.add()
        e.offset_ps = end - base * 1000
        e.duration_ps = duration
        s = e.stats.add()
        if memcpy:
            e.metadata_id = event_id(gpu, "MEMCPYHToD")
            s.metadata_id = level0
            s.str_value = name + "#bytes=%d#" % (duration // 1000)
        else:
            e.metadata_id = event_id(gpu, "kernel_" + name.split(":")[1])
            if name not in names:
                names[name] = stat_id(gpu, name)
            s.metadata_id = tf_op_g
            s.ref_value = names[name]
    DST.parent.mkdir(parents=True, exist_ok=True)
    DST.write_bytes(space.SerializeToString())
    print("wrote", DST, DST.stat().st_size, "bytes,", len(kernels), "kernels")


if __name__ == "__main__":
    main()
