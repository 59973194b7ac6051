//! TensorFlow 1's files — a GraphDef, one RunMetadata a step, an OpLog and
//! a checkpoint, or an event log's graph and run metadata — into the node
//! model, with tfprof's start-up lines.

use std::path::Path;

use rayon::prelude::*;

use super::{GraphRecord, InputPaths, RunMetaFile, checkpoint, events, load_graph, load_op_log, load_op_log_without_traces, map_file, run_meta};
use crate::error::Result;
use crate::proto::tensorflow::tfprof::OpLogProto;
use crate::stats::Stats;

/// Decoded TF files (run metadata read, decoded while importing).
#[derive(Debug, Default)]
pub struct TfFiles {
    pub graph: GraphRecord,
    /// One file per step, in step order.
    pub run_metas: Vec<RunMetaFile>,
    pub op_log: Option<OpLogProto>,
    pub checkpoint: Option<checkpoint::Checkpoint>,
    /// Read from an event log (`--events_path`).
    pub from_events: bool,
    /// Start-up lines of rtfprof's own (an event log's steps).
    pub listing: String,
    /// Lines for stderr.
    pub warnings: Vec<String>,
}

impl TfFiles {
    /// Reads and decodes the files `paths` names. The graph and op log are
    /// read while the run metadata files decode on the rayon pool.
    pub fn open(paths: &InputPaths, checkpoint: Option<checkpoint::Checkpoint>) -> Result<TfFiles> {
        // Every file decodes on its own rayon task.
        let ((graph, op_log), run_metas) = rayon::join(
            || {
                rayon::join(
                    || paths.graph_path.as_deref().map(|path| load_graph(path, !paths.skip_attrs)).transpose(),
                    || paths.op_log_path.as_deref().map(|path| op_log(path, paths)).transpose(),
                )
            },
            || {
                paths
                    .run_meta_paths
                    .par_iter()
                    .map(|p| {
                        let detail = run_meta::Detail { shapes: paths.estimate_flops.is_on(), allocations: paths.allocations };
                        Ok(RunMetaFile { path: p.clone(), bytes: map_file("--run_meta_path", p)?, detail, in_events: None })
                    })
                    .collect::<Result<Vec<_>>>()
            },
        );
        let (graph, op_log) = (graph?.unwrap_or_default(), op_log?);
        Ok(TfFiles { graph, run_metas: run_metas?, op_log, checkpoint, ..Default::default() })
    }

    /// `--events_path` (with an op log and a checkpoint if given): the
    /// event log is read while the op log decodes.
    pub fn open_events(path: &Path, paths: &InputPaths, checkpoint: Option<checkpoint::Checkpoint>) -> Result<TfFiles> {
        let options = events::Options {
            run: paths.events_run.as_deref(),
            tags: paths.events_tags.as_deref(),
            with_attrs: !paths.skip_attrs,
            run_meta: run_meta::Detail { shapes: paths.estimate_flops.is_on(), allocations: paths.allocations },
        };
        let (log, op_log) = rayon::join(|| events::load(path, options), || paths.op_log_path.as_deref().map(|path| op_log(path, paths)).transpose());
        let log = log?;
        Ok(TfFiles { graph: log.graph, run_metas: log.run_metas, op_log: op_log?, checkpoint, from_events: true, listing: log.listing, warnings: log.warnings })
    }

    /// A node model of the graph, op log and checkpoint, before any step
    /// (what a trace's import starts from, too).
    pub fn model(&mut self, paths: &InputPaths) -> Stats {
        let mut stats = Stats::new();
        stats.warnings = std::mem::take(&mut self.warnings);
        stats.skip_runtime_shapes = !paths.estimate_flops.is_on();
        stats.keep_allocations = paths.allocations;
        stats.add_graph(std::mem::take(&mut self.graph));
        if let Some(op_log) = self.op_log.take() {
            stats.add_op_log(op_log);
        }
        if let Some(checkpoint) = self.checkpoint.take() {
            let variables = checkpoint.variable_shapes().into_keys();
            stats.add_checkpoint(Box::new(checkpoint), variables);
        }
        stats
    }

    /// The node model with every step, and tfprof's start-up lines.
    pub fn import(mut self, paths: &InputPaths) -> Result<(Stats, String)> {
        let mut stats = self.model(paths);
        // Printed only once every file has been read: a bad file prints nothing.
        let mut lines = String::from("Reading Files...\n");
        lines.push_str("Try to use a single --profile_path instead of graph_path,op_log_path,run_meta_path\n");
        lines.push_str(&self.listing);
        add_run_meta_files(&mut stats, &self.run_metas, |coverage| lines.push_str(&format!("run graph coverage: {coverage:.2}\n")))?;
        Ok((stats, lines))
    }
}

/// Adds one step per file, in order, decoding the next file while the
/// current one is ingested; `coverage` receives the run coverage after each
/// step, as tfprof prints it.
pub fn add_run_meta_files(stats: &mut Stats, files: &[super::RunMetaFile], mut coverage: impl FnMut(f64)) -> Result<()> {
    let Some(first) = files.first() else { return Ok(()) };
    stats.expect_steps(files.len());
    let mut current = first.decode()?;
    for step in 0..files.len() {
        let next = files.get(step + 1);
        let (decoded, covered) = rayon::join(|| next.map(|f| f.decode()).transpose(), || stats.add_run_meta(step as i64, &current));
        coverage(covered);
        match decoded? {
            Some(run_meta) => current = run_meta,
            None => break,
        }
    }
    Ok(())
}

/// The op log, without its code traces where the command shows none.
fn op_log(path: &Path, paths: &InputPaths) -> Result<OpLogProto> {
    if paths.skip_code_traces { load_op_log_without_traces(path) } else { load_op_log(path) }
}
