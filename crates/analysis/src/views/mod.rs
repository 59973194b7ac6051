//! Views: thin builders that arrange nodes into a tree (scope, graph, code) or
//! a list (op). Filtering, ordering and formatting live in [`crate::show`].

pub mod code;
pub(crate) mod graph;
pub(crate) mod op;
pub(crate) mod scope;

use crate::stats::NodeId;

pub use crate::load::View;

/// The name tfprof gives the root of every tree.
pub const ROOT_NAME: &str = "_TFProfRoot";

/// A tree of display nodes; index 0 is the root.
#[derive(Debug, Default)]
pub struct Tree {
    pub nodes: Vec<TreeNode>,
    /// Op type of synthetic nodes (scope parents, the root), which
    /// `account_type_regexes` can match.
    pub synthetic_type: &'static str,
}

/// A tree node's name. Scope parents are prefixes of a node's name, so they
/// share its text instead of copying it (a deeply scoped name would
/// otherwise cost memory quadratic in its depth).
#[derive(Clone, Debug)]
pub struct Name {
    text: std::sync::Arc<str>,
    end: usize,
}

impl Name {
    /// The first `end` bytes of `text` (a prefix ending before a `/`).
    pub fn prefix(text: std::sync::Arc<str>, end: usize) -> Name {
        Name { text, end }
    }
}

impl From<std::sync::Arc<str>> for Name {
    fn from(text: std::sync::Arc<str>) -> Name {
        let end = text.len();
        Name { text, end }
    }
}

impl From<String> for Name {
    fn from(text: String) -> Name {
        let end = text.len();
        Name { text: text.into(), end }
    }
}

impl std::ops::Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text[..self.end]
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

#[derive(Debug)]
pub struct TreeNode {
    pub name: Name,
    /// The graph node shown here (scope, graph); `None` for synthetic nodes.
    pub graph_node: Option<NodeId>,
    /// Code view: the graph nodes created by this line, in name order.
    pub attached: Vec<NodeId>,
    /// Code view: the call-stack entry this node stands for.
    /// (Boxed: most trees are not code trees and leave it empty.)
    pub trace: Option<Box<crate::proto::tensorflow::tfprof::code_def::Trace>>,
    pub children: Vec<usize>,
}

impl TreeNode {
    pub fn real(name: impl Into<Name>, id: NodeId) -> TreeNode {
        TreeNode { name: name.into(), graph_node: Some(id), attached: Vec::new(), trace: None, children: Vec::new() }
    }

    pub fn synthetic(name: impl Into<Name>) -> TreeNode {
        TreeNode { name: name.into(), graph_node: None, attached: Vec::new(), trace: None, children: Vec::new() }
    }
}

impl Tree {
    pub const ROOT: usize = 0;

    /// A tree holding only its root.
    pub fn new(root_name: &str, synthetic_type: &'static str) -> Tree {
        Tree { nodes: vec![TreeNode::synthetic(root_name.to_owned())], synthetic_type }
    }
}
