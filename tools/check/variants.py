#!/usr/bin/env python3
"""Check runs of the changed programs against runs of the base program,
several runs a side.

    /work/venvs/gate-jax/bin/python tools/check/gen_runs.py --variants 4 /tmp/variants
    python3 tools/check/variants.py /tmp/variants [RTFPROF_BINARY] [K]

For every choice of K of the base runs (base0, base1, …) and of K runs of a
variant (wider0, …, extra_op0, …), runs `rtfprof check BASE… --new
VARIANT…` and prints, for each variant, how many checks failed and which
metrics regressed in how many of them (for `wider`, the layer-2 ops should
fail in every check; for `extra_op`, its tanh is reported as appeared).
Also checks every choice of K base runs against K other base runs, which
should pass (docs/book/src/commands/check.md, "Runs, not steps").
"""
import itertools
import os
import sys
import tempfile
from collections import Counter

from noise import check


def main():
    folder = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/rtfprof"
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    runs = {}
    for name in sorted(os.listdir(folder)):
        program = name.rstrip("0123456789")
        if program != name:
            runs.setdefault(program, []).append(os.path.join(folder, name))
    base = runs.pop("base")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "check.json")
        for program, variant_runs in [("base", None), *sorted(runs.items())]:
            failed, checks, regressed, appeared = 0, 0, Counter(), Counter()
            for b in itertools.combinations(base, k):
                others = [r for r in base if r not in b] if variant_runs is None else variant_runs
                for n in itertools.combinations(others, k):
                    doc = check(binary, [*b, "--new", *n], out, {})
                    checks += 1
                    failed += not doc["passed"]
                    regressed.update(m["label"] for m in doc["metrics"] if m["verdict"] == "regression")
                    appeared.update(m["label"] for m in doc["metrics"] if m["verdict"] == "appeared")
            print(f"{program}: {checks} checks of {k} base runs against {k} runs: {failed} failed")
            for label, count in regressed.most_common():
                print(f"  regressed in {count}: {label}")
            for label, count in appeared.most_common():
                print(f"  appeared in {count}: {label}")


if __name__ == "__main__":
    main()
