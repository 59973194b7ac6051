//! Showing a tree view: account, re-root at `start_name_regexes`, decide what
//! to show depth-first, sort siblings, and render lines in pre-order
//! (`ShowInternal` and `PrintScope`/`PrintGraph` of `TFScope`, `TFGraph`,
//! `TFCode`). The views differ only in a few steps:
//! - graph: an unaccounted node passes its accounted inputs up instead of
//!   staying as their parent, and a node reached twice (a shared input) is
//!   only visited the first time;
//! - code: a node is a group of graph nodes (a [`Snapshot`]); trimmed and too
//!   deep nodes vanish with their subtrees; `account_displayed_op_only` does
//!   not apply; thresholds test totals.

use super::filter::{self, Thresholded};
use super::options::{Options, Shown};
use super::order;
use super::text::{self, GraphNodeFacts};
use crate::stats::{Metrics, Snapshot, Stats, Totals};
use crate::views::{Tree, View};

/// Per-command state over a [`Tree`]; all vectors are indexed by tree node.
pub struct TreeShow<'a> {
    stats: &'a Stats,
    tree: &'a Tree,
    opts: &'a Options,
    own: Vec<Metrics>,
    /// Scope and graph views: whether the node itself is accounted.
    own_accounted: Vec<bool>,
    totals: Vec<Totals>,
    accounted: Vec<bool>,
    /// Accounted children, then (once shown) the sorted displayed children.
    children: Vec<Vec<usize>>,
    /// Each displayed node's indentation; lines are written when rendered,
    /// in pre-order, straight into the output.
    indents: Vec<Option<usize>>,
    displayed_count: usize,
    synthetic_types: [&'static str; 1],
    view: View,
    /// Graph view only: nodes already visited by the current pass.
    visited: Vec<bool>,
    /// Code view only: each node's group of graph nodes.
    snapshots: Vec<Snapshot>,
}

impl<'a> TreeShow<'a> {
    pub fn new(stats: &'a Stats, tree: &'a Tree, opts: &'a Options, view: View) -> Self {
        let n = tree.nodes.len();
        let synthetic_types = [tree.synthetic_type];
        let (own, own_accounted) = Self::own_values(stats, tree, opts, view, &synthetic_types);
        TreeShow {
            stats,
            tree,
            opts,
            own,
            own_accounted,
            totals: vec![Totals::default(); n],
            accounted: vec![false; n],
            children: vec![Vec::new(); n],
            indents: vec![None; n],
            displayed_count: 0,
            synthetic_types,
            view,
            visited: vec![false; if view == View::Graph { n } else { 0 }],
            snapshots: if view == View::Code { vec![Snapshot::default(); n] } else { Vec::new() },
        }
    }

    /// Scope and graph views: every node's own values and whether it is
    /// accounted, computed up front on all cores (each depends on its graph
    /// node only). The code view takes snapshots while accounting.
    fn own_values(stats: &Stats, tree: &Tree, opts: &Options, view: View, synthetic_types: &[&'static str; 1]) -> (Vec<Metrics>, Vec<bool>) {
        use rayon::prelude::*;
        if view == View::Code {
            return (vec![Metrics::default(); tree.nodes.len()], Vec::new());
        }
        // Taken in node order, the order the nodes' records were allocated
        // in: the trees list nodes in name order, and reading records in that
        // order misses the cache on every one.
        let by_node: Vec<(Metrics, bool)> =
            stats.nodes.par_iter().map(|node| (Metrics::of(node, opts.step), filter::is_accounted(opts, &node.op_types))).collect();
        let synthetic = (Metrics::default(), filter::is_accounted(opts, synthetic_types));
        tree.nodes.par_iter().map(|tree_node| tree_node.graph_node.map_or(synthetic, |id| by_node[id])).unzip()
    }

    /// Graph view: marks `n` visited and says whether it was new. The scope
    /// view is a tree, so every node is new.
    fn first_visit(&mut self, n: usize) -> bool {
        match self.visited.get_mut(n) {
            Some(seen) => !std::mem::replace(seen, true),
            None => true,
        }
    }

    fn clear_visits(&mut self) {
        self.visited.iter_mut().for_each(|v| *v = false);
    }

    /// Runs the pipeline; appends the text after `Profile:\n` to `out` and
    /// returns the displayed tree.
    pub fn run(mut self, out: &mut String) -> super::Displayed {
        self.decide_shown();
        self.write_text(out, &mut |_| Ok(())).expect("keeping the text cannot fail");
        self.displayed(Tree::ROOT)
    }

    /// Runs the pipeline for its text only, appending it to `out` and
    /// handing `out` to `flush` after every window of lines (see
    /// [`super::Flush`]).
    pub fn text(mut self, out: &mut String, flush: super::Flush) -> std::io::Result<()> {
        self.decide_shown();
        self.write_text(out, flush)
    }

    fn write_text(&self, out: &mut String, flush: super::Flush) -> std::io::Result<()> {
        out.push_str(&text::legend(self.view, &self.opts.select));
        self.render(Tree::ROOT, out, flush)
    }

    /// Accounts, re-roots and decides which nodes are displayed, in what
    /// order and at which indentation.
    fn decide_shown(&mut self) {
        let tree = self.tree;
        let top = self.account(&tree.nodes[Tree::ROOT].children);
        let root = Tree::ROOT;
        for &c in &top {
            let child = self.totals[c];
            self.totals[root].add(&child);
        }
        let top = if self.opts.start_name_regexes.is_match_all() {
            top
        } else {
            self.clear_visits();
            self.search_start(&top)
        };
        self.children[root] = top;
        self.clear_visits();
        self.print(&[root], 1, 0);
    }

    fn displayed(&self, n: usize) -> super::Displayed {
        let node = &self.tree.nodes[n];
        let graph_nodes = match (self.view, node.graph_node) {
            (View::Code, _) => self.snapshots[n].graph_nodes.clone(),
            (_, Some(id)) => vec![id],
            (_, None) => Vec::new(),
        };
        super::Displayed {
            name: node.name.to_string(),
            own: self.own[n],
            totals: self.totals[n].metrics,
            definitions: if self.view == View::Code { 0 } else { self.totals[n].definition_count },
            accounted: self.accounted[n],
            graph_nodes,
            children: self.children[n].iter().map(|&c| self.displayed(c)).collect(),
            index: n,
        }
    }

    /// Only the accounting pass: every tree node's totals at `opts.step`
    /// (zero for nodes the accounting drops). Which nodes are kept depends on
    /// the account regexes only, so these are comparable across steps.
    pub fn account_totals(mut self) -> Vec<Metrics> {
        let tree = self.tree;
        let top = self.account(&tree.nodes[Tree::ROOT].children);
        let mut totals: Vec<Metrics> = self.totals.iter().map(|t| t.metrics).collect();
        totals[Tree::ROOT] = top.iter().fold(Metrics::default(), |mut acc, &c| {
            acc += totals[c];
            acc
        });
        totals
    }

    /// Post-order accounting: a node's totals are its own values plus its
    /// kept children's. Scope view: a node is kept if it is accounted or has a
    /// kept descendant. Graph view: an unaccounted node is dropped and its
    /// kept inputs are passed up to its consumer.
    fn account(&mut self, list: &[usize]) -> Vec<usize> {
        let tree = self.tree;
        let mut kept = Vec::new();
        for &n in list {
            if !self.first_visit(n) {
                continue;
            }
            let kept_children = self.account(&tree.nodes[n].children);
            self.accounted[n] = self.re_account(n);
            let keep = match self.view {
                View::Graph => self.accounted[n],
                _ => self.accounted[n] || !kept_children.is_empty(),
            };
            if !keep {
                kept.extend(kept_children);
            } else {
                let mut totals = Totals::default();
                totals.add_self(&self.own[n]);
                for &c in &kept_children {
                    totals.add(&self.totals[c]);
                }
                self.totals[n] = totals;
                self.children[n] = kept_children;
                kept.push(n);
            }
        }
        kept
    }

    fn re_account(&mut self, n: usize) -> bool {
        if self.view == View::Code {
            let snap = Snapshot::take(self.stats, &self.tree.nodes[n].attached, self.opts.step, &self.opts.account_type_regexes);
            self.own[n] = snap.own;
            let accounted = snap.accounted;
            self.snapshots[n] = snap;
            return accounted;
        }
        self.own_accounted[n]
    }

    /// Nodes matching `start_name_regexes`, searched depth-first; a match's
    /// subtree is not searched further.
    fn search_start(&mut self, list: &[usize]) -> Vec<usize> {
        let mut found = Vec::new();
        for &n in list {
            if !self.first_visit(n) {
                continue;
            }
            if self.opts.start_name_regexes.matches(&self.tree.nodes[n].name) {
                found.push(n);
            } else {
                let children = std::mem::take(&mut self.children[n]);
                found.extend(self.search_start(&children));
                self.children[n] = children;
            }
        }
        found
    }

    /// Decides what is shown below `list` and returns the displayed nodes;
    /// the children of a hidden node are lifted to its place.
    fn print(&mut self, list: &[usize], depth: i64, indent: usize) -> Vec<usize> {
        let mut shown_nodes = Vec::new();
        for &n in list {
            if !self.first_visit(n) {
                continue;
            }
            let name: &str = &self.tree.nodes[n].name;
            let descend = !filter::is_trimmed(self.opts, name) && depth <= self.opts.max_depth;
            let is_code = self.view == View::Code;
            if is_code && !descend {
                continue;
            }
            let values = if is_code { Thresholded::multi_node(&self.totals[n].metrics) } else { Thresholded::graph_node(&self.own[n], &self.totals[n]) };
            let show = filter::should_show(self.opts, name, values, depth);
            let child_indent = if show { indent + 2 } else { indent };
            let mut shown_children = Vec::new();
            if descend {
                let children = std::mem::take(&mut self.children[n]);
                shown_children = self.print(&children, depth + 1, child_indent);
                self.children[n] = children;
            }
            if !show {
                shown_nodes.extend(shown_children);
                continue;
            }
            self.sort(&mut shown_children);
            if self.opts.account_displayed_op_only && !is_code {
                let mut totals = Totals::default();
                totals.add_self(&self.own[n]);
                for &c in &shown_children {
                    totals.add(&self.totals[c]);
                }
                self.totals[n] = totals;
            }
            self.children[n] = shown_children;
            self.indents[n] = Some(indent);
            self.displayed_count += 1;
            shown_nodes.push(n);
        }
        shown_nodes
    }

    /// The checkpoint value of a shown node, in tfprof's layout; empty when
    /// there is no checkpoint or it has no such tensor.
    fn tensor_value(&self, n: usize) -> String {
        let name = &self.tree.nodes[n].name;
        match &self.stats.checkpoint {
            Some(checkpoint) if n != Tree::ROOT && checkpoint.contains(name) => match checkpoint.tensor(name) {
                Ok(tensor) => String::from_utf8_lossy(&crate::inputs::checkpoint::format_tensor_value_bytes(&tensor)).into_owned(),
                Err(e) => {
                    eprintln!("rtfprof: {e}");
                    String::new()
                }
            },
            _ => String::new(),
        }
    }

    fn sort(&self, nodes: &mut [usize]) {
        order::stable_sort(nodes, self.opts.order_by, |n| order::SortKey {
            name: &self.tree.nodes[n].name,
            totals: self.totals[n].metrics,
            // The code view's occurrence is a line's own accounted graph
            // nodes (`TFMultiGraphNode::graph_nodes`), not its subtree's.
            occurrence: (self.view == View::Code).then(|| self.snapshots[n].graph_nodes.len()),
        });
    }

    /// Appends node `n`'s line (without indentation and newline).
    fn write_line(&self, n: usize, out: &mut String) {
        let tree_node = &self.tree.nodes[n];
        if self.view == View::Code {
            let snap = &self.snapshots[n];
            text::write_code_node_line(out, &self.opts.select, &tree_node.name, snap, &self.totals[n].metrics, self.accounted[n]);
            return;
        }
        let graph_node = tree_node.graph_node.map(|id| &self.stats.nodes[id]);
        let input_shapes = match graph_node {
            Some(node) if self.opts.select.has(Shown::InputShapes) => self.stats.input_shapes(node),
            _ => Vec::new(),
        };
        let op_types = match graph_node {
            _ if !self.opts.select.has(Shown::OpTypes) => Vec::new(),
            Some(node) => node.op_types.iter().copied().collect(),
            None => self.synthetic_types.to_vec(),
        };
        let facts = GraphNodeFacts {
            name: &tree_node.name,
            shape: graph_node.map_or(&[][..], |g| &g.shape),
            device: graph_node.map_or("", |g| g.canonical_device),
            op_types,
            input_shapes: &input_shapes,
        };
        text::write_graph_node_line(out, &self.opts.select, facts, &self.own[n], &self.totals[n], self.accounted[n]);
    }

    /// Appends the lines of `root` and its displayed descendants in
    /// pre-order: the order is listed first, then the lines are formatted on
    /// all cores in chunks and appended window by window, so that only a
    /// window's chunks, not a second copy of the text, are held at a time.
    /// (With tensor values, whose errors go to stderr, in order on one core.)
    fn render(&self, root: usize, out: &mut String, flush: super::Flush) -> std::io::Result<()> {
        const CHUNK: usize = 4096;
        self.render_in_chunks(root, out, CHUNK, CHUNK * 4 * rayon::current_num_threads(), flush)
    }

    fn render_in_chunks(&self, root: usize, out: &mut String, chunk_len: usize, window: usize, flush: super::Flush) -> std::io::Result<()> {
        use rayon::prelude::*;
        let mut order = Vec::with_capacity(self.displayed_count);
        self.pre_order(root, &mut order);
        if order.len() <= chunk_len || self.opts.select.has(Shown::TensorValue) {
            order.iter().for_each(|&n| self.render_line(n, out));
            return Ok(());
        }
        for nodes in order.chunks(window) {
            let pieces: Vec<String> = nodes
                .par_chunks(chunk_len)
                .map(|chunk| {
                    let mut piece = String::with_capacity(chunk.len() * 128);
                    for (i, &n) in chunk.iter().enumerate() {
                        // Lines are in name order, their graph nodes not.
                        const AHEAD: usize = 8;
                        if let Some(id) = chunk.get(i + AHEAD).and_then(|&ahead| self.tree.nodes[ahead].graph_node) {
                            crate::cache::prefetch(&self.stats.nodes[id]);
                        }
                        self.render_line(n, &mut piece);
                    }
                    piece
                })
                .collect();
            out.reserve(pieces.iter().map(String::len).sum());
            pieces.iter().for_each(|piece| out.push_str(piece));
            flush(out)?;
        }
        Ok(())
    }

    fn pre_order(&self, n: usize, order: &mut Vec<usize>) {
        if self.indents[n].is_some() {
            order.push(n);
        }
        for &c in &self.children[n] {
            self.pre_order(c, order);
        }
    }

    /// A displayed node's line: indentation, values, newline.
    fn render_line(&self, n: usize, out: &mut String) {
        let indent = self.indents[n].expect("a displayed node");
        out.extend(std::iter::repeat_n(' ', indent));
        self.write_line(n, out);
        out.push('\n');
        if self.opts.select.has(Shown::TensorValue) && self.view != View::Code {
            out.push_str(&self.tensor_value(n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::GraphRecord;
    use crate::inputs::graph::NodeRecord;

    /// The lines are the same however they are cut into chunks and windows.
    #[test]
    fn chunked_rendering_keeps_pre_order() {
        let nodes = (0..3000).map(|i| NodeRecord { name: format!("s{}/t{}/n{i}", i % 7, i % 13), op: format!("Op{}", i % 5), ..Default::default() }).collect();
        let mut stats = Stats::new();
        stats.add_graph(GraphRecord { nodes, ..Default::default() });
        let opts = Options { max_depth: 100, ..Options::default() };
        let tree = crate::views::scope::build(&stats);
        let text = |chunk_len, window| {
            let mut shown = TreeShow::new(&stats, &tree, &opts, View::Scope);
            shown.decide_shown();
            let (mut out, mut flushed) = (String::new(), String::new());
            let mut flush = |out: &mut String| {
                flushed.push_str(out);
                out.clear();
                Ok(())
            };
            shown.render_in_chunks(Tree::ROOT, &mut out, chunk_len, window, &mut flush).unwrap();
            flushed + &out
        };
        let whole = text(usize::MAX, usize::MAX);
        assert_eq!(whole.lines().count(), 3000 + 7 + 7 * 13 + 1);
        for (chunk_len, window) in [(1, 1), (7, 7), (100, 250), (1000, 3000), (4096, 4096)] {
            assert_eq!(text(chunk_len, window), whole, "chunks of {chunk_len}, windows of {window}");
        }
    }
}
