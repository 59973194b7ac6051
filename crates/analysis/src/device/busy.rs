//! How busy each device of an XPlane trace was, from the device plane's own
//! events: XProf's device duty cycle (`DutyCycleTracker`,
//! xprof/convert/duty_cycle_tracker.cc, filled by
//! `ConstructDutyCycleTracker` in xprof/convert/xplane_to_op_stats.cc).
//!
//! **TPU** (XProf's rule, which XProf applies to TPUs only): a core's span
//! runs from the first to the last event of its `XLA Modules`, `XLA Ops`,
//! `Sparse Core Modules` and `Sparse Core Ops` lines; it is busy where an
//! op ran (the union of the ops' times), except the ops XProf counts as
//! off duty (`IsOffDutyOp`: infeed, outfeed, host send/recv and their
//! done, async-done, megacore fusion, by the `hlo_category` of the event's
//! metadata). XProf's overview page combines the cores: those of one chip
//! (`core_details`' `local_chip_id`) as one, then the chips' busy and idle
//! times added up ([`combined_duty_cycle`]).
//!
//! **GPU** (XProf has no duty cycle for GPUs; its idle time there is a
//! device's span less the sum of its ops' times): the same rule on the
//! plane's own lines (its streams; not the lines XProf derives from them,
//! `Steps`, `TensorFlow Ops`, …): the span from the first to the last
//! kernel, memcpy or memset, busy where any of them ran (overlapping
//! streams count once), so that busy time never exceeds the span. The
//! device's own steps, where the trace keeps its derived `Steps` line (TF
//! writes one per GPU), are kept too ([`DeviceBusy::steps`]), so that its
//! busy time can be told within them ([`covered`]).

use prost::DecodeError;
use rustc_hash::FxHashSet;

use crate::inputs::xplane::planes::{PlaneKind, STEP_INFO_LINE, is_derived_line, local_chip_id};
use crate::inputs::xplane::{Plane, Space};
use crate::intervals::{Empty, union};

/// One device plane that ran something: its span and busy time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceBusy {
    /// The plane's name (`/device:GPU:0`).
    pub plane: String,
    pub tpu: bool,
    pub begin_ps: i128,
    pub end_ps: i128,
    pub busy_ps: i128,
    /// The busy time as disjoint spans in order (cores of one TPU chip are
    /// united from them).
    pub busy_spans: Vec<(i128, i128)>,
    /// TPU cores: the chip (`core_details`' `local_chip_id`), `None`
    /// without core details.
    pub chip: Option<u32>,
    /// GPUs: the events of the plane's stored `Steps` line (the device's
    /// steps), in order; empty without one.
    pub steps: Vec<(i128, i128)>,
}

impl DeviceBusy {
    pub fn span_ps(&self) -> i128 {
        self.end_ps - self.begin_ps
    }

    /// Busy time over the span, in [0, 1] (0 for an empty span, as XProf's
    /// `SafeDivide`).
    pub fn utilization(&self) -> f64 {
        if self.span_ps() > 0 { self.busy_ps as f64 / self.span_ps() as f64 } else { 0.0 }
    }
}

/// XProf's `IsOffDutyOp` (xla/tsl/profiler/convert/xla_op_utils.h): the
/// `hlo_category`s whose time a TPU core is not busy.
const OFF_DUTY: [&str; 8] = ["infeed", "outfeed", "host send", "host send-done", "host recv", "host recv-done", "async-done", "megacore fusion"];

/// What a line's events do to a device's duty cycle.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Busy while they run, and within the span.
    Busy,
    /// `XLA Ops`: busy unless the op is off duty.
    Ops,
    /// Within the span only (XProf's module lines).
    Span,
}

/// The devices of one host's trace that ran something (had an event on a
/// line that counts), in the trace's plane order.
pub fn device_busy(bytes: &[u8]) -> Result<Vec<DeviceBusy>, DecodeError> {
    let space = Space::decode(bytes)?;
    let mut devices = Vec::new();
    for wire in space.planes {
        let kind = PlaneKind::of(Plane::decode_name(wire)?);
        if !matches!(kind, PlaneKind::Gpu | PlaneKind::Tpu) {
            continue;
        }
        let plane = Plane::decode(wire)?;
        let off_duty = off_duty_ops(&plane);
        let (mut begin, mut end) = (i128::MAX, i128::MIN);
        let mut busy: Vec<(i128, i128)> = Vec::new();
        let mut steps: Vec<(i128, i128)> = Vec::new();
        for line in &plane.lines {
            if kind == PlaneKind::Gpu && line.id == STEP_INFO_LINE {
                let base = i128::from(line.timestamp_ns) * 1000;
                for event in line.events() {
                    let event = event?;
                    let b = base + i128::from(event.offset_ps);
                    steps.push((b, b + i128::from(event.duration_ps.max(0))));
                }
                continue;
            }
            let role = match kind {
                PlaneKind::Gpu if is_derived_line(line.id) => continue,
                PlaneKind::Gpu => Role::Busy,
                _ => match line.name {
                    "XLA Ops" => Role::Ops,
                    "Sparse Core Ops" => Role::Busy,
                    "XLA Modules" | "Sparse Core Modules" => Role::Span,
                    _ => continue,
                },
            };
            let base = i128::from(line.timestamp_ns) * 1000;
            for event in line.events() {
                let event = event?;
                let b = base + i128::from(event.offset_ps);
                let e = b + i128::from(event.duration_ps.max(0));
                // (XProf's `ExpandToInclude` skips an empty span: at 0, of 0.)
                if b == 0 && e == 0 {
                    continue;
                }
                begin = begin.min(b);
                end = end.max(e);
                if role == Role::Busy || (role == Role::Ops && !off_duty.contains(&event.metadata_id)) {
                    busy.push((b, e));
                }
            }
        }
        if begin > end {
            continue;
        }
        let busy_spans = union(busy, Empty::Keep);
        let busy_ps = busy_spans.iter().map(|(b, e)| e - b).sum();
        let chip = if kind == PlaneKind::Tpu { local_chip_id(&plane)? } else { None };
        steps.sort_unstable();
        devices.push(DeviceBusy { plane: plane.name.to_owned(), tpu: kind == PlaneKind::Tpu, begin_ps: begin, end_ps: end, busy_ps, busy_spans, chip, steps });
    }
    Ok(devices)
}

/// How much of `windows` (in any order, overlaps counted once) disjoint
/// spans in order cover, and the windows' own length.
pub fn covered(spans: &[(i128, i128)], windows: &[(i128, i128)]) -> (i128, i128) {
    let windows = union(windows.to_vec(), Empty::Keep);
    let mut inside = 0;
    // (Not `intervals::covered`: a window that ends before it starts would
    // count as nothing there, and counts negatively here as in the total.)
    for &(begin, end) in &windows {
        let first = spans.partition_point(|s| s.1 <= begin);
        inside += spans[first..].iter().take_while(|s| s.0 < end).map(|s| s.1.min(end) - s.0.max(begin)).sum::<i128>();
    }
    (inside, windows.iter().map(|(b, e)| e - b).sum())
}

/// The event metadata ids of off-duty ops (by their `hlo_category`).
fn off_duty_ops(plane: &Plane<'_>) -> FxHashSet<i64> {
    let categories: FxHashSet<i64> = plane.stat_names.iter().filter(|(_, name)| **name == "hlo_category").map(|(id, _)| *id).collect();
    if categories.is_empty() {
        return FxHashSet::default();
    }
    plane
        .event_metadata
        .iter()
        .filter(|(_, meta)| meta.stats.iter().any(|s| categories.contains(&s.metadata_id) && s.value.as_str(plane).is_some_and(|c| OFF_DUTY.contains(&c))))
        .map(|(id, _)| *id)
        .collect()
}

/// XProf's device duty cycle over every TPU core of `hosts`
/// (`DutyCycleCombiner`, the overview page's `device_duty_cycle_percent`):
/// the cores of one chip as one (their spans and busy times united), then
/// the chips' busy times over their busy and idle times added up. `None`
/// without TPU cores. Each item is one host's devices (chip ids are a
/// host's).
pub fn combined_duty_cycle<'a>(hosts: impl IntoIterator<Item = &'a [DeviceBusy]>) -> Option<f64> {
    let (mut busy, mut idle) = (0i128, 0i128);
    let mut any = false;
    for devices in hosts {
        let mut chips: std::collections::BTreeMap<u32, Vec<&DeviceBusy>> = std::collections::BTreeMap::new();
        for d in devices.iter().filter(|d| d.tpu) {
            any = true;
            match d.chip {
                Some(chip) => chips.entry(chip).or_default().push(d),
                // (No core details: a chip of its own.)
                None => {
                    busy += d.busy_ps;
                    idle += d.span_ps() - d.busy_ps;
                }
            }
        }
        for cores in chips.values() {
            let begin = cores.iter().map(|d| d.begin_ps).min().unwrap_or(0);
            let end = cores.iter().map(|d| d.end_ps).max().unwrap_or(0);
            let spans: Vec<(i128, i128)> = cores.iter().flat_map(|d| d.busy_spans.iter().copied()).collect();
            let chip_busy: i128 = union(spans, Empty::Keep).iter().map(|(b, e)| e - b).sum();
            busy += chip_busy;
            idle += (end - begin) - chip_busy;
        }
    }
    (any && busy + idle > 0).then(|| busy as f64 / (busy + idle) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_counts_overlaps_once() {
        assert_eq!(union(vec![(0, 5), (3, 8), (8, 9), (10, 12), (11, 11)], Empty::Keep), vec![(0, 9), (10, 12)]);
        assert!(union(Vec::<(i128, i128)>::new(), Empty::Keep).is_empty());
    }

    #[test]
    fn windows_clip_spans_and_count_once() {
        let spans = [(0, 9), (10, 12)];
        // Windows out of order and overlapping: [2, 11) once.
        assert_eq!(covered(&spans, &[(5, 11), (2, 8)]), (8, 9));
        assert_eq!(covered(&spans, &[(20, 30)]), (0, 10));
        assert_eq!(covered(&[], &[(0, 1)]), (0, 1));
    }

    fn core(chip: Option<u32>, begin: i128, end: i128, busy: &[(i128, i128)]) -> DeviceBusy {
        let busy_ps = busy.iter().map(|(b, e)| e - b).sum();
        DeviceBusy { plane: String::new(), tpu: true, begin_ps: begin, end_ps: end, busy_ps, busy_spans: busy.to_vec(), chip, steps: Vec::new() }
    }

    #[test]
    fn cores_of_a_chip_count_once_and_chips_add_up() {
        // Chip 0: two cores busy 0..6 and 4..8 within 0..10: busy 8, idle 2.
        // A core without details: busy 1 of 10. Total 9 of 20.
        let devices = [core(Some(0), 0, 10, &[(0, 6)]), core(Some(0), 2, 10, &[(4, 8)]), core(None, 0, 10, &[(3, 4)])];
        assert_eq!(combined_duty_cycle([&devices[..]]), Some(9.0 / 20.0));
        assert_eq!(combined_duty_cycle([&[][..]]), None);
    }
}
