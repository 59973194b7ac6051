//! `rtfprof cut --pytorch_path TRACE --steps A..B -o OUT`: a smaller Kineto
//! trace holding the steps asked for (`ProfilerStep#A` to `#B`), for the
//! tools people already use on traces too large for them.
//!
//! Three streaming passes over the file (a `.gz` is decompressed three
//! times): the first finds the steps' window (from the first kept step's
//! start to the last one's end), the second the correlation ids of the
//! launches in it and of the device work running in it, the third writes.
//! Only one event's bytes and the window's correlation ids are held at a
//! time, so memory does not grow with the trace.
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
//! So a step of the cut has what it had in the whole trace: `rtfprof steps`
//! gives the cut's steps the same rows as the whole trace's.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use rustc_hash::FxHashSet;

use super::json::{Next, Parser};
use super::read::micros_to_ns;
use super::{Category, KIND};
use crate::error::{Error, Result};
pub use crate::inputs::step_range::StepRange;

/// What the cut kept, for the line `rtfprof cut` prints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cut {
    /// The steps found in the range, in order.
    pub steps: Vec<u64>,
    pub kept_events: u64,
    pub total_events: u64,
    /// The window, in the trace's nanoseconds.
    pub window: (i64, i64),
}

/// Writes to `out` the cut of the trace at `path` to `steps`; `out_path`
/// names `out` in errors.
pub fn cut(path: &Path, steps: StepRange, out: &mut dyn Write, out_path: &Path) -> Result<Cut> {
    let invalid = |message: String| Error::input(KIND, path, message);
    // 1. The window of the steps asked for.
    let mut window: Option<(i64, i64)> = None;
    let mut found = Vec::new();
    let mut all_steps = Vec::new();
    let mut buf = Vec::new();
    scan(path, &mut |item| {
        // (Only steps are read: most events are not parsed at all.)
        let Item::Event(bytes) = item else { return Ok(()) };
        if memchr::memmem::find(bytes, b"ProfilerStep#").is_none() {
            return Ok(());
        }
        let e = EventFields::of(bytes, &mut buf).map_err(invalid)?;
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
    // 2. The correlations the window needs: its launches', and those of
    // the device work running in it.
    let mut correlations = FxHashSet::default();
    scan(path, &mut |item| {
        let Item::Event(bytes) = item else { return Ok(()) };
        if memchr::memmem::find(bytes, b"\"correlation\"").is_none() {
            return Ok(());
        }
        let e = EventFields::of(bytes, &mut buf).map_err(invalid)?;
        if let Some(c) = e.correlation
            && e.ph != Ph::Flow
            && e.overlaps(window)
        {
            correlations.insert(c);
        }
        Ok(())
    })?;
    // 3. The cut, written.
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
                if EventFields::of(bytes, &mut buf).map_err(invalid)?.kept(window, &correlations) {
                    cut.kept_events += 1;
                    w(out, if first_event { b"\n    " } else { b",\n    " })?;
                    first_event = false;
                    w(out, bytes)?;
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ph {
    Metadata,
    Flow,
    Other,
}

/// The fields of one event the cut reads.
struct EventFields {
    ph: Ph,
    category: Category,
    /// `N` of a `ProfilerStep#N`.
    step: Option<u64>,
    ts: Option<i64>,
    dur: Option<i64>,
    /// `args.correlation`, or a flow's `id`.
    correlation: Option<u64>,
}

impl EventFields {
    /// The fields of the event `bytes`, parsed in `buf` (kept from one
    /// event to the next: no allocation an event).
    fn of(bytes: &[u8], buf: &mut Vec<u8>) -> std::result::Result<EventFields, String> {
        let syntax = |e: super::json::SyntaxError| format!("an event is not JSON at its byte {}: {}", e.offset, e.message);
        buf.clear();
        buf.extend_from_slice(bytes);
        let mut p = Parser::from_vec(std::mem::take(buf), bytes.len());
        let mut e = EventFields { ph: Ph::Other, category: Category::Other, step: None, ts: None, dur: None, correlation: None };
        if p.peek().map_err(syntax)? != Next::Object {
            return Ok(e);
        }
        p.begin_object().map_err(syntax)?;
        let mut first = true;
        let mut flow_id = None;
        while let Some(key) = p.next_key(&mut first).map_err(syntax)? {
            let key: &[u8] = match key {
                b"ph" => b"ph",
                b"cat" => b"cat",
                b"name" => b"name",
                b"ts" => b"ts",
                b"dur" => b"dur",
                b"id" => b"id",
                b"args" => b"args",
                _ => b"",
            };
            match key {
                b"ph" if p.peek().map_err(syntax)? == Next::String => {
                    e.ph = match p.string().map_err(syntax)? {
                        b"M" => Ph::Metadata,
                        b"s" | b"f" | b"t" => Ph::Flow,
                        _ => Ph::Other,
                    }
                }
                b"cat" if p.peek().map_err(syntax)? == Next::String => e.category = Category::of(p.string().map_err(syntax)?),
                b"name" if p.peek().map_err(syntax)? == Next::String => {
                    e.step = p.string().map_err(syntax)?.strip_prefix(b"ProfilerStep#").and_then(|n| std::str::from_utf8(n).ok()?.parse().ok())
                }
                b"ts" if p.peek().map_err(syntax)? == Next::Number => e.ts = micros_to_ns(p.number().map_err(syntax)?),
                b"dur" if p.peek().map_err(syntax)? == Next::Number => e.dur = micros_to_ns(p.number().map_err(syntax)?),
                b"id" if p.peek().map_err(syntax)? == Next::Number => flow_id = unsigned(p.number().map_err(syntax)?),
                b"args" if p.peek().map_err(syntax)? == Next::Object => {
                    p.begin_object().map_err(syntax)?;
                    let mut first = true;
                    while let Some(key) = p.next_key(&mut first).map_err(syntax)? {
                        let correlation = key == b"correlation";
                        if correlation && p.peek().map_err(syntax)? == Next::Number {
                            e.correlation = unsigned(p.number().map_err(syntax)?);
                        } else {
                            p.skip().map_err(syntax)?;
                        }
                    }
                }
                _ => p.skip().map_err(syntax)?,
            }
        }
        if e.ph == Ph::Flow {
            e.correlation = flow_id;
        }
        *buf = p.into_buf();
        Ok(e)
    }

    /// Whether the event's span meets the window (a zero-length one:
    /// whether it is in it).
    fn overlaps(&self, (start, end): (i64, i64)) -> bool {
        let Some(ts) = self.ts else { return false };
        let dur = self.dur.unwrap_or(0);
        ts < end && (ts.saturating_add(dur) > start || (dur <= 0 && ts >= start))
    }

    fn kept(&self, window: (i64, i64), correlations: &FxHashSet<u64>) -> bool {
        if self.ph == Ph::Metadata || self.ts.is_none() {
            return true;
        }
        let correlated = self.correlation.is_some_and(|c| correlations.contains(&c));
        match self.ph {
            Ph::Flow => correlated || self.overlaps(window),
            _ if self.category.on_device() || self.category.is_launch() => correlated || self.overlaps(window),
            _ => self.overlaps(window),
        }
    }
}

fn unsigned(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// What [`scan`] hands on, as bytes of the file.
enum Item<'a> {
    /// A top-level field (its key with the quotes) and its value; `None`
    /// where `traceEvents`' events begin.
    Field(&'a [u8], Option<&'a [u8]>),
    /// One event of `traceEvents`.
    Event(&'a [u8]),
}

/// The trace's top-level fields and each event of `traceEvents`, in file
/// order.
fn scan(path: &Path, on_item: &mut dyn FnMut(Item<'_>) -> Result<()>) -> Result<()> {
    let io_error = |source| Error::Io { kind: KIND, path: path.to_owned(), source };
    let file = std::fs::File::open(path).map_err(io_error)?;
    let mut head = BufReader::with_capacity(1 << 20, file);
    let gzipped = head.fill_buf().map_err(io_error)?.starts_with(&super::read::GZIP_MAGIC);
    let reader: Box<dyn BufRead> = if gzipped { Box::new(BufReader::with_capacity(1 << 20, flate2::read::MultiGzDecoder::new(head))) } else { Box::new(head) };
    let mut s = Scanner { r: reader, offset: 0 };
    let invalid = |message: String| Error::input(KIND, path, message);
    let at = |offset: u64, what: &str| invalid(format!("not a Kineto trace: {what} at byte {offset}"));
    let mut key = Vec::new();
    let mut value = Vec::new();
    if s.next_token().map_err(io_error)? != Some(b'{') {
        return Err(at(s.offset, "no JSON object"));
    }
    s.bump();
    let mut first = true;
    loop {
        match s.next_token().map_err(io_error)? {
            Some(b'}') => break,
            Some(b',') if !first => s.bump(),
            Some(_) if first => {}
            _ => return Err(at(s.offset, "the object is cut short")),
        }
        first = false;
        if s.next_token().map_err(io_error)? != Some(b'"') {
            return Err(at(s.offset, "a key is missing"));
        }
        key.clear();
        s.copy_value(&mut key).map_err(io_error)?.map_err(|what| at(s.offset, what))?;
        if s.next_token().map_err(io_error)? != Some(b':') {
            return Err(at(s.offset, "a ':' is missing"));
        }
        s.bump();
        s.next_token().map_err(io_error)?;
        if key == b"\"traceEvents\"" && s.peek_byte() == Some(b'[') {
            on_item(Item::Field(&key, None))?;
            s.bump();
            let mut first_event = true;
            loop {
                match s.next_token().map_err(io_error)? {
                    Some(b']') => {
                        s.bump();
                        break;
                    }
                    Some(b',') if !first_event => s.bump(),
                    Some(_) if first_event => {}
                    _ => return Err(at(s.offset, "traceEvents is cut short")),
                }
                first_event = false;
                s.next_token().map_err(io_error)?;
                value.clear();
                s.copy_value(&mut value).map_err(io_error)?.map_err(|what| at(s.offset, what))?;
                on_item(Item::Event(&value))?;
            }
        } else {
            value.clear();
            s.copy_value(&mut value).map_err(io_error)?.map_err(|what| at(s.offset, what))?;
            on_item(Item::Field(&key, Some(&value)))?;
        }
    }
    Ok(())
}

/// JSON values' bytes, one at a time, from a stream.
struct Scanner<R> {
    r: R,
    offset: u64,
}

impl<R: BufRead> Scanner<R> {
    fn peek_byte(&mut self) -> Option<u8> {
        self.r.fill_buf().ok()?.first().copied()
    }

    fn bump(&mut self) {
        self.r.consume(1);
        self.offset += 1;
    }

    /// The next byte that is not white space, not consumed.
    fn next_token(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                return Ok(None);
            }
            match buf.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(i) => {
                    let b = buf[i];
                    self.r.consume(i);
                    self.offset += i as u64;
                    return Ok(Some(b));
                }
                None => {
                    let n = buf.len();
                    self.r.consume(n);
                    self.offset += n as u64;
                }
            }
        }
    }

    /// Appends the bytes of the value that starts here (a string, number,
    /// literal, object or array) to `out`; the inner error says what is
    /// wrong with the text.
    fn copy_value(&mut self, out: &mut Vec<u8>) -> std::io::Result<std::result::Result<(), &'static str>> {
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        loop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                return Ok(Err("the text ends inside a value"));
            }
            let mut used = 0;
            let mut done = false;
            for &b in buf {
                if in_string {
                    used += 1;
                    if escaped {
                        escaped = false;
                    } else if b == b'\\' {
                        escaped = true;
                    } else if b == b'"' {
                        in_string = false;
                        if depth == 0 {
                            done = true;
                            break;
                        }
                    }
                    continue;
                }
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' if depth == 0 => {
                        done = true;
                        break;
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            used += 1;
                            done = true;
                            break;
                        }
                    }
                    b',' | b' ' | b'\n' | b'\r' | b'\t' if depth == 0 => {
                        done = true;
                        break;
                    }
                    _ => {}
                }
                used += 1;
            }
            out.extend_from_slice(&buf[..used]);
            self.r.consume(used);
            self.offset += used as u64;
            if done {
                return Ok(if out.is_empty() { Err("a value is missing") } else { Ok(()) });
            }
        }
    }
}

/// The cut of `path` as bytes (for tests and the Python module).
pub fn cut_to_vec(path: &Path, steps: StepRange) -> Result<(Vec<u8>, Cut)> {
    let mut out = Vec::new();
    let cut = cut(path, steps, &mut out, Path::new("<memory>"))?;
    Ok((out, cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_copied_whole() {
        let text = br#"{"a": [1, {"b": "x]}\"y"}], "n": -1.5e3, "s": "q,\\", "traceEvents": [{"ph": "M"}, {"ts": 1}]}"#;
        let mut s = Scanner { r: &text[..], offset: 0 };
        assert_eq!(s.next_token().unwrap(), Some(b'{'));
        s.bump();
        let mut out = Vec::new();
        s.next_token().unwrap();
        s.copy_value(&mut out).unwrap().unwrap();
        assert_eq!(out, br#""a""#);
        assert_eq!(s.next_token().unwrap(), Some(b':'));
        s.bump();
        s.next_token().unwrap();
        out.clear();
        s.copy_value(&mut out).unwrap().unwrap();
        assert_eq!(out, br#"[1, {"b": "x]}\"y"}]"#);
    }

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
        let step1 = StepRange { first: 1, last: 1 };
        std::fs::write(&path, text).unwrap();
        let (bytes, done) = cut_to_vec(&path, step1).unwrap();
        assert_eq!((done.kept_events, done.total_events, done.steps.clone()), (4, 5, vec![1]));
        let trace = super::super::Trace::from_bytes(&bytes).unwrap();
        assert_eq!(trace.events.len(), 3, "{}", String::from_utf8_lossy(&bytes));
        for len in 0..text.len() {
            std::fs::write(&path, &text[..len]).unwrap();
            if let Err(e) = cut_to_vec(&path, step1) {
                assert!(e.to_string().contains("t.json"), "{len}: {e}");
            }
        }
        for at in 0..text.len() {
            let mut bad = text.to_vec();
            bad[at] ^= 0x55;
            std::fs::write(&path, &bad).unwrap();
            let _ = cut_to_vec(&path, step1);
        }
    }
}
