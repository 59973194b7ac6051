#!/usr/bin/env python3
"""Extracts the Kineto (PyTorch profiler) traces that other projects publish
in their repositories, each pinned by repository, commit and path, into one
folder outside this repository: for surveys (docs/book/src/reference/pytorch_schemas.md) and
the fixtures of testdata/pytorch/published/ (cut from them by
cut_published.sh).

    python3 tools/torch/published_traces.py MIRRORS OUT_DIR

MIRRORS holds git directories named OWNER+NAME/repo (as the search tool's
`fetch` lays them out: /work/.mirror); a repository that is missing there is
skipped with a message. Each trace is written as OUT_DIR/SOURCE/FILE (SOURCE
a short name of the repository and folder), byte for byte as committed,
with MANIFEST.tsv listing source, repository, commit, path and size. The
traces are the pinned commits' blobs, so the same command always gives the
same files. Files over 4 MiB are absent from the mirrors (git LFS or size
limits) and are listed as skipped.

None of these traces is copied into this repository: only small cuts of
them are, with their origin in the fixture's README.
"""

import os
import subprocess
import sys

HTA = ("facebookresearch/HolisticTraceAnalysis", "f4d0062c382f42bd8a74838bcdad1916c7d5d2da")
TRACELENS = ("AMD-AGI/TraceLens", "171dd74721ca1ec45709e5805b68ae1f65e27811")
# Kineto's TensorBoard plugin samples (torch 1.8 and 1.9), removed from the
# repository later: the last commits that held them.
KINETO_TB = ("pytorch/kineto", "949796072a88d92a9b257be5d3d26798a07baa02^")
KINETO_TB_OLD = ("pytorch/kineto", "34d6ad534a947ebd4b2173e1d4dd0072cadb0d73^")

HTA_TRACES = [
    "tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "tests/data/call_stack/backward_thread.json",
    "tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    "tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    "tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz",
    "tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz",
    "tests/data/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
    "tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz",
    "tests/data/df_index_resolver/df_index_resolver.json.gz",
    "tests/data/distributed_info_unavailable/distributed_info_not_found.json.gz",
    "tests/data/execution_trace/benchmark_simple_add_trace.json.gz",
    "tests/data/h100/h100_trace.json.gz",
    "tests/data/inference_single_rank/inference_rank_0.json.gz",
    "tests/data/mixed_files/rank-0.json.gz",
    "tests/data/mixed_files/rank_non_gpu.json.gz",
    "tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz",
    "tests/data/mtia_trace_single_rank/mtia_rank_0.json.gz",
    "tests/data/nccl_parser_config/nccl_data.json.gz",
    "tests/data/negative_queue_length_values_check/rank0.json.gz",
    "tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "tests/data/rank_unavailable/rank_not_found.json.gz",
    "tests/data/timeline_analysis/sampled_rank-0.json.gz",
    "tests/data/trace_compare/base/base.json.gz",
    "tests/data/trace_compare/test/test.json.gz",
    "tests/data/trace_diff/control/control.json.gz",
    "tests/data/trace_diff/test/test.json.gz",
    "tests/data/trace_file_list/inference_rank_1.json.gz",
    "tests/data/trace_filter/sampled_rank-1.json.gz",
    "tests/data/triton_example/triton_example.json.gz",
] + [f"tests/data/vision_transformer/rank-{r}.json.gz" for r in range(8)]

TRACELENS_TRACES = [
    "tests/traces/b200/eager_trace.json.gz",
    "tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
    "tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
    "tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
    "tests/traces/inference/sglang_decode/capture_traces/bs_32_rank0.json.gz",
    "tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
    "tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz",
    "tests/traces/inference/vllm_decode_full/capture_traces/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz",
    "tests/traces/inference/vllm_decode_full/graph_execution.json.gz",
    "tests/traces/inference/vllm_prefilldecode_piecewise/capture_traces/graph_capture_rank_0.1773709679453551615.pt.trace.json.gz",
    "tests/traces/inference/vllm_prefilldecode_piecewise/graph_execution.json.gz",
    "tests/traces/inference/xdit_flux.1/capture_traces/capture_trace_rank_0.json.gz",
    "tests/traces/inference/xdit_flux.1_aiter_sage/capture_traces/capture_trace_rank_0.json.gz",
    "tests/traces/inference/xdit_flux.1_aiter_sage/profile_trace_rank_0.json.gz",
    "tests/traces/inference/xdit_sd_3.5/profile_trace_rank_0.json.gz",
    "tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz",
    "tests/traces/mi300/Falconsai_nsfw_image_detection__1016002.json.gz",
    "tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "tests/traces/mi300/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
    "tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz",
    "tests/traces/mi300/google_owlv2-large-patch14-ensemble__1016001.json.gz",
    "tests/traces/mi300/resnet_act_checkpoint.json.gz",
    "tests/traces/perf_model/normalization/normalization_layer_test.json.gz",
    "tests/traces/torch_compile_triton/trace.json.gz",
]

KINETO_TB_TRACES = [
    "tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz",
    "tb_plugin/samples/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
    "tb_plugin/samples/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz",
]

KINETO_TB_OLD_TRACES = [
    "tb_plugin/samples/resnet50_autograd_api_num_workers_0/worker0.pt.trace.json.gz",
    "tb_plugin/samples/resnet50_autograd_api_num_workers_4/worker0.pt.trace.json.gz",
    "tb_plugin/samples/resnet50_profiler_api_num_workers_0/worker0.pt.trace.json.gz",
    "tb_plugin/samples/resnet50_profiler_api_num_workers_4/worker0.pt.trace.json.gz",
]

SOURCES = [
    ("hta", HTA, HTA_TRACES),
    ("tracelens", TRACELENS, TRACELENS_TRACES),
    ("kineto_tb", KINETO_TB, KINETO_TB_TRACES),
    ("kineto_tb_old", KINETO_TB_OLD, KINETO_TB_OLD_TRACES),
]


def local_name(path):
    """A flat file name for a path: the folders after tests/(data|traces)/
    or tb_plugin/samples/, joined by '.'."""
    for prefix in ("tests/data/", "tests/traces/", "tb_plugin/samples/"):
        if path.startswith(prefix):
            path = path[len(prefix):]
    return path.replace("/", ".")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    mirrors, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rows = []
    for source, (repo, commit), paths in SOURCES:
        git_dir = os.path.join(mirrors, repo.replace("/", "+"), "repo")
        if not os.path.isdir(git_dir):
            print(f"skipped {repo}: no mirror at {git_dir}", file=sys.stderr)
            continue
        full = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", commit], capture_output=True, text=True, check=True).stdout.strip()
        os.makedirs(os.path.join(out, source), exist_ok=True)
        for path in paths:
            blob = subprocess.run(["git", "--git-dir", git_dir, "show", f"{full}:{path}"], capture_output=True)
            if blob.returncode != 0 or not blob.stdout:
                print(f"skipped {repo}@{full[:12]}:{path}: not in the mirror", file=sys.stderr)
                continue
            name = local_name(path)
            with open(os.path.join(out, source, name), "wb") as f:
                f.write(blob.stdout)
            rows.append((f"{source}/{name}", repo, full, path, len(blob.stdout)))
    with open(os.path.join(out, "MANIFEST.tsv"), "w") as f:
        f.write("file\trepository\tcommit\tpath\tbytes\n")
        for row in rows:
            f.write("\t".join(map(str, row)) + "\n")
    print(f"{len(rows)} traces in {out}")


if __name__ == "__main__":
    main()
