//! `--run_meta_path`: the parts of a `RunMetadata` tfprof reads, its step
//! stats, decoded into lean records.
//!
//! A traced step's RunMetadata is mostly what tfprof ignores: each node
//! stat's `timeline_label` (close to half of the bytes), its nanosecond
//! copies of the times, allocation records and, when asked for, the cost
//! and partition graphs. Records that declare only the fields rtfprof reads
//! let prost skip the rest instead of allocating it. Text-format files are
//! transcoded to the same records.

use prost::Message;

use crate::proto::tensorflow::TensorShapeProto;

/// `tensorflow.RunMetadata`: the step stats only.
#[derive(Clone, PartialEq, Message)]
pub struct RunMetaRecord {
    #[prost(message, optional, tag = "1")]
    pub step_stats: Option<StepStatsRecord>,
}

/// `tensorflow.StepStats`.
#[derive(Clone, PartialEq, Message)]
pub struct StepStatsRecord {
    #[prost(message, repeated, tag = "1")]
    pub dev_stats: Vec<DeviceStatsRecord>,
}

/// `tensorflow.DeviceStepStats` without thread names.
#[derive(Clone, PartialEq, Message)]
pub struct DeviceStatsRecord {
    #[prost(string, tag = "1")]
    pub device: String,
    #[prost(message, repeated, tag = "2")]
    pub node_stats: Vec<NodeStatsRecord>,
}

/// `tensorflow.NodeExecStats`: name, start, duration, memory and outputs.
#[derive(Clone, PartialEq, Message)]
pub struct NodeStatsRecord {
    #[prost(string, tag = "1")]
    pub node_name: String,
    #[prost(int64, tag = "2")]
    pub all_start_micros: i64,
    #[prost(int64, tag = "4")]
    pub op_end_rel_micros: i64,
    #[prost(message, repeated, tag = "6")]
    pub memory: Vec<AllocatorMemoryRecord>,
    #[prost(message, repeated, tag = "7")]
    pub output: Vec<NodeOutputRecord>,
    #[prost(message, optional, tag = "12")]
    pub memory_stats: Option<MemoryStatsRecord>,
}

/// `tensorflow.AllocatorMemoryUsed` without allocation records.
#[derive(Clone, PartialEq, Message)]
pub struct AllocatorMemoryRecord {
    #[prost(string, tag = "1")]
    pub allocator_name: String,
    #[prost(int64, tag = "2")]
    pub total_bytes: i64,
    #[prost(int64, tag = "3")]
    pub peak_bytes: i64,
    #[prost(int64, tag = "4")]
    pub live_bytes: i64,
    #[prost(int64, tag = "5")]
    pub allocator_bytes_in_use: i64,
}

/// `tensorflow.NodeOutput`: its tensor's shape and allocation.
#[derive(Clone, PartialEq, Message)]
pub struct NodeOutputRecord {
    #[prost(message, optional, tag = "3")]
    pub tensor_description: Option<TensorDescriptionRecord>,
}

/// `tensorflow.TensorDescription` without the dtype.
#[derive(Clone, PartialEq, Message)]
pub struct TensorDescriptionRecord {
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
    #[prost(message, optional, tag = "4")]
    pub allocation_description: Option<AllocationRecord>,
}

/// `tensorflow.AllocationDescription`: the sizes.
#[derive(Clone, PartialEq, Message)]
pub struct AllocationRecord {
    #[prost(int64, tag = "1")]
    pub requested_bytes: i64,
    #[prost(int64, tag = "2")]
    pub allocated_bytes: i64,
}

/// `tensorflow.MemoryStats`: the two sizes tfprof adds.
#[derive(Clone, PartialEq, Message)]
pub struct MemoryStatsRecord {
    #[prost(int64, tag = "1")]
    pub temp_memory_size: i64,
    #[prost(int64, tag = "3")]
    pub persistent_memory_size: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tensorflow::RunMetadata;

    /// Every field kept equals the generated type's decode of the same file.
    #[test]
    fn records_equal_the_generated_decode() {
        for model in ["mlp", "cnn", "while"] {
            let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("testdata/{model}/run_meta_0"));
            let bytes = std::fs::read(path).unwrap();
            let full = RunMetadata::decode(bytes.as_slice()).unwrap().step_stats.unwrap();
            let lean = RunMetaRecord::decode(bytes.as_slice()).unwrap().step_stats.unwrap();
            assert_eq!(lean.dev_stats.len(), full.dev_stats.len());
            for (dev, full_dev) in lean.dev_stats.iter().zip(&full.dev_stats) {
                assert_eq!(dev.device, full_dev.device);
                assert_eq!(dev.node_stats.len(), full_dev.node_stats.len());
                for (stat, f) in dev.node_stats.iter().zip(&full_dev.node_stats) {
                    assert_eq!((&stat.node_name, stat.all_start_micros, stat.op_end_rel_micros), (&f.node_name, f.all_start_micros, f.op_end_rel_micros));
                    let memory: Vec<_> = f
                        .memory
                        .iter()
                        .map(|m| AllocatorMemoryRecord {
                            allocator_name: m.allocator_name.clone(),
                            total_bytes: m.total_bytes,
                            peak_bytes: m.peak_bytes,
                            live_bytes: m.live_bytes,
                            allocator_bytes_in_use: m.allocator_bytes_in_use,
                        })
                        .collect();
                    assert_eq!(stat.memory, memory);
                    let outputs: Vec<_> = f
                        .output
                        .iter()
                        .map(|o| {
                            o.tensor_description.as_ref().map(|t| {
                                (t.shape.clone(), t.allocation_description.as_ref().map(|a| (a.requested_bytes, a.allocated_bytes)))
                            })
                        })
                        .collect();
                    let lean_outputs: Vec<_> = stat
                        .output
                        .iter()
                        .map(|o| {
                            o.tensor_description.as_ref().map(|t| {
                                (t.shape.clone(), t.allocation_description.as_ref().map(|a| (a.requested_bytes, a.allocated_bytes)))
                            })
                        })
                        .collect();
                    assert_eq!(lean_outputs, outputs);
                    let sizes = |m: &Option<crate::proto::tensorflow::MemoryStats>| m.as_ref().map(|m| (m.temp_memory_size, m.persistent_memory_size));
                    assert_eq!(stat.memory_stats.as_ref().map(|m| (m.temp_memory_size, m.persistent_memory_size)), sizes(&f.memory_stats));
                }
            }
            assert!(full.dev_stats.iter().any(|d| d.node_stats.iter().any(|s| !s.output.is_empty() && !s.memory.is_empty())), "{model}: the fixture has outputs and memory");
        }
    }
}
