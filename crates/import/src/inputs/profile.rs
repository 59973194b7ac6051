//! `--profile_path`: a multi-step `ProfileProto`, decoded node by node on all
//! cores into lean records.
//!
//! A profile is one message whose bulk is the `nodes` map, each node with its
//! per-step executions, attributes and call stack. Decoding it whole with the
//! generated types builds a B-tree per map and keeps fields no view reads
//! (allocation records, per-output memory, input shapes), and most of the
//! cost on this kind of machine is faulting in that memory. So the top-level
//! message is split into its map entries, which decode in parallel into
//! records that declare only the fields rtfprof uses (prost skips the rest),
//! with maps kept as their wire-level entry lists and call stacks as
//! zero-copy slices of the file, decoded only if the command shows them.

use std::collections::BTreeMap;
use std::path::Path;

use bytes::Bytes;
use prost::Message;
use rayon::prelude::*;

use super::wire::{last_of_each_key, map_semantics, split_repeated_field_shared};
use crate::cache::prefetch_bytes;
use crate::error::{Error, Result};
use crate::proto::tensorflow::AttrValue;
use crate::proto::tensorflow::tfprof::{CodeDef, ProfileProto, Tuple};
pub use crate::stats::records::MemoryRecord;

const KIND: &str = "--profile_path";

/// A profile with its profile-wide fields decoded and its nodes not yet:
/// [`ProfileFile::decode_nodes`] decodes each node and hands it on at once,
/// so that only what the caller makes of the nodes accumulates.
#[derive(Debug, Default)]
pub struct ProfileFile {
    pub has_trace: bool,
    /// Decoded, but not restored into the stats: tfprof does not either.
    pub miss_accelerator_stream: bool,
    pub steps: Vec<i64>,
    pub id_to_string: BTreeMap<i64, String>,
    /// The payloads of the `nodes` map entries, slices of the file.
    entries: Vec<Bytes>,
    detail: NodeDetail,
}

/// Which optional parts of each node to decode: call stacks are most of a
/// profile's bytes, attributes most of its small allocations, and only some
/// commands read them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeDetail {
    pub code_traces: bool,
    pub attrs: bool,
    /// Each step's allocation records (`ExecProfile.allocations`), which
    /// only `rtfprof memory` reads.
    pub allocations: bool,
}

impl NodeDetail {
    pub const ALL: NodeDetail = NodeDetail { code_traces: true, attrs: true, allocations: true };
}

/// What [`ProfileFile::decode_nodes`] made of the nodes, in id order:
/// `ids[i]` is the node that `first[i]` and `second[i]` were made from.
pub struct ConvertedNodes<A, B> {
    pub ids: Vec<i64>,
    pub first: Vec<A>,
    pub second: Vec<B>,
}

/// One entry of the `nodes` map.
#[derive(Debug, Default)]
pub struct ProfileNodeEntry {
    pub id: i64,
    pub node: ProfileNodeRecord,
    /// The call stack: empty if the profile has none or it was not asked for.
    pub trace: CodeDef,
    /// Empty if not asked for.
    pub attrs: BTreeMap<String, AttrValue>,
    /// Empty if not asked for.
    pub allocations: StepAllocations,
}

/// Per step (in step order), its allocation records as `(alloc_micros,
/// alloc_bytes)`.
pub type StepAllocations = Vec<(i64, Vec<(i64, i64)>)>;

/// The profile into the node model (with the checkpoint's variables,
/// not tagged as tfprof does not tag a profile's); `path` names it in
/// errors.
pub fn import(profile: ProfileFile, checkpoint: Option<super::checkpoint::Checkpoint>, path: &Path, allocations: bool) -> Result<crate::stats::Stats> {
    let mut stats = super::profile_nodes::stats_from_profile(profile).map_err(|e| Error::input(KIND, path, e))?;
    stats.keep_allocations = allocations;
    if let Some(checkpoint) = checkpoint {
        stats.add_checkpoint(Box::new(checkpoint), []);
    }
    Ok(stats)
}

/// A `ProfileProto` file, binary only as in tfprof.
pub fn load_profile(path: &Path, detail: NodeDetail) -> Result<ProfileFile> {
    decode_profile(super::map_file(KIND, path)?, path, detail)
}

/// Decodes a `ProfileProto`'s profile-wide fields and finds its nodes;
/// `path` only names it in errors.
pub fn decode_profile(bytes: impl Into<Bytes>, path: &Path, detail: NodeDetail) -> Result<ProfileFile> {
    let invalid = |e: prost::DecodeError| Error::input(KIND, path, not_a_profile(&e));
    let (entries, rest) = split_repeated_field_shared(&bytes.into()).map_err(invalid)?;
    let header = ProfileProto::decode(rest.as_slice()).map_err(invalid)?;
    Ok(ProfileFile {
        has_trace: header.has_trace,
        miss_accelerator_stream: header.miss_accelerator_stream,
        steps: header.steps,
        id_to_string: header.id_to_string,
        entries,
        detail,
    })
}

fn not_a_profile(e: &dyn std::fmt::Display) -> String {
    format!("not a ProfileProto ({})", crate::error::one_line(&e.to_string()))
}

impl ProfileFile {
    /// Decodes every node on all cores and passes it to `convert`, in id
    /// order, one per id (the last in the file, as for any protobuf map).
    /// Returns the ids and the two parts of what `convert` made, each in its
    /// own vector, so that a large part (a node) is written once, in place.
    /// The error, the first in file order, says what is wrong with the file.
    pub fn decode_nodes<A, B>(&mut self, convert: impl Fn(ProfileNodeEntry) -> (A, B) + Sync) -> Result<ConvertedNodes<A, B>, String>
    where
        A: Send + Default,
        B: Send + Default,
    {
        use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
        let detail = self.detail;
        let entries = std::mem::take(&mut self.entries);
        // Which error rayon meets first is not fixed; report the first in the file.
        let first_error = || entries.iter().find_map(|bytes| decode_entry(bytes, detail).err()).expect("an entry failed");
        let Ok(ids) = entries.par_iter().map(|bytes| NodeKey::decode(&bytes[..]).map(|e| e.key)).collect::<Result<Vec<i64>, _>>() else {
            return Err(first_error());
        };
        // Positions in id order; of equal ids the last in the file wins.
        let order = last_of_each_key(ids.len(), |a, b| ids[a].cmp(&ids[b]));
        if order.len() != ids.len() {
            // A replaced entry is not used, but a broken one breaks the file.
            let mut replaced = vec![true; ids.len()];
            order.iter().for_each(|&at| replaced[at] = false);
            let mut replaced = (0..ids.len()).filter(|&at| replaced[at]);
            if replaced.any(|at| decode_entry(&entries[at], detail).is_err()) {
                return Err(first_error());
            }
        }
        let failed = AtomicBool::new(false);
        let (mut first, mut second) = (Vec::new(), Vec::new());
        // In id order the entries are scattered over the file (the engine
        // writes them in hash order), so each would start with a cache miss.
        const AHEAD: usize = 4;
        order
            .par_iter()
            .enumerate()
            .map(|(i, &at)| {
                if let Some(&later) = order.get(i + AHEAD) {
                    let entry = &entries[later];
                    prefetch_bytes(&entry[..entry.len().min(2048)]);
                }
                match decode_entry(&entries[at], detail) {
                    Ok(entry) => convert(entry),
                    Err(_) => {
                        failed.store(true, Relaxed);
                        Default::default()
                    }
                }
            })
            .unzip_into_vecs(&mut first, &mut second);
        if failed.load(Relaxed) {
            return Err(first_error());
        }
        Ok(ConvertedNodes { ids: order.iter().map(|&at| ids[at]).collect(), first, second })
    }
}

/// Decodes one `nodes` entry. The fields every command reads decode from a
/// plain slice; call stacks and attributes, when asked for, from a second
/// pass that shares the file's bytes. (Sharing costs an atomic count per
/// field, which the cores contend for.)
fn decode_entry(bytes: &Bytes, detail: NodeDetail) -> Result<ProfileNodeEntry, String> {
    let (id, node) = NodeEntry::decode(&bytes[..]).map_err(|e| not_a_profile(&e))?.into();
    if node.name.is_empty() {
        return Err(not_a_profile(&"node without a name"));
    }
    let allocations = if detail.allocations { allocations(bytes)? } else { Vec::new() };
    if !detail.code_traces && !detail.attrs {
        return Ok(ProfileNodeEntry { id, node, trace: CodeDef::default(), attrs: BTreeMap::new(), allocations });
    }
    let (_, wire) = NodeDetailEntry::decode(bytes.clone()).map_err(|e| not_a_profile(&e))?.into();
    let trace = match wire.trace {
        parts if !detail.code_traces || parts.is_empty() => Ok(CodeDef::default()),
        parts if parts.len() == 1 => CodeDef::decode(parts[0].clone()),
        parts => CodeDef::decode(parts.concat().as_slice()),
    };
    let attrs = match wire.attrs {
        raw if detail.attrs => raw.into_iter().map(AttrEntry::decode).collect::<Result<Vec<_>, _>>().map(|entries| {
            let mut pairs: Vec<(String, AttrValue)> = entries.into_iter().map(Into::into).collect();
            map_semantics(&mut pairs);
            pairs.into_iter().collect()
        }),
        _ => Ok(BTreeMap::new()),
    };
    let (trace, attrs) = trace.and_then(|t| Ok((t, attrs?))).map_err(|e| not_a_profile(&e))?;
    Ok(ProfileNodeEntry { id, node, trace, attrs, allocations })
}

/// A node entry's allocation records per step, from a pass of their own
/// (the lean node record skips them).
fn allocations(bytes: &[u8]) -> Result<StepAllocations, String> {
    let (_, mut node) = NodeAllocationsEntry::decode(bytes).map_err(|e| not_a_profile(&e))?.into();
    Ok(pairs(&mut node.execs).into_iter().map(|(step, exec)| (step, exec.allocations.iter().map(|r| (r.alloc_micros, r.alloc_bytes)).collect())).collect())
}

/// Defines a map entry message (`key` = 1, `value` = 2) and its conversion to
/// a `(key, value)` pair, a missing value being the default as in protobuf.
macro_rules! map_entry {
    ($name:ident, $key_kind:ident, $key:ty, message, $value:ty) => {
        #[derive(Clone, PartialEq, Message)]
        struct $name {
            #[prost($key_kind, tag = "1")]
            key: $key,
            #[prost(message, optional, tag = "2")]
            value: Option<$value>,
        }
        impl From<$name> for ($key, $value) {
            fn from(e: $name) -> Self {
                (e.key, e.value.unwrap_or_default())
            }
        }
    };
    ($name:ident, $key_kind:ident, $key:ty, $value_kind:ident, $value:ty) => {
        #[derive(Clone, PartialEq, Message)]
        struct $name {
            #[prost($key_kind, tag = "1")]
            key: $key,
            #[prost($value_kind, tag = "2")]
            value: $value,
        }
        impl From<$name> for ($key, $value) {
            fn from(e: $name) -> Self {
                (e.key, e.value)
            }
        }
    };
}

map_entry!(NodeEntry, int64, i64, message, ProfileNodeRecord);

/// Only the id of a `nodes` entry, to order entries before decoding them.
#[derive(Clone, PartialEq, Message)]
struct NodeKey {
    #[prost(int64, tag = "1")]
    key: i64,
}
map_entry!(NodeDetailEntry, int64, i64, message, NodeDetailWire);
map_entry!(InputEntry, int32, i32, int64, i64);
map_entry!(ShapeEntry, int32, i32, message, Tuple);
map_entry!(SlotEntry, int64, i64, int32, i32);
map_entry!(AttrEntry, string, String, message, AttrValue);
map_entry!(ExecEntry, int64, i64, message, ExecRecord);
map_entry!(DeviceTimesEntry, string, String, message, ExecTimeRecord);
map_entry!(NodeAllocationsEntry, int64, i64, message, NodeAllocations);
map_entry!(ExecAllocationsEntry, int64, i64, message, ExecAllocations);

/// `tfprof.ProfileNode`'s executions, for their allocation records only.
#[derive(Clone, PartialEq, Message)]
struct NodeAllocations {
    #[prost(message, repeated, tag = "12")]
    execs: Vec<ExecAllocationsEntry>,
}

/// `tfprof.ExecProfile.allocations`: tfprof keeps there the records of the
/// allocators whose name contains `GPU`, without the allocators' names.
#[derive(Clone, PartialEq, Message)]
struct ExecAllocations {
    #[prost(message, repeated, tag = "11")]
    allocations: Vec<crate::proto::tensorflow::AllocationRecord>,
}

/// `tfprof.ProfileNode`, the fields rtfprof reads. Maps are entry lists in
/// file order; [`ProfileNodeRecord`]'s accessors give them map semantics.
#[derive(Clone, PartialEq, Message)]
pub struct ProfileNodeRecord {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "9")]
    pub op: String,
    #[prost(message, repeated, tag = "2")]
    inputs: Vec<InputEntry>,
    #[prost(message, repeated, tag = "15")]
    output_shapes: Vec<ShapeEntry>,
    #[prost(message, repeated, tag = "14")]
    src_output_index: Vec<SlotEntry>,
    #[prost(int64, repeated, tag = "4")]
    pub shape: Vec<i64>,
    #[prost(string, repeated, tag = "5")]
    pub op_types: Vec<String>,
    #[prost(string, tag = "6")]
    pub canonical_device: String,
    #[prost(int64, tag = "8")]
    pub float_ops: i64,
    #[prost(message, repeated, tag = "12")]
    execs: Vec<ExecEntry>,
}

/// `tfprof.ProfileNode`'s call stack and attributes, as slices of the file.
#[derive(Clone, PartialEq, Message)]
struct NodeDetailWire {
    /// Every occurrence of the `trace` field: protobuf merges them, which
    /// for a message equals decoding their concatenation.
    #[prost(bytes = "bytes", repeated, tag = "10")]
    trace: Vec<Bytes>,
    /// The `attrs` map entries.
    #[prost(bytes = "bytes", repeated, tag = "11")]
    attrs: Vec<Bytes>,
}

/// Drains a map field's entries into `(key, value)` pairs in key order.
fn pairs<E, K, V>(entries: &mut Vec<E>) -> Vec<(K, V)>
where
    E: Into<(K, V)>,
    K: Ord,
{
    let mut pairs: Vec<(K, V)> = entries.drain(..).map(Into::into).collect();
    map_semantics(&mut pairs);
    pairs
}

impl ProfileNodeRecord {
    /// `inputs`: input index → producing node id.
    pub fn take_inputs(&mut self) -> Vec<(i32, i64)> {
        pairs(&mut self.inputs)
    }

    /// `output_shapes`: output slot → shape.
    pub fn take_output_shapes(&mut self) -> Vec<(i32, Tuple)> {
        pairs(&mut self.output_shapes)
    }

    /// `src_output_index`: producing node id → its output slot.
    pub fn take_src_output_index(&mut self) -> Vec<(i64, i32)> {
        pairs(&mut self.src_output_index)
    }

    /// `execs`: step → what ran in it.
    pub fn take_execs(&mut self) -> Vec<(i64, ExecRecord)> {
        pairs(&mut self.execs)
    }
}

/// `tfprof.ExecProfile`, without allocation records and device lists.
#[derive(Clone, PartialEq, Message)]
pub struct ExecRecord {
    #[prost(int64, tag = "1")]
    pub run_count: i64,
    #[prost(int64, tag = "2")]
    pub all_start_micros: i64,
    #[prost(int64, tag = "3")]
    pub latest_end_micros: i64,
    #[prost(message, repeated, tag = "4")]
    accelerator_execs: Vec<DeviceTimesEntry>,
    #[prost(message, repeated, tag = "5")]
    cpu_execs: Vec<DeviceTimesEntry>,
    #[prost(message, repeated, tag = "7")]
    pub memory_execs: Vec<MemoryRecord>,
}

impl ExecRecord {
    /// `accelerator_execs`: device → kernel times.
    pub fn take_accelerator_execs(&mut self) -> Vec<(String, ExecTimeRecord)> {
        pairs(&mut self.accelerator_execs)
    }

    /// `cpu_execs`: device → op times.
    pub fn take_cpu_execs(&mut self) -> Vec<(String, ExecTimeRecord)> {
        pairs(&mut self.cpu_execs)
    }
}

/// `tfprof.ExecTime`: (start, duration) tuples.
#[derive(Clone, PartialEq, Message)]
pub struct ExecTimeRecord {
    #[prost(message, repeated, tag = "1")]
    pub times: Vec<Tuple>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every node of a profile, decoded with `detail`, in id order.
    fn nodes(bytes: Bytes, detail: NodeDetail) -> Result<(ProfileFile, Vec<ProfileNodeEntry>), String> {
        let mut profile = decode_profile(bytes, Path::new("p"), detail).map_err(|e| e.to_string())?;
        let nodes = profile.decode_nodes(|entry| (entry, ()))?.first;
        Ok((profile, nodes))
    }

    fn fixture(name: &str) -> Bytes {
        let path = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata").join(name).join("profile");
        Bytes::from(std::fs::read(path).unwrap())
    }

    /// The lean records carry exactly what the generated types decode.
    #[test]
    fn records_equal_the_generated_decode() {
        for model in ["mlp", "cnn", "while", "gpu_synth"] {
            let bytes = fixture(model);
            let full = ProfileProto::decode(bytes.clone()).unwrap();
            let (lean, lean_nodes) = nodes(bytes, NodeDetail::ALL).unwrap();
            assert_eq!(lean.has_trace, full.has_trace);
            assert_eq!(lean.steps, full.steps);
            assert_eq!(lean.id_to_string, full.id_to_string);
            assert_eq!(lean_nodes.len(), full.nodes.len(), "{model}");
            for (entry, (full_id, node)) in lean_nodes.into_iter().zip(full.nodes) {
                let (id, mut record) = (entry.id, entry.node);
                assert_eq!(id, full_id);
                assert_eq!(entry.trace, node.trace.clone().unwrap_or_default());
                let allocations: StepAllocations =
                    node.execs.iter().map(|(step, e)| (*step, e.allocations.iter().map(|r| (r.alloc_micros, r.alloc_bytes)).collect())).collect();
                assert_eq!(entry.allocations, allocations);
                assert_eq!(entry.attrs, node.attrs);
                assert_eq!(record.name, node.name);
                assert_eq!(record.op, node.op);
                assert_eq!(record.shape, node.shape);
                assert_eq!(record.op_types, node.op_types);
                assert_eq!(record.canonical_device, node.canonical_device);
                assert_eq!(record.float_ops, node.float_ops);
                assert_eq!(record.take_inputs(), node.inputs.into_iter().collect::<Vec<_>>());
                assert_eq!(record.take_output_shapes(), node.output_shapes.into_iter().collect::<Vec<_>>());
                assert_eq!(record.take_src_output_index(), node.src_output_index.into_iter().collect::<Vec<_>>());
                let execs = record.take_execs();
                assert_eq!(execs.len(), node.execs.len());
                for ((step, mut exec), (full_step, full)) in execs.into_iter().zip(node.execs) {
                    assert_eq!((step, exec.run_count, exec.all_start_micros), (full_step, full.run_count, full.all_start_micros));
                    assert_eq!(exec.latest_end_micros, full.latest_end_micros);
                    let times = |v: Vec<(String, ExecTimeRecord)>| v.into_iter().map(|(d, t)| (d, t.times)).collect::<Vec<_>>();
                    let full_times =
                        |m: BTreeMap<String, crate::proto::tensorflow::tfprof::ExecTime>| m.into_iter().map(|(d, t)| (d, t.times)).collect::<Vec<_>>();
                    assert_eq!(times(exec.take_accelerator_execs()), full_times(full.accelerator_execs));
                    assert_eq!(times(exec.take_cpu_execs()), full_times(full.cpu_execs));
                    let memory: Vec<_> = full
                        .memory_execs
                        .iter()
                        .map(|m| MemoryRecord {
                            memory_micros: m.memory_micros,
                            requested_bytes: m.requested_bytes,
                            peak_bytes: m.peak_bytes,
                            residual_bytes: m.residual_bytes,
                            output_bytes: m.output_bytes,
                            allocator_bytes_in_use: m.allocator_bytes_in_use,
                        })
                        .collect();
                    assert_eq!(exec.memory_execs, memory);
                }
            }
        }
    }

    #[test]
    fn skipped_details_are_empty() {
        let (_, gpu) = nodes(fixture("gpu_synth"), NodeDetail { allocations: true, ..NodeDetail::default() }).unwrap();
        assert!(gpu.iter().any(|n| n.allocations.iter().any(|(_, records)| !records.is_empty())));
        let (_, gpu) = nodes(fixture("gpu_synth"), NodeDetail { allocations: false, ..NodeDetail::ALL }).unwrap();
        assert!(gpu.iter().all(|n| n.allocations.is_empty()));
        let (lean, lean_nodes) = nodes(fixture("cnn"), NodeDetail::default()).unwrap();
        assert!(lean.has_trace);
        assert!(lean_nodes.iter().all(|n| n.trace == CodeDef::default() && n.attrs.is_empty()));
        let (_, all) = nodes(fixture("cnn"), NodeDetail::ALL).unwrap();
        assert!(all.iter().any(|n| n.trace != CodeDef::default()) && all.iter().any(|n| !n.attrs.is_empty()));
    }

    /// Map semantics: duplicate node ids keep the last entry, entries come
    /// out in id order, and fields after the nodes still count.
    #[test]
    fn duplicate_keys_and_merged_messages_follow_protobuf() {
        use crate::proto::tensorflow::tfprof::ProfileNode;
        let node = |name: &str, op: &str| ProfileNode { name: name.into(), op: op.into(), ..Default::default() };
        let mut wire = Vec::new();
        for (id, n) in [(7, node("late", "A")), (3, node("first", "B")), (7, node("later", ""))] {
            ProfileProto { nodes: [(id, n)].into(), ..Default::default() }.encode(&mut wire).unwrap();
        }
        ProfileProto { steps: vec![4], has_trace: true, ..Default::default() }.encode(&mut wire).unwrap();
        let full = ProfileProto::decode(wire.as_slice()).unwrap();
        let (lean, lean_nodes) = nodes(Bytes::from(wire), NodeDetail::ALL).unwrap();
        let names: Vec<(i64, &str, &str)> = lean_nodes.iter().map(|e| (e.id, e.node.name.as_str(), e.node.op.as_str())).collect();
        let full_names: Vec<(i64, &str, &str)> = full.nodes.iter().map(|(id, n)| (*id, n.name.as_str(), n.op.as_str())).collect();
        assert_eq!(names, full_names);
        assert_eq!(names, [(3, "first", "B"), (7, "later", "")]);
        assert_eq!((lean.steps, lean.has_trace), (vec![4], true));
    }

    /// An entry replaced by a later one of the same id is not used, but if
    /// it is broken the file is, as for protobuf.
    #[test]
    fn a_broken_replaced_entry_is_an_error() {
        use crate::proto::tensorflow::tfprof::ProfileNode;
        let valid = ProfileProto { nodes: [(7, ProfileNode { name: "n".into(), ..Default::default() })].into(), ..Default::default() };
        // nodes { key: 7 value: <a tag whose varint never ends> }
        let broken = [0x0a, 0x06, 0x08, 0x07, 0x12, 0x02, 0xff, 0xff];
        let wire = [&broken[..], &valid.encode_to_vec()].concat();
        assert!(ProfileProto::decode(wire.as_slice()).is_err());
        let err = nodes(Bytes::from(wire), NodeDetail::ALL).unwrap_err();
        assert!(err.contains("not a ProfileProto"), "{err}");
        assert_eq!(nodes(Bytes::from(valid.encode_to_vec()), NodeDetail { code_traces: false, attrs: false, allocations: false }).unwrap().1.len(), 1);
    }

    #[test]
    fn wrong_kinds_and_truncation_are_errors() {
        let graph = std::fs::read(std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata/mlp/graph.pb")).unwrap();
        let err = nodes(Bytes::from(graph), NodeDetail::ALL).unwrap_err();
        assert!(err.contains("not a ProfileProto"), "{err}");
        let whole = fixture("mlp");
        let err = nodes(whole.slice(..whole.len() / 2), NodeDetail::ALL).unwrap_err();
        assert!(err.contains("not a ProfileProto"), "{err}");
        let nameless = ProfileProto { nodes: [(1, Default::default())].into(), ..Default::default() }.encode_to_vec();
        let err = nodes(Bytes::from(nameless), NodeDetail::ALL).unwrap_err();
        assert!(err.ends_with("not a ProfileProto (node without a name)"), "{err}");
    }
}
