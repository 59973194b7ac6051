//! The one-pass readers of the common shape of events and stats: one-byte
//! keys, varints read a word at a time, payloads that fit. Each gives
//! `None` where the bytes are of another shape (or damaged), for prost's
//! field-by-field reading to give its answer.

// One-byte keys (field number << 3 | wire type) of the fields events and
// stats are made of.
pub(super) const KEY_1_VARINT: u8 = 1 << 3;
pub(super) const KEY_2_VARINT: u8 = 2 << 3;
pub(super) const KEY_2_FIXED64: u8 = 2 << 3 | 1;
pub(super) const KEY_3_VARINT: u8 = 3 << 3;
pub(super) const KEY_4_VARINT: u8 = 4 << 3;
pub(super) const KEY_4_BYTES: u8 = 4 << 3 | 2;
pub(super) const KEY_5_VARINT: u8 = 5 << 3;
pub(super) const KEY_5_BYTES: u8 = 5 << 3 | 2;
pub(super) const KEY_6_BYTES: u8 = 6 << 3 | 2;
pub(super) const KEY_7_VARINT: u8 = 7 << 3;

/// A varint, or `None` where prost would refuse it.
#[inline(always)]
pub(super) fn plain_varint(buf: &mut &[u8]) -> Option<u64> {
    // (Most are one byte: ids, keys, lengths of stats. Without a call
    // whether or not prost's decoder is inlined here.)
    if let Some((&byte, rest)) = buf.split_first()
        && byte < 0x80
    {
        *buf = rest;
        return Some(u64::from(byte));
    }
    // Up to 8 bytes (times in ps, ids) from one word, without a call.
    if let Some(word) = buf.first_chunk::<8>().map(|b| u64::from_le_bytes(*b)) {
        let ends = !word & 0x8080_8080_8080_8080;
        if ends != 0 {
            let len = ends.trailing_zeros() as usize / 8 + 1;
            *buf = &buf[len..];
            return Some(varint_bits(if len == 8 { word } else { word & ((1 << (8 * len)) - 1) }));
        }
    }
    prost::encoding::decode_varint(buf).ok()
}

/// A varint that is the whole of `wire`, or `None` where it is not (or is
/// longer than 8 bytes, for [`plain_varint`] to read). A stat's value ends
/// its slice, so [`plain_varint`] could not read it as one word: on JAX's
/// GPU traces six of an event's 15 stats end in a varint of 2-7 bytes.
#[inline(always)]
pub(super) fn whole_varint(wire: &[u8]) -> Option<u64> {
    let len = wire.len();
    if len == 0 || len > 8 {
        return None;
    }
    let word = wire.iter().enumerate().fold(0, |word, (at, &byte)| word | u64::from(byte) << (8 * at));
    // Every byte but the last continues the varint.
    let ends = !word & 0x8080_8080_8080_8080;
    if ends.trailing_zeros() as usize / 8 != len - 1 {
        return None;
    }
    Some(varint_bits(word))
}

/// The value of a varint of up to 8 bytes read as one little-endian word
/// (the bytes past it zero): each byte's 7 bits next to the previous one's.
#[inline(always)]
pub(super) fn varint_bits(word: u64) -> u64 {
    let bits = word & 0x7f7f_7f7f_7f7f_7f7f;
    let bits = (bits & 0x007f_007f_007f_007f) | ((bits & 0x7f00_7f00_7f00_7f00) >> 1);
    let bits = (bits & 0x0000_3fff_0000_3fff) | ((bits & 0x3fff_0000_3fff_0000) >> 2);
    (bits & 0x0000_0000_0fff_ffff) | ((bits & 0x0fff_ffff_0000_0000) >> 4)
}

/// A length-delimited payload after its key, or `None` if it does not fit.
#[inline]
pub(super) fn plain_payload<'a>(buf: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = usize::try_from(plain_varint(buf)?).ok()?;
    if len > buf.len() {
        return None;
    }
    let (payload, rest) = buf.split_at(len);
    *buf = rest;
    Some(payload)
}

/// The payload of a field 4 (a line's events, an event's stats) framed as
/// usual, taken from the front of `rest`; `None` leaves `rest` as it was
/// (for prost's field-by-field reading).
#[inline]
pub(super) fn plain_field_4<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (&KEY_4_BYTES, mut after) = rest.split_first()? else { return None };
    let payload = plain_payload(&mut after)?;
    *rest = after;
    Some(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_random::XorShift;

    /// A varint read from one word is prost's: every length from 1 to 10
    /// bytes, with bytes after it or at the end of the buffer, and
    /// random bytes (varints too long, cut short).
    #[test]
    fn varints_read_as_prost_reads_them() {
        let mut rng = XorShift::new(0x7a41);
        let check = |bytes: &[u8]| {
            let (mut ours, mut theirs) = (bytes, bytes);
            let expected = prost::encoding::decode_varint(&mut theirs).ok();
            assert_eq!(plain_varint(&mut ours), expected, "{bytes:02x?}");
            if expected.is_some() {
                assert_eq!(ours.len(), theirs.len(), "{bytes:02x?}");
            }
            // As the whole of a slice: prost's value where prost reads
            // exactly the slice, else nothing (a longer varint is left to
            // `plain_varint`).
            let whole = expected.filter(|_| theirs.is_empty() && bytes.len() <= 8);
            assert_eq!(whole_varint(bytes), whole, "{bytes:02x?}");
        };
        for bits in 0..=64 {
            for _ in 0..50 {
                let value = if bits == 0 { 0 } else { (rng.next() >> (64 - bits)) | 1 << (bits - 1) };
                let mut bytes = Vec::new();
                prost::encoding::encode_varint(value, &mut bytes);
                check(&bytes);
                bytes.extend((0..rng.below(12)).map(|_| rng.next() as u8));
                check(&bytes);
            }
        }
        for _ in 0..20_000 {
            let len = rng.below(14) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| if rng.below(4) == 0 { rng.next() as u8 & 0x7f } else { rng.next() as u8 | 0x80 }).collect();
            check(&bytes);
        }
    }
}
