#!/usr/bin/env python3
"""Make a big XPlane trace from a real one: each plane's events N times.

    /work/venvs/tf/bin/python tools/xplane/repeat_trace.py SRC.xplane.pb OUT_DIR N
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


def write_line(line, copies, shift_ps, step_id, step_count, out):
    """Writes the serialized XLine with `copies` copies of its events."""
    header = xplane_pb2.XLine()
    header.CopyFrom(line)
    del header.events[:]
    if header.duration_ps:
        header.duration_ps += (copies - 1) * shift_ps
    out.write(header.SerializeToString())
    plain = []  # (offset, event bytes without its offset) for most events
    marked = []  # (index, event) for step markers, re-serialized per copy
    for i, e in enumerate(line.events):
        if step_id is not None and any(s.metadata_id == step_id for s in e.stats):
            marked.append((i, e))
            plain.append(None)
            continue
        if e.WhichOneof("data") != "offset_ps":
            plain.append((None, field(4, 2) + varint(e.ByteSize()) + e.SerializeToString()))
            continue
        body = xplane_pb2.XEvent()
        body.CopyFrom(e)
        body.ClearField("offset_ps")
        plain.append((e.offset_ps, body.SerializeToString()))
    tag_event, tag_offset = field(4, 2), field(2, 0)
    marked = dict(marked)
    for k in range(copies):
        shift = k * shift_ps
        chunk = []
        for i, item in enumerate(plain):
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
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, out_dir, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
    space = xplane_pb2.XSpace()
    with open(src, "rb") as f:
        space.ParseFromString(f.read())
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
            lines = []
            for l, line in enumerate(plane.lines):
                path = os.path.join(tmp, f"{p}_{l}")
                with open(path, "wb") as f:
                    write_line(line, copies, shift, step_id if steps else None, step_count, f)
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
