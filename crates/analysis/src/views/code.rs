//! The code view: nodes are Python call-stack lines from the op log's code
//! traces (`tfprof_code.cc`). A graph node hangs under the line that created
//! it; gradient nodes hang under a `(gradient)` copy of their forward op's
//! call stack.

use std::collections::{BTreeMap, HashMap};

use rustc_hash::FxHashMap;

use super::{ROOT_NAME, Tree, TreeNode};
use crate::proto::tensorflow::tfprof::code_def::Trace;
use crate::stats::{NodeId, Stats};

const GRADIENT_SUFFIX: &str = " (gradient)";

/// The tree, plus the number of gradient forward names without a traced
/// forward node (tfprof reports them on stderr).
pub struct CodeTree {
    pub tree: Tree,
    pub unaccounted_gradients: usize,
}

/// `file.py:42:function`, with the basename of the file and long function
/// names cut to 17 characters plus `...`.
pub fn trace_name(stats: &Stats, trace: &Trace) -> String {
    let file = stats.id_to_string.get(&trace.file_id).map_or("", String::as_str);
    let function = stats.id_to_string.get(&trace.function_id).map_or("", String::as_str);
    let base = file.rsplit('/').next().unwrap_or(file);
    let function = if function.len() < 20 { function.to_owned() } else { format!("{}...", truncate(function, 17)) };
    format!("{base}:{}:{function}", trace.lineno)
}

/// The first `n` bytes of `s` (tfprof cuts bytes, not characters), never
/// splitting a UTF-8 character.
fn truncate(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// For `…gradients/<forward>_grad/…`, the forward op's name.
fn gradient_of(name: &str) -> Option<&str> {
    let prefix = name.find("gradients/")?;
    let suffix = name.find("_grad/")?;
    let start = prefix + "gradients/".len();
    match suffix.checked_sub(start) {
        Some(0) => None,
        Some(len) => Some(&name[start..start + len]),
        // `_grad/` before the end of `gradients/`: tfprof's unsigned length
        // wraps around and it takes the rest of the name.
        None => Some(&name[start..]),
    }
}

struct Builder<'s> {
    stats: &'s Stats,
    tree: Tree,
    /// (file id, line, function id) of a trace → its display name's id.
    name_of_trace: FxHashMap<(i64, i32, i64), u32>,
    /// Display name → id; traces that display alike share one (tfprof keys
    /// children by the displayed name).
    name_ids: FxHashMap<String, u32>,
    names: Vec<String>,
    /// (parent, name id, gradient copy) → child.
    index: FxHashMap<(usize, u32, bool), usize>,
}

impl Builder<'_> {
    fn name_id(&mut self, trace: &Trace) -> u32 {
        let key = (trace.file_id, trace.lineno, trace.function_id);
        if let Some(&id) = self.name_of_trace.get(&key) {
            return id;
        }
        let name = trace_name(self.stats, trace);
        let next = self.names.len() as u32;
        let id = *self.name_ids.entry(name.clone()).or_insert(next);
        if id == next {
            self.names.push(name);
        }
        self.name_of_trace.insert(key, id);
        id
    }

    /// Creates the path for `traces` and returns its leaf; `gradient` paths
    /// get the ` (gradient)` suffix.
    fn path(&mut self, traces: &[Trace], gradient: bool) -> usize {
        let mut at = Tree::ROOT;
        for trace in traces {
            let name = self.name_id(trace);
            at = match self.index.get(&(at, name, gradient)) {
                Some(&child) => child,
                None => {
                    let child = self.tree.nodes.len();
                    let mut text = self.names[name as usize].clone();
                    if gradient {
                        text.push_str(GRADIENT_SUFFIX);
                    }
                    self.tree.nodes.push(TreeNode { trace: Some(Box::new(*trace)), ..TreeNode::synthetic(text) });
                    self.tree.nodes[at].children.push(child);
                    self.index.insert((at, name, gradient), child);
                    child
                }
            };
        }
        at
    }
}

pub fn build(stats: &Stats) -> CodeTree {
    let mut b = Builder {
        stats,
        tree: Tree::new(ROOT_NAME, ""),
        name_of_trace: FxHashMap::default(),
        name_ids: FxHashMap::default(),
        names: Vec::new(),
        index: FxHashMap::default(),
    };
    let mut forward: HashMap<&str, NodeId> = HashMap::new();
    let mut gradients: BTreeMap<&str, Vec<NodeId>> = BTreeMap::new();
    for id in stats.ids_by_name() {
        let node = &stats.nodes[id];
        let Some(trace) = node.trace.as_ref().filter(|t| !t.traces.is_empty()) else { continue };
        if let Some(forward_name) = gradient_of(&node.name) {
            gradients.entry(forward_name).or_default().push(id);
            continue;
        }
        forward.insert(&node.name, id);
        let leaf = b.path(&trace.traces, false);
        b.tree.nodes[leaf].attached.push(id);
    }
    let mut unaccounted_gradients = 0;
    for (forward_name, grads) in gradients {
        let Some(&fwd) = forward.get(forward_name) else {
            unaccounted_gradients += 1;
            continue;
        };
        let traces = &stats.nodes[fwd].trace.as_ref().expect("forward nodes are traced").traces;
        let leaf = b.path(traces, true);
        b.tree.nodes[leaf].attached.extend(grads);
    }
    for node in &mut b.tree.nodes {
        node.attached.sort_unstable_by(|&x, &y| stats.nodes[x].name.cmp(&stats.nodes[y].name));
        node.attached.dedup();
    }
    CodeTree { tree: b.tree, unaccounted_gradients }
}

#[cfg(test)]
mod tests {
    use super::gradient_of;

    #[test]
    fn gradient_names_map_to_forward_ops() {
        assert_eq!(gradient_of("gradients/conv1/Conv2D_grad/Conv2DBackpropFilter"), Some("conv1/Conv2D"));
        assert_eq!(gradient_of("train/gradients/dense/MatMul_grad/MatMul_1"), Some("dense/MatMul"));
        assert_eq!(gradient_of("gradients/_grad/x"), None);
        assert_eq!(gradient_of("a_grad/b/gradients/c"), Some("c"));
        assert_eq!(gradient_of("dense/MatMul"), None);
    }
}
