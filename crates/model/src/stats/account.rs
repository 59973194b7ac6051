//! The one accounting: a node's own values for a step ([`Metrics`]) and the
//! totals a view accumulates over accounted descendants ([`Totals`]),
//! following tfprof's `ShowNode` (`ReInit`, `AddSelfToTotalStats`,
//! `AggregateTotalStats`).

use std::ops::AddAssign;

use super::node::Node;

/// Every metric tfprof can show or filter on, for one node or group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Metrics {
    pub run_count: i64,
    pub exec_micros: i64,
    pub accelerator_micros: i64,
    pub cpu_micros: i64,
    pub requested_bytes: i64,
    pub peak_bytes: i64,
    pub residual_bytes: i64,
    pub output_bytes: i64,
    pub parameters: i64,
    pub float_ops: i64,
}

impl Metrics {
    /// A graph node's own values for `step` (`< 0`: per-node step average).
    pub fn of(node: &Node, step: i64) -> Metrics {
        if step >= 0 { Self::at_step(node, step) } else { Self::each(node, step) }
    }

    /// [`Metrics::of`], metric by metric.
    pub fn each(node: &Node, step: i64) -> Metrics {
        Metrics {
            run_count: node.run_count(step),
            exec_micros: node.exec_micros(step),
            accelerator_micros: node.accelerator_micros(step),
            cpu_micros: node.cpu_micros(step),
            requested_bytes: node.requested_bytes(step),
            peak_bytes: node.peak_bytes(step),
            residual_bytes: node.residual_bytes(step),
            output_bytes: node.output_bytes(step),
            parameters: node.parameters(),
            float_ops: node.float_ops(step),
        }
    }

    /// [`Metrics::of`] one recorded step, from one lookup of its execution
    /// and one of its memory records (views over every step of a long
    /// trace make one of these per node and step: 9 lookups each were 40%
    /// of `rtfprof report` on the 268 MB bench trace).
    pub fn at_step(node: &Node, step: i64) -> Metrics {
        if node.execs.is_empty() {
            return Metrics { parameters: node.parameters(), float_ops: node.float_ops, ..Metrics::default() };
        }
        let exec = node.execs.get(&step);
        let (accelerator_micros, cpu_micros) = exec.map_or((0, 0), |e| (e.accelerator_micros(), e.cpu_micros()));
        let run_count = exec.map_or(0, |e| e.run_count);
        let memory = node.memory.get(&step).map_or(&[][..], Vec::as_slice);
        let sum = |field: fn(&super::node::MemoryRecord) -> i64| super::node::wrapping_sum(memory.iter().map(field));
        Metrics {
            run_count,
            exec_micros: accelerator_micros.wrapping_add(cpu_micros),
            accelerator_micros,
            cpu_micros,
            requested_bytes: sum(|m| m.requested_bytes),
            peak_bytes: sum(|m| m.peak_bytes),
            residual_bytes: sum(|m| m.residual_bytes),
            output_bytes: sum(|m| m.output_bytes),
            parameters: node.parameters(),
            float_ops: node.float_ops.wrapping_mul(run_count),
        }
    }
}

/// Wrapping, like tfprof's `int64` sums: absurd inputs must not abort.
impl AddAssign for Metrics {
    fn add_assign(&mut self, o: Metrics) {
        self.run_count = self.run_count.wrapping_add(o.run_count);
        self.exec_micros = self.exec_micros.wrapping_add(o.exec_micros);
        self.accelerator_micros = self.accelerator_micros.wrapping_add(o.accelerator_micros);
        self.cpu_micros = self.cpu_micros.wrapping_add(o.cpu_micros);
        self.requested_bytes = self.requested_bytes.wrapping_add(o.requested_bytes);
        self.peak_bytes = self.peak_bytes.wrapping_add(o.peak_bytes);
        self.residual_bytes = self.residual_bytes.wrapping_add(o.residual_bytes);
        self.output_bytes = self.output_bytes.wrapping_add(o.output_bytes);
        self.parameters = self.parameters.wrapping_add(o.parameters);
        self.float_ops = self.float_ops.wrapping_add(o.float_ops);
    }
}

/// Aggregated values of a displayed node: its own plus its accounted
/// descendants', and how many graph nodes were counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub metrics: Metrics,
    pub definition_count: i64,
}

impl Totals {
    /// Adds a node's own values and one definition.
    pub fn add_self(&mut self, own: &Metrics) {
        self.metrics += *own;
        self.definition_count = self.definition_count.wrapping_add(1);
    }

    /// Adds a child's totals.
    pub fn add(&mut self, child: &Totals) {
        self.metrics += child.metrics;
        self.definition_count = self.definition_count.wrapping_add(child.definition_count);
    }
}

/// A group of graph nodes seen as one (an op type in the op view, a Python
/// line in the code view), restricted to the nodes `account_type_regexes`
/// select (tfprof's `TFMultiGraphNode::SnapshotNodes`).
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Sums over the selected nodes; a node selected by two regexes counts twice.
    pub own: Metrics,
    pub op_types: std::collections::BTreeSet<super::symbol::Symbol>,
    /// Canonical devices; a node without one adds the empty string.
    pub devices: std::collections::BTreeSet<super::symbol::Symbol>,
    /// The selected nodes, once each, in name order.
    pub graph_nodes: Vec<super::NodeId>,
    pub accounted: bool,
}

impl Snapshot {
    /// `members` must be in name order.
    pub fn take(stats: &super::Stats, members: &[super::NodeId], step: i64, account_types: &crate::patterns::RegexList) -> Snapshot {
        let picked: Vec<super::NodeId> = if account_types.is_match_all() {
            members.to_vec()
        } else {
            account_types
                .regexes()
                .iter()
                .flat_map(|re| members.iter().copied().filter(|&id| stats.nodes[id].op_types.iter().any(|t| re.is_match(t))))
                .collect()
        };
        let mut snap = Snapshot::default();
        if picked.is_empty() {
            snap.accounted = account_types.is_match_all();
            return snap;
        }
        snap.accounted = true;
        for &id in &picked {
            let node = &stats.nodes[id];
            snap.op_types.extend(node.op_types.iter().copied());
            snap.own += Metrics::of(node, step);
            snap.devices.insert(node.canonical_device);
        }
        let mut unique = picked;
        unique.sort_unstable_by(|&a, &b| stats.nodes[a].name.cmp(&stats.nodes[b].name));
        unique.dedup();
        snap.graph_nodes = unique;
        snap
    }
}
