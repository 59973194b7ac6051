//! The elements of `traceEvents` read on several threads, in segments of
//! the text cut at likely boundaries between events, as the whole-trace
//! reader cuts them (`read::Builder::events_split`), for a pass that keeps
//! a little of each segment.

use std::io::Read;

use super::super::json::{Parser, SyntaxError};
use super::super::pool::OrderedPool;
use super::super::read::Split;
use super::fields::{self, EventFields};

/// What is handed each event: its fields, its bytes, and where they start
/// in the text read.
pub(in crate::inputs::pytorch) type OnEvent<'a> = dyn FnMut(&EventFields, &[u8], usize) + 'a;

/// How reading a segment's elements ended.
pub(in crate::inputs::pytorch) enum End {
    /// At the end of the segment, after a `,`.
    Boundary,
    /// After the array's `]`, at this offset of the segment.
    Close(usize),
    /// Right after an event, at the end of the text (white space aside).
    Ended,
    /// Elements up to this offset (after a `,`, or the segment's start)
    /// were read; the next one was not (cut short, or not JSON).
    Failed(usize, SyntaxError),
}

/// Reads the elements of the segment `text[..len]` (after the array's `[`
/// where `first`, else after a `,`), handing each event's fields and its
/// bytes' range in the text to `on_event` once what follows it is seen (a
/// `,`, the `]`, or the end of the text). Events are read by
/// [`EventFields::quick`], and by the parser where it cannot tell.
pub(in crate::inputs::pytorch) fn events_of(text: Vec<u8>, len: usize, first: bool, on_event: &mut OnEvent) -> (End, Vec<u8>) {
    let end = elements(&text[..len], first, on_event);
    (end, text)
}

fn elements(text: &[u8], first: bool, on_event: &mut OnEvent) -> End {
    let space = |mut i: usize| {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = text.get(i) {
            i += 1;
        }
        i
    };
    let failed = |read_to: usize, offset: usize, message: &str| End::Failed(read_to, SyntaxError { offset: offset as u64, message: message.into() });
    let mut i = space(0);
    if first && text.get(i) == Some(&b']') {
        return End::Close(i + 1);
    }
    let mut read_to = 0;
    loop {
        let (e, end) = match EventFields::quick(text, i) {
            Some(quick) => quick,
            // (The parser reads the event alone where its end is found;
            // the rest of the text where it is not, to say what is wrong.)
            None => {
                let read = match fields::skip(text, i) {
                    Some(end) => {
                        let mut p = Parser::from_vec(text[i..end].to_vec(), end - i);
                        EventFields::read(&mut p).map(|e| (e, i + p.offset() as usize))
                    }
                    None => {
                        let mut p = Parser::new(&text[i..]);
                        EventFields::read(&mut p).map(|e| (e, i + p.offset() as usize))
                    }
                };
                match read {
                    Ok(read) => read,
                    Err(e) => return End::Failed(read_to, SyntaxError { offset: i as u64 + e.offset, message: e.message }),
                }
            }
        };
        let after = space(end);
        let more = match text.get(after) {
            Some(b',') => true,
            Some(b']') => false,
            Some(_) => return failed(read_to, after, "expected ',' or ']' after an event"),
            None => {
                on_event(&e, &text[i..end], i);
                return End::Ended;
            }
        };
        on_event(&e, &text[i..end], i);
        if !more {
            return End::Close(after + 1);
        }
        i = space(after + 1);
        read_to = after + 1;
        if read_to == text.len() {
            return End::Boundary;
        }
    }
}

/// Reads `traceEvents`' elements with `p` after its `[`: the text is cut
/// into segments of about `split.segment` bytes, each read by `work` (its
/// text, the text's length, whether it is the first) on one of
/// `split.workers` threads (on this one without a split) into a part,
/// which `merge` is given in file order with its segment's offset in the
/// text. A segment that does not end where the next begins (a guess inside
/// a string, an event longer than a segment) is read again here from its
/// last event read, joined to the next; an error that joining does not
/// move is returned. Afterwards `p` is after the array's `]`.
pub(in crate::inputs::pytorch) fn for_segments<R: Read, T: Send>(
    p: &mut Parser<R>,
    split: Option<Split>,
    work: &(dyn Fn(Vec<u8>, usize, bool) -> (T, End, Vec<u8>) + Sync),
    merge: &mut dyn FnMut(T, u64),
) -> Result<(), SyntaxError> {
    struct Job {
        base: u64,
        buf: Vec<u8>,
        len: usize,
        first: bool,
        last: bool,
    }
    struct Done<T> {
        job: Job,
        part: T,
        end: End,
    }
    let split = split.unwrap_or(Split { segment: super::super::read::SEGMENT, workers: 0 });
    let run = |mut job: Job| {
        let (part, end, buf) = work(std::mem::take(&mut job.buf), job.len, job.first);
        job.buf = buf;
        Done { job, part, end }
    };
    std::thread::scope(|scope| {
        let mut pool = OrderedPool::start(scope, split.workers, &run);
        let (mut input_done, mut first) = (false, true);
        let mut spare: Vec<Vec<u8>> = Vec::new();
        // What failed to be read, from the end of its last event read (to
        // be joined to the next segment), and where it failed.
        let mut carry: Option<(u64, Vec<u8>, bool, u64)> = None;
        loop {
            while !input_done && pool.pending() < (2 * pool.workers()).max(1) {
                let mut buf = spare.pop().unwrap_or_default();
                let (base, len, last) = p.take_segment(split.segment, &mut buf);
                pool.send(Job { base, buf, len, first, last });
                (first, input_done) = (false, last);
            }
            let mut next = pool.next().expect("a segment is pending until the input ends");
            let mut failed_at = None;
            if let Some((base, mut text, first, at)) = carry.take() {
                text.extend_from_slice(&next.job.buf[..next.job.len]);
                let len = text.len();
                spare.push(std::mem::replace(&mut next.job.buf, text));
                next = run(Job { base, len, first, ..next.job });
                failed_at = Some(at);
            }
            let Done { job, part, end } = next;
            match end {
                End::Boundary if !job.last => {
                    merge(part, job.base);
                    spare.push(job.buf);
                }
                // (Segments end after a `,`, all but the last.)
                End::Boundary | End::Ended => return Err(SyntaxError { offset: job.base + job.len as u64, message: "traceEvents is cut short".into() }),
                End::Close(k) => {
                    merge(part, job.base);
                    let rest = pool.rest();
                    let mut pieces = vec![&job.buf[k..job.len]];
                    pieces.extend(rest.iter().map(|d| &d.job.buf[..d.job.len]));
                    p.unread(job.base + k as u64, &pieces);
                    return Ok(());
                }
                End::Failed(read_to, e) => {
                    let e = SyntaxError { offset: job.base + e.offset, message: e.message };
                    if job.last || failed_at == Some(e.offset) {
                        return Err(e);
                    }
                    merge(part, job.base);
                    carry = Some((job.base + read_to as u64, job.buf[read_to..job.len].to_vec(), job.first && read_to == 0, e.offset));
                    spare.push(job.buf);
                }
            }
        }
    })
}
