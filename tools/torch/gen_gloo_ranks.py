#!/usr/bin/env python3
"""Records testdata/pytorch/gloo3/: three real torch.distributed ranks (gloo,
CPU) training a small DistributedDataParallel MLP under torch.profiler, one
trace a rank as tensorboard_trace_handler writes them, each with torch's
own `distributedInfo` header.

    /work/venvs/torchref/bin/python tools/torch/gen_gloo_ranks.py [OUT_DIR]

Each rank is a process of its own (torch.multiprocessing.spawn, gloo over
127.0.0.1); schedule(wait=0, warmup=1, active=3): ProfilerStep#1..#3. The
worker names are `host_c`, `host_a`, `host_b` for ranks 0, 1, 2, so that
the files' sorted order (a, b, c) is not the ranks' order: a reader must
take the rank from `distributedInfo.rank`. The traces have no GPU work:
gloo's collectives are CPU ops, so no communication kernels. Their times
and ids differ from run to run; what the tests check of them does not.
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

WORKERS = ["host_c", "host_a", "host_b"]


def run(rank, world, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29533"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    handler = tensorboard_trace_handler(out, worker_name=WORKERS[rank], use_gzip=True)
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=1, active=3), on_trace_ready=handler) as prof:
        for _ in range(4):
            x = torch.randn(64, 256)
            loss = ddp(x).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    dist.destroy_process_group()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../testdata/pytorch/gloo3")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".pt.trace.json.gz"):
            os.remove(os.path.join(out, f))
    mp.spawn(run, args=(len(WORKERS), out), nprocs=len(WORKERS))
    print("\n".join(sorted(os.listdir(out))))


if __name__ == "__main__":
    main()
