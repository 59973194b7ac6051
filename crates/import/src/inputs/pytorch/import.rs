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

use std::cmp::Reverse;
use std::path::Path;

use rustc_hash::FxHashMap;

use super::windows::{Window, Windows};
use super::{Category, Event, FlowPhase, Trace};
use crate::error::{Error, Result};
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
    if allocations {
        stats.keep_allocations = true;
    }
    let mut model = Model::default();
    model.add(contribution(trace, &steps, Counted::All, allocations).expect("a whole trace counts every execution in its own place"));
    model.finish(stats, path, &steps)
}

/// Imports the trace `windows` plans a window at a time, with the numbers
/// of [`import`] (without allocations): each window counts the executions
/// it owns ([`Window::own`]; device work by its launch, [`Window::owns`]),
/// each in its step of the whole trace, and the windows' sums are added
/// before they are rounded. An op that runs past the step after its
/// window's (whose child ops the window may not hold) is an error rather
/// than a wrong own time.
pub fn import_windows(windows: &Windows, stats: &mut Stats) -> Result<String> {
    let mut import = WindowedImport::new(windows);
    for k in 0..windows.windows.len() {
        import.add(k, &windows.read(k)?)?;
    }
    Ok(import.finish(stats))
}

/// `import_windows` fed one window at a time, for a caller that reads
/// each window for other analyses too (`partial` reads the rank's steps
/// from the same windows); or, made by [`WindowedImport::allocations`],
/// the `[memory]` records of [`allocations_windows`]; or, made by
/// [`WindowedImport::with_allocations`], both (the report).
pub struct WindowedImport<'w> {
    windows: &'w Windows,
    steps: Steps,
    /// Each step's window.
    window_of: FxHashMap<i64, usize>,
    model: Model,
    /// Reading `[memory]` records: the steps handed over so far, and which
    /// nodes have executions. `None`: building the node model.
    records: Option<Records>,
}

/// What [`WindowedImport::allocations`] keeps between windows.
#[derive(Default)]
struct Records {
    handed: rustc_hash::FxHashSet<i64>,
    counted: Vec<bool>,
    /// The node model is built too: the sums of the steps handed over are
    /// set aside for it rather than dropped.
    keep_model: bool,
}

impl<'w> WindowedImport<'w> {
    pub fn new(windows: &'w Windows) -> WindowedImport<'w> {
        WindowedImport { windows, steps: Steps::new(&windows.steps), window_of: window_of_steps(windows), model: Model::default(), records: None }
    }

    /// An import of the `[memory]` records only: windows are added with
    /// [`WindowedImport::add_allocations`], which hands the steps over.
    pub fn allocations(windows: &'w Windows) -> WindowedImport<'w> {
        WindowedImport { records: Some(Records::default()), ..WindowedImport::new(windows) }
    }

    /// An import of the node model and the `[memory]` records, each window
    /// walked once: windows are added with
    /// [`WindowedImport::add_allocations`], which hands the steps' records
    /// over; [`WindowedImport::finish_with_allocations`] gives the model.
    pub fn with_allocations(windows: &'w Windows) -> WindowedImport<'w> {
        WindowedImport { records: Some(Records { keep_model: true, ..Records::default() }), ..WindowedImport::new(windows) }
    }

    /// Adds window `k`, whose trace is `trace` ([`Windows::read`]); windows
    /// come in order.
    pub fn add(&mut self, k: usize, trace: &Trace) -> Result<()> {
        self.read(k, trace)?;
        let window_of = &self.window_of;
        self.model.settle(|step| earlier(window_of, step, k));
        Ok(())
    }

    /// Adds window `k` as [`WindowedImport::add`] does, with its `[memory]`
    /// records; returns the steps no later window adds to (in order).
    pub fn add_allocations(&mut self, k: usize, trace: &Trace) -> Result<Vec<StepAllocations>> {
        self.read(k, trace)?;
        self.hand_over(Some(k))
    }

    /// Adds the totals to `stats`; returns the start-up lines.
    pub fn finish(self, stats: &mut Stats) -> String {
        self.model.finish(stats, self.windows.path(), &self.steps)
    }

    /// For an import [`WindowedImport::with_allocations`]: the steps not
    /// handed over yet; adds the totals to `stats` and returns the start-up
    /// lines (the node model holds no records: they were handed over).
    pub fn finish_with_allocations(mut self, stats: &mut Stats) -> Result<(Vec<StepAllocations>, String)> {
        let last = self.hand_over(None)?;
        Ok((last, self.model.finish(stats, self.windows.path(), &self.steps)))
    }

    /// The steps not handed over yet, and the start-up lines of `import`.
    pub fn finish_allocations(mut self) -> Result<(Vec<StepAllocations>, String)> {
        let last = self.hand_over(None)?;
        let nodes = self.records.as_ref().map_or(0, |r| r.counted.iter().filter(|&&c| c).count());
        Ok((last, format!("Reading Files...\n{}", self.model.lines(self.windows.path(), nodes, &self.steps))))
    }

    /// Counts what window `k` owns into the model.
    fn read(&mut self, k: usize, trace: &Trace) -> Result<()> {
        let window = Counted::Window(k, &self.windows.windows[k]);
        let part = contribution(trace, &self.steps, window, self.records.is_some()).map_err(|m| cannot(self.windows, m))?;
        self.model.add(part);
        Ok(())
    }

    /// Takes out of the model the steps of windows before `k` (`None`:
    /// all of them), each once.
    fn hand_over(&mut self, before: Option<usize>) -> Result<Vec<StepAllocations>> {
        let window_of = &self.window_of;
        let taken = |step| before.is_none_or(|k| earlier(window_of, step, k));
        let records = self.records.get_or_insert_with(Records::default);
        let steps = self.model.hand_over(&taken, &mut records.counted, records.keep_model);
        if let Some(step) = steps.iter().find(|s| !records.handed.insert(s.step)) {
            return Err(cannot(self.windows, format!("step {} has executions in two windows", step.step)));
        }
        Ok(steps)
    }
}

/// Whether `step` belongs to a window before `k`: later windows add only
/// to their own steps and the step before (device work of an op that
/// began in it), so no window from `k` on adds to it.
fn earlier(window_of: &FxHashMap<i64, usize>, step: i64, k: usize) -> bool {
    window_of.get(&step).is_some_and(|&w| w < k)
}

/// One step's `[memory]` records, as `rtfprof memory` replays them,
/// handed over by [`allocations_windows`].
#[derive(Debug)]
pub struct StepAllocations {
    pub step: i64,
    /// The earliest start (µs, above 0) of the step's nodes, each node's
    /// as the node model keeps it (`ExecStep::all_start_micros`).
    pub first_exec_micros: Option<i64>,
    /// Its records, in time order, as `import` keeps them in
    /// [`Stats::allocations`].
    pub allocations: Vec<crate::stats::AllocationEvent>,
}

/// Reads the `[memory]` records of the trace `windows` plans a window at
/// a time, as `import` with allocations gives them to the node model,
/// and hands each step that has executions or records to `each` (in order
/// within a window) once no later window adds to it. No node model is
/// built: the memory taken is a window's and what `each` keeps. Returns
/// the start-up lines of `import`.
pub fn allocations_windows(windows: &Windows, mut each: impl FnMut(StepAllocations)) -> Result<String> {
    let mut import = WindowedImport::allocations(windows);
    for k in 0..windows.windows.len() {
        import.add_allocations(k, &windows.read(k)?)?.into_iter().for_each(&mut each);
    }
    let (last, lines) = import.finish_allocations()?;
    last.into_iter().for_each(each);
    Ok(lines)
}

/// Each step's window, by step number.
fn window_of_steps(windows: &Windows) -> FxHashMap<i64, usize> {
    windows.windows.iter().enumerate().flat_map(|(k, w)| w.steps.iter().map(move |&n| (i64::try_from(n).unwrap_or(i64::MAX), k))).collect()
}

/// The error of a trace that cannot be read a window at a time, and why.
fn cannot(windows: &Windows, why: String) -> Error {
    Error::input(super::KIND, windows.path(), format!("cannot be read a window at a time: {why} (read it whole: --window_mb 0)"))
}

/// Which executions of a trace an import counts.
#[derive(Clone, Copy)]
enum Counted<'w> {
    /// All of them: the trace is read whole.
    All,
    /// Those window `k` of a plan owns.
    Window(usize, &'w Window),
}

/// Where a node was first seen, comparable across windows, so that nodes
/// read in windows are made in the order the whole trace makes them: an
/// op's node by its first execution in placement order (thread, start,
/// the longer first, file order), then device work that names no op, in
/// file order (window by window: a window's events are in file order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Seen {
    unattributed: bool,
    thread: u32,
    ts: i64,
    longer: Reverse<i64>,
    window: usize,
    index: u32,
}

/// A node as one trace (or window) names it.
struct NamedNode {
    name: String,
    op_type: String,
    /// Its first counted execution in this trace, if any.
    seen: Option<Seen>,
}

/// An allocation or free of a `[memory]` record, by the node that holds
/// its bytes (an index into the nodes of its [`Contribution`] or
/// [`Model`]). A contribution knows an allocation's node (its op); a
/// free's is that of the allocation at its address, which the model
/// finds, as it may be in an earlier window.
struct Allocation {
    step: i64,
    allocator: String,
    /// (on the CPU, device, address).
    address: (bool, i64, u64),
    micros: i64,
    bytes: i64,
    node: Option<u32>,
    in_use: i64,
}

/// A sum's key: (step, node, GPU; `None`: host time).
type SumKey = (i64, u32, Option<u32>);

/// A total ready for the model: (step, node, device) by their numbers.
type Total = ((i64, u32, u32), Sum);

/// What one trace, or one window of a trace, counts.
#[derive(Default)]
struct Contribution {
    nodes: Vec<NamedNode>,
    sums: FxHashMap<SumKey, Sum>,
    /// Each node's code stack: that of its first op in placement order
    /// with one.
    frames: Vec<(u32, Seen, Vec<Frame>)>,
    /// The GPUs of the device work, first seen at (window, event).
    devices: Vec<(u32, (usize, u32))>,
    allocations: Vec<Allocation>,
    events: usize,
    ops: usize,
    kernels: usize,
    has_memory: bool,
}

/// What `trace` counts (`steps`: the whole trace's, which a window's
/// events are counted in); `Err` says why a window cannot count an
/// execution of its own.
fn contribution(trace: &Trace, steps: &Steps, counted: Counted, allocations: bool) -> std::result::Result<Contribution, String> {
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
    let launches = launching_ops.launches();
    let window = match counted {
        Counted::All => 0,
        Counted::Window(k, _) => k,
    };
    // Whether this trace counts a host event (or record) at a time, a host
    // event, and a device event.
    let counts_host_at = |ts: i64| match counted {
        Counted::All => true,
        Counted::Window(_, w) => w.own.0 <= ts && ts < w.own.1,
    };
    let counts_host = |e: &Event| counts_host_at(e.ts);
    let counts_event = |i: u32| match counted {
        Counted::All => true,
        Counted::Window(_, w) => w.owns(trace, launches, i),
    };

    // Backward ops: the forward op each `fwdbwd` flow starts at. A window
    // must hold the forward op of each backward op it counts.
    let (forward_of, missing) = forward_ops(trace, &placed);
    let missing: rustc_hash::FxHashSet<u32> = match counted {
        Counted::Window(k, _) if k > 0 => missing.into_iter().collect(),
        _ => Default::default(),
    };

    // Node names, parents before children (placement order is per thread,
    // parents first; a backward op's forward op may be on a later thread).
    let mut paths = Paths::new();
    let mut names: Vec<u32> = vec![NONE; placed.len()];
    let mut modules: Vec<u32> = vec![NONE; placed.len()];
    for k in 0..placed.len() {
        name_of(k as u32, trace, &placed, &forward_of, &mut paths, &mut names, &mut modules);
    }

    // Totals per step, node and device.
    let mut out = Contribution { has_memory: !trace.memory.is_empty(), ..Contribution::default() };
    // The node of each name (by its id in `paths`).
    let mut nodes: FxHashMap<u32, u32> = FxHashMap::default();
    let mut intern = |out: &mut Contribution, paths: &Paths, name: u32, op_type: &str, seen: Option<Seen>| -> u32 {
        let node = *nodes.entry(name).or_insert_with(|| {
            out.nodes.push(NamedNode { name: paths.texts[name as usize].clone(), op_type: op_type.to_owned(), seen: None });
            out.nodes.len() as u32 - 1
        });
        let first = &mut out.nodes[node as usize].seen;
        if first.is_none() {
            *first = seen;
        }
        node
    };
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
    let mut seen_at: Vec<Option<Seen>> = vec![None; placed.len()];
    for (k, p) in placed.iter().enumerate() {
        // Scopes are names, not executions: their time is their ops'.
        // (Python between ops, or a thread waiting for autograd's, is no
        // op's time.)
        let name = names[k];
        if name == NONE || !matches!(p.part, Part::Op | Part::Runtime) {
            continue;
        }
        let e = &trace.events[p.event as usize];
        let counts = counts_host(e);
        let seen = counts.then_some(Seen { unattributed: false, thread: e.thread.0, ts: e.ts, longer: Reverse(e.end()), window, index: p.event });
        // (Named even where not counted: device work it launched may be.)
        let node = intern(&mut out, &paths, name, trace.str(e.name), seen);
        node_of_placed[k] = Some(node);
        if !counts {
            continue;
        }
        if let Counted::Window(_, w) = counted {
            if e.end() > w.held().1 {
                return Err(format!("{} at {} ns runs past the step after its window's", trace.str(e.name), e.ts));
            }
            if !missing.is_empty() && missing.contains(&root_of(&placed, k as u32)) {
                return Err(format!("the forward op of {} at {} ns is not within a step of it", trace.str(e.name), e.ts));
            }
        }
        seen_at[k] = seen;
        out.ops += usize::from(p.part == Part::Op);
        let own = (e.dur - child_ns[k]).max(0);
        out.sums.entry((steps.of(e.ts), node, None)).or_default().add(e.ts, e.end(), own, 1);
    }
    let mut devices: FxHashMap<u32, (usize, u32)> = FxHashMap::default();
    for (i, e) in trace.events.iter().enumerate() {
        let kind = match e.category {
            Category::Kernel => "kernel",
            Category::GpuMemcpy => "memcpy",
            Category::GpuMemset => "memset",
            _ => continue,
        };
        if !counts_event(i as u32) {
            continue;
        }
        out.kernels += usize::from(e.category == Category::Kernel);
        // The launching op's node; where that op is a `record_function`
        // span (a scope, no node: vLLM's and SGLang's graph replays), the
        // launch call's, which is named inside that scope.
        let node = |event: u32| Some(place_of[event as usize]).filter(|&k| k != NONE).and_then(|k| node_of_placed[k as usize].map(|n| (k, n)));
        let op = launching_ops.of(i as u32).and_then(|op| node(op).or_else(|| launching_ops.launch(e).and_then(node)));
        let (node, step) = match op {
            Some((k, node)) => (node, steps.of(trace.events[placed[k as usize].event as usize].ts)),
            None => {
                let name = paths.intern(&format!("(unattributed)/{kind}"));
                let seen = Seen { unattributed: true, thread: 0, ts: 0, longer: Reverse(0), window, index: i as u32 };
                (intern(&mut out, &paths, name, "(unattributed)", Some(seen)), steps.of(e.ts))
            }
        };
        let gpu = e.device.unwrap_or(0);
        devices.entry(gpu).or_insert((window, i as u32));
        out.sums.entry((step, node, Some(gpu))).or_default().add(e.ts, e.end(), e.dur.max(0), 0);
    }
    out.devices = devices.into_iter().collect();
    out.events = (0..trace.events.len() as u32).filter(|&i| counts_event(i)).count();

    // Code traces: each op's Python stack (a backward op's: its forward op's).
    let mut framed = vec![false; out.nodes.len()];
    for (k, p) in placed.iter().enumerate() {
        let (Some(node), Some(seen)) = (node_of_placed[k], seen_at[k]) else { continue };
        if framed[node as usize] || !matches!(p.part, Part::Op) {
            continue;
        }
        let python = p.python.or_else(|| forward_of.get(&(k as u32)).and_then(|&f| placed[f as usize].python));
        let stack = python_stack(python, trace, &placed);
        if !stack.is_empty() {
            framed[node as usize] = true;
            out.frames.push((node, seen, stack));
        }
    }

    if allocations {
        // In time order (a window: those in the time it owns); a free's
        // node is found by the model.
        let mut order: Vec<usize> = (0..trace.memory.len()).filter(|&i| counts_host_at(trace.memory[i].ts)).collect();
        order.sort_by_key(|&i| (trace.memory[i].ts, i));
        for i in order {
            let m = &trace.memory[i];
            if m.out_of_memory || !(m.is_cpu() || m.is_device()) {
                continue;
            }
            let node = if m.bytes < 0 { None } else { memory_owner[i].and_then(|k| node_of_placed[k as usize]) };
            let allocator = if m.is_cpu() { "cpu".to_owned() } else { format!("cuda:{}", m.device_id) };
            out.allocations.push(Allocation {
                step: steps.of(m.ts),
                allocator,
                address: (m.is_cpu(), m.device_id, m.addr),
                micros: m.ts.div_euclid(1000),
                bytes: m.bytes,
                node,
                in_use: m.total_allocated,
            });
        }
    }
    Ok(out)
}

/// The contributions of a trace's windows (or of the whole trace) added
/// up, by node name.
#[derive(Default)]
struct Model {
    nodes: Vec<NamedNode>,
    by_name: FxHashMap<String, u32>,
    /// Sums that a later window may still add to.
    sums: FxHashMap<SumKey, Sum>,
    /// Sums no later window adds to, a chunk of steps each, kept compact
    /// (a trace of thousands of steps has millions).
    settled: Vec<Vec<(SumKey, Sum)>>,
    frames: FxHashMap<u32, (Seen, Vec<Frame>)>,
    devices: FxHashMap<u32, (usize, u32)>,
    allocations: Vec<Allocation>,
    /// The node of the live allocation at each address.
    allocated_by: FxHashMap<(bool, i64, u64), Option<u32>>,
    /// Each node's name as handed over with records, shared by them.
    shared_names: Vec<Option<crate::stats::NodeName>>,
    events: usize,
    ops: usize,
    kernels: usize,
    has_memory: bool,
}

impl Model {
    fn add(&mut self, part: Contribution) {
        let ids: Vec<u32> = part
            .nodes
            .into_iter()
            .map(|n| {
                let id = *self.by_name.entry(n.name.clone()).or_insert_with(|| {
                    self.nodes.push(NamedNode { name: n.name, op_type: n.op_type, seen: None });
                    self.nodes.len() as u32 - 1
                });
                let seen = &mut self.nodes[id as usize].seen;
                *seen = match (*seen, n.seen) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                id
            })
            .collect();
        for ((step, node, gpu), sum) in part.sums {
            self.sums.entry((step, ids[node as usize], gpu)).or_default().add_sum(&sum);
        }
        for (node, seen, stack) in part.frames {
            let slot = self.frames.entry(ids[node as usize]).or_insert((seen, Vec::new()));
            if seen <= slot.0 {
                *slot = (seen, stack);
            }
        }
        for (gpu, at) in part.devices {
            let first = self.devices.entry(gpu).or_insert(at);
            *first = (*first).min(at);
        }
        // A free is of the op whose allocation at that address it frees.
        for a in part.allocations {
            let node = if a.bytes < 0 {
                self.allocated_by.remove(&a.address).flatten()
            } else {
                let node = a.node.map(|n| ids[n as usize]);
                self.allocated_by.insert(a.address, node);
                node
            };
            self.allocations.push(Allocation { node, ..a });
        }
        self.events += part.events;
        self.ops += part.ops;
        self.kernels += part.kernels;
        self.has_memory |= part.has_memory;
    }

    /// Sets aside the sums of the steps no later window adds to.
    fn settle(&mut self, settled: impl Fn(i64) -> bool) {
        let chunk = self.take_sums(settled);
        if !chunk.is_empty() {
            self.settled.push(chunk);
        }
    }

    /// Takes out the sums and records of the steps `taken` says, as each
    /// step's records and first execution (marking in `counted` the nodes
    /// that have executions); with `keep_sums`, the sums are set aside for
    /// the node model as [`Model::settle`] does.
    fn hand_over(&mut self, taken: &dyn Fn(i64) -> bool, counted: &mut Vec<bool>, keep_sums: bool) -> Vec<StepAllocations> {
        let mut sums = self.take_sums(taken);
        counted.resize(self.nodes.len(), false);
        // Each node's start as the node model folds its totals' (host
        // first, then GPUs in the order first seen; a start of 0 is
        // replaced by the next), then the earliest above 0.
        let device_rank = |gpu: Option<u32>| gpu.map(|g| (self.devices.get(&g).copied(), g));
        sums.sort_unstable_by_key(|&((step, node, gpu), _)| (step, node, device_rank(gpu)));
        let mut first: std::collections::BTreeMap<i64, Option<i64>> = Default::default();
        let mut i = 0;
        while i < sums.len() {
            let (step, node, _) = sums[i].0;
            counted[node as usize] = true;
            let mut start = 0;
            while i < sums.len() && (sums[i].0.0, sums[i].0.1) == (step, node) {
                let micros = sums[i].1.start.div_euclid(1000);
                start = if start > 0 { start.min(micros) } else { micros };
                i += 1;
            }
            let earliest = first.entry(step).or_default();
            if start > 0 {
                *earliest = Some(earliest.map_or(start, |e: i64| e.min(start)));
            }
        }
        if keep_sums && !sums.is_empty() {
            self.settled.push(sums);
        }
        let (records, kept): (Vec<Allocation>, Vec<Allocation>) = std::mem::take(&mut self.allocations).into_iter().partition(|a| taken(a.step));
        self.allocations = kept;
        let mut by_step: std::collections::BTreeMap<i64, Vec<crate::stats::AllocationEvent>> = Default::default();
        self.shared_names.resize(self.nodes.len(), None);
        for a in records {
            first.entry(a.step).or_default();
            let node = match a.node {
                Some(n) => self.shared_names[n as usize].get_or_insert_with(|| self.nodes[n as usize].name.as_str().into()).clone(),
                None => "".into(),
            };
            by_step.entry(a.step).or_default().push(crate::stats::AllocationEvent {
                step: a.step,
                allocator: crate::stats::symbol::symbol(&a.allocator),
                micros: a.micros,
                bytes: a.bytes,
                node,
                in_use: Some(a.in_use),
                job: "",
            });
        }
        first
            .into_iter()
            .map(|(step, first_exec_micros)| StepAllocations { step, first_exec_micros, allocations: by_step.remove(&step).unwrap_or_default() })
            .collect()
    }

    /// Takes out the sums of the steps `taken` says.
    fn take_sums(&mut self, taken: impl Fn(i64) -> bool) -> Vec<(SumKey, Sum)> {
        let mut chunk = Vec::new();
        self.sums.retain(|&key, sum| {
            let done = taken(key.0);
            if done {
                chunk.push((key, std::mem::take(sum)));
            }
            !done
        });
        if !chunk.is_empty() {
            self.sums.shrink_to_fit();
        }
        chunk
    }

    /// Adds the totals, code traces and allocations to `stats`, nodes in
    /// the order they were first seen; returns the start-up lines.
    fn finish(mut self, stats: &mut Stats, path: &Path, steps: &Steps) -> String {
        // Nodes and devices numbered in the order first seen.
        let mut order: Vec<u32> = (0..self.nodes.len() as u32).collect();
        order.sort_by(|&a, &b| {
            let key = |n: u32| (self.nodes[n as usize].seen.is_none(), self.nodes[n as usize].seen);
            key(a).cmp(&key(b))
        });
        let mut rank = vec![0u32; self.nodes.len()];
        for (r, &n) in order.iter().enumerate() {
            rank[n as usize] = r as u32;
        }
        let node_list: Vec<&NamedNode> = order.iter().map(|&n| &self.nodes[n as usize]).collect();
        let mut gpus: Vec<(u32, (usize, u32))> = std::mem::take(&mut self.devices).into_iter().collect();
        gpus.sort_by_key(|&(gpu, at)| (at, gpu));
        let mut devices: Vec<String> = vec!["/host:cpu".to_owned()];
        let mut device_of: FxHashMap<u32, u32> = FxHashMap::default();
        for (gpu, _) in gpus {
            device_of.insert(gpu, devices.len() as u32);
            devices.push(format!("/device:gpu:{gpu}"));
        }

        // In step order, by node and device within a step: chunk after
        // chunk of steps (one chunk where windows' steps are not numbered
        // in time order).
        let mut chunks = std::mem::take(&mut self.settled);
        chunks.push(std::mem::take(&mut self.sums).into_iter().collect());
        chunks.retain(|c| !c.is_empty());
        let span = |c: &Vec<(SumKey, Sum)>| {
            let steps = c.iter().map(|(key, _)| key.0);
            (steps.clone().min().unwrap_or(0), steps.max().unwrap_or(0))
        };
        if chunks.windows(2).any(|w| span(&w[0]).1 >= span(&w[1]).0) {
            chunks = vec![chunks.into_iter().flatten().collect()];
        }
        let chunks: Vec<Vec<Total>> = chunks
            .into_iter()
            .map(|chunk| {
                let mut totals: Vec<Total> =
                    chunk.into_iter().map(|((step, node, gpu), sum)| ((step, rank[node as usize], gpu.map_or(0, |g| device_of[&g])), sum)).collect();
                totals.sort_unstable_by_key(|(key, _)| *key);
                // (A sum a window added to after it was settled.)
                totals.dedup_by(|(key, sum), (first_key, first)| {
                    let same = key == first_key;
                    if same {
                        first.add_sum(sum);
                    }
                    same
                });
                totals
            })
            .collect();
        let mut node_steps = vec![0u32; node_list.len()];
        let mut placed_on: Vec<Option<u32>> = vec![None; node_list.len()];
        let mut last: Option<(i64, u32)> = None;
        for ((step, node, device), _) in chunks.iter().flatten() {
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
        // (Each chunk is freed as the model takes it.)
        for totals in chunks {
            stats.add_exec_totals(&mut known, totals.len(), |i| {
                let ((step, node, device), sum) = &totals[i];
                let named = node_list[*node as usize];
                ExecTotal {
                    step: *step,
                    node: &named.name,
                    input_node: *node,
                    op_type: &named.op_type,
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
        }

        // Code traces, in the order of the ops that give them.
        let mut frames: Vec<(Seen, u32, Vec<Frame>)> = std::mem::take(&mut self.frames).into_iter().map(|(node, (seen, stack))| (seen, node, stack)).collect();
        frames.sort_by_key(|f| f.0);
        let frames: Vec<(String, Vec<Frame>)> = frames.into_iter().map(|(_, node, stack)| (self.nodes[node as usize].name.clone(), stack)).collect();
        stats.add_frames(&frames);

        for a in &self.allocations {
            let node = a.node.map_or("", |n| self.nodes[n as usize].name.as_str());
            stats.add_allocation(a.step, &a.allocator, a.micros, a.bytes, node, Some(a.in_use));
        }

        self.lines(path, stats.nodes.len(), steps)
    }

    /// The start-up lines, for a model of `nodes` nodes.
    fn lines(&self, path: &Path, nodes: usize, steps: &Steps) -> String {
        let mut lines = format!("pytorch: {}: {} events ({} ops, {} kernels), {} nodes\n", path.display(), self.events, self.ops, self.kernels, nodes);
        if steps.spans.is_empty() {
            lines.push_str("pytorch: no ProfilerStep#N: the whole trace is step 0\n");
        } else {
            let numbers: Vec<String> = steps.spans.iter().map(|s| s.0.to_string()).collect();
            lines.push_str(&format!("pytorch: steps {} (ProfilerStep#N)\n", numbers.join(", ")));
        }
        if !self.has_memory {
            lines.push_str("pytorch: the trace holds no [memory] records (profile_memory=True records them): the bytes columns are 0\n");
        }
        lines
    }
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

    /// Adds the executions another sum holds.
    fn add_sum(&mut self, other: &Sum) {
        self.add(other.start, other.end, other.ns, other.runs);
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
/// threads. Also the backward ops whose flow's start the trace lacks (a
/// window may hold a backward op without its forward one).
fn forward_ops(trace: &Trace, placed: &[Placed]) -> (FxHashMap<u32, u32>, Vec<u32>) {
    let Some(fwdbwd) = trace.strings.lookup("fwdbwd") else { return (FxHashMap::default(), Vec::new()) };
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
    let mut started: rustc_hash::FxHashSet<u64> = rustc_hash::FxHashSet::default();
    for f in trace.flows.iter().filter(|f| f.cat == fwdbwd) {
        if f.phase == FlowPhase::Start {
            started.insert(f.id);
        }
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
    let root = |k: u32| root_of(placed, k);
    // Only where autograd ran on a thread of its own: on the forward
    // thread (CPU programs), backward ops nest in its scopes already.
    let thread = |k: u32| trace.events[placed[k as usize].event as usize].thread;
    let missing = finishes.iter().filter(|(id, _)| !started.contains(id)).map(|&(_, backward)| root(backward)).collect();
    let forward = finishes
        .into_iter()
        .filter_map(|(id, backward)| Some((root(backward), *starts.get(&id)?)))
        .filter(|&(backward, forward)| thread(backward) != thread(forward))
        .collect();
    (forward, missing)
}

/// The outermost scope event of placed event `k`.
fn root_of(placed: &[Placed], mut k: u32) -> u32 {
    while let Some(parent) = placed[k as usize].scope_parent {
        k = parent;
    }
    k
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::pytorch::windows::Budget;

    /// Read a window of one, two or three steps at a time, every trace of
    /// the test data with steps gives the node model the whole trace gives:
    /// the same nodes in the same order, each step's totals, code traces,
    /// and the start-up lines.
    #[test]
    fn windows_give_the_whole_traces_nodes() {
        let whole = |path: &Path, trace: &Trace| {
            let mut stats = Stats::new();
            let lines = import(trace, path, &mut stats, false);
            Some((lines, format!("{stats:?}")))
        };
        let windowed = crate::inputs::pytorch::for_each_windowing(whole, |(whole_lines, whole), windows, what| {
            let mut stats = Stats::new();
            let lines = import_windows(windows, &mut stats).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(&lines, whole_lines, "{what}");
            assert_eq!(&format!("{stats:?}"), whole, "{what}");
        });
        assert!(windowed >= 81, "{windowed} windowings");
    }

    /// An op that runs on past the step after its window's: the window
    /// may not hold its child ops, so its own time would be wrong; an error
    /// says so (and the op read whole is counted).
    #[test]
    fn an_op_longer_than_its_windows_steps_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("long_op.pt.trace.json");
        let step =
            |n: u64, ts: u64| format!(r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{n}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 100}}"#);
        let op = |name: &str, ts: u64, dur: u64| format!(r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 2, "ts": {ts}, "dur": {dur}}}"#);
        let events = [step(1, 0), op("aten::long", 10, 650), op("aten::child", 550, 10), step(2, 200), step(3, 400), step(4, 600)];
        std::fs::write(&path, format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"))).unwrap();
        let mut whole = Stats::new();
        import(&Trace::open(&path).unwrap(), &path, &mut whole, false);
        assert!(whole.node_id("aten::long").is_some());
        let windows = Windows::plan(&path, Budget::Steps(1)).unwrap().unwrap();
        let error = import_windows(&windows, &mut Stats::new()).unwrap_err().to_string();
        assert!(error.contains("aten::long at 10000 ns runs past the step after its window's"), "{error}");
        // In windows of three steps, the first holds step 4 too: the whole op.
        let windows = Windows::plan(&path, Budget::Steps(3)).unwrap().unwrap();
        let mut stats = Stats::new();
        import_windows(&windows, &mut stats).unwrap();
        assert_eq!(format!("{stats:?}"), format!("{whole:?}"));
    }
}
