#!/usr/bin/env python3
"""Records small CUDA programs with torch.profiler on one GPU and writes what
PyTorch itself says about them: the GPU launch paths that eager ResNet and
Transformer traces (../shared/traces/torch_h200) do not hold.

Run on a machine with an NVIDIA GPU and torch (CI never runs this; the
outputs are committed under testdata/pytorch/gpu):

    python3 tools/torch/gen_gpu_traces.py OUT_DIR

For each program NAME it writes, as tools/torch/gen_key_averages.py does,
NAME.pt.trace.json.gz, NAME.key_averages.json and NAME.tables.json (its
tables plus one sorted by self_device_time_total), and versions.txt. A
program that fails is reported and skipped; the others still run.

torch before pytorch/pytorch#196282 (2026-09; in 2.15, not in 2.11) looks up
device work by the correlation id of every CPU record without a linked op,
runtime/driver calls and CUPTI overhead records included: their CUPTI
correlation ids come from another counter than the ops' ids, so a
cudaStreamIsCapturing or an "Activity Buffer Request" takes the kernels of
the op whose id it happens to share (pytorch/pytorch#124388). With
--unpatched the rows are torch's as installed; by default torch's
_parse_kineto_results is given #196282's rule (an unlinked record takes
device work only if it has an External id of its own: a torch op or
annotation, not a runtime/driver call (cudaX, cuX) nor an overhead
record, named by Kineto's overheadKindString), as the oracle of
what rtfprof reads from the trace, where unlinked records carry no External
id. OUT_DIR/unpatched/ gets torch's own rows of the same traces (not
committed: tests/integration/pytorch.rs says what they held).

- cuda_graph: a torch.cuda.CUDAGraph captured outside the profiler and
  replayed inside it (cudaGraphLaunch; kernels correlated to the launch),
  beside eager kernels, in record_function spans.
- compiled: torch.compile's default mode (Inductor's Triton kernels, launched
  through the driver API, cuLaunchKernel), forward and backward, a schedule.
- compiled_cudagraphs: torch.compile(mode="reduce-overhead") (CUDA graph
  trees: replays launched from Inductor's wrapper, not from an aten op).
- nccl: a one-rank NCCL process group (all_reduce, broadcast, all_gather,
  reduce_scatter) with the trace's distributedInfo, as HTA reads it.
- streams_copies: a side stream, pinned host-to-device and device-to-host
  copies, non_blocking, a device-to-device copy, memsets, synchronisation.
"""

import os
import re
import sys
import traceback

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, record_function, schedule

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_key_averages  # noqa: E402

gen_key_averages.TABLES = gen_key_averages.TABLES + [((False,), {"sort_by": "self_device_time_total", "row_limit": 12})]

# (torch's _parse_kineto_results, the patched one) once patched.
PARSERS = []

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.CUDA]


# Kineto's overheadKindString (libkineto/src/cupti_strings.cpp).
OVERHEADS = {
    "Unknown", "Driver Compiler", "Buffer Flush", "Instrumentation", "Resource", "Runtime Triggered Module Loading",
    "Lazy Function Loading", "Command Buffer Full", "Activity Buffer Request", "Force Int", "Unrecognized",
}


# CUPTI's names of runtime (cudaMalloc) and driver (cuLaunchKernel) calls.
RUNTIME_OR_DRIVER = re.compile(r"cu(da)?[A-Z]")


def has_own_external_id(kineto_event):
    """Whether Kineto's JSON gives this unlinked record an External id: torch's
    ops and annotations, not runtime/driver calls or overhead records. torch
    2.11's _KinetoEvent says neither its activity type nor its "cbid" (its
    metadata_json() lacks it), so they are told by name."""
    name = kineto_event.name()
    return not RUNTIME_OR_DRIVER.match(name) and name not in OVERHEADS


def patch_unlinked_records():
    """Gives torch's _parse_kineto_results the rule of pytorch#196282."""
    import inspect
    import textwrap
    import torch.autograd.profiler as module

    source = textwrap.dedent(inspect.getsource(module.profile._parse_kineto_results))
    pattern = re.compile(r"elif corr_id == 0:\n( +)frontend_function_events\.append\(fe\)")
    patched, n = pattern.subn(r"elif corr_id == 0:\n\1if has_own_external_id(kineto_event):\n\1    frontend_function_events.append(fe)", source)
    if n != 1:
        sys.exit("this torch's _parse_kineto_results is not the one patch_unlinked_records knows; run with --unpatched")
    namespace = dict(vars(module), has_own_external_id=has_own_external_id)
    exec(compile(patched, module.__file__, "exec"), namespace)
    PARSERS[:] = [module.profile._parse_kineto_results, namespace["_parse_kineto_results"]]
    module.profile._parse_kineto_results = namespace["_parse_kineto_results"]


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 512), torch.nn.LayerNorm(512), torch.nn.Linear(512, 64)
    ).cuda()


def save(p, name, out_dir):
    p.export_chrome_trace(os.path.join(out_dir, f"{name}.pt.trace.json.gz"))
    if PARSERS:
        # torch's own rows first, then #196282's, from the same events
        original, patched = PARSERS
        unpatched_dir = os.path.join(out_dir, "unpatched")
        os.makedirs(unpatched_dir, exist_ok=True)
        type(p.profiler)._parse_kineto_results = original
        p.profiler._function_events = None
        gen_key_averages.dump(p, name, unpatched_dir)
        type(p.profiler)._parse_kineto_results = patched
        p.profiler._function_events = None
    gen_key_averages.dump(p, name, out_dir)


def cuda_graph(out_dir):
    model, static_x = mlp(), torch.randn(32, 256, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        static_y = model(static_x)
    torch.cuda.synchronize()
    with profile(activities=ACTIVITIES, record_shapes=True, profile_memory=True) as p:
        for i in range(3):
            with record_function("replay"):
                static_x.copy_(torch.randn(32, 256, device="cuda"))
                graph.replay()
                total = static_y.sum()
        with record_function("eager"), torch.no_grad():
            model(static_x).sum()
        total.item()
        torch.cuda.synchronize()
    save(p, "cuda_graph", out_dir)


def train_steps(name, model, out_dir, steps=6):
    x = torch.randn(64, 256, device="cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(3):  # compile and warm up outside the profiler
        model(x).pow(2).mean().backward()
        opt.step()
        opt.zero_grad()
    torch.cuda.synchronize()

    def ready(prof):
        save(prof, name, out_dir)

    with profile(activities=ACTIVITIES, record_shapes=True, profile_memory=True,
                 schedule=schedule(wait=1, warmup=1, active=3), on_trace_ready=ready) as p:
        for _ in range(steps - 1):
            with record_function("forward"):
                loss = model(x).pow(2).mean()
            with record_function("backward"):
                loss.backward()
            with record_function("optimizer"):
                opt.step()
                opt.zero_grad()
            p.step()
        torch.cuda.synchronize()


def compiled(out_dir):
    train_steps("compiled", torch.compile(mlp()), out_dir)


def compiled_cudagraphs(out_dir):
    train_steps("compiled_cudagraphs", torch.compile(mlp(), mode="reduce-overhead"), out_dir)


def nccl(out_dir):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
    try:
        model = mlp()
        x = torch.randn(64, 256, device="cuda")
        dist.all_reduce(torch.ones(8, device="cuda"))  # NCCL's communicator set up outside the profiler
        torch.cuda.synchronize()
        with profile(activities=ACTIVITIES, record_shapes=True) as p:
            for _ in range(2):
                with record_function("forward"):
                    loss = model(x).pow(2).mean()
                with record_function("backward"):
                    loss.backward()
                with record_function("allreduce_grads"):
                    for prm in model.parameters():
                        dist.all_reduce(prm.grad)
                with record_function("collectives"):
                    t = torch.arange(4096, dtype=torch.float32, device="cuda")
                    dist.broadcast(t, src=0)
                    gathered = torch.empty(4096, device="cuda")
                    dist.all_gather_into_tensor(gathered, t)
                    scattered = torch.empty(4096, device="cuda")
                    dist.reduce_scatter_tensor(scattered, t)
                    dist.barrier()
            torch.cuda.synchronize()
        save(p, "nccl", out_dir)
    finally:
        dist.destroy_process_group()


def streams_copies(out_dir):
    side = torch.cuda.Stream()
    host = torch.randn(1 << 20).pin_memory()
    back = torch.empty(1 << 20).pin_memory()
    a = torch.randn(1024, 1024, device="cuda")
    torch.cuda.synchronize()
    with profile(activities=ACTIVITIES, record_shapes=True, profile_memory=True) as p:
        for _ in range(2):
            with record_function("h2d"):
                dev = host.to("cuda", non_blocking=True)
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side), record_function("side_matmul"):
                b = a @ a
                b.record_stream(side)
            with record_function("main_work"):
                c = (dev * 2).sum()
                d = torch.zeros(1 << 20, device="cuda")
                d.copy_(dev)
                d.zero_()
            torch.cuda.current_stream().wait_stream(side)
            with record_function("d2h"):
                back.copy_(dev, non_blocking=True)
                e = b.sum().item()
            torch.cuda.synchronize()
        del c, e
    save(p, "streams_copies", out_dir)


def main():
    unpatched = "--unpatched" in sys.argv
    out_dir = [a for a in sys.argv[1:] if a != "--unpatched"][0]
    if not unpatched:
        patch_unlinked_records()
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "versions.txt"), "w") as f:
        f.write(f"torch {torch.__version__} cuda {torch.version.cuda} device {torch.cuda.get_device_name(0)}\n")
        try:
            import triton
            f.write(f"triton {triton.__version__}\n")
        except ImportError:
            pass
        f.write(f"nccl {'.'.join(map(str, torch.cuda.nccl.version()))}\n")
    failed = []
    for program in (cuda_graph, streams_copies, nccl, compiled, compiled_cudagraphs):
        print(f"== {program.__name__}", flush=True)
        try:
            program(out_dir)
        except Exception:
            traceback.print_exc()
            failed.append(program.__name__)
    print("failed:", failed or "none", flush=True)


if __name__ == "__main__":
    main()
