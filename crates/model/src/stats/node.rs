//! The one node model: a graph node (or a node seen only in RunMetadata) with
//! its static facts and its per-step execution records (tfprof's
//! `TFGraphNode` and `ExecStep`).

use std::collections::BTreeMap;

use crate::proto::tensorflow::tfprof::CodeDef;
use crate::proto::tensorflow::{AttrValue, TensorShapeProto};
pub use crate::stats::records::MemoryRecord;
use crate::stats::records::NodeRecord;
use crate::stats::records::NodeStatsRecord;

use super::device::{Device, DeviceName};
use super::small_map::{SmallMap, SmallSet, push_snug};
use super::symbol::{Symbol, ThinSymbol, symbol};

/// Appends to `map[device]`.
fn push_exec(map: &mut SmallMap<DeviceName, Vec<(i64, i64)>>, device: DeviceName, pair: (i64, i64)) {
    match map.get_mut(device) {
        Some(v) => push_snug(v, pair),
        None => {
            map.insert(device, vec![pair]);
        }
    }
}

/// A node name. Shared: every input edge and tree line naming a node holds
/// the node's own copy, not another one.
pub type NodeName = std::sync::Arc<str>;

/// Index of a node in [`super::Stats::nodes`]; equals tfprof's node id.
pub type NodeId = usize;

/// One input edge of a node, in input-index order.
#[derive(Clone, Debug)]
pub struct Input {
    /// Name of the producing node (control inputs have their `^` stripped);
    /// the producer's own name when the producer is known.
    pub name: NodeName,
    /// Output slot of the producer that feeds this input.
    pub src_output: i64,
    /// The slot tfprof looks up for `input_shapes`. tfprof parses the slot
    /// inside a `DCHECK`, which release builds compile out, so for GraphDef
    /// inputs it is always 0; profile files carry it explicitly.
    pub shape_slot: i64,
}

#[derive(Clone, Debug, Default)]
pub struct Node {
    /// Shared with the inputs that name this node and the views' trees.
    pub name: NodeName,
    pub op: Symbol,
    /// Sorted: the op, the canonical device, op-log types, …
    pub op_types: SmallSet<Symbol>,
    /// From the `shape` attr (variables, placeholders); drives `params`.
    pub shape: Vec<i64>,
    /// From `_output_shapes`, by output slot, as tfprof stores them.
    pub output_shapes: SmallMap<i64, Vec<i64>>,
    /// Static shapes by output slot, for FLOPs estimation: `_output_shapes`
    /// merged with what shape inference finds when estimates are on
    /// ([`crate::shapes`]); `None` an unknown rank, `-1` an unknown dim.
    /// Empty when the number of outputs is not known.
    pub static_output_shapes: Vec<crate::shapes::Shape>,
    pub inputs: Vec<Input>,
    /// Static float ops from the op log (per run).
    pub float_ops: i64,
    pub trace: Option<CodeDef>,
    pub canonical_device: DeviceName,
    pub attrs: BTreeMap<String, AttrValue>,
    /// Execution records by step.
    pub execs: SmallMap<i64, ExecStep>,
    /// Memory records by step (of steps `execs` has), one per scheduling
    /// (several in while loops). Kept beside the execution records, not in
    /// them: most (node, step) of a trace have none.
    pub memory: SmallMap<i64, Vec<MemoryRecord>>,
    /// Output shapes seen at run time (first RunMetadata that has them), as
    /// TF's `tfprof_logger` uses them to complete static shapes.
    pub runtime_output_shapes: Option<Vec<Option<Vec<i64>>>>,
}

/// What one node did in one step.
#[derive(Clone, Debug, Default)]
pub struct ExecStep {
    pub run_count: i64,
    pub all_start_micros: i64,
    pub latest_end_micros: i64,
    /// The (start, duration) of its executions, by device.
    times: Times,
}

/// Where a step's time went. Most nodes run once per step on one device:
/// that execution is kept inline (its start is the step's
/// `all_start_micros`), without the two maps a node needs when it ran
/// several times or on several devices. A 270 MB TF2 trace has 5.5M such
/// records: 168 bytes and two allocations each became 72 bytes and none.
#[derive(Clone, Debug, Default)]
enum Times {
    #[default]
    None,
    One {
        device: ThinSymbol,
        micros: i64,
        accelerator: bool,
    },
    Many(Box<ManyTimes>),
}

#[derive(Clone, Debug, Default)]
struct ManyTimes {
    /// device → (start, duration) of kernels on `stream:all`.
    accelerator: SmallMap<DeviceName, Vec<(i64, i64)>>,
    /// device → (start, duration) on canonical devices.
    cpu: SmallMap<DeviceName, Vec<(i64, i64)>>,
}

/// One device's (start, duration) pairs, borrowed or the one kept inline.
#[derive(Clone, Copy, Debug)]
pub enum DeviceTimes<'a> {
    One([(i64, i64); 1]),
    Many(&'a [(i64, i64)]),
}

impl std::ops::Deref for DeviceTimes<'_> {
    type Target = [(i64, i64)];

    fn deref(&self) -> &[(i64, i64)] {
        match self {
            DeviceTimes::One(one) => one,
            DeviceTimes::Many(many) => many,
        }
    }
}

/// One node's executions on one device in one step, summed by the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecTotal<'a> {
    pub step: i64,
    pub node: &'a str,
    /// The input's own number for the node, the same in all its totals
    /// (see [`super::InputNodes`]).
    pub input_node: u32,
    pub op_type: &'a str,
    /// Lowercased, like RunMetadata devices.
    pub device: &'a str,
    pub on_accelerator: bool,
    /// Where the node is placed (lowercased): the device of its first
    /// accelerator total in the input's order, else of its first.
    pub placed_on: &'a str,
    /// How many steps the node has totals in, over the whole input.
    pub node_steps: usize,
    pub start_micros: i64,
    pub end_micros: i64,
    /// The executions' summed time, rounded once.
    pub micros: i64,
    /// Executions that count as runs (0 for device time of an op whose runs
    /// the host counts).
    pub runs: i64,
}

/// A node's allocations in one step, replayed from the allocator events:
/// what it requested, the most it held at once, and what it still held at
/// the step's end (tfprof's requested, peak and residual bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryTotal {
    pub step: i64,
    pub node: String,
    pub requested_bytes: i64,
    pub peak_bytes: i64,
    pub residual_bytes: i64,
    /// When the node last allocated (µs), for ordering.
    pub last_micros: i64,
}

/// Sums like tfprof's `int64` arithmetic does on real machines: absurd
/// values in an input wrap around instead of aborting the program.
pub fn wrapping_sum(values: impl Iterator<Item = i64>) -> i64 {
    values.fold(0, i64::wrapping_add)
}

/// A shape with known rank and dims (a scalar is `[]`), else `None`.
pub fn known_shape(shape: &TensorShapeProto) -> Option<Vec<i64>> {
    if shape.unknown_rank || shape.dim.iter().any(|d| d.size < 0) {
        return None;
    }
    Some(shape.dim.iter().map(|d| d.size).collect())
}

/// tfprof's `ShapeProtoToVec`: a known-rank scalar is `[1]`.
pub fn shape_to_vec(shape: &TensorShapeProto) -> Vec<i64> {
    if shape.dim.is_empty() && !shape.unknown_rank { vec![1] } else { shape.dim.iter().map(|d| d.size).collect() }
}

impl ExecStep {
    /// A step record with these times, as a profile file holds them.
    pub fn from_parts(
        run_count: i64,
        all_start_micros: i64,
        latest_end_micros: i64,
        accelerator: SmallMap<DeviceName, Vec<(i64, i64)>>,
        cpu: SmallMap<DeviceName, Vec<(i64, i64)>>,
    ) -> ExecStep {
        let mut exec = ExecStep { run_count, all_start_micros, latest_end_micros, ..Default::default() };
        let one = {
            let mut all = accelerator.iter().map(|(d, t)| (*d, &t[..], true)).chain(cpu.iter().map(|(d, t)| (*d, &t[..], false)));
            match (all.next(), all.next()) {
                (Some((device, &[(start, micros)], accelerator)), None) if start == all_start_micros => Some((device, micros, accelerator)),
                _ => None,
            }
        };
        exec.times = match one {
            Some((device, micros, accelerator)) => Times::One { device: ThinSymbol::new(device), micros, accelerator },
            None if accelerator.is_empty() && cpu.is_empty() => Times::None,
            None => Times::Many(Box::new(ManyTimes { accelerator, cpu })),
        };
        exec
    }

    /// Widens the step's span to include `start..end`; the inline
    /// execution, whose start is `all_start_micros`, keeps its own.
    fn widen_span(&mut self, start: i64, end: i64) {
        let new_start = if self.all_start_micros > 0 { self.all_start_micros.min(start) } else { start };
        if new_start != self.all_start_micros {
            self.spill_inline();
        }
        self.all_start_micros = new_start;
        self.latest_end_micros = self.latest_end_micros.max(end);
    }

    /// Moves the inline execution into the maps.
    fn spill_inline(&mut self) {
        if let Times::One { device, micros, accelerator } = self.times {
            let mut many = ManyTimes::default();
            let map = if accelerator { &mut many.accelerator } else { &mut many.cpu };
            map.insert(device.get(), vec![(self.all_start_micros, micros)]);
            self.times = Times::Many(Box::new(many));
        }
    }

    /// Records an execution on `device`, after the span has been widened to it.
    fn push_time(&mut self, device: DeviceName, accelerator: bool, pair: (i64, i64)) {
        if matches!(self.times, Times::None) && pair.0 == self.all_start_micros {
            self.times = Times::One { device: ThinSymbol::new(device), micros: pair.1, accelerator };
            return;
        }
        self.spill_inline();
        if matches!(self.times, Times::None) {
            self.times = Times::Many(Box::default());
        }
        let Times::Many(many) = &mut self.times else { unreachable!("spilled above") };
        push_exec(if accelerator { &mut many.accelerator } else { &mut many.cpu }, device, pair);
    }

    fn add_time(&mut self, dev: &Device, stat: &NodeStatsRecord) {
        if stat.all_start_micros <= 0 {
            return;
        }
        // Quick ops are rounded up to 1us to be "semantically robust".
        let duration = if stat.op_end_rel_micros == 0 { 1 } else { stat.op_end_rel_micros };
        self.widen_span(stat.all_start_micros, stat.all_start_micros.wrapping_add(duration));
        let pair = (stat.all_start_micros, duration);
        if dev.accelerator_time {
            self.push_time(dev.name, true, pair);
        } else if dev.canonical {
            self.push_time(dev.name, false, pair);
            self.run_count += 1;
        }
    }

    /// Adds an input's summed executions; host time is kept on `canonical`.
    pub(crate) fn add_total(&mut self, total: &ExecTotal<'_>, canonical: DeviceName) {
        self.widen_span(total.start_micros, total.end_micros);
        self.run_count += total.runs;
        let pair = (total.start_micros, total.micros);
        if total.on_accelerator {
            self.push_time(symbol(total.device), true, pair);
        } else {
            self.push_time(canonical, false, pair);
        }
    }

    /// Kernel times on `stream:all` devices, by device.
    pub fn accelerator_execs(&self) -> impl Iterator<Item = (DeviceName, DeviceTimes<'_>)> {
        self.device_times(true)
    }

    /// Op times on canonical devices, by device.
    pub fn cpu_execs(&self) -> impl Iterator<Item = (DeviceName, DeviceTimes<'_>)> {
        self.device_times(false)
    }

    fn device_times(&self, accelerator: bool) -> impl Iterator<Item = (DeviceName, DeviceTimes<'_>)> {
        let (one, many) = match &self.times {
            Times::None => (None, None),
            Times::One { device, micros, accelerator: on } => {
                ((*on == accelerator).then(|| (device.get(), DeviceTimes::One([(self.all_start_micros, *micros)]))), None)
            }
            Times::Many(m) => (None, Some(if accelerator { &m.accelerator } else { &m.cpu })),
        };
        one.into_iter().chain(many.into_iter().flat_map(|m| m.iter().map(|(d, t)| (*d, DeviceTimes::Many(t)))))
    }

    /// Room its vectors hold beyond their entries (the importers' tests
    /// check that per-step records are snug).
    #[doc(hidden)]
    pub fn spare_room(&self) -> usize {
        match &self.times {
            Times::Many(many) => [&many.accelerator, &many.cpu]
                .into_iter()
                .map(|map| map.capacity() - map.len() + map.values().map(|t| t.capacity() - t.len()).sum::<usize>())
                .sum(),
            _ => 0,
        }
    }

    /// Renames every device (a job's prefix).
    pub fn rename_devices(&mut self, mut rename: impl FnMut(DeviceName) -> DeviceName) {
        match &mut self.times {
            Times::None => {}
            Times::One { device, .. } => *device = ThinSymbol::new(rename(device.get())),
            Times::Many(many) => {
                for map in [&mut many.accelerator, &mut many.cpu] {
                    *map = std::mem::take(map).into_iter().map(|(d, t)| (rename(d), t)).collect();
                }
            }
        }
    }

    fn micros_on(&self, accelerator: bool) -> i64 {
        match &self.times {
            Times::None => 0,
            Times::One { micros, accelerator: on, .. } => {
                if *on == accelerator {
                    *micros
                } else {
                    0
                }
            }
            Times::Many(many) => {
                let map = if accelerator { &many.accelerator } else { &many.cpu };
                wrapping_sum(map.values().flatten().map(|e| e.1))
            }
        }
    }

    pub fn accelerator_micros(&self) -> i64 {
        self.micros_on(true)
    }

    pub fn cpu_micros(&self) -> i64 {
        self.micros_on(false)
    }

    pub fn exec_micros(&self) -> i64 {
        self.accelerator_micros().wrapping_add(self.cpu_micros())
    }
}

impl Node {
    /// A graph node, as tfprof's `TFGraphNode` starts it: its op is its first
    /// op type; `shape` and `_output_shapes` give its parameters and output
    /// shapes. Returns its inputs as written (`^name:slot`), to be resolved
    /// with [`Input::parse`] once all nodes are known.
    pub fn from_graph(mut def: NodeRecord) -> (Node, Vec<String>) {
        // (A `Const`'s value served shape inference only.)
        def.attrs.remove("value");
        let mut node = Node { name: def.name.into(), op: symbol(&def.op), attrs: def.attrs, ..Default::default() };
        node.op_types.insert(node.op);
        if let Some(shape) = &def.shape {
            node.shape = shape_to_vec(shape);
        }
        if let Some(shapes) = def.output_shapes {
            node.output_shapes = shapes.iter().enumerate().map(|(i, s)| (i as i64, shape_to_vec(s))).collect();
            node.static_output_shapes = shapes.iter().map(crate::shapes::tensor::from_proto).collect();
        }
        (node, def.inputs)
    }

    /// Records one NodeExecStats of `step` seen on `device` (tfprof's
    /// `AddStepStat`), and its output shapes if `keep_shapes`. Returns
    /// warnings meant for stderr. `steps` is how many steps are being added:
    /// the node's first record makes room for that many (up to 16: a node
    /// may run in few of many steps), so that later steps do not move its
    /// records (from whichever core added them).
    pub fn add_step_stat(&mut self, step: i64, dev: &Device, stat: &NodeStatsRecord, keep_shapes: bool, steps: usize, warnings: &mut Vec<String>) {
        if keep_shapes
            && self.runtime_output_shapes.is_none()
            && stat.outputs > 0
            && *stat.node_name == *self.name
            && let Some(shapes) = &stat.output_shapes
        {
            self.runtime_output_shapes = Some(shapes.iter().map(|shape| shape.as_ref().and_then(known_shape)).collect());
        }
        if dev.canonical {
            if self.canonical_device.is_empty() {
                self.canonical_device = dev.name;
                self.op_types.insert(dev.name);
            } else if *self.canonical_device != *dev.name {
                // Seen on a second canonical device: tfprof drops the stat.
                return;
            }
        }
        if self.execs.is_empty() {
            const MOST_STEPS_RESERVED: usize = 16;
            self.execs.reserve_exact(steps.min(MOST_STEPS_RESERVED));
        }
        let exec = self.execs.get_or_insert_with(step, ExecStep::default);
        exec.add_time(dev, stat);
        if *dev.name == *self.canonical_device {
            warnings.extend(self.add_memory(step, stat));
        }
    }

    /// Returns a message for stderr when the stat has no start time.
    fn add_memory(&mut self, step: i64, stat: &NodeStatsRecord) -> Option<String> {
        if stat.all_start_micros <= 0 {
            return Some(format!("{} has no start time, skipping", stat.node_name));
        }
        let allocators = &stat.memory;
        let gpu_allocators = allocators.gpu_allocators;
        // tfprof splits these by host and accelerator; only their sums are read.
        let (temp, persistent) = (stat.temp_memory_size, stat.persistent_memory_size);
        self.push_memory(
            step,
            MemoryRecord {
                memory_micros: stat.all_start_micros.wrapping_add(stat.op_end_rel_micros),
                requested_bytes: allocators.total_bytes.wrapping_add(persistent).wrapping_add(temp),
                peak_bytes: allocators.peak_bytes.wrapping_add(persistent).wrapping_add(temp),
                residual_bytes: allocators.live_bytes.wrapping_add(persistent),
                // (tfprof also keeps each output slot's pointer and size; nothing here reads them.)
                output_bytes: stat.output_bytes,
                allocator_bytes_in_use: allocators.gpu_bytes_in_use,
            },
        );
        (gpu_allocators > 1).then(|| format!("found {gpu_allocators} gpu allocator for 1 node"))
    }

    /// Adds a memory record to `step`, which must have an execution record.
    pub fn push_memory(&mut self, step: i64, record: MemoryRecord) {
        debug_assert!(self.execs.contains_key(&step));
        match self.memory.get_mut(&step) {
            Some(records) => push_snug(records, record),
            None => {
                self.memory.insert(step, vec![record]);
            }
        }
    }

    /// The memory records of `step`.
    pub fn memory_at(&self, step: i64) -> &[MemoryRecord] {
        self.memory.get(&step).map_or(&[], Vec::as_slice)
    }

    /// A metric of one step, or (`step < 0`) its mean over the steps this node
    /// has records for, truncated like C integer division.
    fn per_step(&self, step: i64, metric: impl Fn(&ExecStep) -> i64) -> i64 {
        if self.execs.is_empty() {
            return 0;
        }
        if step >= 0 {
            return self.execs.get(&step).map_or(0, metric);
        }
        let sum = wrapping_sum(self.execs.values().map(metric));
        sum / self.execs.len() as i64
    }

    pub fn run_count(&self, step: i64) -> i64 {
        self.per_step(step, |e| e.run_count)
    }

    pub fn exec_micros(&self, step: i64) -> i64 {
        self.per_step(step, ExecStep::exec_micros)
    }

    pub fn accelerator_micros(&self, step: i64) -> i64 {
        self.per_step(step, ExecStep::accelerator_micros)
    }

    pub fn cpu_micros(&self, step: i64) -> i64 {
        self.per_step(step, ExecStep::cpu_micros)
    }

    /// A sum over memory records of one step, or (`step < 0`) its mean
    /// over the steps this node has execution records for, as [`Self::per_step`].
    fn per_step_memory(&self, step: i64, field: impl Fn(&MemoryRecord) -> i64) -> i64 {
        if self.execs.is_empty() {
            return 0;
        }
        let sum = |records: &Vec<MemoryRecord>| wrapping_sum(records.iter().map(&field));
        if step >= 0 {
            return self.memory.get(&step).map_or(0, sum);
        }
        wrapping_sum(self.memory.values().map(sum)) / self.execs.len() as i64
    }

    pub fn requested_bytes(&self, step: i64) -> i64 {
        self.per_step_memory(step, |m| m.requested_bytes)
    }

    pub fn peak_bytes(&self, step: i64) -> i64 {
        self.per_step_memory(step, |m| m.peak_bytes)
    }

    pub fn residual_bytes(&self, step: i64) -> i64 {
        self.per_step_memory(step, |m| m.residual_bytes)
    }

    pub fn output_bytes(&self, step: i64) -> i64 {
        self.per_step_memory(step, |m| m.output_bytes)
    }

    /// Static float ops if the node never ran, else static × runs in `step`.
    pub fn float_ops(&self, step: i64) -> i64 {
        if self.execs.is_empty() { self.float_ops } else { self.float_ops.wrapping_mul(self.run_count(step)) }
    }

    /// Product of the `shape` attr's dims; 0 when unknown or partly unknown.
    pub fn parameters(&self) -> i64 {
        if self.shape.is_empty() || self.shape.iter().any(|&d| d < 0) {
            return 0;
        }
        self.shape.iter().fold(1i64, |acc, &d| acc.wrapping_mul(d))
    }
}

impl Input {
    /// Splits `^name:slot` into the producer name and output slot; the name
    /// is `known(name)`, the producer's own, if it has one.
    pub fn parse(input: &str, known: impl Fn(&str) -> Option<NodeName>) -> Input {
        let (name, slot) = match input.split_once(':') {
            Some((name, slot)) => (name, slot.parse().unwrap_or(0)),
            None => (input, 0),
        };
        let name = name.strip_prefix('^').unwrap_or(name);
        Input { name: known(name).unwrap_or_else(|| name.into()), src_output: slot, shape_slot: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(exec: &ExecStep, accelerator: bool) -> Vec<(DeviceName, Vec<(i64, i64)>)> {
        let all: Vec<_> = if accelerator { exec.accelerator_execs().collect() } else { exec.cpu_execs().collect() };
        all.into_iter().map(|(d, t)| (d, t.to_vec())).collect()
    }

    fn stat(start: i64, duration: i64) -> NodeStatsRecord {
        NodeStatsRecord { node_name: "a".into(), all_start_micros: start, op_end_rel_micros: duration, ..Default::default() }
    }

    /// The per-step record that almost every (node, step) of a trace has.
    #[test]
    fn a_step_record_stays_small() {
        assert!(size_of::<(i64, ExecStep)>() <= 56, "{}", size_of::<(i64, ExecStep)>());
    }

    /// An execution kept inline reads like one in the maps, whatever comes
    /// after it: an earlier start elsewhere, a second execution, a device.
    #[test]
    fn inline_executions_read_like_mapped_ones() {
        let cpu = Device::classify("/job:w/device:CPU:0");
        let stream = Device::classify("/job:w/device:GPU:0/stream:7");
        let all = Device::classify("/job:w/device:GPU:0/stream:all");

        let mut one = ExecStep::default();
        one.add_time(&cpu, &stat(100, 5));
        assert!(matches!(one.times, Times::One { .. }));
        assert_eq!(times(&one, false), vec![(cpu.name, vec![(100, 5)])]);
        assert_eq!((one.cpu_micros(), one.accelerator_micros(), one.run_count), (5, 0, 1));

        // A stream's stat moves the step's start before the inline one's.
        let mut earlier = one.clone();
        earlier.add_time(&stream, &stat(90, 3));
        assert_eq!(earlier.all_start_micros, 90);
        assert_eq!(times(&earlier, false), vec![(cpu.name, vec![(100, 5)])]);

        // The step starts before its first execution: no inline record.
        let mut late = ExecStep::default();
        late.add_time(&stream, &stat(90, 3));
        late.add_time(&cpu, &stat(100, 5));
        assert!(matches!(late.times, Times::Many(_)));
        assert_eq!(times(&late, false), vec![(cpu.name, vec![(100, 5)])]);

        let mut both = one.clone();
        both.add_time(&all, &stat(101, 0));
        both.add_time(&cpu, &stat(120, 2));
        assert_eq!(times(&both, false), vec![(cpu.name, vec![(100, 5), (120, 2)])]);
        assert_eq!(times(&both, true), vec![(all.name, vec![(101, 1)])]);
        assert_eq!((both.cpu_micros(), both.accelerator_micros(), both.exec_micros(), both.run_count), (7, 1, 8, 2));
        assert_eq!((both.all_start_micros, both.latest_end_micros), (100, 122));

        // A profile file's record with one execution at the step's start is
        // kept inline too, and reads the same.
        type PerDevice = SmallMap<DeviceName, Vec<(i64, i64)>>;
        let parts = |exec: &ExecStep| -> (PerDevice, PerDevice) { (times(exec, true).into_iter().collect(), times(exec, false).into_iter().collect()) };
        for exec in [&one, &earlier, &late, &both] {
            let (accelerator, cpu) = parts(exec);
            let again = ExecStep::from_parts(exec.run_count, exec.all_start_micros, exec.latest_end_micros, accelerator, cpu);
            assert_eq!(parts(&again), parts(exec));
            assert_eq!(again.exec_micros(), exec.exec_micros());
        }
        let (accelerator, cpu) = parts(&one);
        assert!(matches!(ExecStep::from_parts(1, 100, 105, accelerator, cpu).times, Times::One { .. }));

        let mut renamed = both.clone();
        renamed.rename_devices(|d| symbol(&format!("/job:x{}", &d["/job:w".len()..])));
        assert_eq!(times(&renamed, true), vec![(symbol("/job:x/device:gpu:0/stream:all"), vec![(101, 1)])]);
    }
}
