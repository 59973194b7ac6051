//! `rtfprof steps` for PyTorch traces: where each `ProfilerStep#N`'s GPU
//! time goes, and the whole trace's split as HTA gives it.
//!
//! **Step time.** The steps are those of PyTorch's TensorBoard plugin
//! (torch-tb-profiler 0.4.3's `StepParser`, the overview page PyTorch users
//! knew): a step runs from its `ProfilerStep#N` span's start on the CPU to
//! the later of that span's end and the end of the last kernel, copy or set
//! launched by a runtime call that lies wholly inside the span, and never
//! starts before the previous step ended; the first step starts no earlier
//! than the end of the GPU work that ran before its own and that no step
//! launched (work queued before the profiler started). The CPU span alone
//! ends while the GPU still runs the step's queued work; the GPU span alone
//! misses the CPU time before the first launch, which is the time a
//! host-bound step loses. The steps so laid end to end tile the trace's
//! time; `cpu_step_us` keeps the `ProfilerStep#N` span itself. A trace
//! without `ProfilerStep#N` spans (profiled without a schedule) is one step,
//! `trace`, from its first CPU op to its last, extended the same way.
//! Where a trace has no GPU work the steps are the CPU spans. Unlike the
//! plugin, rtfprof keeps the last steps when they launched fewer kernels
//! than the one before (the plugin leaves them out of its overview, fearing
//! their kernels were not all recorded).
//!
//! **Step time breakdown** ([`ROLES`]). The plugin's: each instant of the
//! step goes to the first of kernel (a kernel other than communication
//! ran), memcpy, memset, communication (a collective kernel, or a CPU op
//! `nccl:*`/`gloo:*` the plugin knows), runtime (a CUDA runtime or driver
//! call), dataloader (a `enumerate(DataLoader)#*.__next__` or
//! `enumerate(DataPipe)#*` span), CPU exec (a CPU op ran) and other. They
//! add up to the step time. Equal to the plugin's on the fixtures and the
//! shared traces (`tools/torch/tb_goldens.py`), where the plugin is given
//! today's category names for runtime calls (`cuda_runtime`, `cuda_driver`;
//! it only knows `runtime`, so on today's traces it sees none, and its
//! steps never reach the GPU work). Data loader spans are
//! `user_annotation`s in today's traces, which the plugin skips; rtfprof
//! counts them. With several GPUs the plugin merges them all; rtfprof
//! gives each GPU its row.
//!
//! **GPU time.** On each GPU (`args.device`) the step's time splits into
//! compute (some computation kernel ran), non-compute (only copies, sets
//! or communication kernels ran: HTA's non-compute) and idle (nothing ran):
//! the three add up to the step time exactly, in nanoseconds. Kernels of
//! several streams that overlap count once. Waits (`cuda_sync` spans) are
//! not work: they are idle time here (HTA's temporal breakdown counts them
//! as non-compute).
//!
//! **Kernels by kind.** Each kernel, copy and set's time inside the step,
//! by [`Kind`]; the kinds add up to the GPU's busy time when its work ran
//! on one stream at a time (overlapping streams count each kernel's own
//! time). The first rule that matches, on the kernel's name in lower case:
//!
//! 1. memory: a copy or set (`gpu_memcpy`, `gpu_memset`), or a name that
//!    starts with `memcpy`, `memset` or `dma` (HTA's memory kernels);
//! 2. communication: starts with `nccl` or `rccl`, or holds `nvshmem`,
//!    `allreduce`, `all_reduce`, `allgather`, `all_gather`, `reducescatter`,
//!    `reduce_scatter`, `alltoall`, `all_to_all` or `cross_device_reduce`;
//! 3. attention: holds `flash`, `fmha`, `sdpa`, `attention` or `attn`;
//! 4. convolution: holds `convolution`, `convolve`, `conv1d`, `conv2d`,
//!    `conv3d`, `fprop`, `dgrad`, `wgrad`, `winograd` or `implicit_gemm`
//!    (cuDNN's and CUTLASS's convolution kernels), `gtcx` or
//!    `miopensp3asmconv` (MIOpen's), or starts with `triton_tem` and holds
//!    `conv`;
//! 5. GEMM: holds `gemm`, `gemv`, `nvjet` (cuBLAS's Hopper kernels),
//!    `cublas`, `matmul` or `cijk_` (Tensile's, rocBLAS's and hipBLASLt's
//!    GEMMs on AMD GPUs: `Cijk_Alik_Bljk_…_MI16x16x1_…`), or starts with
//!    `triton_tem` and holds `mm`;
//! 6. the op that launched it (its `External id`): an attention op (its
//!    name holds `attention`, `sdpa` or `flash`), a convolution op
//!    (`convolution`, `conv1d`, `conv2d`, `conv3d`) or a matrix product
//!    (`aten::mm`, `addmm`, `bmm`, `baddbmm`, `addbmm`, `matmul`, `linear`,
//!    `_scaled_mm`, `_int_mm`, `addmv`, `mv`, `_addmm_activation`) gives its
//!    kind, so the layout transposes, workspace initialisations and
//!    split-K reductions cuDNN and cuBLAS run for them count with them;
//! 7. reduction: holds `reduce`, `reduction`, `norm`, `bn_fw`, `bn_bw`,
//!    `welford`, `gammabeta`, `softmax`, `pool`, `argmax`, `argmin`,
//!    `topk`, `cumsum`, `scan`, or starts with `triton_red` or `triton_per`;
//! 8. elementwise: holds `elementwise`, `multi_tensor_apply`, `dropout`,
//!    `masked_scale`, `fill`, `copy`, `catarray`, `concat`, `index`,
//!    `gather`, `scatter`, `transpose`, `permute`, `nchwtonhwc`,
//!    `nhwctonchw`, `relu`, `gelu`, `silu`, `sigmoid`, `tanh` or `scale`, or
//!    starts with `triton_poi`;
//! 9. other.
//!
//! Compute in the split above is the kinds other than memory and
//! communication; on the shared H200 traces it is exactly HTA's compute
//! kernels (`hta::is_compute_kernel`).
//!
//! **The whole trace** ([`GpuTime`]): HTA 0.5.0's `get_temporal_breakdown()`
//! and `get_idle_time_breakdown()` (summed over each device's streams), with
//! HTA's rounding to whole microseconds and its leaving out the last step
//! ([`hta::Timing::Hta`]), and the same in exact nanoseconds.
//!
//! **Ranks.** A directory of traces is one rank a trace: each rank gets its
//! own table (steps of different ranks are different spans of time).

use rustc_hash::FxHashMap;

use crate::hta::{self, Timing};
use crate::inputs::pytorch::{Category, Event, LaunchingOps, Sym, Trace};
use crate::intervals::{Empty, covered, union, union_in_order};

/// What a kernel does, by its name (see the module's rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Gemm,
    Convolution,
    Attention,
    Elementwise,
    Reduction,
    Communication,
    Memory,
    Other,
}

/// The kinds, in the order of the columns.
pub const KINDS: [Kind; 8] =
    [Kind::Gemm, Kind::Convolution, Kind::Attention, Kind::Elementwise, Kind::Reduction, Kind::Communication, Kind::Memory, Kind::Other];

impl Kind {
    /// The JSON/CSV key stem (`<name>_us`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Gemm => "gemm",
            Kind::Convolution => "convolution",
            Kind::Attention => "attention",
            Kind::Elementwise => "elementwise",
            Kind::Reduction => "reduction",
            Kind::Communication => "communication",
            Kind::Memory => "memory",
            Kind::Other => "other",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Kind::Gemm => "GEMM",
            Kind::Convolution => "Convolution",
            Kind::Attention => "Attention",
            Kind::Elementwise => "Elementwise",
            Kind::Reduction => "Reduction",
            Kind::Communication => "Communication",
            Kind::Memory => "Memory",
            Kind::Other => "Other kernels",
        }
    }

    /// Computation, as opposed to moving data (HTA's split).
    pub fn is_compute(self) -> bool {
        !matches!(self, Kind::Communication | Kind::Memory)
    }
}

/// Rules 1 to 5 and 7 to 9 (the kernel's own name); `None` where rule 6
/// (the launching op) comes first.
fn kind_by_name(name: &str, category: Category) -> (Option<Kind>, Kind) {
    if matches!(category, Category::GpuMemcpy | Category::GpuMemset) {
        return (Some(Kind::Memory), Kind::Memory);
    }
    let n = name.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| n.contains(w));
    if n.starts_with("memcpy") || n.starts_with("memset") || n.starts_with("dma") {
        return (Some(Kind::Memory), Kind::Memory);
    }
    let collectives =
        ["nvshmem", "allreduce", "all_reduce", "allgather", "all_gather", "reducescatter", "reduce_scatter", "alltoall", "all_to_all", "cross_device_reduce"];
    if n.starts_with("nccl") || n.starts_with("rccl") || has(&collectives) {
        return (Some(Kind::Communication), Kind::Communication);
    }
    if has(&["flash", "fmha", "sdpa", "attention", "attn"]) {
        return (Some(Kind::Attention), Kind::Attention);
    }
    let template = n.starts_with("triton_tem");
    let convolutions =
        ["convolution", "convolve", "conv1d", "conv2d", "conv3d", "fprop", "dgrad", "wgrad", "winograd", "implicit_gemm", "gtcx", "miopensp3asmconv"];
    if has(&convolutions) || (template && n.contains("conv")) {
        return (Some(Kind::Convolution), Kind::Convolution);
    }
    if has(&["gemm", "gemv", "nvjet", "cublas", "matmul", "cijk_"]) || (template && n.contains("mm")) {
        return (Some(Kind::Gemm), Kind::Gemm);
    }
    let reduction = ["reduce", "reduction", "norm", "bn_fw", "bn_bw", "welford", "gammabeta", "softmax", "pool", "argmax", "argmin", "topk", "cumsum", "scan"];
    let elementwise = [
        "elementwise",
        "multi_tensor_apply",
        "dropout",
        "masked_scale",
        "fill",
        "copy",
        "catarray",
        "concat",
        "index",
        "gather",
        "scatter",
        "transpose",
        "permute",
        "nchwtonhwc",
        "nhwctonchw",
        "relu",
        "gelu",
        "silu",
        "sigmoid",
        "tanh",
        "scale",
    ];
    let fallback = if has(&reduction) || n.starts_with("triton_red") || n.starts_with("triton_per") {
        Kind::Reduction
    } else if has(&elementwise) || n.starts_with("triton_poi") {
        Kind::Elementwise
    } else {
        Kind::Other
    };
    (None, fallback)
}

/// Rule 6: the kind of the kernels an op launches, if its name says.
fn kind_by_op(op: &str) -> Option<Kind> {
    let n = op.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| n.contains(w));
    if has(&["attention", "sdpa", "flash"]) {
        return Some(Kind::Attention);
    }
    if has(&["convolution", "conv1d", "conv2d", "conv3d"]) {
        return Some(Kind::Convolution);
    }
    const PRODUCTS: [&str; 13] =
        ["mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "_scaled_mm", "_int_mm", "addmv", "mv", "_addmm_activation", "_scaled_grouped_mm"];
    let bare = n.strip_prefix("aten::").unwrap_or(&n);
    PRODUCTS.contains(&bare).then_some(Kind::Gemm)
}

/// The kind of a kernel, copy or set, given the name of the op that
/// launched it (if known).
pub fn kind_of(name: &str, category: Category, launching_op: Option<&str>) -> Kind {
    match kind_by_name(name, category) {
        (Some(kind), _) => kind,
        (None, fallback) => launching_op.and_then(kind_by_op).unwrap_or(fallback),
    }
}

/// Classifies a trace's GPU events, remembering the answer for each pair of
/// names (a trace has a few hundred distinct kernels).
pub struct Classifier<'a> {
    trace: &'a Trace,
    ops: LaunchingOps,
    memo: FxHashMap<(Sym, Option<Sym>), Kind>,
}

impl<'a> Classifier<'a> {
    pub fn new(trace: &'a Trace) -> Classifier<'a> {
        Classifier { trace, ops: trace.launching_ops(), memo: FxHashMap::default() }
    }

    pub fn trace(&self) -> &'a Trace {
        self.trace
    }

    /// The call of each correlation ([`Trace::launches_by_correlation`]).
    pub fn launches(&self) -> &rustc_hash::FxHashMap<u64, u32> {
        self.ops.launches()
    }

    /// The launch call of a GPU event (by correlation).
    pub fn launch(&self, e: &Event) -> Option<&'a Event> {
        let trace = self.trace;
        self.ops.launch(e).map(|i| &trace.events[i as usize])
    }

    /// The name of the op that launched GPU event `event` (an index into
    /// the trace's events): [`Trace::launching_ops`].
    pub fn launching_op(&self, event: u32) -> Option<Sym> {
        self.ops.of(event).map(|i| self.trace.events[i as usize].name)
    }

    /// The kind of GPU event `event` (an index into the trace's events).
    pub fn kind(&mut self, event: u32) -> Kind {
        let op = self.launching_op(event);
        let trace = self.trace;
        let e = &trace.events[event as usize];
        *self.memo.entry((e.name, op)).or_insert_with(|| kind_of(trace.str(e.name), e.category, op.map(|o| trace.str(o))))
    }
}

/// Whether an event is GPU work: a kernel, copy or set.
pub fn is_gpu_work(e: &Event) -> bool {
    matches!(e.category, Category::Kernel | Category::GpuMemcpy | Category::GpuMemset)
}

/// One step on one GPU, in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `ProfilerStep#N`, or `trace` for a trace without steps.
    pub step: String,
    /// The step's time (see the module doc): from `start_ns` to `end_ns`.
    pub start_ns: i64,
    pub end_ns: i64,
    /// The `ProfilerStep#N` span on the CPU.
    pub cpu_step_ns: i64,
    /// The step's time by [`ROLES`] (the TensorBoard plugin's step time
    /// breakdown): they add up to the step time.
    pub roles_ns: [i64; 8],
    /// `None` in a trace without GPU work.
    pub gpu: Option<GpuRow>,
}

impl Row {
    pub fn step_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

/// The roles of the TensorBoard plugin's step time breakdown, in its order
/// of priority (JSON/CSV keys `<role>_us`).
pub const ROLES: [&str; 8] = ["kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other"];

/// One GPU's share of a step (ns).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuRow {
    pub device: u32,
    pub compute_ns: i64,
    pub non_compute_ns: i64,
    pub idle_ns: i64,
    /// Time in each of [`KINDS`] (in that order).
    pub kinds_ns: [i64; 8],
    /// Kernels that started in the step.
    pub kernels: u64,
}

/// One device's whole-trace split, µs (HTA's keys).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceTime {
    /// HTA's `kernel_time`: from the first kernel's start to the last one's
    /// end.
    pub span_us: f64,
    pub compute_us: f64,
    pub non_compute_us: f64,
    pub idle_us: f64,
    /// HTA's idle time categories, summed over the device's streams (each
    /// stream's gaps: with several streams they need not add up to
    /// `idle_us`).
    pub idle_host_wait_us: f64,
    pub idle_kernel_wait_us: f64,
    pub idle_other_us: f64,
}

/// A device's whole-trace split as HTA 0.5.0 gives it, and exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuTime {
    pub device: u32,
    pub hta: DeviceTime,
    pub exact: DeviceTime,
}

/// The launches of a trace's kernels, exactly (ns): HTA's launch statistics
/// over its kernels (copies and sets left out), the driver API's launches
/// included.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Launches {
    pub kernels: usize,
    /// Kernels that ran for less time than the call that launched them.
    pub shorter_than_launch: usize,
    pub median_kernel_ns: f64,
    pub median_launch_ns: f64,
    /// Kernels shorter than [`SMALL_KERNEL_NS`], and their time.
    pub small: usize,
    pub small_ns: i64,
    pub kernel_ns: i64,
}

/// 10 µs: a few times what a launch call costs (the shared H200 traces'
/// median `cudaLaunchKernel` is 4–5 µs), so that a stream of such kernels
/// runs about as fast as the CPU can launch them.
pub const SMALL_KERNEL_NS: i64 = 10_000;

/// One trace (a rank): its steps and its whole-trace split.
#[derive(Clone, Debug, PartialEq)]
pub struct Rank {
    /// The rank's trace file name without `.pt.trace.json[.gz]`; empty for
    /// a single trace.
    pub rank: String,
    /// Per step, one row a GPU (in device order); one row a step without GPU
    /// work.
    pub rows: Vec<Row>,
    /// The trace has `ProfilerStep#N` spans.
    pub has_steps: bool,
    pub gpu_time: Vec<GpuTime>,
    pub launches: Launches,
}

/// The steps of each trace, a rank each.
pub fn analyze<'a>(traces: impl IntoIterator<Item = (&'a str, &'a Trace)>) -> Vec<Rank> {
    traces.into_iter().map(|(rank, trace)| analyze_trace(rank, trace)).collect()
}

/// A step's `(name, CPU start, CPU end)`.
type CpuStep = (String, i64, i64);

fn cpu_steps(trace: &Trace, keep: &dyn Fn(u64) -> bool) -> Vec<CpuStep> {
    let mut steps: Vec<CpuStep> = trace
        .steps()
        .into_iter()
        .filter(|&(n, _)| keep(n))
        .map(|(_, i)| {
            let e = &trace.events[i as usize];
            (trace.str(e.name).to_owned(), e.ts, e.end())
        })
        .collect();
    steps.sort_by_key(|s| (s.1, s.2));
    steps
}

pub fn analyze_trace(rank: &str, trace: &Trace) -> Rank {
    // The whole trace's GPU time beside the steps' (independent passes over
    // the events: on two cores, `bench/pytorch.md`).
    let (rows, (gpu_time, launches)) = rayon::join(|| step_rows(trace, None), || gpu_time_and_launches(trace));
    let (rows, has_steps) = rows;
    Rank { rank: rank.to_owned(), rows, has_steps, gpu_time, launches }
}

/// The steps of one window of a trace that a window's rows are for: the
/// numbers of its own `ProfilerStep`s, where the step before them ended
/// (the last row of the window before; `None` in the first window), and
/// the whole trace's GPUs (each step has a row for each).
pub struct OwnSteps<'a> {
    pub steps: &'a [u64],
    pub prev_end: Option<i64>,
    pub devices: &'a [u32],
}

/// The rows of the steps (of a window's own steps only, with `own`), and
/// whether the trace has `ProfilerStep`s.
pub(super) fn step_rows(trace: &Trace, own: Option<&OwnSteps>) -> (Vec<Row>, bool) {
    let mut classifier = Classifier::new(trace);
    let mut steps = cpu_steps(trace, &|n| own.is_none_or(|own| own.steps.contains(&n)));
    let has_steps = !steps.is_empty();
    if !has_steps {
        // The plugin's one step of a trace without steps: the CPU ops' span;
        // in a trace of launches and GPU work alone (no CPU op), theirs.
        let span =
            |keep: &dyn Fn(&Event) -> bool| trace.events.iter().filter(|e| keep(e)).fold((i64::MAX, i64::MIN), |(lo, hi), e| (lo.min(e.ts), hi.max(e.end())));
        let (mut lo, mut hi) = span(&|e| e.category == Category::CpuOp);
        if lo > hi {
            (lo, hi) = span(&|e| is_gpu_work(e) || e.category.is_launch());
        }
        if lo <= hi {
            steps.push(("trace".to_owned(), lo, hi));
        }
    }
    // GPU work: (start, end, device, kind, category), and the span of the
    // work each step launched.
    let mut work = Vec::new();
    let mut launched: Vec<Option<(i64, i64)>> = vec![None; steps.len()];
    let mut unlaunched_ends = Vec::new();
    let starts: Vec<i64> = steps.iter().map(|s| s.1).collect();
    for (i, e) in trace.events.iter().enumerate().filter(|(_, e)| is_gpu_work(e)) {
        let kind = classifier.kind(i as u32);
        work.push((e.ts, e.end(), e.device.unwrap_or(0), kind, e.category));
        let step = classifier.launch(e).and_then(|launch| {
            let k = starts.partition_point(|&s| s <= launch.ts);
            (k > 0 && launch.end() <= steps[k - 1].2).then(|| k - 1)
        });
        match step {
            Some(k) => {
                let span = &mut launched[k];
                *span = Some(span.map_or((e.ts, e.end()), |(lo, hi)| (lo.min(e.ts), hi.max(e.end()))));
            }
            None => unlaunched_ends.push(e.end()),
        }
    }
    let windows = step_windows(&steps, &launched, &unlaunched_ends, own.and_then(|own| own.prev_end));
    // A window's rows are for every GPU of the whole trace.
    let devices: Vec<u32> = match own {
        Some(own) => own.devices.to_vec(),
        None => {
            let mut devices: Vec<u32> = work.iter().map(|w| w.2).collect();
            devices.sort_unstable();
            devices.dedup();
            devices
        }
    };
    let host = HostRoles::of(trace);
    let mut per_device: Vec<(Vec<GpuRow>, Vec<[i64; 8]>)> = Vec::new();
    for &device in &devices {
        let mut on_device: Vec<_> = work.iter().filter(|w| w.2 == device).copied().collect();
        on_device.sort_unstable_by_key(|w| (w.0, w.1));
        per_device.push((split(device, &on_device, &windows), roles(&windows, &on_device, &host)));
    }
    let mut rows = Vec::new();
    for (k, (name, start, end, cpu)) in windows.iter().enumerate() {
        let row = |gpu, roles_ns| Row { step: name.clone(), start_ns: *start, end_ns: *end, cpu_step_ns: *cpu, roles_ns, gpu };
        if devices.is_empty() {
            rows.push(row(None, roles(&windows[k..=k], &[], &host)[0]));
        }
        for (device_rows, device_roles) in &per_device {
            rows.push(row(Some(device_rows[k].clone()), device_roles[k]));
        }
    }
    (rows, has_steps)
}

/// The steps' windows by the plugin's rules (see the module doc): each
/// `(name, start, end, CPU span)`. `launched` is the span of the GPU work
/// each step's calls launched; `unlaunched_ends`, the ends of the GPU work
/// no step launched; `carried`, the end of the step before the first (in
/// a window of a trace: the whole trace's).
fn step_windows(steps: &[CpuStep], launched: &[Option<(i64, i64)>], unlaunched_ends: &[i64], carried: Option<i64>) -> Vec<(String, i64, i64, i64)> {
    if launched.iter().all(Option::is_none) {
        return steps.iter().map(|(name, start, end)| (name.clone(), *start, *end, end - start)).collect();
    }
    // The first step starts after the GPU work that ran before its own and
    // that no step launched (work queued before the profiler started).
    let mut prev_end = steps[0].1;
    if let Some(carried) = carried {
        prev_end = carried;
    } else if let Some((first_gpu_start, _)) = launched[0] {
        prev_end = unlaunched_ends.iter().copied().filter(|&end| end < first_gpu_start).fold(prev_end, i64::max);
    }
    let mut windows = Vec::with_capacity(steps.len());
    for ((name, cpu_start, cpu_end), span) in steps.iter().zip(launched) {
        let start = prev_end.max(*cpu_start);
        let end = (*cpu_end).max(span.map_or(i64::MIN, |s| s.1)).max(start);
        windows.push((name.clone(), start, end, cpu_end - cpu_start));
        prev_end = end;
    }
    windows
}

/// The CPU side of the plugin's roles: runtime calls, data loading,
/// collectives run by CPU ops, CPU ops; each as disjoint sorted intervals.
struct HostRoles {
    runtime: Vec<(i64, i64)>,
    dataloader: Vec<(i64, i64)>,
    communication: Vec<(i64, i64)>,
    cpu_exec: Vec<(i64, i64)>,
}

/// The collective ops the plugin knows by name (torch-tb-profiler's
/// `NcclOpNameSet` and `GlooOpNameSet`).
const COLLECTIVE_OPS: [&str; 10] = [
    "nccl:broadcast",
    "nccl:reduce",
    "nccl:all_reduce",
    "nccl:all_gather",
    "nccl:reduce_scatter",
    "gloo:broadcast",
    "gloo:reduce",
    "gloo:all_reduce",
    "gloo:all_gather",
    "gloo:reduce_scatter",
];

impl HostRoles {
    fn of(trace: &Trace) -> HostRoles {
        let mut roles: [Vec<(i64, i64)>; 4] = Default::default();
        for e in &trace.events {
            let name = trace.str(e.name);
            let role = match e.category {
                Category::CudaRuntime | Category::CudaDriver => 0,
                Category::CpuOp | Category::UserAnnotation if is_dataloader(name) => 1,
                Category::CpuOp | Category::UserAnnotation if COLLECTIVE_OPS.contains(&name) => 2,
                Category::CpuOp if !name.starts_with("ProfilerStep#") => 3,
                _ => continue,
            };
            roles[role].push((e.ts, e.end()));
        }
        let [runtime, dataloader, communication, cpu_exec] = roles.map(|r| union(r, Empty::Drop));
        HostRoles { runtime, dataloader, communication, cpu_exec }
    }
}

/// A data loader's `__next__` (or a DataPipe's iteration), by the name the
/// profiler gives it.
fn is_dataloader(name: &str) -> bool {
    (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__")) || name.starts_with("enumerate(DataPipe)#")
}

/// A piece of GPU work: its start, end, device, kind and category.
type Work = (i64, i64, u32, Kind, Category);

/// Each window's time by the plugin's roles ([`ROLES`], in its order of
/// priority: each instant goes to the first role active then) on one
/// device; `work` is the device's GPU work sorted by start.
fn roles(windows: &[(String, i64, i64, i64)], work: &[Work], host: &HostRoles) -> Vec<[i64; 8]> {
    let of = |keep: &dyn Fn(&Work) -> bool| union_in_order(work.iter().filter(|w| keep(w)).map(|w| (w.0, w.1)), Empty::Drop).collect::<Vec<_>>();
    let kernel = of(&|w| w.4 == Category::Kernel && w.3 != Kind::Communication);
    let memcpy = of(&|w| w.4 == Category::GpuMemcpy);
    let memset = of(&|w| w.4 == Category::GpuMemset);
    let mut communication: Vec<(i64, i64)> = work.iter().filter(|w| w.4 == Category::Kernel && w.3 == Kind::Communication).map(|w| (w.0, w.1)).collect();
    communication.extend(&host.communication);
    let communication = union(communication, Empty::Drop);
    let ordered: [&[(i64, i64)]; 7] = [&kernel, &memcpy, &memset, &communication, &host.runtime, &host.dataloader, &host.cpu_exec];
    windows
        .iter()
        .map(|w| {
            let mut out = [0i64; 8];
            let mut remaining = vec![(w.1, w.2)];
            for (r, role) in ordered.iter().enumerate() {
                let (covered, rest) = take_covered(&remaining, role);
                out[r] = covered;
                remaining = rest;
            }
            out[7] = remaining.iter().map(|i| i.1 - i.0).sum();
            out
        })
        .collect()
}

/// The time of `remaining` (disjoint, sorted) that `role` (disjoint,
/// sorted) covers, and what is left of `remaining`.
fn take_covered(remaining: &[(i64, i64)], role: &[(i64, i64)]) -> (i64, Vec<(i64, i64)>) {
    let mut covered = 0;
    let mut rest = Vec::new();
    for &(lo, hi) in remaining {
        let mut at = lo;
        let first = role.partition_point(|r| r.1 <= lo);
        for &(a, b) in role[first..].iter().take_while(|r| r.0 < hi) {
            let (a, b) = (a.max(lo), b.min(hi));
            if a > at {
                rest.push((at, a));
            }
            covered += b - a;
            at = b;
        }
        if at < hi {
            rest.push((at, hi));
        }
    }
    (covered, rest)
}

/// Each window's split on one device; `work` sorted by start.
fn split(device: u32, work: &[Work], windows: &[(String, i64, i64, i64)]) -> Vec<GpuRow> {
    let mut rows: Vec<GpuRow> = windows.iter().map(|_| GpuRow { device, ..GpuRow::default() }).collect();
    // Each event's time in each window it overlaps, by kind.
    let spans: Vec<(i64, i64)> = windows.iter().map(|w| (w.1, w.2)).collect();
    in_windows_each(work.iter().map(|w| (w.0, w.1)), &spans, |event, k, overlap, started| {
        let (_, _, _, kind, category) = work[event];
        rows[k].kinds_ns[kind as usize] += overlap;
        if started && category == Category::Kernel {
            rows[k].kernels += 1;
        }
    });
    let busy: Vec<_> = union_in_order(work.iter().map(|w| (w.0, w.1)), Empty::Drop).collect();
    let compute: Vec<_> = union_in_order(work.iter().filter(|w| w.3.is_compute()).map(|w| (w.0, w.1)), Empty::Drop).collect();
    let busy_in = in_windows(&busy, windows);
    let compute_in = in_windows(&compute, windows);
    for (k, w) in windows.iter().enumerate() {
        rows[k].compute_ns = compute_in[k];
        rows[k].non_compute_ns = busy_in[k] - compute_in[k];
        rows[k].idle_ns = (w.2 - w.1) - busy_in[k];
    }
    rows
}

/// Each of `events` (GPU work, `(start, end)`) in each of `windows`
/// (steps in time order, disjoint): `each(event, window, time inside it,
/// whether it started in it)`, where it overlaps the window or started in
/// it. The step breakdown's kernel kinds and `check`'s kernels count GPU
/// work so.
pub fn in_windows_each(events: impl Iterator<Item = (i64, i64)>, windows: &[(i64, i64)], mut each: impl FnMut(usize, usize, i64, bool)) {
    let window_ends: Vec<i64> = windows.iter().map(|w| w.1).collect();
    for (event, (start, end)) in events.enumerate() {
        let first = window_ends.partition_point(|&e| e <= start);
        for (k, &(w_start, w_end)) in windows.iter().enumerate().skip(first) {
            if w_start >= end {
                break;
            }
            let overlap = (end.min(w_end) - start.max(w_start)).max(0);
            let started = start >= w_start && start < w_end;
            if overlap > 0 || started {
                each(event, k, overlap, started);
            }
        }
    }
}

/// The time disjoint sorted intervals cover inside each window.
fn in_windows(intervals: &[(i64, i64)], windows: &[(String, i64, i64, i64)]) -> Vec<i64> {
    windows.iter().map(|w| covered(intervals, w.1, w.2)).collect()
}

/// HTA's temporal and idle time breakdowns of a trace, per device, and its
/// [`Launches`]: one selection of HTA's events in each timing (the exact
/// one serves both), the two timings at once.
fn gpu_time_and_launches(trace: &Trace) -> (Vec<GpuTime>, Launches) {
    let device_time = |selection: &hta::Selection| {
        let idle = hta::idle_time_breakdown_of(trace, selection, hta::CONSECUTIVE_KERNEL_DELAY_US);
        device_times(hta::temporal_breakdown_of(trace, selection), &idle)
    };
    let ((exact, launches), hta) = rayon::join(
        || {
            let selection = hta::Selection::of(trace, Timing::Exact);
            (device_time(&selection), launches_of(trace, &selection))
        },
        || device_time(&hta::Selection::of(trace, Timing::Hta)),
    );
    (gpu_time(hta, &exact), launches)
}

/// Each device's [`DeviceTime`], from HTA's two breakdowns.
pub(super) fn device_times(breakdown: Vec<hta::DeviceBreakdown>, idle: &[hta::StreamIdle]) -> Vec<(u32, DeviceTime)> {
    breakdown
        .into_iter()
        .map(|d| {
            let streams = idle.iter().filter(|s| s.device == d.device);
            let (host, kernel, other) = streams.fold((0.0, 0.0, 0.0), |(h, k, o), s| (h + s.host_wait_us, k + s.kernel_wait_us, o + s.other_us));
            let time = DeviceTime {
                span_us: d.span_us,
                compute_us: d.compute_us,
                non_compute_us: d.non_compute_us,
                idle_us: d.idle_us,
                idle_host_wait_us: host,
                idle_kernel_wait_us: kernel,
                idle_other_us: other,
            };
            (d.device, time)
        })
        .collect()
}

/// The devices of HTA's timing, each with its exact split beside.
pub(super) fn gpu_time(hta: Vec<(u32, DeviceTime)>, exact: &[(u32, DeviceTime)]) -> Vec<GpuTime> {
    hta.into_iter()
        .map(|(device, hta)| {
            let exact = exact.iter().find(|(d, _)| *d == device).map(|(_, t)| t.clone()).unwrap_or_default();
            GpuTime { device, hta, exact }
        })
        .collect()
}

/// [`Launches`] of the events `selection` (exact timing) of a trace keeps.
fn launches_of(trace: &Trace, selection: &hta::Selection) -> Launches {
    let rows = kernel_launches(trace, selection);
    let summary = hta::launch_summary(&rows, Timing::Exact);
    let small: Vec<_> = rows.iter().filter(|l| l.gpu_duration < SMALL_KERNEL_NS).collect();
    Launches {
        kernels: rows.len(),
        shorter_than_launch: rows.iter().filter(|l| l.gpu_duration < l.cpu_duration).count(),
        median_kernel_ns: summary.gpu_duration_median,
        median_launch_ns: summary.cpu_duration_median,
        small: small.len(),
        small_ns: small.iter().map(|l| l.gpu_duration).sum(),
        kernel_ns: rows.iter().map(|l| l.gpu_duration).sum(),
    }
}

/// The kernels of a selection (exact timing) against their launch calls.
pub(super) fn kernel_launches(trace: &Trace, selection: &hta::Selection) -> Vec<hta::Launch> {
    hta::launch_stats_of(trace, selection, &hta::ALL_LAUNCH_CALLS).into_iter().filter(|l| trace.events[l.event as usize].category == Category::Kernel).collect()
}

/// The [`super::Steps`] of analysed ranks.
pub fn steps(ranks: Vec<Rank>) -> super::Steps {
    super::Steps { source: super::Source::PyTorch, rows: Vec::new(), tf_data_in_use: false, pytorch: ranks }
}

/// The numbers of a row, named by [`number_names`]; the GPU's are `None`
/// in a trace without GPU work.
pub fn numbers(row: &Row) -> Vec<Option<f64>> {
    let us = |ns: i64| ns as f64 / 1000.0;
    let gpu = row.gpu.as_ref();
    let mut v = vec![Some(us(row.step_ns())), Some(us(row.cpu_step_ns)), gpu.map(|g| g.kernels as f64)];
    v.extend(row.roles_ns.iter().map(|&ns| Some(us(ns))));
    v.extend([gpu.map(|g| us(g.compute_ns)), gpu.map(|g| us(g.non_compute_ns)), gpu.map(|g| us(g.idle_ns))]);
    v.extend((0..KINDS.len()).map(|k| gpu.map(|g| us(g.kinds_ns[k]))));
    v
}

/// `step_time_us`, `cpu_step_us`, `kernels`, `<role>_us` for each of
/// [`ROLES`], `gpu_compute_us`, `gpu_non_compute_us`, `gpu_idle_us`, then
/// `<kind>_kernels_us` for each of [`KINDS`].
pub fn number_names() -> Vec<String> {
    let mut names: Vec<String> = ["step_time_us", "cpu_step_us", "kernels"].map(String::from).to_vec();
    names.extend(ROLES.iter().map(|r| format!("{r}_us")));
    names.extend(["gpu_compute_us", "gpu_non_compute_us", "gpu_idle_us"].map(String::from));
    names.extend(KINDS.iter().map(|k| format!("{}_kernels_us", k.name())));
    names
}

/// Where the columns of each table start in [`numbers`].
pub const FIRST_ROLE: usize = 3;
pub const FIRST_GPU: usize = FIRST_ROLE + ROLES.len();
pub const FIRST_KIND: usize = FIRST_GPU + 3;

/// Which kernels a rank's [`Launches`] are: HTA leaves out the last step
/// of a trace with two steps or more.
pub fn launches_scope(rank: &Rank) -> &'static str {
    let mut steps: Vec<&str> = rank.rows.iter().map(|r| r.step.as_str()).collect();
    steps.dedup();
    if rank.has_steps && steps.len() >= 2 { "the kernels launched before the last step" } else { "every kernel of the trace" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_clip_intervals() {
        let w = |a, b| (String::new(), a, b, 0);
        assert_eq!(in_windows(&[(0, 9), (10, 12)], &[w(-5, 2), w(2, 11), w(11, 20), w(20, 30)]), vec![2, 8, 1, 0]);
    }

    #[test]
    fn rules_in_order() {
        // A name rule wins over the launching op; the op over the generic
        // rules.
        assert_eq!(kind_of("void at::native::reduce_kernel<...>", Category::Kernel, Some("aten::convolution_backward")), Kind::Convolution);
        assert_eq!(kind_of("void at::native::reduce_kernel<...>", Category::Kernel, Some("aten::sum")), Kind::Reduction);
        assert_eq!(kind_of("ncclDevKernel_AllReduce_Sum_f32_RING_LL", Category::Kernel, Some("aten::mm")), Kind::Communication);
        assert_eq!(kind_of("Memcpy HtoD (Pageable -> Device)", Category::GpuMemcpy, None), Kind::Memory);
        assert_eq!(kind_of("triton_poi_fused_add_0", Category::Kernel, None), Kind::Elementwise);
        assert_eq!(kind_of("triton_tem_fused_addmm_1", Category::Kernel, None), Kind::Gemm);
        assert_eq!(kind_of("my_kernel", Category::Kernel, None), Kind::Other);
        // AMD's GEMM and convolution libraries (Tensile/hipBLASLt, MIOpen)
        assert_eq!(
            kind_of("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1", Category::Kernel, Some("hipGraphLaunch")),
            Kind::Gemm
        );
        assert_eq!(kind_of("igemm_fwd_gtcx_nhwc_fp16_bx0_ex1_bt128x128x32", Category::Kernel, None), Kind::Convolution);
        assert_eq!(kind_of("miopenSp3AsmConvRageFwd_3x3", Category::Kernel, None), Kind::Convolution);
        // "convert" is not a convolution.
        assert_eq!(kind_of("void cudnn::fusion::convert_dq_to_16bits<true>(void const*)", Category::Kernel, None), Kind::Other);
    }

    /// A cut of some steps (`rtfprof cut`) gives those steps the rows the
    /// whole trace gives them, on a CPU-only trace and an H200 one; its
    /// metadata fields are kept and a step it lacks is an error naming the
    /// steps it has.
    #[test]
    fn a_cuts_steps_are_the_whole_traces() {
        use crate::inputs::pytorch::cut::{Selection, StepRange, cut_to_vec};
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pytorch"));
        for (file, steps) in [("h200_tx.steps2-3.pt.trace.json.gz", "3"), ("h200_tx.steps2-3.pt.trace.json.gz", "2..3"), ("schedule.pt.trace.json.gz", "2")] {
            let path = root.join(file);
            let whole = analyze_trace("", &Trace::open(&path).unwrap());
            let range = StepRange::parse(steps).unwrap();
            let (bytes, done) = cut_to_vec(&path, &Selection::steps(range)).unwrap();
            let part = analyze_trace("", &Trace::from_bytes(&bytes).unwrap());
            let kept = |rows: &[Row]| -> Vec<Row> {
                rows.iter()
                    .filter(|r| r.step.strip_prefix("ProfilerStep#").and_then(|n| n.parse().ok()).is_some_and(|n: u64| range.first <= n && n <= range.last))
                    .cloned()
                    .collect()
            };
            assert!(!kept(&whole.rows).is_empty(), "{file} {steps}");
            assert_eq!(part.rows, kept(&whole.rows), "{file} {steps}");
            assert!(done.kept_events <= done.total_events, "{file}");
            let text = String::from_utf8_lossy(&bytes);
            assert!(text.contains("\"schemaVersion\""), "{file}");
        }
        let h200 = root.join("h200_tx.steps2-3.pt.trace.json.gz");
        let (bytes, _) = cut_to_vec(&h200, &Selection::steps(StepRange::parse("3").unwrap())).unwrap();
        assert!(String::from_utf8_lossy(&bytes).contains("\"deviceProperties\""));
        let err = cut_to_vec(&h200, &Selection::steps(StepRange::parse("7..9").unwrap())).unwrap_err().to_string();
        assert!(err.contains("no step in 7..9: its ProfilerSteps are #2 to #3"), "{err}");
    }
}
