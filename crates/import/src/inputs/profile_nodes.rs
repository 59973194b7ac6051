//! Building the node model ([`Stats`]) from a multi-step `ProfileProto` (`--profile_path`), as
//! written by `tf.profiler.Profiler` / `ProfileContext` (tfprof's
//! `TFStats(filename)` and `TFGraphNode::FromProto`).

use rayon::prelude::*;

use super::profile::{ConvertedNodes, ExecTimeRecord, ProfileFile, ProfileNodeEntry, StepAllocations};
use crate::stats::device::DeviceName;
use crate::stats::node::{ExecStep, Input, Node, NodeName};
use crate::stats::small_map::{SmallMap, snug};
use crate::stats::symbol::symbol;
use crate::stats::{AllocationEvent, FirstOfEachName, Stats};

/// What a profile node says of others, by node id, to be resolved to names
/// once all nodes are decoded.
#[derive(Default)]
struct Links {
    /// Producing node id of each input, in input-index order.
    input_ids: Vec<i64>,
    /// `src_output_index`: producing node id → output slot, in id order.
    slots: Vec<(i64, i32)>,
    /// Why the node's executions are unusable, reported only if the node is
    /// kept (tfprof reads only the first node of a name).
    exec_error: Option<String>,
    /// Per step, its allocation records (when they were decoded).
    allocations: StepAllocations,
}

/// Ingests a profile. Errors name what is inconsistent (tfprof aborts on
/// a dangling node id). Nodes convert on all cores, straight into the
/// node table; the first node of a name wins.
pub fn stats_from_profile(mut profile: ProfileFile) -> Result<Stats, String> {
    let ConvertedNodes { ids, first: mut nodes, second: links } = profile.decode_nodes(convert)?;
    let mut stats = Stats::new();
    stats.id_to_string = profile.id_to_string;
    stats.has_code_traces = profile.has_trace;
    stats.steps = profile.steps.into_iter().collect();
    // Ids are sorted and unique, so a node id is found by binary search.
    let name_of = |id: i64| -> Result<&NodeName, String> {
        match ids.binary_search(&id) {
            Ok(i) => Ok(&nodes[i].name),
            Err(_) => Err(format!("refers to node id {id}, which it lacks")),
        }
    };
    let inputs: Vec<Result<Vec<Input>, String>> = links.par_iter().map(|l| resolve_inputs(l, &name_of)).collect();
    let firsts = FirstOfEachName::find(&nodes);
    for (((node, links), inputs), &first) in nodes.iter_mut().zip(links).zip(inputs).zip(&firsts.is_first) {
        if !first {
            continue;
        }
        node.inputs = inputs?;
        if let Some(error) = links.exec_error {
            return Err(error);
        }
        let allocator = crate::stats::allocations::profile_allocator(node.canonical_device);
        for (step, records) in links.allocations {
            stats.allocations.extend(records.into_iter().map(|(micros, bytes)| AllocationEvent {
                step,
                allocator,
                micros,
                bytes,
                node: node.name.clone(),
                in_use: None,
                job: "",
            }));
        }
    }
    stats.adopt(nodes, firsts);
    Ok(stats)
}

fn convert(entry: ProfileNodeEntry) -> (Node, Links) {
    let ProfileNodeEntry { node: mut record, trace, attrs, allocations, .. } = entry;
    let output_shapes = record.take_output_shapes().into_iter().map(|(slot, t)| (i64::from(slot), t.int64_values)).collect();
    let mut exec_error = None;
    let records = record.take_execs();
    let mut execs = SmallMap::default();
    execs.reserve_exact(records.len());
    let mut memory = Vec::new();
    for (step, mut exec) in records {
        let times = exec_times(exec.take_accelerator_execs()).and_then(|acc| Ok((acc, exec_times(exec.take_cpu_execs())?)));
        let (accelerator_execs, cpu_execs) = match times {
            Ok(times) => times,
            Err(e) => {
                exec_error.get_or_insert(e);
                continue;
            }
        };
        let step_record = ExecStep::from_parts(exec.run_count, exec.all_start_micros, exec.latest_end_micros, accelerator_execs, cpu_execs);
        execs.insert(step, step_record);
        if !exec.memory_execs.is_empty() {
            // A node keeps these per step, mostly one.
            memory.push((step, snug(exec.memory_execs)));
        }
    }
    let links =
        Links { input_ids: record.take_inputs().into_iter().map(|(_, id)| id).collect(), slots: record.take_src_output_index(), exec_error, allocations };
    let node = Node {
        attrs,
        name: record.name.into(),
        op: symbol(&record.op),
        op_types: record.op_types.iter().map(|t| symbol(t)).collect(),
        shape: record.shape,
        output_shapes,
        inputs: Vec::new(),
        float_ops: record.float_ops,
        // A profile node always has a call stack, possibly empty.
        trace: Some(trace),
        canonical_device: symbol(&record.canonical_device),
        execs,
        memory: memory.into_iter().collect(),
        // Derived from `output_shapes` if FLOPs are estimated.
        static_output_shapes: Vec::new(),
        runtime_output_shapes: None,
    };
    (node, links)
}

/// Names each input; its shape slot is the producer's `src_output_index`
/// entry (by name, the last of equal names winning, as tfprof's map does).
fn resolve_inputs<'a>(c: &Links, name_of: &impl Fn(i64) -> Result<&'a NodeName, String>) -> Result<Vec<Input>, String> {
    let slots: Vec<(&NodeName, i64)> = c.slots.iter().map(|&(id, slot)| Ok((name_of(id)?, i64::from(slot)))).collect::<Result<_, String>>()?;
    c.input_ids
        .iter()
        .map(|&id| {
            let name = name_of(id)?;
            let slot = slots.iter().rev().find(|(n, _)| *n == name).map_or(0, |&(_, slot)| slot);
            Ok(Input { name: name.clone(), src_output: slot, shape_slot: slot })
        })
        .collect()
}

fn exec_times(map: Vec<(String, ExecTimeRecord)>) -> Result<SmallMap<DeviceName, Vec<(i64, i64)>>, String> {
    map.into_iter()
        .map(|(dev, times)| {
            let pairs = times
                .times
                .iter()
                .map(|t| match t.int64_values[..] {
                    [start, duration, ..] => Ok((start, duration)),
                    _ => Err(format!("exec time on {dev} is not a (start, duration) pair")),
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok((symbol(&dev), snug(pairs)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::inputs::{NodeDetail, load_profile};

    /// Nodes keep their per-step records without spare room: most steps
    /// have one record of each kind, and a profile has many steps.
    #[test]
    fn per_step_records_are_snug() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata/cnn/profile");
        let stats = stats_from_profile(load_profile(&path, NodeDetail::default()).unwrap()).unwrap();
        let mut records = 0;
        for node in stats.nodes.iter().filter(|n| !n.execs.is_empty()) {
            assert_eq!(node.execs.capacity(), node.execs.len(), "{}", node.name);
            for exec in node.execs.values() {
                records += 1;
                assert_eq!(exec.spare_room(), 0, "{}", node.name);
            }
            assert_eq!(node.memory.capacity(), node.memory.len(), "{}", node.name);
            for records in node.memory.values() {
                assert_eq!(records.capacity(), records.len(), "{}", node.name);
            }
        }
        assert!(records > 100, "{records}");
    }

    /// One recorded step's values from one lookup each equal them metric by
    /// metric, on profiles with accelerator time, memory records, float ops,
    /// parameters, nodes that never ran and steps a node missed.
    #[test]
    fn a_steps_values_at_once_equal_them_one_by_one() {
        for fixture in ["cnn", "gpu_synth"] {
            let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata").join(fixture).join("profile");
            let stats = stats_from_profile(load_profile(&path, NodeDetail::default()).unwrap()).unwrap();
            let mut seen = crate::stats::Metrics::default();
            for node in &stats.nodes {
                for &step in stats.steps.iter().chain([&99]) {
                    let at_once = crate::stats::Metrics::at_step(node, step);
                    assert_eq!(at_once, crate::stats::Metrics::each(node, step), "{fixture} {} step {step}", node.name);
                    seen += at_once;
                }
            }
            // (The fixture reaches every kind of value.)
            assert!(seen.accelerator_micros > 0 || fixture == "cnn", "{fixture}");
            assert!(
                seen.cpu_micros > 0 && seen.requested_bytes > 0 && seen.output_bytes > 0 && seen.parameters > 0 && seen.float_ops > 0,
                "{fixture}: {seen:?}"
            );
        }
    }
}
