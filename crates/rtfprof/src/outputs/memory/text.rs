//! The text of `rtfprof memory`, in tfprof's style: a `Doc:` section, then
//! for each step and allocator the peak line and the live nodes at the
//! peak as a scope tree (`name (own/total)`, `--` where a scope is no node
//! of its own), children by bytes. The view options apply as in the scope
//! view: `--max_depth` (the root is depth 1), `--min_bytes` (on a node's
//! total live bytes), `--start_name_regexes`, `--trim_name_regexes`,
//! `--show_name_regexes` and `--hide_name_regexes` (a hidden node's children
//! take its place).

use std::collections::HashMap;
use std::fmt::Write;

use crate::memory::programs::{Heap, ProgramMemory};
use crate::memory::{AllocatorMemory, LiveNode, MemoryProfile};
use crate::show::format;
use crate::show::options::Options;
use crate::views::ROOT_NAME;

const DOC: &str = "\nDoc:\nmemory: Each allocator's bytes in use over a step and their peak. The nodes holding live bytes at the peak are organized by their names, which is hierarchical like filesystem.\nlive bytes: The bytes a node allocated and had not freed when the allocator's bytes in use peaked; (untracked): bytes in use that no node of the step holds.\n\nProfile:\n";

/// The whole text for `profile`.
pub fn render(profile: &MemoryProfile, opts: &Options) -> String {
    let mut out = String::from(DOC);
    for step in &profile.steps {
        if step.allocators.is_empty() {
            let _ = writeln!(out, "step {}: no allocation records", step.step);
            continue;
        }
        for allocator in &step.allocators {
            write_allocator(&mut out, step.step, allocator, opts);
        }
    }
    out
}

fn write_allocator(out: &mut String, step: i64, allocator: &AllocatorMemory, opts: &Options) {
    let source = if allocator.measured {
        format!("the allocator's bytes in use at {} events", allocator.events)
    } else {
        format!("{} allocation records replayed", allocator.events)
    };
    let _ = writeln!(
        out,
        "step {step}, allocator {}: peak {} at {} from the step's start ({source})",
        allocator.name,
        format::bytes(allocator.peak_bytes),
        format::micros(allocator.peak_micros)
    );
    out.push_str("node name | live bytes at the peak\n");
    write_tree(out, &allocator.live_at_peak, opts);
    out.push('\n');
}

/// `live` as a scope tree under the root, with the view options.
fn write_tree(out: &mut String, live: &[LiveNode], opts: &Options) {
    let tree = Tree::build(live);
    let shown = Shown { tree: &tree, opts };
    // The root is depth 1 and always shown.
    let children = shown.print(&shown.start(&tree.nodes[0].children), 2, 2);
    shown.write_line(out, 0, 0);
    shown.write_children(out, &children);
}

/// The buffers listed per program, largest first.
pub const BUFFER_ROWS: usize = 10;

/// The programs section of `rtfprof memory` (empty without programs): per
/// program, its peak, its live buffers by JAX op as a scope tree (with the
/// view options), and its largest buffers. `allocations`: whether the
/// inputs had allocator events (the section says how the two relate).
pub fn render_programs(programs: &[ProgramMemory], allocations: bool, opts: &Options) -> String {
    if programs.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nXLA programs: what each program that ran holds at its own peak, by XLA's buffer assignment (as XProf's memory_viewer).\n");
    out.push_str(if allocations {
        "The allocator's events above name no op: a JAX program's bytes there are (untracked). "
    } else {
        "The trace has no allocator events. "
    });
    out.push_str("The trace keeps each program's buffer assignment, which names the instruction and JAX op (op_name) of every buffer: the program's parameters, outputs and constants, held for the whole run, and its temporaries at the peak of XLA's heap simulation. These are compile-time numbers, the same in every run.");
    if allocations {
        out.push_str(" XLA asks the allocator for a run's temporaries as one block, and the allocator also holds arrays outside the running program, so its (untracked) bytes are not split by op here.");
    }
    out.push_str("\n\n");
    for program in programs {
        let job = if program.job.is_empty() { String::new() } else { format!("job {}, ", program.job) };
        // (Program ids are unsigned: TPU programs use all 64 bits.)
        let name = format!("{job}program {} ({})", program.module, program.program_id as u64);
        match &program.heap {
            Ok(heap) => write_program(&mut out, &name, &program.module, heap, opts),
            Err(why) => {
                let _ = writeln!(out, "{name}: no memory: {why}\n");
            }
        }
    }
    out
}

fn write_program(out: &mut String, name: &str, module: &str, heap: &Heap, opts: &Options) {
    let unpadded = if heap.peak_unpadded_bytes != heap.peak_bytes { format!(" (unpadded {})", format::bytes(heap.peak_unpadded_bytes)) } else { String::new() };
    let at = match heap.curve.get(heap.peak_event) {
        Some(point) if heap.curve.len() > 1 => format!(" at {} (heap simulator event {} of {})", point.instruction, heap.peak_event, heap.curve.len() - 1),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "{name}: peak {}{unpadded}{at}: {} held for the whole run (parameters {}, outputs {}), {} of temporaries; all allocations {}",
        format::bytes(heap.peak_bytes),
        format::bytes(heap.indefinite_bytes),
        format::bytes(heap.parameter_bytes),
        format::bytes(heap.output_bytes),
        format::bytes(heap.peak_bytes.wrapping_sub(heap.indefinite_bytes)),
        format::bytes(heap.total_allocation_bytes),
    );
    out.push_str("node name (JAX op) | bytes at the peak\n");
    let live: Vec<LiveNode> = heap
        .live_at_peak
        .iter()
        .map(|b| LiveNode { name: if b.op_name.is_empty() { format!("{module}/{}", b.instruction) } else { b.op_name.clone() }, bytes: b.bytes })
        .collect();
    write_tree(out, &live, opts);
    let mut largest: Vec<&crate::memory::programs::Buffer> = heap.live_at_peak.iter().collect();
    largest.sort_by_key(|b| std::cmp::Reverse(b.bytes));
    let shown = largest.len().min(BUFFER_ROWS);
    let more = if largest.len() > shown { "; --output json:outfile=PATH has them all" } else { "" };
    let _ = writeln!(out, "largest buffers at the peak ({shown} of {}{more}):", largest.len());
    let mut cells = vec![["bytes", "kind", "HLO instruction", "shape", "JAX op"].map(String::from).to_vec()];
    for b in largest.into_iter().take(shown) {
        cells.push(vec![format::bytes(b.bytes), b.kind.as_str().to_owned(), b.instruction_with_index(), b.shape.clone(), b.op_name.clone()]);
    }
    let widths: Vec<usize> = (0..5).map(|c| cells.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for row in cells {
        let line: Vec<String> =
            row.iter().enumerate().map(|(c, cell)| if c == 0 { format!("{cell:>w$}", w = widths[c]) } else { format!("{cell:<w$}", w = widths[c]) }).collect();
        out.push_str("  ");
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out.push('\n');
}

/// Live nodes arranged by name scope; node 0 is the root.
struct Tree {
    nodes: Vec<ScopeNode>,
}

struct ScopeNode {
    name: String,
    /// The node's own live bytes; `None` for a scope that is no live node.
    own: Option<i64>,
    total: i64,
    children: Vec<usize>,
}

impl Tree {
    fn build(live_at_peak: &[LiveNode]) -> Tree {
        let mut tree = Tree { nodes: vec![ScopeNode { name: ROOT_NAME.to_owned(), own: None, total: 0, children: Vec::new() }] };
        let mut index: HashMap<String, usize> = HashMap::new();
        for live in live_at_peak {
            tree.nodes[0].total = tree.nodes[0].total.wrapping_add(live.bytes);
            let mut parent = 0;
            let ends = live.name.match_indices('/').map(|(i, _)| i).chain([live.name.len()]);
            for end in ends {
                let prefix = &live.name[..end];
                let at = match index.get(prefix) {
                    Some(&at) => at,
                    None => {
                        let at = tree.nodes.len();
                        tree.nodes.push(ScopeNode { name: prefix.to_owned(), own: None, total: 0, children: Vec::new() });
                        tree.nodes[parent].children.push(at);
                        index.insert(prefix.to_owned(), at);
                        at
                    }
                };
                tree.nodes[at].total = tree.nodes[at].total.wrapping_add(live.bytes);
                parent = at;
            }
            let own = &mut tree.nodes[parent].own;
            *own = Some(own.unwrap_or(0).wrapping_add(live.bytes));
        }
        tree
    }
}

/// A tree with the options it is shown with.
struct Shown<'a> {
    tree: &'a Tree,
    opts: &'a Options,
}

/// A displayed node and its displayed children.
struct Displayed {
    node: usize,
    indent: usize,
    children: Vec<Displayed>,
}

impl Shown<'_> {
    /// The nodes the tree starts at: matches of `--start_name_regexes`,
    /// searched depth-first (a match's subtree is not searched further).
    fn start(&self, list: &[usize]) -> Vec<usize> {
        if self.opts.start_name_regexes.is_match_all() {
            return list.to_vec();
        }
        let mut found = Vec::new();
        for &n in list {
            if self.opts.start_name_regexes.matches(&self.tree.nodes[n].name) {
                found.push(n);
            } else {
                found.extend(self.start(&self.tree.nodes[n].children));
            }
        }
        found
    }

    /// Decides what is displayed below `list` (at `depth`), sorted by
    /// bytes; a hidden node's displayed children take its place.
    fn print(&self, list: &[usize], depth: i64, indent: usize) -> Vec<Displayed> {
        let opts = self.opts;
        let mut shown = Vec::new();
        for &n in list {
            let node = &self.tree.nodes[n];
            let descend = !opts.trim_name_regexes.matches(&node.name) && depth <= opts.max_depth;
            let show = node.total >= opts.min_bytes
                && depth <= opts.max_depth
                && (opts.show_name_regexes.is_match_all() || opts.show_name_regexes.matches(&node.name))
                && !opts.hide_name_regexes.matches(&node.name);
            let children = if descend { self.print(&node.children, depth + 1, if show { indent + 2 } else { indent }) } else { Vec::new() };
            if show {
                shown.push(Displayed { node: n, indent, children });
            } else {
                shown.extend(children);
            }
        }
        shown.sort_by(|a, b| {
            let (a, b) = (&self.tree.nodes[a.node], &self.tree.nodes[b.node]);
            b.total.cmp(&a.total).then_with(|| a.name.cmp(&b.name))
        });
        shown
    }

    fn write_children(&self, out: &mut String, children: &[Displayed]) {
        for child in children {
            self.write_line(out, child.node, child.indent);
            self.write_children(out, &child.children);
        }
    }

    fn write_line(&self, out: &mut String, n: usize, indent: usize) {
        let node = &self.tree.nodes[n];
        let own = node.own.map_or_else(|| "--".to_owned(), format::bytes);
        let _ = writeln!(out, "{:indent$}{} ({own}/{})", "", node.name, format::bytes(node.total));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::show::options::RegexList;

    fn allocator(live: &[(&str, i64)]) -> AllocatorMemory {
        AllocatorMemory {
            name: "cpu".into(),
            start_micros: 0,
            peak_bytes: live.iter().map(|l| l.1).sum(),
            peak_micros: 1500,
            live_at_peak: live.iter().map(|&(name, bytes)| LiveNode { name: name.into(), bytes }).collect(),
            curve: Vec::new(),
            measured: false,
            events: 9,
        }
    }

    fn tree_text(live: &[(&str, i64)], opts: &Options) -> String {
        let mut out = String::new();
        write_allocator(&mut out, 0, &allocator(live), opts);
        out
    }

    const LIVE: &[(&str, i64)] = &[("a/x", 3000), ("a", 100), ("b/c/d", 5000), ("a/y", 200)];

    #[test]
    fn live_nodes_form_a_scope_tree_by_bytes() {
        let text = tree_text(LIVE, &Options::default());
        assert_eq!(
            text,
            "step 0, allocator cpu: peak 8.30KB at 1.50ms from the step's start (9 allocation records replayed)\n\
             node name | live bytes at the peak\n\
             _TFProfRoot (--/8.30KB)\n  b (--/5.00KB)\n    b/c (--/5.00KB)\n      b/c/d (5.00KB/5.00KB)\n  a (100B/3.30KB)\n    a/x (3.00KB/3.00KB)\n    a/y (200B/200B)\n\n"
        );
    }

    #[test]
    fn view_options_shape_the_tree() {
        let body = |opts: Options| tree_text(LIVE, &opts).lines().skip(2).filter(|l| !l.is_empty()).map(str::to_owned).collect::<Vec<_>>();
        let list = |flag, v| RegexList::parse(flag, v).unwrap();
        assert_eq!(body(Options { max_depth: 2, ..Options::default() }), ["_TFProfRoot (--/8.30KB)", "  b (--/5.00KB)", "  a (100B/3.30KB)"]);
        assert_eq!(
            body(Options { min_bytes: 3000, ..Options::default() }),
            [
                "_TFProfRoot (--/8.30KB)",
                "  b (--/5.00KB)",
                "    b/c (--/5.00KB)",
                "      b/c/d (5.00KB/5.00KB)",
                "  a (100B/3.30KB)",
                "    a/x (3.00KB/3.00KB)"
            ]
        );
        assert_eq!(
            body(Options { hide_name_regexes: list("hide_name_regexes", "b,b/c"), ..Options::default() }),
            ["_TFProfRoot (--/8.30KB)", "  b/c/d (5.00KB/5.00KB)", "  a (100B/3.30KB)", "    a/x (3.00KB/3.00KB)", "    a/y (200B/200B)"]
        );
        assert_eq!(
            body(Options { start_name_regexes: list("start_name_regexes", "a/.*"), ..Options::default() }),
            ["_TFProfRoot (--/8.30KB)", "  a/x (3.00KB/3.00KB)", "  a/y (200B/200B)"]
        );
        assert_eq!(
            body(Options { trim_name_regexes: list("trim_name_regexes", "b"), ..Options::default() }),
            ["_TFProfRoot (--/8.30KB)", "  b (--/5.00KB)", "  a (100B/3.30KB)", "    a/x (3.00KB/3.00KB)", "    a/y (200B/200B)"]
        );
        assert_eq!(
            body(Options { show_name_regexes: list("show_name_regexes", ".*/.*"), ..Options::default() }),
            ["_TFProfRoot (--/8.30KB)", "  b/c (--/5.00KB)", "    b/c/d (5.00KB/5.00KB)", "  a/x (3.00KB/3.00KB)", "  a/y (200B/200B)"]
        );
    }
}
