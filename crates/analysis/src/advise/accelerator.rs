//! AcceleratorUtilizationChecker: how busy each accelerator was.
//!
//! tfprof's inputs: tfprof's rule, kernel time over the span from first
//! start to last end in the last step a node ran, per node device.
//!
//! Traces, from the devices' own events, one line per device that ran
//! something, always in [0, 1]:
//! - XPlane TPUs: XProf's device duty cycle (see [`crate::device::busy`]):
//!   busy time over the span from the core's first XLA program or op to its
//!   last; then XProf's duty cycle of all chips together;
//! - XPlane GPUs: busy time (kernels, copies, sets; overlapping streams
//!   once) within the device's steps: its own `Steps` line where the trace
//!   keeps one (TF), else its host's steps as `rtfprof steps` finds them;
//!   without steps, over the span from its first event to its last. The
//!   line gives the whole span's numbers too;
//! - PyTorch: the GPU's busy time (compute and non-compute) over the
//!   steps' time, as `rtfprof steps` splits it.

use std::collections::BTreeMap;

use crate::device::busy::{DeviceBusy, combined_duty_cycle, covered, device_busy};
use crate::error::Result;
use crate::load::Loaded;
use crate::show::format::micros_f64;
use crate::stats::{Stats, device};
use crate::steps::Steps;

/// tfprof's threshold: below half the time busy, a device's utilization is
/// "low".
pub const LOW_UTILIZATION: f64 = 0.5;

/// `host_steps`: each XPlane trace's steps (as `rtfprof steps` finds
/// them for its host), in the order of [`Loaded::xplane_traces`].
pub fn check(loaded: &Loaded, steps: Option<&Steps>, host_steps: &[Vec<(i128, i128)>]) -> Result<Vec<String>> {
    if loaded.pytorch_traces().next().is_some() {
        return Ok(pytorch(steps));
    }
    if loaded.xplane_traces().next().is_some() {
        return xplane(loaded, host_steps);
    }
    Ok(tfprof(&loaded.stats))
}

fn line(device: &str, utilization: f64, why: &str) -> String {
    let low = if utilization >= LOW_UTILIZATION { "" } else { "low " };
    format!("device: {device} {low}utilization: {utilization:.2} ({why})")
}

fn us(ps: i128) -> String {
    micros_f64(ps as f64 / 1e6)
}

/// One line per GPU or TPU plane that ran something; then, with TPUs,
/// XProf's duty cycle of all of them.
fn xplane(loaded: &Loaded, host_steps: &[Vec<(i128, i128)>]) -> Result<Vec<String>> {
    let mut hosts: Vec<(String, Vec<DeviceBusy>)> = Vec::new();
    for (job, trace) in loaded.xplane_traces() {
        let devices = device_busy(&trace.bytes).map_err(|e| crate::inputs::xplane::not_an_xspace(&trace.path, &e))?;
        hosts.push((job.to_owned(), devices));
    }
    let mut reports = Vec::new();
    for (h, (job, devices)) in hosts.iter().enumerate() {
        for d in devices {
            let device = d.plane.to_lowercase();
            let name = if job.is_empty() { device } else { format!("{job}{device}") };
            let whole = format!("{} of the {} from its first kernel or copy to its last", us(d.busy_ps), us(d.span_ps()));
            let host = host_steps.get(h).map_or(&[][..], Vec::as_slice);
            let (utilization, why) = if d.tpu {
                (
                    d.utilization(),
                    format!("XLA ops busy {} of the {} from its first XLA program or op to its last, XProf's duty cycle", us(d.busy_ps), us(d.span_ps())),
                )
            } else if !d.steps.is_empty() || !host.is_empty() {
                let (windows, whose) = if d.steps.is_empty() { (host, "its host's") } else { (d.steps.as_slice(), "its") };
                let (busy, total) = covered(&d.busy_spans, windows);
                let n = windows.len();
                let steps = format!("{whose} {n} step{}", if n == 1 { "" } else { "s" });
                let source = if d.steps.is_empty() { "as rtfprof steps finds them" } else { "its Steps line" };
                let utilization = if total > 0 { busy as f64 / total as f64 } else { 0.0 };
                (utilization, format!("busy {} of the {} of {steps}, {source}; {whole}", us(busy), us(total)))
            } else {
                (d.utilization(), format!("busy {whole}; no steps"))
            };
            reports.push(line(&name, utilization, &why));
        }
    }
    if let Some(duty) = combined_duty_cycle(hosts.iter().map(|(_, d)| d.as_slice())) {
        reports.push(format!(
            "all TPU chips: duty cycle {:.1}% (XProf's device_duty_cycle_percent: each chip's cores as one, the chips' busy time over their spans)",
            100.0 * duty
        ));
    }
    if reports.is_empty() {
        reports.push("No GPU or TPU ran anything in this trace (no device plane has events): nothing to measure.".to_owned());
    }
    Ok(reports)
}

/// One line per rank and GPU: its busy time in the steps of `rtfprof
/// steps`.
fn pytorch(steps: Option<&Steps>) -> Vec<String> {
    let ranks = steps.map_or(&[][..], |s| s.pytorch.as_slice());
    let several = ranks.len() > 1;
    let mut reports = Vec::new();
    for rank in ranks {
        // device -> (steps, busy ns, step ns)
        let mut devices: BTreeMap<u32, (usize, i64, i64)> = BTreeMap::new();
        for row in &rank.rows {
            if let Some(gpu) = &row.gpu {
                let d = devices.entry(gpu.device).or_default();
                d.0 += 1;
                d.1 += gpu.compute_ns + gpu.non_compute_ns;
                d.2 += row.step_ns();
            }
        }
        for (device, (count, busy, total)) in devices {
            let name = if several { format!("{}/device:gpu:{device}", rank.rank) } else { format!("/device:gpu:{device}") };
            let utilization = if total > 0 { busy as f64 / total as f64 } else { 0.0 };
            let steps = if rank.has_steps {
                format!("the {count} steps' {}", micros_f64(total as f64 / 1e3))
            } else {
                format!("the trace's {} (no ProfilerStep#N)", micros_f64(total as f64 / 1e3))
            };
            let why = format!("kernels, copies and sets ran {} of {steps}: GPU Compute + Non-compute in rtfprof steps", micros_f64(busy as f64 / 1e3));
            reports.push(line(&name, utilization, &why));
        }
    }
    if reports.is_empty() {
        reports.push("No GPU work in this trace (no kernels, copies or sets): nothing to measure.".to_owned());
    }
    reports
}

#[derive(Default)]
struct Span {
    start: i64,
    end: i64,
    busy: i64,
}

/// tfprof's rule, for tfprof's inputs.
fn tfprof(stats: &Stats) -> Vec<String> {
    let mut spans: BTreeMap<&str, Span> = BTreeMap::new();
    for id in stats.ids_by_name() {
        let node = &stats.nodes[id];
        let Some(last) = node.execs.values().next_back() else { continue };
        if !device::is_placed_on_accelerator(node.canonical_device) {
            continue;
        }
        let span = spans.entry(node.canonical_device).or_default();
        if span.start == 0 {
            span.start = last.all_start_micros;
        } else if last.all_start_micros != 0 {
            span.start = span.start.min(last.all_start_micros);
        }
        span.end = span.end.max(last.latest_end_micros);
        span.busy += last.accelerator_micros();
    }
    spans
        .iter()
        .filter(|(_, s)| s.end - s.start > 0)
        .map(|(dev, s)| {
            let utilization = s.busy as f64 / (s.end - s.start) as f64;
            let low = if utilization >= LOW_UTILIZATION { "" } else { "low " };
            format!("device: {dev} {low}utilization: {utilization:.2}")
        })
        .collect()
}
