//! XProf's step breakdown of an XPlane trace (`input_pipeline_analyzer`),
//! re-derived from its rules (docs/book/src/commands/steps.md):
//!
//! 1. **Groups** (`PreprocessXPlane`, preprocess_xplane.cc, then
//!    `GroupTfEvents`, xla/tsl/profiler/utils/group_events.cc).
//!    A trace TensorFlow already grouped (a `group_id` stat anywhere) keeps
//!    its groups. Otherwise events are linked into a forest: nesting on a
//!    line, producer/consumer context stats (`_pt`/`_p` → `_ct`/`_c`),
//!    executor → `IteratorGetNextOp` by (`id`, `iter_num`), kernel launch →
//!    kernel by `correlation_id`. Roots are events with an `_r` stat (higher
//!    levels first, then by time), or, when TF loops ran (executor events
//!    with `iter_num` other than 0), each loop iteration; a root's group
//!    spreads to every event reachable from it not grouped yet. A trace
//!    with TF loop ops (`WhileOp-EvalCond`, …) is not grouped at all.
//! 2. **Step events** (`ConvertHostThreadsXLineToStepEvents`,
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
//! 3. **Breakdown** (`ToNonOverlappedEvents`, event_span.cc;
//!    `ConvertStepDetailsToStepInfo`, step_events_to_steps_db.cc). A step's
//!    time is its longest marker (a device marker unless a host marker
//!    contains it); where events overlap, the highest-priority type owns the
//!    time; the time of the step no event covers is "other". A step without
//!    device compute (with devices) or host compute (without) is dropped.
//! 4. **Hosts** (`StepIntersection`, xprof/utils/step_intersection.cc;
//!    `CombineAllOpStats`): the steps all hosts have, aligned in time with
//!    the host whose steps span least; the rows are the first host's.
//!
//! A trace is walked twice, without allocating per event. The first walk
//! (`collect`) keeps as records only the events grouping reads and the
//! events they nest in; the others (most op events) can only take the group
//! of the event they nest in. The second walk (`walk_line`) gives them
//! that group and resolves each step once none of its events can follow.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};

use prost::DecodeError;
use rayon::iter::{IntoParallelRefIterator, ParallelIterator};
use rayon::slice::ParallelSliceMut;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::inputs::xplane::decode::{Event, Line, Plane, Release, Shapes, Space, StatIds, StatValue};
use crate::inputs::xplane::ids::IdMap;
use crate::inputs::xplane::names::{DATASET_TYPE, GpuEventClass, classify_gpu_event, is_memcpy, parse_op, transfer};
use crate::inputs::xplane::planes::{PlaneKind, STEP_INFO_LINE, is_derived_line};
use crate::inputs::xplane::stats::{StatKind, StatKinds};
use crate::intervals::measure_up_to;

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
use event_type as et;

/// More steps than this, and XProf drops a host's first and last
/// (`ConvertStepEventsToStepDb` with `maybe_drop_incomplete_steps`).
const DROP_INCOMPLETE_STEPS_ABOVE: usize = 5;

/// Root events XProf names without the event's name and gives no step name.
const IMPLICIT_ROOTS: [&str; 4] = ["FunctionRun", "SessionRun", "RunGraph", "ExecutorState::Process"];
const LOOP_OPS: [&str; 5] = ["WhileOp-EvalCond", "WhileOp-StartBody", "ForOp", "ParallelForOp", "ForeverOp"];
const TF_DATA_FUNCTIONS: [&str; 4] = [
    "InstantiatedCapturedFunction::Run",
    "InstantiatedCapturedFunction::RunWithBorrowedArgs",
    "InstantiatedCapturedFunction::RunInstantiated",
    "InstantiatedCapturedFunction::RunAsync",
];

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

/// One event, compactly: its time relative to its line's start, its name as
/// an index into [`Events::names`], and which of the rarer stats it has
/// (those live in [`Sparse`] columns). A trace may hold tens of millions.
#[derive(Debug, Clone, Copy)]
struct Node {
    offset: i64,
    /// The duration (clamped at 0); for a threadpool region, the offset of
    /// its end (regions may end before they begin, as in XProf).
    dur: i64,
    /// (Its line is found from [`LineInfo::first`]: a record is 24 bytes,
    /// and its [`Marks`] 9.)
    name: u32,
    flags: u16,
    /// Worked out before grouping (see [`more`]).
    more: u8,
}

/// What a [`Node`] has, worked out from the stat columns before grouping
/// consumes them.
mod more {
    /// A host event that consumes a context a host event produces (it is
    /// below an input-pipeline stage in XProf's host step rules).
    pub const CONSUMES_HOST_PRODUCER: u8 = 1;
}

/// The top bit of a record number in [`Events::contexts`]: a consumer.
const CONSUMER: u32 = 1 << 31;

/// What a [`Node`] has.
mod flag {
    // (1: free.)
    pub const ASYNC: u16 = 1 << 1;
    pub const IPL_STAGE: u16 = 1 << 2;
    pub const REGION: u16 = 1 << 3;
    pub const PRODUCER: u16 = 1 << 4;
    pub const CONSUMER: u16 = 1 << 5;
    // (1 << 6: free.)
    pub const STEP_ID: u16 = 1 << 7;
    pub const ITER_NUM: u16 = 1 << 8;
    pub const STEP_NUM: u16 = 1 << 9;
    pub const GRAPH_TYPE: u16 = 1 << 10;
    pub const CORRELATION_ID: u16 = 1 << 11;
    pub const SHAPES: u16 = 1 << 12;
    pub const DEVICE_SPAN: u16 = 1 << 13;
}

/// What grouping sets, kept apart from the records it reads, so that the
/// device events can be walked while it runs (see [`analyze_releasing`]):
/// each record's group (from the trace's `group_id`, or grouping), and the
/// roots' levels and step names.
#[derive(Debug, Default)]
struct Marks<'a> {
    /// Per record: its group, valid with [`Marks::GROUP`] in `set`.
    groups: Vec<i64>,
    set: Vec<u8>,
    /// Non-zero root levels (`_r`, and XProf's root mutators).
    root_level: HashMap<u32, i64>,
    step_name: HashMap<u32, Cow<'a, str>>,
}

impl<'a> Marks<'a> {
    const GROUP: u8 = 1;
    /// A non-zero root level (in `root_level`).
    const ROOT: u8 = 1 << 1;
    /// A step name (in `step_name`).
    const STEP_NAME: u8 = 1 << 2;

    fn with_capacity(records: usize) -> Marks<'a> {
        Marks { groups: Vec::with_capacity(records), set: Vec::with_capacity(records), ..Marks::default() }
    }

    /// A record's marks, as [`collect`] reads them.
    fn push(&mut self, group: Option<i64>) {
        self.groups.push(group.unwrap_or(0));
        self.set.push(if group.is_some() { Marks::GROUP } else { 0 });
    }

    /// The last record's marks, as [`Nesting`] drops it (such a record has
    /// no group, root level or step name).
    fn pop(&mut self) {
        self.groups.pop();
        self.set.pop();
    }

    fn has(&self, i: usize, mark: u8) -> bool {
        self.set[i] & mark != 0
    }

    fn group(&self, i: usize) -> Option<i64> {
        self.has(i, Marks::GROUP).then(|| self.groups[i])
    }

    fn set_group(&mut self, i: usize, group: i64) {
        self.groups[i] = group;
        self.set[i] |= Marks::GROUP;
    }

    fn root_level(&self, i: usize) -> i64 {
        if !self.has(i, Marks::ROOT) {
            return 0;
        }
        self.root_level.get(&(i as u32)).copied().unwrap_or(0)
    }

    fn set_root_level(&mut self, i: usize, level: i64) {
        self.root_level.insert(i as u32, level);
        self.set[i] |= Marks::ROOT;
    }

    fn step_name(&self, i: usize) -> Option<&str> {
        if !self.has(i, Marks::STEP_NAME) {
            return None;
        }
        self.step_name.get(&(i as u32)).map(|s| s.as_ref())
    }

    fn set_step_name(&mut self, i: usize, name: Cow<'a, str>) {
        self.step_name.insert(i as u32, name);
        self.set[i] |= Marks::STEP_NAME;
    }
}

/// A stat few events have, by event index (pushed in index order).
/// Held in chunks of [`Sparse::CHUNK`] entries: a column of tens of
/// millions grows without copying (a grown vector's old copy would stay
/// resident, as freed memory is kept: see `keep_freed_memory`).
#[derive(Debug)]
struct Sparse<T> {
    index: Vec<Vec<u32>>,
    values: Vec<Vec<T>>,
}

impl<T: Copy> Sparse<T> {
    const CHUNK: usize = 1 << 16;

    fn new() -> Sparse<T> {
        Sparse { index: Vec::new(), values: Vec::new() }
    }

    fn push(&mut self, event: usize, value: T) {
        match self.index.last() {
            // (The first chunk grows as a vector does: most columns are short.)
            None => {
                self.index.push(Vec::new());
                self.values.push(Vec::new());
            }
            Some(last) if last.len() == Self::CHUNK => {
                self.index.push(Vec::with_capacity(Self::CHUNK));
                self.values.push(Vec::with_capacity(Self::CHUNK));
            }
            Some(_) => {}
        }
        self.index.last_mut().expect("a chunk").push(event as u32);
        self.values.last_mut().expect("a chunk").push(value);
    }

    fn get(&self, event: usize) -> Option<T> {
        let event = event as u32;
        let chunk = self.index.partition_point(|c| c[0] <= event).checked_sub(1)?;
        self.index[chunk].binary_search(&event).ok().map(|k| self.values[chunk][k])
    }

    fn iter(&self) -> impl Iterator<Item = (usize, T)> + '_ {
        self.index.iter().zip(&self.values).flat_map(|(index, values)| index.iter().zip(values)).map(|(&i, &v)| (i as usize, v))
    }

    /// The events with a value in both columns, in event order (one walk
    /// over both, no lookups).
    fn join<'s, U: Copy>(&'s self, other: &'s Sparse<U>) -> impl Iterator<Item = (usize, T, U)> + 's {
        let mut others = other.iter().peekable();
        self.iter().filter_map(move |(i, v)| {
            while others.next_if(|&(j, _)| j < i).is_some() {}
            others.peek().filter(|&&(j, _)| j == i).map(|&(_, u)| (i, v, u))
        })
    }
}

/// One line of the trace.
#[derive(Debug)]
struct LineInfo {
    plane: usize,
    id: i64,
    /// The line's start in picoseconds.
    base: i128,
    /// Its first record in [`Events::nodes`] (a line's records are contiguous).
    first: usize,
    /// The number of its first event among the file's events.
    first_event: usize,
    /// Its first threadpool region's record (regions follow its events).
    regions: usize,
}

/// The events [`collect`] keeps (see [`Nesting`]), in plane/line/event
/// order, with the stats grouping and the step rules read.
struct Events<'a> {
    nodes: Vec<Node>,
    lines: Vec<LineInfo>,
    names: Vec<&'a str>,
    name_codes: Vec<u8>,
    /// Per plane: event metadata id → index in `names`.
    name_index: Vec<IdMap<u32>>,
    /// One bit per event of the file, in plane/line/event order: kept as
    /// a record (see [`Nesting`]).
    keep: Vec<u64>,
    /// The nesting links (parent, child) between records, found in
    /// [`collect`] (async events are left out).
    nest: Vec<(u32, u32)>,
    /// Per plane: is it the host's ([`PlaneKind::Host`]).
    host: Vec<bool>,
    /// The context stats (`_pt`/`_p`, `_ct`/`_c`), by record: (context type
    /// and pid as a number in `context_classes`, record with
    /// [`CONSUMER`] set for a consumer, id). 16 bytes: there may be tens
    /// of millions; grouping sorts them in place.
    contexts: Vec<(u32, u32, i64)>,
    /// (context type, pid) of each number in `contexts`.
    context_classes: Vec<(i64, Option<i64>)>,
    class_numbers: HashMap<(i64, Option<i64>), u32>,
    step_id: Sparse<i64>,
    iter_num: Sparse<i64>,
    step_num: Sparse<i64>,
    graph_type: Sparse<&'a str>,
    correlation_id: Sparse<i64>,
    shapes: Sparse<&'a str>,
    /// `device_offset_ps`, `device_duration_ps`.
    device_span: Sparse<(i64, i64)>,
    marks: Marks<'a>,
}

impl<'a> Events<'a> {
    fn len(&self) -> usize {
        self.nodes.len()
    }

    fn add_context(&mut self, i: usize, class: (i64, Option<i64>), id: i64, consumer: bool) {
        let next = self.context_classes.len() as u32;
        let number = *self.class_numbers.entry(class).or_insert(next);
        if number == next {
            self.context_classes.push(class);
        }
        // (Records are numbered below 2^31: a trace has fewer events.)
        self.contexts.push((number, i as u32 | if consumer { CONSUMER } else { 0 }, id));
    }

    fn kept(&self, ordinal: usize) -> bool {
        self.keep[ordinal / 64] & (1 << (ordinal % 64)) != 0
    }

    fn unkeep(&mut self, ordinal: usize) {
        self.keep[ordinal / 64] &= !(1 << (ordinal % 64));
    }

    fn name(&self, i: usize) -> &'a str {
        self.names[self.nodes[i].name as usize]
    }

    fn line(&self, i: usize) -> &LineInfo {
        &self.lines[self.lines.partition_point(|l| l.first <= i) - 1]
    }

    /// The event's span, given its line's start (see [`LineInfo::base`]).
    fn span_from(&self, i: usize, base: i128) -> (i128, i128) {
        let n = &self.nodes[i];
        let begin = base + i128::from(n.offset);
        (begin, if n.flags & flag::REGION != 0 { base + i128::from(n.dur) } else { begin + i128::from(n.dur) })
    }

    fn begin(&self, i: usize) -> i128 {
        self.line(i).base + i128::from(self.nodes[i].offset)
    }

    fn end(&self, i: usize) -> i128 {
        let n = &self.nodes[i];
        if n.flags & flag::REGION != 0 { self.line(i).base + i128::from(n.dur) } else { self.begin(i) + i128::from(n.dur) }
    }

    fn has(&self, i: usize, f: u16) -> bool {
        self.nodes[i].flags & f != 0
    }

    fn get<T: Copy>(&self, i: usize, f: u16, column: &Sparse<T>) -> Option<T> {
        if self.has(i, f) { column.get(i) } else { None }
    }

    fn group(&self, i: usize) -> Option<i64> {
        self.marks.group(i)
    }

    /// The group of a record, if `record` names one.
    fn group_of(&self, record: Option<u32>) -> Option<i64> {
        record.and_then(|i| self.group(i as usize))
    }

    fn step_id(&self, i: usize) -> Option<i64> {
        self.get(i, flag::STEP_ID, &self.step_id)
    }

    fn iter_num(&self, i: usize) -> Option<i64> {
        self.get(i, flag::ITER_NUM, &self.iter_num)
    }

    fn step_num(&self, i: usize) -> Option<i64> {
        self.get(i, flag::STEP_NUM, &self.step_num)
    }

    fn graph_type(&self, i: usize) -> Option<&'a str> {
        self.get(i, flag::GRAPH_TYPE, &self.graph_type)
    }

    /// Whether the event has a `correlation_id` (a kernel or its launch),
    /// without looking the id up.
    fn has_correlation_id(&self, i: usize) -> bool {
        self.has(i, flag::CORRELATION_ID)
    }

    /// XProf's type of a device event ([`gpu_event_type`]), `types` being
    /// its names' types without shapes (most events have none).
    fn gpu_event_type(&self, i: usize, types: &[u8]) -> u8 {
        match self.get(i, flag::SHAPES, &self.shapes) {
            Some(shapes) => gpu_event_type(self.name(i), shapes),
            None => types[self.nodes[i].name as usize],
        }
    }

    /// [`Events::gpu_event_type`]'s `types`: per name, its type without shapes.
    fn gpu_event_types(&self) -> Vec<u8> {
        self.names.iter().map(|n| gpu_event_type(n, "")).collect()
    }

    fn step_name(&self, i: usize) -> Option<&str> {
        self.marks.step_name(i)
    }

    /// Drops the last record (see [`Nesting`]).
    fn pop_record(&mut self) {
        self.nodes.pop();
        self.marks.pop();
    }

    fn is_host(&self, i: usize) -> bool {
        self.host[self.line(i).plane]
    }

    fn line_range(&self, l: usize) -> std::ops::Range<usize> {
        let end = self.lines.get(l + 1).map_or(self.nodes.len(), |next| next.first);
        self.lines[l].first..end
    }
}

/// The forest's links, by event index (kept apart from the events: most
/// events have none, and a trace may hold millions).
///
/// The producers and consumers of one context are linked through a hub
/// (a node numbered from `events` on) when that takes fewer links than
/// linking every pair: a trace repeated 25 times has 25 × 25 pairs per
/// context, 72 M links on the 270 MB bench trace, which were most of
/// `steps`' time and memory there.
struct Graph {
    /// The number of events; hubs come after them.
    events: usize,
    child_start: Vec<u32>,
    children: Vec<u32>,
    parent_start: Vec<u32>,
    parents: Vec<u32>,
}

impl Graph {
    /// The edges (parent, child) in both directions, each event's list in
    /// index order (as sorting the edges would give them, duplicates kept).
    /// Counting sorts: bucketed by child, then each direction filled in
    /// index order of the other, linear in the number of edges.
    fn new(events: usize, hubs: usize, edges: Vec<(u32, u32)>) -> Graph {
        let count = events + hubs;
        let starts = |ends: &mut dyn Iterator<Item = u32>| {
            let mut start = vec![0u32; count + 1];
            for end in ends {
                start[end as usize + 1] += 1;
            }
            for i in 1..start.len() {
                start[i] += start[i - 1];
            }
            start
        };
        let parent_start = starts(&mut edges.iter().map(|e| e.1));
        let mut parents = vec![0u32; edges.len()];
        let mut next = parent_start.clone();
        for &(from, to) in &edges {
            parents[next[to as usize] as usize] = from;
            next[to as usize] += 1;
        }
        drop(edges);
        let child_start = starts(&mut parents.iter().copied());
        let mut children = vec![0u32; parents.len()];
        next.copy_from_slice(&child_start);
        for child in 0..count {
            for &parent in &parents[parent_start[child] as usize..parent_start[child + 1] as usize] {
                children[next[parent as usize] as usize] = child as u32;
                next[parent as usize] += 1;
            }
        }
        next.copy_from_slice(&parent_start);
        for parent in 0..count {
            for &child in &children[child_start[parent] as usize..child_start[parent + 1] as usize] {
                parents[next[child as usize] as usize] = parent as u32;
                next[child as usize] += 1;
            }
        }
        Graph { events, child_start, children, parent_start, parents }
    }

    fn is_hub(&self, n: usize) -> bool {
        n >= self.events
    }

    fn children(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        self.children[self.child_start[n] as usize..self.child_start[n + 1] as usize].iter().map(|&c| c as usize)
    }

    fn parents(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        self.parents[self.parent_start[n] as usize..self.parent_start[n + 1] as usize].iter().map(|&p| p as usize)
    }

    /// An event's parents as if every pair of a context were linked: in
    /// index order, a hub's producers in its place.
    fn event_parents(&self, n: usize, into: &mut Vec<usize>) {
        into.clear();
        for p in self.parents(n) {
            if self.is_hub(p) {
                into.extend(self.parents(p));
            } else {
                into.push(p);
            }
        }
        into.sort_unstable();
    }
}

/// Analyzes one host's trace. Errors only on a malformed file.
pub fn analyze(bytes: &[u8]) -> Result<HostSteps, DecodeError> {
    analyze_releasing(bytes, &|_| {})
}

/// [`analyze`], calling `release` with each stretch of the file once walked
/// (the file's pages then need not stay resident while events are kept).
pub fn analyze_releasing(bytes: &[u8], release: Release<'_>) -> Result<HostSteps, DecodeError> {
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
    let mut marks = std::mem::take(&mut events.marks);
    let links = grouping.then(|| Links::take(&mut events));
    let ((), walked) = rayon::join(
        || {
            if let Some(links) = links {
                group(&events, &mut marks, links);
            }
        },
        || derived.iter().map(|&p| walk_derived_device(&events, &planes[p], p, grouping, release)).collect::<Result<Vec<_>, _>>(),
    );
    events.marks = marks;
    // The second walk: the events `collect` left out get their groups.
    let host_steps = !tpu && !has_device;
    let (mut steps, dataset_self_ps, enqueue_self_ps) = match host {
        Some(h) => walk_host(&events, &planes[h], h, grouping, host_steps, release)?,
        None => (Vec::new(), 0, 0),
    };
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
    drop(events);
    // XProf (2.24's input_pipeline_analyzer) drops the first and the last
    // step of a host that has more than 5: sampling may have cut them.
    if steps.len() > DROP_INCOMPLETE_STEPS_ABOVE {
        steps.pop();
        steps.remove(0);
    }
    Ok(HostSteps { hardware, steps, dataset_self_ps, enqueue_self_ps })
}

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
mod name_code {
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
/// it, and the second walk ([`walk_line`]) gives the others their
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
fn collect<'a>(planes: &[Plane<'a>], stats: &[StatKinds], release: Release<'_>) -> Result<Events<'a>, DecodeError> {
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

/// The name index of `ThreadpoolListener::Region` in [`Events::names`].
const REGION_NAME: u32 = 1;

fn add_child(edges: &mut Vec<(u32, u32)>, parent: usize, child: usize) {
    edges.push((parent as u32, child as u32));
}

/// Sorts the contexts by (type, id), then (type and pid, id) within, then
/// record (producers first): runs of one (type, id) for
/// [`mark_host_consumers`], of one (type, pid, id) for [`group`].
fn sort_contexts(ev: &mut Events<'_>) {
    let types: Vec<i64> = ev.context_classes.iter().map(|c| c.0).collect();
    // (On all cores: 1.7 → 1.15 s for the 23 M contexts of the 1 GB bench trace.)
    ev.contexts.par_sort_unstable_by_key(|&(class, record, id)| (types[class as usize], id, class, record));
}

/// Marks the host events that consume a context (type, id) a host event
/// produces ([`more::CONSUMES_HOST_PRODUCER`]). The contexts are sorted
/// ([`sort_contexts`]): a pass over them instead of a set of all
/// producers (tens of millions on the 1 GB bench trace, 2.5 s of lookups
/// that missed the caches).
fn mark_host_consumers(ev: &mut Events<'_>, h: usize) {
    let records = (0..ev.lines.len()).filter(|&l| ev.lines[l].plane == h).map(|l| ev.line_range(l)).reduce(|a, b| a.start..b.end).unwrap_or(0..0);
    let on_host = |c: &(u32, u32, i64)| records.contains(&((c.1 & !CONSUMER) as usize));
    let Events { nodes, contexts, context_classes, .. } = ev;
    for run in contexts.chunk_by(|a, b| (context_classes[a.0 as usize].0, a.2) == (context_classes[b.0 as usize].0, b.2)) {
        if run.iter().any(|c| c.1 & CONSUMER == 0 && on_host(c)) {
            for c in run.iter().filter(|c| c.1 & CONSUMER != 0 && on_host(c)) {
                nodes[(c.1 & !CONSUMER) as usize].more |= more::CONSUMES_HOST_PRODUCER;
            }
        }
    }
}

/// XProf's `GroupTfEvents` on a trace with no groups yet: sets `group` (and
/// the roots' `step_name`).
fn group<'a>(ev: &Events<'a>, marks: &mut Marks<'a>, links: Links) {
    group_linking(ev, marks, links, |producers, consumers| producers * consumers > producers + consumers)
}

/// What grouping links, taken from [`Events`] (grouping consumes them):
/// its sorted contexts ([`sort_contexts`]) and the nesting links.
struct Links {
    contexts: Vec<(u32, u32, i64)>,
    nest: Vec<(u32, u32)>,
}

impl Links {
    fn take(ev: &mut Events<'_>) -> Links {
        Links { contexts: std::mem::take(&mut ev.contexts), nest: std::mem::take(&mut ev.nest) }
    }
}

/// [`group`], linking a context's `producers` and `consumers` through a
/// hub where `through_hub(producers, consumers)` (see [`Graph`]), each
/// pair otherwise.
fn group_linking<'a>(ev: &Events<'a>, marks: &mut Marks<'a>, links: Links, through_hub: impl Fn(usize, usize) -> bool) {
    // Context groups: producers and consumers of each (type, id, pid);
    // large groups on both sides are not linked.
    let Links { contexts, nest } = links;
    let context_groups = || {
        contexts
            .chunk_by(|a, b| (a.0, a.2) == (b.0, b.2))
            .map(|run| run.split_at(run.partition_point(|c| c.1 & CONSUMER == 0)))
            .filter(|(p, c)| p.len() < 64 || c.len() < 64)
    };
    let links_needed: usize = context_groups().map(|(p, c)| if through_hub(p.len(), c.len()) { p.len() + c.len() } else { p.len() * c.len() }).sum();
    // Executor → IteratorGetNext by (id, iter_num); kernel launch → kernel.
    // (Read from the stat columns, in event order as a walk over all
    // events would: the last of equal keys wins. A TF2 trace has an
    // executor event per op, millions in a large one, and few
    // IteratorGetNext events: only the executors asked for are looked up.)
    let kinds: Vec<GroupingName> = ev.names.iter().map(|&n| GroupingName::of(n)).collect();
    let kind = |i: usize| kinds[ev.nodes[i].name as usize];
    let ids_and_iterations = || ev.step_id.join(&ev.iter_num);
    let mut executors: HashMap<(i64, i64), Option<usize>> =
        ids_and_iterations().filter(|&(i, ..)| kind(i) == GroupingName::IteratorGetNext).map(|(_, s, it)| ((s, it), None)).collect();
    if !executors.is_empty() {
        for (i, s, it) in ids_and_iterations().filter(|&(i, ..)| kind(i) == GroupingName::Executor) {
            if let Some(executor) = executors.get_mut(&(s, it)) {
                *executor = Some(i);
            }
        }
    }
    let known: Vec<bool> = ev.names.iter().map(|&n| known_type(n).is_some()).collect();
    let known = |i: usize| known[ev.nodes[i].name as usize];
    let mut launches: HashMap<i64, usize> = HashMap::default();
    for (i, c) in ev.correlation_id.iter() {
        if ev.is_host(i) && !known(i) {
            launches.insert(c, i);
        }
    }
    let mut links: Vec<(u32, u32)> = Vec::new();
    for (i, s, it) in ids_and_iterations().filter(|&(i, ..)| kind(i) == GroupingName::IteratorGetNext) {
        if let Some(&Some(p)) = executors.get(&(s, it)) {
            add_child(&mut links, p, i);
        }
    }
    for (i, c) in ev.correlation_id.iter() {
        if !ev.is_host(i)
            && !known(i)
            && let Some(&p) = launches.get(&c)
        {
            add_child(&mut links, p, i);
        }
    }
    drop((executors, launches));
    // The nesting links (`collect` found them), then the others.
    let mut edges = nest;
    edges.reserve(links_needed + links.len());
    let mut hubs = 0;
    for (producers, consumers) in context_groups() {
        if through_hub(producers.len(), consumers.len()) {
            let hub = (ev.len() + hubs) as u32;
            hubs += 1;
            edges.extend(producers.iter().map(|p| (p.1, hub)));
            edges.extend(consumers.iter().map(|c| (hub, c.1 & !CONSUMER)));
        } else {
            for p in producers {
                edges.extend(consumers.iter().map(|c| (p.1, c.1 & !CONSUMER)));
            }
        }
    }
    drop(contexts);
    edges.append(&mut links);
    drop(links);

    // tf.data's own steps, and TF loops: the other steps whose executor
    // events have an iteration other than 0. (Found before their events
    // are listed: most steps are no loop.)
    let tf_data: HashSet<i64> = ev.step_id.iter().filter(|&(i, _)| kind(i) == GroupingName::TfData).map(|(_, s)| s).collect();
    let loop_iterations = || ids_and_iterations().filter(|&(i, s, _)| kind(i) == GroupingName::Executor && !tf_data.contains(&s));
    // Per step: an iteration, and whether there are others.
    let mut iterations_of: HashMap<i64, (i64, bool)> = HashMap::default();
    for (_, step, iter) in loop_iterations() {
        iterations_of.entry(step).and_modify(|(first, more)| *more |= *first != iter).or_insert((iter, false));
    }
    let loop_steps: HashSet<i64> = iterations_of.into_iter().filter(|&(_, (iter, more))| more || iter != 0).map(|(step, _)| step).collect();
    let mut loops: HashMap<i64, BTreeMap<i64, Vec<usize>>> = HashMap::default();
    if !loop_steps.is_empty() {
        for (i, step, iter) in loop_iterations().filter(|(_, step, _)| loop_steps.contains(step)) {
            loops.entry(step).or_default().entry(iter).or_default().push(i);
        }
    }
    let mut iterations: Vec<(usize, Vec<usize>)> = Vec::new();
    for tf_loop in loops.into_values() {
        for events in tf_loop.into_values() {
            let first = events.iter().copied().fold(events[0], |a, b| if ev.begin(b) < ev.begin(a) { b } else { a });
            iterations.push((first, events));
        }
    }
    let mut next_group = 0;
    if !iterations.is_empty() {
        edges.reserve_exact(iterations.iter().map(|(_, events)| events.len()).sum());
        iterations.sort_by_key(|(first, _)| (ev.begin(*first), *first));
        for (first, events) in &iterations {
            for &e in events {
                if e != *first {
                    add_child(&mut edges, *first, e);
                }
            }
        }
        let graph = Graph::new(ev.len(), hubs, edges);
        let mut hubs_walked = vec![false; hubs];
        for (first, _) in iterations {
            process_root(ev, marks, &graph, &mut hubs_walked, next_group, first);
            next_group += 1;
        }
        return;
    }
    let mut roots: Vec<usize> = (0..ev.len())
        .filter(|&i| marks.root_level(i) > 0 || ev.name_codes[ev.nodes[i].name as usize] == name_code::TRACE_CONTEXT)
        .filter(|&i| ev.step_id(i).is_none_or(|s| !tf_data.contains(&s)))
        .collect();
    for &r in &roots {
        if marks.root_level(r) <= 0 {
            marks.set_root_level(r, 1);
        }
    }
    roots.sort_by_key(|&r| (std::cmp::Reverse(marks.root_level(r)), ev.begin(r), r));
    let graph = Graph::new(ev.len(), hubs, edges);
    let mut hubs_walked = vec![false; hubs];
    for root in roots {
        if root_needs_grouping(marks, &graph, root) {
            process_root(ev, marks, &graph, &mut hubs_walked, next_group, root);
            next_group += 1;
        }
    }
}

/// What grouping makes of an event's name.
#[derive(Clone, Copy, PartialEq)]
enum GroupingName {
    Executor,
    IteratorGetNext,
    TfData,
    Other,
}

impl GroupingName {
    fn of(name: &str) -> GroupingName {
        match name {
            "ExecutorState::Process" => GroupingName::Executor,
            "IteratorGetNextOp::DoCompute" | "IteratorGetNextAsOptionalOp::DoCompute" => GroupingName::IteratorGetNext,
            _ if TF_DATA_FUNCTIONS.contains(&name) => GroupingName::TfData,
            _ => GroupingName::Other,
        }
    }
}

/// The event types XProf knows by name (those are never kernel launches).
fn known_type(name: &str) -> Option<()> {
    const KNOWN: [&str; 11] = [
        "TraceContext",
        "SessionRun",
        "FunctionRun",
        "RunGraph",
        "EagerExecute",
        "ExecutorState::Process",
        "MemoryAllocation",
        "MemoryDeallocation",
        "KernelLaunch",
        "KernelExecute",
        "IteratorGetNextOp::DoCompute",
    ];
    KNOWN.contains(&name).then_some(())
}

/// Not grouped yet, and no ancestor is a root of the same level.
fn root_needs_grouping(marks: &Marks<'_>, graph: &Graph, root: usize) -> bool {
    if marks.group(root).is_some() {
        return false;
    }
    let level = marks.root_level(root);
    let mut seen: HashSet<usize> = HashSet::from_iter([root]);
    let mut queue: VecDeque<usize> = VecDeque::new();
    for p in graph.parents(root) {
        if seen.insert(p) {
            queue.push_back(p);
        }
    }
    while let Some(n) = queue.pop_front() {
        let l = if graph.is_hub(n) { 0 } else { marks.root_level(n) };
        if l > 0 && l == level {
            return false;
        }
        for p in graph.parents(n) {
            if seen.insert(p) {
                queue.push_back(p);
            }
        }
    }
    true
}

/// The first value a stat has on the event or, breadth first, its ancestors.
fn context_stat<'a, T>(ev: &Events<'a>, graph: &Graph, start: usize, get: impl Fn(&Events<'a>, usize) -> Option<T>) -> Option<T> {
    let mut seen: HashSet<usize> = HashSet::from_iter([start]);
    let mut queue = VecDeque::from([start]);
    let mut parents = Vec::new();
    while let Some(n) = queue.pop_front() {
        if let Some(v) = get(ev, n) {
            return Some(v);
        }
        graph.event_parents(n, &mut parents);
        for &p in &parents {
            if seen.insert(p) {
                queue.push_back(p);
            }
        }
    }
    None
}

/// `hubs_walked`: per hub, its consumers were reached by an earlier walk
/// (all of them are grouped then: no later walk needs to go through it).
fn process_root<'a>(ev: &Events<'a>, marks: &mut Marks<'a>, graph: &Graph, hubs_walked: &mut [bool], group: i64, root: usize) {
    // The events reachable from the root through events not grouped yet
    // (grouped as they are found: the same events as XProf's walk, with no
    // set of those seen).
    if marks.group(root).is_none() {
        marks.set_group(root, group);
        let mut queue = VecDeque::from([root]);
        while let Some(n) = queue.pop_front() {
            for c in graph.children(n) {
                if graph.is_hub(c) {
                    if !hubs_walked[c - graph.events] {
                        hubs_walked[c - graph.events] = true;
                        queue.push_back(c);
                    }
                } else if marks.group(c).is_none() {
                    marks.set_group(c, group);
                    queue.push_back(c);
                }
            }
        }
    }
    // The group's name: `graph_type` or the root's name, then the step number.
    let root_name = ev.name(root);
    let implicit = IMPLICIT_ROOTS.contains(&root_name);
    let mut name = String::new();
    if let Some(g) = context_stat(ev, graph, root, |ev, n| ev.graph_type(n)) {
        name.push_str(g);
        name.push(' ');
    } else if !implicit {
        name.push_str(root_name);
        name.push(' ');
    }
    let number = context_stat(ev, graph, root, |ev, n| ev.iter_num(n)).or_else(|| context_stat(ev, graph, root, |ev, n| ev.step_num(n))).unwrap_or(group);
    name.push_str(&number.to_string());
    if !implicit {
        marks.set_step_name(root, Cow::Owned(name));
    }
}

/// A step's markers and typed events, before overlaps are resolved.
#[derive(Debug, Default)]
struct Details {
    /// (is a device marker, begin, end)
    markers: Vec<(bool, i128, i128)>,
    /// (type, event index): times are read from the events when the step
    /// is resolved, so a step's events cost 8 bytes each until then.
    events: Vec<(u8, u32)>,
    /// (type, begin, end) of events that are not records.
    spans: Vec<(u8, i128, i128)>,
    name: String,
    /// The line `name` comes from (see [`walk_host`]).
    name_line: usize,
}

impl Details {
    fn combine(&mut self, other: Details) {
        self.markers.extend(other.markers);
        self.events.extend(other.events);
        self.spans.extend(other.spans);
        if self.name.is_empty() {
            self.name = other.name;
        }
    }

    /// The step's time: its longest host marker, unless a device marker is
    /// longer and not inside it.
    fn step_time(&self) -> (i128, i128) {
        let longest = |device: bool| {
            self.markers.iter().filter(|m| m.0 == device).fold((0, 0), |best: (i128, i128), m| if m.2 - m.1 > best.1 - best.0 { (m.1, m.2) } else { best })
        };
        let host = longest(false);
        let device = longest(true);
        if device.1 == device.0 {
            return host;
        }
        if host.0 <= device.0 && device.1 <= host.1 { host } else { device }
    }

    fn step_info(&self, ev: &Events<'_>, group: i64, has_device: bool) -> Option<HostStep> {
        let (begin, end) = self.step_time();
        let mut events: Vec<(u8, i128, i128)> = self.events.iter().map(|&(t, i)| (t, ev.begin(i as usize), ev.end(i as usize))).collect();
        events.extend_from_slice(&self.spans);
        let mut type_ps: BTreeMap<u8, i128> = BTreeMap::new();
        let mut covered = 0;
        for_each_non_overlapped(&events, |t, b, e| {
            let overlap = (end.min(e) - begin.max(b)).max(0);
            *type_ps.entry(t).or_default() += overlap;
            covered += overlap;
        });
        if covered < end - begin {
            *type_ps.entry(et::UNKNOWN_TIME).or_default() += end - begin - covered;
        }
        let well_formed = if has_device {
            type_ps.contains_key(&et::DEVICE_COMPUTE_16) || type_ps.contains_key(&et::DEVICE_COMPUTE_32)
        } else {
            type_ps.contains_key(&et::HOST_COMPUTE)
        };
        (well_formed && end > begin).then(|| HostStep { group, name: self.name.clone(), begin_ps: begin, duration_ps: end - begin, type_ps, device: None })
    }
}

/// XProf's `ToNonOverlappedEvents`: the spans between consecutive event
/// boundaries, each owned by the highest type active there (0 if none).
pub fn non_overlapped(events: &[(u8, i128, i128)]) -> Vec<(u8, i128, i128)> {
    let mut out = Vec::with_capacity(2 * events.len());
    for_each_non_overlapped(events, |t, b, e| out.push((t, b, e)));
    out
}

/// [`non_overlapped`]'s spans, handed to `visit` in order. The events'
/// bounds are sorted as one `u64` each (time from the earliest bound,
/// then ends before starts, then higher types first), where every bound
/// is within 2^55 ps (10 hours) of the earliest: a step's breakdown sorts
/// thousands. Bounds further apart (a corrupt trace) are sorted as tuples,
/// in the same order. (With the open types' bitset below: the breakdowns'
/// share of `steps`' CPU samples on the JAX GPU bench trace x91, 6.5% →
/// 4.1%, `perf record`.)
fn for_each_non_overlapped(events: &[(u8, i128, i128)], mut visit: impl FnMut(u8, i128, i128)) {
    const TIME_SHIFT: u32 = 9;
    let Some(first) = events.iter().map(|&(_, b, e)| b.min(e)).min() else { return };
    let last = events.iter().map(|&(_, b, e)| b.max(e)).max().unwrap_or(first);
    let mut counts = [0i64; et::LAST as usize + 1];
    // The types whose count is above 0, for the next top when the top's
    // count falls to 0 (a look at each type below it was most of the
    // steps' breakdowns: a kernel, type 140, ending with nothing above 0).
    let mut open = [0u64; 4];
    let mut top = et::UNKNOWN_TIME;
    let mut step = |(time, start, t): (i128, bool, u8), next: i128| {
        let (word, bit) = (usize::from(t / 64), 1u64 << (t % 64));
        if start {
            counts[t as usize] += 1;
            top = top.max(t);
        } else {
            counts[t as usize] -= 1;
        }
        if counts[t as usize] > 0 {
            open[word] |= bit
        } else {
            open[word] &= !bit
        }
        if !start && t == top && counts[t as usize] == 0 {
            // The highest type below `t` whose count is above 0.
            top = (0..=word)
                .rev()
                .find_map(|w| {
                    let below = if w == word { open[w] & (bit - 1) } else { open[w] };
                    (below != 0).then(|| (64 * w + 63 - below.leading_zeros() as usize) as u8)
                })
                .unwrap_or(et::UNKNOWN_TIME);
        }
        visit(top, time, next);
    };
    if last - first < 1 << (64 - TIME_SHIFT) {
        let key = |time: i128, start: bool, t: u8| ((time - first) as u64) << TIME_SHIFT | u64::from(start) << 8 | u64::from(u8::MAX - t);
        let bound = |key: u64| (first + i128::from(key >> TIME_SHIFT), key >> 8 & 1 == 1, u8::MAX - (key & 0xff) as u8);
        let mut keys: Vec<u64> = events.iter().flat_map(|&(t, b, e)| [key(b, true, t), key(e, false, t)]).collect();
        keys.sort_unstable();
        for w in keys.windows(2) {
            step(bound(w[0]), bound(w[1]).0);
        }
    } else {
        // (time, is_start, type): ends before starts at the same time;
        // among starts or ends, higher types first. (The key is the whole
        // entry: equal entries are alike, so an unstable sort gives the
        // same order.)
        let mut bounds: Vec<(i128, bool, u8)> = events.iter().flat_map(|&(t, b, e)| [(b, true, t), (e, false, t)]).collect();
        bounds.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
        for w in bounds.windows(2) {
            step(w[0], w[1].0);
        }
    }
}

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

/// An event as the second walk over a line ([`walk_line`]) sees it.
#[derive(Clone, Copy)]
struct Seen<G = i64> {
    /// Its record, if [`collect`] kept one.
    record: Option<usize>,
    name: u32,
    begin: i128,
    end: i128,
    /// Its group: its record's, or, for an event without one, that of
    /// the event it nests in when grouping ran. (Or what stands for it in
    /// a walk while grouping runs: see [`walk_line`].)
    group: Option<G>,
    /// A threadpool region, seen where its stop is (not after the line).
    region: bool,
    /// On the line's nesting stack (not async, not a region).
    nested: bool,
}

enum Visit<G = i64> {
    Event(Seen<G>),
    /// A kept event of this group left the nesting stack.
    Left(G),
}

/// Walks a line's events again, in file order: kept ones from their
/// records, the others decoded, with the group of the event they nest in
/// when grouping ran (`inherit`): XProf's walk from the root reaches them
/// through it and nothing else (see [`Nesting`]).
fn walk_line(
    ev: &Events<'_>,
    line: &Line<'_>,
    l: usize,
    inherit: bool,
    release: Release<'_>,
    stack: &mut Vec<(i128, i128, Option<i64>, bool)>,
    visit: impl FnMut(Visit),
) -> Result<(), DecodeError> {
    walk_line_grouped_by(ev, line, l, inherit, release, stack, |i| ev.group(i), visit)
}

/// [`walk_line`], a record's group being `group_of(record)`: a walk while
/// grouping runs, which cannot read the groups, takes the record itself
/// and looks its group up afterwards ([`walk_derived_device`]).
#[allow(clippy::too_many_arguments)]
fn walk_line_grouped_by<G: Copy>(
    ev: &Events<'_>,
    line: &Line<'_>,
    l: usize,
    inherit: bool,
    release: Release<'_>,
    stack: &mut Vec<(i128, i128, Option<G>, bool)>,
    group_of: impl Fn(usize) -> Option<G>,
    mut visit: impl FnMut(Visit<G>),
) -> Result<(), DecodeError> {
    let info = &ev.lines[l];
    let names = &ev.name_index[info.plane];
    let (mut record, mut region) = (info.first, info.regions);
    let mut started = false;
    stack.clear();
    // (The events `collect` kept are read from their records.)
    let decode = |k, wire| {
        if ev.kept(info.first_event + k) {
            return Ok(None);
        }
        let event = Event::decode(wire)?;
        Ok(Some((names.get(event.metadata_id).unwrap_or(0), event.offset_ps, event.duration_ps)))
    };
    let mut on_event = |decoded: Option<(u32, i64, i64)>| -> Result<(), DecodeError> {
        let mut seen = match decoded {
            None => {
                let i = record;
                record += 1;
                let (begin, end) = ev.span_from(i, info.base);
                Seen { record: Some(i), name: ev.nodes[i].name, begin, end, group: group_of(i), region: false, nested: !ev.has(i, flag::ASYNC) }
            }
            Some((name, offset_ps, duration_ps)) => {
                let begin = info.base + i128::from(offset_ps);
                Seen { record: None, name, begin, end: begin + i128::from(duration_ps.max(0)), group: None, region: false, nested: true }
            }
        };
        if seen.nested {
            while let Some(top) = stack.last() {
                if top.0 <= seen.begin && seen.end <= top.1 {
                    break;
                }
                if let (Some(g), true) = (top.2, top.3) {
                    visit(Visit::Left(g));
                }
                stack.pop();
            }
            if seen.record.is_none() && inherit {
                seen.group = stack.last().and_then(|top| top.2);
            }
            stack.push((seen.begin, seen.end, seen.group, seen.record.is_some()));
        }
        visit(Visit::Event(seen));
        match ev.name_codes[seen.name as usize] {
            name_code::START_REGION if seen.record.is_some_and(|i| ev.has(i, flag::CONSUMER)) => started = true,
            name_code::STOP_REGION if started => {
                let i = region;
                region += 1;
                let (begin, end) = ev.span_from(i, info.base);
                visit(Visit::Event(Seen { record: Some(i), name: REGION_NAME, begin, end, group: group_of(i), region: true, nested: false }));
            }
            _ => {}
        }
        Ok(())
    };
    if info.regions - info.first == line.event_count {
        // Every event was kept (a GPU line's kernels and copies all have
        // a `correlation_id`): the records are the line, whose bytes need
        // not be read again.
        (0..line.event_count).try_for_each(|_| on_event(None))?;
    } else {
        line.walk(release, decode, &mut on_event)?;
    }
    while let Some(top) = stack.pop() {
        if let (Some(g), true) = (top.2, top.3) {
            visit(Visit::Left(g));
        }
    }
    debug_assert_eq!(record, info.regions);
    Ok(())
}

/// The global line indices of plane `p`'s lines, with the lines.
fn lines_of<'p, 'a>(ev: &Events<'_>, plane: &'p Plane<'a>, p: usize) -> impl Iterator<Item = (usize, &'p Line<'a>)> {
    let first = ev.lines.iter().position(|l| l.plane == p).unwrap_or(0);
    plane.lines.iter().enumerate().map(move |(k, line)| (first + k, line))
}

/// The second walk over the host plane: XProf's host step events
/// (`ConvertHostThreadsXLineToStepEvents`, if `steps`) and the input ops'
/// self times. A step is resolved as soon as none of its events can come
/// any more (no kept event of its group is left to walk or open), so the
/// events of only a few steps are held at a time.
fn walk_host(
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
fn has_steps_line(plane: &Plane<'_>) -> bool {
    plane.lines.iter().any(|line| line.id == STEP_INFO_LINE)
}

/// XProf's `ConvertDeviceTraceXPlaneToStepEvents` for one GPU plane with
/// a `Steps` line: it gives the markers, the plane's other (not derived)
/// lines the events, and only the groups with both are kept. Kernels
/// (events with a `correlation_id`) are all kept records; a `Steps` line
/// is walked again.
///
/// Every event of the plane's own lines goes to `spans`, for
/// [`add_device_time`].
fn device_step_events(
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
fn derived_device_step_events(ev: &Events<'_>, walked: DerivedWalk, spans: &mut DeviceSpans) -> BTreeMap<i64, Details> {
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
struct DerivedWalk {
    events: Vec<DeviceSpan>,
    bases: Vec<i128>,
}

/// The walk of [`derived_device_step_events`]: it reads no group (each
/// event names the record whose group it takes), so that it runs while
/// grouping does. (Walking and sorting the 1.8 M device events of the
/// 272 MB jax_lstm x91 trace takes as long as grouping it, bench/README.md.)
fn walk_derived_device(ev: &Events<'_>, plane: &Plane<'_>, p: usize, inherit: bool, release: Release<'_>) -> Result<DerivedWalk, DecodeError> {
    let transfers: Vec<bool> = ev.names.iter().map(|n| transfer(n).is_some()).collect();
    let mut events: Vec<DeviceSpan> = Vec::new();
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
    events.par_sort_by_key(|e| {
        let (begin, end) = e.span(&bases);
        (begin, std::cmp::Reverse(end - begin))
    });
    Ok(DerivedWalk { events, bases })
}

/// A device event of a plane without a `Steps` line, as
/// [`derived_device_step_events`] reads it: its span from its line's start,
/// the record whose group it has, its record if it is a kernel. 32 bytes:
/// a trace may hold millions (the 1.09 GB jax_lstm x364, 7.3 M: kept as (begin, end, group,
/// record) and again as (begin, end, memcpy) they were 0.9 GB of `steps`'
/// 1.67 GB peak, bench/README.md).
#[derive(Clone, Copy)]
struct DeviceSpan {
    offset: i64,
    /// Its duration; a region's end from its line's start.
    dur: i64,
    /// Its line's start, by index into the plane's line starts.
    line: u32,
    /// Its record, if it has a `correlation_id` ([`DeviceSpan::NONE`]: not).
    kernel: u32,
    /// The record whose group is its own ([`DeviceSpan::NONE`]: none).
    source: u32,
    flags: u8,
}

impl DeviceSpan {
    const NONE: u32 = u32::MAX;
    const REGION: u8 = 1;
    const TRANSFER: u8 = 2;

    fn span(&self, bases: &[i128]) -> (i128, i128) {
        let base = bases[self.line as usize];
        let begin = base + i128::from(self.offset);
        (begin, if self.flags & Self::REGION != 0 { base + i128::from(self.dur) } else { begin + i128::from(self.dur) })
    }
}

/// The device events whose union [`add_device_time`] measures: those of
/// planes with a `Steps` line as (begin, end, is a memcpy), and the others'
/// [`DeviceSpan`]s, each plane's in order of their starts, with their
/// lines' starts.
#[derive(Default)]
struct DeviceSpans {
    spans: Vec<(i128, i128, bool)>,
    planes: Vec<(Vec<DeviceSpan>, Vec<i128>)>,
}

/// Each step's [`DeviceTime`]: the parts of its span that the device
/// events of `spans` cover (all of them; the memcpys), overlaps once. The
/// events are merged in order of their starts and their union measured up
/// to each step's begin and end as it goes: neither the merged events nor
/// their union are ever held (a device event each on a GPU trace).
fn add_device_time(steps: &mut [HostStep], spans: DeviceSpans) {
    let DeviceSpans { mut spans, planes } = spans;
    spans.sort_unstable();
    let mut points: Vec<i128> = steps.iter().flat_map(|s| [s.begin_ps, s.begin_ps + s.duration_ps]).collect();
    points.sort_unstable();
    points.dedup();
    // Every plane's events in order of their starts.
    let merged = || {
        let mut streams: Vec<Box<dyn Iterator<Item = (i128, i128, bool)> + '_>> = vec![Box::new(spans.iter().copied())];
        for (events, bases) in &planes {
            streams.push(Box::new(events.iter().map(|e| {
                let (begin, end) = e.span(bases);
                (begin, end, e.flags & DeviceSpan::TRANSFER != 0)
            })));
        }
        merge_by_start(streams)
    };
    let (busy, transfers) =
        rayon::join(|| measure_up_to(merged().map(|s| (s.0, s.1)), &points), || measure_up_to(merged().filter(|s| s.2).map(|s| (s.0, s.1)), &points));
    let at = |t: i128| points.binary_search(&t).expect("a step's bound");
    for step in steps {
        let (begin, end) = (at(step.begin_ps), at(step.begin_ps + step.duration_ps));
        step.device = Some(DeviceTime { transfer_ps: transfers[end] - transfers[begin], busy_ps: busy[end] - busy[begin] });
    }
}

/// Streams each in order of their starts, merged in that order.
fn merge_by_start<'s>(mut streams: Vec<Box<dyn Iterator<Item = (i128, i128, bool)> + 's>>) -> impl Iterator<Item = (i128, i128, bool)> + 's {
    let mut heads: Vec<Option<(i128, i128, bool)>> = streams.iter_mut().map(|s| s.next()).collect();
    std::iter::from_fn(move || {
        let k = (0..heads.len()).filter(|&k| heads[k].is_some()).min_by_key(|&k| heads[k].map(|h| h.0))?;
        let head = heads[k];
        heads[k] = streams[k].next();
        head
    })
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
fn gpu_event_type(name: &str, shapes: &str) -> u8 {
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
    use crate::intervals::{Empty, covered, union_in_order};
    use crate::test_random::XorShift;

    const TF_LOOP: &[u8] = include_bytes!("../../../../testdata/xplane/tf_loop/plugins/profile/run0/host0.xplane.pb");

    /// XProf's four `train` steps of the fixture (tests/steps.rs checks the
    /// numbers against XProf's).
    #[test]
    fn markers_with_a_root_stat_make_the_steps() {
        let host = analyze(TF_LOOP).unwrap();
        let names: Vec<&str> = host.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["train 0", "train 1", "train 2", "train 3"]);
        assert_eq!(host.hardware, Hardware::CpuOnly);
    }

    /// Regions are counted where their stop is, not after their line's
    /// events (see `walk_host`): that they are no input op and no marker
    /// is what makes it the same.
    #[test]
    fn regions_are_host_compute_and_no_op() {
        let region = "ThreadpoolListener::Region";
        assert_eq!(input_op_kind(region), 0);
        assert!(matches!(host_kind(region), HostKind::Event(et::HOST_COMPUTE)));
    }

    /// The fixture's events repeated `times` times on each line, each copy
    /// after the last (as the bench traces are made): the contexts repeat,
    /// so each has `times` producers and consumers.
    fn repeated(bytes: &[u8], times: i64) -> Vec<u8> {
        use crate::proto::tensorflow::profiler as xp;
        use prost::Message;
        let mut space = xp::XSpace::decode(bytes).unwrap();
        for line in space.planes.iter_mut().flat_map(|p| &mut p.lines) {
            let offset = |e: &xp::XEvent| match e.data {
                Some(xp::x_event::Data::OffsetPs(o)) => o,
                _ => 0,
            };
            let span = line.events.iter().map(|e| offset(e) + e.duration_ps).max().unwrap_or(0) + 1;
            let copies: Vec<xp::XEvent> = (1..times)
                .flat_map(|k| line.events.iter().map(move |e| xp::XEvent { data: Some(xp::x_event::Data::OffsetPs(offset(e) + k * span)), ..e.clone() }))
                .collect();
            line.events.extend(copies);
        }
        space.encode_to_vec()
    }

    /// An event's group and step name.
    type Grouped = (Option<i64>, Option<String>);

    /// Each record's group and step name, grouped with `through_hub`; and
    /// how many contexts went through a hub.
    fn grouped(bytes: &[u8], through_hub: fn(usize, usize) -> bool) -> (Vec<Grouped>, usize) {
        let space = Space::decode(bytes).unwrap();
        let planes: Vec<Plane<'_>> = space.planes.iter().map(|p| Plane::decode(p).unwrap()).collect();
        let stats: Vec<StatKinds> = planes.iter().map(StatKinds::of).collect();
        let mut ev = collect(&planes, &stats, &|_| {}).unwrap();
        sort_contexts(&mut ev);
        let hubs = std::cell::Cell::new(0);
        let (links, mut marks) = (Links::take(&mut ev), std::mem::take(&mut ev.marks));
        group_linking(&ev, &mut marks, links, |p, c| {
            let hub = through_hub(p, c);
            hubs.set(hubs.get() + usize::from(hub));
            hub
        });
        ev.marks = marks;
        ((0..ev.len()).map(|i| (ev.group(i), ev.step_name(i).map(str::to_owned))).collect(), hubs.get())
    }

    /// Through a hub, an event's parents are listed as linking each pair
    /// lists them: in index order, duplicates kept (the order decides
    /// which ancestor's stat names a step).
    #[test]
    fn a_hubs_producers_are_parents_in_index_order() {
        // Events 0..6; hub 6 links producers 5 and 1 to consumer 3, which
        // also nests in 4 and is consumed from 1 directly.
        let graph = Graph::new(6, 1, vec![(4, 3), (5, 6), (1, 6), (6, 3), (1, 3)]);
        let mut parents = Vec::new();
        graph.event_parents(3, &mut parents);
        assert_eq!(parents, [1, 1, 4, 5]);
        let pairs = Graph::new(6, 0, vec![(4, 3), (5, 3), (1, 3), (1, 3)]);
        assert_eq!(pairs.parents(3).collect::<Vec<_>>(), parents);
    }

    /// Linking a context's producers and consumers through a hub groups
    /// and names every event as linking each pair does, on fixtures whose
    /// steps come from roots and from TF loops, repeated so that their
    /// contexts have several producers and consumers.
    #[test]
    fn hubs_group_as_every_pair_linked() {
        let fixtures: [&[u8]; 3] = [
            TF_LOOP,
            include_bytes!("../../../../testdata/xplane/keras_fit/plugins/profile/run0/host0.xplane.pb"),
            include_bytes!("../../../../testdata/xplane/tf_data_loop/plugins/profile/run0/host0.xplane.pb"),
        ];
        for (k, fixture) in fixtures.iter().enumerate() {
            let trace = repeated(fixture, 5);
            let (by_hubs, hubs) = grouped(&trace, |p, c| p * c > p + c);
            let (by_pairs, none) = grouped(&trace, |_, _| false);
            assert!(hubs > 0 && none == 0, "fixture {k}: {hubs} hubs");
            assert!(by_pairs.iter().any(|(g, _)| g.is_some()), "fixture {k} has groups");
            assert_eq!(by_hubs, by_pairs, "fixture {k}");
        }
    }

    /// Device time per step: the union of the events, clipped to the step.
    #[test]
    fn device_time_counts_overlaps_once_and_clips_to_the_step() {
        let spans: Vec<_> = union_in_order([(0, 10), (5, 20), (30, 40), (35, 36), (50, 50)], Empty::Drop).collect();
        assert_eq!(spans, [(0, 20), (30, 40)]);
        assert_eq!(covered(&spans, 15, 35), 5 + 5);
        assert_eq!(covered(&spans, 20, 30), 0);
        assert_eq!(covered(&spans, -5, 100), 30);
    }

    /// Merged streams come in order of starts, every span kept (the
    /// measure over them is `intervals::measure_up_to`'s, tested there).
    #[test]
    fn merged_streams_come_in_order_of_starts() {
        let mut rng = XorShift::new(0xc0ffee);
        for _ in 0..500 {
            let mut spans: Vec<(i128, i128)> =
                (0..rng.below(40)).map(|_| (rng.below(200) as i128 - 50, rng.below(60) as i128 - 10)).map(|(b, d)| (b, b + d)).collect();
            spans.sort_unstable();
            let (left, right): (Vec<_>, Vec<_>) = spans.iter().map(|&(b, e)| (b, e, false)).partition(|_| rng.below(2) == 0);
            let merged: Vec<(i128, i128, bool)> = merge_by_start(vec![Box::new(left.into_iter()), Box::new(right.into_iter())]).collect();
            assert_eq!(merged.len(), spans.len());
            assert!(merged.windows(2).all(|w| w[0].0 <= w[1].0));
        }
    }

    /// The bounds sorted as packed keys give the spans that sorting them as
    /// (time, is start, type) tuples gives: equal times, ends and starts
    /// together, every type, negative times, bounds 2^55 ps apart or more
    /// (sorted as tuples then), durations below 0 (regions).
    #[test]
    fn packed_bounds_give_the_spans_of_sorted_tuples() {
        fn by_tuples(events: &[(u8, i128, i128)]) -> Vec<(u8, i128, i128)> {
            let mut bounds: Vec<(i128, bool, u8)> = events.iter().flat_map(|&(t, b, e)| [(b, true, t), (e, false, t)]).collect();
            bounds.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
            let mut counts = [0i64; et::LAST as usize + 1];
            let mut top = et::UNKNOWN_TIME;
            let mut out = Vec::new();
            for w in bounds.windows(2) {
                let (time, start, t) = w[0];
                if start {
                    counts[t as usize] += 1;
                    top = top.max(t);
                } else {
                    counts[t as usize] -= 1;
                    if t == top && counts[t as usize] == 0 {
                        top = (0..t).rev().find(|&i| counts[i as usize] > 0).unwrap_or(et::UNKNOWN_TIME);
                    }
                }
                out.push((top, time, w[1].0));
            }
            out
        }
        let mut rng = XorShift::new(0x0b0b_5eed);
        for case in 0..2000 {
            let spread: i128 = [40, 1 << 40, 1 << 56][case % 3];
            let origin = rng.next() as i64 as i128 * 1000;
            let events: Vec<(u8, i128, i128)> = (0..rng.below(30))
                .map(|_| {
                    let b = origin + (rng.below(spread as u64) as i128) - spread / 4;
                    (rng.below(u64::from(et::LAST) + 1) as u8, b, b + rng.below(20) as i128 - 3)
                })
                .collect();
            assert_eq!(non_overlapped(&events), by_tuples(&events), "{events:?}");
        }
    }

    /// Randomly corrupted traces never panic: they are refused or analyzed.
    #[test]
    fn corrupted_traces_do_not_panic() {
        let mut rng = XorShift::new(0x57e9_5eed);
        for _ in 0..400 {
            let mut bytes = TF_LOOP.to_vec();
            rng.corrupt(&mut bytes, 4);
            if let Ok(host) = analyze(&bytes) {
                // (Rendering them is outputs::steps' test of the same.)
                let _ = super::super::from_hosts(&[host.clone(), host]);
            }
        }
    }
}
