//! XProf's step breakdown of an XPlane trace (`input_pipeline_analyzer`),
//! re-derived from its rules (README, "rtfprof steps"):
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

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use prost::DecodeError;

use crate::inputs::xplane::decode::{Plane, Space};
use crate::inputs::xplane::names::{DATASET_TYPE, parse_op};

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

/// The lines XProf derives (ids `0xdeadbeef` .. `+99`, as int32).
const DERIVED_MIN: i64 = 0xdead_beef_u32 as i32 as i64;
const DERIVED_MAX: i64 = DERIVED_MIN + 99;
/// The derived line of a device's steps.
const STEP_INFO_LINE: i64 = DERIVED_MIN;

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

/// One event of the forest, with the stats grouping reads.
#[derive(Debug, Default)]
struct Node<'a> {
    plane: usize,
    line: usize,
    line_id: i64,
    name: &'a str,
    begin: i128,
    end: i128,
    producer: Option<(i64, i64)>,
    consumer: Option<(i64, i64)>,
    pid: Option<i64>,
    root_level: i64,
    is_async: bool,
    step_id: Option<i64>,
    iter_num: Option<i64>,
    step_num: Option<i64>,
    graph_type: Option<&'a str>,
    correlation_id: Option<i64>,
    group: Option<i64>,
    step_name: Option<String>,
    ipl_stage: bool,
    shapes: &'a str,
    /// `device_offset_ps`, `device_duration_ps`.
    device_span: Option<(i64, i64)>,
}

/// The forest's links, by event index (kept apart from the events: most
/// events have none, and a trace may hold millions).
struct Graph {
    child_start: Vec<u32>,
    children: Vec<u32>,
    parent_start: Vec<u32>,
    parents: Vec<u32>,
}

impl Graph {
    fn new(count: usize, edges: &[(u32, u32)]) -> Graph {
        let index = |key: fn(&(u32, u32)) -> (u32, u32)| {
            let mut sorted: Vec<(u32, u32)> = edges.iter().map(key).collect();
            sorted.sort_unstable();
            let mut start = vec![0u32; count + 1];
            for &(from, _) in &sorted {
                start[from as usize + 1] += 1;
            }
            for i in 1..start.len() {
                start[i] += start[i - 1];
            }
            (start, sorted.into_iter().map(|(_, to)| to).collect::<Vec<u32>>())
        };
        let (child_start, children) = index(|&(p, c)| (p, c));
        let (parent_start, parents) = index(|&(p, c)| (c, p));
        Graph { child_start, children, parent_start, parents }
    }

    fn children(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        self.children[self.child_start[n] as usize..self.child_start[n + 1] as usize].iter().map(|&c| c as usize)
    }

    fn parents(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        self.parents[self.parent_start[n] as usize..self.parent_start[n + 1] as usize].iter().map(|&p| p as usize)
    }
}

/// The names grouping reads, by the plane's stat metadata ids.
struct StatIds {
    names: HashMap<i64, &'static str>,
}

const STATS: [&str; 18] = [
    "_pt", "_p", "_ct", "_c", "_pid", "_r", "_a", "id", "iter_num", "step_num", "graph_type", "correlation_id", "group_id",
    "step_name", "_ipl_stage_name", "shape", "device_offset_ps", "device_duration_ps",
];

impl StatIds {
    fn new(plane: &Plane<'_>) -> StatIds {
        let names = plane.stat_names.iter().filter_map(|(id, name)| STATS.iter().find(|s| **s == *name).map(|known| (*id, *known))).collect();
        StatIds { names }
    }
}

/// Analyzes one host's trace. Errors only on a malformed file.
pub fn analyze(bytes: &[u8]) -> Result<HostSteps, DecodeError> {
    let space = Space::decode(bytes)?;
    let planes: Vec<Plane<'_>> = space.planes.iter().map(|p| Plane::decode(p)).collect::<Result<_, _>>()?;
    let tpu = planes.iter().any(|p| p.name.starts_with("/device:TPU:"));
    let gpu: Vec<usize> = (0..planes.len()).filter(|&i| planes[i].name.starts_with("/device:GPU:")).collect();
    let hardware = if !gpu.is_empty() {
        Hardware::Gpu
    } else if tpu {
        Hardware::Tpu
    } else {
        Hardware::CpuOnly
    };
    let grouped = planes.iter().any(|p| p.stat_names.values().any(|n| *n == "group_id"));
    let loop_ops = planes.iter().any(|p| p.event_metadata.values().any(|m| LOOP_OPS.contains(&m.name)));

    let mut nodes = collect(&planes)?;
    if !grouped && !loop_ops && !tpu {
        group(&planes, &mut nodes);
    }
    let host = planes.iter().position(|p| p.name == "/host:CPU");
    let (dataset_self_ps, enqueue_self_ps) = host.map_or((0, 0), |h| input_op_self_times(&planes[h], &nodes, h));

    let has_device = !gpu.is_empty() || tpu;
    let mut steps: BTreeMap<i64, Details> = BTreeMap::new();
    if tpu {
        // XProf reads TPU steps from the device's own step line, with rules
        // of their own; rtfprof does not implement them.
    } else if has_device {
        for &plane in &gpu {
            for (group, details) in device_step_events(&nodes, plane) {
                steps.entry(group).or_default().combine(details);
            }
        }
    } else if let Some(h) = host {
        for (group, details) in host_step_events(&planes[h], &nodes, h) {
            steps.entry(group).or_default().combine(details);
        }
    }
    let mut steps: Vec<HostStep> = steps.into_iter().filter_map(|(group, details)| details.step_info(group, has_device)).collect();
    // XProf (2.24's input_pipeline_analyzer) drops the first and the last
    // step of a host that has more than 5: sampling may have cut them.
    if steps.len() > DROP_INCOMPLETE_STEPS_ABOVE {
        steps.pop();
        steps.remove(0);
    }
    Ok(HostSteps { hardware, steps, dataset_self_ps, enqueue_self_ps })
}

/// Every event of every plane, with its stats, in plane/line/event order.
fn collect<'a>(planes: &[Plane<'a>]) -> Result<Vec<Node<'a>>, DecodeError> {
    let mut nodes = Vec::with_capacity(planes.iter().flat_map(|p| &p.lines).map(|l| l.event_count).sum());
    for (p, plane) in planes.iter().enumerate() {
        let ids = StatIds::new(plane);
        let plane_pid = plane.stats.iter().find(|s| plane.stat_names.get(&s.metadata_id) == Some(&"process_id")).and_then(|s| s.value.as_i64());
        for (l, line) in plane.lines.iter().enumerate() {
            let base = i128::from(line.timestamp_ns) * 1000;
            for event in line.events() {
                let event = event?;
                let begin = base + i128::from(event.offset_ps);
                let mut node = Node {
                    plane: p,
                    line: l,
                    line_id: line.id,
                    name: plane.event_name(event.metadata_id),
                    begin,
                    end: begin + i128::from(event.duration_ps.max(0)),
                    pid: plane_pid,
                    ..Default::default()
                };
                let (mut pt, mut pi, mut ct, mut ci, mut offset, mut duration) = (None, None, None, None, None, None);
                for stat in event.stats() {
                    let Some(&name) = ids.names.get(&stat.metadata_id) else { continue };
                    let int = stat.value.as_i64();
                    match name {
                        "_pt" => pt = int,
                        "_p" => pi = stat.value.as_id(),
                        "_ct" => ct = int,
                        "_c" => ci = stat.value.as_id(),
                        "_pid" => node.pid = int.or(node.pid),
                        "_r" => node.root_level = int.unwrap_or(0),
                        "_a" => node.is_async = int.unwrap_or(0) != 0,
                        "id" => node.step_id = int,
                        "iter_num" => node.iter_num = int,
                        "step_num" => node.step_num = int,
                        "graph_type" => node.graph_type = stat.value.as_str(plane),
                        "correlation_id" => node.correlation_id = stat.value.as_id(),
                        "group_id" => node.group = int,
                        "step_name" => node.step_name = stat.value.as_str(plane).map(str::to_owned),
                        "_ipl_stage_name" => node.ipl_stage = stat.value.as_str(plane).is_some_and(|s| !s.is_empty()),
                        "shape" => node.shapes = stat.value.as_str(plane).unwrap_or(""),
                        "device_offset_ps" => offset = stat.value.as_id(),
                        "device_duration_ps" => duration = stat.value.as_id(),
                        _ => {}
                    }
                }
                // XProf's root mutators (preprocess_xplane.cc) make these roots.
                match node.name {
                    "ProcessBatch" => node.root_level = 2,
                    "BatchingSessionRun" => node.root_level = 1,
                    _ => {}
                }
                node.producer = pt.zip(pi);
                node.consumer = ct.zip(ci);
                if let (Some(offset), Some(duration)) = (offset, duration) {
                    node.device_span = Some((offset, duration));
                }
                nodes.push(node);
            }
            add_threadpool_regions(&mut nodes, p, l, line.id);
        }
    }
    Ok(nodes)
}

/// `ContextType::kThreadpoolEvent` (xla/tsl/profiler/lib/context_types.h).
const THREADPOOL_EVENT: i64 = 15;

/// XProf's `ThreadpoolLineMutator` (preprocess_xplane.h): on a line with
/// `ThreadpoolListener::StartRegion`/`StopRegion` markers, a
/// `ThreadpoolListener::Region` event from the last start (that has a
/// consumer id) to each stop, consuming the start's context. The regions go
/// after the line's events, as XProf appends them.
fn add_threadpool_regions(nodes: &mut Vec<Node<'_>>, p: usize, l: usize, line_id: i64) {
    let first = nodes.iter().rposition(|n| n.plane != p || n.line != l).map_or(0, |i| i + 1);
    let mut start: Option<(i128, i64)> = None;
    let mut regions = Vec::new();
    for n in &nodes[first..] {
        if n.name == "ThreadpoolListener::StartRegion" {
            if let Some((_, c)) = n.consumer {
                start = Some((n.begin, c));
            }
        } else if n.name == "ThreadpoolListener::StopRegion" {
            if let Some((b, c)) = start {
                regions.push((b, c, n.begin, n.pid));
            }
        }
    }
    for (b, c, e, pid) in regions {
        nodes.push(Node {
            plane: p,
            line: l,
            line_id,
            name: "ThreadpoolListener::Region",
            begin: b,
            end: e,
            consumer: Some((THREADPOOL_EVENT, c)),
            pid,
            ..Default::default()
        });
    }
}

fn add_child(edges: &mut Vec<(u32, u32)>, parent: usize, child: usize) {
    edges.push((parent as u32, child as u32));
}

/// XProf's `GroupTfEvents` on a trace with no groups yet: sets `group` (and
/// the roots' `step_name`).
fn group(planes: &[Plane<'_>], nodes: &mut [Node<'_>]) {
    // Nesting on each line (async events are left out), and context groups.
    let mut contexts: HashMap<(i64, i64, Option<i64>), (Vec<usize>, Vec<usize>)> = HashMap::new();
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut current = (usize::MAX, usize::MAX);
    for i in 0..nodes.len() {
        if (nodes[i].plane, nodes[i].line) != current {
            current = (nodes[i].plane, nodes[i].line);
            stack.clear();
        }
        if let Some((t, id)) = nodes[i].producer {
            contexts.entry((t, id, nodes[i].pid)).or_default().0.push(i);
        }
        if let Some((t, id)) = nodes[i].consumer {
            contexts.entry((t, id, nodes[i].pid)).or_default().1.push(i);
        }
        if nodes[i].is_async {
            continue;
        }
        while let Some(&top) = stack.last() {
            if nodes[top].begin <= nodes[i].begin && nodes[i].end <= nodes[top].end {
                add_child(&mut edges, top, i);
                break;
            }
            stack.pop();
        }
        stack.push(i);
    }
    // Executor → IteratorGetNext by (id, iter_num); kernel launch → kernel.
    let mut executors: HashMap<(i64, i64), usize> = HashMap::new();
    let mut launches: HashMap<i64, usize> = HashMap::new();
    let host = |n: &Node<'_>| planes[n.plane].name == "/host:CPU";
    for (i, n) in nodes.iter().enumerate() {
        if n.name == "ExecutorState::Process" {
            if let (Some(s), Some(it)) = (n.step_id, n.iter_num) {
                executors.insert((s, it), i);
            }
        } else if host(n) && known_type(n.name).is_none() {
            if let Some(c) = n.correlation_id {
                launches.insert(c, i);
            }
        }
    }
    let mut links = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if n.name == "IteratorGetNextOp::DoCompute" || n.name == "IteratorGetNextAsOptionalOp::DoCompute" {
            if let Some(&p) = n.step_id.zip(n.iter_num).and_then(|k| executors.get(&k)) {
                links.push((p, i));
            }
        } else if !host(n) && known_type(n.name).is_none() {
            if let Some(&p) = n.correlation_id.and_then(|c| launches.get(&c)) {
                links.push((p, i));
            }
        }
    }
    let mut groups: Vec<_> = contexts.into_values().collect();
    groups.sort();
    for (producers, consumers) in groups {
        if producers.len() >= 64 && consumers.len() >= 64 {
            continue;
        }
        for &p in &producers {
            for &c in &consumers {
                links.push((p, c));
            }
        }
    }
    for (p, c) in links {
        add_child(&mut edges, p, c);
    }

    // tf.data's own steps, and TF loops.
    let tf_data: HashSet<i64> = nodes.iter().filter(|n| TF_DATA_FUNCTIONS.contains(&n.name)).filter_map(|n| n.step_id).collect();
    let mut loops: HashMap<i64, BTreeMap<i64, Vec<usize>>> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if n.name != "ExecutorState::Process" {
            continue;
        }
        let (Some(step), Some(iter)) = (n.step_id, n.iter_num) else { continue };
        if tf_data.contains(&step) {
            continue;
        }
        loops.entry(step).or_default().entry(iter).or_default().push(i);
    }
    let mut iterations: Vec<(usize, Vec<usize>)> = Vec::new();
    for tf_loop in loops.into_values() {
        if tf_loop.len() == 1 && tf_loop.contains_key(&0) {
            continue;
        }
        for events in tf_loop.into_values() {
            let first = events.iter().copied().fold(events[0], |a, b| if nodes[b].begin < nodes[a].begin { b } else { a });
            iterations.push((first, events));
        }
    }
    let mut next_group = 0;
    if !iterations.is_empty() {
        iterations.sort_by_key(|(first, _)| (nodes[*first].begin, *first));
        for (first, events) in &iterations {
            for &e in events {
                if e != *first {
                    add_child(&mut edges, *first, e);
                }
            }
        }
        let graph = Graph::new(nodes.len(), &edges);
        for (first, _) in iterations {
            process_root(nodes, &graph, next_group, first);
            next_group += 1;
        }
        return;
    }
    let mut roots: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].root_level > 0 || (nodes[i].name == "TraceContext"))
        .filter(|&i| nodes[i].step_id.is_none_or(|s| !tf_data.contains(&s)))
        .collect();
    for &r in &roots {
        if nodes[r].root_level <= 0 {
            nodes[r].root_level = 1;
        }
    }
    roots.sort_by_key(|&r| (std::cmp::Reverse(nodes[r].root_level), nodes[r].begin, r));
    let graph = Graph::new(nodes.len(), &edges);
    for root in roots {
        if root_needs_grouping(nodes, &graph, root) {
            process_root(nodes, &graph, next_group, root);
            next_group += 1;
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
fn root_needs_grouping(nodes: &[Node<'_>], graph: &Graph, root: usize) -> bool {
    if nodes[root].group.is_some() {
        return false;
    }
    let level = nodes[root].root_level;
    let mut seen: HashSet<usize> = HashSet::from([root]);
    let mut queue: VecDeque<usize> = VecDeque::new();
    for p in graph.parents(root) {
        if seen.insert(p) {
            queue.push_back(p);
        }
    }
    while let Some(n) = queue.pop_front() {
        if nodes[n].root_level > 0 && nodes[n].root_level == level {
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
fn context_stat(nodes: &[Node<'_>], graph: &Graph, start: usize, get: impl Fn(&Node<'_>) -> Option<i64>) -> Option<i64> {
    let mut seen: HashSet<usize> = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        if let Some(v) = get(&nodes[n]) {
            return Some(v);
        }
        for p in graph.parents(n) {
            if seen.insert(p) {
                queue.push_back(p);
            }
        }
    }
    None
}

fn process_root(nodes: &mut [Node<'_>], graph: &Graph, group: i64, root: usize) {
    let mut seen: HashSet<usize> = HashSet::from([root]);
    let mut queue = VecDeque::from([root]);
    while let Some(n) = queue.pop_front() {
        if nodes[n].group.is_some() {
            continue;
        }
        nodes[n].group = Some(group);
        for c in graph.children(n) {
            if seen.insert(c) {
                queue.push_back(c);
            }
        }
    }
    // The group's name: `graph_type` or the root's name, then the step number.
    let implicit = IMPLICIT_ROOTS.contains(&nodes[root].name);
    let mut name = String::new();
    let mut graph_type = None;
    {
        let mut seen: HashSet<usize> = HashSet::from([root]);
        let mut queue = VecDeque::from([root]);
        while let Some(n) = queue.pop_front() {
            if let Some(g) = nodes[n].graph_type {
                graph_type = Some(g.to_owned());
                break;
            }
            for p in graph.parents(n) {
                if seen.insert(p) {
                    queue.push_back(p);
                }
            }
        }
    }
    if let Some(g) = graph_type {
        name.push_str(&g);
        name.push(' ');
    } else if !implicit {
        name.push_str(nodes[root].name);
        name.push(' ');
    }
    let number = context_stat(nodes, graph, root, |n| n.iter_num).or_else(|| context_stat(nodes, graph, root, |n| n.step_num)).unwrap_or(group);
    name.push_str(&number.to_string());
    if !implicit {
        nodes[root].step_name = Some(name);
    }
}

/// A step's markers and typed events, before overlaps are resolved.
#[derive(Debug, Default)]
struct Details {
    /// (is a device marker, begin, end)
    markers: Vec<(bool, i128, i128)>,
    events: Vec<(u8, i128, i128)>,
    name: String,
}

impl Details {
    fn combine(&mut self, other: Details) {
        self.markers.extend(other.markers);
        self.events.extend(other.events);
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

    fn step_info(&self, group: i64, has_device: bool) -> Option<HostStep> {
        let (begin, end) = self.step_time();
        let mut type_ps: BTreeMap<u8, i128> = BTreeMap::new();
        let mut covered = 0;
        for (t, b, e) in non_overlapped(&self.events) {
            let overlap = (end.min(e) - begin.max(b)).max(0);
            *type_ps.entry(t).or_default() += overlap;
            covered += overlap;
        }
        if covered < end - begin {
            *type_ps.entry(et::UNKNOWN_TIME).or_default() += end - begin - covered;
        }
        let well_formed = if has_device {
            type_ps.contains_key(&et::DEVICE_COMPUTE_16) || type_ps.contains_key(&et::DEVICE_COMPUTE_32)
        } else {
            type_ps.contains_key(&et::HOST_COMPUTE)
        };
        (well_formed && end > begin).then(|| HostStep { group, name: self.name.clone(), begin_ps: begin, duration_ps: end - begin, type_ps })
    }
}

/// XProf's `ToNonOverlappedEvents`: the spans between consecutive event
/// boundaries, each owned by the highest type active there (0 if none).
pub fn non_overlapped(events: &[(u8, i128, i128)]) -> Vec<(u8, i128, i128)> {
    // (time, is_start, type): ends before starts at the same time; among
    // starts or ends, higher types first.
    let mut bounds: Vec<(i128, bool, u8)> = events.iter().flat_map(|&(t, b, e)| [(b, true, t), (e, false, t)]).collect();
    bounds.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
    let mut counts = [0i64; et::LAST as usize + 1];
    let mut top = et::UNKNOWN_TIME;
    let mut out = Vec::with_capacity(bounds.len());
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

fn is_memcpy(name: &str, direction: &str) -> bool {
    parse_op(name).is_some_and(|op| op.op_type == direction)
}

/// XProf's `ConvertHostThreadsXLineToStepEvents` for every line of the host
/// plane (no devices).
fn host_step_events(plane: &Plane<'_>, nodes: &[Node<'_>], p: usize) -> BTreeMap<i64, Details> {
    let producers: HashSet<(i64, i64)> = nodes.iter().filter(|n| n.plane == p).filter_map(|n| n.producer).collect();
    let mut all: BTreeMap<i64, Details> = BTreeMap::new();
    for l in 0..plane.lines.len() {
        let line_nodes = line_nodes(nodes, p, l);
        let mut line_steps: BTreeMap<i64, Details> = BTreeMap::new();
        // (begin, end, is a stage, below a stage)
        let mut stack: Vec<(i128, i128, bool, bool)> = Vec::new();
        for n in line_nodes {
            let mut below = n.consumer.is_some_and(|c| producers.contains(&c));
            while let Some(top) = stack.last() {
                if top.0 <= n.begin && n.end <= top.1 {
                    below = below || top.3 || top.2;
                    break;
                }
                stack.pop();
            }
            stack.push((n.begin, n.end, n.ipl_stage, below));
            let root_stage = n.ipl_stage && !below;
            let Some(group) = n.group.filter(|g| *g >= 0) else { continue };
            let details = line_steps.entry(group).or_default();
            let step_name = n.step_name.as_deref().unwrap_or("");
            if is_explicit_marker(n.name) || !step_name.is_empty() {
                details.markers.push((false, n.begin, n.end));
            } else if is_real_cpu_compute(n.name) {
                let t = if n.name.starts_with("InfeedEnqueue") || is_memcpy(n.name, "MemcpyHToD") || infeed(n.name) {
                    et::HOST_TO_DEVICE
                } else if is_memcpy(n.name, "MemcpyHToH") {
                    et::HOST_TO_HOST
                } else if n.name.to_ascii_lowercase().starts_with("iteratorgetnext") || root_stage {
                    et::HOST_WAIT_INPUT
                } else {
                    et::HOST_COMPUTE
                };
                details.events.push((t, n.begin, n.end));
            }
            if !step_name.is_empty() {
                details.name = step_name.to_owned();
            }
        }
        for (group, details) in line_steps {
            all.entry(group).or_default().combine(details);
        }
    }
    all
}

/// The events of one line: [`collect`] keeps them together, in plane and
/// line order.
fn line_nodes<'n, 'a>(nodes: &'n [Node<'a>], p: usize, l: usize) -> &'n [Node<'a>] {
    let start = nodes.partition_point(|n| (n.plane, n.line) < (p, l));
    let end = nodes.partition_point(|n| (n.plane, n.line) <= (p, l));
    &nodes[start..end]
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

/// XProf's `ConvertDeviceTraceXPlaneToStepEvents` for one GPU plane: its
/// `Steps` line gives the markers, its other (not derived) lines the events,
/// and only the groups with both are kept.
fn device_step_events(nodes: &[Node<'_>], p: usize) -> BTreeMap<i64, Details> {
    let mut markers: BTreeMap<i64, Details> = BTreeMap::new();
    let mut events: BTreeMap<i64, Details> = BTreeMap::new();
    for n in nodes.iter().filter(|n| n.plane == p) {
        if n.line_id == STEP_INFO_LINE {
            if let Some(group) = n.group {
                let (b, e) = n.device_span.map_or((n.begin, n.end), |(o, d)| (i128::from(o), i128::from(o) + i128::from(d)));
                markers.entry(group).or_default().markers.push((true, b, e));
            }
        } else if (DERIVED_MIN..=DERIVED_MAX).contains(&n.line_id) {
            continue;
        } else if let (Some(_), Some(group)) = (n.correlation_id, n.group.filter(|g| *g >= 0)) {
            events.entry(group).or_default().events.push((gpu_event_type(n.name, n.shapes), n.begin, n.end));
        }
    }
    if events.is_empty() {
        return events;
    }
    events.retain(|group, _| markers.contains_key(group));
    for (group, details) in events.iter_mut() {
        if let Some(m) = markers.remove(group) {
            details.combine(m);
        }
    }
    events
}

/// XProf's `ClassifyGpuEvent`.
fn gpu_event_type(name: &str, shapes: &str) -> u8 {
    if is_memcpy(name, "MemcpyHToD") {
        et::HOST_TO_DEVICE
    } else if is_memcpy(name, "MemcpyDToH") {
        et::DEVICE_TO_HOST
    } else if is_memcpy(name, "MemcpyDToD") {
        et::DEVICE_TO_DEVICE
    } else if name.get(..4).is_some_and(|h| h.eq_ignore_ascii_case("nccl")) {
        et::DEVICE_COLLECTIVES
    } else {
        let half = if shapes.is_empty() { name.contains("half") || name.contains("fp16") } else { shapes.contains("half") };
        if half { et::DEVICE_COMPUTE_16 } else { et::DEVICE_COMPUTE_32 }
    }
}

/// Self times of tf.data and enqueue ops on the host (op events nested in
/// op events on the same line are subtracted, as in XProf's host op table).
fn input_op_self_times(plane: &Plane<'_>, nodes: &[Node<'_>], p: usize) -> (i128, i128) {
    let (mut dataset, mut enqueue) = (0, 0);
    for l in 0..plane.lines.len() {
        // (end, type is dataset/enqueue/other, duration, children's time)
        let mut stack: Vec<(i128, i128, u8, i128)> = Vec::new();
        let finish = |entry: (i128, i128, u8, i128), dataset: &mut i128, enqueue: &mut i128| {
            let own = entry.1 - entry.0 - entry.3;
            match entry.2 {
                1 => *dataset += own,
                2 => *enqueue += own,
                _ => {}
            }
        };
        for n in line_nodes(nodes, p, l) {
            let Some(op) = parse_op(n.name) else { continue };
            let kind = if op.op_type == DATASET_TYPE {
                1
            } else if op.op_type == "MemcpyHToD" || op.op_type.starts_with("InfeedEnqueue") {
                2
            } else {
                3
            };
            while let Some(&top) = stack.last() {
                if n.begin < top.1 {
                    break;
                }
                stack.pop();
                finish(top, &mut dataset, &mut enqueue);
                if let Some(parent) = stack.last_mut() {
                    parent.3 += top.1 - top.0;
                }
            }
            stack.push((n.begin, n.end, kind, 0));
        }
        while let Some(top) = stack.pop() {
            finish(top, &mut dataset, &mut enqueue);
            if let Some(parent) = stack.last_mut() {
                parent.3 += top.1 - top.0;
            }
        }
    }
    (dataset, enqueue)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_random::XorShift;

    const TF_LOOP: &[u8] = include_bytes!("../../testdata/xplane/tf_loop/plugins/profile/run0/host0.xplane.pb");

    /// XProf's four `train` steps of the fixture (tests/steps.rs checks the
    /// numbers against XProf's).
    #[test]
    fn markers_with_a_root_stat_make_the_steps() {
        let host = analyze(TF_LOOP).unwrap();
        let names: Vec<&str> = host.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["train 0", "train 1", "train 2", "train 3"]);
        assert_eq!(host.hardware, Hardware::CpuOnly);
    }

    /// Randomly corrupted traces never panic: they are refused or analyzed.
    #[test]
    fn corrupted_traces_do_not_panic() {
        let mut rng = XorShift::new(0x57e9_5eed);
        for _ in 0..400 {
            let mut bytes = TF_LOOP.to_vec();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(bytes.len() as u64) as usize;
                match rng.below(3) {
                    0 => bytes[at] = rng.below(256) as u8,
                    1 => bytes.truncate(at),
                    _ => {
                        bytes.remove(at);
                    }
                }
                if bytes.is_empty() {
                    break;
                }
            }
            if let Ok(host) = analyze(&bytes) {
                let steps = super::super::from_hosts(&[host.clone(), host]);
                let _ = super::super::render_text(&steps);
            }
        }
    }
}
