//! Stats: ingest a GraphDef, an op log and per-step RunMetadata into one table
//! of nodes (tfprof's `TFStats`). Nodes live in a `Vec` indexed by id; names
//! map to ids through a hash map, and views walk them in name order.

pub(crate) mod account;
pub mod allocations;
pub mod device;
pub mod flops;
pub mod node;
pub mod records;
pub mod small_map;
pub mod symbol;
pub mod uncounted;

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::proto::tensorflow::tfprof::OpLogProto;
use records::{GraphRecord, NodeStatsRecord, RunMetaRecord};

pub use account::{Metrics, Snapshot, Totals};
pub use allocations::AllocationEvent;
pub use node::{ExecStep, ExecTotal, Input, MemoryTotal, Node, NodeId, NodeName};

/// The node ids of an input's own node numbers ([`ExecTotal::input_node`]),
/// kept across that input's calls of [`Stats::add_exec_totals`], so that a
/// total's name is looked up once per node, not once per total (5.5 M
/// totals, hashed on one core, in the 270 MB bench trace).
#[derive(Debug, Default)]
pub struct InputNodes(Vec<Option<NodeId>>);

/// The node a NodeExecStats is for: GPU stream entries are named like
/// `Conv2D:Conv2D`.
fn node_name(stat: &NodeStatsRecord) -> &str {
    stat.node_name.split(':').next().unwrap_or_default()
}

/// Room for the nodes a RunMetadata names but the graph does not (`_SOURCE`,
/// `_retval_*`, …), so that they do not make the node table grow by
/// copying. Unused room is address space only.
fn runtime_only_headroom(graph_nodes: usize) -> usize {
    graph_nodes / 16 + 1024
}

fn name_hash(name: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(name)
}

/// Node ids by name. An entry holds the node's (shared) name next to its
/// id, so that a lookup reads the name without visiting the node: on large
/// profiles, where neither fits in cache, one miss instead of two.
#[derive(Debug, Default)]
struct NameIndex(hashbrown::HashTable<(NodeName, NodeId)>);

impl NameIndex {
    fn with_capacity(capacity: usize) -> NameIndex {
        NameIndex(hashbrown::HashTable::with_capacity(capacity))
    }

    fn get(&self, name: &str) -> Option<&(NodeName, NodeId)> {
        self.0.find(name_hash(name), |(known, _)| **known == *name)
    }

    /// Adds `name` unless it is known; says whether it was new.
    fn insert_new(&mut self, name: &NodeName, id: NodeId) -> bool {
        let hash = name_hash(name);
        if self.0.find(hash, |(known, _)| known == name).is_some() {
            return false;
        }
        self.0.insert_unique(hash, (name.clone(), id), |(known, _)| name_hash(known));
        true
    }

    fn reserve(&mut self, additional: usize) {
        self.0.reserve(additional, |(known, _)| name_hash(known));
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

/// Which nodes of a list are the first of their name (tfprof keeps those),
/// and an index of them by name, by position in the list.
pub struct FirstOfEachName {
    by_name: NameIndex,
    pub is_first: Vec<bool>,
}

impl FirstOfEachName {
    pub fn find(nodes: &[Node]) -> FirstOfEachName {
        let mut by_name = NameIndex::with_capacity(nodes.len());
        let is_first = nodes.iter().enumerate().map(|(id, node)| by_name.insert_new(&node.name, id)).collect();
        FirstOfEachName { by_name, is_first }
    }

    /// The name of the first node called `name` if it is one of the few
    /// just before position `at`. Graphs are built in order, so about half
    /// of all inputs name such a node, found here without a lookup in the
    /// index (a cache miss or two each on a large graph).
    fn recent(&self, nodes: &[Node], at: usize, name: &str) -> Option<NodeName> {
        const RECENT: usize = 8;
        (at.saturating_sub(RECENT)..at).rev().find(|&j| self.is_first[j] && *nodes[j].name == *name).map(|j| nodes[j].name.clone())
    }
}

/// Every node known to the profile, with the profile-wide facts.
#[derive(Debug, Default)]
pub struct Stats {
    pub nodes: Vec<Node>,
    by_name: NameIndex,
    pub steps: BTreeSet<i64>,
    pub id_to_string: BTreeMap<i64, String>,
    pub has_code_traces: bool,
    /// GPU scheduling was traced but no `stream:all` kernel times.
    pub miss_accelerator_stream: bool,
    covered: Vec<bool>,
    covered_count: usize,
    /// Messages tfprof would print on stderr while ingesting.
    pub warnings: Vec<String>,
    /// Neither infer static shapes nor keep the output shapes seen at run
    /// time, which only FLOPs estimates read.
    pub skip_runtime_shapes: bool,
    /// How many steps the run metadata being added has (0: unknown).
    expected_steps: usize,
    /// Where `--select tensor_value` reads variable values.
    pub checkpoint: Option<Box<dyn records::Variables>>,
    /// Keep the inputs' allocation records in [`Stats::allocations`].
    pub keep_allocations: bool,
    /// Every allocation and free the inputs recorded, by input order (empty
    /// unless [`Stats::keep_allocations`]).
    pub allocations: Vec<AllocationEvent>,
    /// By node id: the op log lists the node (TF's default op log merges
    /// around such entries; see [`flops::FlopsEstimate`]).
    pub logged: Vec<bool>,
    /// How float ops were estimated ([`Stats::estimate_missing_flops`]).
    pub flops_estimate: flops::FlopsEstimate,
}

impl Stats {
    pub fn new() -> Stats {
        Stats::default()
    }

    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).map(|&(_, id)| id)
    }

    pub fn node(&self, name: &str) -> Option<&Node> {
        self.node_id(name).map(|id| &self.nodes[id])
    }

    /// Node ids sorted by name (the order of tfprof's `std::map`).
    pub fn ids_by_name(&self) -> Vec<NodeId> {
        let mut ids: Vec<NodeId> = (0..self.nodes.len()).collect();
        ids.sort_unstable_by(|&a, &b| self.nodes[a].name.cmp(&self.nodes[b].name));
        ids
    }

    /// Adds a finished node (e.g. when merging jobs); a known name keeps its
    /// first definition, as everywhere in tfprof.
    pub fn insert_node(&mut self, node: Node) -> Option<NodeId> {
        if self.node_id(&node.name).is_some() {
            return None;
        }
        Some(self.insert(node))
    }

    /// Room for `additional` more nodes.
    fn reserve(&mut self, additional: usize) {
        self.nodes.reserve(additional);
        self.covered.reserve(additional);
        self.by_name.reserve(additional);
    }

    /// Adds a node whose name is new.
    fn insert(&mut self, node: Node) -> NodeId {
        let id = self.nodes.len();
        self.by_name.insert_new(&node.name, id);
        self.nodes.push(node);
        self.covered.push(false);
        id
    }

    /// Adds graph nodes; a name seen before keeps its first definition.
    /// Nodes are built on all cores, then indexed in order. Into an empty
    /// table they are built in place: the node table is the largest block of
    /// memory rtfprof holds, and building it once, with room for the nodes
    /// only RunMetadata knows, saves two copies of it (and, on VMs where
    /// fresh pages are dear, the time to fault them in).
    pub fn add_graph(&mut self, graph: GraphRecord) {
        let count = graph.nodes.len();
        // Shapes as a tf.Graph infers them, for FLOPs estimates only: the
        // tfprof views keep the GraphDef's `_output_shapes` as tfprof does.
        let inferred = if self.skip_runtime_shapes { Vec::new() } else { crate::shapes::infer_with(&graph.nodes, &graph.functions) };
        let mut nodes = Vec::with_capacity(count + runtime_only_headroom(count));
        let mut raw_inputs = Vec::with_capacity(count);
        graph.nodes.into_par_iter().map(Node::from_graph).unzip_into_vecs(&mut nodes, &mut raw_inputs);
        let firsts = FirstOfEachName::find(&nodes);
        // An input names its producer by the producer's own name.
        let inputs: Vec<Vec<Input>> = raw_inputs
            .par_iter()
            .enumerate()
            .map(|(at, raw)| {
                let known = |name: &str| firsts.recent(&nodes, at, name).or_else(|| firsts.by_name.get(name).map(|(known, _)| known.clone()));
                raw.iter().map(|input| Input::parse(input, known)).collect()
            })
            .collect();
        drop(raw_inputs);
        nodes.iter_mut().zip(inputs).for_each(|(node, inputs)| node.inputs = inputs);
        for (node, shapes) in nodes.iter_mut().zip(inferred) {
            if let Some(shapes) = shapes {
                node.static_output_shapes = shapes;
            }
        }
        if self.nodes.is_empty() {
            self.adopt(nodes, firsts);
            self.covered.reserve(runtime_only_headroom(count));
            return;
        }
        self.reserve(count + runtime_only_headroom(count));
        for node in nodes {
            if self.node_id(&node.name).is_none() {
                self.insert(node);
            }
        }
    }

    /// Makes `nodes` the table of this empty `Stats`, keeping the first node
    /// of each name, in order.
    pub fn adopt(&mut self, mut nodes: Vec<Node>, firsts: FirstOfEachName) {
        debug_assert!(self.nodes.is_empty());
        let FirstOfEachName { mut by_name, is_first } = firsts;
        if by_name.len() != nodes.len() {
            // Repeated names (rare): drop the later nodes, then index again.
            let mut keep = is_first.into_iter();
            nodes.retain(|_| keep.next().unwrap_or(false));
            by_name = NameIndex::with_capacity(nodes.len());
            for (id, node) in nodes.iter().enumerate() {
                by_name.insert_new(&node.name, id);
            }
        }
        self.covered = vec![false; nodes.len()];
        self.by_name = by_name;
        self.nodes = nodes;
    }

    /// Adds op types, float ops and code traces from an op log.
    pub fn add_op_log(&mut self, op_log: OpLogProto) {
        for (id, s) in op_log.id_to_string {
            self.id_to_string.entry(id).or_insert(s);
        }
        // Names are looked up on all cores (on a large graph each lookup is
        // a cache miss or two), the node after the previous entry's first:
        // op logs list nodes in graph order, as the node table does. Entries
        // apply in order, as later ones win.
        let ids: Vec<Option<NodeId>> = op_log
            .log_entries
            .par_iter()
            .map_init(
                || None,
                |previous: &mut Option<NodeId>, entry| {
                    let next = previous.map_or(0, |id| id + 1);
                    let id = match self.nodes.get(next) {
                        // Names in the table are unique.
                        Some(node) if *node.name == *entry.name => Some(next),
                        _ => self.node_id(&entry.name),
                    };
                    *previous = id.or(*previous);
                    id
                },
            )
            .collect();
        for (entry, id) in op_log.log_entries.into_iter().zip(ids) {
            let Some(id) = id else { continue };
            if self.logged.len() <= id {
                self.logged.resize(id + 1, false);
            }
            self.logged[id] = true;
            let node = &mut self.nodes[id];
            node.op_types.extend(entry.types.iter().map(|t| symbol::symbol(t)));
            if entry.float_ops != 0 {
                node.float_ops = entry.float_ops;
            }
            if let Some(code) = entry.code_def {
                self.has_code_traces = true;
                if node.trace.is_none() {
                    node.trace = Some(code);
                }
            }
        }
    }

    /// Adds one step's RunMetadata and returns the run coverage so far (the
    /// share of nodes that were seen running), as tfprof reports it.
    pub fn add_run_meta(&mut self, step: i64, run_meta: &RunMetaRecord) -> f64 {
        let Some(step_stats) = &run_meta.step_stats else {
            self.warnings.push(format!("Invalid RunMetadata for step {step}"));
            return self.run_coverage();
        };
        self.steps.insert(step);
        let devices: Vec<device::Device> = step_stats.dev_stats.iter().map(|d| device::Device::classify(&d.device)).collect();
        let on_accelerator = devices.iter().filter(|dev| device::is_placed_on_accelerator(dev.name));
        let (has_gpu_scheduling, has_gpu_stream) = on_accelerator.fold((false, false), |(_, stream), dev| (true, stream || dev.accelerator_time));
        // Every stat with its device, in order.
        let stats: Vec<(&device::Device, &NodeStatsRecord)> =
            step_stats.dev_stats.iter().zip(&devices).flat_map(|(d, dev)| d.node_stats.iter().map(move |stat| (dev, stat))).collect();
        let targets = self.resolve_stats(&stats);
        self.apply_stats(step, &stats, targets);
        if self.keep_allocations {
            let records: Vec<&NodeStatsRecord> = stats.iter().map(|&(_, stat)| stat).collect();
            self.add_allocation_records(step, &records);
        }
        if has_gpu_scheduling && !has_gpu_stream {
            self.miss_accelerator_stream = true;
        }
        self.run_coverage()
    }

    /// The node each stat is for, as `(node, stat index)`, counting coverage
    /// and adding the nodes only the runtime knows, in stat order. Names are
    /// looked up on all cores first (at scale each lookup is a cache miss or
    /// two). Stats of skipped runtime entries have no target.
    fn resolve_stats(&mut self, stats: &[(&device::Device, &NodeStatsRecord)]) -> Vec<(NodeId, usize)> {
        let found: Vec<Option<NodeId>> = stats.par_iter().map(|(_, stat)| self.node_id(node_name(stat))).collect();
        let mut targets = Vec::with_capacity(stats.len());
        for (at, ((_, stat), found)) in stats.iter().zip(found).enumerate() {
            let name = node_name(stat);
            // (Not found before: maybe made by an earlier stat of this step.)
            let id = match found.or_else(|| self.node_id(name)) {
                Some(id) => {
                    if !self.covered[id] {
                        self.covered[id] = true;
                        self.covered_count += 1;
                    }
                    id
                }
                None if name == "RecvTensor" || name == "_SOURCE" || name.contains("MEMCPY") => continue,
                None => {
                    // A node only the runtime knows (e.g. `_retval_*`): its op is its name.
                    let mut node = Node { name: name.into(), op: symbol::symbol(name), ..Default::default() };
                    node.op_types.insert(node.op);
                    self.insert(node)
                }
            };
            targets.push((id, at));
        }
        targets
    }

    /// Applies each stat to its node: every node takes its stats in order,
    /// nodes take theirs on all cores. Warnings are kept in stat order.
    fn apply_stats(&mut self, step: i64, stats: &[(&device::Device, &NodeStatsRecord)], mut targets: Vec<(NodeId, usize)>) {
        targets.par_sort_unstable();
        // `targets[first[id]..first[id + 1]]` are node `id`'s.
        let mut first = vec![0; self.nodes.len() + 1];
        targets.iter().for_each(|&(id, _)| first[id + 1] += 1);
        (1..first.len()).for_each(|i| first[i] += first[i - 1]);
        let keep_shapes = !self.skip_runtime_shapes;
        let expected_steps = self.expected_steps.max(1);
        let mut warnings: Vec<(usize, String)> = self
            .nodes
            .par_iter_mut()
            .enumerate()
            .filter(|&(id, _)| first[id] < first[id + 1])
            .flat_map_iter(|(id, node)| {
                let mut warnings = Vec::new();
                for &(_, at) in &targets[first[id]..first[id + 1]] {
                    let (dev, stat) = stats[at];
                    let mut said = Vec::new();
                    node.add_step_stat(step, dev, stat, keep_shapes, expected_steps, &mut said);
                    warnings.extend(said.into_iter().map(|w| (at, w)));
                }
                warnings
            })
            .collect();
        warnings.sort_by_key(|&(at, _)| at);
        self.warnings.extend(warnings.into_iter().map(|(_, w)| w));
    }

    /// Adds executions an input has already summed per node, step and device
    /// (XPlane traces, whose picosecond times must be summed before they are
    /// rounded): `total(i)` for `i` in `0..count`, in the input's order; an
    /// input may add its totals in parts, step after step. A node's device
    /// is where the totals place it; its host time counts as cpu time there,
    /// as tfprof counts an op's scheduling on its device, and each
    /// accelerator's time as accelerator time. Nodes a graph did not define
    /// get the total's type, in the order the totals name them first.
    pub fn add_exec_totals<'a>(&mut self, known: &mut InputNodes, count: usize, total: impl Fn(usize) -> ExecTotal<'a> + Sync) {
        // The nodes the input named before, and each total's step, on all
        // cores; then, in order, the nodes it names for the first time.
        let seen: Vec<(Option<NodeId>, i64)> = (0..count)
            .into_par_iter()
            .map(|i| {
                let total = total(i);
                (known.0.get(total.input_node as usize).copied().flatten(), total.step)
            })
            .collect();
        let mut ids: Vec<NodeId> = Vec::with_capacity(count);
        let mut last_step = None;
        for (i, &(id, step)) in seen.iter().enumerate() {
            let id = match id {
                Some(id) => id,
                None => self.first_total_of(known, &total(i)),
            };
            if last_step != Some(step) {
                self.steps.insert(step);
                last_step = Some(step);
            }
            ids.push(id);
        }
        drop(seen);
        // Node by node, on all cores (each node's totals in input order,
        // found by a counting sort): a node's records stay in cache while its
        // steps are added, and its steps get room once. A 10 MB trace has
        // 200k totals of 5k nodes; step after step over all nodes, this took
        // 3x longer.
        let mut first = vec![0; self.nodes.len() + 1];
        ids.iter().for_each(|&id| first[id + 1] += 1);
        (1..first.len()).for_each(|i| first[i] += first[i - 1]);
        let mut next = first.clone();
        let mut order = vec![0; count];
        for (i, &id) in ids.iter().enumerate() {
            order[next[id]] = i;
            next[id] += 1;
        }
        drop(ids);
        self.nodes.par_iter_mut().enumerate().filter(|(id, _)| first[*id] < first[id + 1]).for_each(|(id, node)| {
            for total in order[first[id]..first[id + 1]].iter().map(|&i| total(i)) {
                if node.execs.is_empty() {
                    node.execs.reserve_exact(total.node_steps);
                }
                if node.canonical_device.is_empty() {
                    node.canonical_device = symbol::symbol(total.placed_on);
                    node.op_types.insert(node.canonical_device);
                }
                let exec = node.execs.get_or_insert_with(total.step, ExecStep::default);
                exec.add_total(&total, node.canonical_device);
            }
        });
    }

    /// The node of an input's node number the first time it is seen
    /// (again if seen earlier in the same call): found by name or made,
    /// and counted as covered.
    fn first_total_of(&mut self, known: &mut InputNodes, total: &ExecTotal<'_>) -> NodeId {
        let slot = total.input_node as usize;
        if known.0.len() <= slot {
            known.0.resize(slot + 1, None);
        }
        if let Some(id) = known.0[slot] {
            return id;
        }
        let id = match self.node_id(total.node) {
            Some(id) => id,
            None => {
                let mut node = Node { name: total.node.into(), op: symbol::symbol(total.op_type), ..Default::default() };
                node.op_types.insert(node.op);
                self.insert(node)
            }
        };
        known.0[slot] = Some(id);
        if !self.covered[id] {
            self.covered[id] = true;
            self.covered_count += 1;
        }
        id
    }

    /// Gives known nodes without a code trace the Python frames an input
    /// names for them (XLA instructions' stacks, innermost first), as code
    /// traces (outermost first) whose strings take new ids.
    pub fn add_frames(&mut self, frames: &[(String, Vec<records::Frame>)]) {
        let mut ids: FxHashMap<String, i64> = self.id_to_string.iter().map(|(id, s)| (s.clone(), *id)).collect();
        let mut next = self.id_to_string.keys().next_back().map_or(1, |last| last.saturating_add(1));
        let mut intern = |text: &str, id_to_string: &mut BTreeMap<i64, String>| -> i64 {
            *ids.entry(text.to_owned()).or_insert_with(|| {
                id_to_string.insert(next, text.to_owned());
                next = next.saturating_add(1);
                next - 1
            })
        };
        for (name, stack) in frames {
            let Some(id) = self.node_id(name) else { continue };
            if self.nodes[id].trace.is_some() || stack.is_empty() {
                continue;
            }
            let traces = stack
                .iter()
                .rev()
                .map(|f| crate::proto::tensorflow::tfprof::code_def::Trace {
                    file_id: intern(&f.file, &mut self.id_to_string),
                    lineno: f.line,
                    function_id: intern(&f.function, &mut self.id_to_string),
                    line_id: 0,
                    func_start_line: 0,
                })
                .collect();
            self.nodes[id].trace = Some(crate::proto::tensorflow::tfprof::CodeDef { traces });
            self.has_code_traces = true;
        }
    }

    /// Adds per-node memory an input has replayed (XPlane allocator events)
    /// as one memory record per node and step; nodes must be known.
    pub fn add_memory_totals(&mut self, totals: &[MemoryTotal]) {
        for total in totals {
            let Some(id) = self.node_id(&total.node) else { continue };
            let node = &mut self.nodes[id];
            node.execs.get_or_insert_with(total.step, ExecStep::default);
            node.push_memory(
                total.step,
                node::MemoryRecord {
                    memory_micros: total.last_micros,
                    requested_bytes: total.requested_bytes,
                    peak_bytes: total.peak_bytes,
                    residual_bytes: total.residual_bytes,
                    output_bytes: 0,
                    allocator_bytes_in_use: 0,
                },
            );
            self.steps.insert(total.step);
        }
    }

    /// Tags the nodes named in `variables` with the op type
    /// `_checkpoint_variables`, and keeps the checkpoint for tensor values.
    pub fn add_checkpoint(&mut self, checkpoint: Box<dyn records::Variables>, variables: impl IntoIterator<Item = String>) {
        for name in variables {
            if let Some(id) = self.node_id(&name) {
                self.nodes[id].op_types.insert("_checkpoint_variables");
            }
        }
        self.checkpoint = Some(checkpoint);
    }

    /// Says how many steps the run metadata about to be added has (0:
    /// unknown), which tfprof's warnings about missing steps read.
    pub fn expect_steps(&mut self, steps: usize) {
        self.expected_steps = steps;
    }

    /// Covered graph nodes over all known nodes (tfprof's `run_coverage`).
    pub fn run_coverage(&self) -> f64 {
        self.covered_count as f64 / (self.nodes.len() as f64 + 1e-10)
    }

    /// Shapes of a node's inputs by input index; empty when unknown.
    pub fn input_shapes(&self, node: &Node) -> Vec<(usize, Vec<i64>)> {
        // tfprof keys the output slot by producer name: the last edge from
        // the same producer wins. (A map, not a search per input: a node can
        // have very many inputs.)
        let last_slot: FxHashMap<&str, i64> = node.inputs.iter().map(|x| (&*x.name, x.shape_slot)).collect();
        node.inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                let slot = last_slot.get(&*input.name).copied().unwrap_or(0);
                let shape = self.node(&input.name).and_then(|producer| producer.output_shapes.get(&slot)).cloned().unwrap_or_default();
                (i, shape)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::records::NodeRecord;

    fn graph(nodes: &[(&str, &str)]) -> GraphRecord {
        let nodes = nodes.iter().map(|&(name, op)| NodeRecord { name: name.into(), op: op.into(), ..Default::default() }).collect();
        GraphRecord { nodes, ..Default::default() }
    }

    fn ops(stats: &Stats) -> Vec<(&str, &str)> {
        stats.nodes.iter().map(|n| (&*n.name, n.op)).collect()
    }

    #[test]
    fn repeated_graph_names_keep_their_first_definition() {
        let mut stats = Stats::new();
        stats.add_graph(graph(&[("a", "A1"), ("b", "B1"), ("a", "A2"), ("c", "C1"), ("b", "B2")]));
        assert_eq!(ops(&stats), [("a", "A1"), ("b", "B1"), ("c", "C1")]);
        for (id, name) in ["a", "b", "c"].into_iter().enumerate() {
            assert_eq!(stats.node_id(name), Some(id));
        }
        assert_eq!(stats.node_id("d"), None);
        // A second graph only adds new names, after the first graph's.
        stats.add_graph(graph(&[("c", "C2"), ("d", "D1")]));
        assert_eq!(ops(&stats), [("a", "A1"), ("b", "B1"), ("c", "C1"), ("d", "D1")]);
        assert_eq!(stats.node_id("d"), Some(3));
        assert_eq!(stats.run_coverage(), 0.0);
    }

    #[test]
    fn inputs_share_their_producers_names() {
        let record = |name: &str, inputs: &[&str]| NodeRecord {
            name: name.into(),
            op: "Op".into(),
            inputs: inputs.iter().map(|&i| i.into()).collect(),
            ..Default::default()
        };
        // `c` names `a` right after a second, dropped definition of it, and
        // `b` far from its producer (past the nodes an input is first
        // looked for among).
        let mut nodes = vec![record("a", &[]), record("b0", &[]), record("a", &["b"]), record("c", &["a"])];
        nodes.extend((0..20).map(|i| record(&format!("pad{i}"), &[])));
        nodes.push(record("b", &["a:1", "^a", "missing:2"]));
        let mut stats = Stats::new();
        stats.add_graph(GraphRecord { nodes, ..Default::default() });
        let b = stats.node("b").unwrap();
        let a = stats.node("a").unwrap();
        let shown: Vec<(&str, i64)> = b.inputs.iter().map(|i| (&*i.name, i.src_output)).collect();
        assert_eq!(shown, [("a", 1), ("a", 0), ("missing", 2)]);
        assert!(std::sync::Arc::ptr_eq(&b.inputs[0].name, &a.name));
        assert!(std::sync::Arc::ptr_eq(&b.inputs[1].name, &a.name));
        assert!(std::sync::Arc::ptr_eq(&stats.node("c").unwrap().inputs[0].name, &a.name), "the kept a, not the dropped one");
        assert!(a.inputs.is_empty(), "the first definition of a wins");
    }

    /// Op-log entries find their nodes in any order, the next node in the
    /// table tried first; later entries win.
    #[test]
    fn op_log_entries_find_their_nodes_in_any_order() {
        use crate::proto::tensorflow::tfprof::OpLogEntry;
        let mut stats = Stats::new();
        let names: Vec<String> = (0..50).map(|i| format!("n{i}")).collect();
        stats.add_graph(graph(&names.iter().map(|n| (n.as_str(), "Op")).collect::<Vec<_>>()));
        let entry = |name: &str, float_ops: i64| OpLogEntry { name: name.into(), float_ops, types: vec![format!("t_{name}")], code_def: None };
        // In order, out of order, missing, repeated.
        let order = [0, 1, 2, 40, 3, 41, 7, 6, 5, 49, 48, 8, 8];
        let mut log_entries: Vec<OpLogEntry> = order.iter().map(|&i| entry(&names[i], i as i64 + 1)).collect();
        log_entries.insert(5, entry("missing", 99));
        log_entries.push(entry("n8", 1000));
        stats.add_op_log(OpLogProto { log_entries, ..Default::default() });
        for (i, node) in stats.nodes.iter().enumerate() {
            let logged = order.contains(&i);
            let want = if i == 8 {
                1000
            } else if logged {
                i as i64 + 1
            } else {
                0
            };
            assert_eq!(node.float_ops, want, "{}", node.name);
            assert_eq!(node.op_types.contains(format!("t_n{i}").as_str()), logged, "{}", node.name);
        }
    }

    /// Stats apply per node on all cores; what they leave must be what
    /// applying them one by one, in order, leaves.
    #[test]
    fn a_step_applies_as_if_stat_by_stat_in_order() {
        use crate::stats::records::{DeviceStatsRecord, StepStatsRecord};
        let stat = |name: &str, start: i64| NodeStatsRecord { node_name: name.into(), all_start_micros: start, op_end_rel_micros: 3, ..Default::default() };
        let device = |name: &str, stats: Vec<NodeStatsRecord>| DeviceStatsRecord { device: name.into(), node_stats: stats };
        let cpu = "/job:w/replica:0/task:0/device:CPU:0";
        let run_meta = RunMetaRecord {
            step_stats: Some(StepStatsRecord {
                dev_stats: vec![
                    device(cpu, vec![stat("b", 0), stat("a", 10), stat("_retval_0", 12), stat("a", 0), stat("_SOURCE", 1)]),
                    device("/job:w/replica:0/task:0/device:GPU:0/stream:all", vec![stat("a:a", 20), stat("_retval_0", 30)]),
                    device(cpu, vec![stat("a", 40), stat("missing_time", 0)]),
                ],
            }),
        };
        let mut stats = Stats::new();
        stats.add_graph(graph(&[("a", "A"), ("b", "B"), ("missing_time", "M")]));
        let coverage = stats.add_run_meta(3, &run_meta);

        let mut expected = Stats::new();
        expected.add_graph(graph(&[("a", "A"), ("b", "B"), ("missing_time", "M"), ("_retval_0", "_retval_0")]));
        let mut warnings = Vec::new();
        for dev_stats in &run_meta.step_stats.as_ref().unwrap().dev_stats {
            let dev = device::Device::classify(&dev_stats.device);
            for stat in dev_stats.node_stats.iter().filter(|s| s.node_name != "_SOURCE") {
                let id = expected.node_id(node_name(stat)).unwrap();
                expected.nodes[id].add_step_stat(3, &dev, stat, true, 1, &mut warnings);
            }
        }
        assert_eq!(stats.warnings, warnings);
        assert_eq!(stats.warnings, ["b has no start time, skipping", "a has no start time, skipping", "missing_time has no start time, skipping"]);
        assert_eq!(stats.nodes.len(), 4);
        for (node, want) in stats.nodes.iter().zip(&expected.nodes) {
            assert_eq!(format!("{:?}", node.execs), format!("{:?}", want.execs), "{}", node.name);
            assert_eq!(node.op_types, want.op_types, "{}", node.name);
        }
        // a, b and missing_time ran; _retval_0 is new, then seen again.
        assert_eq!(coverage, 4.0 / (4.0 + 1e-10));
    }

    #[test]
    fn nodes_only_the_runtime_knows_are_indexed_past_the_headroom() {
        let mut stats = Stats::new();
        stats.add_graph(graph(&[("g", "G")]));
        let extra = runtime_only_headroom(1) + 10;
        for i in 0..extra {
            let name = format!("_retval_{i}");
            stats.insert(Node { name: name.as_str().into(), op: symbol::symbol(&name), ..Default::default() });
        }
        assert_eq!(stats.nodes.len(), extra + 1);
        assert_eq!(stats.node_id("g"), Some(0));
        assert_eq!(stats.node_id(&format!("_retval_{}", extra - 1)), Some(extra));
        assert_eq!(stats.covered.len(), stats.nodes.len());
    }
}
