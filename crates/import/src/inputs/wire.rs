//! Wire-level helpers for the lean decoders of large inputs
//! ([`super::graph`], [`super::profile`], op logs).

use bytes::{Buf, Bytes};
use prost::Message;
use prost::encoding::{DecodeContext, WireType, check_wire_type, decode_key, decode_varint, skip_field};
use rayon::prelude::*;

/// Cuts a message into the payloads of its field 1 (the repeated field that
/// holds a graph's or a profile's nodes, an op log's entries) and the bytes
/// of every other field, in order, so that the payloads can be decoded on all
/// cores. A field 1 of another wire type stays with the rest, where decoding
/// rejects it.
pub fn split_repeated_field(whole: &[u8]) -> Result<(Vec<&[u8]>, Vec<u8>), prost::DecodeError> {
    let mut buf = whole;
    let (mut entries, mut rest) = (Vec::new(), Vec::new());
    let mut prefetched = 0;
    while buf.has_remaining() {
        let start = whole.len() - buf.remaining();
        prefetched = prefetch_ahead(whole, start, prefetched);
        let (tag, wire_type) = decode_key(&mut buf)?;
        if tag == 1 && wire_type == WireType::LengthDelimited {
            let len = decode_varint(&mut buf)?;
            if len > buf.remaining() as u64 {
                // Truncated: left for the decoder of the rest to reject.
                rest.extend_from_slice(&whole[start..]);
                break;
            }
            let (entry, after) = buf.split_at(len as usize);
            entries.push(entry);
            buf = after;
        } else {
            skip_field(wire_type, tag, &mut buf, DecodeContext::default())?;
            rest.extend_from_slice(&whole[start..whole.len() - buf.remaining()]);
        }
    }
    Ok((entries, rest))
}

/// Asks the CPU to load the bytes a little ahead of `at` (up to where it
/// asked last time, `done`) and returns how far it has asked. Each entry's
/// position depends on the previous entry's length, so without this every
/// entry header is a cache miss waited for in turn; on large files (and
/// under a hypervisor's nested page tables) that made splitting several
/// times slower per byte than on files that fit in cache.
fn prefetch_ahead(whole: &[u8], at: usize, done: usize) -> usize {
    const AHEAD: usize = 4096;
    let from = done.max(at);
    let until = (at + AHEAD).min(whole.len());
    if from < until {
        crate::cache::prefetch_bytes(&whole[from..until]);
    }
    until.max(from)
}

/// [`split_repeated_field`] with the payloads as zero-copy slices of `whole`.
pub fn split_repeated_field_shared(whole: &Bytes) -> Result<(Vec<Bytes>, Vec<u8>), prost::DecodeError> {
    let (entries, rest) = split_repeated_field(whole)?;
    Ok((entries.into_iter().map(|entry| whole.slice_ref(entry)).collect(), rest))
}

/// Decodes a message whose bulk is its repeated field 1 on all cores: the
/// entries as `E`, the other fields as `R`. Which error is returned when
/// several entries are bad is not fixed; callers that print it decode again
/// in order.
pub fn decode_split<E, R>(bytes: &[u8]) -> Result<(Vec<E>, R), prost::DecodeError>
where
    E: Message + Default + Send,
    R: Message + Default,
{
    let (entries, rest) = split_repeated_field(bytes)?;
    let rest = R::decode(rest.as_slice())?;
    let entries = entries.into_par_iter().map(E::decode).collect::<Result<Vec<_>, _>>()?;
    Ok((entries, rest))
}

/// A protobuf map on the wire is a list of entries: the generated types keep
/// the last value of each key, in key order. Entries here are sorted the same
/// way (stably, so that the last of equal keys is the one kept).
pub fn map_semantics<K: Ord, V>(entries: &mut Vec<(K, V)>) {
    if entries.windows(2).all(|w| w[0].0 < w[1].0) {
        return;
    }
    let kept = last_of_each_key(entries.len(), |a, b| entries[a].0.cmp(&entries[b].0));
    let mut slots: Vec<Option<(K, V)>> = entries.drain(..).map(Some).collect();
    entries.extend(kept.into_iter().map(|at| slots[at].take().expect("each position once")));
}

/// The positions `0..len` that [`map_semantics`] keeps, in key order: for
/// each key (compared by `cmp` of two positions), its last position. Sorts
/// positions rather than the entries, which may be large.
pub fn last_of_each_key(len: usize, cmp: impl Fn(usize, usize) -> std::cmp::Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order.iter().enumerate().filter(|&(i, &at)| order.get(i + 1).is_none_or(|&next| cmp(next, at).is_ne())).map(|(_, &at)| at).collect()
}

/// Reads each field's key and hands the field to `field`, which reads its
/// value from the buffer.
pub fn for_each_field<'a>(
    mut wire: &'a [u8],
    mut field: impl FnMut(u32, WireType, &mut &'a [u8]) -> Result<(), prost::DecodeError>,
) -> Result<(), prost::DecodeError> {
    while !wire.is_empty() {
        let (tag, wire_type) = decode_key(&mut wire)?;
        field(tag, wire_type, &mut wire)?;
    }
    Ok(())
}

/// A length-delimited field's payload, borrowed (prost checks the length).
pub fn payload<'a>(tag: u32, wire_type: WireType, buf: &mut &'a [u8]) -> Result<&'a [u8], prost::DecodeError> {
    check_wire_type(WireType::LengthDelimited, wire_type)?;
    let mut field = *buf;
    skip_field(wire_type, tag, buf, DecodeContext::default())?;
    let len = decode_varint(&mut field)? as usize;
    Ok(&field[..len])
}

/// Skips a field that is not read, checking only its framing.
pub fn skip(tag: u32, wire_type: WireType, buf: &mut &[u8]) -> Result<(), prost::DecodeError> {
    skip_field(wire_type, tag, buf, DecodeContext::default())
}
