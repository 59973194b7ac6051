#!/usr/bin/env python3
"""Make a big XPlane trace from a real one: each plane's events N times.

    /work/venvs/tf/bin/python tools/xplane/repeat_trace.py SRC.xplane.pb OUT_DIR N [--gpu]
        # -> OUT_DIR/plugins/profile/run0/host0.xplane.pb

For bench/'s large-trace measurements (issue 20: 264 MB and 1 GB traces;
machines here cannot trace a TF2 run that long in reasonable time).  SRC
is a real TF2 trace with step markers (bench/gen_xplane.py's, ~10.6 MB:
N=25 gives ~270 MB, N=100 ~1.08 GB).  Copy k of every line's events is
shifted by k times its plane's span (first event start to last event end),
so each copy follows the previous one on the same thread; step markers
(events with a `step_num` stat) are renumbered by k times the number of
steps, so that steps stay distinct and each copy's ops stay inside their
copy's markers.  Everything else (metadata, stats, durations, order) is
the source's.  The output is written as it is made, line by line through
temporary files, so memory stays near the source's size.  Generated files
stay out of the repository (bench/data/ is ignored).

--gpu, for traces with device planes (JAX/TF on GPUs, issue 29; bench/
xplane.py --family gpu): a device event belongs to its host launch through
ids and time, so the copies must keep them together.  Every plane is then
shifted by k times the span of the whole trace (all planes: host and device
stay aligned), and the ids that pair events are renumbered per copy, as a
longer run numbers them: `correlation_id` (a launch and its kernels, host
and device planes) by k times its range, and `_p`, `_c` and `run_id` (the
producer/consumer pairs of XProf's grouping; JAX's `_p` of an execution is
its `run_id`) by k times their common range, the values taken as int64
(two's complement: a uint64 `_p` and its int64 `run_id` stay equal).  The
step markers of every plane are renumbered by the same count (the steps of
the whole trace).  Kept as they are: `cuda_graph_id` and
`cuda_graph_node_id` (a longer run relaunches the same graphs),
`/host:metadata` (the programs), every other stat.  Without --gpu the
output is byte for byte what it was before --gpu existed.
"""
import os
import sys
import tempfile

try:
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
except ImportError:  # standalone tsl
    from tsl.profiler.protobuf import xplane_pb2


def varint(v):
    """Protobuf varint of an int64 (negative: 10 bytes, two's complement)."""
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(tag, wire_type):
    return varint((tag << 3) | wire_type)


def plane_span(plane):
    """(first event start, last event end) over the plane's lines, in ps."""
    first, last = None, None
    for line in plane.lines:
        base = line.timestamp_ns * 1000
        for e in line.events:
            start = base + e.offset_ps
            first = start if first is None else min(first, start)
            last = max(last if last is not None else start, start + e.duration_ps)
    return first, last


def step_range(plane):
    """The step_num stat's metadata id and the (min, max) step of the plane."""
    ids = [k for k, m in plane.stat_metadata.items() if m.name == "step_num"]
    if not ids:
        return None, None
    steps = [s.int64_value or s.uint64_value for line in plane.lines for e in line.events
             for s in e.stats if s.metadata_id == ids[0]]
    return ids[0], (min(steps), max(steps)) if steps else None


# --gpu: the ids that pair events, by groups that share one numbering.
ID_GROUPS = (("correlation_id",), ("_p", "_c", "run_id"))


def as_int64(stat):
    """An integer stat's value as int64 (a uint64 in two's complement), or None."""
    kind = stat.WhichOneof("value")
    if kind == "int64_value":
        return stat.int64_value
    if kind == "uint64_value":
        v = stat.uint64_value
        return v - (1 << 64) if v >= 1 << 63 else v
    return None


def id_shifts(space):
    """--gpu: {stat name: how much copy 1 adds to it}, the range of its
    group's values over the whole trace (so copies never collide)."""
    shifts = {}
    for group in ID_GROUPS:
        values = []
        for plane in space.planes:
            ids = {k for k, m in plane.stat_metadata.items() if m.name in group}
            if ids:
                values += [v for line in plane.lines for e in line.events for s in e.stats
                           if s.metadata_id in ids and (v := as_int64(s)) is not None]
        if values:
            shifts.update((name, max(values) - min(values) + 1) for name in group)
    return shifts


def renumbered(stat, inc):
    """The stat's serialized bytes with `inc` added to its integer value
    (wrapping at 64 bits; the stored type kept)."""
    kind = stat.WhichOneof("value")
    head = field(1, 0) + varint(stat.metadata_id) if stat.metadata_id else b""
    if kind == "uint64_value":
        return head + field(3, 0) + varint((stat.uint64_value + inc) % (1 << 64))
    v = (stat.int64_value + inc) % (1 << 64)
    return head + field(4, 0) + varint(v - (1 << 64) if v >= 1 << 63 else v)


def write_line(line, copies, shift_ps, step_id, step_count, out, id_incs=None):
    """Writes the serialized XLine with `copies` copies of its events.
    `id_incs` (--gpu): {stat metadata id: what each copy adds to it}."""
    header = xplane_pb2.XLine()
    header.CopyFrom(line)
    del header.events[:]
    if header.duration_ps:
        header.duration_ps += (copies - 1) * shift_ps
    out.write(header.SerializeToString())
    id_incs = id_incs or {}
    plain = []  # (offset, event bytes without its offset) for most events
    marked = []  # (index, event) for step markers, re-serialized per copy
    templates = {}  # index: [bytes or (stat, inc)] for --gpu's events with ids
    for i, e in enumerate(line.events):
        if step_id is not None and any(s.metadata_id == step_id for s in e.stats):
            marked.append((i, e))
            plain.append(None)
            continue
        if e.WhichOneof("data") != "offset_ps":
            plain.append((None, field(4, 2) + varint(e.ByteSize()) + e.SerializeToString()))
            continue
        if any(s.metadata_id in id_incs and as_int64(s) is not None for s in e.stats):
            # The event's fields in field order, as SerializeToString writes
            # them; the offset (None) and the ids filled in per copy.
            parts = [xplane_pb2.XEvent(metadata_id=e.metadata_id).SerializeToString(), None,
                     xplane_pb2.XEvent(duration_ps=e.duration_ps).SerializeToString()]
            for s in e.stats:
                if s.metadata_id in id_incs and as_int64(s) is not None:
                    parts.append((s, id_incs[s.metadata_id]))
                else:
                    data = s.SerializeToString()
                    parts.append(field(4, 2) + varint(len(data)) + data)
            templates[i] = (e.offset_ps, parts)
            plain.append(None)
            continue
        body = xplane_pb2.XEvent()
        body.CopyFrom(e)
        body.ClearField("offset_ps")
        plain.append((e.offset_ps, body.SerializeToString()))
    tag_event, tag_offset = field(4, 2), field(2, 0)
    tag_stat = field(4, 2)
    marked = dict(marked)
    for k in range(copies):
        shift = k * shift_ps
        chunk = []
        for i, item in enumerate(plain):
            if i in templates:
                offset, parts = templates[i]
                data = []
                for part in parts:
                    if part is None:
                        data.append(tag_offset + varint(offset + shift))
                    elif isinstance(part, tuple):
                        stat = renumbered(part[0], k * part[1])
                        data.append(tag_stat + varint(len(stat)) + stat)
                    else:
                        data.append(part)
                data = b"".join(data)
                chunk.append(tag_event + varint(len(data)) + data)
                continue
            if item is None:
                e = xplane_pb2.XEvent()
                e.CopyFrom(marked[i])
                e.offset_ps += shift
                for s in e.stats:
                    if s.metadata_id == step_id:
                        if s.HasField("uint64_value"):
                            s.uint64_value += k * step_count
                        else:
                            s.int64_value += k * step_count
                    elif s.metadata_id in id_incs and as_int64(s) is not None:
                        s.ParseFromString(renumbered(s, k * id_incs[s.metadata_id]))
                data = e.SerializeToString()
                chunk.append(tag_event + varint(len(data)) + data)
                continue
            offset, body = item
            if offset is None:
                chunk.append(body)
                continue
            offset_field = tag_offset + varint(offset + shift)
            chunk.append(tag_event + varint(len(offset_field) + len(body)) + offset_field + body)
        out.write(b"".join(chunk))


def main():
    args = [a for a in sys.argv[1:] if a != "--gpu"]
    gpu = len(args) < len(sys.argv) - 1
    if len(args) != 3:
        sys.exit(__doc__)
    src, out_dir, copies = args[0], args[1], int(args[2])
    space = xplane_pb2.XSpace()
    with open(src, "rb") as f:
        space.ParseFromString(f.read())
    if not gpu and any(p.name.startswith("/device:") and p.lines for p in space.planes):
        print("warning: the trace has device events: without --gpu, planes shift apart and "
              "correlation ids repeat", file=sys.stderr)
    shifts = id_shifts(space) if gpu else {}
    whole_span, whole_steps = 0, 0
    if gpu:
        spans = [s for s in map(plane_span, space.planes) if s[0] is not None]
        whole_span = max(last for _, last in spans) - min(first for first, _ in spans) if spans else 0
        ranges = [r for _, r in map(step_range, space.planes) if r]
        whole_steps = max(hi for _, hi in ranges) - min(lo for lo, _ in ranges) + 1 if ranges else 0
        print(f"--gpu: span {whole_span} ps, {whole_steps} steps, id shifts {shifts}", file=sys.stderr)
    run_dir = os.path.join(out_dir, "plugins", "profile", "run0")
    os.makedirs(run_dir, exist_ok=True)
    target = os.path.join(run_dir, "host0.xplane.pb")
    with tempfile.TemporaryDirectory(dir=run_dir) as tmp:
        planes = []  # (plane bytes without lines, [(line file, size)])
        for p, plane in enumerate(space.planes):
            first, last = plane_span(plane)
            shift = (last - first) if first is not None else 0
            step_id, steps = step_range(plane)
            step_count = steps[1] - steps[0] + 1 if steps else 0
            if gpu:
                shift, step_count = whole_span, whole_steps
            id_incs = {k: shifts[m.name] for k, m in plane.stat_metadata.items() if m.name in shifts}
            lines = []
            for l, line in enumerate(plane.lines):
                path = os.path.join(tmp, f"{p}_{l}")
                with open(path, "wb") as f:
                    write_line(line, copies, shift, step_id if steps else None, step_count, f, id_incs)
                lines.append((path, os.path.getsize(path)))
            rest = xplane_pb2.XPlane()
            rest.CopyFrom(plane)
            del rest.lines[:]
            planes.append((rest.SerializeToString(), lines))
            print(f"{plane.name}: span {shift} ps, steps {steps}, {len(lines)} lines", file=sys.stderr)
        rest = xplane_pb2.XSpace()
        rest.CopyFrom(space)
        del rest.planes[:]
        with open(target + ".tmp", "wb") as out:
            for plane_bytes, lines in planes:
                size = len(plane_bytes) + sum(len(field(3, 2)) + len(varint(n)) + n for _, n in lines)
                out.write(field(1, 2) + varint(size))
                # Lines first, as the profiler writes them (field order is free).
                for path, n in lines:
                    out.write(field(3, 2) + varint(n))
                    with open(path, "rb") as f:
                        while chunk := f.read(1 << 24):
                            out.write(chunk)
                    os.remove(path)
                out.write(plane_bytes)
            out.write(rest.SerializeToString())
        os.replace(target + ".tmp", target)
    print(f"{target}: {os.path.getsize(target)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
