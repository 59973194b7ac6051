//! A Kineto trace read a few steps at a time, so that the memory an
//! analysis needs is one window's, whatever the trace's length (the
//! book's `internals/large_traces.md` has the design and the figures).
//!
//! [`Windows::plan`] streams the file three times, keeping nothing per
//! event but byte ranges (a `.gz` is first decompressed to a temporary
//! file, as the windows are read from it in place):
//! 1. the top-level fields, the `ProfilerStep` events (read as a small
//!    [`Trace`]: [`Windows::steps`]) and the size of the file, from which
//!    runs of consecutive steps of about a [`Budget`] of text are
//!    made windows;
//! 2. each window's range of correlation ids: those of the launches and
//!    device work that meet its span of time (its steps and one step
//!    either side, the first and last windows open-ended);
//! 3. each window's events, as runs of the file's bytes: metadata and
//!    untimed events in every window, host events that meet its span,
//!    launches, device work and flows that meet it or whose correlation is
//!    in its range (so that a kernel and its launch are always read
//!    together, and a step's late GPU work is whole) — `cut`'s rule, with
//!    a range of ids for a set.
//!
//! [`Windows::read`] then reads one window's runs into an ordinary
//! [`Trace`]. Windows overlap (a step either side): each window *owns*
//! the time from its first step's start to the next window's first step's
//! start ([`Window::own`]), so that an analysis that merges windows can
//! count every event once, by its own start or by its launch's.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::stream::fields::{EventFields, Ph};
use super::stream::scan::{Item, scan, scan_events_piped};
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
    /// budget is worth the plan's three streaming passes over the file.
    pub const AUTO_BYTES: u64 = 1 << 30;

    /// About how much a Kineto trace's gzip is smaller than its JSON.
    pub const GZIP_RATIO: u64 = 10;

    /// The budget to read the trace at `path` with; `None`: read it whole.
    pub fn budget(self, path: &Path) -> Option<Budget> {
        match self {
            Windowing::Whole => None,
            Windowing::Windows(budget) => Some(budget),
            Windowing::Auto => {
                let size = std::fs::metadata(path).ok()?.len();
                let mut magic = [0u8; 2];
                let gzipped = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && magic == super::read::GZIP_MAGIC;
                let text = if gzipped { size.saturating_mul(Windowing::GZIP_RATIO) } else { size };
                (text > Windowing::AUTO_BYTES).then_some(Budget::DEFAULT)
            }
        }
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
    /// The correlation ids of the launches and device work that meet
    /// `span`, as a range.
    correlations: Option<(u64, u64)>,
    /// Its events, as `[start, end)` byte ranges of the text, in order.
    runs: Vec<(u64, u64)>,
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
    _decompressed: Option<tempfile::TempPath>,
    /// `{`, every top-level field but `traceEvents`, and `"traceEvents": [`.
    head: Vec<u8>,
    pub windows: Vec<Window>,
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
        let io_error = |source| Error::Io { kind: KIND, path: path.to_owned(), source };
        let invalid = |message: String| Error::input(KIND, path, message);
        let decompressed = decompress(path)?;
        let text = decompressed.as_ref().map_or_else(|| path.to_owned(), |t| t.to_path_buf());
        let size = std::fs::metadata(&text).map_err(io_error)?.len();
        let mut buf = Vec::new();

        // 1. The top-level fields and the steps.
        let mut head = b"{".to_vec();
        let mut step_events = b"{\"traceEvents\": [".to_vec();
        let (mut events, mut steps_seen) = (0u64, 0usize);
        scan(&text, &mut |item| {
            match item {
                Item::Field(key, Some(value)) => {
                    head.extend_from_slice(key);
                    head.extend_from_slice(b": ");
                    head.extend_from_slice(value);
                    head.extend_from_slice(b",\n");
                }
                Item::Field(_, None) => {}
                Item::Event(bytes, _) => {
                    events += 1;
                    if memchr::memmem::find(bytes, b"ProfilerStep").is_some() {
                        if steps_seen > 0 {
                            step_events.push(b',');
                        }
                        steps_seen += 1;
                        step_events.extend_from_slice(bytes);
                    }
                }
            }
            Ok(())
        })
        .map_err(|e| named(e, path, &text))?;
        head.extend_from_slice(b"\"traceEvents\": [\n");
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
        let mut windows = make_windows(&host_steps, per_window);
        let mut chosen = Vec::new();

        // 2. The correlation range of each window.
        scan_events_piped(&text, &mut |bytes, _| {
            if memchr::memmem::find(bytes, b"\"correlation\"").is_none() {
                return Ok(());
            }
            let e = EventFields::of(bytes, &mut buf).map_err(invalid)?;
            if let (Some(c), true) = (e.correlation, e.ph != Ph::Flow) {
                chosen.clear();
                chosen.extend(meeting(&windows, &e));
                for &w in &chosen {
                    let w = &mut windows[w];
                    w.correlations = Some(w.correlations.map_or((c, c), |(lo, hi)| (lo.min(c), hi.max(c))));
                }
            }
            Ok(())
        })
        .map_err(|e| named(e, path, &text))?;

        // 3. Each window's events, as runs of bytes.
        let by_correlation = CorrelationIndex::new(&windows);
        let mut first_uncorrelated_host_ns: Option<i64> = None;
        let mut gpu_devices = std::collections::BTreeSet::new();
        let mut previous_end = 0u64;
        scan_events_piped(&text, &mut |bytes, start| {
            let end = start + bytes.len() as u64;
            let e = EventFields::of(bytes, &mut buf).map_err(invalid)?;
            // (HTA's device work: a stream and a correlation, or a sync.)
            if e.ph == Ph::Complete
                && e.correlation.is_none()
                && !e.sync
                && e.category != super::Category::Trace
                && let Some(ts) = e.ts
            {
                first_uncorrelated_host_ns = Some(first_uncorrelated_host_ns.map_or(ts, |t| t.min(ts)));
            }
            if e.ph == Ph::Complete && matches!(e.category, super::Category::Kernel | super::Category::GpuMemcpy | super::Category::GpuMemset) {
                gpu_devices.insert(e.args_device.and_then(|d| u32::try_from(d).ok()).unwrap_or(0));
            }
            chosen.clear();
            if e.ph == Ph::Metadata || e.ts.is_none() {
                chosen.extend(0..windows.len());
            } else {
                chosen.extend(meeting(&windows, &e));
                let correlated = e.ph == Ph::Flow || e.category.on_device() || e.category.is_launch();
                if let (true, Some(c)) = (correlated, e.correlation) {
                    by_correlation.holding(c, &mut chosen);
                }
                chosen.sort_unstable();
                chosen.dedup();
            }
            for &w in &chosen {
                let runs = &mut windows[w].runs;
                match runs.last_mut() {
                    Some(run) if run.1 == previous_end => run.1 = end,
                    _ => runs.push((start, end)),
                }
            }
            previous_end = end;
            Ok(())
        })
        .map_err(|e| named(e, path, &text))?;
        let gpu_devices = gpu_devices.into_iter().collect();
        Ok(Some(Windows { path: path.to_owned(), text, _decompressed: decompressed, head, windows, steps, events, gpu_devices, first_uncorrelated_host_ns }))
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
        let window = &self.windows[k];
        let length: u64 = window.runs.iter().map(|r| r.1 - r.0 + 1).sum();
        let mut text = Vec::with_capacity(self.head.len() + length as usize + 4);
        text.extend_from_slice(&self.head);
        let mut file = std::fs::File::open(&self.text).map_err(io_error)?;
        for (i, &(start, end)) in window.runs.iter().enumerate() {
            if i > 0 {
                text.push(b',');
            }
            file.seek(SeekFrom::Start(start)).map_err(io_error)?;
            let at = text.len();
            text.resize(at + (end - start) as usize, 0);
            file.read_exact(&mut text[at..]).map_err(io_error)?;
        }
        text.extend_from_slice(b"\n]}");
        Trace::from_bytes(&text).map_err(|message| Error::input(KIND, &self.path, message))
    }
}

/// Errors of a pass over a decompressed copy name the file given.
fn named(e: Error, path: &Path, text: &Path) -> Error {
    match e {
        Error::Input { kind, path: p, message } if p == text => Error::Input { kind, path: path.to_owned(), message },
        Error::Io { kind, path: p, source } if p == text => Error::Io { kind, path: path.to_owned(), source },
        e => e,
    }
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
    let mut gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::with_capacity(1 << 20, file));
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
        windows.push(Window {
            steps: group.iter().map(|s| s.0).collect(),
            own: (own_start, own_end),
            span: (span_start, span_end),
            correlations: None,
            runs: Vec::new(),
        });
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

/// The windows whose span the event meets (`EventFields::overlaps`' rule);
/// spans are sorted by start and by end.
fn meeting<'a>(windows: &'a [Window], e: &'a EventFields) -> impl Iterator<Item = usize> + 'a {
    let ts = e.ts.unwrap_or(i64::MIN);
    let end = ts.saturating_add(e.dur.unwrap_or(0));
    let first = windows.partition_point(|w| w.span.1 <= ts.min(end));
    (first..windows.len()).take_while(move |&k| windows[k].span.0 <= ts.max(end)).filter(move |&k| e.overlaps(windows[k].span))
}

/// The windows whose correlation range holds an id: ranges sorted by
/// their low end, with the running maximum of their high ends, so that a
/// lookup walks back only over ranges that might hold it.
struct CorrelationIndex {
    /// (low, high, window), sorted by low.
    ranges: Vec<(u64, u64, usize)>,
    /// `max_high[i]`: the largest high end of `ranges[..=i]`.
    max_high: Vec<u64>,
}

impl CorrelationIndex {
    fn new(windows: &[Window]) -> CorrelationIndex {
        let mut ranges: Vec<(u64, u64, usize)> = windows.iter().enumerate().filter_map(|(k, w)| w.correlations.map(|(lo, hi)| (lo, hi, k))).collect();
        ranges.sort_unstable();
        let max_high = ranges.iter().scan(0u64, |max, r| {
            *max = (*max).max(r.1);
            Some(*max)
        });
        let max_high = max_high.collect();
        CorrelationIndex { ranges, max_high }
    }

    /// Adds to `out` the windows whose range holds `c`.
    fn holding(&self, c: u64, out: &mut Vec<usize>) {
        let mut i = self.ranges.partition_point(|r| r.0 <= c);
        while i > 0 && self.max_high[i - 1] >= c {
            i -= 1;
            if self.ranges[i].1 >= c {
                out.push(self.ranges[i].2);
            }
        }
    }
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
