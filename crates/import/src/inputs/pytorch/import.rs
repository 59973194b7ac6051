//! A PyTorch trace into the node model, so that every view reads it.
//!
//! Nodes are the trace's CPU events, named by where they ran:
//! - scopes are `record_function` annotations (`forward`, `optimizer`) and
//!   the `nn.Module: Name_k` frames `with_modules` records (as `Name_k`),
//!   nested as torch nests events on a thread (`EventList._build_tree`: a
//!   child starts before its parent ends and does not end after it);
//! - ops (`aten::conv2d`), their nested ops and runtime calls
//!   (`cudaLaunchKernel`) are nodes under their scope, with op type their
//!   name: the op view is torch's aten ops;
//! - autograd's backward ops run on a thread of their own without modules;
//!   the `fwdbwd` flow links each to its forward op, so they go under
//!   `backward/` and the forward op's modules (`backward/ResNet_0/…/Conv2d_0/
//!   autograd::engine::evaluate_function: ConvolutionBackward0/…`): a
//!   layer's forward and backward cost sit side by side;
//! - `ProfilerStep#N` is step N, not a scope; plain Python frames are the
//!   code view's call stacks, not scopes.
//!
//! A node's own CPU time is its duration less its child nodes' (so an
//! op's runtime calls are not its own time, as in torch). Kernels, copies
//! and sets count as GPU time of the op that launched them (their
//! `External id`, torch's rule), on `/device:gpu:N`; those that name no op
//! go to `(unattributed)/<kind>`. Each execution counts in the step whose
//! `ProfilerStep` holds its start (a kernel: its launching op's step);
//! before the first step, in the first. `[memory]` records are allocations
//! of the innermost op of their thread, per device (`cpu`, `cuda:N`).

use std::path::Path;

use rustc_hash::FxHashMap;

use super::{Category, Event, FlowPhase, Trace};
use crate::inputs::xplane::hlo::Frame;
use crate::stats::{ExecTotal, InputNodes, Stats};

/// What an event is in the node model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Op,
    Runtime,
    Annotation,
    Module,
    /// `ProfilerStep#N`: the step, not a scope.
    Step,
    /// A Python frame: the code view's, not a node.
    Python,
}

/// One CPU event placed in its thread's tree.
struct Placed {
    event: u32,
    part: Part,
    /// The nearest enclosing event that is a node (not a step or frame).
    scope_parent: Option<u32>,
    /// The innermost enclosing Python frame (module frames included): the
    /// code stack of an op, the caller of a frame.
    python: Option<u32>,
}

/// Imports `trace` into `stats`: its executions as per-step totals, the
/// Python stacks of its ops as code traces and, with `allocations`, its
/// `[memory]` records. Returns the start-up lines.
pub fn import(trace: &Trace, path: &Path, stats: &mut Stats, allocations: bool) -> String {
    let steps = Steps::new(trace);
    let profiler: Vec<super::Sym> = super::PROFILER_NAMES.iter().filter_map(|n| trace.strings.lookup(n)).collect();
    let part = |e: &Event| -> Option<Part> {
        match e.category {
            Category::CpuOp if !profiler.contains(&e.name) => Some(Part::Op),
            Category::CudaRuntime | Category::CudaDriver => Some(Part::Runtime),
            Category::UserAnnotation if trace.str(e.name).starts_with("ProfilerStep#") => Some(Part::Step),
            Category::UserAnnotation => Some(Part::Annotation),
            Category::PythonFunction if trace.str(e.name).starts_with("nn.Module: ") => Some(Part::Module),
            Category::PythonFunction => Some(Part::Python),
            _ => None,
        }
    };

    // The threads' nesting, and beside it the maps from ids to the ops
    // and launch calls that kernels link to.
    let place = || {
        // Each thread's events nested as torch nests them.
        let mut by_thread: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for (i, e) in trace.events.iter().enumerate() {
            if part(e).is_some() {
                by_thread.entry(e.thread.0).or_default().push(i as u32);
            }
        }
        let mut placed: Vec<Placed> = Vec::new();
        // Each event's index into `placed` (NONE: not placed).
        let mut place_of: Vec<u32> = vec![NONE; trace.events.len()];
        // Memory records by thread, in time order.
        let mut memory_by_thread: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        if allocations {
            for (i, m) in trace.memory.iter().enumerate() {
                memory_by_thread.entry(m.thread.0).or_default().push(i as u32);
            }
        }
        // The op each memory record belongs to (index into `placed`).
        let mut memory_owner: Vec<Option<u32>> = vec![None; trace.memory.len()];
        let mut threads: Vec<u32> = by_thread.keys().copied().collect();
        threads.sort_unstable();
        for thread in threads {
            // By start, the longer first (the keys are distinct: unstable is
            // stable here).
            let mut keyed: Vec<(i64, std::cmp::Reverse<i64>, u32)> = by_thread
                .remove(&thread)
                .unwrap_or_default()
                .into_iter()
                .map(|i| (trace.events[i as usize].ts, std::cmp::Reverse(trace.events[i as usize].end()), i))
                .collect();
            keyed.sort_unstable();
            let events: Vec<u32> = keyed.into_iter().map(|(_, _, i)| i).collect();
            let memory = memory_by_thread.remove(&thread).unwrap_or_default();
            let mut next_memory = 0;
            let mut stack: Vec<u32> = Vec::new();
            let pop = |stack: &mut Vec<u32>, placed: &Vec<Placed>, start: i64, end: i64| {
                while let Some(&top) = stack.last() {
                    let t = &trace.events[placed[top as usize].event as usize];
                    if start >= t.end() || end > t.end() {
                        stack.pop();
                    } else {
                        break;
                    }
                }
            };
            for &i in &events {
                let e = &trace.events[i as usize];
                // Memory records before this event belong to what is open then
                // (both ends of an op inclusive, as torch counts them).
                while next_memory < memory.len() && trace.memory[memory[next_memory] as usize].ts < e.ts {
                    let m = &trace.memory[memory[next_memory] as usize];
                    memory_owner[memory[next_memory] as usize] = innermost_op(&stack, &placed, trace, m.ts);
                    next_memory += 1;
                }
                pop(&mut stack, &placed, e.ts, e.end());
                let part = part(e).expect("only placed events are collected");
                let scope_parent = stack.iter().rev().find(|&&p| !matches!(placed[p as usize].part, Part::Step | Part::Python)).copied();
                let python = stack.iter().rev().find(|&&p| matches!(placed[p as usize].part, Part::Python | Part::Module)).copied();
                place_of[i as usize] = placed.len() as u32;
                stack.push(placed.len() as u32);
                placed.push(Placed { event: i, part, scope_parent, python });
            }
            while next_memory < memory.len() {
                let m = &trace.memory[memory[next_memory] as usize];
                memory_owner[memory[next_memory] as usize] = innermost_op(&stack, &placed, trace, m.ts);
                next_memory += 1;
            }
        }
        (placed, place_of, memory_owner)
    };
    let ((placed, place_of, memory_owner), launching_ops) = rayon::join(place, || trace.launching_ops());

    // Backward ops: the forward op each `fwdbwd` flow starts at.
    let forward_of = forward_ops(trace, &placed);

    // Node names, parents before children (placement order is per thread,
    // parents first; a backward op's forward op may be on a later thread).
    let mut paths = Paths::new();
    let mut names: Vec<u32> = vec![NONE; placed.len()];
    let mut modules: Vec<u32> = vec![NONE; placed.len()];
    for k in 0..placed.len() {
        name_of(k as u32, trace, &placed, &forward_of, &mut paths, &mut names, &mut modules);
    }

    // Totals per step, node and device.
    // The node of each name (by its id in `paths`).
    let mut nodes: FxHashMap<u32, u32> = FxHashMap::default();
    let mut node_list: Vec<(String, String)> = Vec::new();
    let mut intern = |paths: &Paths, name: u32, op_type: &str| -> u32 {
        *nodes.entry(name).or_insert_with(|| {
            node_list.push((paths.texts[name as usize].clone(), op_type.to_owned()));
            node_list.len() as u32 - 1
        })
    };
    let mut devices: Vec<String> = vec!["/host:cpu".to_owned()];
    let mut device_of: FxHashMap<u32, u32> = FxHashMap::default();
    let mut sums: FxHashMap<(i64, u32, u32), Sum> = FxHashMap::default();
    let mut node_of_placed: Vec<Option<u32>> = vec![None; placed.len()];
    // Own time: duration less the child nodes'.
    let mut child_ns: Vec<i64> = vec![0; placed.len()];
    for p in &placed {
        if matches!(p.part, Part::Op | Part::Runtime | Part::Annotation | Part::Module)
            && let Some(parent) = p.scope_parent
        {
            child_ns[parent as usize] += trace.events[p.event as usize].dur;
        }
    }
    for (k, p) in placed.iter().enumerate() {
        // Scopes are names, not executions: their time is their ops'.
        // (Python between ops, or a thread waiting for autograd's, is no
        // op's time.)
        let name = names[k];
        if name == NONE || !matches!(p.part, Part::Op | Part::Runtime) {
            continue;
        }
        let e = &trace.events[p.event as usize];
        let node = intern(&paths, name, trace.str(e.name));
        node_of_placed[k] = Some(node);
        let own = (e.dur - child_ns[k]).max(0);
        sums.entry((steps.of(e.ts), node, 0)).or_default().add(e.ts, e.end(), own, 1);
    }
    for (i, e) in trace.events.iter().enumerate() {
        let kind = match e.category {
            Category::Kernel => "kernel",
            Category::GpuMemcpy => "memcpy",
            Category::GpuMemset => "memset",
            _ => continue,
        };
        // The launching op's node; where that op is a `record_function`
        // span (a scope, no node: vLLM's and SGLang's graph replays), the
        // launch call's, which is named inside that scope.
        let node = |event: u32| Some(place_of[event as usize]).filter(|&k| k != NONE).and_then(|k| node_of_placed[k as usize].map(|n| (k, n)));
        let op = launching_ops.of(i as u32).and_then(|op| node(op).or_else(|| launching_ops.launch(e).and_then(node)));
        let (node, step) = match op {
            Some((k, node)) => (node, steps.of(trace.events[placed[k as usize].event as usize].ts)),
            None => {
                let name = paths.intern(&format!("(unattributed)/{kind}"));
                (intern(&paths, name, "(unattributed)"), steps.of(e.ts))
            }
        };
        let gpu = e.device.unwrap_or(0);
        let device = *device_of.entry(gpu).or_insert_with(|| {
            devices.push(format!("/device:gpu:{gpu}"));
            devices.len() as u32 - 1
        });
        sums.entry((step, node, device)).or_default().add(e.ts, e.end(), e.dur.max(0), 0);
    }

    // In step order, by node and device within a step.
    let mut totals: Vec<((i64, u32, u32), Sum)> = sums.into_iter().collect();
    totals.sort_unstable_by_key(|(key, _)| *key);
    let mut node_steps = vec![0u32; node_list.len()];
    let mut placed_on: Vec<Option<u32>> = vec![None; node_list.len()];
    let mut last: Option<(i64, u32)> = None;
    for ((step, node, device), _) in &totals {
        if last != Some((*step, *node)) {
            node_steps[*node as usize] += 1;
            last = Some((*step, *node));
        }
        let on = &mut placed_on[*node as usize];
        if on.is_none() || (*device != 0 && on.is_some_and(|d| d == 0)) {
            *on = Some(*device);
        }
    }
    let micros = |ns: i64| ns.div_euclid(1000);
    let mut known = InputNodes::default();
    stats.add_exec_totals(&mut known, totals.len(), |i| {
        let ((step, node, device), sum) = &totals[i];
        let (name, op_type) = &node_list[*node as usize];
        ExecTotal {
            step: *step,
            node: name,
            input_node: *node,
            op_type,
            device: &devices[*device as usize],
            on_accelerator: *device != 0,
            placed_on: &devices[placed_on[*node as usize].unwrap_or(0) as usize],
            node_steps: node_steps[*node as usize] as usize,
            start_micros: micros(sum.start),
            end_micros: micros(sum.end),
            // Rounded once, as XPlane totals are.
            micros: (sum.ns + 500).div_euclid(1000),
            runs: sum.runs,
        }
    });

    // Code traces: each op's Python stack (a backward op's: its forward op's).
    let mut frames: Vec<(String, Vec<Frame>)> = Vec::new();
    let mut framed = vec![false; node_list.len()];
    for (k, p) in placed.iter().enumerate() {
        let Some(node) = node_of_placed[k] else { continue };
        if framed[node as usize] || !matches!(p.part, Part::Op) {
            continue;
        }
        let python = p.python.or_else(|| forward_of.get(&(k as u32)).and_then(|&f| placed[f as usize].python));
        let stack = python_stack(python, trace, &placed);
        if !stack.is_empty() {
            framed[node as usize] = true;
            frames.push((node_list[node as usize].0.clone(), stack));
        }
    }
    stats.add_frames(&frames);

    if allocations {
        stats.keep_allocations = true;
        // A free is of the op whose allocation at that address it frees.
        let mut allocated_by: FxHashMap<(bool, i64, u64), Option<u32>> = FxHashMap::default();
        let mut order: Vec<usize> = (0..trace.memory.len()).collect();
        order.sort_by_key(|&i| (trace.memory[i].ts, i));
        for i in order {
            let m = &trace.memory[i];
            if m.out_of_memory || !(m.is_cpu() || m.is_device()) {
                continue;
            }
            let key = (m.is_cpu(), m.device_id, m.addr);
            let node = if m.bytes < 0 {
                allocated_by.remove(&key).flatten()
            } else {
                let node = memory_owner[i].and_then(|k| node_of_placed[k as usize]);
                allocated_by.insert(key, node);
                node
            };
            let allocator = if m.is_cpu() { "cpu".to_owned() } else { format!("cuda:{}", m.device_id) };
            let node = node.map_or("", |n| node_list[n as usize].0.as_str());
            stats.add_allocation(steps.of(m.ts), &allocator, micros(m.ts), m.bytes, node, Some(m.total_allocated));
        }
    }

    let ops_count = placed.iter().filter(|p| p.part == Part::Op).count();
    let kernels = trace.events.iter().filter(|e| e.category == Category::Kernel).count();
    let mut lines = format!("pytorch: {}: {} events ({ops_count} ops, {kernels} kernels), {} nodes\n", path.display(), trace.events.len(), stats.nodes.len());
    if steps.spans.is_empty() {
        lines.push_str("pytorch: no ProfilerStep#N: the whole trace is step 0\n");
    } else {
        let numbers: Vec<String> = steps.spans.iter().map(|s| s.0.to_string()).collect();
        lines.push_str(&format!("pytorch: steps {} (ProfilerStep#N)\n", numbers.join(", ")));
    }
    if trace.memory.is_empty() {
        lines.push_str("pytorch: the trace holds no [memory] records (profile_memory=True records them): the bytes columns are 0\n");
    }
    lines
}

/// Summed executions of one node on one device in one step.
#[derive(Default)]
struct Sum {
    start: i64,
    end: i64,
    ns: i64,
    runs: i64,
}

impl Sum {
    fn add(&mut self, start: i64, end: i64, ns: i64, runs: i64) {
        if self.runs == 0 && self.ns == 0 && self.start == 0 && self.end == 0 {
            (self.start, self.end) = (start, end);
        }
        self.start = self.start.min(start);
        self.end = self.end.max(end);
        self.ns = self.ns.saturating_add(ns);
        self.runs += runs;
    }
}

/// The `ProfilerStep#N` spans, by start.
struct Steps {
    /// (N, start ns), by start.
    spans: Vec<(i64, i64)>,
}

impl Steps {
    fn new(trace: &Trace) -> Steps {
        let mut spans: Vec<(i64, i64)> = trace.steps().into_iter().map(|(n, i)| (i64::try_from(n).unwrap_or(i64::MAX), trace.events[i as usize].ts)).collect();
        spans.sort_by_key(|&(n, start)| (start, n));
        Steps { spans }
    }

    /// The step of an execution starting at `ts`: the last step started by
    /// then, else the first; 0 without steps.
    fn of(&self, ts: i64) -> i64 {
        let after = self.spans.partition_point(|&(_, start)| start <= ts);
        match (after, self.spans.first()) {
            (0, Some(first)) => first.0,
            (0, None) => 0,
            (k, _) => self.spans[k - 1].0,
        }
    }
}

/// The innermost op open at `ts` (inclusive of its end) on a thread whose
/// open events are `stack`.
fn innermost_op(stack: &[u32], placed: &[Placed], trace: &Trace, ts: i64) -> Option<u32> {
    stack.iter().rev().copied().find(|&k| {
        let p = &placed[k as usize];
        let e = &trace.events[p.event as usize];
        p.part == Part::Op && e.ts <= ts && ts <= e.end()
    })
}

/// Backward op (index into `placed`: the outermost of its thread) → its
/// forward op, from the `fwdbwd` flows: a flow starts where its forward op
/// starts and finishes where its backward function starts, on their
/// threads.
fn forward_ops(trace: &Trace, placed: &[Placed]) -> FxHashMap<u32, u32> {
    let Some(fwdbwd) = trace.strings.lookup("fwdbwd") else { return FxHashMap::default() };
    // The outermost op starting at each (thread, ts).
    let mut op_at: FxHashMap<(u32, i64), u32> = FxHashMap::default();
    for (k, p) in placed.iter().enumerate() {
        let e = &trace.events[p.event as usize];
        if p.part == Part::Op {
            op_at.entry((e.thread.0, e.ts)).or_insert(k as u32);
        }
    }
    let mut starts: FxHashMap<u64, u32> = FxHashMap::default();
    let mut finishes: Vec<(u64, u32)> = Vec::new();
    for f in trace.flows.iter().filter(|f| f.cat == fwdbwd) {
        let Some(&op) = op_at.get(&(f.thread.0, f.ts)) else { continue };
        match f.phase {
            FlowPhase::Start => {
                starts.entry(f.id).or_insert(op);
            }
            FlowPhase::Finish => finishes.push((f.id, op)),
            FlowPhase::Step => {}
        }
    }
    // The flow finishes at the backward function (`MeanBackward0`), inside
    // autograd's `evaluate_function` for it: the op whose name it decides.
    let root = |mut k: u32| {
        while let Some(parent) = placed[k as usize].scope_parent {
            k = parent;
        }
        k
    };
    // Only where autograd ran on a thread of its own: on the forward
    // thread (CPU programs), backward ops nest in its scopes already.
    let thread = |k: u32| trace.events[placed[k as usize].event as usize].thread;
    finishes
        .into_iter()
        .filter_map(|(id, backward)| Some((root(backward), *starts.get(&id)?)))
        .filter(|&(backward, forward)| thread(backward) != thread(forward))
        .collect()
}

/// The component an event adds to its node's name.
fn component<'t>(trace: &'t Trace, p: &Placed) -> &'t str {
    let name = trace.str(trace.events[p.event as usize].name);
    if p.part == Part::Module { name.trim_start_matches("nn.Module: ") } else { name }
}

/// No index (of a placed event, of a name).
const NONE: u32 = u32::MAX;

/// Node names and module paths, each text once (id 0: ""), and what
/// joining two gave: a million events have a few thousand names, so each
/// name is built once rather than per event (`bench/pytorch.md`).
struct Paths {
    texts: Vec<String>,
    ids: FxHashMap<String, u32>,
    joined: FxHashMap<(u32, Tail), u32>,
}

/// What is joined to a path: an event's component (its name, trimmed if a
/// module's), or another path.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Tail {
    Event(super::Sym, bool),
    Path(u32),
}

impl Paths {
    fn new() -> Paths {
        let mut paths = Paths { texts: Vec::new(), ids: FxHashMap::default(), joined: FxHashMap::default() };
        paths.intern("");
        paths
    }

    fn intern(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        let id = self.texts.len() as u32;
        self.texts.push(text.to_owned());
        self.ids.insert(text.to_owned(), id);
        id
    }

    /// [`join`] of path `scope` and `tail`, whose text is `text`.
    fn join(&mut self, scope: u32, tail: Tail, text: &str) -> u32 {
        if let Some(&id) = self.joined.get(&(scope, tail)) {
            return id;
        }
        let id = self.intern(&join(&self.texts[scope as usize], text));
        self.joined.insert((scope, tail), id);
        id
    }

    /// [`join`] of paths `scope` and `tail`.
    fn join_paths(&mut self, scope: u32, tail: u32) -> u32 {
        let text = self.texts[tail as usize].clone();
        self.join(scope, Tail::Path(tail), &text)
    }
}

/// Names placed event `k` (and its scope ancestors first): its scope
/// parent's name and its own component; a backward op with no scope
/// parent goes under `backward/` and its forward op's modules. Also keeps
/// each event's module path (the modules it is in, and itself if one).
/// Names and module paths are ids in `paths`.
fn name_of(k: u32, trace: &Trace, placed: &[Placed], forward_of: &FxHashMap<u32, u32>, paths: &mut Paths, names: &mut [u32], modules: &mut [u32]) {
    // The unnamed events from `k` up its scopes (iteratively: scopes nest
    // thousands deep in recursive programs).
    let mut chain = Vec::new();
    let mut at = Some(k);
    while let Some(x) = at {
        if names[x as usize] != NONE {
            break;
        }
        chain.push(x);
        at = placed[x as usize].scope_parent;
    }
    let or_empty = |id: u32| if id == NONE { 0 } else { id };
    for &k in chain.iter().rev() {
        let p = &placed[k as usize];
        if names[k as usize] != NONE || !is_node(p) {
            continue;
        }
        let own = component(trace, p);
        let tail = Tail::Event(trace.events[p.event as usize].name, p.part == Part::Module);
        let (name, module) = match p.scope_parent {
            Some(parent) => {
                let parent_modules = or_empty(modules[parent as usize]);
                let name = paths.join(or_empty(names[parent as usize]), tail, own);
                (name, if p.part == Part::Module { paths.join(parent_modules, tail, own) } else { parent_modules })
            }
            None => {
                // (A forward op's thread is another: naming it never comes
                // back here.)
                let forward_modules = forward_of.get(&k).map(|&f| {
                    if names[f as usize] == NONE {
                        name_of(f, trace, placed, forward_of, paths, names, modules);
                    }
                    or_empty(modules[f as usize])
                });
                let backward = forward_modules.is_some() || own.starts_with("autograd::engine::evaluate_function");
                let prefix = match (backward, forward_modules) {
                    (true, Some(m)) => {
                        let backward = paths.intern("backward");
                        paths.join_paths(backward, m)
                    }
                    (true, None) => paths.intern("backward"),
                    (false, _) => 0,
                };
                let module = forward_modules.unwrap_or(0);
                (paths.join(prefix, tail, own), if p.part == Part::Module { paths.join(module, tail, own) } else { module })
            }
        };
        names[k as usize] = name;
        modules[k as usize] = module;
    }
}

fn is_node(p: &Placed) -> bool {
    matches!(p.part, Part::Op | Part::Runtime | Part::Annotation | Part::Module)
}

fn join(scope: &str, name: &str) -> String {
    match (scope.is_empty(), name.is_empty()) {
        (true, _) => name.to_owned(),
        (false, true) => scope.to_owned(),
        (false, false) => format!("{scope}/{name}"),
    }
}

/// The Python stack from frame `python` (index into `placed`) outward,
/// innermost first: its `file.py(12): function` frames (module frames are
/// the scope view's; built-in calls name no line).
fn python_stack(python: Option<u32>, trace: &Trace, placed: &[Placed]) -> Vec<Frame> {
    let mut stack = Vec::new();
    let mut at = python;
    while let Some(k) = at {
        let p = &placed[k as usize];
        stack.extend(frame(trace.str(trace.events[p.event as usize].name)));
        at = p.python;
    }
    stack
}

/// `file.py(12): function` as a frame; `None` for other Python events.
fn frame(name: &str) -> Option<Frame> {
    let (location, function) = name.split_once("): ")?;
    let (file, line) = location.rsplit_once('(')?;
    Some(Frame { file: file.to_owned(), line: line.parse().ok()?, function: function.to_owned() })
}
