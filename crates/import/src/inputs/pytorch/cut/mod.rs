//! `rtfprof cut --pytorch_path TRACE --steps A..B -o OUT`: a smaller Kineto
//! trace holding the steps asked for (`ProfilerStep#A` to `#B`), or a span
//! of time (`--time_ms`), optionally only some devices' work (`--devices`)
//! and no event shorter than `--min_dur_us`, for the tools people already
//! use on traces too large for them ([`select`] parses what to keep).
//!
//! Streaming passes over the file (`stream::scan`; a `.gz` is decompressed
//! each time): the first finds the window (from the first kept step's start to
//! the last one's end, or the time span from the trace's first event), the
//! second the correlation ids of the launches in it and of the device work
//! running in it, a third (only where `--devices` or `--min_dur_us` drop
//! some of that work) the ids whose launch or work is dropped, so that
//! their flow arrows go too; the last writes. Only one event's bytes
//! (`stream::fields` reads the few it needs) and the window's correlation ids are
//! held at a time, so memory does not grow with the trace.
//!
//! What is kept, each event's bytes as they were, in file order:
//! - every top-level field but `traceEvents` (schema version, device
//!   properties, distributed info, …);
//! - metadata events (`ph: "M"`: process and thread names) and events
//!   without a time;
//! - host events that overlap the window (an enclosing span is kept whole);
//! - device events that overlap the window or whose launch is kept, and the
//!   launches of the device work that runs in the window (so that a step's
//!   GPU work, which ends after its CPU side, is whole);
//! - flow events (`ph` `s`, `f`, `t`) of a kept correlation, or in the
//!   window.
//!
//! - with `--devices`, device events of the devices listed only; with
//!   `--min_dur_us`, complete events at least that long only (counted in
//!   [`Cut::too_short`]).
//!
//! So a step of the cut has what it had in the whole trace: `rtfprof steps`
//! gives the cut's steps the same rows as the whole trace's.

mod keep;
pub mod select;

use std::io::Write;
use std::path::Path;

use rustc_hash::FxHashSet;

use super::KIND;
use super::stream::fields::{self, EventFields};
use super::stream::scan::{Item, scan};
use crate::error::{Error, Result};
use keep::Kept;
pub use select::{Selection, StepRange, TimeRange, Window};

/// What the cut kept, for the line `rtfprof cut` prints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cut {
    /// The steps found in the range, in order (none for a time window).
    pub steps: Vec<u64>,
    pub kept_events: u64,
    pub total_events: u64,
    /// Events in the window left out for being shorter than
    /// `--min_dur_us`.
    pub too_short: u64,
    /// The window, in the trace's nanoseconds.
    pub window: (i64, i64),
}

/// Writes to `out` the cut of the trace at `path` to `selection`;
/// `out_path` names `out` in errors.
pub fn cut(path: &Path, selection: &Selection, out: &mut dyn Write, out_path: &Path) -> Result<Cut> {
    let invalid = |message: String| Error::input(KIND, path, message);
    let mut buf = Vec::new();
    // 1. The window.
    let (window, found) = match selection.window {
        Window::Steps(steps) => steps_window(path, steps, &mut buf)?,
        Window::Time(time) => (time_window(path, time, &mut buf)?, Vec::new()),
    };
    // 2. The correlations the window needs: its launches', and those of
    // the device work running in it.
    let mut correlations = FxHashSet::default();
    scan_correlated(path, &mut buf, &mut |e, c| {
        if e.overlaps(window) && (!e.category.on_device() || selection.keeps_device(e.device)) {
            correlations.insert(c);
        }
    })?;
    // 3. Of those, the ones whose launch or work the selection drops.
    let mut dropped = FxHashSet::default();
    if selection.devices.is_some() || selection.min_dur_ns.is_some() {
        scan_correlated(path, &mut buf, &mut |e, c| {
            if correlations.contains(&c) && e.dropped_by(selection) {
                dropped.insert(c);
            }
        })?;
    }
    // 4. The cut, written.
    let mut cut = Cut { steps: found, window, ..Cut::default() };
    let write_error = |e: std::io::Error| Error::Io { kind: "-o", path: out_path.to_owned(), source: e };
    let (mut first_field, mut first_event, mut in_events) = (true, true, false);
    out.write_all(b"{").map_err(write_error)?;
    scan(path, &mut |item| {
        let w = |out: &mut dyn Write, bytes: &[u8]| out.write_all(bytes).map_err(write_error);
        match item {
            Item::Field(key, value) => {
                if std::mem::take(&mut in_events) {
                    w(out, b"\n  ]")?;
                }
                w(out, if first_field { b"\n  " } else { b",\n  " })?;
                first_field = false;
                w(out, key)?;
                w(out, b": ")?;
                match value {
                    Some(value) => w(out, value),
                    None => {
                        (first_event, in_events) = (true, true);
                        w(out, b"[")
                    }
                }
            }
            Item::Event(bytes) => {
                cut.total_events += 1;
                match EventFields::of(bytes, &mut buf).map_err(invalid)?.kept(window, selection, &correlations, &dropped) {
                    Kept::No => {}
                    Kept::TooShort => cut.too_short += 1,
                    Kept::Yes => {
                        cut.kept_events += 1;
                        w(out, if first_event { b"\n    " } else { b",\n    " })?;
                        first_event = false;
                        w(out, bytes)?;
                    }
                }
                Ok(())
            }
        }
    })?;
    if in_events {
        out.write_all(b"\n  ]").map_err(write_error)?;
    }
    out.write_all(b"\n}\n").map_err(write_error)?;
    Ok(cut)
}

/// Each event of the trace that has a correlation and is not a flow arrow,
/// with that correlation (events without the key are not parsed at all).
fn scan_correlated(path: &Path, buf: &mut Vec<u8>, on_event: &mut dyn FnMut(&EventFields, u64)) -> Result<()> {
    scan(path, &mut |item| {
        let Item::Event(bytes) = item else { return Ok(()) };
        if memchr::memmem::find(bytes, b"\"correlation\"").is_none() {
            return Ok(());
        }
        let e = EventFields::of(bytes, buf).map_err(|message| Error::input(KIND, path, message))?;
        if let Some(c) = e.correlation
            && e.ph != fields::Ph::Flow
        {
            on_event(&e, c);
        }
        Ok(())
    })
}

/// The span from the first of `steps`' start to the last one's end, and
/// the steps found; an error saying which steps the trace has when none
/// is.
fn steps_window(path: &Path, steps: StepRange, buf: &mut Vec<u8>) -> Result<((i64, i64), Vec<u64>)> {
    let invalid = |message: String| Error::input(KIND, path, message);
    let mut window: Option<(i64, i64)> = None;
    let mut found = Vec::new();
    let mut all_steps = Vec::new();
    scan(path, &mut |item| {
        // (Only steps are read: most events are not parsed at all.)
        let Item::Event(bytes) = item else { return Ok(()) };
        if memchr::memmem::find(bytes, b"ProfilerStep#").is_none() {
            return Ok(());
        }
        let e = EventFields::of(bytes, buf).map_err(invalid)?;
        if e.category.on_device() {
            return Ok(());
        }
        let Some(n) = e.step else { return Ok(()) };
        all_steps.push(n);
        if let (true, Some(ts)) = (steps.contains(n), e.ts) {
            let end = ts.saturating_add(e.dur.unwrap_or(0));
            window = Some(window.map_or((ts, end), |(s, t)| (s.min(ts), t.max(end))));
            found.push(n);
        }
        Ok(())
    })?;
    let Some(window) = window else {
        all_steps.sort_unstable();
        all_steps.dedup();
        let have = match (all_steps.first(), all_steps.last()) {
            (Some(a), Some(b)) if a == b => format!("its only ProfilerStep is #{a}"),
            (Some(a), Some(b)) => format!("its ProfilerSteps are #{a} to #{b}"),
            _ => "it has no ProfilerStep#N spans (torch.profiler.schedule and prof.step() write them)".to_owned(),
        };
        let asked = if steps.first == steps.last { format!("no ProfilerStep#{}", steps.first) } else { format!("no step in {}..{}", steps.first, steps.last) };
        return Err(invalid(format!("{asked}: {have}")));
    };
    found.sort_unstable();
    found.dedup();
    Ok((window, found))
}

/// `time` in the trace's nanoseconds: from its first timed event's start.
fn time_window(path: &Path, time: TimeRange, buf: &mut Vec<u8>) -> Result<(i64, i64)> {
    let invalid = |message: String| Error::input(KIND, path, message);
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    scan(path, &mut |item| {
        let Item::Event(bytes) = item else { return Ok(()) };
        let e = EventFields::of(bytes, buf).map_err(invalid)?;
        if let (Some(ts), true) = (e.ts, e.ph != fields::Ph::Metadata) {
            first = first.min(ts);
            last = last.max(ts.saturating_add(e.dur.unwrap_or(0)));
        }
        Ok(())
    })?;
    if first > last {
        return Err(invalid("has no timed events to cut".to_owned()));
    }
    let start = first.saturating_add(time.start_ns);
    if start > last {
        let length_ms = (last - first) as f64 / 1e6;
        return Err(Error::flag("--time_ms", format!("starts after the trace ends ({length_ms:.3} ms after its first event)")));
    }
    Ok((start, first.saturating_add(time.end_ns)))
}

/// The cut of `path` as bytes (for tests and the Python module).
pub fn cut_to_vec(path: &Path, selection: &Selection) -> Result<(Vec<u8>, Cut)> {
    let mut out = Vec::new();
    let cut = cut(path, selection, &mut out, Path::new("<memory>"))?;
    Ok((out, cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every prefix of a small trace, and every byte of it changed, is cut
    /// or refused with an error naming the file, never a panic; a cut of
    /// the whole reads back as a trace.
    #[test]
    fn damaged_traces_are_refused() {
        let text = br#"{"schemaVersion": 1, "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 1, "args": {"correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "k\"]}", "pid": 0, "tid": 7, "ts": 25, "dur": 2, "args": {"correlation": 5}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 30, "dur": 10}
], "traceName": "t"}"#;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        let step1 = Selection::steps(StepRange { first: 1, last: 1 });
        std::fs::write(&path, text).unwrap();
        let (bytes, done) = cut_to_vec(&path, &step1).unwrap();
        assert_eq!((done.kept_events, done.total_events, done.steps.clone()), (4, 5, vec![1]));
        let trace = super::super::Trace::from_bytes(&bytes).unwrap();
        assert_eq!(trace.events.len(), 3, "{}", String::from_utf8_lossy(&bytes));
        for len in 0..text.len() {
            std::fs::write(&path, &text[..len]).unwrap();
            if let Err(e) = cut_to_vec(&path, &step1) {
                assert!(e.to_string().contains("t.json"), "{len}: {e}");
            }
        }
        for at in 0..text.len() {
            let mut bad = text.to_vec();
            bad[at] ^= 0x55;
            std::fs::write(&path, &bad).unwrap();
            let _ = cut_to_vec(&path, &step1);
        }
    }

    fn h200() -> std::path::PathBuf {
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pytorch/h200_tx.steps2-3.pt.trace.json.gz")).to_owned()
    }

    /// The correlations of a trace's host events and of its device events.
    fn ends(trace: &super::super::Trace) -> [FxHashSet<u64>; 2] {
        let mut ends = [FxHashSet::default(), FxHashSet::default()];
        for e in &trace.events {
            if let Some(c) = e.correlation {
                ends[usize::from(e.category.on_device())].insert(c.get());
            }
        }
        ends
    }

    /// The ac2g flow arrows of a cut keep the ends they had in the whole
    /// trace (Kineto leaves some without: a `cudaStreamIsCapturing` call's
    /// arrow leads nowhere).
    fn flows_keep_their_ends(cut: &super::super::Trace, whole: &super::super::Trace) {
        let (cut_ends, whole_ends) = (ends(cut), ends(whole));
        for f in cut.flows.iter().filter(|f| cut.str(f.cat) == "ac2g") {
            for side in 0..2 {
                assert!(!whole_ends[side].contains(&f.id) || cut_ends[side].contains(&f.id), "flow {} lost an end", f.id);
            }
        }
    }

    /// A time window that is a step's gives that step's cut, byte for byte.
    #[test]
    fn a_steps_time_is_the_step() {
        let path = h200();
        let (by_step, step) = cut_to_vec(&path, &Selection::steps(StepRange { first: 3, last: 3 })).unwrap();
        let everything = Selection { window: Window::Time(TimeRange { start_ns: 0, end_ns: i64::MAX / 2 }), devices: None, min_dur_ns: None };
        let (_, all) = cut_to_vec(&path, &everything).unwrap();
        assert_eq!(all.kept_events, all.total_events);
        let first = all.window.0;
        let time = TimeRange { start_ns: step.window.0 - first, end_ns: step.window.1 - first };
        let (by_time, cut) = cut_to_vec(&path, &Selection { window: Window::Time(time), ..everything }).unwrap();
        assert!(cut.steps.is_empty() && cut.window == step.window);
        assert!(by_time == by_step, "the time window's cut differs from the step's");
    }

    /// `--devices` keeps the host and the devices listed (this trace has
    /// one GPU, 0); `--min_dur_us` drops the shorter events and says how
    /// many; neither leaves a flow arrow without its ends.
    #[test]
    fn devices_and_durations_are_dropped_whole() {
        let path = h200();
        let step = Selection::steps(StepRange { first: 3, last: 3 });
        let (plain, whole) = cut_to_vec(&path, &step).unwrap();
        let plain_trace = super::super::Trace::from_bytes(&plain).unwrap();
        assert!(plain_trace.events.iter().any(|e| e.category.on_device()));
        let whole_trace = super::super::Trace::open(&path).unwrap();
        flows_keep_their_ends(&plain_trace, &whole_trace);
        let (same, _) = cut_to_vec(&path, &Selection { devices: Some(vec![0]), ..step.clone() }).unwrap();
        assert!(same == plain, "--devices 0 keeps everything of a trace of GPU 0");

        let (host_only, cut) = cut_to_vec(&path, &Selection { devices: Some(vec![1]), ..step.clone() }).unwrap();
        let trace = super::super::Trace::from_bytes(&host_only).unwrap();
        assert!(!trace.events.iter().any(|e| e.category.on_device()));
        assert_eq!(trace.events.len(), plain_trace.events.iter().filter(|e| !e.category.on_device()).count());
        let [_, device] = ends(&whole_trace);
        assert!(trace.flows.iter().all(|f| trace.str(f.cat) != "ac2g" || !device.contains(&f.id)), "an arrow to a dropped device");
        assert!(cut.kept_events < whole.kept_events && cut.too_short == 0);

        let min_dur_ns = 5_000;
        let (long_only, cut) = cut_to_vec(&path, &Selection { min_dur_ns: Some(min_dur_ns), ..step }).unwrap();
        let trace = super::super::Trace::from_bytes(&long_only).unwrap();
        assert!(trace.events.iter().all(|e| e.dur >= min_dur_ns));
        let short = plain_trace.events.iter().filter(|e| e.dur < min_dur_ns).count() as u64;
        assert!(short > 0 && cut.too_short == short, "{} dropped, {short} short", cut.too_short);
        assert_eq!(trace.events.len() as u64, plain_trace.events.len() as u64 - short);
        flows_keep_their_ends(&trace, &whole_trace);
    }
}
