//! Stage 2, step events: XProf's host step rules ([`walk_host`], which also
//! sums the input ops' self times) and its device step rules, for GPU
//! planes with a `Steps` line ([`device_step_events`]) or without one
//! ([`derived_device_step_events`]): per group, the [`Details`] a step's
//! breakdown is resolved from.

use std::collections::BTreeMap;

use prost::DecodeError;
use rayon::slice::ParallelSliceMut;
use rustc_hash::FxHashMap as HashMap;

use super::breakdown::{Details, DeviceSpans};
use super::events::{Events, flag, more};
use super::walk::{Seen, Visit, lines_of, walk_line, walk_line_grouped_by};
use super::{HostStep, event_type as et};
use crate::inputs::xplane::names::{DATASET_TYPE, GpuEventClass, classify_gpu_event, is_memcpy, parse_op, transfer};
use crate::inputs::xplane::planes::{STEP_INFO_LINE, is_derived_line};
use crate::inputs::xplane::{Plane, Release};

/// How XProf's host step rules see an event name (worked out once a name).
#[derive(Clone, Copy)]
enum HostKind {
    Marker,
    Event(u8),
    Ignored,
}

fn host_kind(name: &str) -> HostKind {
    if is_explicit_marker(name) {
        HostKind::Marker
    } else if is_real_cpu_compute(name) {
        HostKind::Event(if name.starts_with("InfeedEnqueue") || is_memcpy(name, "MemcpyHToD") || infeed(name) {
            et::HOST_TO_DEVICE
        } else if is_memcpy(name, "MemcpyHToH") {
            et::HOST_TO_HOST
        } else if name.get(..15).is_some_and(|h| h.eq_ignore_ascii_case("iteratorgetnext")) {
            et::HOST_WAIT_INPUT
        } else {
            et::HOST_COMPUTE
        })
    } else {
        HostKind::Ignored
    }
}

/// The second walk over the host plane: XProf's host step events
/// (`ConvertHostThreadsXLineToStepEvents`, if `steps`) and the input ops'
/// self times. A step is resolved as soon as none of its events can come
/// any more (no kept event of its group is left to walk or open), so the
/// events of only a few steps are held at a time.
pub(super) fn walk_host(
    ev: &Events<'_>,
    plane: &Plane<'_>,
    p: usize,
    inherit: bool,
    steps: bool,
    release: Release<'_>,
) -> Result<(Vec<HostStep>, i128, i128), DecodeError> {
    let kinds: Vec<HostKind> = ev.names.iter().map(|n| host_kind(n)).collect();
    let op_kinds: Vec<u8> = ev.names.iter().map(|n| input_op_kind(n)).collect();
    // Kept events of each group not walked yet, and open on a nesting stack.
    let mut remaining: HashMap<i64, u32> = HashMap::default();
    if steps {
        for (l, _) in lines_of(ev, plane, p) {
            for i in ev.line_range(l) {
                if let Some(g) = ev.group(i).filter(|g| *g >= 0) {
                    *remaining.entry(g).or_default() += 1;
                }
            }
        }
    }
    let mut open: HashMap<i64, u32> = HashMap::default();
    let mut pending: HashMap<i64, Details> = HashMap::default();
    let mut done: Vec<(i64, HostStep)> = Vec::new();
    let mut resolve = |g: i64, pending: &mut HashMap<i64, Details>, remaining: &HashMap<i64, u32>, open: &HashMap<i64, u32>| {
        if remaining.get(&g).copied().unwrap_or(0) == 0
            && open.get(&g).copied().unwrap_or(0) == 0
            && let Some(details) = pending.remove(&g)
            && let Some(step) = details.step_info(ev, g, false)
        {
            done.push((g, step));
        }
    };
    let (mut dataset, mut enqueue) = (0, 0);
    let mut nesting = Vec::new();
    for (l, line) in lines_of(ev, plane, p) {
        // (begin, end, is a stage, below a stage)
        let mut stack: Vec<(i128, i128, bool, bool)> = Vec::new();
        // (begin, end, type is dataset/enqueue/other, children's time)
        let mut ops: Vec<(i128, i128, u8, i128)> = Vec::new();
        let finish = |entry: (i128, i128, u8, i128), dataset: &mut i128, enqueue: &mut i128| {
            let own = entry.1 - entry.0 - entry.3;
            match entry.2 {
                1 => *dataset += own,
                2 => *enqueue += own,
                _ => {}
            }
        };
        walk_line(ev, line, l, inherit, release, &mut nesting, |visit| {
            let s = match visit {
                Visit::Left(g) => {
                    if steps && g >= 0 {
                        *open.entry(g).or_default() -= 1;
                        resolve(g, &mut pending, &remaining, &open);
                    }
                    return;
                }
                Visit::Event(s) => s,
            };
            if !s.region {
                // Input ops (regions are no ops).
                let kind = op_kinds[s.name as usize];
                if kind != 0 {
                    while let Some(&top) = ops.last() {
                        if s.begin < top.1 {
                            break;
                        }
                        ops.pop();
                        finish(top, &mut dataset, &mut enqueue);
                        if let Some(parent) = ops.last_mut() {
                            parent.3 += top.1 - top.0;
                        }
                    }
                    ops.push((s.begin, s.end, kind, 0));
                }
            }
            if !steps {
                return;
            }
            // Regions come after the line's events in XProf: they close no
            // stage and are in none (they have no stage name).
            let mut root_stage = false;
            if !s.region {
                let ipl_stage = s.record.is_some_and(|i| ev.has(i, flag::IPL_STAGE));
                let mut below = s.record.is_some_and(|i| ev.nodes[i].more & more::CONSUMES_HOST_PRODUCER != 0);
                while let Some(top) = stack.last() {
                    if top.0 <= s.begin && s.end <= top.1 {
                        below = below || top.3 || top.2;
                        break;
                    }
                    stack.pop();
                }
                stack.push((s.begin, s.end, ipl_stage, below));
                root_stage = ipl_stage && !below;
            }
            let Some(g) = s.group.filter(|g| *g >= 0) else { return };
            let details = pending.entry(g).or_default();
            let step_name = s.record.and_then(|i| ev.step_name(i)).unwrap_or("");
            match kinds[s.name as usize] {
                HostKind::Marker => details.markers.push((false, s.begin, s.end)),
                _ if !step_name.is_empty() => details.markers.push((false, s.begin, s.end)),
                HostKind::Event(t) => {
                    let t = if t == et::HOST_COMPUTE && root_stage { et::HOST_WAIT_INPUT } else { t };
                    details.spans.push((t, s.begin, s.end));
                }
                HostKind::Ignored => {}
            }
            // A step's name: the last on the first line that names it.
            if !step_name.is_empty() && (details.name.is_empty() || details.name_line == l) {
                details.name = step_name.to_owned();
                details.name_line = l;
            }
            if s.record.is_some() {
                *remaining.get_mut(&g).expect("counted") -= 1;
                if s.nested {
                    *open.entry(g).or_default() += 1;
                }
                resolve(g, &mut pending, &remaining, &open);
            }
        })?;
        while let Some(top) = ops.pop() {
            finish(top, &mut dataset, &mut enqueue);
            if let Some(parent) = ops.last_mut() {
                parent.3 += top.1 - top.0;
            }
        }
    }
    // (Every step is resolved by now; any left over would be here.)
    let left: Vec<(i64, Details)> = pending.drain().collect();
    for (g, details) in left {
        if let Some(step) = details.step_info(ev, g, false) {
            done.push((g, step));
        }
    }
    done.sort_by_key(|(g, _)| *g);
    Ok((done.into_iter().map(|(_, step)| step).collect(), dataset, enqueue))
}

/// Per name, for XProf's input-op analysis: not an op (0), dataset (1),
/// enqueue (2), other op (3).
fn input_op_kind(name: &str) -> u8 {
    match parse_op(name) {
        None => 0,
        Some(op) if op.op_type == DATASET_TYPE => 1,
        Some(op) if op.op_type == "MemcpyHToD" || op.op_type.starts_with("InfeedEnqueue") => 2,
        Some(_) => 3,
    }
}

/// Whether a GPU plane has its `Steps` line (or XProf derives it, see
/// [`derived_device_step_events`]).
pub(super) fn has_steps_line(plane: &Plane<'_>) -> bool {
    plane.lines.iter().any(|line| line.id == STEP_INFO_LINE)
}

/// XProf's `ConvertDeviceTraceXPlaneToStepEvents` for one GPU plane with
/// a `Steps` line: it gives the markers, the plane's other (not derived)
/// lines the events, and only the groups with both are kept. Kernels
/// (events with a `correlation_id`) are all kept records; a `Steps` line
/// is walked again.
///
/// Every event of the plane's own lines goes to `spans`, for
/// [`add_device_time`](super::breakdown::add_device_time).
pub(super) fn device_step_events(
    ev: &Events<'_>,
    plane: &Plane<'_>,
    p: usize,
    inherit: bool,
    release: Release<'_>,
    spans: &mut DeviceSpans,
) -> Result<BTreeMap<i64, Details>, DecodeError> {
    let transfers: Vec<bool> = ev.names.iter().map(|n| transfer(n).is_some()).collect();
    let types = ev.gpu_event_types();
    let mut markers: BTreeMap<i64, Details> = BTreeMap::new();
    let mut events: BTreeMap<i64, Details> = BTreeMap::new();
    let mut nesting = Vec::new();
    for (l, line) in lines_of(ev, plane, p) {
        let line_id = ev.lines[l].id;
        if line_id == STEP_INFO_LINE {
            let span = |s: &Seen| {
                s.record
                    .and_then(|i| ev.get(i, flag::DEVICE_SPAN, &ev.device_span))
                    .map_or((s.begin, s.end), |(o, d)| (i128::from(o), i128::from(o) + i128::from(d)))
            };
            // (Regions come after the line's events.)
            let mut regions = Vec::new();
            walk_line(ev, line, l, inherit, release, &mut nesting, |visit| {
                if let Visit::Event(s) = visit
                    && let Some(group) = s.group
                {
                    let (b, e) = span(&s);
                    if s.region {
                        regions.push((group, b, e));
                    } else {
                        markers.entry(group).or_default().markers.push((true, b, e));
                    }
                }
            })?;
            for (group, b, e) in regions {
                markers.entry(group).or_default().markers.push((true, b, e));
            }
        } else if is_derived_line(line_id) {
            continue;
        } else {
            walk_line(ev, line, l, inherit, release, &mut nesting, |visit| {
                if let Visit::Event(s) = visit {
                    spans.spans.push((s.begin, s.end, transfers[s.name as usize]));
                }
            })?;
            for i in ev.line_range(l) {
                if let (true, Some(group)) = (ev.has_correlation_id(i), ev.group(i).filter(|g| *g >= 0)) {
                    events.entry(group).or_default().events.push((ev.gpu_event_type(i, &types), i as u32));
                }
            }
        }
    }
    if events.is_empty() {
        return Ok(events);
    }
    events.retain(|group, _| markers.contains_key(group));
    for (group, details) in events.iter_mut() {
        if let Some(m) = markers.remove(group) {
            details.combine(m);
        }
    }
    Ok(events)
}

/// [`device_step_events`] for a GPU plane whose trace has no `Steps` line
/// (JAX, and TF traces written without derived lines): XProf derives it
/// before reading the steps (`GenerateDerivedTimeLines`, derived_timeline.cc):
/// - `ProcessUngroupedEvents`: the plane's events in time order (longer
///   first at one start), each without a group taking the last group seen;
/// - `DeriveStepEventsFromGroups`: consecutive events of one group make one
///   marker, from the first's start to the furthest end.
///
/// The step events are then the plane's events with a `correlation_id`,
/// with the groups the first rule gave them. `walked`: the plane's events
/// in time order ([`walk_derived_device`]).
pub(super) fn derived_device_step_events(ev: &Events<'_>, walked: DerivedWalk, spans: &mut DeviceSpans) -> BTreeMap<i64, Details> {
    let DerivedWalk { events, bases } = walked;
    let types = ev.gpu_event_types();
    let mut steps: BTreeMap<i64, Details> = BTreeMap::new();
    let mut group = None;
    // (group, begin, end) of the marker being extended
    let mut marker: Option<(i64, i128, i128)> = None;
    // The marker's kernels (a group's events kept in order, looked up once
    // a marker, not once an event).
    let mut kernels: Vec<(u8, u32)> = Vec::new();
    for e in &events {
        let (begin, end) = e.span(&bases);
        let source = (e.source != DeviceSpan::NONE).then_some(e.source);
        group = ev.group_of(source).filter(|g| *g >= 0).or(group);
        let Some(g) = group else { continue };
        match &mut marker {
            Some((mg, _, e)) if *mg == g => *e = (*e).max(end),
            _ => {
                if let Some((mg, b, e)) = marker.replace((g, begin, end)) {
                    let details = steps.entry(mg).or_default();
                    details.markers.push((true, b, e));
                    details.events.append(&mut kernels);
                }
            }
        }
        if e.kernel != DeviceSpan::NONE {
            kernels.push((ev.gpu_event_type(e.kernel as usize, &types), e.kernel));
        }
    }
    if let Some((mg, b, e)) = marker {
        let details = steps.entry(mg).or_default();
        details.markers.push((true, b, e));
        details.events.append(&mut kernels);
    }
    // (Only the groups with both, as with a stored line.)
    steps.retain(|_, details| !details.events.is_empty() && !details.markers.is_empty());
    // The events, in order of their starts, for the steps' device time.
    spans.planes.push((events, bases));
    steps
}

/// A GPU plane without a `Steps` line, walked: its events in time order
/// (longer first at one start), with its lines' starts.
pub(super) struct DerivedWalk {
    events: Vec<DeviceSpan>,
    bases: Vec<i128>,
}

/// The walk of [`derived_device_step_events`]: it reads no group (each
/// event names the record whose group it takes), so that it runs while
/// grouping does. (Walking and sorting the 1.8 M device events of the
/// 272 MB jax_lstm x91 trace takes as long as grouping it, bench/README.md.)
/// The events are sorted on all cores if `all_cores` (with a copy of them
/// as scratch), else on one (with half of one).
pub(super) fn walk_derived_device(
    ev: &Events<'_>,
    plane: &Plane<'_>,
    p: usize,
    inherit: bool,
    all_cores: bool,
    release: Release<'_>,
) -> Result<DerivedWalk, DecodeError> {
    let transfers: Vec<bool> = ev.names.iter().map(|n| transfer(n).is_some()).collect();
    // (Room for them all at once: grown, a vector of millions is copied
    // and both copies held.)
    let count: usize = lines_of(ev, plane, p)
        .filter(|(l, _)| !is_derived_line(ev.lines[*l].id))
        .map(|(l, line)| line.event_count + ev.line_range(l).end - ev.lines[l].regions)
        .sum();
    let mut events: Vec<DeviceSpan> = Vec::with_capacity(count);
    let mut bases: Vec<i128> = Vec::new();
    let mut nesting = Vec::new();
    for (l, line) in lines_of(ev, plane, p) {
        if is_derived_line(ev.lines[l].id) {
            continue;
        }
        let (at, base) = (bases.len() as u32, ev.lines[l].base);
        bases.push(base);
        walk_line_grouped_by(
            ev,
            line,
            l,
            inherit,
            release,
            &mut nesting,
            |i| Some(i as u32),
            |visit| {
                if let Visit::Event(s) = visit {
                    let kernel = s.record.filter(|&i| ev.has_correlation_id(i)).map_or(DeviceSpan::NONE, |i| i as u32);
                    let region = s.record.is_some_and(|i| ev.has(i, flag::REGION));
                    // (Exact: a begin is its line's start plus an i64 offset, an
                    // end that plus a clamped i64 duration, a region's end its
                    // line's start plus an i64.)
                    let (offset, dur) = ((s.begin - base) as i64, if region { (s.end - base) as i64 } else { (s.end - s.begin) as i64 });
                    let flags = if region { DeviceSpan::REGION } else { 0 } | if transfers[s.name as usize] { DeviceSpan::TRANSFER } else { 0 };
                    events.push(DeviceSpan { offset, dur, line: at, kernel, source: s.group.unwrap_or(DeviceSpan::NONE), flags });
                }
            },
        )?;
    }
    let key = |e: &DeviceSpan| {
        let (begin, end) = e.span(&bases);
        (begin, std::cmp::Reverse(end - begin))
    };
    if all_cores {
        events.par_sort_by_key(key);
    } else {
        events.sort_by_key(key);
    }
    Ok(DerivedWalk { events, bases })
}

/// A device event of a plane without a `Steps` line, as
/// [`derived_device_step_events`] reads it: its span from its line's start,
/// the record whose group it has, its record if it is a kernel. 32 bytes:
/// a trace may hold millions (the 1.09 GB jax_lstm x364, 7.3 M: kept as (begin, end, group,
/// record) and again as (begin, end, memcpy) they were 0.9 GB of `steps`'
/// 1.67 GB peak, bench/README.md).
#[derive(Clone, Copy)]
pub(super) struct DeviceSpan {
    offset: i64,
    /// Its duration; a region's end from its line's start.
    dur: i64,
    /// Its line's start, by index into the plane's line starts.
    line: u32,
    /// Its record, if it has a `correlation_id` ([`DeviceSpan::NONE`]: not).
    kernel: u32,
    /// The record whose group is its own ([`DeviceSpan::NONE`]: none).
    source: u32,
    pub(super) flags: u8,
}

impl DeviceSpan {
    const NONE: u32 = u32::MAX;
    const REGION: u8 = 1;
    pub(super) const TRANSFER: u8 = 2;

    pub(super) fn span(&self, bases: &[i128]) -> (i128, i128) {
        let base = bases[self.line as usize];
        let begin = base + i128::from(self.offset);
        (begin, if self.flags & Self::REGION != 0 { base + i128::from(self.dur) } else { begin + i128::from(self.dur) })
    }
}

/// An infeed-enqueue TF op (`…:InfeedEnqueue…`).
fn infeed(name: &str) -> bool {
    parse_op(name).is_some_and(|op| op.op_type.starts_with("InfeedEnqueue"))
}

fn is_explicit_marker(name: &str) -> bool {
    (name.starts_with("train") || name.starts_with("test") || name.starts_with("TraceContext")) && !name.contains('/')
}

fn is_real_cpu_compute(name: &str) -> bool {
    !(name.starts_with("EagerExecute")
        || name.starts_with("EagerLocalExecute")
        || name.starts_with("EagerKernelExecute")
        || name.starts_with("FunctionRun")
        || is_explicit_marker(name))
}

/// The event type of a GPU event: XProf's class of it ([`classify_gpu_event`]).
pub(super) fn gpu_event_type(name: &str, shapes: &str) -> u8 {
    match classify_gpu_event(name, shapes) {
        GpuEventClass::HostToDevice => et::HOST_TO_DEVICE,
        GpuEventClass::DeviceToHost => et::DEVICE_TO_HOST,
        GpuEventClass::DeviceToDevice => et::DEVICE_TO_DEVICE,
        GpuEventClass::Collectives => et::DEVICE_COLLECTIVES,
        GpuEventClass::Compute16 => et::DEVICE_COMPUTE_16,
        GpuEventClass::Compute32 => et::DEVICE_COMPUTE_32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regions are counted where their stop is, not after their line's
    /// events (see `walk_host`): that they are no input op and no marker
    /// is what makes it the same.
    #[test]
    fn regions_are_host_compute_and_no_op() {
        let region = "ThreadpoolListener::Region";
        assert_eq!(input_op_kind(region), 0);
        assert!(matches!(host_kind(region), HostKind::Event(et::HOST_COMPUTE)));
    }
}
