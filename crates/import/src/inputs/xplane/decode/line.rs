//! A plane's lines ([`Line`]): a line's header, its events framed (or not:
//! [`Plane::decode_unframed`](super::Plane::decode_unframed)) and cut into
//! pieces, and the walks that read its events, a long line's on every core
//! in file order.

use prost::DecodeError;
use prost::encoding::{DecodeContext, WireType, int64};

use super::event::Event;
use super::plain::plain_field_4;
use super::{Release, utf8};
use crate::inputs::in_order::{InOrder, StopOnDrop};
use crate::inputs::wire::{for_each_field, payload, skip};

/// How many events a [`Line`]'s pieces hold (see [`Line::pieces`]).
pub const PIECE_EVENTS: usize = 16_384;

/// An `XLine`'s header; its events are decoded as they are walked.
#[derive(Debug, Default, Clone)]
pub struct Line<'a> {
    pub id: i64,
    pub display_id: i64,
    pub name: &'a str,
    pub display_name: &'a str,
    pub timestamp_ns: i64,
    pub duration_ps: i64,
    /// The whole line message: [`Line::events`] walks its event fields.
    pub(super) wire: &'a [u8],
    pub event_count: usize,
    /// Where every [`PIECE_EVENTS`]th event ends, in `wire` (the line's
    /// pieces, found while its framing is checked).
    pub(super) piece_ends: Vec<usize>,
    /// Whether the line's framing was checked when it was decoded; if not
    /// (see [`Plane::decode_unframed`](super::Plane::decode_unframed)),
    /// `event_count` is unknown and its events are framed as they are read
    /// ([`Line::checked_event_wires`]).
    pub framed: bool,
}

impl<'a> Line<'a> {
    pub(super) fn decode(wire: &'a [u8], release: Release<'_>) -> Result<Line<'a>, DecodeError> {
        const RELEASE_EVERY: usize = 16 << 20;
        let mut line = Line { wire, framed: true, ..Default::default() };
        let mut released = 0;
        let mut rest = wire;
        while !rest.is_empty() {
            // Events, nearly all of the line, are framed as usual.
            let is_event = plain_field_4(&mut rest).is_some() || {
                let (tag, wire_type) = prost::encoding::decode_key(&mut rest)?;
                match tag {
                    4 => drop(payload(tag, wire_type, &mut rest)?),
                    _ => line.merge_header_field(tag, wire_type, &mut rest)?,
                }
                tag == 4
            };
            if !is_event {
                continue;
            }
            line.event_count += 1;
            let at = wire.len() - rest.len();
            if line.event_count.is_multiple_of(PIECE_EVENTS) {
                line.piece_ends.push(at);
            }
            if at - released >= RELEASE_EVERY {
                release(&wire[released..at]);
                released = at;
            }
        }
        release(&wire[released..]);
        Ok(line)
    }

    /// A line's header: its fields before its first event (as a writer
    /// of the schema puts them: `id`, `name`, `timestamp_ns`), and where
    /// its events start.
    pub(super) fn header(wire: &'a [u8]) -> Result<(Line<'a>, usize), DecodeError> {
        let mut line = Line { wire, ..Default::default() };
        let mut rest = wire;
        while !rest.is_empty() {
            let mut after = rest;
            let (tag, wire_type) = prost::encoding::decode_key(&mut after)?;
            if tag == 4 {
                break;
            }
            rest = after;
            line.merge_header_field(tag, wire_type, &mut rest)?;
        }
        Ok((line, wire.len() - rest.len()))
    }

    /// A field of the line's own (any but its events, field 4), merged as
    /// prost merges it; unknown fields skipped.
    fn merge_header_field(&mut self, tag: u32, wire_type: WireType, buf: &mut &'a [u8]) -> Result<(), DecodeError> {
        match tag {
            1 => int64::merge(wire_type, &mut self.id, buf, DecodeContext::default())?,
            2 => self.name = utf8(payload(tag, wire_type, buf)?)?,
            3 => int64::merge(wire_type, &mut self.timestamp_ns, buf, DecodeContext::default())?,
            9 => int64::merge(wire_type, &mut self.duration_ps, buf, DecodeContext::default())?,
            10 => int64::merge(wire_type, &mut self.display_id, buf, DecodeContext::default())?,
            11 => self.display_name = utf8(payload(tag, wire_type, buf)?)?,
            _ => skip(tag, wire_type, buf)?,
        }
        Ok(())
    }

    /// A line's header, its events not framed (see
    /// [`Plane::decode_unframed`](super::Plane::decode_unframed)).
    pub(super) fn decode_unframed(wire: &'a [u8]) -> Result<Line<'a>, DecodeError> {
        Line::header(wire).map(|(line, _)| line)
    }

    /// At most how many events the line holds (all of its bytes events of
    /// two, their key and length, where it is not framed).
    pub fn most_events(&self) -> usize {
        if self.framed { self.event_count } else { self.wire.len() / 2 }
    }

    /// [`Line::event_wires`], each event's framing checked: a line that was
    /// not framed when decoded is framed here. Such a line's header fields
    /// are not expected after its events (a later one would change the
    /// header its events were read with): one there is an error.
    pub fn checked_event_wires(&self) -> impl Iterator<Item = Result<&'a [u8], DecodeError>> + 'a {
        let (mut rest, framed) = (self.wire, self.framed);
        std::iter::from_fn(move || {
            while !rest.is_empty() {
                if let Some(wire) = plain_field_4(&mut rest) {
                    return Some(Ok(wire));
                }
                let step = (|| {
                    let (tag, wire_type) = prost::encoding::decode_key(&mut rest)?;
                    match tag {
                        4 => payload(tag, wire_type, &mut rest).map(Some),
                        1..=3 if !framed => Err(header_after_events()),
                        _ => skip(tag, wire_type, &mut rest).map(|()| None),
                    }
                })();
                match step {
                    Ok(None) => continue,
                    Ok(Some(wire)) => return Some(Ok(wire)),
                    Err(e) => {
                        rest = &[];
                        return Some(Err(e));
                    }
                }
            }
            None
        })
    }

    /// The line's bytes (for [`Release`]).
    pub fn wire(&self) -> &'a [u8] {
        self.wire
    }

    /// The line cut into pieces of `events` events (the last may have
    /// fewer), to be read on several cores; each is a `Line` with the same
    /// header whose [`Line::events`] are its share.
    pub fn pieces(&self, events: usize) -> Vec<Line<'a>> {
        if self.event_count <= events {
            return vec![self.clone()];
        }
        if events == PIECE_EVENTS && !self.piece_ends.is_empty() {
            // Cut where the framing check noted every PIECE_EVENTS-th event.
            let mut pieces = Vec::with_capacity(self.piece_ends.len() + 1);
            let header = Line { piece_ends: Vec::new(), ..self.clone() };
            let mut start = 0;
            for &end in &self.piece_ends {
                pieces.push(Line { wire: &self.wire[start..end], event_count: events, ..header.clone() });
                start = end;
            }
            let rest = self.event_count % events;
            if start < self.wire.len() {
                pieces.push(Line { wire: &self.wire[start..], event_count: rest, ..header.clone() });
            }
            return pieces;
        }
        let mut pieces = Vec::new();
        let (mut rest, mut start, mut count) = (self.wire, self.wire, 0);
        while !rest.is_empty() {
            // (The framing was checked when the line was decoded.)
            let Ok((tag, wire_type)) = prost::encoding::decode_key(&mut rest) else { return vec![self.clone()] };
            if skip(tag, wire_type, &mut rest).is_err() {
                return vec![self.clone()];
            }
            count += usize::from(tag == 4);
            if count == events {
                let (piece, after) = start.split_at(start.len() - rest.len());
                pieces.push(Line { wire: piece, event_count: count, ..self.clone() });
                (start, count) = (after, 0);
            }
        }
        if !start.is_empty() {
            pieces.push(Line { wire: start, event_count: count, ..self.clone() });
        }
        pieces
    }

    /// The line's events, in file order; the first error ends them. An
    /// event's own fields are checked here (its framing too where the line
    /// was not framed when decoded).
    pub fn events(&self) -> impl Iterator<Item = Result<Event<'a>, DecodeError>> + 'a {
        let mut wires = self.checked_event_wires();
        let mut failed = false;
        std::iter::from_fn(move || {
            if failed {
                return None;
            }
            let event = wires.next()?.and_then(Event::decode);
            failed = event.is_err();
            Some(event)
        })
    }

    /// Each event's bytes, in file order, undecoded (for a walk that reads
    /// some events again: [`Event::decode`] reads one); stops at a
    /// malformed field (the framing was checked when the line was decoded,
    /// or, for a piece of a line that was not, when the piece was read).
    /// (Not [`Line::checked_event_wires`] without its errors: `steps`' walk
    /// of x91 took 5% more CPU so.)
    pub fn event_wires(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let mut rest = self.wire;
        std::iter::from_fn(move || {
            while !rest.is_empty() {
                if let Some(wire) = plain_field_4(&mut rest) {
                    return Some(wire);
                }
                let step = (|| {
                    let (tag, wire_type) = prost::encoding::decode_key(&mut rest)?;
                    if tag == 4 { payload(tag, wire_type, &mut rest).map(Some) } else { skip(tag, wire_type, &mut rest).map(|()| None) }
                })();
                match step {
                    Ok(None) => continue,
                    Ok(Some(wire)) => return Some(wire),
                    Err(_) => rest = &[],
                }
            }
            None
        })
    }

    /// The line's events as `decode` reads them (with their number on the
    /// line), handed in file order to `consume`; the stretches walked go to
    /// `release` every few MB (a line may hold most of a 1 GB trace), the
    /// rest when the walk ends. Decoding is most of a walk: on lines of
    /// more than one `PIECE_EVENTS` piece, pieces are decoded on a thread
    /// a core, a few pieces ahead of `consume` (see `inputs::in_order`; `steps` of
    /// the 272 MB JAX GPU bench trace, bench/README.md). The first error in
    /// file order stops the walk, as a serial walk would.
    pub fn walk<T: Send, E: From<DecodeError>>(
        &self,
        release: Release<'_>,
        decode: impl Fn(usize, &'a [u8]) -> Result<T, DecodeError> + Sync,
        consume: impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), E> {
        self.walk_with(release, || (), |(), k, wire| decode(k, wire), consume)
    }

    /// The earliest start (ps: the line's timestamp and the event's offset)
    /// of its events whose start `counts`, walked as [`Line::walk`] walks
    /// them: `cut --time_ms` and timelines count time from a trace's first
    /// event.
    pub fn first_start_ps(&self, release: Release<'_>, counts: impl Fn(i128) -> bool) -> Result<Option<i128>, DecodeError> {
        let base = i128::from(self.timestamp_ns) * 1000;
        let mut first: Option<i128> = None;
        self.walk(
            release,
            |_, wire| Ok(Event::decode(wire)?.offset_ps),
            |offset_ps| {
                let start = base + i128::from(offset_ps);
                if counts(start) {
                    first = Some(first.map_or(start, |f| f.min(start)));
                }
                Ok::<_, DecodeError>(())
            },
        )?;
        Ok(first)
    }

    /// [`Line::walk`], each thread that decodes having a state of its own
    /// (made by `state`) for `decode` to keep (as
    /// [`Shapes`](super::Shapes)).
    pub fn walk_with<S, T: Send, E: From<DecodeError>>(
        &self,
        release: Release<'_>,
        state: impl Fn() -> S + Sync,
        decode: impl Fn(&mut S, usize, &'a [u8]) -> Result<T, DecodeError> + Sync,
        mut consume: impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut walked = Walked { wire: self.wire, released: 0, release };
        let pieces = self.pieces(PIECE_EVENTS);
        if pieces.len() == 1 {
            let mut state = state();
            for (k, wire) in self.event_wires().enumerate() {
                walked.reached(wire);
                consume(decode(&mut state, k, wire)?)?;
            }
            return Ok(());
        }
        let workers = rayon::current_num_threads().clamp(1, pieces.len());
        let order: InOrder<Batch<'a, T>, DecodeError> = InOrder::new(pieces.len(), 2 * workers);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    // (A panic stops the walk: the scope then raises it.)
                    let _stop = StopOnDrop(&order, true);
                    let mut state = state();
                    while let Some((i, mut batch)) = order.next_piece() {
                        let first = i * PIECE_EVENTS;
                        let result = pieces[i].event_wires().enumerate().try_for_each(|(k, wire)| {
                            batch.push((wire, decode(&mut state, first + k, wire)?));
                            Ok(())
                        });
                        order.decoded(i, result.map(|()| batch));
                    }
                });
            }
            // (However the walk ends, `consume` failing or panicking
            // included, the workers waiting for room stop.)
            let _stop = StopOnDrop(&order, false);
            for i in 0..pieces.len() {
                // (`None`: a worker panicked.)
                let Some(batch) = order.take(i) else { break };
                let mut batch = batch?;
                for (wire, t) in batch.drain(..) {
                    walked.reached(wire);
                    consume(t)?;
                }
                order.consumed(i, batch);
            }
            Ok(())
        })
    }

    /// The metadata id of each event, without decoding the rest of it (to
    /// count events of a kind before a walk); stops at a malformed event.
    pub fn event_metadata_ids(&self) -> impl Iterator<Item = i64> + 'a {
        let mut rest = self.wire;
        std::iter::from_fn(move || {
            while !rest.is_empty() {
                let step = (|| {
                    let (tag, wire_type) = prost::encoding::decode_key(&mut rest)?;
                    if tag != 4 {
                        return skip(tag, wire_type, &mut rest).map(|()| None);
                    }
                    let mut id = 0;
                    for_each_field(payload(tag, wire_type, &mut rest)?, |tag, wire_type, buf| {
                        if tag == 1 { int64::merge(wire_type, &mut id, buf, DecodeContext::default()) } else { skip(tag, wire_type, buf) }
                    })?;
                    Ok::<_, DecodeError>(Some(id))
                })();
                match step {
                    Ok(None) => continue,
                    Ok(Some(id)) => return Some(id),
                    Err(_) => rest = &[],
                }
            }
            None
        })
    }
}

/// A piece's events as `decode` made them, each with its bytes (for
/// [`Walked`]), handed back in order by [`InOrder`].
type Batch<'a, T> = Vec<(&'a [u8], T)>;

/// Gives back the pages of a line's events as [`Line::walk`] walks them,
/// every few MB, and the rest when the walk ends.
struct Walked<'w, 'r> {
    wire: &'w [u8],
    released: usize,
    release: Release<'r>,
}

impl Walked<'_, '_> {
    const EVERY: usize = 8 << 20;

    /// The walk has reached `part` (a slice of the line): what is before it
    /// is done with.
    fn reached(&mut self, part: &[u8]) {
        let at = (part.as_ptr() as usize).wrapping_sub(self.wire.as_ptr() as usize).min(self.wire.len());
        if at >= self.released + Self::EVERY {
            (self.release)(&self.wire[self.released..at]);
            crate::inputs::progress::add((at - self.released) as u64);
            self.released = at;
        }
    }
}

impl Drop for Walked<'_, '_> {
    fn drop(&mut self) {
        (self.release)(&self.wire[self.released..]);
        crate::inputs::progress::add((self.wire.len() - self.released) as u64);
    }
}

/// A header field of a line that was not framed, after its events.
#[allow(deprecated)]
fn header_after_events() -> DecodeError {
    DecodeError::new("a line header field after its events")
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::super::tests::sample_space;
    use super::super::{Plane, Space};
    use super::*;
    use crate::proto::tensorflow::profiler as xp;

    #[test]
    fn a_line_in_pieces_has_its_events() {
        let wire = sample_space().encode_to_vec();
        let space = Space::decode(&wire).unwrap();
        let plane = Plane::decode(space.planes[0]).unwrap();
        let line = &plane.lines[0];
        let all: Vec<_> = line.events().map(Result::unwrap).map(|e| (e.metadata_id, e.offset_ps, e.duration_ps)).collect();
        assert_eq!(all.len(), 4);
        for size in 1..=5 {
            let pieces = line.pieces(size);
            assert_eq!(pieces.len(), all.len().div_ceil(size));
            assert!(pieces.iter().all(|p| p.timestamp_ns == line.timestamp_ns && p.event_count <= size));
            let events: Vec<_> = pieces.iter().flat_map(|p| p.events()).map(Result::unwrap).map(|e| (e.metadata_id, e.offset_ps, e.duration_ps)).collect();
            assert_eq!(events, all, "pieces of {size}");
        }
    }

    /// A line longer than a piece is cut where its framing check noted the
    /// boundaries, into the same pieces a walk finds; stretches walked are
    /// released in order and cover the line.
    #[test]
    fn long_lines_are_cut_at_the_noted_boundaries() {
        let mut space = sample_space();
        let line = &mut space.planes[0].lines[0];
        let event = line.events[1].clone();
        line.events = (0..2 * PIECE_EVENTS as i64 + 5).map(|i| xp::XEvent { data: Some(xp::x_event::Data::OffsetPs(i)), ..event.clone() }).collect();
        line.duration_ps = 77;
        let wire = space.encode_to_vec();
        let released = std::sync::Mutex::new(Vec::new());
        let record = |part: &[u8]| released.lock().unwrap().push((part.as_ptr() as usize, part.len()));
        let plane = Plane::decode_releasing(Space::decode(&wire).unwrap().planes[0], &record).unwrap();
        let line = &plane.lines[0];
        let pieces = line.pieces(PIECE_EVENTS);
        assert_eq!(pieces.iter().map(|p| p.event_count).collect::<Vec<_>>(), vec![PIECE_EVENTS, PIECE_EVENTS, 5]);
        let walked = Line { piece_ends: Vec::new(), ..line.clone() }.pieces(PIECE_EVENTS);
        assert_eq!(pieces.iter().map(|p| p.wire).collect::<Vec<_>>(), walked.iter().map(|p| p.wire).collect::<Vec<_>>());
        let offsets: Vec<i64> = pieces.iter().flat_map(|p| p.events()).map(|e| e.unwrap().offset_ps).collect();
        assert_eq!(offsets, (0..2 * PIECE_EVENTS as i64 + 5).collect::<Vec<_>>());
        assert_eq!(pieces[2].duration_ps, 77);
        let released = released.into_inner().unwrap();
        let start = line.wire.as_ptr() as usize;
        assert_eq!(released.first().map(|r| r.0), Some(start));
        assert!(released.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
        assert_eq!(released.last().map(|r| r.0 + r.1), Some(start + line.wire.len()));
    }

    /// A line of several pieces is walked as a serial walk would: every
    /// event once, in file order, numbered by its place on the line, and
    /// the whole line given back; an error of `decode` or of `consume`
    /// stops the walk with that error.
    #[test]
    fn lines_of_many_pieces_are_walked_in_order() {
        let events = 3 * PIECE_EVENTS + 17;
        let line = xp::XLine {
            events: (0..events as i64).map(|k| xp::XEvent { metadata_id: k % 7, data: Some(xp::x_event::Data::OffsetPs(k)), ..Default::default() }).collect(),
            ..Default::default()
        };
        let space = xp::XSpace { planes: vec![xp::XPlane { lines: vec![line], ..Default::default() }], ..Default::default() }.encode_to_vec();
        let space = Space::decode(&space).unwrap();
        let plane = Plane::decode(space.planes[0]).unwrap();
        let line = &plane.lines[0];
        assert!(line.pieces(PIECE_EVENTS).len() > 3);
        let offset = |_, wire| Ok(Event::decode(wire)?.offset_ps);
        let mut seen = Vec::new();
        let released = std::sync::Mutex::new(Vec::new());
        let record = |part: &[u8]| released.lock().unwrap().push((part.as_ptr() as usize, part.len()));
        line.walk(
            &record,
            |k, wire| Ok((k, offset(k, wire)?)),
            |(k, offset)| {
                seen.push((k, offset));
                Ok::<_, DecodeError>(())
            },
        )
        .unwrap();
        assert_eq!(seen, (0..events).map(|k| (k, k as i64)).collect::<Vec<_>>());
        assert_eq!(released.into_inner().unwrap(), [(line.wire.as_ptr() as usize, line.wire.len())]);

        // (A field cut short.)
        let error = || Event::decode(&[0x08]).unwrap_err();
        let fail_at = 2 * PIECE_EVENTS + 5;
        let mut consumed = 0;
        let failing = |k, wire| if k == fail_at { Err(error()) } else { offset(k, wire) };
        let failed = line.walk(&|_| {}, failing, |_| {
            consumed += 1;
            Ok::<_, DecodeError>(())
        });
        assert_eq!(failed.unwrap_err(), error());
        // (The pieces before the failing one, whole.)
        assert_eq!(consumed, 2 * PIECE_EVENTS);
        let mut consumed = 0;
        let stopped = line.walk(&|_| {}, offset, |o| {
            consumed += 1;
            if o == 100 { Err(error()) } else { Ok(()) }
        });
        assert!(stopped.is_err() && consumed == 101);
    }

    /// However many threads decode a line's pieces, and in whatever order
    /// they finish, the walk ends at the first error in file order: a
    /// decoding error of an earlier piece before one of a later piece, an
    /// error of `consume` before a decoding error after it.
    #[test]
    fn the_first_error_in_file_order_ends_a_walk() {
        #[derive(Debug, PartialEq)]
        enum Stop {
            Decode(DecodeError),
            Consume,
        }
        impl From<DecodeError> for Stop {
            fn from(e: DecodeError) -> Stop {
                Stop::Decode(e)
            }
        }
        // Two errors told apart: a field cut short, a wire type that is none.
        let (cut_short, no_wire_type) = (Event::decode(&[0x08]).unwrap_err(), Event::decode(&[0x0f]).unwrap_err());
        assert_ne!(cut_short, no_wire_type);
        let events = 4 * PIECE_EVENTS + 3;
        let line = xp::XLine { events: (0..events as i64).map(|k| xp::XEvent { metadata_id: k, ..Default::default() }).collect(), ..Default::default() };
        let space = xp::XSpace { planes: vec![xp::XPlane { lines: vec![line], ..Default::default() }], ..Default::default() }.encode_to_vec();
        let space = Space::decode(&space).unwrap();
        let plane = Plane::decode(space.planes[0]).unwrap();
        let line = &plane.lines[0];
        for threads in [1, 2, 5] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                // A later piece fails at once, the earlier one after a while.
                let (early, late) = (PIECE_EVENTS + 3, 3 * PIECE_EVENTS + 1);
                let decode = |k: usize, _: &[u8]| match k {
                    _ if k == late => Err(no_wire_type.clone()),
                    _ if k == early => {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        Err(cut_short.clone())
                    }
                    _ => Ok(k),
                };
                let mut seen = Vec::new();
                let failed = line.walk(&|_| {}, decode, |k| {
                    seen.push(k);
                    Ok::<_, Stop>(())
                });
                assert_eq!(failed, Err(Stop::Decode(cut_short.clone())), "{threads} threads");
                assert_eq!(seen, (0..PIECE_EVENTS).collect::<Vec<_>>());

                let decode = |k: usize, _: &[u8]| if k == late { Err(no_wire_type.clone()) } else { Ok(k) };
                let stopped = line.walk(&|_| {}, decode, |k| if k == early { Err(Stop::Consume) } else { Ok(()) });
                assert_eq!(stopped, Err(Stop::Consume), "{threads} threads");

                // A panic, decoding or consuming, is raised, not waited on.
                let walk = |decode_panics: bool| {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        let decode = |k: usize, _: &[u8]| if decode_panics && k == early { panic!("decode") } else { Ok(k) };
                        line.walk(&|_| {}, decode, |k| if !decode_panics && k == 5 { panic!("consume") } else { Ok::<_, Stop>(()) })
                    }))
                };
                assert!(walk(true).is_err() && walk(false).is_err(), "{threads} threads");
            });
        }
    }
}
