#!/usr/bin/env bash
# Cuts the fixtures of testdata/pytorch/published/ out of the published
# traces that tools/torch/published_traces.py extracts (pinned by repository
# and commit there), then writes their launch-rule goldens
# (launch_goldens.py). Run from the repository root:
#
#   python3 tools/torch/published_traces.py /work/.mirror /work/published
#   tools/torch/cut_published.sh /work/published
set -euo pipefail
src=${1:?usage: cut_published.sh PUBLISHED_DIR}
out=testdata/pytorch/published
mkdir -p "$out"
cut() { python3 tools/torch/cut_trace.py "$src/$1" "${@:3}" --out "$out/$2.json.gz"; }
# torch 1.8 (Kineto's TensorBoard plugin sample): Operator/Runtime/Kernel
# categories, string tids, a lowercase `external id` on Kineto's events.
cut kineto_tb_old/resnet50_profiler_api_num_workers_0.worker0.pt.trace.json.gz torch18_resnet50 --window 300:120
# torch 1.9 (the plugin's later samples).
cut kineto_tb/resnet50_num_workers_0.worker0.1623143089861.pt.trace.json.gz torch19_resnet50 --window 300:25
# HTA's 2023 test trace: GPU events and launches carry an External id equal
# to their correlation, which names no op.
cut hta/timeline_analysis.sampled_rank-0.json.gz hta_external_id_is_correlation --window 5:30
# HTA's critical-path trace: some launches' External ids name ops, some not.
cut hta/critical_path.alexnet.benchmark_result_2869224_1695835535_trace.json.gz hta_alexnet --window 0:100000
# vLLM's full CUDA-graph decode: kernels replayed by cudaGraphLaunch.
cut tracelens/inference.vllm_decode_full.graph_execution.json.gz vllm_cuda_graph --window 0:1000
# SGLang decode on ROCm: hipGraphLaunch inside a record_function span.
cut tracelens/inference.sglang_decode.sglang_Qwen3-8B_decode.json.gz sglang_rocm_graph --window 0:1000
# The start of an H100 trace: kernels queued before the profiler started,
# whose launches are not in the trace.
cut tracelens/h100.Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz h100_launched_before_trace --window=-1:12
# MTIA: mtia_runtime launches, mtia_ccp_events (kernels, and dma_request
# copies, some without a correlation).
cut hta/mtia_trace_single_rank.mtia_rank_0.json.gz mtia_training --window 240:60
# An MI210 trace of GPU events alone (no CPU op, no launch).
cut tracelens/mi210.gpu_only_trace.gpu_only_trace.json.gz mi210_gpu_only --window 0:1000
python3 tools/torch/launch_goldens.py "$out"/*.json.gz
