//! The graph view: each node's children are its inputs (`tfprof_graph.cc`).
//! Roots are the nodes no other node consumes; nodes reachable only through
//! cycles (while-loop back edges) have no root above them and never show.

use std::collections::HashSet;

use super::{ROOT_NAME, Tree, TreeNode};
use crate::stats::Stats;

/// Op type tfprof gives the graph view's root.
pub const GRAPH_PARENT_TYPE: &str = "_TFGraphParent";

/// Tree node `1 + id` shows stats node `id`; node 0 is the root.
pub fn build(stats: &Stats) -> Tree {
    let mut tree = Tree::new(ROOT_NAME, GRAPH_PARENT_TYPE);
    tree.nodes.reserve(stats.nodes.len());
    let mut consumed: HashSet<&str> = HashSet::new();
    for (id, node) in stats.nodes.iter().enumerate() {
        let children = node
            .inputs
            .iter()
            .filter_map(|input| {
                consumed.insert(&*input.name);
                stats.node_id(&input.name).map(|producer| producer + 1)
            })
            .collect();
        tree.nodes.push(TreeNode { children, ..TreeNode::real(node.name.clone(), id) });
    }
    tree.nodes[Tree::ROOT].children = stats.ids_by_name().into_iter().filter(|&id| !consumed.contains(&*stats.nodes[id].name)).map(|id| id + 1).collect();
    tree
}
