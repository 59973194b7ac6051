//! XProf's step breakdown of an XPlane trace (`input_pipeline_analyzer`),
//! re-derived from its rules (docs/book/src/commands/steps.md):
//!
//! 1. **Groups**, in `grouping.rs` (`PreprocessXPlane`,
//!    preprocess_xplane.cc, then `GroupTfEvents`,
//!    xla/tsl/profiler/utils/group_events.cc).
//!    A trace TensorFlow already grouped (a `group_id` stat anywhere) keeps
//!    its groups. Otherwise events are linked into a forest: nesting on a
//!    line, producer/consumer context stats (`_pt`/`_p` → `_ct`/`_c`),
//!    executor → `IteratorGetNextOp` by (`id`, `iter_num`), kernel launch →
//!    kernel by `correlation_id`. Roots are events with an `_r` stat (higher
//!    levels first, then by time), or, when TF loops ran (executor events
//!    with `iter_num` other than 0), each loop iteration; a root's group
//!    spreads to every event reachable from it not grouped yet. A trace
//!    with TF loop ops (`WhileOp-EvalCond`, …) is not grouped at all.
//! 2. **Step events**, in `step_events.rs`
//!    (`ConvertHostThreadsXLineToStepEvents`,
//!    `ConvertDeviceTraceXPlaneToStepEvents`, xprof/convert/
//!    xplane_to_step_events.cc). Without device planes, a group's step
//!    markers are its host events named `train…`/`test…`/`TraceContext…`
//!    (no `/`) or user-defined roots, and its other host events (not
//!    `Eager*Execute`/`FunctionRun`) are classified by name: memcpy H2D or
//!    infeed → input, `IteratorGetNext…` or a root input-pipeline stage →
//!    input (waiting), memcpy H2H → host-to-host, else host compute. With
//!    GPU planes, only the devices count: markers from each device's `Steps`
//!    line, kernels (events with `correlation_id` and `group_id`) as
//!    memcpys, `nccl…` collectives or compute.
//! 3. **Breakdown**, in `breakdown.rs` (`ToNonOverlappedEvents`,
//!    event_span.cc; `ConvertStepDetailsToStepInfo`,
//!    step_events_to_steps_db.cc). A step's time is its longest marker (a
//!    device marker unless a host marker contains it); where events
//!    overlap, the highest-priority type owns the time; the time of the
//!    step no event covers is "other". A step without device compute (with
//!    devices) or host compute (without) is dropped.
//! 4. **Hosts**, in the parent module ([`super::from_hosts`])
//!    (`StepIntersection`, xprof/utils/step_intersection.cc;
//!    `CombineAllOpStats`): the steps all hosts have, aligned in time with
//!    the host whose steps span least; the rows are the first host's.
//!
//! A trace is walked twice, without allocating per event. The first walk
//! (`collect`, in `collect.rs`) keeps as records (`events.rs`) only the
//! events grouping reads and the events they nest in; the others (most op
//! events) can only take the group of the event they nest in. The second
//! walk (`walk_line`, in `walk.rs`) gives them that group and resolves each
//! step once none of its events can follow. This file holds the public
//! types and [`analyze`], which runs the stages in turn.

mod breakdown;
mod collect;
mod events;
mod grouping;
mod step_events;
mod walk;

use std::collections::BTreeMap;

use prost::DecodeError;
use rayon::iter::{IntoParallelRefIterator, ParallelIterator};

use crate::inputs::xplane::planes::PlaneKind;
use crate::inputs::xplane::stats::{StatKind, StatKinds};
use crate::inputs::xplane::{Plane, Release, Space};
use breakdown::{Details, DeviceSpans, add_device_time};
use collect::collect;
use grouping::{Links, group, mark_host_consumers, sort_contexts};
use step_events::{derived_device_step_events, device_step_events, has_steps_line, walk_derived_device, walk_host};

pub use breakdown::non_overlapped;

/// XProf's `EventType`s; a bigger value wins where events overlap.
pub mod event_type {
    pub const UNKNOWN_TIME: u8 = 0;
    pub const HOST_COMPUTE: u8 = 10;
    pub const HOST_COMPILE: u8 = 60;
    pub const HOST_TO_HOST: u8 = 70;
    pub const HOST_TO_DEVICE: u8 = 80;
    pub const HOST_PREPARE: u8 = 90;
    pub const DEVICE_COLLECTIVES: u8 = 100;
    pub const HOST_WAIT_INPUT: u8 = 110;
    pub const DEVICE_TO_DEVICE: u8 = 120;
    pub const DEVICE_TO_HOST: u8 = 130;
    pub const DEVICE_COMPUTE_32: u8 = 140;
    pub const DEVICE_COMPUTE_16: u8 = 150;
    pub const DEVICE_WAIT_DEVICE: u8 = 160;
    pub const DEVICE_WAIT_HOST: u8 = 170;
    pub const LAST: u8 = DEVICE_WAIT_HOST;
}

/// More steps than this, and XProf drops a host's first and last
/// (`ConvertStepEventsToStepDb` with `maybe_drop_incomplete_steps`).
pub const DROP_INCOMPLETE_STEPS_ABOVE: usize = 5;

/// Traces at least this large are grouped before their GPU planes without
/// a `Steps` line are walked, not while (see [`analyze_releasing`]):
/// `steps` of the 1.06 GB flax_cnn_nocb x3400 trace peaked at 1.04 GB
/// with both at once (bench/large_xplane.md). Smaller ones are walked
/// while grouping runs, which is faster on several cores.
pub const GROUP_APART_FROM_BYTES: usize = 512 << 20;

const LOOP_OPS: [&str; 5] = ["WhileOp-EvalCond", "WhileOp-StartBody", "ForOp", "ParallelForOp", "ForeverOp"];

/// One step of one host, as XProf's step database holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct HostStep {
    /// The group id (the step's number in XProf when unnamed).
    pub group: i64,
    pub name: String,
    pub begin_ps: i128,
    pub duration_ps: i128,
    /// Picoseconds per event type (see [`event_type`]).
    pub type_ps: BTreeMap<u8, i128>,
    /// GPU traces, beyond XProf: how much of the step the devices spent in
    /// memcpys (any direction), and how much they ran anything at all
    /// (events on every device, overlaps counted once).
    pub device: Option<DeviceTime>,
}

/// A step's device time, beyond XProf's categories (which file a
/// host-to-device copy that no step launched under "other").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceTime {
    pub transfer_ps: i128,
    pub busy_ps: i128,
}

/// What kind of machine a host's trace comes from (XProf's hardware type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hardware {
    CpuOnly,
    Gpu,
    Tpu,
}

/// One host's trace, analyzed.
#[derive(Clone, Debug)]
pub struct HostSteps {
    pub hardware: Hardware,
    pub steps: Vec<HostStep>,
    /// Self time of tf.data (`Iterator::…`) ops and of host-to-device enqueue
    /// ops (memcpy H2D, infeed): XProf's input-op analysis.
    pub dataset_self_ps: i128,
    pub enqueue_self_ps: i128,
}

/// Analyzes one host's trace. Errors only on a malformed file.
pub fn analyze(bytes: &[u8]) -> Result<HostSteps, DecodeError> {
    analyze_releasing(bytes, &|_| {})
}

/// [`analyze`], calling `release` with each stretch of the file once walked
/// (the file's pages then need not stay resident while events are kept).
pub fn analyze_releasing(bytes: &[u8], release: Release<'_>) -> Result<HostSteps, DecodeError> {
    let (mut host, _) = analyze_with(bytes, release, false, bytes.len() >= GROUP_APART_FROM_BYTES)?;
    drop_incomplete_steps(&mut host.steps);
    Ok(host)
}

/// Where each group's root begins (the event its group spread from), by
/// group: for `rtfprof cut`, which must keep what groups a step's events.
/// Empty for a trace TF grouped already (its groups are its stats').
pub type GroupRoots = BTreeMap<i64, i128>;

/// [`analyze_releasing`] with the first and last step that XProf drops
/// ([`drop_incomplete_steps`]), and where the groups' roots begin.
pub fn analyze_every_step(bytes: &[u8], release: Release<'_>) -> Result<(HostSteps, GroupRoots), DecodeError> {
    analyze_with(bytes, release, true, bytes.len() >= GROUP_APART_FROM_BYTES).map(|(host, roots)| (host, roots.unwrap_or_default()))
}

/// `apart`: grouping first, then the GPU planes without a `Steps` line
/// (see [`GROUP_APART_FROM_BYTES`]).
fn analyze_with(bytes: &[u8], release: Release<'_>, roots: bool, apart: bool) -> Result<(HostSteps, Option<GroupRoots>), DecodeError> {
    let space = Space::decode(bytes)?;
    let planes: Vec<Plane<'_>> = space.planes.iter().map(|p| Plane::decode_releasing(p, release)).collect::<Result<_, _>>()?;
    let kinds: Vec<PlaneKind> = planes.iter().map(|p| PlaneKind::of(p.name)).collect();
    let tpu = kinds.contains(&PlaneKind::Tpu);
    let gpu: Vec<usize> = (0..planes.len()).filter(|&i| kinds[i] == PlaneKind::Gpu).collect();
    let hardware = if !gpu.is_empty() {
        Hardware::Gpu
    } else if tpu {
        Hardware::Tpu
    } else {
        Hardware::CpuOnly
    };
    let stats: Vec<StatKinds> = planes.iter().map(StatKinds::of).collect();
    let grouped = stats.iter().any(|s| s.names(StatKind::GroupId));
    let loop_ops = planes.iter().any(|p| p.event_metadata.values().any(|m| LOOP_OPS.contains(&m.name)));

    let mut events = collect(&planes, &stats, release)?;
    let grouping = !grouped && !loop_ops && !tpu;
    let host = kinds.iter().position(|&k| k == PlaneKind::Host);
    if host.is_some() || grouping {
        sort_contexts(&mut events);
    }
    if let Some(h) = host {
        mark_host_consumers(&mut events, h);
    }
    let has_device = !gpu.is_empty() || tpu;
    // (TPU steps: XProf reads them from the device's own step line, with
    // rules of their own; rtfprof does not implement them.)
    let device_steps = !tpu && has_device;
    // The GPU planes without a `Steps` line are walked while grouping runs
    // (`steps` of the 272 MB jax_lstm x91 trace: 0.62 -> 0.52 s on two
    // cores, bench/README.md): grouping writes only the marks, taken out
    // of the events meanwhile.
    let derived: Vec<usize> = gpu.iter().copied().filter(|&p| device_steps && !has_steps_line(&planes[p])).collect();
    // A large trace's device planes are walked after grouping, while the
    // host plane is (below): grouping's links and the walk's events each
    // take hundreds of MB there, and would be held at once.
    let walk_derived = |events: &events::Events<'_>| {
        derived.iter().map(|&p| walk_derived_device(events, &planes[p], p, grouping, !apart, release)).collect::<Result<Vec<_>, _>>()
    };
    let mut marks = std::mem::take(&mut events.marks);
    let links = grouping.then(|| Links::take(&mut events));
    let walked_while_grouping = if apart {
        if let Some(links) = links {
            group(&events, &mut marks, links);
        }
        None
    } else {
        let ((), walked) = rayon::join(
            || {
                if let Some(links) = links {
                    group(&events, &mut marks, links);
                }
            },
            || walk_derived(&events),
        );
        Some(walked)
    };
    events.marks = marks;
    // The second walk: the events `collect` left out get their groups.
    let host_steps = !tpu && !has_device;
    let walk_host_plane = || match host {
        Some(h) => walk_host(&events, &planes[h], h, grouping, host_steps, release),
        None => Ok((Vec::new(), 0, 0)),
    };
    let (walked_host, walked) = match walked_while_grouping {
        Some(walked) => (walk_host_plane(), walked),
        None => rayon::join(walk_host_plane, || walk_derived(&events)),
    };
    let (mut steps, dataset_self_ps, enqueue_self_ps) = walked_host?;
    if device_steps {
        let mut device: BTreeMap<i64, Details> = BTreeMap::new();
        let mut spans = DeviceSpans::default();
        let mut walked = walked?.into_iter();
        for &plane in &gpu {
            let events_of_plane = if has_steps_line(&planes[plane]) {
                device_step_events(&events, &planes[plane], plane, grouping, release, &mut spans)?
            } else {
                derived_device_step_events(&events, walked.next().expect("a walk per plane"), &mut spans)
            };
            for (group, details) in events_of_plane {
                device.entry(group).or_default().combine(details);
            }
        }
        // (Steps resolved on all cores: each sorts its events' bounds.)
        let device: Vec<(i64, Details)> = device.into_iter().collect();
        steps = device.par_iter().filter_map(|(group, details)| details.step_info(&events, *group, true)).collect();
        add_device_time(&mut steps, spans);
    }
    let roots = roots.then(|| group_roots(&events));
    drop(events);
    Ok((HostSteps { hardware, steps, dataset_self_ps, enqueue_self_ps }, roots))
}

/// Where each group's root begins. Grouping's links run forward in time
/// (a parent event encloses its children, a producer or a launch comes
/// before what it links to), so the events that group a step's events
/// begin at or after its root.
fn group_roots(events: &events::Events<'_>) -> GroupRoots {
    events.marks.roots.iter().map(|&(group, root)| (group, events.begin(root as usize))).collect()
}

/// XProf (2.24's input_pipeline_analyzer) drops the first and the last
/// step of a host that has more than 5: sampling may have cut them.
pub fn drop_incomplete_steps(steps: &mut Vec<HostStep>) {
    if steps.len() > DROP_INCOMPLETE_STEPS_ABOVE {
        steps.pop();
        steps.remove(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_random::XorShift;

    /// (Also grouping's tests' fixture.)
    pub(super) const TF_LOOP: &[u8] = include_bytes!("../../../../../testdata/xplane/tf_loop/plugins/profile/run0/host0.xplane.pb");

    /// XProf's four `train` steps of the fixture (tests/integration/steps.rs checks the
    /// numbers against XProf's).
    #[test]
    fn markers_with_a_root_stat_make_the_steps() {
        let host = analyze(TF_LOOP).unwrap();
        let names: Vec<&str> = host.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["train 0", "train 1", "train 2", "train 3"]);
        assert_eq!(host.hardware, Hardware::CpuOnly);
    }

    /// A large trace's GPU planes walked after grouping
    /// ([`GROUP_APART_FROM_BYTES`]) give the steps, and the groups' roots,
    /// that walking them while grouping runs gives.
    #[test]
    fn grouping_apart_from_the_device_walk_gives_the_same_steps() {
        let traces: [&[u8]; 4] = [
            include_bytes!("../../../../../testdata/xplane/jax_gpu_mlp_nocb/plugins/profile/run0/host0.xplane.pb"),
            include_bytes!("../../../../../testdata/xplane/jax_gpu_cnn/plugins/profile/run0/host0.xplane.pb"),
            include_bytes!("../../../../../testdata/xplane/jax_gpu_xfer/plugins/profile/run0/host0.xplane.pb"),
            include_bytes!("../../../../../testdata/xplane/jax_gpu_cond_nocb/plugins/profile/run0/host0.xplane.pb"),
        ];
        for (k, trace) in traces.into_iter().enumerate() {
            let (together, together_roots) = analyze_with(trace, &|_| {}, true, false).unwrap();
            let (apart, apart_roots) = analyze_with(trace, &|_| {}, true, true).unwrap();
            assert!(together.steps.len() > 1, "trace {k}: {} steps", together.steps.len());
            assert_eq!(together.steps, apart.steps);
            assert_eq!(together_roots, apart_roots);
            assert_eq!((together.dataset_self_ps, together.enqueue_self_ps), (apart.dataset_self_ps, apart.enqueue_self_ps));
        }
    }

    /// Randomly corrupted traces never panic: they are refused or analyzed
    /// (tests/integration/steps.rs renders the steps of the same corrupted traces).
    #[test]
    fn corrupted_traces_do_not_panic() {
        let mut rng = XorShift::new(0x57e9_5eed);
        for _ in 0..400 {
            let mut bytes = TF_LOOP.to_vec();
            rng.corrupt(&mut bytes, 4);
            if let Ok(host) = analyze(&bytes) {
                let _ = super::super::from_hosts(&[host.clone(), host]);
            }
        }
    }
}
