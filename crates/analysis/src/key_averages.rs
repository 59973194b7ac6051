//! `prof.key_averages()` of PyTorch 2.11, from the trace alone.
//!
//! The steps are torch's (`profiler.py _parse_kineto_results`,
//! `profiler_util.py EventList._build_tree` and `key_averages`), in the same
//! order and with the same float operations, so every number is torch's to
//! the bit. What the JSON lacks (whether an op was async, the order of ties)
//! is taken as the JSON gives it; `tools/torch/gen_key_averages.py` and the
//! shared GPU traces check the result.

use rustc_hash::FxHashMap;

use crate::inputs::pytorch::{Category, Id, PROFILER_NAMES, Sym, Trace, launch};

/// One row of `key_averages()`, with torch's attribute names.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyAverage {
    pub key: String,
    pub count: u64,
    pub device_type: DeviceType,
    pub is_user_annotation: bool,
    pub cpu_time_total: f64,
    pub self_cpu_time_total: f64,
    pub device_time_total: f64,
    pub self_device_time_total: f64,
    pub cpu_memory_usage: i64,
    pub self_cpu_memory_usage: i64,
    pub device_memory_usage: i64,
    pub self_device_memory_usage: i64,
    /// `str(input_shapes)` of the first event when grouped by input shape,
    /// else empty (torch sets it to `""`).
    pub input_shapes: String,
    /// Whether the row's first event has no CPU parent: the rows
    /// `table(top_level_events_only=True)` keeps.
    pub top_level: bool,
    /// Whether the row's first event is async ([`is_async_work`]): its
    /// table row shows `0` for the total CPU share.
    pub is_async: bool,
}

impl KeyAverage {
    /// Average CPU time per call (µs).
    pub fn cpu_time(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.cpu_time_total / self.count as f64 }
    }

    /// Average device time per call (µs).
    pub fn device_time(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.device_time_total / self.count as f64 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceType {
    Cpu,
    Cuda,
}

impl DeviceType {
    /// As torch's `str(DeviceType.X)` ends: `CPU`, `CUDA`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceType::Cpu => "CPU",
            DeviceType::Cuda => "CUDA",
        }
    }
}

/// The memory records' names, which `profiler_util._filter_name` drops with
/// [`PROFILER_NAMES`].
const MEMORY_NAMES: [&str; 2] = ["[memory]", "[OutOfMemory]"];

/// The profiling titles of c10d's process groups (`nccl:all_reduce`,
/// `gloo:broadcast`, ...): `c10d::Work` and Gloo's `AsyncWork` record them
/// with `RecordFunction::_setAsync()` (`torch/csrc/distributed/c10d/Work.cpp`:
/// "Work events follow a future like pattern and can potentially be marked
/// as complete by different threads"). torch keeps async events out of the
/// CPU tree and gives them no self CPU time and no device time; the JSON
/// does not say an event was async, so these names do.
const ASYNC_WORK_PREFIXES: [&str; 5] = ["nccl:", "gloo:", "ucc:", "mpi:", "xccl:"];

/// Whether a user annotation is a c10d work's (`nccl:`, `gloo:`, `ucc:`, `mpi:`, `xccl:`).
pub fn is_async_work(name: &str) -> bool {
    ASYNC_WORK_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// An event's name as torch has it: `ProfilerStep#N` is `ProfilerStep*`
/// (`_rewrite_name(with_wildcard=True)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Name {
    Sym(Sym),
    Step,
}

impl Name {
    fn text(self, trace: &Trace) -> &str {
        match self {
            Name::Sym(s) => trace.str(s),
            Name::Step => "ProfilerStep*",
        }
    }
}

/// A FunctionEvent: only what `key_averages` reads.
struct FunctionEvent {
    name: Name,
    thread: Id,
    start_us: f64,
    end_us: f64,
    device: bool,
    is_user_annotation: bool,
    /// torch's `is_async`: out of the CPU tree, no self CPU or device time.
    is_async: bool,
    cpu_memory_usage: i64,
    device_memory_usage: i64,
    /// Durations (µs) of the device events this op launched.
    kernels: Vec<f64>,
    children: Vec<u32>,
    parent: Option<u32>,
    input_shapes: Option<Sym>,
}

impl FunctionEvent {
    fn cpu_time_total(&self) -> f64 {
        if self.device { 0.0 } else { self.end_us - self.start_us }
    }
}

/// torch's `prof.key_averages(group_by_input_shape=...)`: rows in the
/// order their key first occurs.
pub fn key_averages(trace: &Trace, group_by_input_shape: bool) -> Vec<KeyAverage> {
    let mut events = function_events(trace);
    let order = build_tree(&mut events);
    averages(trace, &events, &order, group_by_input_shape)
}

/// `_parse_kineto_results`: the FunctionEvents, sorted by (start, -end).
fn function_events(trace: &Trace) -> Vec<FunctionEvent> {
    let t0 = trace.start_ns();
    // Exact for any trace torch could have made (differences under 2^53 ns);
    // i128 so that absurd times cannot overflow.
    let us = |ns: i64| (i128::from(ns) - i128::from(t0)) as f64 / 1000.0;
    let filtered: Vec<Sym> = MEMORY_NAMES.iter().chain(&PROFILER_NAMES).filter_map(|n| trace.strings.lookup(n)).collect();
    let step = |name: Sym| trace.str(name).starts_with("ProfilerStep#");

    // RecordQueue::getRecords: PyTorch's ops first, Kineto's activities
    // after, then one stable sort by start. GPU user annotations are written
    // 1 ns earlier and 2 ns longer than torch saw them.
    let is_op = |c: Category| matches!(c, Category::CpuOp | Category::UserAnnotation);
    let mut records: Vec<(i64, i64, u32)> = Vec::new();
    for pass_ops in [true, false] {
        for (i, e) in trace.events.iter().enumerate() {
            if matches!(e.category, Category::PythonFunction | Category::Trace) || is_op(e.category) != pass_ops {
                continue;
            }
            let (ts, dur) = if e.category == Category::GpuUserAnnotation { (e.ts.saturating_add(1), e.dur.saturating_sub(2)) } else { (e.ts, e.dur) };
            records.push((ts, ts.saturating_add(dur), i as u32));
        }
    }
    records.sort_by_key(|r| r.0);

    // Kineto events of no op get the thread that stopped the profiler: the
    // one that steps it, or else the main thread (tid = pid).
    let ops = || trace.events.iter().filter(|e| is_op(e.category));
    let main_thread =
        ops().find(|e| step(e.name)).map(|e| trace.thread(e.thread).tid).or_else(|| ops().next().map(|e| trace.thread(e.thread).pid)).unwrap_or(Id::Num(0));
    let mut op_thread: FxHashMap<u64, Id> = FxHashMap::default();
    for e in ops() {
        op_thread.insert(e.external_id.map_or(0, |id| id.get()), trace.thread(e.thread).tid);
    }

    // MemRecordsAcc: by time; an event gets every record in [start, end].
    let mut memory: Vec<u32> = (0..trace.memory.len() as u32).filter(|&i| !trace.memory[i as usize].out_of_memory).collect();
    memory.sort_by_key(|&i| trace.memory[i as usize].ts);
    let memory_ts: Vec<i64> = memory.iter().map(|&i| trace.memory[i as usize].ts).collect();
    let mut memory_used = vec![false; memory.len()];
    let bytes = |i: u32| {
        let m = &trace.memory[i as usize];
        (if m.is_cpu() { m.bytes } else { 0 }, if m.is_device() { m.bytes } else { 0 })
    };

    let launching_ops = trace.launching_ops();
    let mut all = Vec::with_capacity(records.len());
    let mut frontend: Vec<(u32, u64)> = Vec::new();
    let mut linked_to: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    for &(start, end, index) in &records {
        let e = &trace.events[index as usize];
        if filtered.contains(&e.name) {
            continue;
        }
        let device = e.category.on_device();
        let (id, linked, thread) = if is_op(e.category) {
            (e.external_id.map_or(0, |id| id.get()), 0, trace.thread(e.thread).tid)
        } else {
            // A Kineto event links to the op that launched or made it
            // (torch: its linked correlation id, the op's External id). A
            // GPU user annotation's External id is its own id. Old traces
            // and several published ones carry ids that name no op or the
            // wrong one, so the link is the launch rule's (`launch.rs`),
            // which on torch 2.x traces is the event's own External id.
            let linked = match e.category {
                Category::GpuUserAnnotation => 0,
                c if launch::is_linked(c) => launching_ops.of(index).and_then(|op| trace.events[op as usize].external_id).map_or(0, |id| id.get()),
                _ => e.external_id.map_or(0, |id| id.get()),
            };
            let id = e.correlation.or(e.external_id).map_or(0, |id| id.get());
            let thread = if linked != 0 { op_thread.get(&linked).copied().unwrap_or(main_thread) } else { main_thread };
            (id, linked, thread)
        };
        let (mut cpu_memory_usage, mut device_memory_usage) = (0, 0);
        if !device {
            let lo = memory_ts.partition_point(|&t| t < start);
            let hi = memory_ts.partition_point(|&t| t <= end);
            for k in lo..hi.max(lo) {
                let (c, d) = bytes(memory[k]);
                // torch's ints do not overflow; i64 wraps only on absurd sizes.
                cpu_memory_usage = i64::wrapping_add(cpu_memory_usage, c);
                device_memory_usage = i64::wrapping_add(device_memory_usage, d);
                memory_used[k] = true;
            }
        }
        let name = if step(e.name) { Name::Step } else { Name::Sym(e.name) };
        let at = all.len() as u32;
        all.push(FunctionEvent {
            name,
            thread,
            start_us: us(start),
            end_us: us(end),
            device,
            is_user_annotation: matches!(e.category, Category::UserAnnotation | Category::GpuUserAnnotation),
            is_async: e.category == Category::UserAnnotation && is_async_work(trace.str(e.name)),
            cpu_memory_usage,
            device_memory_usage,
            kernels: Vec::new(),
            children: Vec::new(),
            parent: None,
            input_shapes: e.input_shapes,
        });
        if linked > 0 {
            linked_to.entry(linked).or_default().push(at);
        } else {
            frontend.push((at, id));
        }
    }

    // Each op takes the device events it launched as kernels; the runtime
    // calls it made move to its thread.
    for &(at, id) in &frontend {
        if all[at as usize].device || all[at as usize].is_async {
            continue;
        }
        let Some(linked) = linked_to.get(&id) else { continue };
        for &l in linked {
            let (start, end, device) = (all[l as usize].start_us, all[l as usize].end_us, all[l as usize].device);
            if device {
                all[at as usize].kernels.push(end - start);
            } else {
                all[l as usize].thread = all[at as usize].thread;
            }
        }
    }

    // Memory records inside no CPU event, and out-of-memory records, are
    // events of their own.
    let memory_event = |i: u32, name: Name| {
        let m = &trace.memory[i as usize];
        let (c, d) = bytes(i);
        FunctionEvent {
            name,
            thread: trace.thread(m.thread).tid,
            start_us: us(m.ts),
            end_us: us(m.ts),
            device: false,
            is_user_annotation: false,
            is_async: false,
            cpu_memory_usage: c,
            device_memory_usage: d,
            kernels: Vec::new(),
            children: Vec::new(),
            parent: None,
            input_shapes: None,
        }
    };
    if let Some(name) = trace.strings.lookup("[memory]") {
        for (k, &i) in memory.iter().enumerate() {
            if !memory_used[k] {
                all.push(memory_event(i, Name::Sym(name)));
            }
        }
    }
    if let Some(name) = trace.strings.lookup("[OutOfMemory]") {
        for (i, m) in trace.memory.iter().enumerate() {
            if m.out_of_memory {
                all.push(memory_event(i as u32, Name::Sym(name)));
            }
        }
    }

    all.sort_by(|a, b| {
        a.start_us.partial_cmp(&b.start_us).unwrap_or(std::cmp::Ordering::Equal).then(b.end_us.partial_cmp(&a.end_us).unwrap_or(std::cmp::Ordering::Equal))
    });
    all
}

/// `_build_tree`: CPU nesting per thread, then `_remove_dup_nodes`. Returns
/// the events that remain, in order.
fn build_tree(events: &mut [FunctionEvent]) -> Vec<u32> {
    // Children and parents are indices; `events` was sorted by (start, -end)
    // above, as `_populate_cpu_children` sorts each thread's events.
    let mut stacks: FxHashMap<Id, Vec<u32>> = FxHashMap::default();
    for i in 0..events.len() {
        if events[i].device || events[i].is_async {
            continue;
        }
        let (start, end) = (events[i].start_us, events[i].end_us);
        let stack = stacks.entry(events[i].thread).or_default();
        while let Some(&top) = stack.last() {
            let parent = &events[top as usize];
            if start >= parent.end_us || end > parent.end_us {
                stack.pop();
            } else {
                events[top as usize].children.push(i as u32);
                events[i].parent = Some(top);
                break;
            }
        }
        stack.push(i as u32);
    }

    // A child with its parent's name that is the parent's only child merges
    // into it: the parent keeps its times and memory and takes the child's
    // children and kernels. Passes repeat until none merges.
    let mut order: Vec<u32> = (0..events.len() as u32).collect();
    loop {
        let mut deleted = vec![false; order.len()];
        let mut any = false;
        for (k, &i) in order.iter().enumerate() {
            let Some(p) = events[i as usize].parent else { continue };
            if events[p as usize].name != events[i as usize].name || events[p as usize].children.len() != 1 {
                continue;
            }
            let children = std::mem::take(&mut events[i as usize].children);
            let kernels = std::mem::take(&mut events[i as usize].kernels);
            for &c in &children {
                events[c as usize].parent = Some(p);
            }
            // The merged child keeps its lists in torch (shared with the
            // parent); nothing reads them once it is deleted.
            events[p as usize].children = children;
            events[p as usize].kernels = kernels;
            deleted[k] = true;
            any = true;
        }
        if !any {
            return order;
        }
        order = order.iter().zip(&deleted).filter(|&(_, &d)| !d).map(|(&i, _)| i).collect();
    }
}

/// `EventList.key_averages` over the events left by the tree.
fn averages(trace: &Trace, events: &[FunctionEvent], order: &[u32], by_shape: bool) -> Vec<KeyAverage> {
    // device_time_total, once per event: children come after their parent.
    let mut device_total = vec![0.0f64; events.len()];
    for &i in order.iter().rev() {
        let e = &events[i as usize];
        device_total[i as usize] = if e.device {
            e.end_us - e.start_us
        } else {
            // Python's sum(), from 0, in list order.
            let kernels = e.kernels.iter().fold(0.0, |s, k| s + k);
            let children = e.children.iter().fold(0.0, |s, &c| s + device_total[c as usize]);
            kernels + children
        };
    }

    // An op written with `"Input Dims": []` has torch's shapes `[]`, as an
    // event without them.
    let no_shapes = trace.strings.lookup("[]");
    let mut rows: Vec<KeyAverage> = Vec::new();
    let mut index: FxHashMap<(Name, bool, bool, Option<Sym>), usize> = FxHashMap::default();
    for &i in order {
        let e = &events[i as usize];
        let shapes = if by_shape { Some(e.input_shapes.filter(|&s| Some(s) != no_shapes)) } else { None };
        let key = (e.name, e.device, e.is_user_annotation, shapes.flatten());
        let row = *index.entry(key).or_insert_with(|| {
            rows.push(KeyAverage {
                key: e.name.text(trace).to_owned(),
                count: 0,
                device_type: if e.device { DeviceType::Cuda } else { DeviceType::Cpu },
                is_user_annotation: e.is_user_annotation,
                cpu_time_total: 0.0,
                self_cpu_time_total: 0.0,
                device_time_total: 0.0,
                self_device_time_total: 0.0,
                cpu_memory_usage: 0,
                self_cpu_memory_usage: 0,
                device_memory_usage: 0,
                self_device_memory_usage: 0,
                input_shapes: match shapes {
                    Some(s) => s.map_or("[]", |s| trace.str(s)).to_owned(),
                    None => String::new(),
                },
                top_level: e.parent.is_none(),
                is_async: e.is_async,
            });
            rows.len() - 1
        });
        let children = || e.children.iter().map(|&c| &events[c as usize]);
        let cpu_total = e.cpu_time_total();
        let device = if e.is_async { 0.0 } else { device_total[i as usize] };
        let (self_cpu, self_device, self_cpu_memory, self_device_memory) = if e.device {
            (0.0, device, 0, 0)
        } else if e.is_async {
            // no children: its memory is all its own
            (0.0, 0.0, e.cpu_memory_usage, e.device_memory_usage)
        } else {
            (
                cpu_total - children().fold(0.0, |s, c| s + c.cpu_time_total()),
                device - e.children.iter().fold(0.0, |s, &c| s + device_total[c as usize]),
                e.cpu_memory_usage.wrapping_sub(children().fold(0i64, |s, c| s.wrapping_add(c.cpu_memory_usage))),
                e.device_memory_usage.wrapping_sub(children().fold(0i64, |s, c| s.wrapping_add(c.device_memory_usage))),
            )
        };
        let r = &mut rows[row];
        r.cpu_time_total += cpu_total;
        r.device_time_total += device;
        r.self_cpu_time_total += self_cpu;
        r.self_device_time_total += self_device;
        r.cpu_memory_usage = r.cpu_memory_usage.wrapping_add(e.cpu_memory_usage);
        r.device_memory_usage = r.device_memory_usage.wrapping_add(e.device_memory_usage);
        r.self_cpu_memory_usage = r.self_cpu_memory_usage.wrapping_add(self_cpu_memory);
        r.self_device_memory_usage = r.self_device_memory_usage.wrapping_add(self_device_memory);
        r.count += 1;
    }
    rows
}
