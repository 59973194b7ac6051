//! XLA's GPU runtime replayed on a program's `HloProto`: the thunks XLA
//! emits for its instructions, numbered as XLA numbers them, and the
//! command buffers (CUDA graphs) its default command-buffer pass makes of
//! them.
//!
//! Why: under command buffers (XLA's default on GPUs) every kernel of a
//! graph names only the buffer, `hlo_op = command_buffer_<N>` where N is
//! the id of the buffer's first thunk, and its node in the CUDA graph
//! (`cuda_graph_node_id`'s low 32 bits). The buffer's commands, in order,
//! say which instruction each node runs. XProf has no such map and drops
//! these kernels (openxla/xprof issue 3070).
//!
//! The rules, from openxla/xla as JAX 0.11 ships it (checked on the shared
//! H200 traces against their twins recorded without command buffers: every
//! kernel of every step lands on the instruction its twin names):
//! - **Thunk ids** (`ThunkEmitter`, `xla/service/gpu/thunk_emitter.cc`; one
//!   counter from 1): computations are walked in the module's schedule
//!   order. Parameters, tuples, get-tuple-elements, bitcasts, constants take
//!   none; a fusion one (a kernel), a dynamic-slice copy fusion two (its
//!   copy, then the fusion wrapping it), a memcpy fusion one per root, a
//!   sort (or a fusion whose root is one) a copy per operand (a fusion's
//!   parameters) then a kernel per group of its bitonic stages; a
//!   `while` takes its id first, then its condition's thunks, then its
//!   body's; a `conditional` its branches' first, then its own; a `call` is
//!   inlined; an `async-start` takes its id, then the wrapped computation's
//!   thunks; an `async-done` one.
//! - **Command buffers** (`command_buffer_conversion_pass.cc`, JAX 0.11's
//!   flags): runs of convertible thunks (kernels, device copies, cuBLAS,
//!   cuBLASLt, cuDNN, dynamic-slice fusions, whole async regions, and
//!   conditionals whose branches are all convertible) of at least five
//!   become one buffer, a conditional counting one; a `while` ends a run,
//!   and the pass goes into while bodies and into the branches of
//!   conditionals it could not convert. (Seen on held-out traces,
//!   tools/xplane/record_heldout.py: `gru_switch`'s `lax.switch` ran in a
//!   buffer, `cond_gemm`'s `fori_loop` did not.)
//! - **Commands** (`command_buffer_cmd_emitter.cc`): a buffer's thunks
//!   flattened (an async start's nested thunks in its place, an async done
//!   none); command k is graph node k, but a conditional takes a node for
//!   its `set_case_condition` kernel and one per branch, whose graph holds
//!   the branch's commands (a predicate's branches false first). Library
//!   calls (cuBLAS, cuDNN, custom calls) and dynamic-slice fusions record a
//!   child graph. Nested nodes are numbered after the top-level ones, depth
//!   first (see [`CommandBuffer::child_nodes`]).

use rustc_hash::{FxHashMap, FxHashSet};

use crate::proto::xla::{HloComputationProto, HloInstructionProto, HloModuleProto};

/// XLA's `xla_gpu_graph_min_graph_size` default: shorter runs stay thunks.
const MIN_GRAPH_SIZE: usize = 5;

/// One command of a buffer: the instruction (its index among the
/// program's instructions) and whether it records a child graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    pub instruction: u32,
    pub child_graph: bool,
}

/// One command buffer (or a conditional branch's graph in one): the
/// command of each of its top-level graph nodes, in node order. A
/// conditional takes one node for the kernel that picks its branch
/// (`set_case_condition`) and one conditional node per branch, whose
/// graph is the branch's commands (`bodies`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandBuffer {
    pub commands: Vec<Command>,
    /// (conditional node, its graph), by node.
    bodies: Vec<(u32, CommandBuffer)>,
}

/// A node of a graph nested in a buffer (a library call's, or a
/// conditional branch's), in the order the driver numbers them (see
/// [`CommandBuffer::slots`]).
#[derive(Clone, Copy, Debug)]
struct Slot {
    instruction: u32,
    /// A library call's graph: one node or more (its memsets, then its
    /// kernels), as many as it ran.
    library: bool,
    /// The buffer's top-level node it is nested under.
    ancestor: u32,
}

impl CommandBuffer {
    /// The commands that record a child graph, in command order.
    pub fn child_commands(&self) -> impl Iterator<Item = usize> + '_ {
        self.commands.iter().enumerate().filter(|(_, c)| c.child_graph).map(|(k, _)| k)
    }

    /// Whether some of its nodes are graphs: its events may run nodes
    /// numbered past its top-level nodes.
    pub fn has_nested(&self) -> bool {
        !self.bodies.is_empty() || self.child_commands().next().is_some()
    }

    /// Whether [`CommandBuffer::child_nodes`] of `nodes` reads its
    /// `launches`: there are child nodes and child commands, not as many of
    /// each, or any nested node of a buffer with conditionals.
    pub fn needs_launches(&self, nodes: &[u32]) -> bool {
        let nodes = self.child_nodes_seen(nodes).len();
        if !self.bodies.is_empty() {
            return nodes > 0;
        }
        let children = self.child_commands().count();
        nodes > 0 && children > 0 && nodes != children
    }

    /// The nested nodes in the driver's numbering: after the top-level
    /// nodes, each node's graph in node order, depth first (a graph's own
    /// nodes, then its nodes' graphs). Seen on the held-out `cond_gemm`
    /// (tools/xplane/record_heldout.py): a gemm before a `lax.switch` whose
    /// first branch runs a gemm numbers the gemm's kernel, then that
    /// branch's two nodes, then its gemm's kernel, then the next branch.
    fn slots(&self, ancestor: Option<u32>, into: &mut Vec<Slot>) {
        for (k, command) in self.commands.iter().enumerate() {
            let ancestor = ancestor.unwrap_or(k as u32);
            if command.child_graph {
                into.push(Slot { instruction: command.instruction, library: true, ancestor });
            } else if let Ok(at) = self.bodies.binary_search_by_key(&(k as u32), |b| b.0) {
                let body = &self.bodies[at].1;
                into.extend(body.commands.iter().map(|c| Slot { instruction: c.instruction, library: false, ancestor }));
                body.slots(Some(ancestor), into);
            }
        }
    }

    /// The child-graph nodes among `nodes`, in order, once each.
    fn child_nodes_seen(&self, nodes: &[u32]) -> Vec<u32> {
        let count = self.commands.len() as u32;
        let mut nodes: Vec<u32> = nodes.iter().copied().filter(|&n| n >= count).collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }

    /// Which command each child-graph node (index ≥ the number of
    /// commands) belongs to. The driver numbers child nodes in command
    /// order, so the map is monotone; as many nodes as child commands map
    /// one to one. Otherwise (a library call that ran two kernels, such as
    /// a cuBLAS gemm and its memset) `launches` decide: the events of each
    /// graph launch as (start, node), from which each child node votes for
    /// the child commands between the top-level nodes that ran before and
    /// after it; the monotone map with the most votes wins, ties going to
    /// the map that uses more commands (each normally runs a kernel).
    ///
    /// A memset (`memsets`) goes with the node numbered after it: a library
    /// call records its memset, then the kernel that writes what it
    /// cleared. (Two such calls between the same top-level nodes get the
    /// same votes from all four of their nodes; only this pairing tells
    /// them apart, as on a `lax.scan` of remat layers, tools/xplane/
    /// record_heldout.py's `tx_scan`.)
    ///
    /// The map is to the instruction each node runs. In a buffer with
    /// conditionals, see `CommandBuffer::laid_out`.
    pub fn child_nodes(&self, nodes: &[u32], launches: &[Vec<(i128, u32)>], memsets: &FxHashSet<u32>) -> FxHashMap<u32, u32> {
        if !self.bodies.is_empty() {
            return self.laid_out(nodes, launches, memsets);
        }
        let count = self.commands.len() as u32;
        let children: Vec<usize> = self.child_commands().collect();
        let nodes = self.child_nodes_seen(nodes);
        if nodes.is_empty() || children.is_empty() {
            return FxHashMap::default();
        }
        let instruction = |command: usize| self.commands[command].instruction;
        if nodes.len() == children.len() {
            return nodes.into_iter().zip(children).map(|(node, command)| (node, instruction(command))).collect();
        }
        // The nodes in units that go to one command: a memset with the
        // node after it.
        let mut unit_of = Vec::with_capacity(nodes.len());
        let mut units = 0;
        for (a, &node) in nodes.iter().enumerate() {
            let glued = a > 0 && memsets.contains(&nodes[a - 1]) && nodes[a - 1] + 1 == node;
            if !glued {
                units += 1;
            }
            unit_of.push(units - 1);
        }
        // votes[u][b]: the nodes of unit u ran between neighbours that allow
        // command children[b], shared among the commands allowed.
        let mut votes = vec![vec![0.0f64; children.len()]; units];
        for launch in launches {
            for (node, ran_after, ran_before) in top_level_neighbours(launch, count) {
                let Ok(a) = nodes.binary_search(&node) else { continue };
                let before = ran_after.map_or(-1, i64::from);
                let after = i64::from(ran_before.unwrap_or(count));
                let allowed: Vec<usize> = (0..children.len()).filter(|&b| before < children[b] as i64 && (children[b] as i64) < after).collect();
                for &b in &allowed {
                    votes[unit_of[a]][b] += 1.0 / allowed.len() as f64;
                }
            }
        }
        // Monotone assignment (non-decreasing command per unit) with the
        // most votes; a small bonus per command used.
        const BONUS: f64 = 1e-3;
        let (rows, cols) = (units, children.len());
        let mut best = vec![vec![f64::NEG_INFINITY; cols]; rows];
        let mut back = vec![vec![0usize; cols]; rows];
        for b in 0..cols {
            best[0][b] = votes[0][b] + BONUS;
        }
        for a in 1..rows {
            let (mut earlier, mut earlier_at) = (f64::NEG_INFINITY, 0);
            for b in 0..cols {
                let stay = best[a - 1][b];
                let moved = earlier + BONUS;
                best[a][b] = stay.max(moved) + votes[a][b];
                back[a][b] = if stay >= moved { b } else { earlier_at };
                if best[a - 1][b] > earlier {
                    (earlier, earlier_at) = (best[a - 1][b], b);
                }
            }
        }
        let mut b = (0..cols).fold(0, |kept, b| if best[rows - 1][b] > best[rows - 1][kept] { b } else { kept });
        let mut command_of_unit = vec![0; rows];
        for u in (0..rows).rev() {
            command_of_unit[u] = children[b];
            b = back[u][b];
        }
        nodes.iter().zip(unit_of).map(|(&node, u)| (node, instruction(command_of_unit[u]))).collect()
    }

    /// [`CommandBuffer::child_nodes`] in a buffer with conditionals: the
    /// nested nodes are laid out over [`CommandBuffer::slots`], a branch's
    /// node taking one number and a library call's graph one or more
    /// (`MAX_LIBRARY_NODES` at most), so that the nodes seen get the most
    /// votes (each time a node ran, it votes for the slots nested under the
    /// top-level nodes between those that ran before and after it) and a
    /// memset stays with the node after it (it is no branch's node). Of
    /// equal layouts, the one that numbers the fewest nodes.
    fn laid_out(&self, nodes: &[u32], launches: &[Vec<(i128, u32)>], memsets: &FxHashSet<u32>) -> FxHashMap<u32, u32> {
        const MAX_LIBRARY_NODES: usize = 8;
        const MAX_LAYOUT_CELLS: usize = 1 << 24;
        const EXTRA_NODE: f64 = 1e-6;
        let top = self.commands.len() as u32;
        let nodes = self.child_nodes_seen(nodes);
        let mut slots = Vec::new();
        self.slots(None, &mut slots);
        let Some(&last) = nodes.last() else { return FxHashMap::default() };
        if slots.is_empty() {
            return FxHashMap::default();
        }
        // Per node seen: the top-level nodes it ran after and before, each
        // time, as sorted bounds (see `votes`).
        let span = (last - top + 1) as usize;
        // (Nodes past any layout name nothing; and a buffer too big to lay
        // out stays unattributed rather than slow.)
        if span > slots.len() * MAX_LIBRARY_NODES || slots.len() * (span + MAX_LIBRARY_NODES + 1) > MAX_LAYOUT_CELLS {
            return FxHashMap::default();
        }
        let mut after: Vec<Vec<u32>> = vec![Vec::new(); span];
        let mut before: Vec<Vec<u32>> = vec![Vec::new(); span];
        for launch in launches {
            for (node, ran_after, ran_before) in top_level_neighbours(launch, top) {
                if node < top || node > last {
                    continue;
                }
                let ran_before = ran_before.unwrap_or(top);
                let from = ran_after.map_or(0, |n| n + 1);
                // (Nodes that ran out of their numbers' order allow none.)
                if from < ran_before {
                    after[(node - top) as usize].push(from);
                    before[(node - top) as usize].push(ran_before);
                }
            }
        }
        after.iter_mut().chain(before.iter_mut()).for_each(|b| b.sort_unstable());
        // How many times node `top + rel` ran between top-level nodes that
        // allow `ancestor` (after < ancestor < before).
        let votes = |rel: usize, ancestor: u32| -> f64 {
            let opened = after[rel].partition_point(|&a| a <= ancestor);
            let closed = before[rel].partition_point(|&b| b <= ancestor);
            opened.saturating_sub(closed) as f64
        };
        let seen = |rel: usize| rel < span && nodes.binary_search(&(top + rel as u32)).is_ok();
        let memset = |rel: usize| seen(rel) && memsets.contains(&(top + rel as u32));
        // best[p] (then next[p]): the slots so far laid over the numbers
        // before p; took[s][p]: how many slot s - 1 took.
        let width = span + MAX_LIBRARY_NODES + 1;
        let mut best = vec![f64::NEG_INFINITY; width];
        let mut took = vec![vec![0u8; width]; slots.len() + 1];
        best[0] = 0.0;
        let mut end = None;
        for (s, slot) in slots.iter().enumerate() {
            let mut next = vec![f64::NEG_INFINITY; width];
            for p in 0..width {
                let here = best[p];
                if here == f64::NEG_INFINITY {
                    continue;
                }
                if p >= span {
                    // Every node seen is laid out; the rest lie past them.
                    if end.is_none_or(|(_, _, score)| here > score) {
                        end = Some((s, p, here));
                    }
                    continue;
                }
                let most = if slot.library { MAX_LIBRARY_NODES } else { 1 };
                let mut score = here;
                for k in 1..=most {
                    let rel = p + k - 1;
                    if !slot.library && memset(rel) {
                        break;
                    }
                    if seen(rel) {
                        score += votes(rel, slot.ancestor);
                    }
                    // (A memset goes with the node after it.)
                    if memset(rel) && seen(rel + 1) {
                        continue;
                    }
                    let total = score - EXTRA_NODE * (k - 1) as f64;
                    if p + k < width && total > next[p + k] {
                        next[p + k] = total;
                        took[s + 1][p + k] = k as u8;
                    }
                }
            }
            best = next;
        }
        for (p, &here) in best.iter().enumerate().skip(span) {
            if here > f64::NEG_INFINITY && end.is_none_or(|(_, _, score)| here > score) {
                end = Some((slots.len(), p, here));
            }
        }
        let Some((mut s, mut p, _)) = end else { return FxHashMap::default() };
        let mut map = FxHashMap::default();
        while s > 0 {
            let k = took[s][p] as usize;
            for rel in p - k..p {
                if seen(rel) {
                    map.insert(top + rel as u32, slots[s - 1].instruction);
                }
            }
            (s, p) = (s - 1, p - k);
        }
        map
    }
}

/// A launch's events in time order as (node, the highest top-level node
/// that ran before it, the lowest that ran after it), top-level nodes being
/// those numbered below `top`: the neighbours that bound which command a
/// nested node can belong to.
fn top_level_neighbours(launch: &[(i128, u32)], top: u32) -> Vec<(u32, Option<u32>, Option<u32>)> {
    let mut launch = launch.to_vec();
    launch.sort_unstable();
    let top_level = |node: u32| Some(node).filter(|&n| n < top);
    let mut after: Vec<Option<u32>> = vec![None; launch.len()];
    for at in (0..launch.len().saturating_sub(1)).rev() {
        after[at] = match (after[at + 1], top_level(launch[at + 1].1)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    let mut highest = None;
    launch
        .iter()
        .zip(after)
        .map(|(&(_, node), after)| {
            let neighbours = (node, highest, after);
            highest = highest.max(top_level(node));
            neighbours
        })
        .collect()
}

/// What a thunk is, as far as command buffers care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Kernel,
    Copy,
    Gemm,
    CublasLt,
    Cudnn,
    Convolution,
    CustomCall,
    DynamicSliceFusion,
    AsyncStart,
    AsyncDone,
    While,
    Conditional,
    Other,
}

impl Kind {
    /// A command of its own that records a child graph.
    fn child_graph(self) -> bool {
        matches!(self, Kind::Gemm | Kind::CublasLt | Kind::Cudnn | Kind::CustomCall | Kind::DynamicSliceFusion | Kind::Convolution)
    }
}

#[derive(Clone, Debug)]
struct Thunk {
    kind: Kind,
    id: i64,
    instruction: u32,
    /// An async start's wrapped thunks; a dynamic-slice fusion's copy.
    nested: Vec<Thunk>,
    /// A while's body.
    body: Vec<Thunk>,
    branches: Vec<Vec<Thunk>>,
}

impl Thunk {
    fn new(kind: Kind, id: i64, instruction: u32) -> Thunk {
        Thunk { kind, id, instruction, nested: Vec::new(), body: Vec::new(), branches: Vec::new() }
    }
}

/// The command buffers of `module`, by the id of their first thunk (the
/// `N` of `command_buffer_N`); `index` gives an instruction's index among
/// the program's instructions by its id. Empty where the module is not
/// well formed (an id that names nothing).
pub fn command_buffers(module: &HloModuleProto, index: &FxHashMap<i64, u32>) -> FxHashMap<i64, CommandBuffer> {
    let Some(hlo) = Hlo::new(module, index) else { return FxHashMap::default() };
    // (Calls inline their computation: a damaged module could call one
    // computation from many places, many levels deep. A real module's
    // thunks are about as many as its instructions.)
    let budget = 8 * index.len() as i64 + 1024;
    let mut emitter = Emitter { hlo: &hlo, next_id: 1, budget };
    let Some(thunks) = emitter.computation(module.entry_computation_id, 0) else { return FxHashMap::default() };
    let mut buffers = FxHashMap::default();
    hlo.convert(thunks, &mut buffers);
    buffers
}

/// The module's instructions and computations by id.
struct Hlo<'m> {
    module: &'m HloModuleProto,
    computations: FxHashMap<i64, &'m HloComputationProto>,
    instructions: FxHashMap<i64, &'m HloInstructionProto>,
    index: &'m FxHashMap<i64, u32>,
    /// async-done / copy-done → its start (both as instruction indices).
    start_of: FxHashMap<u32, u32>,
}

impl<'m> Hlo<'m> {
    fn new(module: &'m HloModuleProto, index: &'m FxHashMap<i64, u32>) -> Option<Hlo<'m>> {
        let computations = module.computations.iter().map(|c| (c.id, c)).collect();
        let instructions: FxHashMap<i64, &HloInstructionProto> = module.computations.iter().flat_map(|c| &c.instructions).map(|i| (i.id, i)).collect();
        let mut hlo = Hlo { module, computations, instructions, index, start_of: FxHashMap::default() };
        for done in hlo.instructions.values().filter(|i| matches!(i.opcode.as_str(), "async-done" | "copy-done")) {
            let start = hlo.operand(done, 0)?;
            hlo.start_of.insert(*index.get(&done.id)?, *index.get(&start.id)?);
        }
        Some(hlo)
    }

    fn operand(&self, instruction: &HloInstructionProto, k: usize) -> Option<&'m HloInstructionProto> {
        self.instructions.get(instruction.operand_ids.get(k)?).copied()
    }

    fn root(&self, computation: i64) -> Option<&'m HloInstructionProto> {
        self.instructions.get(&self.computations.get(&computation)?.root_id).copied()
    }

    /// A computation's instructions in schedule order (the listed order if
    /// the schedule leaves it out).
    fn schedule(&self, computation: i64) -> Option<Vec<&'m HloInstructionProto>> {
        match self.module.schedule.as_ref().and_then(|s| s.sequences.get(&computation)) {
            Some(sequence) => sequence.instruction_ids.iter().map(|id| self.instructions.get(id).copied()).collect(),
            None => Some(self.computations.get(&computation)?.instructions.iter().collect()),
        }
    }

    fn skip_bitcasts(&self, mut instruction: &'m HloInstructionProto) -> &'m HloInstructionProto {
        // (Bounded: a cycle of bitcasts is no module.)
        for _ in 0..64 {
            match instruction.opcode.as_str() {
                "bitcast" | "reshape" => match self.operand(instruction, 0) {
                    Some(operand) => instruction = operand,
                    None => break,
                },
                _ => break,
            }
        }
        instruction
    }

    // --- CommandBufferConversionPass ---

    fn convertible(&self, thunk: &Thunk) -> bool {
        match thunk.kind {
            Kind::AsyncStart | Kind::DynamicSliceFusion => self.sequence_convertible(&thunk.nested),
            Kind::AsyncDone | Kind::Kernel | Kind::Copy | Kind::Gemm | Kind::CublasLt | Kind::Cudnn => true,
            Kind::Conditional => thunk.branches.iter().all(|branch| self.sequence_convertible(branch)),
            _ => false,
        }
    }

    /// `CheckAsyncRegion`: the length of the shortest prefix of `seq` that
    /// closes every async start it opens, all convertible; 0 if none.
    fn async_region(&self, seq: &[Thunk]) -> usize {
        let mut open = FxHashSet::default();
        for (n, thunk) in seq.iter().enumerate() {
            if !self.convertible(thunk) {
                return 0;
            }
            match thunk.kind {
                Kind::AsyncStart => drop(open.insert(thunk.instruction)),
                Kind::AsyncDone => match self.start_of.get(&thunk.instruction) {
                    Some(start) if open.remove(start) => {}
                    _ => return 0,
                },
                _ => {}
            }
            if open.is_empty() {
                return n + 1;
            }
        }
        0
    }

    fn sequence_convertible(&self, seq: &[Thunk]) -> bool {
        let mut k = 0;
        while k < seq.len() {
            if !self.convertible(&seq[k]) {
                return false;
            }
            if seq[k].kind == Kind::AsyncStart {
                match self.async_region(&seq[k..]) {
                    0 => return false,
                    n => k += n,
                }
            } else {
                k += 1;
            }
        }
        true
    }

    /// `CommandBufferConversionPass::Run` over one sequence: buffers go to
    /// `buffers`, while bodies and conditional branches are converted too.
    fn convert(&self, seq: Vec<Thunk>, buffers: &mut FxHashMap<i64, CommandBuffer>) {
        let mut run: Vec<Thunk> = Vec::new();
        let flush = |run: &mut Vec<Thunk>, buffers: &mut FxHashMap<i64, CommandBuffer>| {
            if !run.is_empty() && size(run) >= MIN_GRAPH_SIZE {
                buffers.insert(run[0].id, graph(run));
            }
            run.clear();
        };
        let mut k = 0;
        while k < seq.len() {
            let thunk = &seq[k];
            if thunk.kind == Kind::AsyncStart {
                let n = self.async_region(&seq[k..]);
                if n > 0 {
                    run.extend_from_slice(&seq[k..k + n]);
                    k += n;
                    continue;
                }
            } else if thunk.kind != Kind::AsyncDone && self.convertible(thunk) {
                run.push(thunk.clone());
                k += 1;
                continue;
            }
            match thunk.kind {
                Kind::While => self.convert(thunk.body.clone(), buffers),
                Kind::Conditional => thunk.branches.iter().for_each(|branch| self.convert(branch.clone(), buffers)),
                _ => {}
            }
            flush(&mut run, buffers);
            k += 1;
        }
        flush(&mut run, buffers);
    }

    // --- the fusions ThunkEmitter turns into copies ---

    /// `AnalyzeStaticSliceCopyFusion`: a contiguous slice of a parameter.
    fn static_slice_copy(&self, root: &HloInstructionProto) -> bool {
        root.opcode == "slice" && self.operand(root, 0).is_some_and(|p| p.opcode == "parameter") && self.contiguous_slice(root)
    }

    fn contiguous_slice(&self, slice: &HloInstructionProto) -> bool {
        let Some(source) = self.operand(slice, 0).and_then(|p| p.shape.as_ref()) else { return false };
        let Some(shape) = slice.shape.as_ref() else { return false };
        let (dims_in, dims_out) = (&source.dimensions, &shape.dimensions);
        if dims_in.len() != dims_out.len() {
            return false;
        }
        let minor_to_major: Vec<usize> = match source.layout.as_ref().filter(|l| !l.minor_to_major.is_empty()) {
            Some(layout) => layout.minor_to_major.iter().map(|&d| d as usize).collect(),
            None => (0..dims_in.len()).rev().collect(),
        };
        let mut sliced = false;
        for d in minor_to_major {
            let (Some(&inner), Some(&outer)) = (dims_in.get(d), dims_out.get(d)) else { return false };
            if sliced && outer != 1 {
                return false;
            }
            if outer < inner {
                let stride = slice.slice_dimensions.get(d).map_or(1, |s| s.stride);
                if stride != 1 && outer > 1 {
                    return false;
                }
                sliced = true;
            }
        }
        true
    }

    /// `AnalyzeDynamicSliceCopyFusion`: a dynamic slice (or in-place update)
    /// of parameters, configured as a copy.
    fn dynamic_slice_copy(&self, root: &HloInstructionProto) -> bool {
        let slice = self.skip_bitcasts(root);
        if !matches!(slice.opcode.as_str(), "dynamic-slice" | "dynamic-update-slice") || backend_config(slice).get("dynamic_slice_config").is_none() {
            return false;
        }
        let parameter = |k| self.operand(slice, k).is_some_and(|o| self.skip_bitcasts(o).opcode == "parameter");
        if slice.opcode == "dynamic-slice" { parameter(0) } else { parameter(1) && parameter(0) }
    }

    /// `HloFusionInfo::GetCopyFusion`: every root a copy of a parameter in
    /// its layout; the number of roots (one copy each), or 0.
    fn memcpy_fusion_roots(&self, root: &HloInstructionProto) -> usize {
        let roots: Vec<Option<&HloInstructionProto>> =
            if root.opcode == "tuple" { root.operand_ids.iter().map(|id| self.instructions.get(id).copied()).collect() } else { vec![Some(root)] };
        for r in &roots {
            let Some(r) = r else { return 0 };
            let Some(source) = self.operand(r, 0) else { return 0 };
            let layout = |i: &HloInstructionProto| i.shape.as_ref().and_then(|s| s.layout.as_ref()).map(|l| l.minor_to_major.clone()).unwrap_or_default();
            if r.opcode != "copy" || source.opcode != "parameter" || layout(source) != layout(r) {
                return 0;
            }
        }
        roots.len()
    }
}

/// `CountCommandBufferSize`: thunks nested included, async start and done
/// left out, and at least the run's length.
fn size(run: &[Thunk]) -> usize {
    fn count(thunk: &Thunk) -> usize {
        usize::from(!matches!(thunk.kind, Kind::AsyncStart | Kind::AsyncDone)) + thunk.nested.iter().map(count).sum::<usize>()
    }
    run.len().max(run.iter().map(count).sum())
}

/// `AppendCommands`: an async start's thunks in its place, an async done
/// none, a conditional its kernel and a node per branch (see
/// [`CommandBuffer`]), every other thunk one command.
fn graph(thunks: &[Thunk]) -> CommandBuffer {
    fn append(thunks: &[Thunk], into: &mut CommandBuffer) {
        for thunk in thunks {
            let command = Command { instruction: thunk.instruction, child_graph: thunk.kind.child_graph() };
            match thunk.kind {
                Kind::AsyncStart => append(&thunk.nested, into),
                Kind::AsyncDone => {}
                Kind::Conditional => {
                    into.commands.push(command);
                    for branch in &thunk.branches {
                        into.bodies.push((into.commands.len() as u32, graph(branch)));
                        into.commands.push(command);
                    }
                }
                _ => into.commands.push(command),
            }
        }
    }
    let mut buffer = CommandBuffer { commands: Vec::new(), bodies: Vec::new() };
    append(thunks, &mut buffer);
    buffer
}

fn backend_config(instruction: &HloInstructionProto) -> serde_json::Value {
    serde_json::from_slice(&instruction.backend_config).unwrap_or(serde_json::Value::Null)
}

/// `ThunkEmitter`: hands out thunk ids in emission order.
struct Emitter<'h, 'm> {
    hlo: &'h Hlo<'m>,
    next_id: i64,
    /// More thunks than this, and the module is taken as damaged.
    budget: i64,
}

impl Emitter<'_, '_> {
    /// How deep calls may nest (a module calling itself is no module).
    const MAX_DEPTH: usize = 256;

    fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id - 1
    }

    fn computation(&mut self, computation: i64, depth: usize) -> Option<Vec<Thunk>> {
        if depth > Self::MAX_DEPTH || self.next_id > self.budget {
            return None;
        }
        let mut thunks = Vec::new();
        for instruction in self.hlo.schedule(computation)? {
            thunks.extend(self.instruction(instruction, depth)?);
        }
        Some(thunks)
    }

    fn instruction(&mut self, i: &HloInstructionProto, depth: usize) -> Option<Vec<Thunk>> {
        let at = *self.hlo.index.get(&i.id)?;
        let one = |emitter: &mut Self, kind| Some(vec![Thunk::new(kind, emitter.id(), at)]);
        match i.opcode.as_str() {
            "parameter" | "get-tuple-element" | "bitcast" | "tuple" | "constant" | "after-all" | "add-dependency" | "opt-barrier" => Some(Vec::new()),
            "fusion" => self.fusion(i, at),
            "copy" => one(self, Kind::Copy),
            "custom-call" => self.custom_call(i, at),
            "while" => {
                let (body, condition) = (*i.called_computation_ids.first()?, *i.called_computation_ids.get(1)?);
                let mut thunk = Thunk::new(Kind::While, self.id(), at);
                self.computation(condition, depth + 1)?;
                thunk.body = self.computation(body, depth + 1)?;
                Some(vec![thunk])
            }
            "conditional" => {
                let mut branches = i.called_computation_ids.iter().map(|&c| self.computation(c, depth + 1)).collect::<Option<Vec<_>>>()?;
                // A predicate's conditional (true, false computations) runs
                // as a case on the predicate as an index: false first (seen
                // on the held-out `cond_gemm`'s `lax.cond`).
                const PRED: i32 = 1;
                if self.hlo.operand(i, 0).and_then(|p| p.shape.as_ref()).is_some_and(|s| s.element_type == PRED) {
                    branches.reverse();
                }
                let mut thunk = Thunk::new(Kind::Conditional, self.id(), at);
                thunk.branches = branches;
                Some(vec![thunk])
            }
            "call" => self.computation(*i.called_computation_ids.first()?, depth + 1),
            "async-start" => {
                let wrapped = *i.called_computation_ids.first()?;
                let root = self.hlo.root(wrapped)?;
                let host = (matches!(root.opcode.as_str(), "send" | "recv") && root.is_host_transfer)
                    || (root.opcode == "custom-call" && root.custom_call_target == "HostExecute");
                if host {
                    return one(self, Kind::Other);
                }
                let mut thunk = Thunk::new(Kind::AsyncStart, self.id(), at);
                thunk.nested = self.computation(wrapped, depth + 1)?;
                Some(vec![thunk])
            }
            "async-done" | "copy-done" => one(self, Kind::AsyncDone),
            "copy-start" => {
                // A copy to or from host memory (memory space 5) is no
                // device copy.
                let host = i.shape.as_ref().is_some_and(|s| s.tuple_shapes.iter().take(2).any(|t| t.layout.as_ref().is_some_and(|l| l.memory_space == 5)));
                let copy = Thunk::new(if host { Kind::Other } else { Kind::Copy }, self.id(), at);
                let mut start = Thunk::new(Kind::AsyncStart, self.id(), at);
                start.nested = vec![copy];
                Some(vec![start])
            }
            "sort" => Some(self.sort(i, at, |_| true)),
            "rng-get-and-update-state" | "partition-id" | "replica-id" => one(self, Kind::Kernel),
            // Collectives, send/recv, infeed/outfeed, FFT: one thunk each,
            // none of which the default pass converts.
            _ => one(self, Kind::Other),
        }
    }

    fn custom_call(&mut self, i: &HloInstructionProto, at: u32) -> Option<Vec<Thunk>> {
        let target = i.custom_call_target.as_str();
        let kind = match target {
            "__nop" | "Pin" | "Unpin" | "CreateBuffer" | "AllocateBuffer" => return Some(Vec::new()),
            "__cublas$gemm" => Kind::Gemm,
            _ if target.starts_with("__cublas$lt$matmul") => Kind::CublasLt,
            _ if target.starts_with("__cudnn$conv") && !target.contains("Reorder") => Kind::Convolution,
            _ if target.starts_with("__cudnn") => Kind::Cudnn,
            "TopK" | "__gpu$xla.gpu.triton" | "__gpu$xla.gpu.ptx" => Kind::Kernel,
            "__cublas$triangularSolve" => Kind::Other,
            // FFI calls convert only if their handler says so, which the
            // trace does not tell: taken as not convertible.
            _ => Kind::CustomCall,
        };
        Some(vec![Thunk::new(kind, self.id(), at)])
    }

    /// `EmitSort`: a copy of each operand into the output (it sorts in
    /// place; XLA finds no buffer to share), then its bitonic stages'
    /// kernels. `copied` says which operands are copied (of a sort fusion,
    /// its parameters: the fused iota of `lax.top_k` is none).
    fn sort(&mut self, sort: &HloInstructionProto, at: u32, copied: impl Fn(&HloInstructionProto) -> bool) -> Vec<Thunk> {
        let operands: Vec<&HloInstructionProto> = (0..sort.operand_ids.len()).filter_map(|k| self.hlo.operand(sort, k)).collect();
        let mut thunks: Vec<Thunk> = operands.iter().filter(|o| copied(o)).map(|_| Thunk::new(Kind::Copy, self.id(), at)).collect();
        let keys = operands.first().and_then(|o| o.shape.as_ref());
        let bound = sort.dimensions.first().and_then(|&d| keys?.dimensions.get(d as usize)).copied().unwrap_or(1).max(1) as u64;
        let bytes: u64 = operands.iter().map(|o| o.shape.as_ref().map_or(4, |s| element_bytes(s.element_type))).sum();
        for _ in 0..sort_kernels(bound, bytes) {
            thunks.push(Thunk::new(Kind::Kernel, self.id(), at));
        }
        thunks
    }

    fn fusion(&mut self, i: &HloInstructionProto, at: u32) -> Option<Vec<Thunk>> {
        let root = self.hlo.root(*i.called_computation_ids.first()?)?;
        if root.opcode == "sort" {
            return Some(self.sort(root, at, |operand| operand.opcode == "parameter"));
        }
        if i.fusion_kind != "kCustom" {
            if self.hlo.static_slice_copy(root) {
                return Some(vec![Thunk::new(Kind::Copy, self.id(), at)]);
            }
            if self.hlo.dynamic_slice_copy(root) {
                let copy = Thunk::new(Kind::Copy, self.id(), at);
                let mut fusion = Thunk::new(Kind::DynamicSliceFusion, self.id(), at);
                fusion.nested = vec![copy];
                return Some(vec![fusion]);
            }
            let copies = self.hlo.memcpy_fusion_roots(root);
            if copies > 0 {
                return Some((0..copies).map(|_| Thunk::new(Kind::Copy, self.id(), at)).collect());
            }
        }
        let config = backend_config(i);
        let fusion = &config["fusion_backend_config"];
        if fusion["kind"] == "__cudnn$fusion" {
            return Some(vec![Thunk::new(Kind::Cudnn, self.id(), at)]);
        }
        if fusion["custom_fusion_config"]["name"] == "dynamic_slice_fusion" {
            let mut thunk = Thunk::new(Kind::DynamicSliceFusion, self.id(), at);
            thunk.nested = vec![Thunk::new(Kind::Kernel, self.id(), at)];
            return Some(vec![thunk]);
        }
        Some(vec![Thunk::new(Kind::Kernel, self.id(), at)])
    }
}

/// How many kernels `EmitSort` launches to sort `bound` elements of
/// `bytes` (all operands' elements together): its bitonic stages' xor
/// masks, those below its tile size (at most 2,048) merged into one
/// kernel, each mask from the tile size up a kernel of its own; no tiling
/// where a tile's operands pass 48 KiB of shared memory (a block's, on the
/// GPUs JAX 0.11 runs on).
fn sort_kernels(bound: u64, bytes: u64) -> usize {
    let stages = u64::BITS - (bound.max(1) - 1).leading_zeros();
    let tile = 2048u64.min(1 << stages);
    let tiled = tile * bytes <= 48 * 1024;
    let (mut kernels, mut merged) = (0, false);
    for stage in 0..stages {
        for mask in (0..=stage).rev() {
            let xor = if mask == stage { (1u64 << (stage + 1)) - 1 } else { 1 << mask };
            if xor >= tile || !tiled {
                kernels += 1 + usize::from(merged);
                merged = false;
            } else {
                merged = true;
            }
        }
    }
    kernels + usize::from(merged)
}

/// The bytes of an element of an XLA `PrimitiveType` (4 where unknown).
fn element_bytes(element_type: i32) -> u64 {
    match element_type {
        1..=2 | 6 | 19..=25 | 28 | 29 => 1, // PRED, S8, U8, F8 kinds, S4/U4 as bytes
        3 | 7 | 10 | 16 => 2,               // S16, U16, F16, BF16
        5 | 9 | 12 | 15 => 8,               // S64, U64, F64, C64
        18 => 16,                           // C128
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// The JAX GPU fixtures' programs, damaged at random (ids pointing
    /// anywhere, schedules, called computations, opcodes swapped): the
    /// replay never panics and never runs away (see the emitter's budget).
    #[test]
    fn damaged_modules_do_not_panic() {
        let mut modules = Vec::new();
        for fixture in ["jax_gpu_mlp", "jax_gpu_lstm", "jax_gpu_cnn"] {
            let path = format!("{}/testdata/xplane/{fixture}/plugins/profile/run0/host0.xplane.pb", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
            let bytes = std::fs::read(path).unwrap();
            let space = crate::inputs::xplane::decode::Space::decode(&bytes).unwrap();
            let planes: Vec<_> = space.planes.iter().map(|p| crate::inputs::xplane::decode::Plane::decode(p).unwrap()).collect();
            let programs = crate::inputs::xplane::hlo::Programs::from_planes(&planes).unwrap();
            modules.extend(programs.iter().map(|p| p.proto().clone()));
        }
        assert!(modules.len() > 10);
        let mut rng = crate::test_random::XorShift::new(0x7e_5eed);
        let opcodes = ["while", "call", "conditional", "async-start", "async-done", "fusion", "custom-call", "copy-start", "tuple"];
        for round in 0..600 {
            let mut module = modules[round % modules.len()].clone();
            let ids: Vec<i64> = module.computations.iter().flat_map(|c| &c.instructions).map(|i| i.id).collect();
            let computations: Vec<i64> = module.computations.iter().map(|c| c.id).collect();
            for _ in 0..1 + rng.below(6) {
                let c = rng.below(module.computations.len() as u64) as usize;
                let Some(ins) = module.computations[c].instructions.get_mut(rng.below(8) as usize) else { continue };
                match rng.below(5) {
                    0 => ins.opcode = opcodes[rng.below(opcodes.len() as u64) as usize].into(),
                    1 => ins.called_computation_ids = vec![computations[rng.below(computations.len() as u64) as usize]; rng.below(3) as usize],
                    2 => ins.operand_ids = vec![ids[rng.below(ids.len() as u64) as usize] + rng.below(3) as i64 - 1],
                    3 => ins.backend_config = b"{\"fusion_backend_config\":{\"kind\":\"__cudnn$fusion\"}}".to_vec(),
                    _ => ins.id = ids[rng.below(ids.len() as u64) as usize],
                }
            }
            if round % 7 == 0 {
                module.schedule = None;
            }
            let index: FxHashMap<i64, u32> = module.computations.iter().flat_map(|c| &c.instructions).enumerate().map(|(k, i)| (i.id, k as u32)).collect();
            let buffers = command_buffers(&module, &index);
            for buffer in buffers.values() {
                let nodes: Vec<u32> = (0..buffer.commands.len() as u32 + 4).collect();
                let launch: Vec<(i128, u32)> = nodes.iter().rev().map(|&n| (i128::from(n), n)).collect();
                let memsets = nodes.iter().copied().filter(|n| n % 3 == 0).collect();
                let _ = buffer.child_nodes(&nodes, &[launch], &memsets);
            }
            // (Bytes cut short decode or fail; they never panic.)
            let bytes = module.encode_to_vec();
            let _ = crate::proto::xla::HloModuleProto::decode(&bytes[..bytes.len() / 2]);
        }
    }

    /// `lax.top_k` as XLA 0.11 fuses it (a custom fusion of a sort of its
    /// parameter and a fused iota, as on the held-out `moe_scan`): a copy
    /// of the parameter, then one kernel; the four fusions after it number
    /// their nodes from the sort's third.
    #[test]
    fn a_sort_fusion_copies_its_parameters_then_sorts() {
        let shape = Some(crate::proto::xla::ShapeProto { element_type: 11, dimensions: vec![2048, 8], ..Default::default() });
        let instruction = |id: i64, name: &str, opcode: &str, operands: Vec<i64>, called: Vec<i64>| HloInstructionProto {
            id,
            name: name.into(),
            opcode: opcode.into(),
            operand_ids: operands,
            called_computation_ids: called,
            shape: shape.clone(),
            ..Default::default()
        };
        let computation =
            |id: i64, root_id: i64, instructions: Vec<HloInstructionProto>| HloComputationProto { id, root_id, instructions, ..Default::default() };
        let mut sort = instruction(3, "sort.9", "sort", vec![1, 2], vec![]);
        sort.dimensions = vec![1];
        let mut entry = vec![instruction(10, "p", "parameter", vec![], vec![]), instruction(11, "fusion.11", "fusion", vec![10], vec![1])];
        entry[1].fusion_kind = "kCustom".into();
        entry.extend((0..4).map(|k| instruction(12 + k, &format!("add.{k}"), "fusion", vec![10], vec![2])));
        let module = HloModuleProto {
            entry_computation_id: 9,
            computations: vec![
                computation(1, 3, vec![instruction(1, "param_0", "parameter", vec![], vec![]), instruction(2, "iota", "iota", vec![], vec![]), sort]),
                computation(2, 5, vec![instruction(4, "x", "parameter", vec![], vec![]), instruction(5, "add", "add", vec![4, 4], vec![])]),
                computation(9, 15, entry),
            ],
            ..Default::default()
        };
        let index: FxHashMap<i64, u32> = module.computations.iter().flat_map(|c| &c.instructions).enumerate().map(|(k, i)| (i.id, k as u32)).collect();
        let names: Vec<&str> = module.computations.iter().flat_map(|c| &c.instructions).map(|i| i.name.as_str()).collect();
        let buffers = command_buffers(&module, &index);
        let commands: Vec<&str> = buffers[&1].commands.iter().map(|c| names[c.instruction as usize]).collect();
        assert_eq!(commands, ["fusion.11", "fusion.11", "add.0", "add.1", "add.2", "add.3"]);
    }

    /// `EmitSort`'s kernels: one up to the 2,048-element tile, then one
    /// per xor mask past it besides the merged ones.
    #[test]
    fn sorts_take_a_kernel_per_stage_past_the_tile() {
        assert_eq!(sort_kernels(8, 8), 1); // lax.top_k over 8 experts
        assert_eq!(sort_kernels(2048, 8), 1);
        // 4,096: 12 stages; the last stage's first mask, 4095, is past the
        // tile, between two merged runs of smaller ones.
        assert_eq!(sort_kernels(4096, 8), 3);
        // No tiling (8 elements of 8 KiB pass 48 KiB): a kernel per mask,
        // 1 + 2 + 3 for 3 stages.
        assert_eq!(sort_kernels(8, 8 * 1024), 6);
    }

    fn buffer(children: &[bool]) -> CommandBuffer {
        CommandBuffer {
            commands: children.iter().enumerate().map(|(k, &child_graph)| Command { instruction: k as u32, child_graph }).collect(),
            bodies: Vec::new(),
        }
    }

    /// As many child nodes as child commands: one to one, in order.
    #[test]
    fn child_nodes_map_one_to_one_when_counts_agree() {
        let cb = buffer(&[true, false, true, false]);
        let map = cb.child_nodes(&[0, 1, 5, 4, 3, 5], &[], &FxHashSet::default());
        assert_eq!(map.len(), 2);
        assert_eq!((map[&4], map[&5]), (0, 2));
    }

    /// Launches are read only when the child nodes are not one to one with
    /// the child commands.
    #[test]
    fn launches_are_needed_only_when_counts_differ() {
        let cb = buffer(&[true, false, true, false]);
        assert!(!cb.needs_launches(&[0, 1, 5, 4, 3, 5]));
        assert!(cb.needs_launches(&[4, 5, 6, 1, 3]));
        assert!(!cb.needs_launches(&[0, 1, 2, 3]));
        assert!(!buffer(&[false, false]).needs_launches(&[2, 3, 4]));
    }

    /// One library call ran two kernels (memset, then gemm): time order
    /// inside each launch puts both on it.
    #[test]
    fn extra_child_nodes_follow_time_order() {
        // Commands: 0 gemm (child), 1 kernel, 2 gemm (child), 3 kernel.
        let cb = buffer(&[true, false, true, false]);
        // Nodes 4 and 5 run before node 1; node 6 between 1 and 3.
        let launch = vec![(0, 4), (1, 5), (2, 1), (3, 6), (4, 3)];
        let map = cb.child_nodes(&[4, 5, 6, 1, 3], &[launch.clone(), launch], &FxHashSet::default());
        assert_eq!((map[&4], map[&5], map[&6]), (0, 0, 2));
    }

    /// A conditional in a buffer: its nodes (the kernel that picks the
    /// branch, a node per branch) among the top-level ones, and the nested
    /// nodes numbered depth first, as on the held-out `cond_gemm`: a gemm's
    /// graph (memset, kernel), the first branch's two nodes, the graph of
    /// the gemm among them, the second branch's node, the last gemm's
    /// graph. Each node goes to its instruction whichever branch ran.
    #[test]
    fn nodes_of_conditional_branches_are_laid_out_depth_first() {
        let command = |instruction, child_graph| Command { instruction, child_graph };
        let body = |commands: Vec<Command>| CommandBuffer { commands, bodies: Vec::new() };
        // 0 kernel, 1 gemm A, 2-4 conditional C (branches at 3 and 4), 5 gemm D, 6 kernel.
        let cb = CommandBuffer {
            commands: vec![
                command(1, false),
                command(10, true),
                command(20, false),
                command(20, false),
                command(20, false),
                command(50, true),
                command(6, false),
            ],
            bodies: vec![(3, body(vec![command(30, true), command(31, false)])), (4, body(vec![command(40, false)]))],
        };
        // Numbers past the 7 top-level nodes: A 7 (memset) and 8, gemm B's
        // node 9, 31 at 10, B's kernel 11, 40 at 12, D 13.
        let first = vec![(0, 0), (1, 7), (2, 8), (3, 2), (4, 11), (5, 10), (6, 13), (7, 6)];
        let second = vec![(0, 0), (1, 7), (2, 8), (3, 2), (4, 12), (5, 13), (6, 6)];
        let memsets = FxHashSet::from_iter([7]);
        let nodes = [0, 7, 8, 2, 11, 10, 13, 6, 12];
        let map = cb.child_nodes(&nodes, &[first.clone(), second.clone(), first, second.clone()], &memsets);
        let want = [(7, 10), (8, 10), (10, 31), (11, 30), (12, 40), (13, 50)];
        assert_eq!(map, FxHashMap::from_iter(want), "{map:?}");
        assert!(cb.needs_launches(&nodes) && cb.has_nested());
        // A node numbered past any layout (a damaged trace) names nothing,
        // and nothing its size is allocated.
        assert!(cb.child_nodes(&[0, 7, u32::MAX], std::slice::from_ref(&second), &memsets).is_empty());
    }

    /// Two library calls side by side, each a memset then its kernel: all
    /// four nodes run between the same top-level nodes, so their votes
    /// tie; each memset goes with the kernel numbered after it (as in
    /// tx_scan's backward loop body, its buffer's nodes 61-64).
    #[test]
    fn a_memset_goes_with_the_kernel_after_it() {
        // Commands: 0 kernel, 1 gemm (child), 2 gemm (child), 3 kernel.
        let cb = buffer(&[false, true, true, false]);
        let launch = vec![(0, 0), (1, 4), (2, 5), (3, 6), (4, 7), (5, 3)];
        let memsets = FxHashSet::from_iter([4, 6]);
        let map = cb.child_nodes(&[0, 4, 5, 6, 7, 3], &[launch.clone(), launch.clone()], &memsets);
        assert_eq!([4, 5, 6, 7].map(|n| map[&n]), [1, 1, 2, 2]);
        // Without knowing the memsets the tie is broken wrongly.
        let blind = cb.child_nodes(&[0, 4, 5, 6, 7, 3], &[launch.clone(), launch], &FxHashSet::default());
        assert_ne!([4, 5, 6, 7].map(|n| blind[&n]), [1, 1, 2, 2]);
    }
}
