//! The scope view: nodes arranged by name, like a file system
//! (`tfprof_scope.cc`). Every `a/b` prefix that is not itself a node becomes a
//! synthetic parent.

use std::cmp::Ordering;

use rayon::prelude::*;

use super::{Name, ROOT_NAME, Tree, TreeNode};
use crate::cache::prefetch;
use crate::stats::Stats;

/// Op type tfprof gives synthetic scope parents (and the root).
pub const SCOPE_PARENT_TYPE: &str = "_kTFScopeParent";

/// Builds the tree from the names in `scope_order`: that order is the
/// tree's pre-order with siblings in tfprof's name order, so each name only
/// extends the path of the one before and no scope is ever looked up (on a
/// large graph, every lookup in a table of scopes is a cache miss).
pub fn build(stats: &Stats) -> Tree {
    let mut tree = Tree::new(ROOT_NAME, SCOPE_PARENT_TYPE);
    // The names themselves are sorted, not node ids: comparing two ids
    // would read each node for its name before reading the name.
    let mut order: Vec<(&str, usize)> = stats.nodes.par_iter().enumerate().map(|(id, node)| (&*node.name, id)).collect();
    // Equal names (not in a Stats, but cheap to settle): the first wins.
    order.par_sort_unstable_by(|a, b| scope_order(a.0, b.0).then(a.1.cmp(&b.1)));
    // Real graphs have about a third more scopes than nodes; room never used
    // costs address space only.
    tree.nodes.reserve(stats.nodes.len() + stats.nodes.len() / 2 + 1);
    // The previous name's path: (tree node, end of its component in the name).
    let mut path: Vec<(usize, usize)> = Vec::new();
    let mut previous: &str = "";
    for (i, &(name, id)) in order.iter().enumerate() {
        // Each name takes its node's shared copy, a cache miss in name order.
        const AHEAD: usize = 8;
        if let Some(&(_, ahead)) = order.get(i + AHEAD) {
            prefetch(&stats.nodes[ahead].name);
        }
        let common = common_prefix_len(previous.as_bytes(), name.as_bytes());
        while let Some(&(_, end)) = path.last() {
            // Each entry ends a component of the previous name; it is shared
            // if it ends inside the common bytes, or where one of this
            // name's ends.
            if end < common || (end == common && ends_component(name, end)) {
                break;
            }
            path.pop();
        }
        previous = name;
        let mut start = match path.last() {
            Some(&(_, end)) => (end < name.len()).then_some(end + 1),
            None => Some(0),
        };
        while let Some(from) = start {
            let parent = path.last().map_or(Tree::ROOT, |&(n, _)| n);
            let end = name[from..].find('/').map_or(name.len(), |i| from + i);
            let child = tree.nodes.len();
            tree.nodes.push(TreeNode::synthetic(Name::prefix(stats.nodes[id].name.clone(), end)));
            tree.nodes[parent].children.push(child);
            path.push((child, end));
            start = (end < name.len()).then_some(end + 1);
        }
        // The full name is a real node; the first definition wins.
        let &(node, _) = path.last().expect("every name has a component");
        tree.nodes[node].graph_node.get_or_insert(id);
    }
    tree
}

/// Names in the order of their `/`-separated components, each compared as
/// bytes (tfprof orders siblings by name, and siblings differ only in their
/// last component). This is byte order with `/` ranked below every other
/// byte, so a scope's names are contiguous and follow the scope's own name.
fn scope_order(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let at = common_prefix_len(a, b);
    let rank = |byte: u8| if byte == b'/' { 0 } else { u16::from(byte) + 1 };
    match (a.get(at), b.get(at)) {
        (Some(&x), Some(&y)) => rank(x).cmp(&rank(y)),
        _ => a.len().cmp(&b.len()),
    }
}

/// Compares eight bytes at a time: scoped names share long prefixes.
fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let mut at = 0;
    while at + 8 <= len {
        let x = u64::from_le_bytes(a[at..at + 8].try_into().expect("8 bytes"));
        let y = u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        if x != y {
            return at + ((x ^ y).trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + a[at..len].iter().zip(&b[at..len]).take_while(|(x, y)| x == y).count()
}

/// Whether a component of `name` ends at byte `at` (a `/` or the end).
fn ends_component(name: &str, at: usize) -> bool {
    name.as_bytes().get(at).is_none_or(|&byte| byte == b'/')
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::inputs::GraphRecord;
    use crate::inputs::graph::NodeRecord;

    /// A scope tree the plain way: a trie of components, siblings in byte order.
    #[derive(Default)]
    struct Trie {
        node: Option<usize>,
        children: BTreeMap<String, Trie>,
    }

    /// (name, graph node, child count) of every node below `trie`, in
    /// pre-order; `scope` is the name of `trie` (`None` for the root).
    fn pre_order_of_trie(trie: &Trie, scope: Option<&str>, out: &mut Vec<(String, Option<usize>, usize)>) {
        for (component, child) in &trie.children {
            let name = scope.map_or_else(|| component.clone(), |scope| format!("{scope}/{component}"));
            out.push((name.clone(), child.node, child.children.len()));
            pre_order_of_trie(child, Some(&name), out);
        }
    }

    fn pre_order_of_tree(tree: &Tree, n: usize, out: &mut Vec<(String, Option<usize>, usize)>) {
        for &c in &tree.nodes[n].children {
            let node = &tree.nodes[c];
            out.push((node.name.to_string(), node.graph_node, node.children.len()));
            pre_order_of_tree(tree, c, out);
        }
    }

    /// Names from an alphabet with bytes on both sides of `/`, empty
    /// components and repeated prefixes, in random order.
    #[test]
    fn the_tree_is_the_trie_of_components_in_name_order() {
        let mut rng = crate::test_random::XorShift::new(0x9e37_79b9_7f4a_7c15);
        let mut next = |below: u64| rng.below(below);
        for round in 0..200 {
            let alphabet = [b'a', b'b', b'-', b'.', b'/', b'0', b'~'];
            let names: Vec<String> =
                (0..1 + next(60)).map(|_| (0..next(9)).map(|_| alphabet[next(alphabet.len() as u64) as usize] as char).collect()).collect();
            let mut stats = Stats::new();
            stats.add_graph(GraphRecord {
                nodes: names.iter().map(|name| NodeRecord { name: name.clone(), op: "Op".into(), ..Default::default() }).collect(),
                ..Default::default()
            });
            let mut trie = Trie::default();
            for (id, node) in stats.nodes.iter().enumerate() {
                let mut at = &mut trie;
                for component in node.name.split('/') {
                    at = at.children.entry(component.to_owned()).or_default();
                }
                at.node.get_or_insert(id);
            }
            let (mut expected, mut got) = (Vec::new(), Vec::new());
            pre_order_of_trie(&trie, None, &mut expected);
            pre_order_of_tree(&build(&stats), Tree::ROOT, &mut got);
            assert_eq!(got, expected, "round {round}: names {names:?}");
        }
    }
}
