//! The op view: graph nodes grouped by op type (`tfprof_op.cc`). Nodes seen
//! only in RunMetadata form groups named after themselves.

use std::collections::BTreeMap;

use crate::stats::{NodeId, Stats};

/// An op type and its nodes, in name order.
#[derive(Debug)]
pub struct OpGroup {
    pub name: String,
    pub nodes: Vec<NodeId>,
}

/// Groups in op-name order.
pub fn build(stats: &Stats) -> Vec<OpGroup> {
    let mut groups: BTreeMap<&str, Vec<NodeId>> = BTreeMap::new();
    for id in stats.ids_by_name() {
        groups.entry(stats.nodes[id].op).or_default().push(id);
    }
    groups.into_iter().map(|(name, nodes)| OpGroup { name: name.to_owned(), nodes }).collect()
}
