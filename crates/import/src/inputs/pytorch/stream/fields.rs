//! The few fields of an event that a streaming pass reads, parsed from
//! its bytes.

use super::super::Category;
use super::super::json::{Next, Parser};
use super::super::read::micros_to_ns;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::inputs::pytorch) enum Ph {
    Metadata,
    /// `X`: a complete event, the only kind with a duration.
    Complete,
    Flow,
    Other,
}

/// The fields of one event a streaming pass reads.
pub(in crate::inputs::pytorch) struct EventFields {
    pub(in crate::inputs::pytorch) ph: Ph,
    pub(in crate::inputs::pytorch) category: Category,
    /// `N` of a `ProfilerStep#N`.
    pub(in crate::inputs::pytorch) step: Option<u64>,
    pub(in crate::inputs::pytorch) ts: Option<i64>,
    pub(in crate::inputs::pytorch) dur: Option<i64>,
    /// `args.correlation`, or a flow's `id`.
    pub(in crate::inputs::pytorch) correlation: Option<u64>,
    /// `args.device`, else a numeric `pid` (Kineto's for a device's
    /// events).
    pub(in crate::inputs::pytorch) device: Option<i64>,
    /// `args.device` alone (the reader's [`super::super::Event::device`]).
    pub(in crate::inputs::pytorch) args_device: Option<i64>,
    /// Whether `args.stream` is a number (HTA's test for device work).
    pub(in crate::inputs::pytorch) stream: bool,
    /// Whether the name is one of the device-wide syncs HTA counts as
    /// device work (`Event Sync`, `Context Sync`).
    pub(in crate::inputs::pytorch) sync: bool,
}

impl EventFields {
    /// The fields of the event `bytes`, parsed in `buf` (kept from one
    /// event to the next: no allocation an event).
    pub(in crate::inputs::pytorch) fn of(bytes: &[u8], buf: &mut Vec<u8>) -> std::result::Result<EventFields, String> {
        let syntax = |e: super::super::json::SyntaxError| format!("an event is not JSON at its byte {}: {}", e.offset, e.message);
        buf.clear();
        buf.extend_from_slice(bytes);
        let mut p = Parser::from_vec(std::mem::take(buf), bytes.len());
        let mut e = EventFields {
            ph: Ph::Other,
            category: Category::Other,
            step: None,
            ts: None,
            dur: None,
            correlation: None,
            device: None,
            args_device: None,
            stream: false,
            sync: false,
        };
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
                    let name = p.string().map_err(syntax)?;
                    e.sync = matches!(name, b"Event Sync" | b"Context Sync");
                    e.step = name.strip_prefix(b"ProfilerStep#").and_then(|n| std::str::from_utf8(n).ok()?.parse().ok())
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
                            b"stream" => b"stream",
                            _ => b"",
                        };
                        let number = p.peek().map_err(syntax)? == Next::Number;
                        match key {
                            b"correlation" if number => e.correlation = unsigned(p.number().map_err(syntax)?),
                            b"device" if number => e.device = signed(p.number().map_err(syntax)?),
                            b"stream" if number => {
                                e.stream = true;
                                p.skip().map_err(syntax)?
                            }
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
        e.args_device = e.device;
        e.device = e.device.or(pid);
        *buf = p.into_buf();
        Ok(e)
    }

    /// Whether the event's span meets the window (a zero-length one:
    /// whether it is in it).
    pub(in crate::inputs::pytorch) fn overlaps(&self, (start, end): (i64, i64)) -> bool {
        let Some(ts) = self.ts else { return false };
        let dur = self.dur.unwrap_or(0);
        ts < end && (ts.saturating_add(dur) > start || (dur <= 0 && ts >= start))
    }
}

fn unsigned(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

fn signed(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}
