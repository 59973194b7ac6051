//! The few fields of an event a cut reads, parsed from its bytes.

use rustc_hash::FxHashSet;

use super::super::Category;
use super::super::json::{Next, Parser};
use super::super::read::micros_to_ns;
use super::select::Selection;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ph {
    Metadata,
    /// `X`: a complete event, the only kind with a duration.
    Complete,
    Flow,
    Other,
}

/// The fields of one event the cut reads.
pub(super) struct EventFields {
    pub(super) ph: Ph,
    pub(super) category: Category,
    /// `N` of a `ProfilerStep#N`.
    pub(super) step: Option<u64>,
    pub(super) ts: Option<i64>,
    pub(super) dur: Option<i64>,
    /// `args.correlation`, or a flow's `id`.
    pub(super) correlation: Option<u64>,
    /// `args.device`, else a numeric `pid` (Kineto's for a device's
    /// events).
    pub(super) device: Option<i64>,
}

impl EventFields {
    /// The fields of the event `bytes`, parsed in `buf` (kept from one
    /// event to the next: no allocation an event).
    pub(super) fn of(bytes: &[u8], buf: &mut Vec<u8>) -> std::result::Result<EventFields, String> {
        let syntax = |e: super::super::json::SyntaxError| format!("an event is not JSON at its byte {}: {}", e.offset, e.message);
        buf.clear();
        buf.extend_from_slice(bytes);
        let mut p = Parser::from_vec(std::mem::take(buf), bytes.len());
        let mut e = EventFields { ph: Ph::Other, category: Category::Other, step: None, ts: None, dur: None, correlation: None, device: None };
        if p.peek().map_err(syntax)? != Next::Object {
            return Ok(e);
        }
        p.begin_object().map_err(syntax)?;
        let mut first = true;
        let (mut flow_id, mut pid) = (None, None);
        while let Some(key) = p.next_key(&mut first).map_err(syntax)? {
            let key: &[u8] = match key {
                b"ph" => b"ph",
                b"cat" => b"cat",
                b"name" => b"name",
                b"ts" => b"ts",
                b"dur" => b"dur",
                b"id" => b"id",
                b"pid" => b"pid",
                b"args" => b"args",
                _ => b"",
            };
            match key {
                b"ph" if p.peek().map_err(syntax)? == Next::String => {
                    e.ph = match p.string().map_err(syntax)? {
                        b"M" => Ph::Metadata,
                        b"X" => Ph::Complete,
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
                b"pid" if p.peek().map_err(syntax)? == Next::Number => pid = signed(p.number().map_err(syntax)?),
                b"args" if p.peek().map_err(syntax)? == Next::Object => {
                    p.begin_object().map_err(syntax)?;
                    let mut first = true;
                    while let Some(key) = p.next_key(&mut first).map_err(syntax)? {
                        let key = match key {
                            b"correlation" => b"correlation".as_slice(),
                            b"device" => b"device",
                            _ => b"",
                        };
                        let number = p.peek().map_err(syntax)? == Next::Number;
                        match key {
                            b"correlation" if number => e.correlation = unsigned(p.number().map_err(syntax)?),
                            b"device" if number => e.device = signed(p.number().map_err(syntax)?),
                            _ => p.skip().map_err(syntax)?,
                        }
                    }
                }
                _ => p.skip().map_err(syntax)?,
            }
        }
        if e.ph == Ph::Flow {
            e.correlation = flow_id;
        }
        e.device = e.device.or(pid);
        *buf = p.into_buf();
        Ok(e)
    }

    /// Whether the event's span meets the window (a zero-length one:
    /// whether it is in it).
    pub(super) fn overlaps(&self, (start, end): (i64, i64)) -> bool {
        let Some(ts) = self.ts else { return false };
        let dur = self.dur.unwrap_or(0);
        ts < end && (ts.saturating_add(dur) > start || (dur <= 0 && ts >= start))
    }

    /// Whether the cut keeps this event: `correlations` are those the
    /// window needs, `dropped` those whose launch or device work the
    /// selection drops (their flows go too).
    pub(super) fn kept(&self, window: (i64, i64), selection: &Selection, correlations: &FxHashSet<u64>, dropped: &FxHashSet<u64>) -> Kept {
        if self.ph == Ph::Metadata || self.ts.is_none() {
            return Kept::Yes;
        }
        let correlated = self.correlation.is_some_and(|c| correlations.contains(&c));
        let in_time = match self.ph {
            Ph::Flow => (correlated || self.overlaps(window)) && !self.correlation.is_some_and(|c| dropped.contains(&c)),
            _ if self.category.on_device() => (correlated || self.overlaps(window)) && selection.keeps_device(self.device),
            _ if self.category.is_launch() => correlated || self.overlaps(window),
            _ => self.overlaps(window),
        };
        match (in_time, self.ph == Ph::Complete && !selection.keeps_duration(self.dur)) {
            (false, _) => Kept::No,
            (true, true) => Kept::TooShort,
            (true, false) => Kept::Yes,
        }
    }

    /// Whether the selection drops this launch or device work whatever its
    /// time (its device, its duration).
    pub(super) fn dropped_by(&self, selection: &Selection) -> bool {
        (self.category.on_device() && !selection.keeps_device(self.device)) || (self.ph == Ph::Complete && !selection.keeps_duration(self.dur))
    }
}

/// What [`EventFields::kept`] decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kept {
    Yes,
    No,
    /// In the selection's time, but shorter than `--min_dur_us`.
    TooShort,
}

fn unsigned(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

fn signed(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}
