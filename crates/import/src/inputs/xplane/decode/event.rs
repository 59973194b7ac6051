//! Events ([`Event`]) and their stats ([`Stat`]): read in one pass where
//! they have the common shape, by prost's rules otherwise, errors included;
//! an event's stats read as they are asked for, or handed over as the event
//! is read ([`Event::decode_with_wanted_stats`]).

use prost::DecodeError;
use prost::encoding::{DecodeContext, double, int64, uint64};

use super::plain::{
    KEY_1_VARINT, KEY_2_FIXED64, KEY_2_VARINT, KEY_3_VARINT, KEY_4_BYTES, KEY_4_VARINT, KEY_5_BYTES, KEY_5_VARINT, KEY_6_BYTES, KEY_7_VARINT, plain_field_4,
    plain_payload, plain_varint, whole_varint,
};
use super::{Plane, utf8};
use crate::inputs::wire::{for_each_field, payload, skip};

/// An `XEvent`; its stats are decoded when asked for.
#[derive(Debug, Default, Clone, Copy)]
pub struct Event<'a> {
    pub metadata_id: i64,
    /// Offset from the line's timestamp (`data.offset_ps`).
    pub offset_ps: i64,
    /// For aggregated events (`data.num_occurrences`); 0 otherwise.
    pub num_occurrences: i64,
    pub duration_ps: i64,
    /// Where its stats are: the whole event, or from its first stat.
    pub(super) wire: &'a [u8],
}

impl<'a> Event<'a> {
    /// An event from its bytes (see
    /// [`Line::event_wires`](super::Line::event_wires)).
    pub fn decode(wire: &'a [u8]) -> Result<Event<'a>, DecodeError> {
        match Event::decode_plain(wire) {
            Some(event) => Ok(event),
            None => Event::decode_checked(wire),
        }
    }

    /// [`Event::decode`] handing the event's stats to `visit` as they are
    /// read, in [`Event::stats`]' order: each stat is read once, not once to
    /// check the event and again to use it. (The device events of JAX's GPU
    /// traces have ten stats each: on the 272 MB jax_lstm x91 trace, reading
    /// them twice was a third of `scope`'s time, bench/README.md.) After an
    /// error, `visit` may have seen some of the stats.
    #[inline]
    pub fn decode_with_stats(wire: &'a [u8], visit: impl FnMut(Stat<'a>)) -> Result<Event<'a>, DecodeError> {
        Event::decode_with_wanted_stats(wire, &StatIds::ALL, visit)
    }

    /// [`Event::decode_with_stats`] handing over only the stats `wanted`
    /// names (and any whose id it cannot hold): the others are checked, as
    /// prost checks them, but not made values. (A JAX GPU event has 15
    /// stats, of which `scope` reads 6.)
    #[inline]
    pub fn decode_with_wanted_stats(wire: &'a [u8], wanted: &StatIds, mut visit: impl FnMut(Stat<'a>)) -> Result<Event<'a>, DecodeError> {
        let mut seen = 0;
        match Event::decode_plain_with(wire, wanted, |stat| {
            seen += 1;
            visit(stat);
        }) {
            Some(event) => Ok(event),
            None => Event::decode_rest_checked(wire, wanted, seen, visit),
        }
    }

    /// The event that a plain reading left to prost after handing `seen`
    /// wanted stats to `visit`: prost's error, or the event, its other
    /// wanted stats handed over. (The stats seen are the first of
    /// `stats()` that are wanted: a plain reading stops at the first field
    /// it leaves to prost.)
    pub(super) fn decode_rest_checked(wire: &'a [u8], wanted: &StatIds, seen: usize, visit: impl FnMut(Stat<'a>)) -> Result<Event<'a>, DecodeError> {
        let event = Event::decode_checked(wire)?;
        event.stats().filter(|stat| wanted.holds(stat.metadata_id)).skip(seen).for_each(visit);
        Ok(event)
    }

    /// The common shape of an event, read in one pass: one-byte keys of the
    /// fields it has, stats of the common shape. Anything else is left to
    /// [`Event::decode_checked`], which gives prost's answer, errors
    /// included. (On the 270 MB bench trace the reader's time was a third
    /// decoding; prost's field-by-field checks were most of it.)
    fn decode_plain(wire: &'a [u8]) -> Option<Event<'a>> {
        Event::decode_plain_with(wire, &StatIds::ALL, |_| {})
    }

    /// [`Event::decode_plain`], handing each stat to `visit` once read.
    #[inline(always)]
    pub(super) fn decode_plain_with(wire: &'a [u8], wanted: &StatIds, mut visit: impl FnMut(Stat<'a>)) -> Option<Event<'a>> {
        let mut event = Event { wire: &[], ..Default::default() };
        let mut rest = wire;
        while let Some((&key, tail)) = rest.split_first() {
            if key == KEY_4_BYTES && event.wire.is_empty() {
                event.wire = rest;
            }
            rest = tail;
            match key {
                KEY_1_VARINT => event.metadata_id = plain_varint(&mut rest)? as i64,
                KEY_2_VARINT => {
                    event.offset_ps = plain_varint(&mut rest)? as i64;
                    event.num_occurrences = 0;
                }
                KEY_3_VARINT => event.duration_ps = plain_varint(&mut rest)? as i64,
                KEY_4_BYTES => {
                    let stat = plain_payload(&mut rest)?;
                    match stat {
                        [KEY_1_VARINT, id @ 0..=0x7f, key, value @ ..] if !wanted.holds(i64::from(*id)) && StatValue::plain_whole(*key, value).is_some() => {}
                        _ => {
                            let stat = Stat::decode_plain(stat)?;
                            if wanted.holds(stat.metadata_id) {
                                visit(stat);
                            }
                        }
                    }
                }
                KEY_5_VARINT => {
                    event.num_occurrences = plain_varint(&mut rest)? as i64;
                    event.offset_ps = 0;
                }
                _ => return None,
            }
        }
        Some(event)
    }

    fn decode_checked(wire: &'a [u8]) -> Result<Event<'a>, DecodeError> {
        let mut event = Event { wire, ..Default::default() };
        for_each_field(wire, |tag, wire_type, buf| {
            match tag {
                1 => int64::merge(wire_type, &mut event.metadata_id, buf, DecodeContext::default())?,
                2 => {
                    int64::merge(wire_type, &mut event.offset_ps, buf, DecodeContext::default())?;
                    event.num_occurrences = 0;
                }
                3 => int64::merge(wire_type, &mut event.duration_ps, buf, DecodeContext::default())?,
                4 => Stat::decode(payload(tag, wire_type, buf)?).map(drop)?,
                5 => {
                    int64::merge(wire_type, &mut event.num_occurrences, buf, DecodeContext::default())?;
                    event.offset_ps = 0;
                }
                _ => skip(tag, wire_type, buf)?,
            }
            Ok(())
        })?;
        Ok(event)
    }

    /// The event's stats, in order (checked when the event was decoded).
    /// Read as they are asked for: most events are looked at for one stat.
    pub fn stats(&self) -> impl Iterator<Item = Stat<'a>> + 'a {
        let mut rest = self.wire;
        std::iter::from_fn(move || {
            while !rest.is_empty() {
                let stat = (|| {
                    if let Some(wire) = plain_field_4(&mut rest) {
                        return Stat::decode(wire).map(Some);
                    }
                    let (tag, wire_type) = prost::encoding::decode_key(&mut rest)?;
                    if tag == 4 { Stat::decode(payload(tag, wire_type, &mut rest)?).map(Some) } else { skip(tag, wire_type, &mut rest).map(|()| None) }
                })();
                match stat {
                    Ok(None) => continue,
                    Ok(Some(stat)) => return Some(stat),
                    Err(_) => rest = &[],
                }
            }
            None
        })
    }
}

/// Stat metadata ids below 128 (the profiler numbers a plane's stat
/// metadata from 1: a JAX GPU plane has about 40), as a set; ids it cannot
/// hold are in it.
#[derive(Clone, Copy, Debug)]
pub struct StatIds(u128);

impl StatIds {
    pub const ALL: StatIds = StatIds(u128::MAX);

    /// The ids that `wanted` says are wanted, with every id of 128 or more.
    pub fn of(wanted: impl Fn(i64) -> bool) -> StatIds {
        StatIds((0..128).filter(|&id| wanted(id)).fold(0, |set, id| set | 1 << id))
    }

    #[inline(always)]
    pub fn holds(&self, id: i64) -> bool {
        !(0..128).contains(&id) || self.0 & 1 << id != 0
    }
}

/// An `XStat`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Stat<'a> {
    pub metadata_id: i64,
    pub value: StatValue<'a>,
}

/// The `value` oneof of an `XStat`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub enum StatValue<'a> {
    #[default]
    None,
    Double(f64),
    Uint64(u64),
    Int64(i64),
    Str(&'a str),
    Bytes(&'a [u8]),
    /// The id of a stat metadata whose name is the value (interned strings).
    Ref(u64),
}

impl<'a> StatValue<'a> {
    /// A value field (its one-byte `key`) that is the whole of `wire`.
    #[inline(always)]
    fn plain_whole(key: u8, wire: &'a [u8]) -> Option<StatValue<'a>> {
        let mut rest = wire;
        let value = match key {
            KEY_7_VARINT => return Some(StatValue::Ref(whole_varint(wire)?)),
            KEY_4_VARINT => return Some(StatValue::Int64(whole_varint(wire)? as i64)),
            KEY_3_VARINT => return Some(StatValue::Uint64(whole_varint(wire)?)),
            KEY_2_FIXED64 => {
                let (bits, tail) = rest.split_first_chunk::<8>()?;
                rest = tail;
                StatValue::Double(f64::from_le_bytes(*bits))
            }
            KEY_5_BYTES => StatValue::Str(std::str::from_utf8(plain_payload(&mut rest)?).ok()?),
            KEY_6_BYTES => StatValue::Bytes(plain_payload(&mut rest)?),
            _ => return None,
        };
        rest.is_empty().then_some(value)
    }

    /// The value as an integer, if it is one.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            StatValue::Int64(v) => Some(v),
            StatValue::Uint64(v) => i64::try_from(v).ok(),
            StatValue::Double(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(v as i64),
            _ => None,
        }
    }

    /// The value as an id: ids written as uint64 keep their bits (program
    /// ids above 2^63 are the int64 keys of the metadata maps).
    pub fn as_id(self) -> Option<i64> {
        match self {
            StatValue::Uint64(v) => Some(v as i64),
            other => other.as_i64(),
        }
    }

    /// The value as text: a string, or the name a `ref` points to.
    pub fn as_str(self, plane: &Plane<'a>) -> Option<&'a str> {
        match self {
            StatValue::Str(s) => Some(s),
            StatValue::Ref(id) => i64::try_from(id).ok().and_then(|id| plane.stat_names.get(&id).copied()),
            _ => None,
        }
    }
}

impl<'a> Stat<'a> {
    pub(super) fn decode(wire: &'a [u8]) -> Result<Stat<'a>, DecodeError> {
        match Stat::decode_plain(wire) {
            Some(stat) => Ok(stat),
            None => Stat::decode_checked(wire),
        }
    }

    /// A stat of the common shape (see [`Event::decode_plain`]). Inlined:
    /// called, it handed its stat back through memory, and reading it there
    /// stalled (18% of `scope`'s samples on the 272 MB jax_lstm x91 trace,
    /// whose events have ten stats each: user time 0.52 -> 0.46 s).
    #[inline(always)]
    fn decode_plain(wire: &'a [u8]) -> Option<Stat<'a>> {
        if let [KEY_1_VARINT, id @ 0..=0x7f, key, value @ ..] = wire
            && let Some(value) = StatValue::plain_whole(*key, value)
        {
            return Some(Stat { metadata_id: i64::from(*id), value });
        }
        let mut stat = Stat::default();
        let mut rest = wire;
        while let Some((&key, tail)) = rest.split_first() {
            rest = tail;
            match key {
                KEY_1_VARINT => stat.metadata_id = plain_varint(&mut rest)? as i64,
                KEY_2_FIXED64 => {
                    let (bits, tail) = rest.split_first_chunk::<8>()?;
                    rest = tail;
                    stat.value = StatValue::Double(f64::from_le_bytes(*bits));
                }
                KEY_3_VARINT => stat.value = StatValue::Uint64(plain_varint(&mut rest)?),
                KEY_4_VARINT => stat.value = StatValue::Int64(plain_varint(&mut rest)? as i64),
                KEY_5_BYTES => stat.value = StatValue::Str(std::str::from_utf8(plain_payload(&mut rest)?).ok()?),
                KEY_6_BYTES => stat.value = StatValue::Bytes(plain_payload(&mut rest)?),
                KEY_7_VARINT => stat.value = StatValue::Ref(plain_varint(&mut rest)?),
                _ => return None,
            }
        }
        Some(stat)
    }

    fn decode_checked(wire: &'a [u8]) -> Result<Stat<'a>, DecodeError> {
        let mut stat = Stat::default();
        for_each_field(wire, |tag, wire_type, buf| {
            match tag {
                1 => int64::merge(wire_type, &mut stat.metadata_id, buf, DecodeContext::default())?,
                2 => {
                    let mut v = 0.0;
                    double::merge(wire_type, &mut v, buf, DecodeContext::default())?;
                    stat.value = StatValue::Double(v);
                }
                3 => {
                    let mut v = 0;
                    uint64::merge(wire_type, &mut v, buf, DecodeContext::default())?;
                    stat.value = StatValue::Uint64(v);
                }
                4 => {
                    let mut v = 0;
                    int64::merge(wire_type, &mut v, buf, DecodeContext::default())?;
                    stat.value = StatValue::Int64(v);
                }
                5 => stat.value = StatValue::Str(utf8(payload(tag, wire_type, buf)?)?),
                6 => stat.value = StatValue::Bytes(payload(tag, wire_type, buf)?),
                7 => {
                    let mut v = 0;
                    uint64::merge(wire_type, &mut v, buf, DecodeContext::default())?;
                    stat.value = StatValue::Ref(v);
                }
                _ => skip(tag, wire_type, buf)?,
            }
            Ok(())
        })?;
        Ok(stat)
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::super::tests::{jax_gpu_kernel, sample_space};
    use super::*;
    use crate::test_random::XorShift;

    /// Events and stats the one-pass reader takes are read as prost reads
    /// them; the rest it leaves to the checked reader.
    #[test]
    fn the_plain_reader_agrees_with_the_checked_one() {
        let space = sample_space();
        let events: Vec<Vec<u8>> = space.planes[0].lines[0].events.iter().map(Message::encode_to_vec).collect();
        let mut rng = XorShift::new(0x91a12);
        let (mut plain, mut checked) = (0, 0);
        for round in 0..20_000 {
            let mut bytes = events[round % events.len()].clone();
            if round >= events.len() {
                rng.corrupt(&mut bytes, 2);
            }
            let full = Event::decode_checked(&bytes);
            match Event::decode_plain(&bytes) {
                Some(event) => {
                    plain += 1;
                    let full = full.expect("the checked reader takes what the plain one does");
                    assert_eq!(
                        (event.metadata_id, event.offset_ps, event.num_occurrences, event.duration_ps),
                        (full.metadata_id, full.offset_ps, full.num_occurrences, full.duration_ps)
                    );
                    let stats: Vec<Stat<'_>> = event.stats().collect();
                    let checked_stats: Vec<Stat<'_>> = bytes_stats(&bytes);
                    assert_eq!(stats, checked_stats);
                }
                None => checked += 1,
            }
        }
        assert!(plain > 1000 && checked > 1000, "both readers ran: {plain} plain, {checked} checked");
    }

    /// Reading an event with its stats in one pass gives what reading it,
    /// then its stats, gives, errors included; reading only some stats
    /// gives the others' errors all the same, and the stats wanted.
    #[test]
    fn stats_read_while_decoding_are_the_events_stats() {
        let mut events: Vec<Vec<u8>> = sample_space().planes[0].lines[0].events.iter().map(Message::encode_to_vec).collect();
        events.push(jax_gpu_kernel().encode_to_vec());
        let mut rng = XorShift::new(0x1d5);
        let (mut ok, mut failed) = (0, 0);
        for round in 0..40_000 {
            let mut bytes = events[round % events.len()].clone();
            if round >= events.len() {
                rng.corrupt(&mut bytes, 1 + round as u64 % 2);
            }
            let set = u128::from(rng.next()) << 64 | u128::from(rng.next());
            let mut seen = Vec::new();
            let (some, wanted) = match round % 3 {
                0 => (Event::decode_with_stats(&bytes, |stat| seen.push(stat)), StatIds::ALL),
                _ => {
                    let wanted = StatIds::of(|id| set & 1 << id != 0);
                    (Event::decode_with_wanted_stats(&bytes, &wanted, |stat| seen.push(stat)), wanted)
                }
            };
            match Event::decode(&bytes) {
                Ok(event) => {
                    ok += 1;
                    let some = some.expect("both take it");
                    assert_eq!(
                        (some.metadata_id, some.offset_ps, some.num_occurrences, some.duration_ps),
                        (event.metadata_id, event.offset_ps, event.num_occurrences, event.duration_ps)
                    );
                    assert_eq!(seen, event.stats().filter(|s| wanted.holds(s.metadata_id)).collect::<Vec<_>>());
                }
                Err(e) => {
                    failed += 1;
                    assert_eq!(some.expect_err("both refuse it").to_string(), e.to_string());
                }
            }
        }
        assert!(ok > 2000 && failed > 2000, "both outcomes: {ok} read, {failed} refused");
        assert!(StatIds::of(|_| false).holds(128) && StatIds::of(|_| false).holds(-1) && !StatIds::of(|id| id != 5).holds(5));
    }

    /// An event's stats as the checked reader reads them.
    fn bytes_stats(wire: &[u8]) -> Vec<Stat<'_>> {
        let mut stats = Vec::new();
        for_each_field(wire, |tag, wire_type, buf| {
            if tag == 4 {
                stats.push(Stat::decode_checked(payload(tag, wire_type, buf)?)?);
                Ok(())
            } else {
                skip(tag, wire_type, buf)
            }
        })
        .expect("a plain event");
        stats
    }
}
