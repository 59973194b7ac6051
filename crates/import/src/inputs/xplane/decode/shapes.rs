//! Events read by the shapes of events read before ([`Shapes`]): the same
//! fields and stats at the same offsets, told apart by the bits that decide
//! how an event reads, 8 bytes compared at a time.

use prost::DecodeError;

use super::event::{Event, Stat, StatIds, StatValue};
use super::plain::{
    KEY_1_VARINT, KEY_2_FIXED64, KEY_2_VARINT, KEY_3_VARINT, KEY_4_BYTES, KEY_4_VARINT, KEY_5_BYTES, KEY_5_VARINT, KEY_6_BYTES, KEY_7_VARINT, plain_payload,
    plain_varint, varint_bits,
};

/// An event's reader that knows the shapes of the events it has read: a
/// GPU line's events are a few dozen shapes (the same fields and stats in
/// the same order, with the same lengths, keys, ids and texts; only their
/// numbers differ), and an event of a known shape is read without parsing
/// its framing or checking the stats no one wants: the bits that decide
/// both are compared with the shape's, 8 bytes at a time. (jax_lstm's
/// 20,070 kernels are 24 shapes. With the last two shapes of each length
/// kept, `steps` read all but 46 of the TF2 x25 bench trace's 5.5 M host
/// events, and all but 40 of a thread's 0.9 M GPU events of jax_lstm
/// x91, by their shapes; with one, 9% of the TF2 events had none.) It
/// reads what [`Event::decode_with_wanted_stats`] reads, errors included.
pub struct Shapes {
    wanted: StatIds,
    /// By event length: the last two shapes of that length read.
    by_len: Vec<[Option<Shape>; 2]>,
    /// Events read, and those read without a shape: shapes stop being
    /// made and tried where most events have none of the known ones.
    read: u32,
    missed: u32,
}

/// The events of one shape (see [`Shapes`]): those of `mask.len()` words
/// whose bits under `mask` are `expected`. Their fields are where the
/// shape's were, with the same lengths: each is read from its offsets,
/// the last of a kind (as prost keeps the last), and the wanted stats in
/// order. (Replaying the shape's fields one by one, a branch on each, and
/// parsing each wanted stat again, was a fifth of `scope`'s samples on the
/// 272 MB jax_lstm x91 trace, bench/README.md.)
struct Shape {
    mask: Vec<u64>,
    expected: Vec<u64>,
    metadata_id: Option<Varint>,
    /// The last of the `data` oneof: `offset_ps` (true) or `num_occurrences`.
    data: Option<(bool, Varint)>,
    duration: Option<Varint>,
    /// The first stat's key: the stats start here.
    stats_at: Option<u32>,
    stats: Vec<ShapeStat>,
}

/// A varint of a [`Shape`]: its offset and length (its bytes' continuation
/// bits are the shape's).
#[derive(Clone, Copy)]
struct Varint {
    at: u32,
    len: u32,
}

/// A wanted stat of a [`Shape`]: its id, its value's key, and where its
/// value is (a varint; a double's 8 bytes; a text's or bytes' payload).
#[derive(Clone, Copy)]
struct ShapeStat {
    id: u8,
    key: u8,
    value: Varint,
}

impl Varint {
    #[inline(always)]
    fn read(self, wire: &[u8]) -> Option<u64> {
        let at = self.at as usize;
        if self.len <= 8
            && let Some(bytes) = wire.get(at..).and_then(|rest| rest.first_chunk::<8>())
        {
            let word = u64::from_le_bytes(*bytes);
            return Some(varint_bits(if self.len == 8 { word } else { word & ((1 << (8 * self.len)) - 1) }));
        }
        plain_varint(&mut wire.get(at..)?)
    }
}

impl ShapeStat {
    #[inline(always)]
    fn read<'a>(self, wire: &'a [u8]) -> Option<Stat<'a>> {
        let (at, len) = (self.value.at as usize, self.value.len as usize);
        let value = match self.key {
            KEY_7_VARINT => StatValue::Ref(self.value.read(wire)?),
            KEY_4_VARINT => StatValue::Int64(self.value.read(wire)? as i64),
            KEY_3_VARINT => StatValue::Uint64(self.value.read(wire)?),
            KEY_2_FIXED64 => StatValue::Double(f64::from_le_bytes(*wire.get(at..)?.first_chunk::<8>()?)),
            // (The shape's text was checked as UTF-8; an event of the
            // shape has the same bytes, checked again where read.)
            KEY_5_BYTES => StatValue::Str(std::str::from_utf8(wire.get(at..at + len)?).ok()?),
            KEY_6_BYTES => StatValue::Bytes(wire.get(at..at + len)?),
            _ => return None,
        };
        Some(Stat { metadata_id: i64::from(self.id), value })
    }
}

impl Shapes {
    /// Events longer than this are read without shapes.
    const LONGEST: usize = 1024;

    pub fn new(wanted: StatIds) -> Shapes {
        Shapes { wanted, by_len: Vec::new(), read: 0, missed: 0 }
    }

    /// [`Event::decode_with_wanted_stats`] with the wanted stats of
    /// [`Shapes::new`].
    #[inline]
    pub fn decode<'a>(&mut self, wire: &'a [u8], mut visit: impl FnMut(Stat<'a>)) -> Result<Event<'a>, DecodeError> {
        let mut seen = 0;
        let mut counted = |stat| {
            seen += 1;
            visit(stat);
        };
        self.read += 1;
        let shape = self.by_len.get(wire.len()).and_then(|ways| ways.iter().flatten().find(|shape| shape.fits(wire)));
        let plain = match shape {
            Some(shape) => shape.read(wire, &mut counted),
            None => {
                self.missed += 1;
                let event = Event::decode_plain_with(wire, &self.wanted, &mut counted);
                if event.is_some()
                    && self.shapes_pay()
                    && let Some(shape) = Shape::of(wire, &self.wanted)
                {
                    if self.by_len.len() <= wire.len() {
                        self.by_len.resize_with(wire.len() + 1, Default::default);
                    }
                    let ways = &mut self.by_len[wire.len()];
                    ways[1] = ways[0].replace(shape);
                }
                event
            }
        };
        match plain {
            Some(event) => Ok(event),
            None => Event::decode_rest_checked(wire, &self.wanted, seen, visit),
        }
    }

    /// Whether shapes are worth making: most events so far had a known one.
    fn shapes_pay(&self) -> bool {
        self.missed < 64 || self.missed * 4 < self.read
    }
}

impl Shape {
    /// The shape of an event [`Event::decode_plain_with`] read, if it is
    /// one of the common kind: one-byte keys, stats of the common shape
    /// (`metadata_id` below 128, then one value that ends the stat).
    fn of(wire: &[u8], wanted: &StatIds) -> Option<Shape> {
        if wire.len() > Shapes::LONGEST {
            return None;
        }
        // Per byte, the bits that decide how the event reads: all of a
        // key, a length, a stat's id or a text; a varint's continuation
        // bits (and a 10-byte varint's last bits, which prost checks); none
        // of a double or of bytes.
        let mut mask = vec![0u8; wire.len().div_ceil(8) * 8];
        let varint = |mask: &mut [u8], at: usize| -> Option<usize> {
            let len = wire.get(at..)?.iter().take(10).position(|&b| b < 0x80)? + 1;
            mask[at..at + len].fill(0x80);
            if len == 10 {
                mask[at + 9] = 0xfe;
            }
            Some(len)
        };
        let mut shape = Shape { mask: Vec::new(), expected: Vec::new(), metadata_id: None, data: None, duration: None, stats_at: None, stats: Vec::new() };
        let mut at = 0;
        while at < wire.len() {
            let key = wire[at];
            mask[at] = 0xff;
            at += 1;
            let field = match key {
                KEY_1_VARINT => &mut shape.metadata_id,
                KEY_3_VARINT => &mut shape.duration,
                KEY_2_VARINT | KEY_5_VARINT => {
                    let number = Varint { at: at as u32, len: varint(&mut mask, at)? as u32 };
                    shape.data = Some((key == KEY_2_VARINT, number));
                    at += number.len as usize;
                    continue;
                }
                KEY_4_BYTES => {
                    shape.stats_at.get_or_insert(at as u32 - 1);
                    let mut rest = &wire[at..];
                    let stat = plain_payload(&mut rest)?;
                    let from = wire.len() - rest.len() - stat.len();
                    mask[at..from].fill(0xff);
                    let [KEY_1_VARINT, id @ 0..=0x7f, key, value @ ..] = stat else { return None };
                    mask[from..from + 3].fill(0xff);
                    let value_at = from + 3;
                    let read_at = match *key {
                        KEY_3_VARINT | KEY_4_VARINT | KEY_7_VARINT => (varint(&mut mask, value_at)? == value.len()).then_some((value_at, value.len())),
                        KEY_2_FIXED64 => (value.len() == 8).then_some((value_at, 8)),
                        KEY_5_BYTES | KEY_6_BYTES => {
                            let mut text = value;
                            let payload = plain_payload(&mut text)?;
                            // A text is read as it is (it was checked as UTF-8).
                            let fixed = if *key == KEY_5_BYTES { value.len() } else { value.len() - payload.len() };
                            mask[value_at..value_at + fixed].fill(0xff);
                            let fits = text.is_empty() && (*key == KEY_6_BYTES || std::str::from_utf8(payload).is_ok());
                            fits.then_some((value_at + value.len() - payload.len(), payload.len()))
                        }
                        _ => None,
                    };
                    let (value_at, len) = read_at?;
                    if wanted.holds(i64::from(*id)) {
                        shape.stats.push(ShapeStat { id: *id, key: *key, value: Varint { at: value_at as u32, len: len as u32 } });
                    }
                    at = from + stat.len();
                    continue;
                }
                _ => return None,
            };
            let number = Varint { at: at as u32, len: varint(&mut mask, at)? as u32 };
            *field = Some(number);
            at += number.len as usize;
        }
        let mut padded = wire.to_vec();
        padded.resize(mask.len(), 0);
        let words = |bytes: &[u8]| -> Vec<u64> { bytes.chunks_exact(8).map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes"))).collect() };
        shape.mask = words(&mask);
        shape.expected = words(&padded).iter().zip(&shape.mask).map(|(w, m)| w & m).collect();
        Some(shape)
    }

    /// Whether an event of the shape's length is of the shape.
    #[inline]
    fn fits(&self, wire: &[u8]) -> bool {
        let (words, tail) = wire.as_chunks::<8>();
        let mut differ = 0;
        for ((word, mask), expected) in words.iter().zip(&self.mask).zip(&self.expected) {
            differ |= (u64::from_le_bytes(*word) & mask) ^ expected;
        }
        if !tail.is_empty() {
            let mut last = [0; 8];
            last[..tail.len()].copy_from_slice(tail);
            differ |= (u64::from_le_bytes(last) & self.mask[words.len()]) ^ self.expected[words.len()];
        }
        differ == 0
    }

    /// An event of the shape, read as [`Event::decode_plain_with`] reads it.
    #[inline]
    fn read<'a>(&self, wire: &'a [u8], mut visit: impl FnMut(Stat<'a>)) -> Option<Event<'a>> {
        let mut event = Event { wire: &[], ..Default::default() };
        if let Some(number) = self.metadata_id {
            event.metadata_id = number.read(wire)? as i64;
        }
        match self.data {
            Some((true, number)) => event.offset_ps = number.read(wire)? as i64,
            Some((false, number)) => event.num_occurrences = number.read(wire)? as i64,
            None => {}
        }
        if let Some(number) = self.duration {
            event.duration_ps = number.read(wire)? as i64;
        }
        if let Some(at) = self.stats_at {
            event.wire = wire.get(at as usize..)?;
        }
        for stat in &self.stats {
            visit(stat.read(wire)?);
        }
        Some(event)
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::super::tests::{jax_gpu_kernel, sample_space};
    use super::*;
    use crate::proto::tensorflow::profiler as xp;
    use crate::test_random::XorShift;

    /// Events read by their shapes read as without them, errors included:
    /// each event of the sample and a JAX GPU kernel, read first (its shape
    /// is made), then copies of it with bytes changed in place (the same
    /// length: they are tried against its shape): every byte set to each
    /// of a few values and with each bit flipped, then a few bytes at
    /// random; with no, all and random sets of wanted stats.
    #[test]
    fn events_read_by_their_shapes_read_as_without() {
        let mut events: Vec<Vec<u8>> = sample_space().planes[0].lines[0].events.iter().map(Message::encode_to_vec).collect();
        let mut gpu = jax_gpu_kernel();
        events.push(gpu.encode_to_vec());
        // (Shapes are made of stats whose ids are one byte, as on JAX's GPU traces.)
        gpu.stats.retain(|s| s.metadata_id < 128);
        events.push(gpu.encode_to_vec());
        // As an aggregated event (`num_occurrences`) and with a bytes stat.
        let mut aggregated = gpu.clone();
        aggregated.data = Some(xp::x_event::Data::NumOccurrences(3));
        aggregated.stats.push(xp::XStat { metadata_id: 15, value: Some(xp::x_stat::Value::BytesValue(vec![1, 2, 0x80])) });
        events.push(aggregated.encode_to_vec());
        let mut rng = XorShift::new(0x5a9e);
        let (mut by_shape, mut read, mut refused) = (0, 0, 0);
        for original in &events {
            for round in 0..5 {
                let set = u128::from(rng.next()) << 64 | u128::from(rng.next());
                let wanted = match round {
                    0 => StatIds::ALL,
                    1 => StatIds::of(|_| false),
                    _ => StatIds::of(|id| set & 1 << id != 0),
                };
                let mut shapes = Shapes::new(wanted);
                let mut copies = vec![original.clone()];
                for at in 0..original.len() {
                    let values = [0x00, 0x01, 0x02, 0x7f, 0x80, 0xff].into_iter().chain((0..8).map(|bit| original[at] ^ 1 << bit));
                    copies.extend(values.map(|value| {
                        let mut copy = original.clone();
                        copy[at] = value;
                        copy
                    }));
                }
                for _ in 0..200 {
                    let mut copy = original.clone();
                    for _ in 0..2 + rng.below(2) {
                        let at = rng.below(copy.len() as u64) as usize;
                        copy[at] = rng.next() as u8;
                    }
                    copies.push(copy);
                }
                for bytes in &copies {
                    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
                    let fitted = shapes.read - shapes.missed;
                    let result = shapes.decode(bytes, |stat| ours.push(stat));
                    by_shape += shapes.read - shapes.missed - fitted;
                    match (result, Event::decode_with_wanted_stats(bytes, &wanted, |stat| theirs.push(stat))) {
                        (Ok(ours), Ok(theirs)) => {
                            read += 1;
                            assert_eq!(
                                (ours.metadata_id, ours.offset_ps, ours.num_occurrences, ours.duration_ps, ours.wire),
                                (theirs.metadata_id, theirs.offset_ps, theirs.num_occurrences, theirs.duration_ps, theirs.wire),
                                "{bytes:02x?}"
                            );
                        }
                        (Err(ours), Err(theirs)) => {
                            refused += 1;
                            assert_eq!(ours.to_string(), theirs.to_string(), "{bytes:02x?}");
                        }
                        (ours, theirs) => panic!("{bytes:02x?}: {ours:?} against {theirs:?}"),
                    }
                    assert_eq!(ours, theirs, "{bytes:02x?}");
                }
            }
        }
        assert!(by_shape > 5_000 && read > 15_000 && refused > 15_000, "{by_shape} read by shape, {read} read, {refused} refused");
    }
}
