//! The one node model: a graph node (or a node seen only in RunMetadata) with
//! its static facts and its per-step execution records (tfprof's
//! `TFGraphNode` and `ExecStep`).

use std::collections::BTreeMap;

pub use crate::inputs::profile::MemoryRecord;
use crate::proto::tensorflow::tfprof::CodeDef;
use crate::inputs::graph::NodeRecord;
use crate::inputs::run_meta::NodeStatsRecord;
use crate::proto::tensorflow::{AttrValue, TensorShapeProto};

use super::device::{Device, DeviceName};
use super::small_map::{SmallMap, SmallSet, push_snug};
use super::symbol::{Symbol, symbol};

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
    /// `_output_shapes` exactly (`None`: not fully known), for FLOPs estimation.
    pub static_output_shapes: Vec<Option<Vec<i64>>>,
    pub inputs: Vec<Input>,
    /// Static float ops from the op log (per run).
    pub float_ops: i64,
    pub trace: Option<CodeDef>,
    pub canonical_device: DeviceName,
    pub attrs: BTreeMap<String, AttrValue>,
    /// Execution records by step.
    pub execs: SmallMap<i64, ExecStep>,
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
    /// device → (start, duration) of kernels on `stream:all`.
    pub accelerator_execs: SmallMap<DeviceName, Vec<(i64, i64)>>,
    /// device → (start, duration) on canonical devices.
    pub cpu_execs: SmallMap<DeviceName, Vec<(i64, i64)>>,
    /// One record per scheduling (several in while loops).
    pub memory: Vec<MemoryRecord>,
}

/// One node's executions on one device in one step, summed by the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecTotal<'a> {
    pub step: i64,
    pub node: &'a str,
    pub op_type: &'a str,
    /// Lowercased, like RunMetadata devices.
    pub device: &'a str,
    pub on_accelerator: bool,
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
    if shape.dim.is_empty() && !shape.unknown_rank {
        vec![1]
    } else {
        shape.dim.iter().map(|d| d.size).collect()
    }
}

impl ExecStep {
    fn add_time(&mut self, dev: &Device, stat: &NodeStatsRecord) {
        if stat.all_start_micros <= 0 {
            return;
        }
        self.all_start_micros = if self.all_start_micros > 0 {
            self.all_start_micros.min(stat.all_start_micros)
        } else {
            stat.all_start_micros
        };
        // Quick ops are rounded up to 1us to be "semantically robust".
        let duration = if stat.op_end_rel_micros == 0 { 1 } else { stat.op_end_rel_micros };
        self.latest_end_micros = self.latest_end_micros.max(stat.all_start_micros.wrapping_add(duration));
        let pair = (stat.all_start_micros, duration);
        if dev.accelerator_time {
            push_exec(&mut self.accelerator_execs, dev.name, pair);
        } else if dev.canonical {
            push_exec(&mut self.cpu_execs, dev.name, pair);
            self.run_count += 1;
        }
    }

    /// Adds an input's summed executions; host time is kept on `canonical`.
    pub(crate) fn add_total(&mut self, total: &ExecTotal<'_>, canonical: DeviceName) {
        self.all_start_micros =
            if self.all_start_micros > 0 { self.all_start_micros.min(total.start_micros) } else { total.start_micros };
        self.latest_end_micros = self.latest_end_micros.max(total.end_micros);
        self.run_count += total.runs;
        let pair = (total.start_micros, total.micros);
        if total.on_accelerator {
            push_exec(&mut self.accelerator_execs, symbol(total.device), pair);
        } else {
            push_exec(&mut self.cpu_execs, canonical, pair);
        }
    }

    /// Returns a message for stderr when the stat has no start time.
    fn add_memory(&mut self, stat: &NodeStatsRecord) -> Option<String> {
        if stat.all_start_micros <= 0 {
            return Some(format!("{} has no start time, skipping", stat.node_name));
        }
        let allocators = &stat.memory;
        let gpu_allocators = allocators.gpu_allocators;
        // tfprof splits these by host and accelerator; only their sums are read.
        let (temp, persistent) = (stat.temp_memory_size, stat.persistent_memory_size);
        let mem = MemoryRecord {
            memory_micros: stat.all_start_micros.wrapping_add(stat.op_end_rel_micros),
            requested_bytes: allocators.total_bytes.wrapping_add(persistent).wrapping_add(temp),
            peak_bytes: allocators.peak_bytes.wrapping_add(persistent).wrapping_add(temp),
            residual_bytes: allocators.live_bytes.wrapping_add(persistent),
            // (tfprof also keeps each output slot's pointer and size; nothing here reads them.)
            output_bytes: stat.output_bytes,
            allocator_bytes_in_use: allocators.gpu_bytes_in_use,
        };
        push_snug(&mut self.memory, mem);
        (gpu_allocators > 1).then(|| format!("found {gpu_allocators} gpu allocator for 1 node"))
    }

    pub fn accelerator_micros(&self) -> i64 {
        wrapping_sum(self.accelerator_execs.values().flatten().map(|e| e.1))
    }

    pub fn cpu_micros(&self) -> i64 {
        wrapping_sum(self.cpu_execs.values().flatten().map(|e| e.1))
    }

    pub fn exec_micros(&self) -> i64 {
        self.accelerator_micros().wrapping_add(self.cpu_micros())
    }

    pub fn requested_bytes(&self) -> i64 {
        wrapping_sum(self.memory.iter().map(|m| m.requested_bytes))
    }

    pub fn peak_bytes(&self) -> i64 {
        wrapping_sum(self.memory.iter().map(|m| m.peak_bytes))
    }

    pub fn residual_bytes(&self) -> i64 {
        wrapping_sum(self.memory.iter().map(|m| m.residual_bytes))
    }

    pub fn output_bytes(&self) -> i64 {
        wrapping_sum(self.memory.iter().map(|m| m.output_bytes))
    }
}

impl Node {
    /// A graph node, as tfprof's `TFGraphNode` starts it: its op is its first
    /// op type; `shape` and `_output_shapes` give its parameters and output
    /// shapes. Returns its inputs as written (`^name:slot`), to be resolved
    /// with [`Input::parse`] once all nodes are known.
    pub fn from_graph(def: NodeRecord) -> (Node, Vec<String>) {
        let mut node = Node { name: def.name.into(), op: symbol(&def.op), attrs: def.attrs, ..Default::default() };
        node.op_types.insert(node.op);
        if let Some(shape) = &def.shape {
            node.shape = shape_to_vec(shape);
        }
        if let Some(shapes) = def.output_shapes {
            node.output_shapes = shapes.iter().enumerate().map(|(i, s)| (i as i64, shape_to_vec(s))).collect();
            node.static_output_shapes = shapes.iter().map(known_shape).collect();
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
            warnings.extend(exec.add_memory(stat));
        }
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

    pub fn requested_bytes(&self, step: i64) -> i64 {
        self.per_step(step, ExecStep::requested_bytes)
    }

    pub fn peak_bytes(&self, step: i64) -> i64 {
        self.per_step(step, ExecStep::peak_bytes)
    }

    pub fn residual_bytes(&self, step: i64) -> i64 {
        self.per_step(step, ExecStep::residual_bytes)
    }

    pub fn output_bytes(&self, step: i64) -> i64 {
        self.per_step(step, ExecStep::output_bytes)
    }

    /// Static float ops if the node never ran, else static × runs in `step`.
    pub fn float_ops(&self, step: i64) -> i64 {
        if self.execs.is_empty() {
            self.float_ops
        } else {
            self.float_ops.wrapping_mul(self.run_count(step))
        }
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
