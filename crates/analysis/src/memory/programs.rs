//! What each XLA program holds at its own peak, from the buffer assignment
//! XLA saved with it: the numbers of XProf's `memory_viewer`.
//!
//! A JAX trace's allocator events name no op, so the allocator's replay
//! ([`super::analyze`]) shows a JAX program's bytes as `(untracked)`. The
//! trace's `/host:metadata` plane keeps each program's `HloProto`, and its
//! buffer assignment says which instruction defines each logical buffer,
//! which allocation holds it (parameters, outputs, constants: for the whole
//! run; temporaries: one heap, laid out by XLA's heap simulator) and the
//! simulator's order of allocations, frees and shares. Replaying that order
//! gives the program's peak and the buffers live there, each with its
//! instruction and its JAX op (the instruction's `op_name`). These are
//! compile-time numbers: the same for every run of the program.
//!
//! XProf's rules, as XProf 2.24.2 applies them (its C++ source,
//! `hlo_proto_to_memory_visualization_utils.cc`, differs where noted):
//! - Memory color 0 (device memory) only.
//! - The heap simulator trace read is the one whose first event's buffer
//!   lies in the first (by index) allocation that is not indefinite, else
//!   the trace with the most events of color 0. Every event adds a point to
//!   the heap curve, taken before the event; a last point follows the last
//!   event.
//! - `ALLOC` adds the buffer's size; `FREE` takes a reference away from the
//!   buffer's canonical buffer (the end of its `SHARE_WITH` chain) and, at
//!   the last one, subtracts the canonical buffer's size; `SHARE_WITH` adds
//!   a reference to the canonical buffer, and its size when that is the
//!   first (the memory is reused after a free). The peak is the first
//!   event that reaches the highest heap; the buffers live then are listed
//!   in the order they became live, a reused canonical buffer under the
//!   name of the buffer that reused it. A free of a buffer with no
//!   reference left, a heap below 0, or buffers of more than one
//!   allocation in the trace make the program fail, as in XProf.
//! - Indefinite allocations (entry parameters, constants, maybe-live-out
//!   outputs; thread-local ones are not, in 2.24.2) add their size to every
//!   point, and each is listed at the peak as its largest logical buffer
//!   (an allocation whose buffers are all of size 0 counts nowhere).
//! - A buffer's unpadded size is its shape's bytes without layout padding.
//!
//! XProf groups buffers under 16 KiB into one `small` entry; here every
//! buffer is listed.

use rustc_hash::FxHashMap;

use crate::inputs::xplane::hlo::{self, Program, Programs};
use crate::proto::xla;

/// XProf's heap objects smaller than this are one `small (<16384 bytes)` entry.
pub const XPROF_SMALL_BUFFER_BYTES: i64 = 16 * 1024;

/// One XLA program's memory.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramMemory {
    /// The job whose trace holds it ("" for one trace).
    pub job: String,
    pub program_id: i64,
    /// The module's name (`jit_step`).
    pub module: String,
    /// Whether the trace ran it (an XLA instruction of it ran on a device).
    pub ran: bool,
    /// The heap, or why XProf's memory viewer fails on the program.
    pub heap: Result<Heap, String>,
}

/// A program's memory by XLA's buffer assignment (XProf's
/// `PreprocessResult`, in bytes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Heap {
    pub entry_computation: String,
    /// The highest heap, indefinite allocations included (XProf's
    /// `peakHeapMib`).
    pub peak_bytes: i64,
    /// The same, each heap-simulated buffer counted by its unpadded size.
    pub peak_unpadded_bytes: i64,
    /// What the indefinite allocations add to every point.
    pub indefinite_bytes: i64,
    /// The heap simulator event that reached the peak (an index into
    /// [`Heap::curve`], whose point there is the heap before it).
    pub peak_event: usize,
    /// Bytes in use before each heap simulator event (named by the event's
    /// instruction), then after the last (named ""); indefinite
    /// allocations included.
    pub curve: Vec<HeapPoint>,
    /// The buffers live at the peak: the indefinite ones (by allocation),
    /// then the heap's in the order they became live.
    pub live_at_peak: Vec<Buffer>,
    /// Every allocation but thread-local ones (XLA's
    /// `ComputeTotalAllocationBytes`).
    pub total_allocation_bytes: i64,
    /// Entry parameters, constants and maybe-live-out allocations (XLA's
    /// `ComputeIndefiniteAllocationsInBytes`).
    pub indefinite_allocation_bytes: i64,
    /// How many allocations those are.
    pub indefinite_allocations: usize,
    pub parameter_bytes: i64,
    /// Allocations that may be live out of the program.
    pub output_bytes: i64,
    /// Thread-local and tuple allocations.
    pub non_reusable_bytes: i64,
}

/// A point of [`Heap::curve`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeapPoint {
    pub instruction: String,
    pub bytes: i64,
    pub unpadded_bytes: i64,
}

/// A logical buffer live at the peak.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Buffer {
    pub logical_buffer: i64,
    /// The instruction that defines it.
    pub instruction: String,
    /// Which element of the instruction's (tuple) result it is; empty for
    /// the whole result.
    pub shape_index: Vec<i64>,
    pub opcode: String,
    /// The instruction's `op_name` (JAX's name stack, or TF's op); empty
    /// where it names none.
    pub op_name: String,
    /// Its shape with layout, as XLA prints it.
    pub shape: String,
    pub bytes: i64,
    pub unpadded_bytes: i64,
    pub kind: BufferKind,
}

impl Buffer {
    /// `fusion.3{1}`: the instruction and the shape index (XProf's
    /// `instructionName`).
    pub fn instruction_with_index(&self) -> String {
        if self.shape_index.is_empty() {
            return self.instruction.clone();
        }
        let index: Vec<String> = self.shape_index.iter().map(i64::to_string).collect();
        format!("{}{{{}}}", self.instruction, index.join(","))
    }
}

/// What holds a buffer: XProf's group names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BufferKind {
    Parameter,
    Output,
    ThreadLocal,
    Constant,
    #[default]
    Temporary,
}

impl BufferKind {
    fn of(allocation: &xla::BufferAllocationProto) -> BufferKind {
        if allocation.is_entry_computation_parameter {
            BufferKind::Parameter
        } else if allocation.maybe_live_out {
            BufferKind::Output
        } else if allocation.is_thread_local {
            BufferKind::ThreadLocal
        } else if allocation.is_constant {
            BufferKind::Constant
        } else {
            BufferKind::Temporary
        }
    }

    /// XProf's name (`Parameter`, `Output`, `Thread-local`, `Constant`,
    /// `Temporary`).
    pub fn as_str(self) -> &'static str {
        match self {
            BufferKind::Parameter => "Parameter",
            BufferKind::Output => "Output",
            BufferKind::ThreadLocal => "Thread-local",
            BufferKind::Constant => "Constant",
            BufferKind::Temporary => "Temporary",
        }
    }
}

impl ProgramMemory {
    /// The memory of `program`, of `job`'s trace.
    pub fn of(job: &str, program: &Program, ran: bool) -> ProgramMemory {
        ProgramMemory { job: job.to_owned(), program_id: program.id, module: program.module.clone(), ran, heap: heap(program) }
    }
}

/// Every program of a trace (`XSpace` bytes), by program id, none marked
/// as run (XProf's memory viewer lists them all).
pub fn of_trace(wire: &[u8]) -> Result<Vec<ProgramMemory>, prost::DecodeError> {
    Ok(Programs::from_space(wire)?.iter().map(|p| ProgramMemory::of("", p, false)).collect())
}

/// The memory of one program.
pub fn heap(program: &Program) -> Result<Heap, String> {
    let assignment = program.buffer_assignment().map_err(|e| format!("its buffer assignment does not decode ({e})"))?;
    if assignment.buffer_allocations.is_empty() && assignment.logical_buffers.is_empty() {
        return Err("the trace keeps no buffer assignment for it".into());
    }
    Assignment::new(program.proto(), assignment)?.heap()
}

/// Allocations that live for the whole run (XProf 2.24.2: thread-local
/// ones are not among them).
fn indefinite(allocation: &xla::BufferAllocationProto) -> bool {
    allocation.is_entry_computation_parameter || allocation.is_constant || allocation.maybe_live_out
}

/// The memory color read: device memory.
const COLOR: i64 = 0;

/// A logical buffer with what it belongs to.
struct Logical<'a> {
    proto: &'a xla::LogicalBufferProto,
    allocation: &'a xla::BufferAllocationProto,
    instruction: &'a xla::HloInstructionProto,
    unpadded: i64,
}

/// The buffer assignment, indexed.
struct Assignment<'a> {
    module: &'a xla::HloModuleProto,
    proto: &'a xla::BufferAssignmentProto,
    logical: Vec<Logical<'a>>,
    slot: FxHashMap<i64, usize>,
    /// Allocations by index (a repeated index: the last).
    allocations: Vec<&'a xla::BufferAllocationProto>,
}

impl<'a> Assignment<'a> {
    fn new(module: &'a xla::HloModuleProto, proto: &'a xla::BufferAssignmentProto) -> Result<Assignment<'a>, String> {
        let instructions: FxHashMap<i64, &xla::HloInstructionProto> = module.computations.iter().flat_map(|c| &c.instructions).map(|i| (i.id, i)).collect();
        let logical_protos: FxHashMap<i64, &xla::LogicalBufferProto> = proto.logical_buffers.iter().map(|l| (l.id, l)).collect();
        let mut by_index: FxHashMap<i64, &xla::BufferAllocationProto> = FxHashMap::default();
        let mut assignment = Assignment { module, proto, logical: Vec::new(), slot: FxHashMap::default(), allocations: Vec::new() };
        for allocation in &proto.buffer_allocations {
            by_index.insert(allocation.index, allocation);
            for assigned in &allocation.assigned {
                // (XProf logs and skips what names nothing.)
                let Some(&logical) = logical_protos.get(&assigned.logical_buffer_id) else { continue };
                let defined = logical.defined_at.clone().unwrap_or_default();
                let Some(&instruction) = instructions.get(&defined.instruction_id) else { continue };
                let shape = instruction.shape.as_ref().and_then(|s| hlo::subshape(s, &defined.shape_index)).ok_or_else(|| {
                    format!("logical buffer {} is element {:?} of {}, whose shape has none", logical.id, defined.shape_index, instruction.name)
                })?;
                let entry = Logical { proto: logical, allocation, instruction, unpadded: hlo::unpadded_bytes(shape) };
                match assignment.slot.get(&logical.id) {
                    Some(&at) => assignment.logical[at] = entry,
                    None => {
                        assignment.slot.insert(logical.id, assignment.logical.len());
                        assignment.logical.push(entry);
                    }
                }
            }
        }
        let mut allocations: Vec<_> = by_index.into_values().collect();
        allocations.sort_by_key(|a| a.index);
        assignment.allocations = allocations;
        Ok(assignment)
    }

    fn get(&self, id: i64) -> Option<usize> {
        self.slot.get(&id).copied()
    }

    /// The heap simulator trace XProf reads, if any.
    fn trace(&self) -> Option<&'a xla::HeapSimulatorTrace> {
        let traces = &self.proto.heap_simulator_traces;
        // Each allocation's trace: the last whose first event is one of
        // its buffers.
        let mut trace_of: FxHashMap<i64, usize> = FxHashMap::default();
        for (i, trace) in traces.iter().enumerate() {
            if let Some(at) = trace.events.first().and_then(|e| self.get(e.buffer_id)) {
                trace_of.insert(self.logical[at].allocation.index, i);
            }
        }
        let by_allocation = self.allocations.iter().filter(|a| a.color == COLOR && !indefinite(a)).find_map(|a| trace_of.get(&a.index).copied());
        let id = by_allocation.or_else(|| {
            let mut best: Option<(usize, usize)> = None;
            for (i, trace) in traces.iter().enumerate() {
                let count = trace.events.iter().filter(|e| self.get(e.buffer_id).is_some_and(|at| self.logical[at].proto.color == COLOR)).count();
                if count > best.map_or(0, |b| b.1) {
                    best = Some((i, count));
                }
            }
            best.map(|b| b.0)
        })?;
        traces.get(id)
    }

    fn heap(&self) -> Result<Heap, String> {
        let mut heap = Heap { entry_computation: self.module.entry_computation_name.clone(), ..Heap::default() };
        let mut live_ids = Vec::new();
        let mut display = FxHashMap::default();
        if let Some(trace) = self.trace() {
            let mut sim = Simulation::new(self, false);
            for event in &trace.events {
                sim.step(event, &mut heap.curve)?;
            }
            heap.curve.push(HeapPoint { instruction: String::new(), bytes: sim.heap, unpadded_bytes: sim.unpadded });
            if sim.allocations.len() != 1 {
                return Err(format!("its heap simulation holds buffers of {} allocations, not one", sim.allocations.len()));
            }
            heap.peak_bytes = sim.peak;
            heap.peak_unpadded_bytes = sim.peak_unpadded;
            heap.peak_event = sim.peak_event;
            // Replayed to the peak for the buffers then live.
            if sim.peak_set {
                let mut again = Simulation::new(self, true);
                let mut scratch = Vec::new();
                for event in &trace.events[..=sim.peak_event] {
                    again.step(event, &mut scratch)?;
                }
                live_ids = again.live.into_iter().flatten().collect();
                display = again.display;
            }
        }
        // Indefinite allocations: each as its largest buffer.
        let mut live = Vec::new();
        for allocation in self.allocations.iter().filter(|a| a.color == COLOR && indefinite(a)) {
            let mut best: Option<usize> = None;
            let mut best_size = 0u64;
            for assigned in &allocation.assigned {
                let Some(at) = self.get(assigned.logical_buffer_id) else { continue };
                if self.logical[at].proto.size as u64 > best_size {
                    best_size = self.logical[at].proto.size as u64;
                    best = Some(at);
                }
            }
            if let Some(at) = best {
                heap.indefinite_bytes = heap.indefinite_bytes.wrapping_add(allocation.size);
                live.push(self.buffer(at));
            }
        }
        for id in live_ids {
            let shown = display.get(&id).copied().unwrap_or(id);
            // (XProf stops at a buffer it cannot find.)
            let Some(at) = self.get(shown) else { break };
            live.push(self.buffer(at));
        }
        heap.live_at_peak = live;
        let add = heap.indefinite_bytes;
        heap.peak_bytes = heap.peak_bytes.wrapping_add(add);
        heap.peak_unpadded_bytes = heap.peak_unpadded_bytes.wrapping_add(add);
        for point in &mut heap.curve {
            point.bytes = point.bytes.wrapping_add(add);
            point.unpadded_bytes = point.unpadded_bytes.wrapping_add(add);
        }
        let sum = |keep: &dyn Fn(&xla::BufferAllocationProto) -> bool, all: &mut dyn Iterator<Item = &xla::BufferAllocationProto>| {
            all.filter(|a| a.color == COLOR && keep(a)).fold(0i64, |s, a| s.wrapping_add(a.size))
        };
        let mine = || self.allocations.iter().copied();
        heap.parameter_bytes = sum(&|a| a.is_entry_computation_parameter, &mut mine());
        heap.output_bytes = sum(&|a| a.maybe_live_out, &mut mine());
        heap.non_reusable_bytes = sum(&|a| a.is_thread_local || a.is_tuple, &mut mine());
        // (XLA's own sums read every allocation as the proto lists them.)
        heap.total_allocation_bytes = sum(&|a| !a.is_thread_local, &mut self.proto.buffer_allocations.iter());
        heap.indefinite_allocation_bytes = sum(&indefinite, &mut self.proto.buffer_allocations.iter());
        heap.indefinite_allocations = mine().filter(|a| a.color == COLOR && indefinite(a)).count();
        Ok(heap)
    }

    fn buffer(&self, at: usize) -> Buffer {
        let l = &self.logical[at];
        let defined = l.proto.defined_at.clone().unwrap_or_default();
        // XProf shows the element the last index names (the whole shape
        // where it names none).
        let shape = l.instruction.shape.clone().unwrap_or_default();
        let shown = defined.shape_index.last().and_then(|&i| usize::try_from(i).ok()).and_then(|i| shape.tuple_shapes.get(i)).unwrap_or(&shape);
        Buffer {
            logical_buffer: l.proto.id,
            instruction: l.instruction.name.clone(),
            shape_index: defined.shape_index,
            opcode: l.instruction.opcode.clone(),
            op_name: l.instruction.metadata.as_ref().map(|m| m.op_name.clone()).unwrap_or_default(),
            shape: hlo::shape_text(shown),
            bytes: l.proto.size,
            unpadded_bytes: l.unpadded,
            kind: BufferKind::of(l.allocation),
        }
    }
}

/// The heap simulator's events replayed.
struct Simulation<'s, 'a> {
    assignment: &'s Assignment<'a>,
    refs: Vec<i64>,
    canonical: Vec<Option<usize>>,
    heap: i64,
    unpadded: i64,
    peak: i64,
    peak_unpadded: i64,
    peak_event: usize,
    peak_set: bool,
    events: usize,
    allocations: Vec<i64>,
    /// With `track`: the ids that became live, in order (`None` once freed),
    /// and where each id is in that list.
    track: bool,
    live: Vec<Option<i64>>,
    positions: FxHashMap<i64, Vec<usize>>,
    /// A reused canonical buffer → the buffer that reused it last.
    display: FxHashMap<i64, i64>,
}

impl<'s, 'a> Simulation<'s, 'a> {
    fn new(assignment: &'s Assignment<'a>, track: bool) -> Self {
        let n = assignment.logical.len();
        Simulation {
            assignment,
            refs: vec![0; n],
            canonical: vec![None; n],
            heap: 0,
            unpadded: 0,
            peak: 0,
            peak_unpadded: 0,
            peak_event: 0,
            peak_set: false,
            events: 0,
            allocations: Vec::new(),
            track,
            live: Vec::new(),
            positions: FxHashMap::default(),
            display: FxHashMap::default(),
        }
    }

    /// The end of `at`'s `SHARE_WITH` chain; a chain that loops is an error
    /// (XProf would recurse without end).
    fn root(&self, mut at: usize) -> Result<usize, String> {
        for _ in 0..=self.canonical.len() {
            match self.canonical[at] {
                Some(next) => at = next,
                None => return Ok(at),
            }
        }
        Err(format!("logical buffer {} shares with itself", self.assignment.logical[at].proto.id))
    }

    fn step(&mut self, event: &xla::heap_simulator_trace::Event, curve: &mut Vec<HeapPoint>) -> Result<(), String> {
        let index = self.events;
        self.events += 1;
        curve.push(HeapPoint { instruction: event.instruction_name.clone(), bytes: self.heap, unpadded_bytes: self.unpadded });
        let Some(at) = self.assignment.get(event.buffer_id) else { return Ok(()) };
        let allocation = self.assignment.logical[at].allocation.index;
        if !self.allocations.contains(&allocation) {
            self.allocations.push(allocation);
        }
        use xla::heap_simulator_trace::event::Kind;
        match Kind::try_from(event.kind) {
            Ok(Kind::Alloc) => {
                let root = self.root(at)?;
                self.refs[root] += 1;
                self.increase(at, index);
            }
            Ok(Kind::Free) => {
                let root = self.root(at)?;
                self.refs[root] -= 1;
                if self.refs[root] < 0 {
                    return Err(format!("logical buffer {} is freed more often than allocated", self.assignment.logical[at].proto.id));
                }
                if self.refs[root] == 0 {
                    let buffer = self.assignment.logical[root].proto;
                    if self.track {
                        for p in self.positions.remove(&buffer.id).unwrap_or_default() {
                            self.live[p] = None;
                        }
                    }
                    self.heap = self.heap.wrapping_sub(buffer.size);
                    if self.heap < 0 {
                        return Err(format!("its heap falls below 0 ({} bytes) at {}", self.heap, event.instruction_name));
                    }
                    self.unpadded = self.unpadded.wrapping_sub(self.assignment.logical[root].unpadded);
                }
            }
            Ok(Kind::ShareWith) => {
                let Some(canonical) = self.assignment.get(event.share_with_canonical_id) else { return Ok(()) };
                self.canonical[at] = Some(canonical);
                let root = self.root(canonical)?;
                self.refs[root] += 1;
                if self.refs[root] == 1 {
                    self.display.insert(self.assignment.logical[root].proto.id, self.assignment.logical[at].proto.id);
                    self.increase(root, index);
                }
            }
            Err(_) => return Err(format!("its heap simulator trace has an event of unknown kind {}", event.kind)),
        }
        Ok(())
    }

    fn increase(&mut self, at: usize, event: usize) {
        let l = &self.assignment.logical[at];
        if self.track {
            self.positions.entry(l.proto.id).or_default().push(self.live.len());
            self.live.push(Some(l.proto.id));
        }
        self.heap = self.heap.wrapping_add(l.proto.size);
        self.unpadded = self.unpadded.wrapping_add(l.unpadded);
        if self.heap > self.peak {
            self.peak = self.heap;
            self.peak_unpadded = self.unpadded;
            self.peak_event = event;
            self.peak_set = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;
    use xla::heap_simulator_trace::{Event, event::Kind};

    /// The JAX GPU fixtures' programs, module and buffer assignment.
    fn fixture_programs() -> Vec<(xla::HloModuleProto, xla::BufferAssignmentProto)> {
        let mut out = Vec::new();
        for fixture in ["jax_gpu_mlp", "jax_gpu_lstm", "jax_gpu_cnn"] {
            let path = format!("{}/testdata/xplane/{fixture}/plugins/profile/run0/host0.xplane.pb", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
            let programs = Programs::from_space(&std::fs::read(path).unwrap()).unwrap();
            out.extend(programs.iter().map(|p| (p.proto().clone(), p.buffer_assignment().unwrap().clone())));
        }
        out
    }

    fn program(module: &xla::HloModuleProto, assignment: &xla::BufferAssignmentProto) -> Program {
        let bytes = xla::HloProto { hlo_module: Some(module.clone()), buffer_assignment: Some(assignment.clone()) }.encode_to_vec();
        Program::from_hlo_proto(1, &bytes).unwrap().unwrap()
    }

    /// The fixtures' buffer assignments, damaged at random (buffer ids,
    /// shares and kinds pointing anywhere, sizes of any sign, shape indices
    /// out of range, flags flipped, events dropped) and cut short: the
    /// replay never panics, whatever it answers.
    #[test]
    fn damaged_buffer_assignments_do_not_panic() {
        let programs = fixture_programs();
        assert!(programs.len() > 10);
        let mut rng = crate::test_random::XorShift::new(0xba_5eed);
        for round in 0..1500 {
            let (module, mut a) = programs[round % programs.len()].clone();
            let ids: Vec<i64> = a.logical_buffers.iter().map(|l| l.id).collect();
            let any_id = |rng: &mut crate::test_random::XorShift| {
                if ids.is_empty() || rng.below(8) == 0 { rng.below(1000) as i64 - 3 } else { ids[rng.below(ids.len() as u64) as usize] }
            };
            for _ in 0..1 + rng.below(5) {
                match rng.below(8) {
                    0 | 1 => {
                        let Some(trace) = a.heap_simulator_traces.first_mut() else { continue };
                        let Some(e) = trace.events.get_mut(rng.below(40) as usize) else { continue };
                        e.kind = rng.below(4) as i32;
                        e.buffer_id = any_id(&mut rng);
                        e.share_with_canonical_id = any_id(&mut rng);
                    }
                    2 => {
                        if let Some(l) = a.logical_buffers.get_mut(rng.below(40) as usize) {
                            l.size = [-1, 0, i64::MAX, i64::MIN, 1 << 40][rng.below(5) as usize];
                        }
                    }
                    3 => {
                        if let Some(l) = a.logical_buffers.get_mut(rng.below(40) as usize) {
                            l.defined_at.get_or_insert_default().shape_index = vec![rng.below(4) as i64 - 1; rng.below(3) as usize];
                        }
                    }
                    4 => {
                        let n = a.buffer_allocations.len() as u64;
                        if let Some(b) = a.buffer_allocations.get_mut(rng.below(n.max(1)) as usize) {
                            b.is_entry_computation_parameter ^= rng.below(2) == 0;
                            b.maybe_live_out ^= rng.below(2) == 0;
                            b.is_thread_local ^= rng.below(2) == 0;
                            b.index = rng.below(4) as i64;
                            if let Some(x) = b.assigned.first_mut() {
                                x.logical_buffer_id = any_id(&mut rng);
                            }
                        }
                    }
                    5 => {
                        if let Some(trace) = a.heap_simulator_traces.first_mut() {
                            let keep = rng.below(trace.events.len() as u64 + 1) as usize;
                            trace.events.truncate(keep);
                        }
                    }
                    6 => a.heap_simulator_traces.push(xla::HeapSimulatorTrace {
                        events: vec![Event { kind: Kind::Alloc as i32, buffer_id: any_id(&mut rng), ..Default::default() }],
                        ..Default::default()
                    }),
                    _ => {
                        if let Some(l) = a.logical_buffers.get_mut(rng.below(40) as usize) {
                            l.defined_at.get_or_insert_default().instruction_id = any_id(&mut rng);
                        }
                    }
                }
            }
            let _ = heap(&program(&module, &a));
            // (Damaged bytes decode or fail; they never panic.)
            let mut bytes = xla::HloProto { hlo_module: Some(module.clone()), buffer_assignment: Some(a) }.encode_to_vec();
            rng.corrupt(&mut bytes, 4);
            if let Ok(Some(p)) = Program::from_hlo_proto(1, &bytes) {
                let _ = heap(&p);
            }
        }
    }

    /// A `SHARE_WITH` chain that comes back to its buffer is an error
    /// (XProf would recurse without end), as is a buffer freed twice.
    #[test]
    fn share_cycles_and_double_frees_are_errors() {
        let (module, a) = fixture_programs().into_iter().find(|(_, a)| a.heap_simulator_traces.iter().any(|t| t.events.len() > 4)).unwrap();
        let trace = a.heap_simulator_traces.iter().position(|t| t.events.len() > 4).unwrap();
        let first = a.heap_simulator_traces[trace].events[0].clone();
        let event = |kind: Kind, share: i64| Event { kind: kind as i32, share_with_canonical_id: share, ..first.clone() };
        let mut cyclic = a.clone();
        cyclic.heap_simulator_traces[trace].events.insert(1, event(Kind::ShareWith, first.buffer_id));
        assert!(heap(&program(&module, &cyclic)).unwrap_err().contains("shares with itself"));
        let mut twice = a.clone();
        twice.heap_simulator_traces[trace].events.insert(1, event(Kind::Free, 0));
        twice.heap_simulator_traces[trace].events.insert(1, event(Kind::Free, 0));
        assert!(heap(&program(&module, &twice)).unwrap_err().contains("freed more often"));
        assert!(heap(&program(&module, &a)).is_ok());
    }

    /// A program whose `HloProto` has no buffer assignment says so; bytes
    /// that do not decode are an error, not a panic.
    #[test]
    fn missing_and_undecodable_assignments_say_so() {
        let (module, _) = fixture_programs().remove(0);
        let bare = Program::from_hlo_proto(1, &xla::HloProto { hlo_module: Some(module.clone()), buffer_assignment: None }.encode_to_vec()).unwrap().unwrap();
        assert!(heap(&bare).unwrap_err().contains("no buffer assignment"));
        let mut bytes = xla::HloProto { hlo_module: Some(module), buffer_assignment: None }.encode_to_vec();
        // Field 3 (buffer_assignment), 3 bytes long, holding a key without its value.
        bytes.extend_from_slice(&[0x1a, 0x03, 0x0a, 0xff, 0xff]);
        let damaged = Program::from_hlo_proto(1, &bytes).unwrap().unwrap();
        assert!(heap(&damaged).unwrap_err().contains("does not decode"));
    }
}
