//! The plain records importers hand the node model: what tfprof reads of a
//! GraphDef, a RunMetadata and a profile's memory, and the Python frames of
//! an XLA instruction. Importers decode files into these; the model never
//! decodes a file itself, so it imports no importer.

pub mod device;
pub mod ranks;

use std::collections::BTreeMap;

use crate::error::Result;
use crate::proto::tensorflow::{AttrValue, DataType, TensorShapeProto};

/// The nodes of a GraphDef, in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphRecord {
    pub nodes: Vec<NodeRecord>,
    /// Its function library, read only with attributes (shape inference
    /// looks into the functions a `PartitionedCall` calls, as TF does).
    pub functions: Vec<FunctionRecord>,
}

/// A `FunctionDef` of a graph's library, as shape inference reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FunctionRecord {
    pub name: String,
    /// The input args' names, in order.
    pub args: Vec<String>,
    /// The body, with inputs as a FunctionDef writes them: `arg`,
    /// `node:output_arg:index` or `^node`.
    pub nodes: Vec<NodeRecord>,
    /// For each output arg in order, its name and what it returns
    /// (`node:output_arg:index` or `arg`; empty when the FunctionDef does
    /// not say).
    pub rets: Vec<(String, String)>,
}

/// A `NodeDef`, with the attributes tfprof reads taken out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeRecord {
    pub name: String,
    pub op: String,
    /// `producer`, `producer:slot` or `^producer` (a control input).
    pub inputs: Vec<String>,
    /// The `shape` attribute, if it is a shape.
    pub shape: Option<TensorShapeProto>,
    /// The `_output_shapes` attribute, if it is a list.
    pub output_shapes: Option<Vec<TensorShapeProto>>,
    /// All other attributes except `value` (`Const` tensors, which nothing
    /// reads); empty unless asked for.
    pub attrs: BTreeMap<String, AttrValue>,
}

/// `tensorflow.RunMetadata`: the step stats only.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunMetaRecord {
    pub step_stats: Option<StepStatsRecord>,
}

/// `tensorflow.StepStats`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepStatsRecord {
    pub dev_stats: Vec<DeviceStatsRecord>,
}

/// `tensorflow.DeviceStepStats` without thread names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceStatsRecord {
    pub device: String,
    pub node_stats: Vec<NodeStatsRecord>,
}

/// `tensorflow.NodeExecStats`: name, start, duration, and the sums of its
/// allocators, outputs and memory stats.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeStatsRecord {
    pub node_name: String,
    pub all_start_micros: i64,
    pub op_end_rel_micros: i64,
    /// Over the `memory` entries (one per allocator).
    pub memory: AllocatorSums,
    /// How many `output` entries the stat has.
    pub outputs: usize,
    /// Over the outputs whose tensor has an allocation description:
    /// `max(allocated_bytes, requested_bytes)`, summed.
    pub output_bytes: i64,
    /// Each output's tensor shape (`None`: not given), in order; decoded
    /// only when asked for (`None` here otherwise).
    pub output_shapes: Option<Vec<Option<TensorShapeProto>>>,
    /// `memory_stats.temp_memory_size`.
    pub temp_memory_size: i64,
    /// `memory_stats.persistent_memory_size`.
    pub persistent_memory_size: i64,
    /// Each allocator's allocation records, in order; decoded only when
    /// asked for (empty otherwise).
    pub allocations: Vec<AllocatorRecords>,
}

/// One `AllocatorMemoryUsed`'s `allocation_records`: `(alloc_micros,
/// alloc_bytes)` pairs, an allocation when the bytes are positive, a free
/// when negative.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllocatorRecords {
    pub allocator: String,
    pub records: Vec<(i64, i64)>,
}

/// Sums over a stat's `tensorflow.AllocatorMemoryUsed` entries; sums wrap
/// around like tfprof's `int64` arithmetic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocatorSums {
    pub total_bytes: i64,
    pub peak_bytes: i64,
    pub live_bytes: i64,
    /// Allocators whose name contains `GPU`.
    pub gpu_allocators: usize,
    /// The largest `allocator_bytes_in_use` of those (0 if none is larger).
    pub gpu_bytes_in_use: i64,
}

impl AllocatorSums {
    /// Adds one allocator's entry.
    pub fn add(&mut self, name: &str, total: i64, peak: i64, live: i64, bytes_in_use: i64) {
        self.total_bytes = self.total_bytes.wrapping_add(total);
        self.peak_bytes = self.peak_bytes.wrapping_add(peak);
        self.live_bytes = self.live_bytes.wrapping_add(live);
        if name.contains("GPU") {
            self.gpu_allocators += 1;
            self.gpu_bytes_in_use = self.gpu_bytes_in_use.max(bytes_in_use);
        }
    }
}

/// `tfprof.ExecMemory` without its per-output breakdown.
#[derive(Clone, Copy, PartialEq, prost::Message)]
pub struct MemoryRecord {
    #[prost(int64, tag = "1")]
    pub memory_micros: i64,
    #[prost(int64, tag = "6")]
    pub requested_bytes: i64,
    #[prost(int64, tag = "7")]
    pub peak_bytes: i64,
    #[prost(int64, tag = "8")]
    pub residual_bytes: i64,
    #[prost(int64, tag = "9")]
    pub output_bytes: i64,
    #[prost(int64, tag = "10")]
    pub allocator_bytes_in_use: i64,
}

/// One Python frame of an instruction's stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub file: String,
    pub line: i32,
    /// Empty where the trace names none.
    pub function: String,
}

impl std::fmt::Display for Frame {
    /// `file:line function`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if !self.function.is_empty() {
            write!(f, " {}", self.function)?;
        }
        Ok(())
    }
}

/// One tensor read from a checkpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub dtype: DataType,
    /// Dimensions, outermost first; empty for a scalar.
    pub shape: Vec<i64>,
    /// Values in row-major order (`shape`'s product of them).
    pub values: TensorValues,
}

/// A tensor's values, widened as tfprof widens them.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorValues {
    /// DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16 (exactly, as doubles).
    Float(Vec<f64>),
    /// DT_INT32, DT_INT64, DT_INT8, DT_INT16, DT_UINT8, DT_UINT16, DT_UINT32,
    /// DT_BOOL (0 or 1).
    Int(Vec<i64>),
    /// DT_STRING: each element's bytes.
    Str(Vec<Vec<u8>>),
    /// Any other dtype (complex, uint64, quantized, variant, …): the bytes'
    /// checksum is verified where TensorFlow's is a plain CRC of them, but the
    /// values are not decoded.
    Unsupported,
}

/// Where `--select tensor_value` reads a variable's value: a checkpoint,
/// read lazily by its importer (the model keeps it, never opens it).
pub trait Variables: std::fmt::Debug + Send + Sync {
    /// Whether there is a tensor of this name.
    fn contains(&self, name: &str) -> bool;
    /// The tensor's values; an error names the file that could not be read.
    fn tensor(&self, name: &str) -> Result<Tensor>;
}
