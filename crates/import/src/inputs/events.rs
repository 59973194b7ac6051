//! `--events_path`: TensorBoard event files, the logs that TF1 training
//! scripts wrote with `FileWriter(logdir, sess.graph)` and
//! `writer.add_run_metadata(run_metadata, tag)`.
//!
//! An event file is a sequence of TFRecords (a length, the masked CRC32C of
//! the length, the data, the masked CRC32C of the data), each one
//! `tensorflow.Event`. The graph is the newest `graph_def` event's, else the
//! graph in the newest `meta_graph_def` (TensorBoard's choice). Every run
//! metadata, a `tagged_run_metadata` or a summary of TF2's run-metadata
//! plugins, is one step, in file order. Graph and run metadata go, as slices
//! of the mapped file, to the decoders of `--graph_path` and
//! `--run_meta_path`: an event log becomes the same records as those files.
//!
//! Events are read field by field here, not with the generated `Event`:
//! rtfprof reads three of its members, and the generated type would copy
//! every graph and RunMetadata out of the file and decode each scalar,
//! histogram and image summary of a training log into `TensorProto`s. The
//! tests hold this decoder to the generated one.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use prost::DecodeError;
use prost::encoding::{DecodeContext, string};
use rayon::prelude::*;

use super::checkpoint::mask_crc;
use super::wire::{for_each_field, payload, skip};
use super::{GraphRecord, RunMetaFile, map_file};
use crate::error::{Error, Result, one_line};
use crate::patterns::RegexList;

pub const KIND: &str = "--events_path";

/// Summary plugins whose tensor is a serialized RunMetadata: TF2's
/// `trace_export` writes `graph_run_metadata` (with profiler=True) or
/// `graph_run_metadata_graph` (graphs only).
pub const RUN_METADATA_PLUGINS: [&str; 2] = ["graph_run_metadata", "graph_run_metadata_graph"];

/// The `what` member of one `tensorflow.Event`, as far as rtfprof reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum What {
    #[default]
    None,
    FileVersion(String),
    GraphDef(Bytes),
    MetaGraphDef(Bytes),
    TaggedRunMetadata {
        tag: String,
        run_metadata: Bytes,
    },
    /// The summary's run-metadata values; its other values are dropped.
    Summary(Vec<SummaryRunMetadata>),
    /// A log message or a session log.
    Other,
}

/// A summary value of one of [`RUN_METADATA_PLUGINS`].
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRunMetadata {
    pub tag: String,
    pub plugin: String,
    /// The tensor's first string (empty if it has none).
    pub run_metadata: Bytes,
}

/// Decodes an Event's `what`, with graphs and run metadata as slices of
/// `record`. Merges repeated fields as protobuf does (a oneof keeps its last
/// member; the same message member given twice merges).
pub fn decode_event(record: &Bytes) -> Result<What, DecodeError> {
    let mut what = What::None;
    for_each_field(record, |tag, wire_type, buf| {
        match tag {
            3 => {
                let mut version = match std::mem::take(&mut what) {
                    What::FileVersion(version) => version,
                    _ => String::new(),
                };
                string::merge(wire_type, &mut version, buf, DecodeContext::default())?;
                what = What::FileVersion(version);
            }
            4 => what = What::GraphDef(record.slice_ref(payload(tag, wire_type, buf)?)),
            5 => {
                let mut values = match std::mem::take(&mut what) {
                    What::Summary(values) => values,
                    _ => Vec::new(),
                };
                summary(payload(tag, wire_type, buf)?, record, &mut values)?;
                what = What::Summary(values);
            }
            6 | 7 => {
                payload(tag, wire_type, buf)?;
                what = What::Other;
            }
            8 => {
                let (mut run_tag, mut run_metadata) = match std::mem::take(&mut what) {
                    What::TaggedRunMetadata { tag, run_metadata } => (tag, run_metadata),
                    _ => (String::new(), Bytes::new()),
                };
                for_each_field(payload(tag, wire_type, buf)?, |tag, wire_type, buf| match tag {
                    1 => string::merge(wire_type, &mut run_tag, buf, DecodeContext::default()),
                    2 => {
                        run_metadata = record.slice_ref(payload(tag, wire_type, buf)?);
                        Ok(())
                    }
                    _ => skip(tag, wire_type, buf),
                })?;
                what = What::TaggedRunMetadata { tag: run_tag, run_metadata };
            }
            9 => what = What::MetaGraphDef(record.slice_ref(payload(tag, wire_type, buf)?)),
            _ => skip(tag, wire_type, buf)?,
        }
        Ok(())
    })?;
    Ok(what)
}

/// Adds a `Summary`'s run-metadata values to `values`.
fn summary(wire: &[u8], record: &Bytes, values: &mut Vec<SummaryRunMetadata>) -> Result<(), DecodeError> {
    for_each_field(wire, |tag, wire_type, buf| match tag {
        1 => {
            values.extend(summary_value(payload(tag, wire_type, buf)?, record)?);
            Ok(())
        }
        _ => skip(tag, wire_type, buf),
    })
}

/// A string tensor's `string_val` entries and `tensor_content`.
#[derive(Default)]
struct TensorStrings<'a> {
    string_val: Vec<&'a [u8]>,
    tensor_content: &'a [u8],
}

impl<'a> TensorStrings<'a> {
    /// The first string: `string_val[0]`, else a one-string
    /// `tensor_content` (a varint length, then the bytes), else empty.
    fn first(&self) -> &'a [u8] {
        if let Some(first) = self.string_val.first() {
            return first;
        }
        let mut content = self.tensor_content;
        match prost::encoding::decode_varint(&mut content) {
            Ok(len) if len == content.len() as u64 => content,
            _ => &[],
        }
    }
}

/// One `Summary.Value`, if it is run metadata.
fn summary_value(wire: &[u8], record: &Bytes) -> Result<Option<SummaryRunMetadata>, DecodeError> {
    let (mut tag, mut plugin) = (String::new(), String::new());
    // The `value` oneof while its member is `tensor`.
    let mut tensor: Option<TensorStrings> = None;
    for_each_field(wire, |field, wire_type, buf| match field {
        1 => string::merge(wire_type, &mut tag, buf, DecodeContext::default()),
        9 => for_each_field(payload(field, wire_type, buf)?, |field, wire_type, buf| match field {
            1 => for_each_field(payload(field, wire_type, buf)?, |field, wire_type, buf| match field {
                1 => string::merge(wire_type, &mut plugin, buf, DecodeContext::default()),
                _ => skip(field, wire_type, buf),
            }),
            _ => skip(field, wire_type, buf),
        }),
        8 => {
            let strings = tensor.get_or_insert_with(TensorStrings::default);
            for_each_field(payload(field, wire_type, buf)?, |field, wire_type, buf| match field {
                4 => {
                    strings.tensor_content = payload(field, wire_type, buf)?;
                    Ok(())
                }
                8 => {
                    strings.string_val.push(payload(field, wire_type, buf)?);
                    Ok(())
                }
                _ => skip(field, wire_type, buf),
            })
        }
        // The other members of the oneof.
        2..=6 => {
            tensor = None;
            skip(field, wire_type, buf)
        }
        _ => skip(field, wire_type, buf),
    })?;
    if !RUN_METADATA_PLUGINS.contains(&plugin.as_str()) {
        return Ok(None);
    }
    let run_metadata = tensor.map_or_else(Bytes::new, |t| record.slice_ref(t.first()));
    Ok(Some(SummaryRunMetadata { tag, plugin, run_metadata }))
}

/// The payloads of a MetaGraphDef's `graph_def` (field 2), as one GraphDef:
/// occurrences of a message field merge, which for a GraphDef is its bytes
/// concatenated.
fn meta_graph_graph(meta: &Bytes) -> Result<Option<Bytes>, DecodeError> {
    let mut parts = Vec::new();
    for_each_field(meta, |tag, wire_type, buf| match tag {
        2 => {
            parts.push(payload(tag, wire_type, buf)?);
            Ok(())
        }
        _ => skip(tag, wire_type, buf),
    })?;
    Ok(match parts[..] {
        [] => None,
        [one] => Some(meta.slice_ref(one)),
        _ => Some(Bytes::from(parts.concat())),
    })
}

// ---------------------------------------------------------------------------
// TFRecord framing (TensorFlow's lib/io/record_reader.cc).

/// A record's length (u64) and the masked CRC32C of those 8 bytes.
const HEADER_LEN: usize = 12;
/// The masked CRC32C of the data.
const FOOTER_LEN: usize = 4;

/// The records of a file: (offset, data) of each complete one, and where an
/// incomplete last one starts (a file still being written).
type Framed = (Vec<(usize, Bytes)>, Option<usize>);

fn split_records(bytes: &Bytes, path: &Path) -> Result<Framed> {
    // A first record whose length does not check is no TFRecord at all.
    let corrupt = |at: usize, what: &str| {
        if at == 0 && what == "length" {
            Error::input(KIND, path, format!("not an event file (no TFRecord at byte 0: {what} checksum mismatch)"))
        } else {
            Error::input(KIND, path, format!("record at byte {at}: {what} checksum mismatch (a corrupt file)"))
        }
    };
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let mut records = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = bytes.len() - at;
        if rest < HEADER_LEN {
            return Ok((records, Some(at)));
        }
        let length = &bytes[at..at + 8];
        if mask_crc(crc32c::crc32c(length)) != u32_at(at + 8) {
            return Err(corrupt(at, "length"));
        }
        let len = u64::from_le_bytes(length.try_into().expect("8 bytes"));
        if len.checked_add((HEADER_LEN + FOOTER_LEN) as u64).is_none_or(|whole| whole > rest as u64) {
            return Ok((records, Some(at)));
        }
        let start = at + HEADER_LEN;
        let end = start + len as usize;
        if mask_crc(crc32c::crc32c(&bytes[start..end])) != u32_at(end) {
            return Err(corrupt(at, "data"));
        }
        records.push((at, bytes.slice(start..end)));
        at = end + FOOTER_LEN;
    }
    Ok((records, None))
}

// ---------------------------------------------------------------------------
// Files and runs.

/// One graph or run metadata found in a file.
#[derive(Clone, Debug)]
struct Found {
    file: PathBuf,
    /// The byte offset of its record.
    offset: usize,
    bytes: Bytes,
}

/// A run metadata and its tag.
#[derive(Clone, Debug)]
struct Tagged {
    tag: String,
    found: Found,
}

/// What one event file holds, in order.
#[derive(Debug, Default)]
struct FileEvents {
    graphs: Vec<Found>,
    meta_graphs: Vec<Found>,
    run_metas: Vec<Tagged>,
    warning: Option<String>,
}

fn read_file(path: &Path) -> Result<FileEvents> {
    // A 0-byte file is an error there ("is empty").
    let bytes = map_file(KIND, path)?;
    let (records, partial) = split_records(&bytes, path)?;
    let not_events = || Error::input(KIND, path, "not an event file (its first record is not an Event with a file_version)");
    let Some((_, first)) = records.first() else {
        return Err(Error::input(KIND, path, format!("not an event file ({} bytes, no complete TFRecord)", bytes.len())));
    };
    match decode_event(first) {
        Ok(What::FileVersion(version)) if version.starts_with("brain.Event:") => {}
        _ => return Err(not_events()),
    }
    let mut events = FileEvents::default();
    for (offset, record) in &records[1..] {
        let what =
            decode_event(record).map_err(|e| Error::input(KIND, path, format!("record at byte {offset}: not an Event ({})", one_line(&e.to_string()))))?;
        let found = |bytes: Bytes| Found { file: path.to_owned(), offset: *offset, bytes };
        match what {
            What::GraphDef(graph) => events.graphs.push(found(graph)),
            What::MetaGraphDef(meta) => {
                let graph = meta_graph_graph(&meta)
                    .map_err(|e| Error::input(KIND, path, format!("record at byte {offset}: not a MetaGraphDef ({})", one_line(&e.to_string()))))?;
                events.meta_graphs.extend(graph.map(found));
            }
            What::TaggedRunMetadata { tag, run_metadata } => events.run_metas.push(Tagged { tag, found: found(run_metadata) }),
            What::Summary(values) => events.run_metas.extend(values.into_iter().map(|v| Tagged { tag: v.tag, found: found(v.run_metadata) })),
            What::None | What::FileVersion(_) | What::Other => {}
        }
    }
    if let Some(offset) = partial {
        events.warning = Some(format!(
            "rtfprof: warning: {KIND} {}: ends in a partial record at byte {offset} (still being written?); read the {} complete record{} before it",
            path.display(),
            records.len(),
            if records.len() == 1 { "" } else { "s" }
        ));
    }
    Ok(events)
}

/// Whether a file name is an event file's: TensorBoard's rule, a name with
/// `tfevents` in it (`events.out.tfevents.<time>.<host>[suffix]`).
pub fn is_event_file_name(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains("tfevents"))
}

/// A log directory's runs: each directory with event files (the log
/// directory itself is `.`), by name, with its event files in name order
/// (which is time order: the names start with the time).
pub fn runs(dir: &Path) -> Result<Vec<(String, Vec<PathBuf>)>> {
    /// Symbolic links to directories are followed, as TensorBoard does (runs
    /// are often linked into a log directory), except back to a directory
    /// being walked (`above`), which would never end.
    fn walk(dir: &Path, name: &str, above: &mut Vec<PathBuf>, runs: &mut Vec<(String, Vec<PathBuf>)>) -> Result<()> {
        let io_error = |source| Error::Io { kind: KIND, path: dir.to_owned(), source };
        let canonical = std::fs::canonicalize(dir).map_err(io_error)?;
        if above.contains(&canonical) {
            return Ok(());
        }
        above.push(canonical);
        let mut files = Vec::new();
        let mut subdirs = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io_error)? {
            let path = entry.map_err(io_error)?.path();
            if path.is_dir() {
                subdirs.push(path);
            } else if is_event_file_name(&path) {
                files.push(path);
            }
        }
        files.sort();
        subdirs.sort();
        if !files.is_empty() {
            runs.push((name.to_owned(), files));
        }
        for sub in subdirs {
            let base = sub.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let sub_name = if name == "." { base } else { format!("{name}/{base}") };
            walk(&sub, &sub_name, above, runs)?;
        }
        above.pop();
        Ok(())
    }
    let mut found = Vec::new();
    walk(dir, ".", &mut Vec::new(), &mut found)?;
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// The event files `--events_path` (and `--events_run`) name.
fn event_files(path: &Path, run: Option<&str>) -> Result<Vec<PathBuf>> {
    let metadata = std::fs::metadata(path).map_err(|source| Error::Io { kind: KIND, path: path.to_owned(), source })?;
    if !metadata.is_dir() {
        if let Some(run) = run {
            return Err(Error::flag("--events_run", format!("picks run '{run}' of a log directory, but {KIND} {} is a file", path.display())));
        }
        return Ok(vec![path.to_owned()]);
    }
    let mut runs = runs(path)?;
    let names = |runs: &[(String, Vec<PathBuf>)]| runs.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>().join(", ");
    match run {
        Some(run) => {
            // `train`, `./train` and `train/` are one run; `.` is the directory itself.
            let normal = |name: &str| Path::new(name).components().filter(|c| *c != std::path::Component::CurDir).collect::<PathBuf>();
            match runs.iter().position(|(name, _)| normal(name) == normal(run)) {
                Some(at) => Ok(runs.swap_remove(at).1),
                None if runs.is_empty() => Err(Error::input(KIND, path, "no event files (events.out.tfevents.*) in this directory")),
                None => Err(Error::input(KIND, path, format!("has no run '{run}' (--events_run); its runs: {}", names(&runs)))),
            }
        }
        None => match runs.len() {
            0 => Err(Error::input(KIND, path, "no event files (events.out.tfevents.*) in this directory")),
            1 => Ok(runs.swap_remove(0).1),
            n => Err(Error::input(KIND, path, format!("holds {n} runs: {}; pick one with --events_run NAME", names(&runs)))),
        },
    }
}

/// `--events_tags`: one regex that must match the whole tag, RE2 syntax as
/// every rtfprof regex.
pub fn tag_filter(pattern: &str) -> Result<RegexList> {
    RegexList::from_patterns("events_tags", vec![pattern.to_owned()])
}

/// An event log as `--graph_path` and `--run_meta_path` records.
#[derive(Debug, Default)]
pub struct EventLog {
    pub graph: GraphRecord,
    /// One per step, in file order.
    pub run_metas: Vec<RunMetaFile>,
    /// The start-up lines listing the steps and their tags.
    pub listing: String,
    /// Lines for stderr (partial records, several graphs).
    pub warnings: Vec<String>,
}

/// What [`load`] reads from `--events_path` and how.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    pub run: Option<&'a str>,
    pub tags: Option<&'a str>,
    /// Keep all node attributes (see [`super::decode_graph`]).
    pub with_attrs: bool,
    /// What to keep of the run metadata (see [`super::RunMetaFile`]).
    pub run_meta: super::run_meta::Detail,
}

/// Reads an event file or a run's event files (in parallel), then decodes
/// the graph.
pub fn load(path: &Path, options: Options) -> Result<EventLog> {
    let tags = options.tags.map(tag_filter).transpose()?;
    let files = event_files(path, options.run)?;
    let per_file = files.par_iter().map(|file| read_file(file)).collect::<Result<Vec<_>>>()?;
    let mut log = EventLog::default();
    let (mut graphs, mut meta_graphs, mut run_metas) = (Vec::new(), Vec::new(), Vec::new());
    for events in per_file {
        graphs.extend(events.graphs);
        meta_graphs.extend(events.meta_graphs);
        run_metas.extend(events.run_metas);
        log.warnings.extend(events.warning);
    }
    let from_meta = graphs.is_empty();
    let candidates = if from_meta { &meta_graphs } else { &graphs };
    if let Some(newest) = candidates.last() {
        let distinct = candidates.iter().filter(|g| g.bytes != newest.bytes).count();
        if distinct > 0 {
            log.warnings.push(format!(
                "rtfprof: warning: {KIND} {}: {} graphs differ; using the newest, in {} at byte {}, as TensorBoard does",
                path.display(),
                distinct + 1,
                file_name(&newest.file),
                newest.offset
            ));
        }
        let what = if from_meta { "the graph of the meta graph" } else { "the graph" };
        log.graph = super::decode_graph(newest.bytes.clone(), &newest.file, options.with_attrs).map_err(|e| match e {
            Error::Input { message, .. } => Error::input(KIND, &newest.file, format!("{what} at byte {}: {message}", newest.offset)),
            other => other,
        })?;
    }
    if let Some(tags) = &tags {
        let all: Vec<String> = run_metas.iter().map(|r| quoted(&r.tag)).collect();
        run_metas.retain(|r| tags.matches(&r.tag));
        if run_metas.is_empty() && !all.is_empty() {
            return Err(Error::input(
                KIND,
                path,
                format!("no run metadata tag matches --events_tags '{}' (its tags: {})", tags.patterns()[0], abbreviate(&all)),
            ));
        }
    }
    let (steps, no_stats): (Vec<_>, Vec<_>) = run_metas.into_iter().partition(|r| super::run_meta::has_step_stats(&r.found.bytes));
    if steps.is_empty() {
        let why = match no_stats.len() {
            0 => "it holds no run metadata (add_run_metadata records or TF2 trace_export summaries)".to_owned(),
            n => format!("its {n} run metadata hold graphs only, as TF2's trace_export writes them"),
        };
        return Err(Error::input(KIND, path, format!("no step stats: {why}; TF2 records step stats in profiler traces, read those with --xplane_path")));
    }
    for (step, tagged) in steps.iter().enumerate() {
        log.listing.push_str(&format!("step {step}: {} ({})\n", quoted(&tagged.tag), file_name(&tagged.found.file)));
    }
    for tagged in &no_stats {
        log.listing.push_str(&format!("no step stats: {} ({})\n", quoted(&tagged.tag), file_name(&tagged.found.file)));
    }
    log.run_metas = steps
        .into_iter()
        .map(|Tagged { tag, found }| RunMetaFile {
            path: found.file,
            bytes: found.bytes,
            detail: options.run_meta,
            in_events: Some(format!("run metadata {} (record at byte {})", quoted(&tag), found.offset)),
        })
        .collect();
    Ok(log)
}

/// A tag as printed: quoted, with control characters and quotes escaped
/// (tags are data).
fn quoted(tag: &str) -> String {
    format!("\"{}\"", tag.escape_debug())
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap_or(path.as_os_str()).to_string_lossy().escape_debug().to_string()
}

/// The first few of a list, then how many more.
fn abbreviate(items: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut text = items.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > SHOWN {
        text.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;
    use crate::proto::tensorflow::{Event, event, summary};

    fn testdata(path: &str) -> PathBuf {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata").join(path)
    }

    const TUTORIAL: &str = "events/tutorial/events.out.tfevents.1700000000.tutorial";

    /// What the generated (complete) decode reduces to.
    #[allow(deprecated)] // LogMessage: still a member of the oneof
    fn reduced(event: &Event) -> What {
        let first_string = |t: &crate::proto::tensorflow::TensorProto| {
            let strings = TensorStrings { string_val: t.string_val.iter().map(Vec::as_slice).collect(), tensor_content: &t.tensor_content };
            Bytes::copy_from_slice(strings.first())
        };
        match &event.what {
            None => What::None,
            Some(event::What::FileVersion(v)) => What::FileVersion(v.clone()),
            Some(event::What::GraphDef(g)) => What::GraphDef(Bytes::copy_from_slice(g)),
            Some(event::What::MetaGraphDef(g)) => What::MetaGraphDef(Bytes::copy_from_slice(g)),
            Some(event::What::TaggedRunMetadata(t)) => What::TaggedRunMetadata { tag: t.tag.clone(), run_metadata: Bytes::copy_from_slice(&t.run_metadata) },
            Some(event::What::Summary(s)) => What::Summary(
                s.value
                    .iter()
                    .filter_map(|v| {
                        let plugin = v.metadata.as_ref()?.plugin_data.as_ref()?.plugin_name.clone();
                        RUN_METADATA_PLUGINS.contains(&plugin.as_str()).then(|| SummaryRunMetadata {
                            tag: v.tag.clone(),
                            plugin,
                            run_metadata: match &v.value {
                                Some(summary::value::Value::Tensor(t)) => first_string(t),
                                _ => Bytes::new(),
                            },
                        })
                    })
                    .collect(),
            ),
            Some(event::What::LogMessage(_) | event::What::SessionLog(_)) => What::Other,
        }
    }

    fn records(path: &str) -> Vec<(usize, Bytes)> {
        let path = testdata(path);
        split_records(&Bytes::from(std::fs::read(&path).unwrap()), &path).unwrap().0
    }

    /// Every record of the fixtures decodes as the generated decode does,
    /// and the fixtures have each kind of event rtfprof reads.
    #[test]
    fn events_are_the_generated_decode_reduced() {
        let mut kinds = std::collections::BTreeSet::new();
        for file in [
            TUTORIAL,
            "events/tutorial/events.out.tfevents.1700000060.tutorial",
            "events/tf2_trace/events.out.tfevents.1700000000.trace.v2",
            "events/summary_run_metadata/events.out.tfevents.1700000000.summary.v2",
        ] {
            for (_, record) in records(file) {
                let ours = decode_event(&record).unwrap();
                assert_eq!(ours, reduced(&Event::decode(record.clone()).unwrap()), "{file}");
                kinds.insert(match ours {
                    What::Summary(v) if !v.is_empty() => "run metadata summary",
                    What::Summary(_) => "other summary",
                    What::TaggedRunMetadata { .. } => "tagged run metadata",
                    What::GraphDef(_) => "graph",
                    What::MetaGraphDef(_) => "meta graph",
                    What::FileVersion(_) => "file version",
                    What::None | What::Other => "other",
                });
            }
        }
        assert_eq!(kinds.len(), 6, "{kinds:?}");
    }

    /// Records with bytes changed at random: wherever the generated decode
    /// takes one, this decode gives its reduction, and no change panics.
    #[test]
    fn corrupted_events_decode_like_the_generated_decode() {
        let mut rng = crate::test_random::XorShift::new(0x6a09_e667_f3bc_c908);
        let mut taken = 0;
        let sources: Vec<Bytes> = [TUTORIAL, "events/summary_run_metadata/events.out.tfevents.1700000000.summary.v2"]
            .iter()
            .flat_map(|f| records(f))
            .map(|(_, r)| r)
            .filter(|r| r.len() < 30_000)
            .collect();
        for round in 0..4000 {
            let mut bad = sources[round % sources.len()].to_vec();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(bad.len() as u64) as usize;
                bad[at] = rng.next() as u8;
            }
            let bad = Bytes::from(bad);
            let ours = decode_event(&bad);
            if let Ok(full) = Event::decode(bad.clone()) {
                assert_eq!(ours.unwrap(), reduced(&full), "round {round}");
                taken += 1;
            }
        }
        assert!(taken > 200, "only {taken} corrupted records decode: the test checks little");
    }

    /// Repeated fields merge as in the generated decode: the oneof keeps its
    /// last member, a repeated message member merges.
    #[test]
    fn oneof_members_merge_like_the_generated_decode() {
        use crate::proto::tensorflow::{SummaryMetadata, TaggedRunMetadata, TensorProto, summary_metadata::PluginData};
        let encode = |what: event::What| Event { what: Some(what), ..Default::default() }.encode_to_vec();
        let run_meta_value = |tag: &str, plugin: &str, content: Vec<u8>| summary::Value {
            tag: tag.into(),
            metadata: Some(SummaryMetadata { plugin_data: Some(PluginData { plugin_name: plugin.into(), content: b"1".to_vec() }), ..Default::default() }),
            value: Some(summary::value::Value::Tensor(TensorProto { tensor_content: content, ..Default::default() })),
            ..Default::default()
        };
        let pieces = [
            encode(event::What::GraphDef(b"graph".to_vec())),
            encode(event::What::TaggedRunMetadata(TaggedRunMetadata { tag: "a".into(), run_metadata: b"rm".to_vec() })),
            encode(event::What::TaggedRunMetadata(TaggedRunMetadata { tag: "b".into(), ..Default::default() })),
            encode(event::What::Summary(crate::proto::tensorflow::Summary {
                value: vec![
                    run_meta_value("t", "graph_run_metadata", vec![3, b'x', b'y', b'z']),
                    run_meta_value("u", "scalars", vec![]),
                    run_meta_value("v", "graph_run_metadata_graph", vec![9, b'x']),
                ],
            })),
            encode(event::What::Summary(crate::proto::tensorflow::Summary {
                value: vec![summary::Value { value: Some(summary::value::Value::SimpleValue(1.0)), ..run_meta_value("w", "graph_run_metadata", vec![1, 0]) }],
            })),
        ];
        for end in 1..=pieces.len() {
            for start in 0..end {
                let wire = Bytes::from(pieces[start..end].concat());
                assert_eq!(decode_event(&wire).unwrap(), reduced(&Event::decode(wire.clone()).unwrap()), "pieces {start}..{end}");
            }
        }
        let wire = Bytes::from(pieces[1..3].concat());
        assert_eq!(decode_event(&wire).unwrap(), What::TaggedRunMetadata { tag: "b".into(), run_metadata: Bytes::from_static(b"rm") });
        let wire = Bytes::from(pieces[3..5].concat());
        let What::Summary(values) = decode_event(&wire).unwrap() else { panic!("a summary") };
        let got: Vec<(&str, &[u8])> = values.iter().map(|v| (v.tag.as_str(), &v.run_metadata[..])).collect();
        assert_eq!(got, [("t", &b"xyz"[..]), ("v", b""), ("w", b"")]);
    }

    fn record(data: &[u8]) -> Vec<u8> {
        let len = (data.len() as u64).to_le_bytes();
        let mut out = len.to_vec();
        out.extend(mask_crc(crc32c::crc32c(&len)).to_le_bytes());
        out.extend_from_slice(data);
        out.extend(mask_crc(crc32c::crc32c(data)).to_le_bytes());
        out
    }

    /// The framing: both checksums checked, a cut anywhere in the last
    /// record is a partial record, a changed byte anywhere else an error
    /// naming its record.
    #[test]
    fn records_are_framed_and_checked() {
        let path = Path::new("f");
        let file = [record(b"first"), record(b""), record(b"third record")].concat();
        let (records, partial) = split_records(&Bytes::from(file.clone()), path).unwrap();
        let offsets: Vec<usize> = records.iter().map(|r| r.0).collect();
        assert_eq!(offsets, [0, 21, 37]);
        assert_eq!(records[2].1, Bytes::from_static(b"third record"));
        assert_eq!(partial, None);
        for cut in 37..file.len() {
            let (records, partial) = split_records(&Bytes::copy_from_slice(&file[..cut]), path).unwrap();
            assert_eq!((records.len(), partial), (2, (cut > 37).then_some(37)), "cut at {cut}");
        }
        for at in 0..37 {
            let mut bad = file.clone();
            bad[at] ^= 0x10;
            let err = split_records(&Bytes::from(bad), path).unwrap_err().to_string();
            let start = if at < 21 { 0 } else { 21 };
            let want = match (start, at - start < HEADER_LEN) {
                (0, true) => "not an event file (no TFRecord at byte 0: length checksum mismatch)".to_owned(),
                (_, true) => format!("record at byte {start}: length checksum mismatch"),
                (_, false) => format!("record at byte {start}: data checksum mismatch"),
            };
            assert!(err.contains(&want), "byte {at}: {err}");
        }
    }

    /// A real event file cut anywhere reads its complete records and
    /// reports where the partial one starts.
    #[test]
    fn a_cut_event_file_keeps_its_complete_records() {
        let path = testdata(TUTORIAL);
        let whole = Bytes::from(std::fs::read(&path).unwrap());
        let (all, _) = split_records(&whole, &path).unwrap();
        let mut rng = crate::test_random::XorShift::new(7);
        for _ in 0..200 {
            let cut = rng.below(whole.len() as u64) as usize;
            let (records, partial) = split_records(&whole.slice(..cut), &path).unwrap();
            let complete = all.iter().filter(|(offset, data)| offset + HEADER_LEN + data.len() + FOOTER_LEN <= cut).count();
            assert_eq!(records.len(), complete, "cut at {cut}");
            assert_eq!(partial, all.get(complete).map(|r| r.0).filter(|&offset| offset < cut), "cut at {cut}");
        }
    }

    /// A byte changed anywhere in a real event file is an error naming the
    /// record it is in: both checksums cover every byte.
    #[test]
    fn a_changed_byte_is_an_error_naming_its_record() {
        let path = testdata(TUTORIAL);
        let whole = std::fs::read(&path).unwrap();
        let (all, _) = split_records(&Bytes::from(whole.clone()), &path).unwrap();
        let mut rng = crate::test_random::XorShift::new(11);
        for _ in 0..300 {
            let at = rng.below(whole.len() as u64) as usize;
            let mut bad = whole.clone();
            bad[at] ^= 1 << rng.below(8);
            let start = all.iter().rev().map(|r| r.0).find(|&offset| offset <= at).unwrap();
            let err = split_records(&Bytes::from(bad), &path).unwrap_err().to_string();
            let named = if start == 0 && at < 12 { "no TFRecord at byte 0".to_owned() } else { format!("record at byte {start}:") };
            assert!(err.contains(&named), "byte {at}: {err}");
        }
    }

    /// Linked run directories are runs (as in TensorBoard); links back up
    /// are not followed.
    #[test]
    fn linked_runs_are_runs_and_links_up_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("train");
        std::fs::create_dir(&run).unwrap();
        std::fs::copy(testdata(TUTORIAL), run.join("events.out.tfevents.1")).unwrap();
        std::os::unix::fs::symlink(&run, dir.path().join("linked")).unwrap();
        for name in ["up", "up2", "up3"] {
            std::os::unix::fs::symlink(dir.path(), run.join(name)).unwrap();
        }
        let names: Vec<String> = runs(dir.path()).unwrap().into_iter().map(|r| r.0).collect();
        assert_eq!(names, ["linked", "train"]);
    }

    #[test]
    fn run_names_are_relative_paths() {
        let runs = runs(&testdata("events")).unwrap();
        let names: Vec<&str> = runs.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(names, ["summary_run_metadata", "tf2_trace", "tutorial"]);
        assert_eq!(runs[2].1.len(), 2);
        assert!(runs[2].1.windows(2).all(|w| w[0] < w[1]));
    }
}
