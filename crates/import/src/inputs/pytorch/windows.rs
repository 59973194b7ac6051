//! A Kineto trace read a few steps at a time, so that the memory an
//! analysis needs is one window's, whatever the trace's length (the
//! book's `internals/large_traces.md` has the design and the figures).
//!
//! A window holds, by `cut`'s rule: metadata and untimed events; host
//! events that meet its span of time (its steps and one step either side,
//! the first and last windows open-ended); launches, device work and flows
//! that meet it or whose correlation is in its range, the range of the
//! correlations of the events (not flows) that meet its span (so that a
//! kernel and its launch are always read together, and a step's late GPU
//! work is whole).
//!
//! [`Windows::plan`] reads the file once (a `.gz` is first decompressed
//! to a temporary file, as the windows are read from it in place), on
//! several threads (`stream::segments::for_segments`), each event's few fields read
//! without the full parser (`EventFields::quick`). It keeps the top-level
//! fields, the `ProfilerStep` events (read as a small [`Trace`]:
//! [`Windows::steps`]), from which runs of consecutive steps of about a
//! [`Budget`] of text are made windows, and the file's events cut into
//! *chunks* of consecutive events (about `CHUNK_BYTES`, a new one where
//! the time goes back: a new thread or stream), each with the extremes of
//! its events' times and correlations: nothing per event.
//!
//! [`Windows::read`] decides from the chunks' extremes which chunks the
//! window holds whole and which not at all; only the others (those that
//! straddle its span's ends or its range's: a few MB a window) are read
//! event by event, first those that set its correlation range, then those
//! that the range leaves undecided. The events it holds, as runs of the
//! file's bytes, are then read into an ordinary [`Trace`]: the same events,
//! in the same order, as the rule above picks event by event.
//!
//! Windows overlap (a step either side): each window *owns*
//! the time from its first step's start to the next window's first step's
//! start ([`Window::own`]), so that an analysis that merges windows can
//! count every event once, by its own start or by its launch's.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::json::{Next, Parser, SyntaxError};
use super::stream::fields::{EventFields, Ph};
use super::stream::segments::{End, events_of, for_segments};
use super::{KIND, Trace};
use crate::error::{Error, Result};

/// How much of the trace's text a window holds (about; a window is at
/// least one step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// About this many bytes of JSON a window.
    Bytes(u64),
    /// This many steps a window (for tests: one step a window is the
    /// hardest case for merging).
    Steps(usize),
}

impl Budget {
    /// 128 MiB of JSON: a window's trace then takes about 100 MB of
    /// memory, and a 10 GB trace makes about 80 windows.
    pub const DEFAULT: Budget = Budget::Bytes(128 << 20);
}

/// Whether a trace is read whole or a window at a time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Windowing {
    /// Windows of [`Budget::DEFAULT`] for traces of more than
    /// [`Windowing::AUTO_BYTES`] of JSON (a `.gz` counted at
    /// [`Windowing::GZIP_RATIO`] times its size), else whole.
    #[default]
    Auto,
    Whole,
    Windows(Budget),
}

impl Windowing {
    /// 1 GiB: the memory a trace read whole takes grows as about 0.7 bytes
    /// a byte of JSON (`bench/pytorch.md`), so above this one window's
    /// budget is worth the plan's pass over the file.
    pub const AUTO_BYTES: u64 = 1 << 30;

    /// About how much a Kineto trace's gzip is smaller than its JSON.
    pub const GZIP_RATIO: u64 = 10;

    /// The budget to read the trace at `path` with; `None`: read it whole.
    pub fn budget(self, path: &Path) -> Option<Budget> {
        match self {
            Windowing::Whole => None,
            Windowing::Windows(budget) => Some(budget),
            Windowing::Auto => (Windowing::text_bytes(path)? > Windowing::AUTO_BYTES).then_some(Budget::DEFAULT),
        }
    }

    /// The windows to read the trace at `path` in; `None`: read it whole
    /// (this windowing reads it whole, or it has too few steps to cut).
    pub fn plan(self, path: &Path) -> Result<Option<Windows>> {
        match self.budget(path) {
            Some(budget) => Windows::plan(path, budget),
            None => Ok(None),
        }
    }

    /// About how many bytes of text the file at `path` holds: its size, a
    /// gzip's times [`Windowing::GZIP_RATIO`]; `None` if it cannot be read.
    pub fn text_bytes(path: &Path) -> Option<u64> {
        let size = std::fs::metadata(path).ok()?.len();
        let mut magic = [0u8; 2];
        let gzipped = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && magic == super::read::GZIP_MAGIC;
        Some(if gzipped { size.saturating_mul(Windowing::GZIP_RATIO) } else { size })
    }
}

/// One window of steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The numbers `N` of the `ProfilerStep#N` spans it answers for, in
    /// order of their starts.
    pub steps: Vec<u64>,
    /// The time it owns, `[start, end)` in the trace's nanoseconds: from
    /// its first step's start (the first window: from the beginning) to the
    /// next window's (the last: to the end).
    pub own: (i64, i64),
    /// The time whose events it holds: from the start of the step before
    /// its first to the end of the step after its last.
    span: (i64, i64),
}

impl Window {
    /// Whether this window owns the device event `event` of its `trace`
    /// (`launches`: [`Trace::launches_by_correlation`]): the start of the
    /// call that launched it, or its own start where the window has no such
    /// call, lies in [`Window::own`]. A device event is in every window
    /// that holds it with its launch (the correlation ranges see to it), so
    /// each one is owned by exactly one window.
    pub fn owns(&self, trace: &Trace, launches: &rustc_hash::FxHashMap<u64, u32>, event: u32) -> bool {
        let e = &trace.events[event as usize];
        let launch = e.correlation.and_then(|c| launches.get(&c.get())).map(|&l| trace.events[l as usize].ts);
        let at = launch.unwrap_or(e.ts);
        self.own.0 <= at && at < self.own.1
    }

    /// The time whose events it holds (`[start, end]`): its steps and one
    /// step either side (the first and last windows open-ended).
    pub fn held(&self) -> (i64, i64) {
        self.span
    }
}

/// A trace cut into windows of steps, ready to be read one at a time.
#[derive(Debug)]
pub struct Windows {
    /// The trace as given (errors name it).
    path: PathBuf,
    /// The plain text the windows are read from: `path`, or a decompressed
    /// copy of it.
    text: PathBuf,
    /// The size of the file at `path`: the plan's pass counts it as read
    /// (for the progress line), and the windows count it again, a share
    /// each.
    file_bytes: u64,
    _decompressed: Option<tempfile::TempPath>,
    /// `{`, every top-level field but `traceEvents`, and `"traceEvents": [`.
    head: Vec<u8>,
    pub windows: Vec<Window>,
    /// The text's events, in runs of about [`CHUNK_BYTES`], in order.
    chunks: Vec<Chunk>,
    /// The trace's `ProfilerStep` events (host spans and their GPU
    /// annotations), read as a trace.
    pub steps: Trace,
    /// The events of the whole trace.
    pub events: u64,
    /// The devices of the trace's kernels, copies and sets (`args.device`,
    /// 0 without one), in order: every window's steps get a row for each.
    pub gpu_devices: Vec<u32>,
    /// The start of the earliest complete host event that has no
    /// correlation (not a device event, a device-wide sync or the
    /// profiler's span), if any: HTA's selection of a whole trace depends
    /// on it.
    pub first_uncorrelated_host_ns: Option<i64>,
}

impl Windows {
    /// Plans the windows of the trace at `path`; `None` when it has fewer
    /// than two `ProfilerStep#N` spans (a trace without steps is read
    /// whole).
    pub fn plan(path: &Path, budget: Budget) -> Result<Option<Windows>> {
        Windows::plan_with(path, budget, super::read::Split::auto())
    }

    /// [`Windows::plan`], its pass over the text split so.
    fn plan_with(path: &Path, budget: Budget, split: Option<super::read::Split>) -> Result<Option<Windows>> {
        let io_error = |source| Error::Io { kind: KIND, path: path.to_owned(), source };
        let invalid = |message: String| Error::input(KIND, path, message);
        let decompressed = decompress(path)?;
        let text = decompressed.as_ref().map_or_else(|| path.to_owned(), |t| t.to_path_buf());
        let size = std::fs::metadata(&text).map_err(io_error)?.len();
        let file_bytes = std::fs::metadata(path).map_err(io_error)?.len();

        // One pass: the top-level fields, the steps, and the chunks (a gzip
        // was counted as read while decompressed).
        let Walked { fields, part } = walk(&text, split, decompressed.is_none())
            .map_err(|e| invalid(format!("not a Kineto trace (invalid JSON at byte {}: {})", e.offset, e.message)))?;
        let mut head = b"{".to_vec();
        let mut file = std::fs::File::open(&text).map_err(io_error)?;
        for (key, start, end) in fields {
            head.push(b'"');
            for &b in &key {
                if b == b'"' || b == b'\\' {
                    head.push(b'\\');
                }
                head.push(b);
            }
            head.extend_from_slice(b"\": ");
            read_at(&mut file, start, end, &mut head).map_err(io_error)?;
            head.extend_from_slice(b",\n");
        }
        head.extend_from_slice(b"\"traceEvents\": [\n");
        let Part { chunks, steps: mut step_events, events, gpu_devices, first_uncorrelated_host_ns } = part;
        step_events.splice(0..0, b"{\"traceEvents\": [".iter().copied());
        step_events.extend_from_slice(b"]}");
        let steps = Trace::from_bytes(&step_events).map_err(invalid)?;
        let mut host_steps: Vec<(u64, i64, i64)> = steps
            .steps()
            .into_iter()
            .map(|(n, i)| {
                let e = &steps.events[i as usize];
                (n, e.ts, e.end())
            })
            .collect();
        host_steps.sort_by_key(|&(_, start, end)| (start, end));
        if host_steps.len() < 2 {
            return Ok(None);
        }
        let per_window = match budget {
            Budget::Steps(n) => n.max(1),
            Budget::Bytes(bytes) => {
                let per_step = (size / host_steps.len() as u64).max(1);
                usize::try_from(bytes / per_step).unwrap_or(usize::MAX).max(1)
            }
        };
        let windows = make_windows(&host_steps, per_window);
        let mut gpu_devices = gpu_devices;
        gpu_devices.sort_unstable();
        Ok(Some(Windows {
            path: path.to_owned(),
            text,
            file_bytes,
            _decompressed: decompressed,
            head,
            windows,
            chunks,
            steps,
            events,
            gpu_devices,
            first_uncorrelated_host_ns,
        }))
    }

    /// The trace as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The trace's top-level fields alone (`distributedInfo`, the
    /// devices), read as a trace without events.
    pub fn head(&self) -> Result<Trace> {
        let mut text = self.head.clone();
        text.extend_from_slice(b"]}");
        Trace::from_bytes(&text).map_err(|message| Error::input(KIND, &self.path, message))
    }

    /// Reads window `k` into a trace: the whole trace's top-level fields
    /// and the window's events.
    pub fn read(&self, k: usize) -> Result<Trace> {
        let io_error = |source| Error::Io { kind: KIND, path: self.path.clone(), source };
        let span = self.windows[k].span;
        let mut file = std::fs::File::open(&self.text).map_err(io_error)?;
        let mut buf = Vec::new();
        // The window's range of correlation ids: those of the events with
        // one (not flows) that meet its span.
        let mut range: Option<(u64, u64)> = None;
        let mut widen = |ids: (u64, u64)| range = Some(range.map_or(ids, |(lo, hi)| (lo.min(ids.0), hi.max(ids.1))));
        // (The events of the chunks whose summary does not say, read.)
        let mut placed = rustc_hash::FxHashMap::default();
        for (i, chunk) in self.chunks.iter().enumerate() {
            let Some((times, ids)) = chunk.ranging else { continue };
            if times.meets_all(span) {
                widen(ids);
            } else if times.meets_any(span) {
                let events = self.placed_in(&mut file, chunk, &mut buf)?;
                for e in &events {
                    if let Some(c) = e.ranging.filter(|_| e.meets(span)) {
                        widen((c, c));
                    }
                }
                placed.insert(i, events);
            }
        }

        // Its events, as runs of the text's bytes: a run grows while the
        // events taken follow one another.
        let mut runs: Vec<(u64, u64)> = Vec::new();
        let take = |runs: &mut Vec<(u64, u64)>, (start, end): (u64, u64), previous_end: u64| match runs.last_mut() {
            Some(run) if run.1 == previous_end => run.1 = end,
            _ => runs.push((start, end)),
        };
        let mut previous_end = u64::MAX;
        for (i, chunk) in self.chunks.iter().enumerate() {
            match chunk.taken(span, range) {
                Taken::All => take(&mut runs, (chunk.start, chunk.end), previous_end),
                Taken::None => {}
                Taken::Some => {
                    let events = match placed.remove(&i) {
                        Some(events) => events,
                        None => self.placed_in(&mut file, chunk, &mut buf)?,
                    };
                    let mut before = previous_end;
                    for e in &events {
                        if e.taken(span, range) {
                            take(&mut runs, (e.start, e.end), before);
                        }
                        before = e.end;
                    }
                }
            }
            previous_end = chunk.end;
        }

        // (Parsed as it is read from the file: the window's text is never
        // whole in memory.)
        let runs = Runs { file, runs: runs.iter(), left: 0, comma: false, first: true };
        let text = self.head.as_slice().chain(runs).chain(&b"\n]}"[..]);
        let trace = Trace::from_reader(text).map_err(|message| Error::input(KIND, &self.path, message))?;
        crate::inputs::progress::add(self.share_of_file(k));
        Ok(trace)
    }

    /// The bytes of the file window `k` counts as read once read: windows
    /// are about equal in size, so each counts an equal share, and
    /// together the file.
    fn share_of_file(&self, k: usize) -> u64 {
        let upto = |k: usize| (u128::from(self.file_bytes) * k as u128 / self.windows.len() as u128) as u64;
        upto(k + 1) - upto(k)
    }

    /// The events of `chunk`, read from the text.
    fn placed_in(&self, file: &mut std::fs::File, chunk: &Chunk, buf: &mut Vec<u8>) -> Result<Vec<Placed>> {
        buf.clear();
        read_at(file, chunk.start, chunk.end, buf).map_err(|source| Error::Io { kind: KIND, path: self.path.clone(), source })?;
        let mut events = Vec::new();
        let len = buf.len();
        let (end, back) = events_of(std::mem::take(buf), len, false, &mut |e, bytes, start| {
            events.push(Placed::of(e, chunk.start + start as u64, chunk.start + (start + bytes.len()) as u64));
        });
        *buf = back;
        match end {
            End::Ended => Ok(events),
            _ => Err(Error::input(KIND, &self.path, format!("changed while read: its events at byte {} are not as they were", chunk.start))),
        }
    }
}

/// A window's runs of the text's bytes, read one after the other, joined
/// by `,`.
struct Runs<'a> {
    file: std::fs::File,
    runs: std::slice::Iter<'a, (u64, u64)>,
    /// Bytes of the current run not yet read.
    left: u64,
    /// Whether a `,` is next.
    comma: bool,
    first: bool,
}

impl Read for Runs<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if buf.is_empty() {
                return Ok(0);
            }
            if self.comma {
                self.comma = false;
                buf[0] = b',';
                return Ok(1);
            }
            if self.left > 0 {
                let want = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
                let n = self.file.read(&mut buf[..want])?;
                if n == 0 {
                    return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the trace is shorter than when it was planned"));
                }
                self.left -= n as u64;
                return Ok(n);
            }
            let Some(&(start, end)) = self.runs.next() else { return Ok(0) };
            self.file.seek(SeekFrom::Start(start))?;
            self.left = end - start;
            self.comma = !std::mem::take(&mut self.first);
        }
    }
}

/// Appends the text's bytes `[start, end)` to `out`.
fn read_at(file: &mut std::fs::File, start: u64, end: u64, out: &mut Vec<u8>) -> std::io::Result<()> {
    file.seek(SeekFrom::Start(start))?;
    let at = out.len();
    out.resize(at + (end - start) as usize, 0);
    file.read_exact(&mut out[at..])
}

/// A gzip-compressed trace decompressed to a temporary file (`None` for a
/// plain one).
fn decompress(path: &Path) -> Result<Option<tempfile::TempPath>> {
    let io_error = |source| Error::Io { kind: KIND, path: path.to_owned(), source };
    let mut file = std::fs::File::open(path).map_err(io_error)?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic).map_err(io_error)?;
    if n < 2 || magic != super::read::GZIP_MAGIC {
        return Ok(None);
    }
    file.seek(SeekFrom::Start(0)).map_err(io_error)?;
    let temp = tempfile::Builder::new().prefix("rtfprof-window-").suffix(".json").tempfile().map_err(io_error)?;
    let (out, temp_path) = temp.into_parts();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, out);
    let mut gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::with_capacity(1 << 20, crate::inputs::progress::Counting(file)));
    std::io::copy(&mut gz, &mut out).map_err(|e| Error::input(KIND, path, format!("not a valid gzip stream ({e})")))?;
    out.flush().map_err(io_error)?;
    Ok(Some(temp_path))
}

/// Windows of `per_window` consecutive steps (`steps`: number, start, end,
/// sorted by start).
fn make_windows(steps: &[(u64, i64, i64)], per_window: usize) -> Vec<Window> {
    let groups: Vec<&[(u64, i64, i64)]> = steps.chunks(per_window).collect();
    let mut windows = Vec::with_capacity(groups.len());
    let mut first = 0;
    for (k, group) in groups.iter().enumerate() {
        let last = first + group.len() - 1;
        let own_start = if k == 0 { i64::MIN } else { group[0].1 };
        let own_end = groups.get(k + 1).map_or(i64::MAX, |next| next[0].1);
        let span_start = if k == 0 { i64::MIN } else { steps[first - 1].1 };
        let span_end = if k + 1 == groups.len() { i64::MAX } else { steps[last + 1].2 };
        windows.push(Window { steps: group.iter().map(|s| s.0).collect(), own: (own_start, own_end), span: (span_start, span_end) });
        first = last + 1;
    }
    // Spans sorted by both ends, for `meeting` (steps that overlap could
    // leave them out of order; a wider span only reads more).
    for k in 1..windows.len() {
        windows[k].span.1 = windows[k].span.1.max(windows[k - 1].span.1);
    }
    for k in (1..windows.len()).rev() {
        windows[k - 1].span.0 = windows[k - 1].span.0.min(windows[k].span.0);
    }
    windows
}

/// About how many bytes of events a chunk holds: small beside a window,
/// so that few of a window's chunks are read event by event (those at its
/// span's ends), and few for the plan to keep (10 342 for 1 GB).
const CHUNK_BYTES: u64 = 128 << 10;

/// The least and greatest start, and the least and greatest `key`, of
/// timed events: an event meets a span `[start, end)` (the rule of
/// [`EventFields::overlaps`]) where its start is before `end` and its
/// key after `start` (its end, or its start + 1 ns without a duration).
#[derive(Clone, Copy, Debug)]
struct Times {
    ts: (i64, i64),
    key: (i64, i64),
}

impl Times {
    fn of(ts: i64, key: i64) -> Times {
        Times { ts: (ts, ts), key: (key, key) }
    }

    fn add(&mut self, ts: i64, key: i64) {
        self.ts = (self.ts.0.min(ts), self.ts.1.max(ts));
        self.key = (self.key.0.min(key), self.key.1.max(key));
    }

    /// Whether one of the events may meet `span`.
    fn meets_any(&self, span: (i64, i64)) -> bool {
        self.ts.0 < span.1 && self.key.1 > span.0
    }

    /// Whether all of the events meet `span`.
    fn meets_all(&self, span: (i64, i64)) -> bool {
        self.ts.1 < span.1 && self.key.0 > span.0
    }
}

/// Where an event goes, from its fields (the plan's third pass's rule,
/// which is `cut`'s).
#[derive(Clone, Copy, Debug)]
struct Placed {
    /// Its bytes in the text.
    start: u64,
    end: u64,
    /// Metadata, or no start: in every window.
    everywhere: bool,
    /// Its start and key ([`Times`]).
    at: Option<(i64, i64)>,
    /// The correlation of a timed flow, device event or launch: in the
    /// windows whose range holds it.
    linked: Option<u64>,
    /// The correlation of a timed event that is not a flow: in the range
    /// of the windows whose span it meets.
    ranging: Option<u64>,
}

impl Placed {
    fn of(e: &EventFields, start: u64, end: u64) -> Placed {
        let everywhere = e.ph == Ph::Metadata || e.ts.is_none();
        let correlated = e.ph == Ph::Flow || e.category.on_device() || e.category.is_launch();
        Placed {
            start,
            end,
            everywhere,
            at: e.ts.map(|ts| (ts, if e.dur.unwrap_or(0) > 0 { ts.saturating_add(e.dur.unwrap_or(0)) } else { ts.saturating_add(1) })),
            linked: e.correlation.filter(|_| correlated && !everywhere),
            ranging: e.correlation.filter(|_| e.ph != Ph::Flow && e.ts.is_some()),
        }
    }

    fn meets(&self, span: (i64, i64)) -> bool {
        self.at.is_some_and(|(ts, key)| ts < span.1 && key > span.0)
    }

    /// Whether a window of `span` and correlation `range` holds it.
    fn taken(&self, span: (i64, i64), range: Option<(u64, u64)>) -> bool {
        self.everywhere || self.meets(span) || matches!((self.linked, range), (Some(c), Some((lo, hi))) if lo <= c && c <= hi)
    }
}

/// Consecutive events of the text, and what deciding whether a window
/// holds all of them, none, or some needs.
#[derive(Clone, Debug)]
struct Chunk {
    /// From the first event's start to the last one's end.
    start: u64,
    end: u64,
    /// Whether one is in every window.
    everywhere: bool,
    /// The others (the timed ones).
    timed: Option<Times>,
    /// The range of their correlations where they are linked.
    linked: Option<(u64, u64)>,
    /// Whether one of them is not linked.
    unlinked: bool,
    /// Those with a correlation that gives a window its range, and the
    /// range of those correlations.
    ranging: Option<(Times, (u64, u64))>,
}

/// How much of a chunk a window holds.
enum Taken {
    All,
    None,
    Some,
}

impl Chunk {
    fn of(e: &Placed) -> Chunk {
        let mut chunk = Chunk { start: e.start, end: e.end, everywhere: false, timed: None, linked: None, unlinked: false, ranging: None };
        chunk.add(e);
        chunk
    }

    /// Whether `e` (after the chunk's events) is better in a new chunk:
    /// this one is full, or `e` starts before all its events (a new thread
    /// or stream: the chunk's times stay narrow).
    fn ends_before(&self, e: &Placed) -> bool {
        e.end - self.start > CHUNK_BYTES || matches!((e.at, self.timed), (Some((ts, _)), Some(t)) if !e.everywhere && ts < t.ts.0)
    }

    fn add(&mut self, e: &Placed) {
        let widen = |range: Option<(u64, u64)>, c: u64| Some(range.map_or((c, c), |(lo, hi)| (lo.min(c), hi.max(c))));
        self.end = e.end;
        if let (Some((ts, key)), Some(c)) = (e.at, e.ranging) {
            match &mut self.ranging {
                Some((times, ids)) => {
                    times.add(ts, key);
                    *ids = (ids.0.min(c), ids.1.max(c));
                }
                None => self.ranging = Some((Times::of(ts, key), (c, c))),
            }
        }
        match e.at {
            Some((ts, key)) if !e.everywhere => {
                match &mut self.timed {
                    Some(t) => t.add(ts, key),
                    None => self.timed = Some(Times::of(ts, key)),
                }
                match e.linked {
                    Some(c) => self.linked = widen(self.linked, c),
                    None => self.unlinked = true,
                }
            }
            _ => self.everywhere = true,
        }
    }

    /// How much of it a window of `span` and correlation `range` holds.
    fn taken(&self, span: (i64, i64), range: Option<(u64, u64)>) -> Taken {
        let Some(timed) = self.timed else { return Taken::All };
        if timed.meets_all(span) {
            return Taken::All;
        }
        match (self.linked, range) {
            (Some((a, b)), Some((lo, hi))) if !self.unlinked && lo <= a && b <= hi => Taken::All,
            (Some((a, b)), Some((lo, hi))) if a <= hi && lo <= b => Taken::Some,
            _ if self.everywhere || timed.meets_any(span) => Taken::Some,
            _ => Taken::None,
        }
    }
}

/// What the plan's pass finds in a part of the text (offsets in it).
#[derive(Default)]
struct Part {
    chunks: Vec<Chunk>,
    /// The events with `ProfilerStep` in their text, each followed by `,`
    /// but the last.
    steps: Vec<u8>,
    events: u64,
    /// The devices of kernels, copies and sets (see [`Windows`]).
    gpu_devices: Vec<u32>,
    first_uncorrelated_host_ns: Option<i64>,
}

impl Part {
    /// Adds the event `e`, whose text is `bytes`, at `start`.
    fn add(&mut self, e: &EventFields, bytes: &[u8], start: u64, step: &memchr::memmem::Finder) {
        let end = start + bytes.len() as u64;
        self.events += 1;
        if step.find(bytes).is_some() {
            if !self.steps.is_empty() {
                self.steps.push(b',');
            }
            self.steps.extend_from_slice(bytes);
        }
        // (HTA's device work: a stream and a correlation, or a sync.)
        if e.ph == Ph::Complete
            && e.correlation.is_none()
            && !e.sync
            && e.category != super::Category::Trace
            && let Some(ts) = e.ts
        {
            self.first_uncorrelated_host_ns = Some(self.first_uncorrelated_host_ns.map_or(ts, |t| t.min(ts)));
        }
        if e.ph == Ph::Complete && matches!(e.category, super::Category::Kernel | super::Category::GpuMemcpy | super::Category::GpuMemset) {
            let device = e.args_device.and_then(|d| u32::try_from(d).ok()).unwrap_or(0);
            if !self.gpu_devices.contains(&device) {
                self.gpu_devices.push(device);
            }
        }
        let placed = Placed::of(e, start, end);
        match self.chunks.last_mut() {
            Some(chunk) if !chunk.ends_before(&placed) => chunk.add(&placed),
            _ => self.chunks.push(Chunk::of(&placed)),
        }
    }

    /// Adds `next`, the part after this one, `base` bytes into the text.
    fn append(&mut self, next: Part, base: u64) {
        self.chunks.extend(next.chunks.into_iter().map(|c| Chunk { start: c.start + base, end: c.end + base, ..c }));
        if !next.steps.is_empty() {
            if !self.steps.is_empty() {
                self.steps.push(b',');
            }
            self.steps.extend_from_slice(&next.steps);
        }
        self.events += next.events;
        for d in next.gpu_devices {
            if !self.gpu_devices.contains(&d) {
                self.gpu_devices.push(d);
            }
        }
        if let Some(ts) = next.first_uncorrelated_host_ns {
            self.first_uncorrelated_host_ns = Some(self.first_uncorrelated_host_ns.map_or(ts, |t| t.min(ts)));
        }
    }
}

/// What the plan's pass over the text finds.
struct Walked {
    /// The top-level fields but `traceEvents`: key, and the value's bytes'
    /// range in the text.
    fields: Vec<(Vec<u8>, u64, u64)>,
    part: Part,
}

/// The plan's one pass over the plain text at `path`: its top-level fields,
/// and its events read on several threads (`stream::segments::for_segments`).
/// With `counted`, its bytes are counted as read.
fn walk(path: &Path, split: Option<super::read::Split>, counted: bool) -> std::result::Result<Walked, SyntaxError> {
    let file = std::fs::File::open(path).map_err(|e| SyntaxError { offset: 0, message: e.to_string() })?;
    let file: Box<dyn Read> = if counted { Box::new(crate::inputs::progress::Counting(file)) } else { Box::new(file) };
    let mut p = Parser::new(file);
    let step = memchr::memmem::Finder::new(b"ProfilerStep");
    let mut walked = Walked { fields: Vec::new(), part: Part::default() };
    p.begin_object()?;
    let mut first = true;
    while let Some(key) = p.next_key(&mut first)? {
        let key = key.to_vec();
        if key == b"traceEvents" && p.peek()? == Next::Array {
            p.begin_array()?;
            let work = |text: Vec<u8>, len: usize, first: bool| {
                let mut part = Part::default();
                let (end, text) = events_of(text, len, first, &mut |e, bytes, start| part.add(e, bytes, start as u64, &step));
                (part, end, text)
            };
            for_segments(&mut p, split, &work, &mut |part, base| walked.part.append(part, base))?;
        } else {
            p.peek()?;
            let start = p.offset();
            p.skip()?;
            walked.fields.push((key, start, p.offset()));
        }
    }
    if let Some(e) = p.take_read_error() {
        return Err(SyntaxError { offset: p.offset(), message: e.to_string() });
    }
    Ok(walked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pytorch")).join(name)
    }

    /// Every event of the whole trace is in some window, and each window's
    /// events are a subset of the whole trace's, in the same order.
    #[test]
    fn windows_cover_the_trace() {
        let path = fixture("h200_tx.steps2-3.pt.trace.json.gz");
        let whole = Trace::open(&path).unwrap();
        let windows = Windows::plan(&path, Budget::Steps(1)).unwrap().unwrap();
        assert_eq!(windows.windows.len(), 2);
        assert_eq!(windows.windows.iter().map(|w| w.steps.clone()).collect::<Vec<_>>(), vec![vec![2], vec![3]]);
        let key = |t: &Trace, e: &super::super::Event| (t.str(e.name).to_owned(), e.ts, e.dur, e.correlation, e.external_id);
        let all: rustc_hash::FxHashSet<_> = whole.events.iter().map(|e| key(&whole, e)).collect();
        let mut seen = rustc_hash::FxHashSet::default();
        for k in 0..windows.windows.len() {
            let trace = windows.read(k).unwrap();
            assert_eq!(trace.base_time_ns, whole.base_time_ns);
            assert_eq!(trace.threads.len(), whole.threads.len(), "metadata is in every window");
            for e in &trace.events {
                let key = key(&trace, e);
                assert!(all.contains(&key), "{key:?} is not in the trace");
                seen.insert(key);
            }
        }
        assert_eq!(seen.len(), all.len(), "an event is in no window");
    }

    /// The windows count the file (the gzip, not its text) as read, in
    /// shares that add up to it: the progress line's total counts a
    /// windowed trace twice, once for the plan's pass.
    #[test]
    fn windows_count_the_file_once() {
        let path = fixture("h200_tx.steps2-3.pt.trace.json.gz");
        for steps in [1, 2] {
            let windows = Windows::plan(&path, Budget::Steps(steps)).unwrap().unwrap();
            let shares: Vec<u64> = (0..windows.windows.len()).map(|k| windows.share_of_file(k)).collect();
            assert_eq!(shares.iter().sum::<u64>(), std::fs::metadata(&path).unwrap().len(), "{shares:?}");
            assert!(shares.iter().max().unwrap() - shares.iter().min().unwrap() <= 1, "{shares:?}");
        }
    }

    /// The windows are the same whatever segments the plan's pass cuts the
    /// text into (on one thread or several; a segment's end guessed inside
    /// a string; an event longer than a segment), and whether an event is
    /// read by `EventFields::quick` or by the parser.
    #[test]
    fn segments_do_not_change_the_windows() {
        let dir = tempfile::tempdir().unwrap();
        let made = dir.path().join("t.json");
        std::fs::write(
            &made,
            br#"{"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "a}, {\"ph\": \"X\"", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"x": [1, {"y": "}, {"}]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"correlation": 7}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 120, "dur": 5,   "args": {"long": "}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}"}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 150, "dur": 160, "args": {"correlation": 7, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 200, "dur": 100},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 1, "tid": 1, "ts": 300, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 330, "dur": 5},
  {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "main"}}
], "displayTimeUnit": "ms"}"#,
        )
        .unwrap();
        for path in [made, fixture("h200_tx.steps2-3.pt.trace.json.gz")] {
            let plan = |split| Windows::plan_with(&path, Budget::Steps(1), split).unwrap().unwrap();
            let one = plan(None);
            let traces: Vec<Trace> = (0..one.windows.len()).map(|k| one.read(k).unwrap()).collect();
            for (segment, workers) in [(1, 2), (7, 1), (100, 3), (5000, 2)] {
                let other = plan(Some(super::super::read::Split { segment, workers }));
                assert_eq!((&other.head, &other.windows, &other.steps), (&one.head, &one.windows, &one.steps));
                assert_eq!(
                    (other.events, &other.gpu_devices, other.first_uncorrelated_host_ns),
                    (one.events, &one.gpu_devices, one.first_uncorrelated_host_ns)
                );
                for (k, trace) in traces.iter().enumerate() {
                    assert_eq!(&other.read(k).unwrap(), trace, "window {k}, segments of {segment} on {workers} threads");
                }
            }
        }
    }

    /// A trace with one step (or none) is not cut.
    #[test]
    fn one_step_is_not_windowed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, br#"{"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}"#)
            .unwrap();
        assert!(Windows::plan(&path, Budget::Steps(1)).unwrap().is_none());
        std::fs::write(&path, b"{\"traceEvents\": [").unwrap();
        let e = Windows::plan(&path, Budget::Steps(1)).unwrap_err().to_string();
        assert!(e.contains("t.json"), "{e}");
    }
}
