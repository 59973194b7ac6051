#!/usr/bin/env python3
"""Keep the last steps of a real XPlane trace: a small fixture cut from a big one.

    /work/venvs/tf/bin/python tools/xplane/trim_trace.py SRC.xplane.pb OUT_DIR STEPS
        # -> OUT_DIR/plugins/profile/run0/host0.xplane.pb

Keeps, on every line, the events that start at or after the start of the
STEPS-th last step marker (an event with a `step_num` stat), to the end of
the trace; metadata, stats and the events kept are the source's, byte for
byte. With at most 5 steps left, XProf drops none of them (it drops the
first and last of a host with more), so the trace's last step, where the
work of the traced program winds down after its marker, is in its step
table: the fixture testdata/xplane/region_past_marker was cut from a
bench/gen_xplane.py trace this way (see testdata/xplane/README.md).
Regenerate its XProf goldens afterwards (tools/xplane/xprof_goldens.py).
"""
import os
import sys

try:
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
except ImportError:  # standalone tsl
    from tsl.profiler.protobuf import xplane_pb2


def marker_starts(space):
    """Start times (ps) of the step markers, over all planes."""
    starts = []
    for plane in space.planes:
        ids = {k for k, m in plane.stat_metadata.items() if m.name == "step_num"}
        for line in plane.lines:
            base = line.timestamp_ns * 1000
            starts += [base + e.offset_ps for e in line.events if any(s.metadata_id in ids for s in e.stats)]
    return sorted(starts)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, out_dir, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    space = xplane_pb2.XSpace()
    with open(src, "rb") as f:
        space.ParseFromString(f.read())
    starts = marker_starts(space)
    if len(starts) < steps:
        sys.exit(f"trim_trace: {src} has {len(starts)} step markers, fewer than {steps}")
    cut = starts[-steps]
    for plane in space.planes:
        for line in plane.lines:
            base = line.timestamp_ns * 1000
            kept = [e for e in line.events if base + e.offset_ps >= cut]
            del line.events[:]
            line.events.extend(kept)
    run_dir = os.path.join(out_dir, "plugins", "profile", "run0")
    os.makedirs(run_dir, exist_ok=True)
    target = os.path.join(run_dir, "host0.xplane.pb")
    with open(target, "wb") as f:
        f.write(space.SerializeToString())
    print(f"{target}: {os.path.getsize(target)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
