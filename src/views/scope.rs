//! The scope view: nodes arranged by name, like a file system
//! (`tfprof_scope.cc`). Every `a/b` prefix that is not itself a node becomes a
//! synthetic parent.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{Name, ROOT_NAME, Tree, TreeNode};
use crate::stats::Stats;

/// Op type tfprof gives synthetic scope parents (and the root).
pub const SCOPE_PARENT_TYPE: &str = "_kTFScopeParent";

pub fn build(stats: &Stats) -> Tree {
    let mut tree = Tree::new(ROOT_NAME, SCOPE_PARENT_TYPE);
    // (parent, path component) → tree node; every prefix of a name that ends
    // before a `/` is a node, created by the first name that has it and
    // sharing that name's text.
    let mut index: FxHashMap<(usize, &str), usize> = FxHashMap::default();
    // Sized up front, as growing copies them: real graphs have about a third
    // more scopes than nodes, and room never used costs address space only.
    let expected = stats.nodes.len() + stats.nodes.len() / 2 + 1;
    tree.nodes.reserve(expected);
    index.reserve(expected);
    for (id, node) in stats.nodes.iter().enumerate() {
        let text: Arc<str> = node.name.clone();
        let mut parent = Tree::ROOT;
        let mut start = 0;
        loop {
            let end = node.name[start..].find('/').map_or(node.name.len(), |i| start + i);
            let component = &node.name[start..end];
            parent = *index.entry((parent, component)).or_insert_with(|| {
                let child = tree.nodes.len();
                tree.nodes.push(TreeNode::synthetic(Name::prefix(text.clone(), end)));
                tree.nodes[parent].children.push(child);
                child
            });
            if end == node.name.len() {
                break;
            }
            start = end + 1;
        }
        // The full name is a real node; the first definition wins.
        tree.nodes[parent].graph_node.get_or_insert(id);
    }
    // tfprof lists children in name order; siblings share everything but
    // their last component, so that order is the order of the components.
    fn component(n: &TreeNode) -> &str {
        n.name.rsplit('/').next().unwrap_or("")
    }
    for i in 0..tree.nodes.len() {
        let mut children = std::mem::take(&mut tree.nodes[i].children);
        children.sort_unstable_by(|&a, &b| component(&tree.nodes[a]).cmp(component(&tree.nodes[b])));
        tree.nodes[i].children = children;
    }
    tree
}
