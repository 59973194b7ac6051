//! The few fields of an event that a streaming pass reads, parsed from
//! its bytes.

use std::io::Read;

use super::super::Category;
use super::super::json::{Next, Parser, SyntaxError};
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
#[derive(Debug, PartialEq)]
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
        buf.clear();
        buf.extend_from_slice(bytes);
        let mut p = Parser::from_vec(std::mem::take(buf), bytes.len());
        let e = EventFields::read(&mut p).map_err(|e| format!("an event is not JSON at its byte {}: {}", e.offset, e.message));
        *buf = p.into_buf();
        e
    }

    /// The fields of the event that starts at `text[at]`, and where it
    /// ends, read from the text without the parser: `None` where this does
    /// not tell (anything but an object of plain keys and values, a key or
    /// a string read with an escape, a value cut short): [`EventFields::read`]
    /// then reads it. The values skipped are not checked to be JSON (a
    /// window's reading does that); on JSON, the fields are the same.
    pub(in crate::inputs::pytorch) fn quick(text: &[u8], at: usize) -> Option<(EventFields, usize)> {
        let mut e = EventFields::none();
        let (mut flow_id, mut pid) = (None, None);
        let end = members(text, at, |key, i| {
            Some(match (key, *text.get(i)?) {
                (b"ph", b'"') => {
                    let (ph, after) = plain_string(text, i)?;
                    e.ph = Ph::of(ph);
                    after
                }
                (b"cat", b'"') => {
                    let (cat, after) = plain_string(text, i)?;
                    e.category = Category::of(cat);
                    after
                }
                (b"name", b'"') => {
                    let (name, after) = plain_string(text, i)?;
                    e.name(name);
                    after
                }
                (b"ts" | b"dur" | b"id" | b"pid", b'-' | b'0'..=b'9') => {
                    let (number, after) = number(text, i)?;
                    match key {
                        b"ts" => e.ts = micros_to_ns(number),
                        b"dur" => e.dur = micros_to_ns(number),
                        b"id" => flow_id = unsigned(number),
                        _ => pid = signed(number),
                    }
                    after
                }
                (b"args", b'{') => members(text, i, |key, i| {
                    Some(match (key, *text.get(i)?) {
                        (b"correlation" | b"device" | b"stream", b'-' | b'0'..=b'9') => {
                            let (number, after) = number(text, i)?;
                            match key {
                                b"correlation" => e.correlation = unsigned(number),
                                b"device" => e.device = signed(number),
                                _ => e.stream = true,
                            }
                            after
                        }
                        _ => skip(text, i)?,
                    })
                })?,
                _ => skip(text, i)?,
            })
        })?;
        e.finish(flow_id, pid);
        Some((e, end))
    }

    /// The fields of the value `p` is at (an event; any other value gives
    /// none), which it reads to its end.
    pub(in crate::inputs::pytorch) fn read<R: Read>(p: &mut Parser<R>) -> std::result::Result<EventFields, SyntaxError> {
        let mut e = EventFields::none();
        if p.peek()? != Next::Object {
            p.skip()?;
            return Ok(e);
        }
        p.begin_object()?;
        let mut first = true;
        let (mut flow_id, mut pid) = (None, None);
        while let Some(key) = p.next_key(&mut first)? {
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
                b"ph" if p.peek()? == Next::String => e.ph = Ph::of(p.string()?),
                b"cat" if p.peek()? == Next::String => e.category = Category::of(p.string()?),
                b"name" if p.peek()? == Next::String => e.name(p.string()?),
                b"ts" if p.peek()? == Next::Number => e.ts = micros_to_ns(p.number()?),
                b"dur" if p.peek()? == Next::Number => e.dur = micros_to_ns(p.number()?),
                b"id" if p.peek()? == Next::Number => flow_id = unsigned(p.number()?),
                b"pid" if p.peek()? == Next::Number => pid = signed(p.number()?),
                b"args" if p.peek()? == Next::Object => {
                    p.begin_object()?;
                    let mut first = true;
                    while let Some(key) = p.next_key(&mut first)? {
                        let key = match key {
                            b"correlation" => b"correlation".as_slice(),
                            b"device" => b"device",
                            b"stream" => b"stream",
                            _ => b"",
                        };
                        let number = p.peek()? == Next::Number;
                        match key {
                            b"correlation" if number => e.correlation = unsigned(p.number()?),
                            b"device" if number => e.device = signed(p.number()?),
                            b"stream" if number => {
                                e.stream = true;
                                p.skip()?
                            }
                            _ => p.skip()?,
                        }
                    }
                }
                _ => p.skip()?,
            }
        }
        e.finish(flow_id, pid);
        Ok(e)
    }

    fn none() -> EventFields {
        EventFields {
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
        }
    }

    fn name(&mut self, name: &[u8]) {
        self.sync = matches!(name, b"Event Sync" | b"Context Sync");
        self.step = name.strip_prefix(b"ProfilerStep#").and_then(|n| std::str::from_utf8(n).ok()?.parse().ok());
    }

    /// Settles the fields once all keys are read.
    fn finish(&mut self, flow_id: Option<u64>, pid: Option<i64>) {
        if self.ph == Ph::Flow {
            self.correlation = flow_id;
        }
        self.args_device = self.device;
        self.device = self.device.or(pid);
    }

    /// Whether the event's span meets the window (a zero-length one:
    /// whether it is in it).
    pub(in crate::inputs::pytorch) fn overlaps(&self, (start, end): (i64, i64)) -> bool {
        let Some(ts) = self.ts else { return false };
        let dur = self.dur.unwrap_or(0);
        ts < end && (ts.saturating_add(dur) > start || (dur <= 0 && ts >= start))
    }
}

impl Ph {
    fn of(ph: &[u8]) -> Ph {
        match ph {
            b"M" => Ph::Metadata,
            b"X" => Ph::Complete,
            b"s" | b"f" | b"t" => Ph::Flow,
            _ => Ph::Other,
        }
    }
}

/// Past the JSON white space from `i`.
#[inline]
fn space(text: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = text.get(i) {
        i += 1;
    }
    i
}

/// Reads the object whose `{` is at `text[at]`: hands each member's key
/// (a plain string) and the index of its value (after white space) to
/// `value`, which returns where the value ends; returns the index after the
/// `}`. `None`: not such an object, or cut short.
fn members(text: &[u8], at: usize, mut value: impl FnMut(&[u8], usize) -> Option<usize>) -> Option<usize> {
    if text.get(at) != Some(&b'{') {
        return None;
    }
    let mut i = space(text, at + 1);
    if text.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        let (key, after) = plain_string(text, i)?;
        i = space(text, after);
        if text.get(i) != Some(&b':') {
            return None;
        }
        i = space(text, value(key, space(text, i + 1))?);
        match text.get(i)? {
            b',' => i = space(text, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The string that starts at `text[i]` (a `"`), and where it ends; `None`
/// if it has an escape or is cut short.
#[inline]
fn plain_string(text: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if text.get(i) != Some(&b'"') {
        return None;
    }
    let k = quote_or_backslash(&text[i + 1..])?;
    let close = i + 1 + k;
    (text[close] == b'"').then(|| (&text[i + 1..close], close + 1))
}

/// The first `"` or `\\` (most strings end within a few bytes: looked at
/// byte by byte first, as the parser does).
#[inline]
fn quote_or_backslash(hay: &[u8]) -> Option<usize> {
    const SHORT: usize = 16;
    match hay[..hay.len().min(SHORT)].iter().position(|&b| b == b'"' || b == b'\\') {
        Some(k) => Some(k),
        None if hay.len() > SHORT => memchr::memchr2(b'"', b'\\', &hay[SHORT..]).map(|k| k + SHORT),
        None => None,
    }
}

/// The JSON number that starts at `text[i]`, and where it ends; `None`
/// if it is not one or may be cut short.
#[inline]
fn number(text: &[u8], i: usize) -> Option<(&[u8], usize)> {
    let digits = |mut j: usize| {
        while let Some(b'0'..=b'9') = text.get(j) {
            j += 1;
        }
        j
    };
    let mut j = i + usize::from(text.get(i) == Some(&b'-'));
    let int = j;
    j = digits(j);
    if j == int || (text[int] == b'0' && j > int + 1) {
        return None;
    }
    if text.get(j) == Some(&b'.') {
        let frac = j + 1;
        j = digits(frac);
        if j == frac {
            return None;
        }
    }
    if let Some(b'e' | b'E') = text.get(j) {
        j += 1;
        if let Some(b'+' | b'-') = text.get(j) {
            j += 1;
        }
        let exp = j;
        j = digits(exp);
        if j == exp {
            return None;
        }
    }
    // (What follows is read by the caller; nothing at all: cut short.)
    match text.get(j) {
        None | Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') => None,
        Some(_) => Some((&text[i..j], j)),
    }
}

/// Where the value that starts at `text[i]` ends, found by its brackets
/// and strings alone; `None` if it is cut short.
pub(in crate::inputs::pytorch) fn skip(text: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *text.get(i)? {
            b'"' => {
                i += 1;
                loop {
                    let k = quote_or_backslash(&text[i..])?;
                    if text[i + k] == b'"' {
                        i += k + 1;
                        break;
                    }
                    i += k + 2;
                    if i > text.len() {
                        return None;
                    }
                }
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            _ => {
                // A number or literal, or white space and separators.
                if depth == 0 {
                    let start = i;
                    while i < text.len() && !matches!(text[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        i += 1;
                    }
                    return (i > start && i < text.len()).then_some(i);
                }
                i += 1;
            }
        }
        if depth == 0 {
            return Some(i);
        }
    }
}

/// A JSON number's text as a whole number (`None` with a fraction or
/// an exponent, or out of range), as `str::parse` reads it.
fn unsigned(text: &[u8]) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    text.iter().try_fold(0u64, |n, &d| if d.is_ascii_digit() { n.checked_mul(10)?.checked_add(u64::from(d - b'0')) } else { None })
}

fn signed(text: &[u8]) -> Option<i64> {
    match text.split_first() {
        Some((b'-', digits)) => i64::try_from(-i128::from(unsigned(digits)?)).ok(),
        _ => i64::try_from(unsigned(text)?).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `quick` gives the parser's fields and end, or leaves the event to it.
    #[test]
    fn quick_reads_as_the_parser() {
        let events: [(&[u8], bool); 18] = [
            (br#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 150.5, "dur": 60, "args": {"correlation": 7, "device": 1, "stream": 7}}"#, true),
            (br#"{"ph":"X","cat":"cpu_op","name":"ProfilerStep#12","pid":-3,"ts":1e3,"dur":2.0004,"args":{"x":[1,{"y":"}, {"}],"correlation":"7"}}"#, true),
            (br#"{ "ph" : "f" , "id" : 9 , "ts" : 1 , "args" : { "correlation" : 8 } }"#, true),
            (br#"{"ph": "s", "id": "9", "name": "Event Sync", "ts": -1}"#, true),
            (br#"{"name": "Context Sync", "name": "other", "ph": 1, "cat": ["kernel"], "args": [], "ts": null, "dur": true}"#, true),
            (br#"{"args": {"device": 2, "device": -1, "stream": null, "a": {"b": [[], {}]}}}"#, true),
            (br#"{}"#, true),
            (br#"{"ph": "M", "args": {}}"#, true),
            (br#"{"name": "a\"b", "ts": 1}"#, false),
            (br#"{"n\u0061me": "ProfilerStep#1"}"#, false),
            (br#"{"ph": "X", "x": "\\", "ts": 3}"#, true),
            (br#"{"ts": 01}"#, false),
            (br#"{"ts": 1.}"#, false),
            (br#"{"ts": -}"#, false),
            (br#"{"ts": 1.5e+3, "dur": 0.25E-1, "id": 18446744073709551615, "pid": -9223372036854775808}"#, true),
            (br#"{"id": 18446744073709551616, "pid": 9223372036854775808, "args": {"correlation": 1.0, "device": -0}}"#, true),
            (br#"[1, 2]"#, false),
            (br#"{"ts": 1 "dur": 2}"#, false),
        ];
        for (text, quick) in events {
            let mut padded = text.to_vec();
            padded.extend_from_slice(b" ,");
            let mut p = Parser::from_vec(padded.clone(), padded.len());
            let read = EventFields::read(&mut p);
            let shown = String::from_utf8_lossy(text);
            match EventFields::quick(&padded, 0) {
                Some((e, end)) => {
                    assert!(quick, "{shown}");
                    assert_eq!(Ok(&e), read.as_ref(), "{shown}");
                    assert_eq!(end as u64, p.offset(), "{shown}");
                }
                None => assert!(!quick, "{shown}"),
            }
            // Cut short anywhere, it is left to the parser.
            for cut in 0..text.len() {
                assert!(EventFields::quick(&text[..cut], 0).is_none(), "{shown} cut at {cut}");
            }
        }
    }
}
