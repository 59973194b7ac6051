//! Allocator activity: every allocation and free an input recorded, with
//! the node that holds the bytes. Kept only when [`Stats::keep_allocations`]
//! is set (`rtfprof memory` reads it; the views never do), so the views pay
//! nothing for it.

use super::Stats;
use super::node::NodeName;
use super::symbol::{Symbol, symbol};
use crate::stats::records::NodeStatsRecord;

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

    /// Keeps an XPlane trace's allocator events (in time order), made by
    /// its importer: moved, not copied (a 1 GB JAX GPU trace has millions,
    /// flax_cnn_nocb x3400 3.9 M; a copy of them beside the importer's
    /// was 300 MB of `rtfprof memory`'s peak), their nodes' names shared
    /// with the nodes'.
    pub fn add_allocator_events(&mut self, mut events: Vec<AllocationEvent>) {
        for e in &mut events {
            if !e.node.is_empty() {
                e.node = self.allocation_owner(&e.node);
            }
        }
        if self.allocations.is_empty() {
            self.allocations = events;
        } else {
            self.allocations.append(&mut events);
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
