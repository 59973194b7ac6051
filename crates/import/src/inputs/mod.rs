//! Inputs: load every file named on the command line into records.
//!
//! One reader per file kind; each validates that the file really is that kind
//! (a RunMetadata given as `--graph_path` is an error, not garbage nodes).
//! Large files are memory-mapped; graphs, profiles and op logs are split
//! into their nodes and decoded on all cores, into records that keep only
//! what the command reads (`graph`, `run_meta`, `profile`); text-format
//! files go through `text_format`'s transcoder. TensorBoard event files
//! (`events`) yield the same graph and run metadata records.

pub mod checkpoint;
pub mod events;
pub mod graph;
mod in_order;
pub mod profile;
pub(crate) mod profile_nodes;
pub mod progress;
pub mod pytorch;
mod read;
pub mod run_meta;
pub mod selection;
#[cfg(test)]
mod shape_oracle;
pub mod sniff;
pub mod step_range;
pub mod text_format;
pub mod tf;
pub mod tfprof_text;
pub(crate) mod wire;
pub mod xplane;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{self, Error, Result};
use crate::proto::tensorflow::GraphDef;
use crate::proto::tensorflow::tfprof::{OpLogEntry, OpLogProto};
pub use graph::GraphRecord;
pub use run_meta::RunMetaRecord;

pub use profile::{NodeDetail, ProfileFile, decode_profile, load_profile};

/// Maps a large file into memory instead of reading it: its pages come from
/// the page cache as they are touched, with no copy and no freshly zeroed
/// pages, which on some VMs cost more than decoding them. Small or special
/// files (pipes, `/dev/stdin`) are read.
///
/// rtfprof reads its inputs once and exits; like other command-line tools
/// that map their inputs, it assumes they are not truncated while it runs.
///
/// A gzipped file (`graph.pb.gz`, `trace.xplane.pb.gz`) is decompressed
/// into memory.
pub fn map_file(kind: &'static str, path: &Path) -> Result<bytes::Bytes> {
    let bytes = map_file_as_is(kind, path)?;
    if sniff::is_gzip(&bytes) { gunzip(kind, path, &bytes) } else { Ok(bytes) }
}

/// The decompressed content of the gzip stream `bytes` (of `path`).
pub fn gunzip(kind: &'static str, path: &Path, bytes: &[u8]) -> Result<bytes::Bytes> {
    let mut inflated = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(bytes), &mut inflated)
        .map_err(|e| Error::input(kind, path, format!("is gzipped but cannot be decompressed ({e})")))?;
    if inflated.is_empty() {
        return Err(Error::input(kind, path, "is empty (a gzipped empty file)"));
    }
    Ok(bytes::Bytes::from(inflated))
}

fn map_file_as_is(kind: &'static str, path: &Path) -> Result<bytes::Bytes> {
    const MAP_AT_LEAST: u64 = 1 << 20;
    let io_error = |source| Error::Io { kind, path: path.to_owned(), source };
    let file = std::fs::File::open(path).map_err(io_error)?;
    let metadata = file.metadata().map_err(io_error)?;
    if metadata.is_file() && metadata.len() >= MAP_AT_LEAST {
        // SAFETY: see above; the map is read-only and private to this process.
        if let Ok(map) = unsafe { memmap2::MmapOptions::new().populate().map(&file) } {
            return Ok(bytes::Bytes::from_owner(map));
        }
    }
    // Read from the file already open: a FIFO opened a second time would
    // wait for a second writer.
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    std::io::Read::read_to_end(&mut &file, &mut bytes).map_err(io_error)?;
    // An empty binary proto is a valid empty message, so a 0-byte file would
    // silently profile nothing (a graph or log not yet flushed, a failed copy).
    if bytes.is_empty() {
        return Err(Error::input(kind, path, "is empty"));
    }
    Ok(bytes::Bytes::from(bytes))
}

/// The files one rtfprof invocation reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputPaths {
    pub graph_path: Option<PathBuf>,
    /// One file per step: step 0, 1, … in this order.
    pub run_meta_paths: Vec<PathBuf>,
    pub op_log_path: Option<PathBuf>,
    /// A multi-step ProfileProto; excludes the three above.
    pub profile_path: Option<PathBuf>,
    /// A TensorFlow V2 checkpoint prefix (for `_checkpoint_variables` and
    /// `--select tensor_value`).
    pub checkpoint_path: Option<PathBuf>,
    /// One host's XPlane trace (`*.xplane.pb`); excludes run metadata and
    /// profiles.
    pub xplane_path: Option<PathBuf>,
    /// One rank's PyTorch trace (`*.pt.trace.json[.gz]`); excludes the
    /// other inputs.
    pub pytorch_path: Option<PathBuf>,
    /// A TensorBoard event file or log directory: the graph and the run
    /// metadata (steps) instead of `graph_path` and `run_meta_paths`.
    pub events_path: Option<PathBuf>,
    /// The run (subdirectory) of an `events_path` log directory to read.
    pub events_run: Option<String>,
    /// Keep only the event log's run metadata whose tag matches this regex.
    pub events_tags: Option<String>,
    /// Estimate float ops for nodes the op log gives none, and by which
    /// rules (not a file, but part of what the inputs yield).
    pub estimate_flops: crate::stats::flops::FlopsEstimate,
    /// Skip the op log's code traces (most of its bytes) when the command
    /// does not show them.
    pub skip_code_traces: bool,
    /// Skip node attributes where they can be skipped (profile files): only
    /// `advise` and FLOPs estimates read them.
    pub skip_attrs: bool,
    /// Keep allocation records (RunMetadata, profiles) and allocator events
    /// (XPlane): only `rtfprof memory` reads them.
    pub allocations: bool,
    /// Keep each XLA instruction's time per step (XPlane): only `rtfprof
    /// check` reads it.
    pub hlo_steps: bool,
    /// Read a PyTorch trace a window of steps at a time, as this says
    /// ([`pytorch::windows`]): only where the node model is all a command
    /// reads (the views); `None` reads it whole, with its events kept.
    pub pytorch_windows: Option<pytorch::windows::Windowing>,
}

/// A run metadata file, read but not yet decoded: decoding is pipelined
/// with ingestion so that only a step or two is decoded at a time.
#[derive(Debug)]
pub struct RunMetaFile {
    pub path: PathBuf,
    bytes: bytes::Bytes,
    /// What to keep beyond the sums every view reads.
    detail: run_meta::Detail,
    /// For run metadata inside an event file (`path`): which, for errors.
    in_events: Option<String>,
}

impl RunMetaFile {
    pub fn decode(&self) -> Result<RunMetaRecord> {
        match &self.in_events {
            None => decode_run_meta_with(&self.bytes, &self.path, self.detail),
            // Always binary; empty is an empty RunMetadata (events::load
            // keeps only run metadata with step stats).
            Some(what) => {
                let not_run_meta = |why: String| Error::input(events::KIND, &self.path, format!("{what}: not a RunMetadata ({why})"));
                let record = run_meta::decode_with(&self.bytes, self.detail).map_err(|e| not_run_meta(error::one_line(&e.to_string())))?;
                check_devices(&record).map_err(|()| not_run_meta("step stats without a device".into()))?;
                Ok(record)
            }
        }
    }
}

/// The kinds of input, each read by its own module into the node model
/// (samply's importers, Perfetto's per-format readers): adding a kind is a
/// module, an arm here, and the arms of [`Input`]'s matches the compiler
/// points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// GraphDef, RunMetadata and OpLog files ([`tf`]).
    TfFiles,
    /// A TensorBoard event log's graph and run metadata ([`events`], [`tf`]).
    Events,
    /// A multi-step ProfileProto ([`profile`]).
    Profile,
    /// One host's TF2/JAX trace ([`xplane`]).
    Xplane,
    /// One rank's torch.profiler trace ([`pytorch`]).
    PyTorch,
}

/// One kind of input, opened and decoded as far as importing needs.
#[derive(Debug)]
pub enum Input {
    /// GraphDef, RunMetadata, OpLog (and checkpoint) records, from their
    /// files or from an event log.
    Tf(tf::TfFiles),
    /// A ProfileProto (and a checkpoint).
    Profile(ProfileFile, Option<checkpoint::Checkpoint>),
    /// One host's XPlane trace, with a GraphDef, op log and checkpoint if
    /// given (the graph view needs the graph's edges).
    Xplane(xplane::XplaneFile, tf::TfFiles),
    /// One rank's PyTorch trace.
    PyTorch(pytorch::Trace, PathBuf),
    /// A PyTorch trace planned to be read a window of steps at a time (its
    /// events are not kept).
    PyTorchWindows(pytorch::windows::Windows),
}

/// The events of a trace that outlive its import: what `steps`, the
/// timeline and the device tables read (the node model keeps totals only).
#[derive(Clone, Debug)]
pub enum Trace {
    Xplane(std::sync::Arc<xplane::TraceSource>),
    PyTorch(std::sync::Arc<pytorch::Trace>),
}

/// What an input became: the node model, the events kept, and tfprof's
/// start-up lines.
#[derive(Debug)]
pub struct Imported {
    pub kind: Kind,
    pub stats: crate::stats::Stats,
    pub trace: Option<Trace>,
    /// What the CLI prints before a view ("Reading Files...", the trace's
    /// planes, an event log's runs).
    pub listing: String,
}

impl Input {
    /// Opens the inputs `paths` names (one kind; mixing kinds is an error
    /// naming the flags). The files decode on all cores.
    pub fn open(paths: &InputPaths) -> Result<Input> {
        if let Some(path) = &paths.pytorch_path {
            if paths.graph_path.is_some()
                || !paths.run_meta_paths.is_empty()
                || paths.profile_path.is_some()
                || paths.xplane_path.is_some()
                || paths.events_path.is_some()
                || paths.op_log_path.is_some()
                || paths.checkpoint_path.is_some()
            {
                return Err(Error::flag(
                    pytorch::KIND,
                    "is set: do not set --graph_path, --run_meta_path, --op_log_path, --profile_path, --events_path, --checkpoint_path or --xplane_path",
                ));
            }
            if let Some(windowing) = paths.pytorch_windows
                && let Some(windows) = windowing.plan(path)?
            {
                return Ok(Input::PyTorchWindows(windows));
            }
            return Ok(Input::PyTorch(pytorch::Trace::open(path)?, path.clone()));
        }
        let checkpoint = paths.checkpoint_path.as_deref().map(checkpoint::Checkpoint::open).transpose()?;
        if let Some(path) = &paths.events_path {
            if paths.graph_path.is_some() || !paths.run_meta_paths.is_empty() || paths.profile_path.is_some() || paths.xplane_path.is_some() {
                return Err(Error::flag(events::KIND, "is set: do not set --graph_path, --run_meta_path, --profile_path or --xplane_path"));
            }
            return Ok(Input::Tf(tf::TfFiles::open_events(path, paths, checkpoint)?));
        }
        if let Some(path) = &paths.profile_path {
            if paths.graph_path.is_some() || !paths.run_meta_paths.is_empty() || paths.xplane_path.is_some() {
                return Err(Error::flag("--profile_path", "is set: do not set --graph_path, --run_meta_path or --xplane_path"));
            }
            let detail = NodeDetail { code_traces: !paths.skip_code_traces, attrs: !paths.skip_attrs, allocations: paths.allocations };
            return Ok(Input::Profile(load_profile(path, detail)?, checkpoint));
        }
        match &paths.xplane_path {
            Some(_) if paths.profile_path.is_some() || !paths.run_meta_paths.is_empty() => {
                Err(Error::flag("--xplane_path", "is set: do not set --profile_path or --run_meta_path"))
            }
            Some(path) => {
                let (trace, files) = rayon::join(|| xplane::XplaneFile::open(path), || tf::TfFiles::open(paths, checkpoint));
                Ok(Input::Xplane(trace?, files?))
            }
            None => Ok(Input::Tf(tf::TfFiles::open(paths, checkpoint)?)),
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Input::Tf(files) if files.from_events => Kind::Events,
            Input::Tf(_) => Kind::TfFiles,
            Input::Profile(..) => Kind::Profile,
            Input::Xplane(..) => Kind::Xplane,
            Input::PyTorch(..) | Input::PyTorchWindows(_) => Kind::PyTorch,
        }
    }

    /// Maps the input into the node model, by its kind's module.
    pub fn import(self, paths: &InputPaths) -> Result<Imported> {
        let kind = self.kind();
        let (stats, trace, listing) = match self {
            Input::Tf(files) => {
                let (stats, listing) = files.import(paths)?;
                (stats, None, listing)
            }
            Input::Profile(profile, checkpoint) => {
                let path = paths.profile_path.as_deref().unwrap_or(Path::new(""));
                (profile::import(profile, checkpoint, path, paths.allocations)?, None, "Reading Files...\n".to_owned())
            }
            Input::Xplane(trace, mut files) => {
                let mut stats = files.model(paths);
                let keep = xplane::convert::Keep { allocator_events: paths.allocations, hlo_steps: paths.hlo_steps };
                let (source, listing) = trace.import(&mut stats, keep)?;
                (stats, Some(Trace::Xplane(std::sync::Arc::new(source))), listing)
            }
            Input::PyTorch(trace, path) => {
                let mut stats = crate::stats::Stats::new();
                stats.keep_allocations = paths.allocations;
                let listing = format!("Reading Files...\n{}", pytorch::import::import(&trace, &path, &mut stats, paths.allocations));
                (stats, Some(Trace::PyTorch(std::sync::Arc::new(trace))), listing)
            }
            Input::PyTorchWindows(windows) => {
                let mut stats = crate::stats::Stats::new();
                let listing = format!("Reading Files...\n{}", pytorch::import::import_windows(&windows, &mut stats)?);
                (stats, None, listing)
            }
        };
        Ok(Imported { kind, stats, trace, listing })
    }
}

/// A GraphDef file, binary or text format. Without `with_attrs`, only the
/// attributes tfprof reads are kept.
pub fn load_graph(path: &Path, with_attrs: bool) -> Result<GraphRecord> {
    decode_graph(map_file("--graph_path", path)?, path, with_attrs)
}

/// Decodes a GraphDef, binary or text format; `path` only names it in errors.
pub fn decode_graph(bytes: impl Into<bytes::Bytes>, path: &Path, with_attrs: bool) -> Result<GraphRecord> {
    const KIND: &str = "--graph_path";
    let bytes = bytes.into();
    let graph = match graph::decode_binary(bytes.clone(), with_attrs) {
        Ok(graph) => graph,
        Err(_) => {
            let def: GraphDef = if bytes.len() >= read::PARALLEL_TEXT_BYTES {
                read::parse_graph_text_parallel(KIND, path, &bytes)?
            } else {
                read::decode_binary_or_text(KIND, path, &bytes, "GraphDef")?
            };
            GraphRecord {
                nodes: def.node.into_par_iter().map(|node| graph::record_from_node_def(node, with_attrs)).collect(),
                functions: graph::functions(def.library, with_attrs),
            }
        }
    };
    // Other messages can decode as a GraphDef by accident; real nodes always
    // have a name and an op.
    if let Some((i, _)) = graph.nodes.iter().enumerate().find(|(_, n)| n.name.is_empty() || n.op.is_empty()) {
        return Err(Error::input(KIND, path, format!("not a GraphDef (node #{i} has no name or op)")));
    }
    Ok(graph)
}

/// A RunMetadata file, binary (or, like tfprof, text format), with output
/// shapes.
pub fn load_run_meta(path: &Path) -> Result<RunMetaRecord> {
    decode_run_meta(&map_file("--run_meta_path", path)?, path, true)
}

/// Decodes a RunMetadata, with output shapes if `shapes`; `path` only names
/// it in errors.
pub fn decode_run_meta(bytes: &[u8], path: &Path, shapes: bool) -> Result<RunMetaRecord> {
    decode_run_meta_with(bytes, path, run_meta::Detail { shapes, allocations: false })
}

/// Decodes a RunMetadata, keeping what `detail` asks for; `path` only
/// names it in errors.
pub fn decode_run_meta_with(bytes: &[u8], path: &Path, detail: run_meta::Detail) -> Result<RunMetaRecord> {
    const KIND: &str = "--run_meta_path";
    if bytes.is_empty() {
        return Err(Error::input(KIND, path, "is empty"));
    }
    let run_meta = read::decode_binary_or_text_with(KIND, path, bytes, "RunMetadata", |wire| run_meta::decode_with(wire, detail))?;
    check_devices(&run_meta).map_err(|()| Error::input(KIND, path, "not a RunMetadata (step stats without a device)"))?;
    Ok(run_meta)
}

/// Other messages can decode as a RunMetadata by accident; real step stats
/// always name their device.
fn check_devices(run_meta: &RunMetaRecord) -> Result<(), ()> {
    match &run_meta.step_stats {
        Some(step_stats) if step_stats.dev_stats.iter().any(|d| d.device.is_empty()) => Err(()),
        _ => Ok(()),
    }
}

/// An OpLogProto file (`tfprof_log`), binary only as in tfprof.
pub fn load_op_log(path: &Path) -> Result<OpLogProto> {
    decode_op_log(&map_file("--op_log_path", path)?, path)
}

/// Decodes an OpLogProto; `path` only names it in errors.
pub fn decode_op_log(bytes: &[u8], path: &Path) -> Result<OpLogProto> {
    const KIND: &str = "--op_log_path";
    let op_log = match wire::decode_split::<OpLogEntry, OpLogProto>(bytes) {
        Ok((log_entries, rest)) => OpLogProto { log_entries, ..rest },
        // Decoded again, in order, for the error message.
        Err(_) => read::decode_binary(KIND, path, bytes, "OpLogProto")?,
    };
    for entry in &op_log.log_entries {
        if entry.name.is_empty() {
            return Err(Error::input(KIND, path, "not an OpLogProto (log entry without a name)"));
        }
        for trace in entry.code_def.iter().flat_map(|c| &c.traces) {
            for id in [trace.file_id, trace.function_id] {
                if !op_log.id_to_string.contains_key(&id) {
                    return Err(Error::input(KIND, path, format!("code trace of '{}' refers to string id {id}, which id_to_string lacks", entry.name)));
                }
            }
        }
    }
    Ok(op_log)
}

/// An OpLogProto file without its code traces and string table: the
/// fields the scope, graph and op views use, decoded at a fraction of the cost.
pub fn load_op_log_without_traces(path: &Path) -> Result<OpLogProto> {
    const KIND: &str = "--op_log_path";
    let bytes = map_file(KIND, path)?;
    let lite = match wire::decode_split::<lite::OpLogEntry, lite::OpLogProto>(&bytes) {
        Ok((log_entries, _)) => lite::OpLogProto { log_entries },
        // Decoded again, in order, for the error message.
        Err(_) => read::decode_binary(KIND, path, &bytes, "OpLogProto")?,
    };
    if lite.log_entries.iter().any(|e| e.name.is_empty()) {
        return Err(Error::input(KIND, path, "not an OpLogProto (log entry without a name)"));
    }
    let log_entries = lite
        .log_entries
        .into_iter()
        .map(|e| crate::proto::tensorflow::tfprof::OpLogEntry { name: e.name, float_ops: e.float_ops, types: e.types, code_def: None })
        .collect();
    Ok(OpLogProto { log_entries, id_to_string: Default::default() })
}

/// OpLogProto with only the fields tag-compatible with TensorFlow's that the
/// views need; prost skips the others without decoding them.
mod lite {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct OpLogEntry {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(int64, tag = "2")]
        pub float_ops: i64,
        #[prost(string, repeated, tag = "3")]
        pub types: Vec<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct OpLogProto {
        #[prost(message, repeated, tag = "1")]
        pub log_entries: Vec<OpLogEntry>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fixtures are small, so the mapped path is exercised here: a file of
    /// 1 MiB or more is mapped, and it reads the same as a read file.
    #[test]
    fn large_files_are_mapped_and_read_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let graph_pb = std::fs::read(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata/cnn/graph.pb")).unwrap();
        // Concatenated GraphDefs are one GraphDef with all their nodes.
        let copies = (1 << 20) / graph_pb.len() + 1;
        let large = graph_pb.repeat(copies);
        let path = dir.path().join("graph.pb");
        std::fs::write(&path, &large).unwrap();
        let mapped = map_file("--graph_path", &path).unwrap();
        assert_eq!(&mapped[..], &large[..]);
        let graph = load_graph(&path, true).unwrap();
        assert_eq!(graph, decode_graph(large.clone(), &path, true).unwrap());
        assert_eq!(graph.nodes.len(), copies * decode_graph(graph_pb, &path, true).unwrap().nodes.len());
        // Special files are read, not mapped.
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, b"through a pipe").unwrap())
        };
        assert_eq!(&map_file("--graph_path", &fifo).unwrap()[..], b"through a pipe");
        writer.join().unwrap();
    }
}
