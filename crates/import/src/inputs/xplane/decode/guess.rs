//! An unframed line cut into pieces at guessed event starts
//! ([`Line::guessed_pieces`]): the lines of a GPU plane hold most of a JAX
//! trace, and framing them first is one core's walk of most of the file.

use super::Release;
use super::line::Line;
use super::plain::{KEY_1_VARINT, KEY_2_VARINT, KEY_3_VARINT, KEY_4_BYTES, KEY_5_VARINT, plain_field_4, plain_payload, plain_varint};

impl<'a> Line<'a> {
    /// An unframed line cut into pieces of about `bytes` bytes, each cut
    /// where the bytes after it read as events. A guess may be wrong: an
    /// event's payload may read as events too. Each piece is framed as it
    /// is read ([`Line::checked_event_wires`]), and a piece read from a
    /// true event start ends where the next piece starts only if that
    /// start is true as well; so where every piece's framing holds, every
    /// cut was right, and where one fails, the line must be read framed
    /// (which also gives a damaged line's error). The bytes each guess
    /// looked at go to `release` (with the rest of the largest folio they
    /// end in: a fault maps a whole folio of up to 2 MB, and the guesses
    /// mapped most of the line. On the 1.09 GB jax_lstm x364 trace, 373 MB
    /// of the file were resident after the guesses otherwise.)
    pub fn guessed_pieces(&self, bytes: usize, release: Release<'_>) -> Vec<Line<'a>> {
        let Ok((header, start)) = Line::header(self.wire) else { return vec![self.clone()] };
        let mut cuts = vec![start];
        let mut at = start + bytes;
        while at < self.wire.len() {
            let end = (at + GUESS_SEARCH_BYTES).min(self.wire.len());
            let cut = (at..end).find(|&p| self.wire[p] == KEY_4_BYTES && looks_like_events(&self.wire[p..]));
            release(&self.wire[at..(end + GUESS_RELEASE_PAST).min(self.wire.len())]);
            match cut {
                Some(cut) => {
                    cuts.push(cut);
                    at = cut + bytes;
                }
                None => at = end,
            }
        }
        cuts.push(self.wire.len());
        cuts.windows(2).map(|cut| Line { wire: &self.wire[cut[0]..cut[1]], ..header.clone() }).collect()
    }
}

/// How far past a guessed cut [`Line::guessed_pieces`] looks for an event
/// start (a JAX GPU event is ~130 bytes).
const GUESS_SEARCH_BYTES: usize = 64 << 10;

/// How far past its search a guess's bytes are given back: past the events
/// it read (8 of at most ~1 KB for a GPU line's) to the end of the largest
/// folio they end in (2 MB: `LARGEST_FOLIO` in `xplane/mod.rs`).
const GUESS_RELEASE_PAST: usize = 4 << 20;

/// How many events must follow a guessed cut.
const GUESS_EVENTS: usize = 8;

/// Whether `rest` starts with [`GUESS_EVENTS`] events (or fewer that end
/// the line), each a field 4 that [`looks_like_event`].
fn looks_like_events(mut rest: &[u8]) -> bool {
    for _ in 0..GUESS_EVENTS {
        if rest.is_empty() {
            return true;
        }
        match plain_field_4(&mut rest) {
            Some(event) if looks_like_event(event) => {}
            _ => return false,
        }
    }
    true
}

/// Whether an event's bytes hold only an event's fields (varints 1, 2, 3
/// and 5) and at least one stat (field 4). A stat's own fields (a value of
/// field 2, 3, 4, 5, 6 or 7 and no field 4 of bytes) never do: a guess
/// that falls between two stats of an event reads the first as an event
/// without stats, and is not taken.
fn looks_like_event(mut event: &[u8]) -> bool {
    let mut stats = 0;
    while let Some((&key, mut rest)) = event.split_first() {
        let framed = match key {
            KEY_1_VARINT | KEY_2_VARINT | KEY_3_VARINT | KEY_5_VARINT => plain_varint(&mut rest).is_some(),
            KEY_4_BYTES => {
                stats += 1;
                plain_payload(&mut rest).is_some()
            }
            _ => false,
        };
        if !framed {
            return false;
        }
        event = rest;
    }
    stats > 0
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::super::tests::jax_gpu_kernel;
    use super::*;
    use crate::proto::tensorflow::profiler as xp;

    /// A line of GPU-like events cut at guessed starts: its pieces hold its
    /// events, in order, each framed as it is read; a line whose events
    /// hold bytes that read as events too gets guesses that are wrong, and
    /// a piece before such a guess fails its framing (where a reader then
    /// reads the line framed).
    #[test]
    fn guessed_pieces_hold_the_line_or_fail_their_framing() {
        let kernel = jax_gpu_kernel();
        let line = |events: Vec<xp::XEvent>| xp::XLine {
            id: 7,
            name: "Stream #1".into(),
            timestamp_ns: 12,
            duration_ps: 99,
            display_name: "s".into(),
            events,
            ..Default::default()
        };
        let events: Vec<xp::XEvent> = (0..300).map(|i| xp::XEvent { data: Some(xp::x_event::Data::OffsetPs(i * 7_000_000)), ..kernel.clone() }).collect();
        // Each event also holds, as the bytes of a stat, nine events.
        let nested = xp::XLine { events: events[..9].to_vec(), ..Default::default() }.encode_to_vec();
        let hiding: Vec<xp::XEvent> = events
            .iter()
            .map(|e| {
                let mut e = e.clone();
                e.stats.push(xp::XStat { metadata_id: 11, value: Some(xp::x_stat::Value::BytesValue(nested.clone())) });
                e
            })
            .collect();
        // Events whose stats all read as events without stats.
        let numbers: Vec<xp::XEvent> = events
            .iter()
            .map(|e| xp::XEvent {
                stats: (1..12).map(|id| xp::XStat { metadata_id: id, value: Some(xp::x_stat::Value::Uint64Value(id as u64 * 1000)) }).collect(),
                ..e.clone()
            })
            .collect();
        let mut failed = 0;
        for (events, may_fail) in [(events, false), (numbers, false), (hiding, true)] {
            let wire = line(events).encode_to_vec();
            let framed = Line::decode(&wire, &|_| {}).unwrap();
            let unframed = Line::decode_unframed(&wire).unwrap();
            assert!(!unframed.framed && unframed.event_count == 0);
            assert_eq!((unframed.id, unframed.name, unframed.timestamp_ns), (framed.id, framed.name, framed.timestamp_ns));
            let all: Vec<&[u8]> = framed.event_wires().collect();
            assert_eq!(all.len(), 300);
            for bytes in [1, 100, 997, 5000, 1 << 20] {
                let pieces = unframed.guessed_pieces(bytes, &|_| {});
                // (Adjacent, to the line's end.)
                let end = |p: &Line<'_>| p.wire.as_ptr() as usize + p.wire.len();
                assert!(pieces.windows(2).all(|w| end(&w[0]) == w[1].wire.as_ptr() as usize), "pieces of {bytes}");
                assert_eq!(end(pieces.last().unwrap()), end(&framed));
                let read: Result<Vec<&[u8]>, _> = pieces.iter().flat_map(|p| p.checked_event_wires()).collect();
                match read {
                    Ok(read) => assert_eq!(read, all, "pieces of {bytes}"),
                    Err(_) if may_fail => failed += 1,
                    Err(e) => panic!("pieces of {bytes}: {e}"),
                }
                if bytes < 5000 {
                    assert!(pieces.len() > 3, "{} pieces of {bytes}", pieces.len());
                }
                assert!(pieces.iter().all(|p| !p.framed && p.timestamp_ns == 12 && p.most_events() >= p.wire.len() / 2));
            }
        }
        assert!(failed > 0, "no guess fell inside an event");
        // A header field after the events of a line not framed is an error.
        let mut wire = line(vec![kernel]).encode_to_vec();
        wire.extend(xp::XLine { timestamp_ns: 13, ..Default::default() }.encode_to_vec());
        let pieces = Line::decode_unframed(&wire).unwrap().guessed_pieces(1 << 20, &|_| {});
        assert!(pieces[0].checked_event_wires().any(|w| w.is_err()));
        assert_eq!(Line::decode(&wire, &|_| {}).unwrap().timestamp_ns, 13);
    }
}
