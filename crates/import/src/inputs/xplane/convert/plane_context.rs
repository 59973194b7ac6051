//! Reading a plane's lines: what the events of each metadata id run,
//! found once per plane ([`PlaneContext::new`]); then, a piece of a line
//! at a time, its executions, step markers, allocator events and kernel
//! launches ([`PlaneContext::read_piece`]): host ops by their names,
//! device ops by their stats (XLA instruction, command-buffer node, TF
//! annotation, transfer), memoized per piece; and the events by launch
//! of the command buffers that need them ([`PlaneContext::launched`]).

use std::collections::{BTreeMap, HashMap};

use prost::DecodeError;
use rustc_hash::{FxHashMap, FxHashSet};

use super::executions::{Execution, Executions};
use super::memory::{AllocatorKey, MemoryEvent, MemoryNames};
use super::ops::{CHILD_OP, LINE_OP, NO_PROGRAM, Op, OpTable, ProgramOps};
use super::{ANNOTATION_TYPE, EAGER_SCOPE, UNATTRIBUTED_TYPE};
use crate::inputs::xplane::decode::{Event, Line, Plane, Shapes, Stat, StatIds, StatValue};
use crate::inputs::xplane::hlo::{Instruction, opcode_of_name};
use crate::inputs::xplane::ids::IdMap;
use crate::inputs::xplane::names::{OpName, is_memset, parse_op, runtime_node, transfer};
use crate::inputs::xplane::planes::PlaneKind;
use crate::inputs::xplane::stats::{StatKind, StatKinds};
use crate::inputs::xplane::thunks::CommandBuffer;
use crate::stats::records::device::kernel::{self, Launch, Launches};

/// What the events of each event metadata id are: an op's id, or one of
/// the kinds below. Found once per plane, not per event.
struct EventKinds(IdMap<u32>);

impl EventKinds {
    const OTHER: u32 = u32::MAX;
    const ALLOCATION: u32 = u32::MAX - 1;
    const DEALLOCATION: u32 = u32::MAX - 2;

    fn get(&self, id: i64) -> u32 {
        self.0.get(id).unwrap_or(Self::OTHER)
    }

    fn is_op(kind: u32) -> bool {
        kind < Self::DEALLOCATION
    }

    /// The op the events run, if they run one.
    fn op(&self, id: i64) -> Option<u32> {
        Some(self.get(id)).filter(|&kind| Self::is_op(kind))
    }
}

/// The read-only facts a plane's lines are read with.
pub(super) struct PlaneContext<'p, 'a> {
    pub(super) plane: &'p Plane<'a>,
    /// Per event metadata id: the op its events run, when the name or
    /// metadata says so, or whether they are allocator events.
    kinds: EventKinds,
    /// Per XLA program: its instructions' ops.
    module_ops: &'p ProgramOps<'p>,
    stats: StatKinds,
    /// The stats [`DeviceStats::read`] reads.
    device_stats: StatIds,
    /// The plane's `device_vendor`, for the TensorCore rule.
    vendor: kernel::Vendor,
}

/// What a piece of a line holds: its executions and step markers.
pub(super) struct LineResult<'a> {
    pub(super) markers: Vec<(i64, &'a str, i128, i128)>,
    pub(super) executions: Executions,
    /// Ops named by the events themselves ([`LINE_OP`] ids).
    pub(super) own_ops: OpTable<'a>,
    pub(super) memory: Vec<MemoryEvent>,
    pub(super) memory_names: MemoryNames<'a>,
    /// Child-graph nodes of command buffers, by [`CHILD_OP`] id: their
    /// instruction is known once every launch has been read.
    pub(super) children: Vec<ChildNode>,
    child_ids: FxHashMap<ChildNode, u32>,
    /// The nodes seen of command buffers that have child graphs, for
    /// [`CommandBuffer::child_nodes`] (their events by launch are read
    /// again only where those need them: see
    /// [`child_graph_ops`](super::device_tables::child_graph_ops)).
    pub(super) buffer_nodes: FxHashSet<ChildNode>,
    /// Kernel launches by XProf's kernel key, ops as the executions'.
    pub(super) kernels: Launches<'a>,
}

/// The stats of a host event that [`PlaneContext::host_op`] reads, read
/// with the event (see [`Event::decode_with_stats`]): of an allocator
/// event, the first of each kind it reads and the last allocator stat (as
/// XProf reads them); of others, their step numbers, `hlo_op` and
/// `program_id` (the last of each).
#[derive(Default)]
struct HostStats<'a> {
    /// `addr`, `requested_bytes`, `allocation_bytes`, `tf_op`,
    /// `bytes_allocated`, `bytes_reserved`.
    first: [Option<StatValue<'a>>; 6],
    allocator: AllocatorKey<'a>,
    /// Every `step_num` that is a number, in order.
    steps: Vec<i64>,
    hlo_op: Option<&'a str>,
    program: Option<i64>,
}

/// The stats of a device event that say what it runs. Its texts are kept
/// as read ([`DeviceStats::raw`]) and looked up ([`DeviceStats::resolve`])
/// only where the memo of [`DeviceKey`]s does not know the event.
#[derive(Clone, Copy, Default)]
struct DeviceStats<'a> {
    hlo_op: Option<&'a str>,
    program: Option<i64>,
    graph_node: Option<i64>,
    launch: Option<i64>,
    /// `tf_op`, `level 0`, `annotation`.
    annotation: [Option<&'a str>; 3],
    kernel_details: Option<&'a str>,
    equation: Option<&'a str>,
    /// The last value of `hlo_op`, `tf_op`, `level 0`, `annotation`,
    /// `kernel_details` and `equation`.
    raw: [StatValue<'a>; 6],
}

impl<'a> DeviceStats<'a> {
    /// A stat's value, if it is one of these (the last of a kind is
    /// kept); whether it is.
    #[inline]
    fn read(&mut self, kind: StatKind, value: StatValue<'a>) -> bool {
        match kind {
            StatKind::HloOp => self.raw[0] = value,
            StatKind::TfOp => self.raw[1] = value,
            StatKind::Level0 => self.raw[2] = value,
            StatKind::Annotation => self.raw[3] = value,
            StatKind::KernelDetails => self.raw[4] = value,
            StatKind::Equation => self.raw[5] = value,
            StatKind::ProgramId => self.program = value.as_id(),
            StatKind::CudaGraphNodeId => self.graph_node = value.as_id(),
            StatKind::CorrelationId => self.launch = value.as_id(),
            _ => return false,
        }
        true
    }

    /// The stats as a [`DeviceKey`] of an event of `metadata_id`, where
    /// every text among them is a `ref` (or no text).
    fn key(&self, metadata_id: i64) -> Option<DeviceKey> {
        let mut texts = [u64::MAX; 6];
        for (text, raw) in texts.iter_mut().zip(&self.raw) {
            match *raw {
                StatValue::Ref(id) => *text = id,
                StatValue::Str(_) => return None,
                // (No text, as `u64::MAX`, which no `ref` resolves either.)
                _ => {}
            }
        }
        Some(DeviceKey {
            metadata_id,
            program: self.program.unwrap_or(0),
            graph_node: self.graph_node.unwrap_or(0),
            has: u8::from(self.program.is_some()) | u8::from(self.graph_node.is_some()) << 1,
            texts,
        })
    }

    /// Looks the texts up, as the plane names them.
    fn resolve(&mut self, plane: &Plane<'a>) {
        let [hlo_op, tf_op, level_0, annotation, kernel_details, equation] = self.raw.map(|v| v.as_str(plane));
        (self.hlo_op, self.annotation, self.kernel_details, self.equation) = (hlo_op, [tf_op, level_0, annotation], kernel_details, equation);
    }
}

/// What a device event runs depends on its metadata and on the stats of
/// [`DeviceStats`] but its `correlation_id`: as raw values (a text by its
/// `ref` id, as XProf's profilers intern every repeated text) they key a
/// memo of [`DeviceEvent`]s, made once per piece and key instead of once
/// per event. (JAX's kernels repeat a few hundred keys: on the 272 MB
/// jax_lstm ×91 trace, parsing `kernel_details` and matching the
/// TensorCore rules for every event took 40% of `scope`'s CPU time; with
/// the memo its user time went from 3.1 to 1.7 s, bench/README.md.)
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
struct DeviceKey {
    metadata_id: i64,
    program: i64,
    graph_node: i64,
    /// Bit 0: has a `program_id`; bit 1: a `cuda_graph_node_id`.
    has: u8,
    /// `ref` ids of `hlo_op`, `tf_op`, `level 0`, `annotation`,
    /// `kernel_details`, `equation` (`u64::MAX`: none).
    texts: [u64; 6],
}

/// What a device event runs and launches, as [`PlaneContext::device_event`]
/// works it out.
#[derive(Clone, Copy)]
struct DeviceEvent<'a> {
    /// The op, as [`LineResult::executions`] number them.
    op: u32,
    /// A node of a command buffer with child graphs (see
    /// [`LineResult::buffer_nodes`]).
    launched: Option<ChildNode>,
    /// The kernel's row key and occupancy, if it is a kernel.
    kernel: Option<(kernel::Key<'a>, f64)>,
    /// Where the key is in [`LineResult::kernels`], once it is there.
    kernel_at: Option<usize>,
}

/// A node of a command buffer's CUDA graph: (program, the buffer's first
/// thunk, node index).
pub(super) type ChildNode = (i64, i64, u32);

/// One event of a command buffer: its node, in which launch
/// (`correlation_id`), when.
#[derive(Clone, Copy, Debug)]
pub(super) struct Launched {
    pub(super) node: ChildNode,
    pub(super) launch: i64,
    pub(super) start_ps: i128,
    /// A memset (a library call's, before its kernel).
    pub(super) memset: bool,
}

/// What a device event runs.
enum DeviceOp<'a> {
    /// An op of the table (an XLA instruction).
    Known(u32),
    /// An op the event names itself (TF's annotations, transfers, the
    /// unattributed).
    Named(Op<'a>),
    /// A child-graph node of a command buffer (see [`LineResult::children`]).
    Child(ChildNode),
}

impl<'p, 'a: 'p> PlaneContext<'p, 'a> {
    pub(super) fn new(plane: &'p Plane<'a>, ops: &mut OpTable<'p>, module_ops: &'p ProgramOps<'p>, eager: Option<&'p BTreeMap<i64, (String, String)>>) -> Self {
        let stats = StatKinds::of(plane);
        // (id, kind); of one id, the last is kept.
        let mut kinds: Vec<(i64, u32)> = Vec::new();
        match PlaneKind::of(plane.name) {
            PlaneKind::Host => {
                for (id, meta) in &plane.event_metadata {
                    let kind = match (parse_op(meta.name), meta.name) {
                        (Some(OpName { name, op_type }), _) => ops.intern((runtime_node(name).unwrap_or(name), op_type, "", NO_PROGRAM)),
                        (None, "MemoryAllocation") => EventKinds::ALLOCATION,
                        (None, "MemoryDeallocation") => EventKinds::DEALLOCATION,
                        (None, _) => continue,
                    };
                    kinds.push((*id, kind));
                }
                for (id, (name, op_type)) in eager.into_iter().flatten() {
                    kinds.push((*id, ops.intern((name.as_str(), op_type.as_str(), "", NO_PROGRAM))));
                }
            }
            PlaneKind::Tpu => {
                for (id, meta) in &plane.event_metadata {
                    let framework = stats.find(meta.stats.iter().copied(), StatKind::TfOp).and_then(|v| v.as_str(plane));
                    let instruction = if meta.display_name.is_empty() { meta.name } else { meta.display_name };
                    let program = stats.find(meta.stats.iter().copied(), StatKind::ProgramId).and_then(StatValue::as_id);
                    let op = match framework.and_then(parse_op) {
                        Some(op) => ops.intern((op.name, op.op_type, instruction, program.unwrap_or(NO_PROGRAM))),
                        None => match program.and_then(|p| module_ops.op(p, instruction)) {
                            Some(op) => op,
                            None => ops.intern((instruction, opcode_of_name(instruction), instruction, program.unwrap_or(NO_PROGRAM))),
                        },
                    };
                    kinds.push((*id, op));
                }
            }
            PlaneKind::Gpu | PlaneKind::Metadata | PlaneKind::Other => {}
        }
        let device_stats = StatIds::of(|id| stats.get(id).is_some_and(|kind| DeviceStats::default().read(kind, StatValue::None)));
        let vendor = kernel::Vendor::of(stats.find(plane.stats.iter().copied(), StatKind::DeviceVendor).and_then(|v| v.as_str(plane)));
        PlaneContext { plane, kinds: EventKinds(IdMap::new(kinds)), module_ops, stats, device_stats, vendor }
    }

    /// A piece of a line: its executions (times not yet made self times)
    /// and step markers.
    pub(super) fn read_piece(&self, line: &Line<'a>, trace_bytes: usize) -> Result<LineResult<'a>, DecodeError> {
        let kind = PlaneKind::of(self.plane.name);
        let base_ps = i128::from(line.timestamp_ns) * 1000;
        let mut result = LineResult {
            markers: Vec::new(),
            executions: Executions::Heap(Vec::new()),
            own_ops: OpTable::default(),
            memory: Vec::new(),
            memory_names: MemoryNames::default(),
            children: Vec::new(),
            child_ids: FxHashMap::default(),
            buffer_nodes: FxHashSet::default(),
            kernels: Launches::default(),
        };
        let mut executions = Executions::with_room(line.most_events(), trace_bytes);
        // (Device events: see `DeviceKey`.)
        let mut memo: FxHashMap<DeviceKey, usize> = FxHashMap::default();
        let mut memoized: Vec<DeviceEvent<'a>> = Vec::new();
        let mut host_stats = HostStats::default();
        // (Device events by their shapes: see `Shapes`.)
        let mut device_shapes = Shapes::new(self.device_stats);
        for wire in line.checked_event_wires() {
            let wire = wire?;
            let mut stats = DeviceStats::default();
            // (Host and device events are read with their stats in one pass.)
            let event = match kind {
                PlaneKind::Gpu => device_shapes.decode(wire, |stat| self.device_stat(&mut stats, stat))?,
                PlaneKind::Host => {
                    let mut steps = std::mem::take(&mut host_stats.steps);
                    steps.clear();
                    host_stats = HostStats { steps, ..HostStats::default() };
                    Event::decode_with_stats(wire, |stat| self.host_stat(&mut host_stats, stat))?
                }
                _ => Event::decode(wire)?,
            };
            let duration_ps = event.duration_ps.max(0);
            let op = match kind {
                PlaneKind::Host => self.host_op(&event, &host_stats, base_ps, &mut result),
                PlaneKind::Gpu => {
                    let mut fresh;
                    let device = match stats.key(event.metadata_id) {
                        Some(key) => {
                            let next = memoized.len();
                            let at = *memo.entry(key).or_insert(next);
                            if at == next {
                                stats.resolve(self.plane);
                                memoized.push(self.device_event(&event, &stats, &mut result));
                                result.buffer_nodes.extend(memoized[at].launched);
                            }
                            &mut memoized[at]
                        }
                        None => {
                            stats.resolve(self.plane);
                            fresh = self.device_event(&event, &stats, &mut result);
                            result.buffer_nodes.extend(fresh.launched);
                            &mut fresh
                        }
                    };
                    if let Some((key, occupancy_pct)) = device.kernel {
                        let duration_ns = event.duration_ps.max(0) / 1000;
                        match device.kernel_at {
                            Some(at) => result.kernels.add_at(at, duration_ns),
                            None => device.kernel_at = result.kernels.add(key, Some(occupancy_pct), duration_ns),
                        }
                    }
                    Some(device.op)
                }
                PlaneKind::Tpu => self.kinds.op(event.metadata_id),
                PlaneKind::Metadata | PlaneKind::Other => None,
            };
            let Some(op) = op else { continue };
            let time_ps = match kind {
                PlaneKind::Tpu => self.stats.find(event.stats(), StatKind::DeviceDurationPs).and_then(StatValue::as_i64).map_or(duration_ps, |d| d.max(0)),
                _ => duration_ps,
            };
            let runs = if event.num_occurrences > 0 { event.num_occurrences } else { 1 };
            executions.push(Execution { op, offset_ps: event.offset_ps, duration_ps, time_ps, runs });
        }
        Ok(LineResult { executions: executions.finished(), ..result })
    }

    /// One stat of a host event, into what [`PlaneContext::host_op`] reads.
    #[inline]
    fn host_stat(&self, stats: &mut HostStats<'a>, stat: Stat<'a>) {
        let Some(kind) = self.stats.get(stat.metadata_id) else { return };
        let first = match kind {
            StatKind::Address => 0,
            StatKind::RequestedBytes => 1,
            StatKind::AllocationBytes => 2,
            StatKind::TfOp => 3,
            StatKind::BytesAllocated => 4,
            StatKind::BytesReserved => 5,
            StatKind::AllocatorName => return stats.allocator = AllocatorKey::Name(stat.value.as_str(self.plane).unwrap_or("")),
            StatKind::IndexOnHost | StatKind::DeviceOrdinal => return stats.allocator = AllocatorKey::Index(stat.value.as_i64().unwrap_or(0)),
            StatKind::StepNum => return stats.steps.extend(stat.value.as_i64()),
            StatKind::HloOp => return stats.hlo_op = stat.value.as_str(self.plane),
            StatKind::ProgramId => return stats.program = stat.value.as_id(),
            _ => return,
        };
        stats.first[first].get_or_insert(stat.value);
    }

    /// A host event's op, noting step markers and allocator events on the
    /// way (`stats`: its stats, [`PlaneContext::host_stat`]).
    fn host_op(&self, event: &Event<'a>, stats: &HostStats<'a>, base_ps: i128, result: &mut LineResult<'a>) -> Option<u32> {
        let kind = self.kinds.get(event.metadata_id);
        if EventKinds::is_op(kind) {
            return Some(kind);
        }
        if kind == EventKinds::ALLOCATION || kind == EventKinds::DEALLOCATION {
            let [addr, requested, bytes, tf_op, allocated, reserved] = stats.first;
            result.memory.push(MemoryEvent {
                time_ps: base_ps + i128::from(event.offset_ps),
                allocation: kind == EventKinds::ALLOCATION,
                allocator: result.memory_names.allocator(stats.allocator),
                addr: addr.and_then(StatValue::as_id).unwrap_or(0),
                requested: requested.and_then(StatValue::as_i64).unwrap_or(0),
                bytes: bytes.and_then(StatValue::as_i64).unwrap_or(0),
                tf_op: result.memory_names.tf_op(tf_op.and_then(|v| v.as_str(self.plane)).unwrap_or("")),
                in_use: [allocated, reserved].into_iter().map(|v| v.and_then(StatValue::as_i64).unwrap_or(0)).fold(0, i64::wrapping_add),
            });
            return None;
        }
        for &step in &stats.steps {
            let name = self.plane.event_name(event.metadata_id);
            let start_ps = base_ps + i128::from(event.offset_ps);
            result.markers.push((step, name, start_ps, start_ps + i128::from(event.duration_ps.max(0))));
        }
        // (An instruction the program's HloProto does not list is no op.)
        self.module_ops.op(stats.program?, stats.hlo_op?)
    }

    /// What a device event runs ([`PlaneContext::device_op`]) and launches
    /// ([`PlaneContext::kernel`]), its op numbered as the piece's
    /// executions number them.
    fn device_event(&self, event: &Event<'a>, stats: &DeviceStats<'a>, result: &mut LineResult<'a>) -> DeviceEvent<'a> {
        let mut launched = None;
        let (op, instruction) = self.device_op(event, stats, &mut launched);
        let op = match op {
            DeviceOp::Known(op) => op,
            DeviceOp::Named(op) => result.own_ops.intern(op) | LINE_OP,
            DeviceOp::Child(node) => {
                let next = result.children.len() as u32;
                let id = *result.child_ids.entry(node).or_insert(next);
                if id == next {
                    result.children.push(node);
                }
                id | CHILD_OP
            }
        };
        DeviceEvent { op, launched, kernel: self.kernel(event, stats, instruction, op), kernel_at: None }
    }

    /// A device event's op (kernel, memset, memcpy): the XLA instruction its
    /// `hlo_op` names in its `program_id`'s module (XProf's rule), or, in a
    /// command buffer, the instruction of its graph node (see
    /// [`thunks`](crate::inputs::xplane::thunks)), noting in `launched` a
    /// node of a buffer with child graphs; without `hlo_op`, the op of TF's
    /// annotation; a memcpy with neither is a transfer. What names no known
    /// op is `(unattributed)/<what it names>`, never dropped.
    fn device_op(&self, event: &Event<'a>, stats: &DeviceStats<'a>, launched: &mut Option<ChildNode>) -> (DeviceOp<'a>, Option<&'p Instruction>) {
        let DeviceStats { hlo_op, program, annotation, .. } = *stats;
        if let Some(hlo_op) = hlo_op {
            let instruction = instruction_name(hlo_op);
            if let Some((op, ins)) = program.and_then(|p| self.module_ops.instruction(p, instruction)) {
                return (DeviceOp::Known(op), Some(ins));
            }
            if let Some((child, commands)) = self.command_buffer_node(instruction, stats) {
                let (program, _, node) = child;
                if commands.has_nested() {
                    *launched = Some(child);
                }
                let command = commands.commands.get(node as usize).and_then(|c| self.module_ops.instruction_at(program, c.instruction));
                return match command {
                    Some((op, ins)) => (DeviceOp::Known(op), Some(ins)),
                    None if node as usize >= commands.commands.len() => (DeviceOp::Child(child), None),
                    None => (DeviceOp::Named((instruction, UNATTRIBUTED_TYPE, "", NO_PROGRAM)), None),
                };
            }
            return (DeviceOp::Named((instruction, UNATTRIBUTED_TYPE, "", NO_PROGRAM)), None);
        }
        if let Some(text) = annotation.into_iter().flatten().next() {
            // The outermost annotation, without memcpy details (`#id=…#`).
            let text = text.split("::").next().unwrap_or(text);
            let text = text.split('#').next().unwrap_or(text).trim();
            match parse_op(text) {
                Some(op) => return (DeviceOp::Named((op.name, op.op_type, "", NO_PROGRAM)), None),
                // Work TF annotates without an op (`MakeTensorFromProto`): a
                // node of its own, under `(annotation)/`.
                None if !text.is_empty() => return (DeviceOp::Named((text, ANNOTATION_TYPE, "", NO_PROGRAM)), None),
                None => {}
            }
        }
        let name = self.plane.event_name(event.metadata_id);
        match transfer(name) {
            Some((node, op_type)) => (DeviceOp::Named((node, op_type, "", NO_PROGRAM)), None),
            None => (DeviceOp::Named((name, UNATTRIBUTED_TYPE, "", NO_PROGRAM)), None),
        }
    }

    /// The command-buffer node a device event ran, if its `hlo_op` names
    /// (as `instruction`) a command buffer of its program: the node and the
    /// buffer's commands.
    fn command_buffer_node(&self, instruction: &str, stats: &DeviceStats<'a>) -> Option<(ChildNode, &'p CommandBuffer)> {
        let buffer = instruction.strip_prefix("command_buffer_").and_then(|n| n.parse::<i64>().ok())?;
        let (program, node) = (stats.program?, stats.graph_node?);
        let commands = self.module_ops.programs.get(program)?.command_buffer(buffer)?;
        Some(((program, buffer, (node & 0xffff_ffff) as u32), commands))
    }

    /// The events of the command buffers `wanted` (program, first thunk)
    /// in a piece of a GPU line, in file order: the nodes each launch ran,
    /// when (see [`child_graph_ops`](super::device_tables::child_graph_ops)).
    pub(super) fn launched(&self, line: &Line<'a>, wanted: &FxHashSet<(i64, i64)>) -> Result<Vec<Launched>, DecodeError> {
        let base_ps = i128::from(line.timestamp_ns) * 1000;
        let mut memo: FxHashMap<DeviceKey, Option<ChildNode>> = FxHashMap::default();
        let node = |stats: &DeviceStats<'a>| {
            let mut stats = *stats;
            stats.resolve(self.plane);
            let stats = &stats;
            let instruction = instruction_name(stats.hlo_op?);
            // (A known instruction is not its buffer's, as in `device_op`.)
            if stats.program.and_then(|p| self.module_ops.instruction(p, instruction)).is_some() {
                return None;
            }
            self.command_buffer_node(instruction, stats).map(|(child, _)| child).filter(|child| wanted.contains(&(child.0, child.1)))
        };
        let mut launched = Vec::new();
        for wire in line.event_wires() {
            let mut stats = DeviceStats::default();
            let event = Event::decode_with_wanted_stats(wire, &self.device_stats, |stat| self.device_stat(&mut stats, stat))?;
            let child = match stats.key(event.metadata_id) {
                Some(key) => *memo.entry(key).or_insert_with(|| node(&stats)),
                None => node(&stats),
            };
            if let Some(child) = child {
                let memset = is_memset(self.plane.event_name(event.metadata_id));
                launched.push(Launched { node: child, launch: stats.launch.unwrap_or(-1), start_ps: base_ps + i128::from(event.offset_ps), memset });
            }
        }
        Ok(launched)
    }

    /// One stat of a device event, into the stats that say what it runs
    /// (see [`DeviceStats::read`]).
    #[inline]
    fn device_stat(&self, stats: &mut DeviceStats<'a>, stat: Stat<'a>) {
        if let Some(kind) = self.stats.get(stat.metadata_id) {
            stats.read(kind, stat.value);
        }
    }

    /// A kernel launch (an event with `kernel_details`), for the kernel
    /// table: XProf's fields and TensorCore rules, the op to name later.
    fn kernel(&self, event: &Event<'a>, stats: &DeviceStats<'a>, instruction: Option<&Instruction>, op: u32) -> Option<(kernel::Key<'a>, f64)> {
        let details = stats.kernel_details.filter(|d| !d.is_empty())?;
        let name = self.plane.event_name(event.metadata_id);
        let launch = Launch::parse(details);
        let uses_tensor_core = kernel::uses_tensor_core(name, self.vendor);
        // XProf: from the `tf_op` (TF's op, JAX's `XlaModule:`), then the
        // instruction's framework op where `hlo_op` resolves.
        let mut eligible = stats.annotation[0].is_some_and(|tf_op| {
            let tf_name = parse_op(tf_op).map_or(tf_op, |o| o.name);
            stats.equation.is_some_and(kernel::einsum_tensor_core_eligible) || kernel::op_tensor_core_eligible(tf_name) || uses_tensor_core
        });
        if let Some(ins) = instruction {
            eligible = kernel::op_tensor_core_eligible(&ins.op_name) || eligible;
        }
        let key = kernel::Key {
            name,
            grid_dim: launch.grid_dim,
            block_dim: launch.block_dim,
            registers_per_thread: launch.registers_per_thread,
            static_shmem_bytes: launch.static_shmem_bytes,
            dynamic_shmem_bytes: launch.dynamic_shmem_bytes,
            uses_tensor_core,
            op_tensor_core_eligible: eligible,
            op,
        };
        Some((key, launch.occupancy_pct))
    }
}

/// `(eager)/<type>` for each `EagerLocalExecute: <type>` event metadata of
/// each host plane, function calls (`__inference_…`) excepted: their ops are
/// counted where they run.
pub(super) fn eager_names(planes: &[Plane<'_>]) -> HashMap<usize, BTreeMap<i64, (String, String)>> {
    let mut all = HashMap::new();
    for (index, plane) in planes.iter().enumerate() {
        if PlaneKind::of(plane.name) != PlaneKind::Host {
            continue;
        }
        let names: BTreeMap<i64, (String, String)> = plane
            .event_metadata
            .iter()
            .filter_map(|(id, meta)| {
                let op_type = meta.name.strip_prefix("EagerLocalExecute: ")?.trim();
                (!op_type.is_empty() && !op_type.starts_with("__")).then(|| (*id, (format!("{EAGER_SCOPE}/{op_type}"), op_type.to_owned())))
            })
            .collect();
        all.insert(index, names);
    }
    all
}

/// The instruction an `hlo_op` stat names: its last `::` part (a module
/// compiled while profiling marks its buffers `(disabled for profiling)`).
fn instruction_name(hlo_op: &str) -> &str {
    let instruction = hlo_op.rsplit("::").next().unwrap_or(hlo_op);
    instruction.strip_suffix(" (disabled for profiling)").unwrap_or(instruction)
}
