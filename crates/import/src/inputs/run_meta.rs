//! `--run_meta_path`: the parts of a `RunMetadata` tfprof reads, its step
//! stats, decoded into lean records.
//!
//! A traced step's RunMetadata is mostly what tfprof ignores: each node
//! stat's `timeline_label` (close to half of the bytes), its nanosecond
//! copies of the times, allocation records and, when asked for, the cost
//! and partition graphs. Of what it reads, tfprof only ever sums a stat's
//! allocators and outputs, so each stat is reduced to those sums while it
//! is decoded: no allocator names, output lists or shapes are kept (shapes
//! only when asked, for FLOPs estimation; allocation records only when
//! asked, for `rtfprof memory`). Text-format files are transcoded to wire
//! bytes and decoded the same way.
//!
//! Merging follows protobuf's rules, as prost's generated decoder (and
//! TensorFlow's) do: a repeated message adds an element per occurrence, a
//! singular message merges every occurrence, a scalar keeps the last. Fields
//! that are not read are skipped unchecked, as prost skips unknown fields.

use prost::DecodeError;
use prost::encoding::{DecodeContext, int64, string};

use super::wire::{for_each_field, payload, skip};
pub use crate::stats::records::{AllocatorRecords, AllocatorSums, DeviceStatsRecord, NodeStatsRecord, RunMetaRecord, StepStatsRecord};
use prost::Message;

use crate::proto::tensorflow::TensorShapeProto;

/// What to decode beyond what every view reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Detail {
    /// Output shapes (FLOPs estimation).
    pub shapes: bool,
    /// Allocation records (`rtfprof memory`).
    pub allocations: bool,
}

/// Decodes a binary RunMetadata; with `shapes`, keeps each output's
/// shape.
pub fn decode(wire: &[u8], shapes: bool) -> Result<RunMetaRecord, DecodeError> {
    decode_with(wire, Detail { shapes, allocations: false })
}

/// Decodes a binary RunMetadata, keeping what `detail` asks for.
pub fn decode_with(wire: &[u8], detail: Detail) -> Result<RunMetaRecord, DecodeError> {
    let mut record = RunMetaRecord::default();
    for_each_field(wire, |tag, wire_type, buf| match tag {
        1 => step_stats(payload(tag, wire_type, buf)?, record.step_stats.get_or_insert_with(Default::default), detail),
        _ => skip(tag, wire_type, buf),
    })?;
    Ok(record)
}

/// Whether a RunMetadata holds step stats of at least one device: which run
/// metadata of an event log are steps, without decoding them. Bytes that do
/// not decode count as steps, so that decoding them reports the error.
pub fn has_step_stats(wire: &[u8]) -> bool {
    let mut found = false;
    let scanned = for_each_field(wire, |tag, wire_type, buf| match tag {
        1 => for_each_field(payload(tag, wire_type, buf)?, |tag, wire_type, buf| {
            found |= tag == 1;
            skip(tag, wire_type, buf)
        }),
        _ => skip(tag, wire_type, buf),
    });
    found || scanned.is_err()
}

fn step_stats(wire: &[u8], into: &mut StepStatsRecord, detail: Detail) -> Result<(), DecodeError> {
    for_each_field(wire, |tag, wire_type, buf| match tag {
        1 => {
            into.dev_stats.push(device_stats(payload(tag, wire_type, buf)?, detail)?);
            Ok(())
        }
        _ => skip(tag, wire_type, buf),
    })
}

fn device_stats(wire: &[u8], detail: Detail) -> Result<DeviceStatsRecord, DecodeError> {
    let mut device = DeviceStatsRecord::default();
    // One buffer for every allocator name of the device's stats.
    let mut scratch = String::new();
    for_each_field(wire, |tag, wire_type, buf| match tag {
        1 => string::merge(wire_type, &mut device.device, buf, DecodeContext::default()),
        2 => {
            device.node_stats.push(node_stats(payload(tag, wire_type, buf)?, detail, &mut scratch)?);
            Ok(())
        }
        _ => skip(tag, wire_type, buf),
    })?;
    Ok(device)
}

fn node_stats(wire: &[u8], detail: Detail, scratch: &mut String) -> Result<NodeStatsRecord, DecodeError> {
    let mut stat = NodeStatsRecord { output_shapes: detail.shapes.then(Vec::new), ..Default::default() };
    for_each_field(wire, |tag, wire_type, buf| match tag {
        1 => string::merge(wire_type, &mut stat.node_name, buf, DecodeContext::default()),
        2 => int64::merge(wire_type, &mut stat.all_start_micros, buf, DecodeContext::default()),
        4 => int64::merge(wire_type, &mut stat.op_end_rel_micros, buf, DecodeContext::default()),
        6 => {
            let records = detail.allocations.then(|| {
                stat.allocations.push(AllocatorRecords::default());
                stat.allocations.last_mut().expect("just pushed")
            });
            allocator(payload(tag, wire_type, buf)?, &mut stat.memory, scratch, records)
        }
        7 => output(payload(tag, wire_type, buf)?, &mut stat),
        12 => memory_stats(payload(tag, wire_type, buf)?, &mut stat),
        _ => skip(tag, wire_type, buf),
    })?;
    Ok(stat)
}

/// One `AllocatorMemoryUsed`, added to `sums` once whole; its name and
/// allocation records go to `records` when given.
fn allocator(wire: &[u8], sums: &mut AllocatorSums, name: &mut String, mut records: Option<&mut AllocatorRecords>) -> Result<(), DecodeError> {
    name.clear();
    let (mut total, mut peak, mut live, mut in_use) = (0, 0, 0, 0);
    for_each_field(wire, |tag, wire_type, buf| match (tag, &mut records) {
        (1, _) => string::merge(wire_type, name, buf, DecodeContext::default()),
        (2, _) => int64::merge(wire_type, &mut total, buf, DecodeContext::default()),
        (3, _) => int64::merge(wire_type, &mut peak, buf, DecodeContext::default()),
        (4, _) => int64::merge(wire_type, &mut live, buf, DecodeContext::default()),
        (5, _) => int64::merge(wire_type, &mut in_use, buf, DecodeContext::default()),
        (6, Some(into)) => {
            let (mut micros, mut bytes) = (0, 0);
            for_each_field(payload(tag, wire_type, buf)?, |tag, wire_type, buf| match tag {
                1 => int64::merge(wire_type, &mut micros, buf, DecodeContext::default()),
                2 => int64::merge(wire_type, &mut bytes, buf, DecodeContext::default()),
                _ => skip(tag, wire_type, buf),
            })?;
            into.records.push((micros, bytes));
            Ok(())
        }
        _ => skip(tag, wire_type, buf),
    })?;
    sums.add(name, total, peak, live, in_use);
    if let Some(into) = records {
        into.allocator.clone_from(name);
    }
    Ok(())
}

/// One `NodeOutput`, added to the stat once whole.
fn output(wire: &[u8], stat: &mut NodeStatsRecord) -> Result<(), DecodeError> {
    // `tensor_description`'s shape and (requested, allocated) bytes, each
    // `None` until its field appears.
    let mut shape: Option<TensorShapeProto> = None;
    let mut allocation: Option<(i64, i64)> = None;
    let keep_shape = stat.output_shapes.is_some();
    for_each_field(wire, |tag, wire_type, buf| match tag {
        3 => tensor_description(payload(tag, wire_type, buf)?, keep_shape.then_some(&mut shape), &mut allocation),
        _ => skip(tag, wire_type, buf),
    })?;
    stat.outputs += 1;
    if let Some((requested, allocated)) = allocation {
        stat.output_bytes = stat.output_bytes.wrapping_add(allocated.max(requested));
    }
    if let Some(shapes) = &mut stat.output_shapes {
        shapes.push(shape);
    }
    Ok(())
}

/// Merges a `TensorDescription` into its shape (when kept) and allocation.
fn tensor_description(wire: &[u8], mut shape: Option<&mut Option<TensorShapeProto>>, allocation: &mut Option<(i64, i64)>) -> Result<(), DecodeError> {
    for_each_field(wire, |tag, wire_type, buf| match (tag, &mut shape) {
        (2, Some(shape)) => shape.get_or_insert_with(Default::default).merge(payload(tag, wire_type, buf)?),
        // Not kept, but of its wire type either way.
        (2, None) => payload(tag, wire_type, buf).map(drop),
        (4, _) => {
            let (requested, allocated) = allocation.get_or_insert((0, 0));
            for_each_field(payload(tag, wire_type, buf)?, |tag, wire_type, buf| match tag {
                1 => int64::merge(wire_type, requested, buf, DecodeContext::default()),
                2 => int64::merge(wire_type, allocated, buf, DecodeContext::default()),
                _ => skip(tag, wire_type, buf),
            })
        }
        _ => skip(tag, wire_type, buf),
    })
}

/// Merges a `MemoryStats` into the stat's two sizes.
fn memory_stats(wire: &[u8], stat: &mut NodeStatsRecord) -> Result<(), DecodeError> {
    for_each_field(wire, |tag, wire_type, buf| match tag {
        1 => int64::merge(wire_type, &mut stat.temp_memory_size, buf, DecodeContext::default()),
        3 => int64::merge(wire_type, &mut stat.persistent_memory_size, buf, DecodeContext::default()),
        _ => skip(tag, wire_type, buf),
    })
}

#[cfg(test)]
mod tests {
    use prost::encoding::{WireType, encode_key, encode_varint};

    use super::*;
    use crate::proto::tensorflow::{
        AllocationDescription, AllocationRecord, AllocatorMemoryUsed, MemoryStats, NodeExecStats, NodeOutput, RunMetadata, TensorDescription,
        tensor_shape_proto::Dim,
    };

    /// The record the generated (complete) decode reduces to: what the
    /// records kept before stats were summed while decoding.
    const ALL: Detail = Detail { shapes: true, allocations: true };

    fn reduced_with(full: &RunMetadata, detail: Detail) -> RunMetaRecord {
        let shapes = detail.shapes;
        let stat = |s: &NodeExecStats| {
            let mut memory = AllocatorSums::default();
            for m in &s.memory {
                memory.add(&m.allocator_name, m.total_bytes, m.peak_bytes, m.live_bytes, m.allocator_bytes_in_use);
            }
            let allocations = s.output.iter().filter_map(|o| o.tensor_description.as_ref()?.allocation_description.as_ref());
            let memory_stats = s.memory_stats.clone().unwrap_or_default();
            NodeStatsRecord {
                node_name: s.node_name.clone(),
                all_start_micros: s.all_start_micros,
                op_end_rel_micros: s.op_end_rel_micros,
                memory,
                outputs: s.output.len(),
                output_bytes: allocations.fold(0i64, |sum, a| sum.wrapping_add(a.allocated_bytes.max(a.requested_bytes))),
                output_shapes: shapes.then(|| s.output.iter().map(|o| o.tensor_description.as_ref().and_then(|t| t.shape.clone())).collect()),
                temp_memory_size: memory_stats.temp_memory_size,
                persistent_memory_size: memory_stats.persistent_memory_size,
                allocations: if detail.allocations {
                    s.memory
                        .iter()
                        .map(|m| AllocatorRecords {
                            allocator: m.allocator_name.clone(),
                            records: m.allocation_records.iter().map(|r| (r.alloc_micros, r.alloc_bytes)).collect(),
                        })
                        .collect()
                } else {
                    Vec::new()
                },
            }
        };
        RunMetaRecord {
            step_stats: full.step_stats.as_ref().map(|steps| StepStatsRecord {
                dev_stats: steps
                    .dev_stats
                    .iter()
                    .map(|d| DeviceStatsRecord { device: d.device.clone(), node_stats: d.node_stats.iter().map(stat).collect() })
                    .collect(),
            }),
        }
    }

    fn agrees(wire: &[u8], what: &str) {
        let full = RunMetadata::decode(wire).unwrap();
        for shapes in [false, true] {
            for allocations in [false, true] {
                let detail = Detail { shapes, allocations };
                assert_eq!(decode_with(wire, detail).unwrap(), reduced_with(&full, detail), "{what}, {detail:?}");
            }
        }
    }

    fn fixture(model: &str) -> Vec<u8> {
        std::fs::read(std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(format!("testdata/{model}/run_meta_0"))).unwrap()
    }

    /// On traced steps, the records hold what the generated decode holds,
    /// summed; the traces have what the sums are made of.
    #[test]
    fn records_are_the_generated_decode_summed() {
        for model in ["mlp", "cnn", "while", "gpu_synth"] {
            let wire = fixture(model);
            agrees(&wire, model);
            let full = RunMetadata::decode(wire.as_slice()).unwrap();
            let stats: Vec<&NodeExecStats> = full.step_stats.iter().flat_map(|s| &s.dev_stats).flat_map(|d| &d.node_stats).collect();
            assert!(stats.iter().any(|s| !s.output.is_empty() && !s.memory.is_empty()), "{model}");
            assert!(stats.iter().flat_map(|s| &s.memory).any(|m| m.allocation_records.len() > 1), "{model}: allocation records");
            assert!(stats.iter().any(|s| !s.timeline_label.is_empty()), "{model}: something is skipped");
        }
    }

    fn field(tag: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_key(tag, WireType::LengthDelimited, &mut out);
        encode_varint(payload.len() as u64, &mut out);
        out.extend_from_slice(payload);
        out
    }

    /// A RunMetadata with one device whose stats are the given payloads.
    fn run_meta(device: &str, stats: &[Vec<u8>]) -> Vec<u8> {
        let mut dev = field(1, device.as_bytes());
        stats.iter().for_each(|s| dev.extend(field(2, s)));
        field(1, &field(1, &dev))
    }

    /// Step stats are there when a device is: traced steps have them, TF2's
    /// graph-only run metadata and an empty step stats do not.
    #[test]
    fn has_step_stats_is_a_device_in_the_step_stats() {
        for model in ["mlp", "cnn"] {
            assert!(has_step_stats(&fixture(model)), "{model}");
        }
        let graphs_only = RunMetadata { function_graphs: vec![Default::default()], ..Default::default() };
        assert!(!has_step_stats(&graphs_only.encode_to_vec()));
        let no_devices = RunMetadata { step_stats: Some(Default::default()), ..Default::default() };
        assert!(!has_step_stats(&no_devices.encode_to_vec()));
        assert!(!has_step_stats(b""));
        // Undecodable: a step, whose decoding reports the error.
        assert!(has_step_stats(&[0x0a, 0x05, 0x0a]));
    }

    /// Fields given more than once merge as protobuf says: repeated ones
    /// add, singular messages merge, scalars keep the last value.
    #[test]
    fn repeated_fields_merge_like_the_generated_decode() {
        let gpu = |name: &str, total, in_use| AllocatorMemoryUsed {
            allocator_name: name.into(),
            total_bytes: total,
            peak_bytes: total + 1,
            live_bytes: total / 2,
            allocator_bytes_in_use: in_use,
            allocation_records: vec![
                AllocationRecord { alloc_micros: in_use, alloc_bytes: total },
                AllocationRecord { alloc_micros: in_use + 1, alloc_bytes: -total },
            ],
        };
        let shape = |dims: &[i64]| crate::proto::tensorflow::TensorShapeProto {
            dim: dims.iter().map(|&size| Dim { size, name: String::new() }).collect(),
            unknown_rank: false,
        };
        let described = |dims: &[i64], requested, allocated| NodeOutput {
            slot: 0,
            tensor_description: Some(TensorDescription {
                shape: Some(shape(dims)),
                allocation_description: Some(AllocationDescription { requested_bytes: requested, allocated_bytes: allocated, ..Default::default() }),
                ..Default::default()
            }),
        };
        let first = NodeExecStats {
            node_name: "a".into(),
            all_start_micros: 5,
            op_end_rel_micros: 2,
            memory: vec![gpu("GPU_0_bfc", 100, 7), gpu("cpu", 10, 99)],
            output: vec![described(&[2, 3], 24, 32), NodeOutput::default()],
            memory_stats: Some(MemoryStats { temp_memory_size: 4, persistent_memory_size: 8, ..Default::default() }),
            ..Default::default()
        };
        let second = NodeExecStats {
            node_name: "b".into(),
            op_end_rel_micros: 9,
            // An allocator without a name: not a GPU one.
            memory: vec![gpu("GPU_1_bfc", 50, 3), gpu("", 1, 1000)],
            output: vec![described(&[], 8, 0)],
            memory_stats: Some(MemoryStats { persistent_memory_size: 16, ..Default::default() }),
            ..Default::default()
        };
        // One stat written in two parts; one output whose tensor description
        // (and its allocation and shape) comes in two parts.
        let split_stat = [first.encode_to_vec(), second.encode_to_vec()].concat();
        let part = |dims: &[i64], requested| {
            let allocation = AllocationDescription { requested_bytes: requested, ..Default::default() };
            let part = TensorDescription { shape: Some(shape(dims)), allocation_description: Some(allocation), ..Default::default() };
            field(3, &part.encode_to_vec())
        };
        let split_output = [field(1, b"c"), field(7, &[part(&[4], 40), part(&[5, 6], 16)].concat())].concat();
        // A device named twice, and step stats given twice.
        let mut wire = run_meta("/device:GPU:0", &[split_stat.clone(), split_output.clone()]);
        wire.extend(field(1, &field(1, &[field(1, b"/device:CPU:0"), field(1, b"/device:CPU:1"), field(2, &split_stat)].concat())));
        agrees(&wire, "merged fields");
        let record = decode(&wire, false).unwrap();
        let stats = &record.step_stats.as_ref().unwrap().dev_stats;
        assert_eq!(stats.len(), 2);
        assert_eq!(stats[1].device, "/device:CPU:1");
        let merged = &stats[0].node_stats[0];
        assert_eq!((merged.node_name.as_str(), merged.all_start_micros, merged.op_end_rel_micros), ("b", 5, 9));
        assert_eq!(merged.memory, AllocatorSums { total_bytes: 161, peak_bytes: 165, live_bytes: 80, gpu_allocators: 2, gpu_bytes_in_use: 7 });
        assert_eq!((merged.outputs, merged.output_bytes), (3, 32 + 8));
        assert_eq!((merged.temp_memory_size, merged.persistent_memory_size), (4, 16));
        assert_eq!(stats[0].node_stats[1].output_bytes, 16, "the later allocation's requested bytes win");
    }

    /// A file cut anywhere decodes only if the generated decode takes it,
    /// and then to the same record.
    #[test]
    fn truncated_files_fail_like_the_generated_decode() {
        let wire = fixture("mlp");
        for len in (0..wire.len()).step_by(97).chain(wire.len() - 40..wire.len()) {
            let cut = &wire[..len];
            match RunMetadata::decode(cut) {
                Ok(full) => assert_eq!(decode_with(cut, ALL).unwrap(), reduced_with(&full, ALL), "cut at {len}"),
                Err(_) => assert!(decode_with(cut, ALL).is_err(), "cut at {len}"),
            }
        }
    }

    /// Files with bytes changed at random: wherever the generated decode
    /// takes one, the records are its reduction (they check a subset of
    /// what it checks), and no change makes decoding panic.
    #[test]
    fn corrupted_files_decode_like_the_generated_decode() {
        let wire = fixture("mlp");
        let mut rng = crate::test_random::XorShift::new(0x2545_f491_4f6c_dd1d);
        let mut taken = 0;
        for _ in 0..3000 {
            let mut bad = wire.clone();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(bad.len() as u64) as usize;
                bad[at] = rng.next() as u8;
            }
            let ours = decode_with(&bad, ALL);
            if let Ok(full) = RunMetadata::decode(bad.as_slice()) {
                assert_eq!(ours.unwrap(), reduced_with(&full, ALL));
                taken += 1;
            }
        }
        assert!(taken > 100, "only {taken} corrupted files decode: the test checks little");
    }

    /// A field read with the wrong wire type is an error, as in the
    /// generated decode.
    #[test]
    fn wrong_wire_types_are_errors() {
        let mut bad_name = Vec::new();
        encode_key(1, WireType::Varint, &mut bad_name);
        encode_varint(3, &mut bad_name);
        let mut bad_memory = Vec::new();
        encode_key(6, WireType::Varint, &mut bad_memory);
        encode_varint(3, &mut bad_memory);
        // An output shape, read or not.
        let mut bad_shape = Vec::new();
        encode_key(2, WireType::Varint, &mut bad_shape);
        encode_varint(1, &mut bad_shape);
        let bad_output = field(7, &field(3, &bad_shape));
        for stat in [bad_name, bad_memory, bad_output, field(2, b"xx"), field(1, &[0xff, 0xfe])] {
            let wire = run_meta("/device:CPU:0", &[stat]);
            assert!(RunMetadata::decode(wire.as_slice()).is_err());
            assert!(decode(&wire, false).is_err() && decode(&wire, true).is_err());
        }
    }
}
