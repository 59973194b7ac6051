//! StepTimeChecker for PyTorch traces: what the numbers of `rtfprof steps
//! --pytorch_path` (see [`crate::steps::pytorch`]) say, each conclusion
//! with its numbers and its rule. Per rank and GPU:
//!
//! 1. **Host-bound**: the GPU idle share of the steps' time (GPU idle over
//!    step time, summed over the steps), host-bound from
//!    [`HOST_BOUND_IDLE_PCT`]; with HTA's idle time categories of the
//!    whole trace (host wait: nothing was queued; kernel wait: short gaps
//!    between queued kernels).
//! 2. **Kernel kinds**: the [`TOP_KINDS`] kinds with the most kernel time
//!    in the steps.
//!
//! Per rank (a trace's launches):
//!
//! 3. **Launch overhead**: the kernels that ran for less time than the
//!    call that launched them ([`Launches::shorter_than_launch`]), the median
//!    launch call against the median kernel; launch-bound from
//!    [`LAUNCH_BOUND_PCT`] of the kernels.
//! 4. **Small kernels**: kernels shorter than [`SMALL_KERNEL_NS`] and their
//!    share of the kernels' time; many from [`SMALL_KERNELS_PCT`].

use std::collections::BTreeMap;

use crate::show::format::micros_f64;
use crate::steps::Steps;
use crate::steps::pytorch::{GpuTime, KINDS, Launches, Rank, SMALL_KERNEL_NS, launches_scope};

/// GPU idle for a fifth of the steps' time or more: the steps are
/// host-bound (XProf's threshold for a HIGHLY input-bound program: time the
/// device waits on the host).
pub const HOST_BOUND_IDLE_PCT: f64 = 20.0;

/// Half the kernels or more ran for less time than their launch call took:
/// the CPU cannot queue kernels as fast as the GPU runs them.
pub const LAUNCH_BOUND_PCT: f64 = 50.0;

/// Half the kernels or more are shorter than [`SMALL_KERNEL_NS`]: the GPU
/// runs mostly work that costs about what launching it does.
pub const SMALL_KERNELS_PCT: f64 = 50.0;

/// How many kernel kinds are named (tfprof's checkers name their top three).
pub const TOP_KINDS: usize = 3;

fn us(ns: f64) -> String {
    micros_f64(ns / 1e3)
}

fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { 100.0 * part / whole } else { 0.0 }
}

pub fn check(steps: &Steps) -> Vec<String> {
    let mut reports = Vec::new();
    let several = steps.pytorch.len() > 1;
    for rank in &steps.pytorch {
        let who = if several { format!("Rank {}: ", rank.rank) } else { String::new() };
        let gpus = gpu_steps(rank);
        if gpus.is_empty() {
            reports.push(format!(
                "{who}No GPU work in the trace (no kernels, copies or sets): the steps are the CPU's time; where it goes: rtfprof op --select micros --order_by micros."
            ));
            continue;
        }
        for (device, gpu) in &gpus {
            reports.push(format!("{who}{}", host_bound(*device, gpu, rank.has_steps, rank.gpu_time.iter().find(|g| g.device == *device))));
            reports.extend(kinds(*device, gpu).map(|line| format!("{who}{line}")));
        }
        if rank.launches.kernels > 0 {
            reports.push(format!("{who}{}", launch_overhead(&rank.launches, launches_scope(rank))));
            reports.push(format!("{who}{}", small_kernels(&rank.launches)));
        }
    }
    reports
}

/// One GPU's steps, summed (ns).
#[derive(Default)]
struct GpuSteps {
    steps: usize,
    step_ns: i64,
    idle_ns: i64,
    kinds_ns: [i64; 8],
}

fn gpu_steps(rank: &Rank) -> BTreeMap<u32, GpuSteps> {
    let mut gpus: BTreeMap<u32, GpuSteps> = BTreeMap::new();
    for row in &rank.rows {
        let Some(gpu) = &row.gpu else { continue };
        let sum = gpus.entry(gpu.device).or_default();
        sum.steps += 1;
        sum.step_ns += row.step_ns();
        sum.idle_ns += gpu.idle_ns;
        for (total, k) in sum.kinds_ns.iter_mut().zip(gpu.kinds_ns) {
            *total += k;
        }
    }
    gpus
}

fn host_bound(device: u32, gpu: &GpuSteps, has_steps: bool, hta: Option<&GpuTime>) -> String {
    let share = pct(gpu.idle_ns as f64, gpu.step_ns as f64);
    let steps = if has_steps { format!("the {} steps' time", gpu.steps) } else { "the trace's time (no ProfilerStep#N)".to_owned() };
    let verdict = if share >= HOST_BOUND_IDLE_PCT { "the steps are host-bound: the GPU waits for work" } else { "not host-bound" };
    let mut line = format!(
        "GPU {device} was idle for {share:.1}% of {steps} ({} of {}, GPU idle in rtfprof steps): {verdict} (rule: host-bound when GPU idle is {HOST_BOUND_IDLE_PCT}% of the step time or more).",
        us(gpu.idle_ns as f64),
        us(gpu.step_ns as f64)
    );
    if let Some(t) = hta.map(|g| &g.hta).filter(|t| t.idle_host_wait_us + t.idle_kernel_wait_us + t.idle_other_us > 0.0) {
        let (host, kernel) = (t.idle_host_wait_us, t.idle_kernel_wait_us);
        let why = if host >= kernel {
            "mostly host wait: nothing was queued on the GPU, the CPU was late to launch more (Python, data loading, synchronisation: the CPU ops in rtfprof op --select micros --order_by micros, a step's timeline with rtfprof scope --step N --output timeline:outfile=PATH)"
        } else {
            "mostly kernel wait: short gaps between queued kernels, the launches' own latency (see the launch statement)"
        };
        line.push_str(&format!(
            " HTA's idle time of the whole trace (its last step left out, per stream): host wait {}, kernel wait {}, other {}: {why}.",
            micros_f64(host),
            micros_f64(kernel),
            micros_f64(t.idle_other_us)
        ));
    }
    line
}

fn kinds(device: u32, gpu: &GpuSteps) -> Option<String> {
    let total: i64 = gpu.kinds_ns.iter().sum();
    if total <= 0 {
        return None;
    }
    let mut ranked: Vec<(usize, i64)> = gpu.kinds_ns.iter().copied().enumerate().filter(|&(_, ns)| ns > 0).collect();
    ranked.sort_by_key(|&(k, ns)| (std::cmp::Reverse(ns), k));
    let top: Vec<String> =
        ranked.iter().take(TOP_KINDS).map(|&(k, ns)| format!("{} {} ({:.1}%)", KINDS[k].label(), us(ns as f64), pct(ns as f64, total as f64))).collect();
    Some(format!(
        "GPU {device}'s kernel time in the steps by kind: {} of {} (rtfprof steps' kind columns, by rtfprof's rules on kernel names; the ops that launched them: rtfprof op --select accelerator_micros,occurrence --order_by accelerator_micros).",
        top.join(", "),
        us(total as f64)
    ))
}

fn launch_overhead(l: &Launches, scope: &str) -> String {
    let share = pct(l.shorter_than_launch as f64, l.kernels as f64);
    let verdict = if share >= LAUNCH_BOUND_PCT {
        "launch-bound: the CPU cannot queue kernels as fast as the GPU runs them; fewer, larger kernels help (fusion with torch.compile, CUDA graphs with torch.compile(mode=\"reduce-overhead\") or torch.cuda.graphs, larger batches)"
    } else {
        "not launch-bound"
    };
    format!(
        "Of {} ({}, HTA's kernel launch statistics), {} ({share:.1}%) ran for less time than the call that launched them; median launch call {}, median kernel {}: {verdict} (rule: launch-bound when {LAUNCH_BOUND_PCT}% of the kernels or more are shorter than their launch; these numbers: rtfprof steps, Kernel launches).",
        scope,
        l.kernels,
        l.shorter_than_launch,
        us(l.median_launch_ns),
        us(l.median_kernel_ns)
    )
}

fn small_kernels(l: &Launches) -> String {
    let share = pct(l.small as f64, l.kernels as f64);
    let verdict = if share >= SMALL_KERNELS_PCT {
        "mostly small kernels, each costing about what its launch does: fuse them (torch.compile)"
    } else {
        "not mostly small kernels"
    };
    format!(
        "Of the same {} kernels, {} ({share:.1}%) ran for less than {} and took {:.1}% of their {}: {verdict} (rule: {SMALL_KERNELS_PCT}% of the kernels or more shorter than {}, a few launch calls' time).",
        l.kernels,
        l.small,
        us(SMALL_KERNEL_NS as f64),
        pct(l.small_ns as f64, l.kernel_ns as f64),
        us(l.kernel_ns as f64),
        us(SMALL_KERNEL_NS as f64)
    )
}
