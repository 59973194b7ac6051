//! The first walk over the trace ([`collect`]): every event decoded with
//! the stats grouping reads, kept as a record of [`Events`] only if
//! grouping needs it or such an event nests in it ([`Nesting`]), with the
//! nesting links between the records.

use std::borrow::Cow;

use prost::DecodeError;
use rustc_hash::FxHashMap as HashMap;

use super::events::{Events, LineInfo, Marks, Node, REGION_NAME, Sparse, add_child, flag};
use crate::inputs::xplane::ids::IdMap;
use crate::inputs::xplane::planes::PlaneKind;
use crate::inputs::xplane::stats::{StatKind, StatKinds};
use crate::inputs::xplane::{Plane, Release, Shapes, StatIds, StatValue};

/// The stats of one event, as [`collect`] reads them (a stat given twice
/// keeps its last value, as XProf's lookups do).
#[derive(Default)]
struct EventStats<'a> {
    pt: Option<i64>,
    pi: Option<i64>,
    ct: Option<i64>,
    ci: Option<i64>,
    pid: Option<i64>,
    root_level: i64,
    is_async: bool,
    step_id: Option<i64>,
    iter_num: Option<i64>,
    step_num: Option<i64>,
    graph_type: Option<&'a str>,
    correlation_id: Option<i64>,
    group: Option<i64>,
    step_name: Option<&'a str>,
    ipl_stage: bool,
    shapes: Option<&'a str>,
    offset: Option<i64>,
    duration: Option<i64>,
}

impl<'a> EventStats<'a> {
    /// A stat's value, if it is one of these (a stat given twice keeps
    /// its last value); whether it is. (Inlined: called, it made x91's
    /// `steps` 0.61 -> 0.67 s, median of 11 runs.)
    #[inline(always)]
    fn read(&mut self, kind: StatKind, value: StatValue<'a>, plane: &Plane<'a>) -> bool {
        let int = value.as_i64();
        match kind {
            StatKind::ProducerType => self.pt = int,
            StatKind::ProducerId => self.pi = value.as_id(),
            StatKind::ConsumerType => self.ct = int,
            StatKind::ConsumerId => self.ci = value.as_id(),
            StatKind::ContextPid => self.pid = int.or(self.pid),
            StatKind::IsRoot => self.root_level = int.unwrap_or(0),
            StatKind::IsAsync => self.is_async = int.unwrap_or(0) != 0,
            StatKind::StepId => self.step_id = int,
            StatKind::IterNum => self.iter_num = int,
            StatKind::StepNum => self.step_num = int,
            StatKind::GraphType => self.graph_type = value.as_str(plane),
            StatKind::CorrelationId => self.correlation_id = value.as_id(),
            StatKind::GroupId => self.group = int,
            StatKind::StepName => self.step_name = value.as_str(plane),
            StatKind::InputPipelineStageName => self.ipl_stage = value.as_str(plane).is_some_and(|s| !s.is_empty()),
            StatKind::TensorShapes => self.shapes = Some(value.as_str(plane).unwrap_or("")),
            StatKind::DeviceOffsetPs => self.offset = value.as_id(),
            StatKind::DeviceDurationPs => self.duration = value.as_id(),
            _ => return false,
        }
        true
    }

    /// Whether the event has no stat [`collect`] reads but its
    /// `correlation_id` (a kernel or a copy, most of a GPU trace).
    fn is_plain(&self) -> bool {
        let EventStats {
            pt,
            pi,
            ct,
            ci,
            pid,
            root_level,
            is_async,
            step_id,
            iter_num,
            step_num,
            graph_type,
            correlation_id: _,
            group,
            step_name,
            ipl_stage,
            shapes,
            offset,
            duration,
        } = self;
        [pt, pi, ct, ci, pid, step_id, iter_num, step_num, group, offset, duration].iter().all(|v| v.is_none())
            && [graph_type, step_name, shapes].iter().all(|v| v.is_none())
            && *root_level == 0
            && !is_async
            && !ipl_stage
    }
}

/// An event's [`EventStats`] as the decoding threads hand them to
/// [`collect`]'s walk: 16 bytes for a plain event instead of 256 (the
/// millions of kernels of a JAX GPU trace went through the walk's batches
/// whole, bench/README.md).
enum Handed<'a> {
    Plain,
    Correlated(i64),
    All(Box<EventStats<'a>>),
}

impl<'a> Handed<'a> {
    fn of(s: EventStats<'a>) -> Handed<'a> {
        match s.correlation_id {
            _ if !s.is_plain() => Handed::All(Box::new(s)),
            Some(c) => Handed::Correlated(c),
            None => Handed::Plain,
        }
    }

    fn stats(self) -> EventStats<'a> {
        match self {
            Handed::Plain => EventStats::default(),
            Handed::Correlated(c) => EventStats { correlation_id: Some(c), ..EventStats::default() },
            Handed::All(s) => *s,
        }
    }
}

/// What an event's name means to [`collect`] (worked out once a name).
pub(super) mod name_code {
    pub const OTHER: u8 = 0;
    pub const START_REGION: u8 = 1;
    pub const STOP_REGION: u8 = 2;
    /// `TraceContext`: a root by name.
    pub const TRACE_CONTEXT: u8 = 3;
}

fn name_code(name: &str) -> u8 {
    match name {
        "ThreadpoolListener::StartRegion" => name_code::START_REGION,
        "ThreadpoolListener::StopRegion" => name_code::STOP_REGION,
        "TraceContext" => name_code::TRACE_CONTEXT,
        _ => name_code::OTHER,
    }
}

/// An event on a line's nesting stack while [`collect`] walks it: its
/// record, its number among the file's events (`usize::MAX` for a
/// region), its span.
#[derive(Clone, Copy)]
struct Open {
    record: usize,
    ordinal: usize,
    begin: i128,
    end: i128,
}

/// A line's nesting while [`collect`] walks it. Events with nothing
/// grouping reads (no stats it reads, no root by name) get their group
/// from the event they nest in and pass it only to the events nested in
/// them: such an event is kept as a record only if a kept event nests in
/// it, and the second walk ([`walk_line`](super::walk::walk_line)) gives the others their
/// group. Undecided events are the top of the stack and the last records.
struct Nesting {
    stack: Vec<Open>,
    /// `stack[..decided]` are kept.
    decided: usize,
}

impl Nesting {
    /// Pops what does not contain `[begin, end]` (XProf's nesting test),
    /// dropping the records of popped events no kept event nests in.
    fn pop_to(&mut self, ev: &mut Events<'_>, begin: i128, end: i128) {
        while let Some(top) = self.stack.last() {
            if top.begin <= begin && end <= top.end {
                break;
            }
            let top = self.stack.pop().expect("not empty");
            if self.stack.len() >= self.decided {
                debug_assert_eq!(top.record + 1, ev.nodes.len());
                ev.pop_record();
                ev.unkeep(top.ordinal);
            } else {
                self.decided = self.stack.len();
            }
        }
    }

    /// A kept event arrives: every open event becomes a kept record, linked
    /// to the event it nests in (the one below it on the stack).
    fn keep_open(&mut self, nest: &mut Vec<(u32, u32)>) {
        for k in self.decided.max(1)..self.stack.len() {
            add_child(nest, self.stack[k - 1].record, self.stack[k].record);
        }
        self.decided = self.stack.len();
    }

    /// The line ends: events still undecided are dropped.
    fn close(&mut self, ev: &mut Events<'_>) {
        while self.stack.len() > self.decided {
            let top = self.stack.pop().expect("not empty");
            debug_assert_eq!(top.record + 1, ev.nodes.len());
            ev.pop_record();
            ev.unkeep(top.ordinal);
        }
        self.stack.clear();
        self.decided = 0;
    }
}

/// The events grouping needs, with their stats, in plane/line/event order
/// (see [`Nesting`] for the events left out), and the nesting links
/// between them.
pub(super) fn collect<'a>(planes: &[Plane<'a>], stats: &[StatKinds], release: Release<'_>) -> Result<Events<'a>, DecodeError> {
    // Room for every event and every threadpool region (one at most per
    // event) up front: growing a vector of tens of millions of events
    // would copy it and hold both copies at once. Only the part used is
    // ever touched (resident).
    let total: usize = planes.iter().flat_map(|p| &p.lines).map(|l| l.event_count).sum();
    let mut ev = Events {
        nodes: Vec::with_capacity(2 * total),
        lines: Vec::new(),
        names: vec!["", "ThreadpoolListener::Region"],
        name_codes: vec![name_code::OTHER, name_code::OTHER],
        name_index: Vec::new(),
        keep: vec![0; total.div_ceil(64)],
        nest: Vec::with_capacity(2 * total),
        host: Vec::new(),
        contexts: Vec::with_capacity(2 * total),
        context_classes: Vec::new(),
        class_numbers: HashMap::default(),
        step_id: Sparse::new(),
        iter_num: Sparse::new(),
        step_num: Sparse::new(),
        graph_type: Sparse::new(),
        correlation_id: Sparse::new(),
        shapes: Sparse::new(),
        device_span: Sparse::new(),
        marks: Marks::with_capacity(2 * total),
    };
    let mut ordinal = 0;
    let mut nesting = Nesting { stack: Vec::new(), decided: 0 };
    // (start offset, stop offset)
    let mut regions: Vec<(i64, i64)> = Vec::new();
    for ((p, plane), kinds) in planes.iter().enumerate().zip(stats) {
        let plane_pid = kinds.find(plane.stats.iter().copied(), StatKind::ProcessId).and_then(StatValue::as_i64);
        ev.host.push(PlaneKind::of(plane.name) == PlaneKind::Host);
        let mut names = Vec::with_capacity(plane.event_metadata.len());
        for (id, meta) in &plane.event_metadata {
            names.push((*id, ev.names.len() as u32));
            ev.names.push(meta.name);
            ev.name_codes.push(name_code(meta.name));
        }
        let name_index = IdMap::new(names);
        let wanted = StatIds::of(|id| kinds.get(id).is_some_and(|kind| EventStats::default().read(kind, StatValue::None, plane)));
        for line in &plane.lines {
            let l = ev.lines.len();
            let base = i128::from(line.timestamp_ns) * 1000;
            ev.lines.push(LineInfo { plane: p, id: line.id, base, first: ev.nodes.len(), first_event: ordinal, regions: 0 });
            // XProf's `ThreadpoolLineMutator` (preprocess_xplane.h): on a
            // line with `ThreadpoolListener::StartRegion`/`StopRegion`
            // markers, a `ThreadpoolListener::Region` event from the last
            // start (that has a consumer id) to each stop. The regions go
            // after the line's events, as XProf appends them. The mutator
            // gives them the start's context, but XProf 2.24 links them to
            // no producer: its trace viewer shows them without a group, and
            // its step breakdown leaves them out (the bench trace repeated
            // twice has a region across the copies, which XProf does not
            // count: `tools/xplane/compare_steps.py`). So they consume
            // nothing here, and have a group only if they nest in an event
            // that has one.
            let mut start: Option<i64> = None;
            regions.clear();
            let decode = |shapes: &mut Shapes, _, wire| {
                let mut s = EventStats::default();
                // (Read with the event: each stat once, see `decode_with_stats`.)
                let event = shapes.decode(wire, |stat| {
                    if let Some(kind) = kinds.get(stat.metadata_id) {
                        s.read(kind, stat.value, plane);
                    }
                })?;
                let name = name_index.get(event.metadata_id).unwrap_or(0);
                Ok((event.offset_ps, event.duration_ps, name, Handed::of(s)))
            };
            line.walk_with(
                release,
                || Shapes::new(wanted),
                decode,
                |(offset_ps, duration_ps, name, handed)| -> Result<(), DecodeError> {
                    let mut s = handed.stats();
                    // XProf's root mutators (preprocess_xplane.cc) make these roots.
                    match ev.names[name as usize] {
                        "ProcessBatch" => s.root_level = 2,
                        "BatchingSessionRun" => s.root_level = 1,
                        _ => {}
                    }
                    let code = ev.name_codes[name as usize];
                    match code {
                        name_code::START_REGION if s.ct.zip(s.ci).is_some() => {
                            start = Some(offset_ps);
                        }
                        name_code::STOP_REGION => {
                            if let Some(b) = start {
                                regions.push((b, offset_ps));
                            }
                        }
                        _ => {}
                    }
                    let (offset, dur) = (offset_ps, duration_ps.max(0));
                    let begin = base + i128::from(offset);
                    let end = begin + i128::from(dur);
                    if !s.is_async {
                        nesting.pop_to(&mut ev, begin, end);
                    }
                    // (Taken after popping, which may drop records.)
                    let i = ev.nodes.len();
                    let mut node = Node { offset, dur, name, flags: 0, more: 0 };
                    let mut put = |f: u16, has: bool| {
                        if has {
                            node.flags |= f;
                        }
                    };
                    put(flag::ASYNC, s.is_async);
                    put(flag::IPL_STAGE, s.ipl_stage);
                    ev.marks.push(s.group);
                    macro_rules! column {
                        ($f:expr, $column:ident, $value:expr) => {
                            if let Some(v) = $value {
                                ev.$column.push(i, v);
                                node.flags |= $f;
                            }
                        };
                    }
                    if let Some((kind, id)) = s.pt.zip(s.pi) {
                        ev.add_context(i, (kind, s.pid.or(plane_pid)), id, false);
                        node.flags |= flag::PRODUCER;
                    }
                    if let Some((kind, id)) = s.ct.zip(s.ci) {
                        ev.add_context(i, (kind, s.pid.or(plane_pid)), id, true);
                        node.flags |= flag::CONSUMER;
                    }
                    column!(flag::STEP_ID, step_id, s.step_id);
                    column!(flag::ITER_NUM, iter_num, s.iter_num);
                    column!(flag::STEP_NUM, step_num, s.step_num);
                    column!(flag::GRAPH_TYPE, graph_type, s.graph_type);
                    column!(flag::CORRELATION_ID, correlation_id, s.correlation_id);
                    column!(flag::SHAPES, shapes, s.shapes.filter(|s| !s.is_empty()));
                    column!(flag::DEVICE_SPAN, device_span, s.offset.zip(s.duration));
                    if s.root_level != 0 {
                        ev.marks.set_root_level(i, s.root_level);
                    }
                    if let Some(step_name) = s.step_name {
                        ev.marks.set_step_name(i, Cow::Borrowed(step_name));
                    }
                    // Nothing grouping reads (see `Nesting`).
                    let plain = node.flags == 0 && ev.marks.set[i] == 0 && code != name_code::TRACE_CONTEXT;
                    if !plain {
                        nesting.keep_open(&mut ev.nest);
                    }
                    if !s.is_async {
                        if let Some(top) = nesting.stack.last().filter(|_| !plain) {
                            add_child(&mut ev.nest, top.record, i);
                        }
                        nesting.stack.push(Open { record: i, ordinal, begin, end });
                        if !plain {
                            nesting.decided = nesting.stack.len();
                        }
                    }
                    ev.nodes.push(node);
                    ev.keep[ordinal / 64] |= 1 << (ordinal % 64);
                    ordinal += 1;
                    Ok(())
                },
            )?;
            // The regions nest like the line's events, after them.
            if let Some(&(b, e)) = regions.first() {
                nesting.pop_to(&mut ev, base + i128::from(b), base + i128::from(e));
            } else {
                nesting.close(&mut ev);
            }
            ev.lines[l].regions = ev.nodes.len();
            for &(b, e) in &regions {
                let i = ev.nodes.len();
                let (begin, end) = (base + i128::from(b), base + i128::from(e));
                nesting.pop_to(&mut ev, begin, end);
                nesting.keep_open(&mut ev.nest);
                if let Some(top) = nesting.stack.last() {
                    add_child(&mut ev.nest, top.record, i);
                }
                nesting.stack.push(Open { record: i, ordinal: usize::MAX, begin, end });
                nesting.decided = nesting.stack.len();
                ev.nodes.push(Node { offset: b, dur: e, name: REGION_NAME, flags: flag::REGION, more: 0 });
                ev.marks.push(None);
            }
            nesting.close(&mut ev);
        }
        ev.name_index.push(name_index);
    }
    Ok(ev)
}
