//! Allocator events (`MemoryAllocation`/`MemoryDeallocation` on the
//! host), read as XProf's `memory_profile` reads them: kept compact while
//! the lines are read, then replayed in time order into the nodes' bytes
//! columns ([`memory_totals`]) and, when asked for, the
//! [`AllocationEvent`]s of `rtfprof memory`.

use std::collections::{BTreeMap, HashMap, HashSet};

use rustc_hash::FxHashMap;

use super::PS_PER_US;
use super::steps::StepLookup;
use crate::inputs::xplane::names::parse_op;
use crate::stats::MemoryTotal;
use crate::stats::allocations::AllocationEvent;

/// Which allocator an event is of: XProf's memory id, the last of the
/// event's `index_on_host`, `device_ordinal` and `allocator_name` stats
/// (`xplane_to_memory_profile.cc`). TPU traces name no allocator but their
/// core's index; merged, four cores' counters made one meaningless curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum AllocatorKey<'a> {
    Name(&'a str),
    Index(i64),
}

/// An event without allocator stats: XProf's empty memory id.
impl Default for AllocatorKey<'_> {
    fn default() -> Self {
        AllocatorKey::Name("")
    }
}

impl std::fmt::Display for AllocatorKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllocatorKey::Name(name) => f.write_str(name),
            AllocatorKey::Index(index) => write!(f, "{index}"),
        }
    }
}

/// One allocator event: 64 bytes, its allocator and `tf_op` by number in
/// [`MemoryNames`] (a JAX GPU trace has an allocator event for every two
/// op events: names kept in each, 96 bytes, and the copy that puts them in
/// time order were most of the 2.1 GB peak of `scope` on the 1.06 GB
/// flax_cnn_nocb x3400 trace, bench/README.md).
#[derive(Clone, Copy, Debug)]
pub(super) struct MemoryEvent {
    pub(super) time_ps: i128,
    pub(super) addr: i64,
    pub(super) requested: i64,
    pub(super) bytes: i64,
    /// `bytes_allocated` + `bytes_reserved` after the event.
    pub(super) in_use: i64,
    pub(super) allocator: u32,
    pub(super) tf_op: u32,
    pub(super) allocation: bool,
}

const _: () = assert!(std::mem::size_of::<MemoryEvent>() == 64);

/// The allocators and `tf_op`s of [`MemoryEvent`]s, by number.
#[derive(Default)]
pub(super) struct MemoryNames<'a> {
    pub(super) allocators: Vec<AllocatorKey<'a>>,
    allocator_ids: FxHashMap<AllocatorKey<'a>, u32>,
    pub(super) tf_ops: Vec<&'a str>,
    tf_op_ids: FxHashMap<&'a str, u32>,
}

impl<'a> MemoryNames<'a> {
    pub(super) fn allocator(&mut self, key: AllocatorKey<'a>) -> u32 {
        *self.allocator_ids.entry(key).or_insert_with(|| {
            self.allocators.push(key);
            (self.allocators.len() - 1) as u32
        })
    }

    pub(super) fn tf_op(&mut self, tf_op: &'a str) -> u32 {
        *self.tf_op_ids.entry(tf_op).or_insert_with(|| {
            self.tf_ops.push(tf_op);
            (self.tf_ops.len() - 1) as u32
        })
    }
}

/// Replays allocator events in time order, step by step: an allocation is
/// its `tf_op`'s until the deallocation of its (allocator, address) in the
/// same step. Returns the per-node totals and how many allocations named no
/// node.
pub(super) fn memory_totals(
    events: &mut [MemoryEvent],
    names: &MemoryNames<'_>,
    step_of: impl Fn(i128) -> i64,
    nodes: &HashSet<&str>,
) -> (Vec<MemoryTotal>, u64) {
    events.sort_by_key(|e| (e.time_ps, !e.allocation));
    let known: Vec<bool> = names.tf_ops.iter().map(|t| nodes.contains(t)).collect();
    #[derive(Default)]
    struct Held {
        requested: i64,
        live: i64,
        peak: i64,
        last_ps: i128,
    }
    let mut held: BTreeMap<(i64, &str), Held> = BTreeMap::new();
    let mut live: HashMap<(i64, u32, i64), (&str, i64)> = HashMap::new();
    let mut unattributed = 0;
    for e in events.iter() {
        let step = step_of(e.time_ps);
        if e.allocation {
            if !known[e.tf_op as usize] {
                unattributed += 1;
                continue;
            }
            let tf_op = names.tf_ops[e.tf_op as usize];
            let h = held.entry((step, tf_op)).or_default();
            h.requested += e.requested;
            h.live += e.bytes;
            h.peak = h.peak.max(h.live);
            h.last_ps = e.time_ps;
            live.insert((step, e.allocator, e.addr), (tf_op, e.bytes));
        } else if let Some((node, bytes)) = live.remove(&(step, e.allocator, e.addr))
            && let Some(h) = held.get_mut(&(step, node))
        {
            h.live -= bytes;
        }
    }
    let totals = held
        .into_iter()
        .map(|((step, node), h)| MemoryTotal {
            step,
            node: node.to_owned(),
            requested_bytes: h.requested,
            peak_bytes: h.peak,
            residual_bytes: h.live,
            last_micros: i64::try_from(h.last_ps.div_euclid(PS_PER_US)).unwrap_or(i64::MAX),
        })
        .collect();
    (totals, unattributed)
}

/// The allocator events of `memory_totals`' order (time, allocations
/// first), each with its step, and with the op that holds its bytes: an
/// allocation's `tf_op`; a free's, the op whose allocation of the same step
/// (allocator and address) it frees.
pub(super) fn attribute_allocator_events(events: &[MemoryEvent], names: &MemoryNames<'_>, step_of: &StepLookup) -> Vec<AllocationEvent> {
    let allocators: Vec<crate::stats::symbol::Symbol> = names.allocators.iter().map(|a| crate::stats::symbol::symbol(&a.to_string())).collect();
    let nodes: Vec<std::sync::Arc<str>> = names.tf_ops.iter().map(|&tf_op| parse_op(tf_op).map_or(tf_op, |op| op.name).into()).collect();
    let none: std::sync::Arc<str> = "".into();
    let mut live: HashMap<(u32, i64), (i64, u32)> = HashMap::new();
    events
        .iter()
        .map(|e| {
            let step = step_of.step(e.time_ps);
            let node = if e.allocation {
                live.insert((e.allocator, e.addr), (step, e.tf_op));
                nodes[e.tf_op as usize].clone()
            } else {
                match live.remove(&(e.allocator, e.addr)) {
                    Some((allocated_in, tf_op)) if allocated_in == step => nodes[tf_op as usize].clone(),
                    _ => none.clone(),
                }
            };
            let bytes = if e.allocation { e.bytes } else { e.bytes.wrapping_neg() };
            let micros = i64::try_from(e.time_ps.div_euclid(PS_PER_US)).unwrap_or(i64::MAX);
            AllocationEvent { step, allocator: allocators[e.allocator as usize], micros, bytes, node, in_use: Some(e.in_use), job: "" }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::convert;

    /// Allocator events: their steps come from the markers, a free names
    /// the op whose allocation of the same step (and address) it frees.
    #[test]
    fn allocator_events_take_steps_and_the_allocating_op() {
        use crate::proto::tensorflow::profiler as xp;
        use prost::Message;
        let stat = |id, value| xp::XStat { metadata_id: id, value: Some(value) };
        let int = |id, v: i64| stat(id, xp::x_stat::Value::Int64Value(v));
        let text = |id, v: &str| stat(id, xp::x_stat::Value::StrValue(v.into()));
        let us = 1_000_000;
        let event = |meta, at_us: i64, dur_us: i64, stats| xp::XEvent {
            metadata_id: meta,
            duration_ps: dur_us * us,
            stats,
            data: Some(xp::x_event::Data::OffsetPs(at_us * us)),
        };
        // Stats: 1 step_num, 2 allocator_name, 3 bytes_allocated, 4 allocation_bytes, 5 addr, 6 tf_op, 7 bytes_reserved.
        let memory = |meta, at, allocator: &str, in_use, bytes, addr, op: Option<&str>| {
            let mut stats = vec![text(2, allocator), int(3, in_use), int(7, 1), int(4, bytes), int(5, addr)];
            stats.extend(op.map(|op| text(6, op)));
            event(meta, at, 0, stats)
        };
        let mut plane = xp::XPlane { id: 1, name: "/host:CPU".into(), ..Default::default() };
        for (id, name) in [(1, "train"), (2, "MemoryAllocation"), (3, "MemoryDeallocation")] {
            plane.event_metadata.insert(id, xp::XEventMetadata { id, name: name.into(), ..Default::default() });
        }
        for (id, name) in
            [(1, "step_num"), (2, "allocator_name"), (3, "bytes_allocated"), (4, "allocation_bytes"), (5, "addr"), (6, "tf_op"), (7, "bytes_reserved")]
        {
            plane.stat_metadata.insert(id, xp::XStatMetadata { id, name: name.into(), ..Default::default() });
        }
        plane.lines.push(xp::XLine {
            id: 1,
            timestamp_ns: 1000,
            events: vec![
                event(1, 0, 100, vec![int(1, 0)]),
                event(1, 100, 100, vec![int(1, 1)]),
                memory(2, 10, "gpu", 500, 100, 7, Some("x/MatMul:MatMul")),
                memory(2, 20, "gpu", 600, 100, 8, Some("y:Add")),
                memory(3, 30, "gpu", 500, 100, 7, None),
                memory(3, 120, "gpu", 400, 100, 8, None),
                memory(2, 300, "host", 64, 64, 9, None),
            ],
            ..Default::default()
        });
        let wire = xp::XSpace { planes: vec![plane], ..Default::default() }.encode_to_vec();
        let (converted, _) = convert(&wire, true).unwrap();
        type Row<'a> = (i64, &'a str, i64, i64, Option<i64>, &'a str);
        let got: Vec<Row<'_>> = converted.allocator_events.iter().map(|e| (e.step, e.allocator, e.micros, e.bytes, e.in_use, &*e.node)).collect();
        let at = |t: i64| 1 + t;
        assert_eq!(
            got,
            [
                (0, "gpu", at(10), 100, Some(501), "x/MatMul"),
                (0, "gpu", at(20), 100, Some(601), "y"),
                (0, "gpu", at(30), -100, Some(501), "x/MatMul"),
                (1, "gpu", at(120), -100, Some(401), ""),
                (2, "host", at(300), 64, Some(65), ""),
            ]
        );
        assert_eq!(converted.outside_step, Some(2));
        assert!(convert(&wire, false).unwrap().0.allocator_events.is_empty(), "kept only when asked");
    }
}
