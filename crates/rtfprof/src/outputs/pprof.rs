//! `--output pprof:outfile=PATH` for the code view: a gzipped pprof
//! `Profile` with one sample per graph node, located by the Python call stack
//! that created it (tfprof's `PprofProfileImpl` in `tfprof_code.cc`).
//!
//! Each displayed call edge becomes a Location keyed by (caller file, callee
//! function, caller line) and a Function keyed by (callee file, function,
//! start line); a displayed leaf yields a sample for every graph node under
//! it in the full tree. Tables are emitted in key order with ids in creation
//! order, and strings in first-use order, as tfprof writes them.

use std::collections::BTreeMap;
use std::io::Write;

use prost::Message;

use crate::error::{Error, Result};
use crate::proto::tensorflow::tfprof::pprof::{Function, Label, Line, Location, Profile, Sample, ValueType};
use crate::show::Displayed;
use crate::show::options::{Options, Shown};
use crate::stats::{Node, Snapshot, Stats};
use crate::views::Tree;

/// A pprof metric: its unit, its comment and its value of a node at a step.
type Metric = (&'static str, &'static str, fn(&Node, i64) -> i64);

/// The metric a pprof profile carries, with its unit and comment.
fn metric(select: Shown) -> Option<Metric> {
    Some(match select {
        Shown::Micros => ("microseconds", "Sum of accelerator execution time and cpu execution time.", Node::exec_micros),
        Shown::AcceleratorMicros => ("microseconds", "Accelerator execution time.", Node::accelerator_micros),
        Shown::CpuMicros => ("microseconds", "CPU execution time.", Node::cpu_micros),
        Shown::Bytes => ("bytes", "Sum of operation total memory requests, excluding deallocations.", Node::requested_bytes),
        Shown::PeakBytes => ("bytes", "Sum of operation peak memory usage.", Node::peak_bytes),
        Shown::ResidualBytes => ("bytes", "Sum of operation allocated memory after finish.", Node::residual_bytes),
        Shown::OutputBytes => ("bytes", "Sum of operation output size.", Node::output_bytes),
        Shown::Params => ("count", "Model parameters.", |n, _| n.parameters()),
        Shown::FloatOps => ("count", "Model float operations (Only available if defined).", Node::float_ops),
        _ => return None,
    })
}

/// Checks `--select` for pprof output: exactly one supported metric.
pub fn selected_metric(opts: &Options) -> Result<Shown> {
    let mut selected = opts.select.iter();
    match (selected.next(), selected.next()) {
        (Some(s), None) if metric(s).is_some() => Ok(s),
        (Some(s), None) => Err(Error::flag("--select", format!("pprof output does not support '{s}'"))),
        _ => Err(Error::flag("--select", "pprof output needs exactly one --select value")),
    }
}

#[derive(Default)]
struct Strings {
    index: BTreeMap<String, i64>,
    all: Vec<String>,
}

impl Strings {
    fn id(&mut self, s: &str) -> i64 {
        if self.all.is_empty() {
            self.all.push(String::new());
            self.index.insert(String::new(), 0);
        }
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.all.len() as i64;
        self.all.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }
}

struct Builder<'a> {
    stats: &'a Stats,
    tree: &'a Tree,
    opts: &'a Options,
    value: fn(&Node, i64) -> i64,
    strings: Strings,
    functions: BTreeMap<(String, String, u64), Function>,
    locations: BTreeMap<(String, String, u64), Location>,
    samples: BTreeMap<String, Sample>,
}

impl Builder<'_> {
    fn trace_parts(&self, index: usize) -> Option<(String, String, u64, u64)> {
        let trace = self.tree.nodes[index].trace.as_ref()?;
        let text = |id: i64| self.stats.id_to_string.get(&id).cloned().unwrap_or_default();
        Some((text(trace.file_id), text(trace.function_id), trace.lineno as u64, trace.func_start_line as u64))
    }

    fn function_id(&mut self, file: &str, function: &str, start_line: u64) -> u64 {
        let key = (file.to_owned(), function.to_owned(), start_line);
        if let Some(f) = self.functions.get(&key) {
            return f.id;
        }
        let id = self.functions.len() as u64 + 1;
        let base = file.rsplit('/').next().unwrap_or(file);
        let stem = base.rfind('.').map_or(base, |dot| &base[..dot]);
        let name = self.strings.id(&format!("{stem}:{function}"));
        let filename = self.strings.id(file);
        self.functions.insert(key, Function { id, name, system_name: 0, filename, start_line: start_line as i64 });
        id
    }

    /// The location of the call from `caller` into `callee`.
    fn location_id(&mut self, callee: usize, caller: usize) -> Option<u64> {
        let (caller_file, _, caller_line, _) = self.trace_parts(caller)?;
        let (callee_file, callee_function, _, callee_start) = self.trace_parts(callee)?;
        let key = (caller_file, callee_function.clone(), caller_line);
        if let Some(l) = self.locations.get(&key) {
            return Some(l.id);
        }
        let id = self.locations.len() as u64 + 1;
        let function_id = self.function_id(&callee_file, &callee_function, callee_start);
        self.locations.insert(key, Location { id, line: vec![Line { function_id, line: caller_line as i64 }], ..Default::default() });
        Some(id)
    }

    fn walk(&mut self, node: &Displayed, stack: &mut Vec<u64>) {
        let has_trace = self.tree.nodes[node.index].trace.is_some();
        if node.children.is_empty() && has_trace {
            self.add_samples(node.index, stack);
        }
        for child in &node.children {
            let location = if has_trace { self.location_id(child.index, node.index) } else { None };
            stack.extend(location);
            self.walk(child, stack);
            if location.is_some() {
                stack.pop();
            }
        }
    }

    /// One sample per graph node under every true leaf below `index`.
    fn add_samples(&mut self, index: usize, stack: &[u64]) {
        let mut leaves = Vec::new();
        true_leaves(self.tree, index, &mut leaves);
        let location_id: Vec<u64> = stack.iter().rev().copied().collect();
        for leaf in leaves {
            let attached = &self.tree.nodes[leaf].attached;
            let snap = Snapshot::take(self.stats, attached, self.opts.step, &self.opts.account_type_regexes);
            for id in snap.graph_nodes {
                let node = &self.stats.nodes[id];
                let mut key = node.name.to_string();
                while self.samples.contains_key(&key) {
                    key.push('@');
                }
                let label = Label { key: self.strings.id("graph node:"), str: self.strings.id(&node.name), ..Default::default() };
                let value = vec![1, (self.value)(node, self.opts.step)];
                self.samples.insert(key, Sample { location_id: location_id.clone(), value, label: vec![label] });
            }
        }
    }
}

fn true_leaves(tree: &Tree, index: usize, out: &mut Vec<usize>) {
    let children = &tree.nodes[index].children;
    if children.is_empty() {
        out.push(index);
    }
    for &c in children {
        true_leaves(tree, c, out);
    }
}

/// Builds the profile for a code view displayed from `tree`.
pub fn build(stats: &Stats, tree: &Tree, root: &Displayed, opts: &Options) -> Result<Profile> {
    let select = selected_metric(opts)?;
    let (unit, comment, value) = metric(select).expect("checked by selected_metric");
    let mut b =
        Builder { stats, tree, opts, value, strings: Strings::default(), functions: BTreeMap::new(), locations: BTreeMap::new(), samples: BTreeMap::new() };
    b.strings.id("");
    b.walk(root, &mut Vec::new());
    let count = b.strings.id("count");
    let sample_type = vec![ValueType { r#type: count, unit: count }, ValueType { r#type: b.strings.id(select.as_str()), unit: b.strings.id(unit) }];
    let comment = vec![b.strings.id(comment)];
    Ok(Profile {
        sample_type,
        sample: b.samples.into_values().collect(),
        location: b.locations.into_values().collect(),
        function: b.functions.into_values().collect(),
        string_table: b.strings.all,
        comment,
        ..Default::default()
    })
}

/// The profile, serialized and gzipped as pprof reads it.
pub fn write<W: Write>(profile: &Profile, out: W) -> std::io::Result<W> {
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    gz.write_all(&profile.encode_to_vec())?;
    gz.finish()
}

/// What tfprof prints after writing a pprof file.
pub fn written_message(path: &std::path::Path) -> String {
    format!("\nRun pprof -png --nodecount=100 --sample_index=1 <{}>\n", path.display())
}
