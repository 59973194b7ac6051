//! Allocator activity: every allocation and free an input recorded, with
//! the node that holds the bytes. Kept only when [`Stats::keep_allocations`]
//! is set (`rtfprof memory` reads it; the views never do), so the views pay
//! nothing for it.

use super::Stats;
use super::node::NodeName;
use super::symbol::{Symbol, symbol};
use crate::inputs::run_meta::NodeStatsRecord;

/// One allocation (`bytes > 0`) or free (`bytes < 0`) in one allocator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocationEvent {
    pub step: i64,
    pub allocator: Symbol,
    /// When it happened, in the input's clock (µs).
    pub micros: i64,
    pub bytes: i64,
    /// The node whose bytes these are (empty: none known, e.g. a free of
    /// bytes allocated before the step).
    pub node: NodeName,
    /// The allocator's own count of bytes in use after the event, when the
    /// input records it (XPlane traces); RunMetadata and profiles only have
    /// the records, which are replayed.
    pub in_use: Option<i64>,
    /// The job whose clock `micros` is in, when several jobs were merged
    /// (its nodes are `job/…`); empty otherwise.
    pub job: Symbol,
}

/// One `MemoryAllocation` or `MemoryDeallocation` event, for `rtfprof
/// memory`. Its names are shared, not two strings each: a 1 GB JAX GPU
/// trace has millions (flax_cnn_nocb x3400, 3.9 M: `report` 2.01 -> 1.86 GB
/// peak RSS).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocatorEvent {
    pub step: i64,
    /// XProf's memory id: the `allocator_name` stat, or the core's
    /// `index_on_host` or `device_ordinal` (see `AllocatorKey` in
    /// `inputs::xplane::convert`).
    pub allocator: Symbol,
    pub time_ps: i128,
    /// `allocation_bytes`: positive for an allocation, negative for a free.
    pub bytes: i64,
    /// The allocator's `bytes_allocated` plus `bytes_reserved` after the
    /// event: what XProf's memory profile counts as in use.
    pub in_use: i64,
    /// The op (or function) that made the allocation: its `tf_op`, named
    /// like op events; for a free, the one whose allocation of the same step
    /// (and address) it frees, else empty.
    pub node: std::sync::Arc<str>,
}

/// The allocator tfprof's profiles keep records for: the node's GPU
/// allocators, merged and unnamed (`ExecStep::AddMemoryStats`), so they are
/// named after the node's device.
pub fn profile_allocator(canonical_device: &str) -> Symbol {
    if canonical_device.is_empty() { symbol("GPU allocators") } else { symbol(&format!("GPU allocators on {canonical_device}")) }
}

impl Stats {
    /// The name under which a node's allocations are kept: the node's own
    /// shared copy when the node is known.
    fn allocation_owner(&self, name: &str) -> NodeName {
        match self.node(name) {
            Some(node) => node.name.clone(),
            None => name.into(),
        }
    }

    /// Keeps the allocation records of one step's stats, each under the
    /// node it is for (GPU stream entries `a:a` under `a`).
    pub(super) fn add_allocation_records(&mut self, step: i64, stats: &[&NodeStatsRecord]) {
        for stat in stats {
            let owner = self.allocation_owner(super::node_name(stat));
            for allocator in &stat.allocations {
                let name = symbol(&allocator.allocator);
                self.allocations.extend(allocator.records.iter().map(|&(micros, bytes)| AllocationEvent {
                    step,
                    allocator: name,
                    micros,
                    bytes,
                    node: owner.clone(),
                    in_use: None,
                    job: "",
                }));
            }
        }
    }

    /// Keeps an XPlane trace's allocator events (in time order).
    pub fn add_allocator_events(&mut self, events: &[AllocatorEvent]) {
        const PS_PER_US: i128 = 1_000_000;
        for e in events {
            let micros = i64::try_from(e.time_ps.div_euclid(PS_PER_US)).unwrap_or(i64::MAX);
            self.add_allocation(e.step, e.allocator, micros, e.bytes, &e.node, Some(e.in_use));
        }
    }

    /// Keeps one allocation (`bytes` > 0) or free (< 0) of a trace, in time
    /// order: by `node` (a node's name, or "" for none), with the
    /// allocator's own count of bytes in use after it, if recorded.
    pub fn add_allocation(&mut self, step: i64, allocator: &str, micros: i64, bytes: i64, node: &str, in_use: Option<i64>) {
        let node = if node.is_empty() { NodeName::from("") } else { self.allocation_owner(node) };
        self.allocations.push(AllocationEvent { step, allocator: symbol(allocator), micros, bytes, node, in_use, job: "" });
    }
}
