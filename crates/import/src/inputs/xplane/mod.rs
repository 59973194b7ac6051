//! `--xplane_path`: the profiler traces TF2 and JAX write
//! (`logdir/plugins/profile/<run>/<host>.xplane.pb`, an `XSpace` proto).
//!
//! A layer that every reader of a trace goes through, so that each rule is
//! written once:
//! 1. Decoding. `decode` reads the wire format in place: planes with their
//!    metadata, lines whose events are decoded as they are walked
//!    ([`Line::walk`]: a long line's pieces decoded on every core,
//!    a few ahead, in file order; its pages given back once walked). [`XplaneFile::check`] refuses
//!    a file that is no trace, in the same words for every reader.
//! 2. What things are. [`planes`]: the kind of a plane (host, GPU, TPU,
//!    metadata) and the lines XProf derived; [`stats`]: the stats rtfprof
//!    reads, by their ids, one map a plane ([`ids`]: lookups by id);
//!    [`names`]: which events are ops and which are memcpys (XProf's rules
//!    and rtfprof's own, side by side).
//! 3. Programs. [`hlo`] reads the XLA programs of the metadata plane;
//!    [`thunks`] replays their thunks (which tells a command buffer's
//!    kernels apart).
//! 4. Readers. [`convert`] turns executions into the per-step totals the
//!    node model takes ([`crate::stats::Stats::add_exec_totals`]) and the
//!    device tables; `rtfprof::steps::xplane` is XProf's step breakdown
//!    (`rtfprof steps`); `rtfprof::outputs::timeline::write_xplane` writes a
//!    trace's own events as a timeline.

pub mod convert;
pub mod cut;
mod decode;
pub mod hlo;
pub mod ids;
pub mod names;
pub mod planes;
pub mod stats;
pub mod thunks;

/// The event API: what readers outside this module (the steps, ranks and
/// device analyses, advice, the timeline) walk a trace in place with. A
/// [`Space`]'s [`Plane`]s hold their metadata and [`Line`]s whose [`Event`]s
/// are decoded as they are walked ([`Line::walk`]), with their stats
/// ([`StatValue`], by [`StatIds`]); [`Shapes`] reads events by the shapes of
/// those read before; [`Release`] says when a walk gives its pages back. The
/// wire decoder behind them (`decode`) is this module's own.
pub use decode::{Event, Line, Plane, Release, Shapes, Space, StatIds, StatValue};

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

const FLAG: &str = "--xplane_path";
const SUFFIX: &str = ".xplane.pb";

/// A mapped trace file.
#[derive(Clone, Debug)]
pub struct XplaneFile {
    pub path: PathBuf,
    pub bytes: bytes::Bytes,
    /// The mapping behind `bytes`, for large files: its pages are given
    /// back when a walk ends, or as they are read (see [`Pages`]).
    pages: Pages,
}

/// Traces at least this large are mapped without reading them in first.
const MAP_LAZILY_AT_LEAST: u64 = 64 << 20;

/// Traces at least this large give their pages back as each walk passes
/// them: a 1 GB trace is not resident whole besides what is made of it.
/// Smaller ones keep them until the walk ends: its framing walk maps them
/// and the reading finds them mapped, instead of faulting each page in
/// again (bench/README.md).
const GIVE_BACK_AS_WALKED_AT_LEAST: usize = 512 << 20;

/// The pages of a mapped trace, and when they are given back (none for a
/// trace read into memory).
#[derive(Clone, Debug, Default)]
struct Pages(Option<std::sync::Arc<memmap2::Mmap>>);

/// The largest folio (block of pages) the page cache keeps a file in on
/// x86-64 and arm64 with 4 KB pages (2 MB, `MAX_PAGECACHE_ORDER`). Linux
/// maps a whole large folio on a fault: reading the start of a part maps
/// the end of the part before it again, after it was given back.
const LARGEST_FOLIO: usize = 2 << 20;

impl Pages {
    /// Gives back `part` if the trace's pages go back as they are walked,
    /// from the start of the largest folio `part` starts in: the pages of
    /// the parts before that its reading mapped again go back too (on a
    /// 1 GB TF2 trace 0.65 GB stayed resident otherwise, bench/README.md).
    fn release(&self, part: &[u8]) {
        let Some(map) = self.0.as_deref().filter(|map| map.len() >= GIVE_BACK_AS_WALKED_AT_LEAST) else { return };
        let offset = (part.as_ptr() as usize).wrapping_sub(map.as_ptr() as usize);
        if let Some(range) = folio_range(offset, part.len(), map.len()) {
            release_pages(map, range);
        }
    }

    /// A walk over the trace ended: every page goes back.
    fn walked(&self) {
        if let Some(map) = self.0.as_deref() {
            release_pages(map, 0..map.len());
        }
    }
}

impl XplaneFile {
    pub fn open(path: &Path) -> Result<XplaneFile> {
        let io_error = |source| Error::Io { kind: FLAG, path: path.to_owned(), source };
        let file = std::fs::File::open(path).map_err(io_error)?;
        let metadata = file.metadata().map_err(io_error)?;
        if metadata.is_file() && metadata.len() >= MAP_LAZILY_AT_LEAST {
            // SAFETY: as in `map_file`: read-only, and rtfprof assumes its
            // inputs are not truncated while it runs. Not populated: a
            // trace of 1 GB would be resident before a byte is decoded.
            if let Ok(map) = unsafe { memmap2::Mmap::map(&file) }
                && !super::sniff::is_gzip(&map)
            {
                let map = std::sync::Arc::new(map);
                let bytes = bytes::Bytes::from_owner(SharedMap(map.clone()));
                return Ok(XplaneFile { path: path.to_owned(), bytes, pages: Pages(Some(map)) });
            }
        }
        Ok(XplaneFile { path: path.to_owned(), bytes: super::map_file(FLAG, path)?, pages: Pages::default() })
    }

    /// Gives back the pages of `part` (a slice of `bytes`) that a walk
    /// has read, in a large trace: they leave the process's resident
    /// memory and are read again from the page cache if touched. The peak
    /// resident size of a 1 GB trace's conversion is then not the file's
    /// size plus the results.
    pub fn release(&self, part: &[u8]) {
        self.pages.release(part);
    }

    /// Gives back every page of a mapped trace: call when a walk over it
    /// ended (the pages [`XplaneFile::release`] left are then released).
    pub fn walked(&self) {
        self.pages.walked();
    }

    /// Whether the file holds an `XSpace` trace, from its framing and its
    /// planes' names alone (the readers' walks find the rest): a file cut
    /// short (see [`truncation`]), one that is no protobuf message, and one
    /// without a named plane are errors naming it, for every reader.
    pub fn check(&self) -> Result<()> {
        check(&self.path, &self.bytes)
    }

    /// Converts the trace, giving its totals to `sink` as they are made; a
    /// file that is not an `XSpace` is an error naming it. Keeps what
    /// `keep` asks for.
    pub fn convert(&self, keep: convert::Keep, sink: convert::TotalsSink<'_>) -> Result<convert::Converted> {
        self.check()?;
        let converted = convert::convert_releasing(&self.bytes, keep, &|part| self.release(part), sink);
        self.walked();
        converted.map_err(|e| not_an_xspace(&self.path, &e))
    }
}

/// [`XplaneFile::check`] of `bytes`, the file at `path`.
fn check(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(message) = truncation(bytes) {
        return Err(refused(path, message));
    }
    let space = decode::Space::decode(bytes).map_err(|e| not_an_xspace(path, &e))?;
    // (A plane whose name does not decode is left to the readers, which
    // say what is wrong with it.)
    if space.planes.iter().all(|plane| matches!(decode::Plane::decode_name(plane), Ok(""))) {
        return Err(refused(path, "no planes"));
    }
    Ok(())
}

/// A trace that a reader found malformed: the error names the file and
/// what is wrong, in one line.
pub fn not_an_xspace(path: &Path, error: &prost::DecodeError) -> Error {
    refused(path, super::read::describe_decode_error(error))
}

fn refused(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::input(FLAG, path, format!("not an XSpace trace ({why})"))
}

/// The bytes from the start of the largest folio that the part at
/// `offset` (`len` bytes) of a mapping of `size` bytes starts in, to its
/// end; `None` for a part outside the mapping.
fn folio_range(offset: usize, len: usize, size: usize) -> Option<std::ops::Range<usize>> {
    let end = offset.checked_add(len).filter(|&end| end <= size)?;
    Some(offset / LARGEST_FOLIO * LARGEST_FOLIO..end)
}

/// Drops the resident pages of the bytes `range` of `map` (a range
/// within it).
fn release_pages(map: &memmap2::Mmap, range: std::ops::Range<usize>) {
    if !range.is_empty() {
        // SAFETY: the map is a read-only shared file mapping: dropping its
        // pages loses nothing, and slices into it stay valid.
        let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, range.start, range.len()) };
    }
}

/// Keeps a mapping alive as the owner of [`bytes::Bytes`].
struct SharedMap(std::sync::Arc<memmap2::Mmap>);

impl AsRef<[u8]> for SharedMap {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Whether a top-level field runs past the end of the file, found from the
/// framing alone (a few bytes per plane, not the whole file): a trace cut
/// short, or one whose bytes a copy changed (a text filter that rewrote
/// line ends or invalid UTF-8 moves every length after it). Names the
/// byte offsets, and does not guess which.
pub fn truncation(wire: &[u8]) -> Option<String> {
    use prost::encoding::{DecodeContext, WireType, decode_key, decode_varint, skip_field};
    let ends = || format!("the file ends at byte {}", wire.len());
    let mut rest = wire;
    while !rest.is_empty() {
        let at = wire.len() - rest.len();
        // (A varint is at most 10 bytes: a failure nearer the end is a cut.)
        let near_end = rest.len() < 10;
        let Ok((tag, wire_type)) = decode_key(&mut rest) else {
            return near_end.then(|| format!("{}: inside the key of the field at byte {at}", ends()));
        };
        let what = if tag == 1 { "plane" } else { "field" };
        if wire_type != WireType::LengthDelimited {
            // Not a trace's framing: the decoder says what is wrong.
            skip_field(wire_type, tag, &mut rest, DecodeContext::default()).ok()?;
            continue;
        }
        let near_end = rest.len() < 10;
        let Ok(len) = decode_varint(&mut rest) else {
            return near_end.then(|| format!("{}: inside the length of the {what} at byte {at}", ends()));
        };
        let start = wire.len() - rest.len();
        if len > rest.len() as u64 {
            return Some(format!(
                "a length runs past the end of the file: the {what} at byte {at} claims {len} bytes, to byte {}, but {} (cut short, or its bytes changed by a copy)",
                start as u64 + len,
                ends()
            ));
        }
        rest = &rest[len as usize..];
    }
    None
}

impl XplaneFile {
    /// Converts the trace into `stats` (which may hold a GraphDef's nodes
    /// already): its executions as per-step totals, its memory totals,
    /// Python frames and what `keep` asks for (allocator events, the
    /// instructions' times per step). Returns what outlives the conversion
    /// and the start-up lines.
    pub fn import(&self, stats: &mut crate::stats::Stats, keep: convert::Keep) -> Result<(TraceSource, String)> {
        let mut known = crate::stats::InputNodes::default();
        let mut converted = self.convert(keep, &mut |names, totals| {
            stats.add_exec_totals(&mut known, totals.len(), |i| names.exec_total(&totals[i]));
        })?;
        stats.add_memory_totals(&converted.memory);
        stats.add_frames(&converted.frames);
        stats.add_allocator_events(std::mem::take(&mut converted.allocator_events));
        let listing = format!("Reading Files...\n{}", summary(&self.path, &converted, stats));
        Ok((TraceSource::new(self, &mut converted), listing))
    }
}

/// The start-up lines of an XPlane trace: what it holds and how it was split
/// into steps.
fn summary(path: &Path, trace: &convert::Converted, stats: &crate::stats::Stats) -> String {
    let mut lines = format!(
        "xplane: {}: {} planes ({}), {} op executions, {} nodes\n",
        path.display(),
        trace.planes.len(),
        trace.planes.join(", "),
        trace.executions,
        stats.nodes.len()
    );
    if trace.steps.is_empty() {
        lines.push_str("xplane: no step markers: the whole trace is step 0\n");
    } else {
        let mut names: Vec<&str> = trace.steps.values().map(|s| s.name.as_str()).collect();
        names.dedup();
        let steps: Vec<i64> = trace.steps.keys().copied().collect();
        lines.push_str(&format!("xplane: steps {} (markers '{}')", format_ranges(&steps), names.join("', '")));
        match trace.outside_step {
            Some(step) => lines.push_str(&format!("; step {step}: executions outside every marker\n")),
            None => lines.push('\n'),
        }
    }
    if trace.memory_events == 0 {
        lines.push_str("xplane: the trace holds no memory records: the bytes columns are 0\n");
    } else {
        lines.push_str(&format!(
            "xplane: {} allocator events: bytes go to the op their tf_op names ({} allocations name no op)\n",
            trace.memory_events, trace.unattributed_allocations
        ));
    }
    lines
}

/// `0..3, 7, 9..12` for a sorted list of step numbers.
fn format_ranges(steps: &[i64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < steps.len() {
        let mut j = i;
        while j + 1 < steps.len() && steps[j + 1] == steps[j] + 1 {
            j += 1;
        }
        parts.push(if j > i { format!("{}..{}", steps[i], steps[j]) } else { steps[i].to_string() });
        i = j + 1;
    }
    parts.join(", ")
}

/// A trace kept for outputs that show its events (timelines), with the
/// steps its markers gave.
#[derive(Debug)]
pub struct TraceSource {
    pub path: PathBuf,
    pub bytes: bytes::Bytes,
    pub steps: std::collections::BTreeMap<i64, convert::StepSpan>,
    pub outside_step: Option<i64>,
    /// The XLA instructions and kernels that ran (`rtfprof hlo`, `kernels`).
    pub device: crate::stats::records::device::Tables,
    /// The mapping behind `bytes`, for large files (see [`Self::release`]).
    pages: Pages,
}

/// Which events of a trace a step selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepWindow {
    /// Every event (`--step -1`, or a trace without markers).
    All,
    /// Events that start in `[start, end)` picoseconds.
    Span(i128, i128),
    /// Events outside every marker (the step after the last).
    Outside(Vec<(i128, i128)>),
    /// A step this trace does not have.
    Nothing,
}

impl StepWindow {
    pub fn contains(&self, t: i128) -> bool {
        match self {
            StepWindow::All => true,
            StepWindow::Span(start, end) => *start <= t && t < *end,
            StepWindow::Outside(spans) => !spans.iter().any(|(start, end)| *start <= t && t < *end),
            StepWindow::Nothing => false,
        }
    }
}

impl TraceSource {
    /// The trace of `file`, with what its conversion found besides nodes:
    /// its steps and device tables.
    pub fn new(file: &XplaneFile, converted: &mut convert::Converted) -> TraceSource {
        TraceSource {
            path: file.path.clone(),
            bytes: file.bytes.clone(),
            steps: std::mem::take(&mut converted.steps),
            outside_step: converted.outside_step,
            device: std::mem::take(&mut converted.device),
            pages: file.pages.clone(),
        }
    }

    /// Gives back the pages of `part` once walked, as
    /// [`XplaneFile::release`] does: a timeline walks the whole trace for
    /// one step's events.
    pub fn release(&self, part: &[u8]) {
        self.pages.release(part);
    }

    /// Gives back every page of a mapped trace, as [`XplaneFile::walked`].
    pub fn walked(&self) {
        self.pages.walked();
    }

    /// The mapped file the trace was read from (its bytes and pages
    /// shared, not copied), for readers that walk a file again after it
    /// was loaded, giving its pages back as they go (`ranks`' summary of a
    /// partial's host).
    pub fn file(&self) -> XplaneFile {
        XplaneFile { path: self.path.clone(), bytes: self.bytes.clone(), pages: self.pages.clone() }
    }

    pub fn window(&self, step: i64) -> StepWindow {
        if step < 0 || (self.steps.is_empty() && step == 0) {
            return StepWindow::All;
        }
        if let Some(span) = self.steps.get(&step) {
            return StepWindow::Span(span.start_ps, span.end_ps);
        }
        if self.outside_step == Some(step) {
            return StepWindow::Outside(self.steps.values().map(|s| (s.start_ps, s.end_ps)).collect());
        }
        StepWindow::Nothing
    }
}

/// The trace files `--xplane_path` names: one file; a run directory (every
/// host's file); or a log directory (a run under `plugins/profile/`, the
/// newest by name unless `run` names one).
#[derive(Debug, PartialEq, Eq)]
pub struct Located {
    /// (host, file), by host name.
    pub hosts: Vec<(String, PathBuf)>,
    /// Which run was taken among several, for the start-up lines.
    pub note: Option<String>,
}

pub fn locate(path: &Path, run: Option<&str>) -> Result<Located> {
    let io_error = |source| Error::Io { kind: FLAG, path: path.to_owned(), source };
    let metadata = std::fs::metadata(path).map_err(io_error)?;
    if !metadata.is_dir() {
        if run.is_some() {
            return Err(Error::flag("--xplane_run", "needs a log directory as --xplane_path"));
        }
        return Ok(Located { hosts: vec![(host_name(path), path.to_owned())], note: None });
    }
    let hosts = host_files(path)?;
    if !hosts.is_empty() {
        if run.is_some() {
            return Err(Error::flag("--xplane_run", format!("{} is a run directory, not a log directory", path.display())));
        }
        return Ok(Located { hosts, note: None });
    }
    let profile_dir = profile_dir(path)?;
    let mut runs: Vec<String> = std::fs::read_dir(&profile_dir)
        .map_err(|source| Error::Io { kind: FLAG, path: profile_dir.clone(), source })?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .collect();
    runs.sort();
    let listed = || runs.join(", ");
    let chosen = match run {
        Some(name) => runs
            .iter()
            .find(|r| *r == name)
            .ok_or_else(|| Error::flag("--xplane_run", format!("no run '{name}' under {} (runs: {})", profile_dir.display(), listed())))?,
        None => runs.last().ok_or_else(|| Error::input(FLAG, &profile_dir, "holds no profiler runs"))?,
    };
    let run_dir = profile_dir.join(chosen);
    let hosts = host_files(&run_dir)?;
    if hosts.is_empty() {
        return Err(Error::input(FLAG, &run_dir, format!("holds no *{SUFFIX} trace")));
    }
    let note = (runs.len() > 1 && run.is_none()).then(|| {
        format!("xplane: {} runs under {} ({}); reading the newest, {chosen} (--xplane_run NAME for another)", runs.len(), profile_dir.display(), listed())
    });
    Ok(Located { hosts, note })
}

/// `<dir>/plugins/profile`, or `<dir>/<sub>/plugins/profile` when exactly one
/// subdirectory has one (the Keras callback writes `logdir/train/...`).
fn profile_dir(dir: &Path) -> Result<PathBuf> {
    let direct = dir.join("plugins").join("profile");
    if direct.is_dir() {
        return Ok(direct);
    }
    let mut nested: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| Error::Io { kind: FLAG, path: dir.to_owned(), source })?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("plugins").join("profile"))
        .filter(|p| p.is_dir())
        .collect();
    nested.sort();
    match nested.len() {
        1 => Ok(nested.remove(0)),
        0 => {
            // A run directory one level down (a copied `run/`) is named, so
            // the user need not look for it.
            let mut runs: Vec<String> = std::fs::read_dir(dir)
                .map_err(|source| Error::Io { kind: FLAG, path: dir.to_owned(), source })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir() && host_files(p).is_ok_and(|hosts| !hosts.is_empty()))
                .map(|p| p.display().to_string())
                .collect();
            runs.sort();
            let hint = if runs.is_empty() { String::new() } else { format!("; traces are in {}: give that directory", runs.join(", ")) };
            Err(Error::input(FLAG, dir, format!("holds no *{SUFFIX} trace and no plugins/profile/ directory{hint}")))
        }
        _ => {
            let names: Vec<String> = nested.iter().filter_map(|p| p.parent()?.parent()?.file_name()?.to_str().map(str::to_owned)).collect();
            Err(Error::input(FLAG, dir, format!("holds several logs with profiles ({}): give one of them", names.join(", "))))
        }
    }
}

/// The `*.xplane.pb` (or gzipped `*.xplane.pb.gz`) files directly in
/// `dir`, by host name.
fn host_files(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut hosts: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|source| Error::Io { kind: FLAG, path: dir.to_owned(), source })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(SUFFIX) || n.strip_suffix(".gz").is_some_and(|n| n.ends_with(SUFFIX)))
        })
        .map(|p| (host_name(&p), p))
        .collect();
    hosts.sort();
    Ok(hosts)
}

/// `host0` for `…/host0.xplane.pb` (XProf names hosts after their files).
fn host_name(path: &Path) -> String {
    let file = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let file = file.strip_suffix(".gz").unwrap_or(file);
    file.strip_suffix(SUFFIX).unwrap_or(file).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tensorflow::profiler as xp;
    use prost::Message;

    /// A part walked is given back from the start of the 2 MB folio it
    /// starts in (the end of the part before may have been mapped again
    /// with it), to its own end; a part outside the mapping is not.
    #[test]
    fn parts_go_back_from_their_folio() {
        const MB: usize = 1 << 20;
        assert_eq!(folio_range(5 * MB + 17, MB, 64 * MB), Some(4 * MB..6 * MB + 17));
        assert_eq!(folio_range(4 * MB, 10, 64 * MB), Some(4 * MB..4 * MB + 10));
        assert_eq!(folio_range(MB, MB, 64 * MB), Some(0..2 * MB));
        assert_eq!(folio_range(63 * MB, MB, 64 * MB), Some(62 * MB..64 * MB));
        assert_eq!(folio_range(63 * MB, MB + 1, 64 * MB), None);
        assert_eq!(folio_range(usize::MAX - 3, 8, 64 * MB), None);
    }

    /// What [`check`] says of a file: nothing for a trace.
    fn refusal(bytes: &[u8]) -> String {
        check(Path::new("t.xplane.pb"), bytes).err().map_or_else(String::new, |e| e.to_string())
    }

    #[test]
    fn files_that_are_no_trace_are_refused_saying_why() {
        let space = |names: &[&str]| {
            let planes = names.iter().map(|&name| xp::XPlane { name: name.into(), ..Default::default() }).collect();
            xp::XSpace { planes, ..Default::default() }.encode_to_vec()
        };
        assert_eq!(refusal(&space(&["", "/host:CPU"])), "");
        assert_eq!(refusal(&space(&[])), "--xplane_path t.xplane.pb: not an XSpace trace (no planes)");
        assert_eq!(refusal(&space(&["", ""])), "--xplane_path t.xplane.pb: not an XSpace trace (no planes)");
        let whole = space(&["/host:CPU", "/device:GPU:0"]);
        assert!(refusal(&whole[..whole.len() - 3]).starts_with("--xplane_path t.xplane.pb: not an XSpace trace ("));
        // A group, which no trace holds.
        assert!(refusal(b"\x0b\x0c").starts_with("--xplane_path t.xplane.pb: not an XSpace trace ("));
        // A plane whose name is not UTF-8 is left to the readers, which say so.
        assert_eq!(refusal(b"\x0a\x03\x12\x01\xff"), "");
        assert!(convert::convert(b"\x0a\x03\x12\x01\xff", false).is_err());
    }
}
