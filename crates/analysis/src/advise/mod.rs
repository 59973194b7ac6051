//! `advise`: tfprof's checkers, each reading [`crate::stats::Stats`] or a view's result
//! (`internal/advisor/*.h`). Reports print as `\n<Checker>:\n` followed by
//! one line per report. tfprof prints its checkers in protobuf hash-map order,
//! which changes from run to run; rtfprof always uses the order of TF's docs.
//!
//! tfprof's own inputs get tfprof's checkers as tfprof runs them. Traces
//! (XPlane, PyTorch) get them with the rules that hold there: utilization
//! from the devices' own events, TF's op rules on TF programs only, advice
//! in the terms of the framework that wrote the trace ([`Framework`]), and
//! a `StepTimeChecker` from the numbers `rtfprof steps` prints.

mod accelerator;
mod expensive;
mod operation;
mod pytorch;
mod step_time;
mod uncounted;

pub use accelerator::LOW_UTILIZATION;
pub use pytorch::{HOST_BOUND_IDLE_PCT, LAUNCH_BOUND_PCT, SMALL_KERNELS_PCT, TOP_KINDS};
pub use step_time::{NEXT_STEP_PREFIX, next_step, strip_html};

use crate::error::Result;
use crate::inputs::xplane::planes::PlaneKind;
use crate::inputs::xplane::{Plane, Space};
use crate::load::Loaded;

/// One checker's findings.
pub struct Checker {
    pub name: &'static str,
    pub reports: Vec<String>,
}

/// What wrote the profile: advice names that framework's tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framework {
    /// tfprof's own inputs (graphs, run metadata, profiles, event files).
    Tf1,
    /// A TF2 trace (XPlane with TF's executor or eager runtime events).
    Tf2,
    /// A JAX trace (XPlane with `PjitFunction`s or `jit_…` XLA programs).
    Jax,
    /// An XPlane trace of neither.
    Xla,
    PyTorch,
}

impl Framework {
    /// The framework of a loaded profile: PyTorch for PyTorch traces; for
    /// XPlane traces, TF2 if any trace has TF's runtime events, else JAX if
    /// any has JAX's; tfprof's own inputs otherwise.
    pub fn of(loaded: &Loaded) -> Result<Framework> {
        if loaded.pytorch_traces().next().is_some() {
            return Ok(Framework::PyTorch);
        }
        let mut found = None;
        for (_, trace) in loaded.xplane_traces() {
            let framework = xplane_framework(&trace.bytes).map_err(|e| crate::inputs::xplane::not_an_xspace(&trace.path, &e))?;
            found = Some(match (found, framework) {
                (Some(Framework::Tf2), _) | (_, Framework::Tf2) => Framework::Tf2,
                (Some(Framework::Jax), _) | (_, Framework::Jax) => Framework::Jax,
                _ => Framework::Xla,
            });
        }
        Ok(found.unwrap_or(Framework::Tf1))
    }

    /// The name advice calls it by.
    pub fn name(self) -> &'static str {
        match self {
            Framework::Tf1 | Framework::Tf2 => "TensorFlow",
            Framework::Jax => "JAX",
            Framework::Xla => "XLA",
            Framework::PyTorch => "PyTorch",
        }
    }
}

/// TF's runtime events: its executor, eager runtime and functions.
const TF_EVENTS: [&str; 5] = ["ExecutorState::Process", "EagerExecute", "FunctionRun", "SessionRun", "EagerKernelExecute"];

/// An XPlane trace's framework, by the names of its events' metadata (no
/// event is read): TF's runtime events (or a `__inference_` function) make
/// it TF2; otherwise JAX's dispatch (`PjitFunction(…)`, `PmapFunction(…)`)
/// or programs named as JAX names them (`jit_…`, `pmap_…`, on the
/// metadata and device planes) make it JAX.
pub fn xplane_framework(bytes: &[u8]) -> std::result::Result<Framework, prost::DecodeError> {
    let mut jax = false;
    for wire in Space::decode(bytes)?.planes {
        let plane = Plane::decode_metadata(wire)?;
        let programs = matches!(PlaneKind::of(plane.name), PlaneKind::Metadata | PlaneKind::Gpu | PlaneKind::Tpu);
        for meta in plane.event_metadata.values() {
            let name = meta.name;
            if TF_EVENTS.contains(&name) || name.contains("__inference_") {
                return Ok(Framework::Tf2);
            }
            jax |=
                name.starts_with("PjitFunction(") || name.starts_with("PmapFunction(") || (programs && (name.starts_with("jit_") || name.starts_with("pmap_")));
        }
    }
    Ok(if jax { Framework::Jax } else { Framework::Xla })
}

/// Runs every checker; messages tfprof prints on stderr go to `warnings`.
pub fn advise(loaded: &Loaded, warnings: &mut Vec<String>) -> Result<Vec<Checker>> {
    let stats = &loaded.stats;
    let framework = Framework::of(loaded)?;
    // (Traces' steps, read once: the GPUs' utilization, PyTorch's
    // conclusions and XPlane's StepTimeChecker come from them.)
    let (steps, host_steps) = match framework {
        Framework::Tf1 => (None, Vec::new()),
        Framework::PyTorch => (Some(crate::steps::analyze(loaded)?), Vec::new()),
        _ => {
            let mut hosts = Vec::new();
            for (_, trace) in loaded.xplane_traces() {
                // (Each trace's pages given back as walked, as `steps` does.)
                let host = crate::steps::xplane::analyze_releasing(&trace.bytes, &|part| trace.release(part));
                trace.walked();
                hosts.push(host.map_err(|e| crate::inputs::xplane::not_an_xspace(&trace.path, &e))?);
            }
            let windows = hosts.iter().map(|h| h.steps.iter().map(|s| (s.begin_ps, s.begin_ps + s.duration_ps)).collect()).collect();
            (Some(crate::steps::from_hosts(&hosts)), windows)
        }
    };
    let mut checkers = vec![
        Checker { name: "AcceleratorUtilizationChecker", reports: accelerator::check(loaded, steps.as_ref(), &host_steps)? },
        Checker { name: "OperationChecker", reports: operation::check(stats, framework) },
        Checker { name: "ExpensiveOperationChecker", reports: expensive::check(stats, loaded.from_traces(), warnings)? },
    ];
    // rtfprof's own, for traces only: tfprof's files keep tfprof's output.
    if let Some(steps) = &steps {
        let reports = if framework == Framework::PyTorch { pytorch::check(steps) } else { step_time::check(steps, framework) };
        checkers.push(Checker { name: "StepTimeChecker", reports });
    }
    // rtfprof's own, for graphs with estimated float ops only (tfprof's
    // command line estimates none).
    if framework == Framework::Tf1 && stats.flops_estimate.is_on() {
        checkers.push(Checker { name: "UncountedFlopsChecker", reports: uncounted::check(stats) });
    }
    Ok(checkers)
}

/// Runs every checker, printing their stderr messages.
pub fn advise_printing_warnings(loaded: &Loaded) -> Result<Vec<Checker>> {
    let mut warnings = Vec::new();
    let checkers = advise(loaded, &mut warnings);
    for warning in warnings {
        eprintln!("{warning}");
    }
    checkers
}
