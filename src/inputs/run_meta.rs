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

    /// The generated type's decode with the fields the records skip cleared.
    fn kept_fields(mut run_meta: RunMetadata) -> RunMetadata {
        let step_stats = run_meta.step_stats.take();
        let mut kept = RunMetadata { step_stats, ..Default::default() };
        for dev in kept.step_stats.iter_mut().flat_map(|s| &mut s.dev_stats) {
            dev.thread_names.clear();
            for stat in &mut dev.node_stats {
                let (name, start, end) = (std::mem::take(&mut stat.node_name), stat.all_start_micros, stat.op_end_rel_micros);
                let (memory, mut output, memory_stats) =
                    (std::mem::take(&mut stat.memory), std::mem::take(&mut stat.output), stat.memory_stats.take());
                *stat = Default::default();
                (stat.node_name, stat.all_start_micros, stat.op_end_rel_micros) = (name, start, end);
                stat.memory = memory.into_iter().map(|m| crate::proto::tensorflow::AllocatorMemoryUsed { allocation_records: vec![], ..m }).collect();
                for out in &mut output {
                    out.slot = 0;
                    if let Some(t) = &mut out.tensor_description {
                        t.dtype = 0;
                        if let Some(a) = &mut t.allocation_description {
                            *a = crate::proto::tensorflow::AllocationDescription { requested_bytes: a.requested_bytes, allocated_bytes: a.allocated_bytes, ..Default::default() };
                        }
                    }
                }
                stat.output = output;
                stat.memory_stats = memory_stats.map(|m| crate::proto::tensorflow::MemoryStats {
                    temp_memory_size: m.temp_memory_size,
                    persistent_memory_size: m.persistent_memory_size,
                    ..Default::default()
                });
            }
        }
        kept
    }

    /// The records hold exactly the generated type's values of the fields
    /// they declare: re-encoded, they decode to the full message with the
    /// other fields cleared.
    #[test]
    fn records_equal_the_generated_decode() {
        for model in ["mlp", "cnn", "while"] {
            let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("testdata/{model}/run_meta_0"));
            let bytes = std::fs::read(path).unwrap();
            let full = RunMetadata::decode(bytes.as_slice()).unwrap();
            let lean = RunMetaRecord::decode(bytes.as_slice()).unwrap();
            let round_trip = RunMetadata::decode(lean.encode_to_vec().as_slice()).unwrap();
            assert_eq!(round_trip, kept_fields(full.clone()), "{model}");
            let stats = full.step_stats.unwrap();
            assert!(stats.dev_stats.iter().flat_map(|d| &d.node_stats).any(|s| !s.output.is_empty() && !s.memory.is_empty()));
            assert!(stats.dev_stats.iter().flat_map(|d| &d.node_stats).any(|s| !s.timeline_label.is_empty()), "{model}: something is skipped");
        }
    }
}
