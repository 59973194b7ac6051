//! The `XSpace` wire format (`tsl/profiler/protobuf/xplane.proto`), read in
//! place from the mapped file.
//!
//! Traces of multi-GPU and TPU jobs run to hundreds of MB, nearly all of it
//! events. A generated decoder would copy every event and stat into its own
//! allocation (several times the file's size); here a plane keeps its
//! metadata decoded and its lines as borrowed bytes, and events and stats are
//! decoded as they are walked. Merging follows protobuf's rules like prost's
//! generated decoder (tested against it below): repeated fields add an
//! element per occurrence, scalars keep the last, a oneof keeps the last
//! member set, map entries keep the last value of a key.
//!
//! This file holds the space and its planes (with their metadata); the rest
//! of the format is in its own files: a plane's lines, their pieces and
//! walks (`line.rs`), lines cut at guessed event starts (`guess.rs`), events
//! and their stats (`event.rs`), the one-pass readers of their common shape
//! (`plain.rs`), and events read by the shapes of those read before
//! (`shapes.rs`).

mod event;
mod guess;
mod line;
mod plain;
mod shapes;

use prost::DecodeError;
use prost::encoding::{DecodeContext, int64};
use rustc_hash::FxHashMap;

pub use self::event::{Event, Stat, StatIds, StatValue};
pub use self::line::{Line, PIECE_EVENTS};
pub use self::shapes::Shapes;
use crate::inputs::wire::{for_each_field, payload, skip};

/// An `XSpace`: its planes, undecoded.
#[derive(Debug)]
pub struct Space<'a> {
    pub planes: Vec<&'a [u8]>,
    pub hostnames: Vec<&'a str>,
}

impl<'a> Space<'a> {
    pub fn decode(wire: &'a [u8]) -> Result<Space<'a>, DecodeError> {
        let mut space = Space { planes: Vec::new(), hostnames: Vec::new() };
        for_each_field(wire, |tag, wire_type, buf| {
            match tag {
                1 => space.planes.push(payload(tag, wire_type, buf)?),
                4 => space.hostnames.push(utf8(payload(tag, wire_type, buf)?)?),
                _ => skip(tag, wire_type, buf)?,
            }
            Ok(())
        })?;
        Ok(space)
    }
}

/// An `XPlane` with its metadata decoded and its lines borrowed.
#[derive(Debug, Default)]
pub struct Plane<'a> {
    pub id: i64,
    pub name: &'a str,
    pub lines: Vec<Line<'a>>,
    pub event_metadata: FxHashMap<i64, EventMetadata<'a>>,
    /// Stat metadata id → the stat's name.
    pub stat_names: FxHashMap<i64, &'a str>,
    pub stats: Vec<Stat<'a>>,
}

/// Called with stretches of the trace that have been walked, so that a
/// memory-mapped trace can give their pages back (see
/// [`Plane::decode_releasing`]).
pub type Release<'r> = &'r (dyn Fn(&[u8]) + Sync);

impl<'a> Plane<'a> {
    /// Decodes a plane's own fields and its lines' headers (not their events).
    pub fn decode(wire: &'a [u8]) -> Result<Plane<'a>, DecodeError> {
        Plane::decode_releasing(wire, &|_| {})
    }

    /// [`Plane::decode`], calling `release` with each stretch of a line's
    /// events once walked (every few MB): a line of a 1 GB trace is walked
    /// for its framing long before its events are read.
    pub fn decode_releasing(wire: &'a [u8], release: Release<'_>) -> Result<Plane<'a>, DecodeError> {
        Plane::decode_with(wire, LinesAs::Framed(release))
    }

    /// A plane with its lines' headers, their events not framed: the lines
    /// of a GPU plane hold most of a JAX trace, and framing them is one
    /// core's walk of most of the file before they can be cut into pieces.
    /// Their pieces are guessed instead ([`Line::guessed_pieces`]).
    pub fn decode_unframed(wire: &'a [u8]) -> Result<Plane<'a>, DecodeError> {
        Plane::decode_with(wire, LinesAs::Unframed)
    }

    fn decode_with(wire: &'a [u8], lines: LinesAs<'_>) -> Result<Plane<'a>, DecodeError> {
        let mut plane = Plane::default();
        for_each_field(wire, |tag, wire_type, buf| {
            match tag {
                1 => int64::merge(wire_type, &mut plane.id, buf, DecodeContext::default())?,
                2 => plane.name = utf8(payload(tag, wire_type, buf)?)?,
                3 => match lines {
                    LinesAs::Framed(release) => plane.lines.push(Line::decode(payload(tag, wire_type, buf)?, release)?),
                    LinesAs::Unframed => plane.lines.push(Line::decode_unframed(payload(tag, wire_type, buf)?)?),
                    LinesAs::Skipped => skip(tag, wire_type, buf)?,
                },
                4 => {
                    let (key, value) = map_entry(payload(tag, wire_type, buf)?)?;
                    plane.event_metadata.insert(key, EventMetadata::decode(value.unwrap_or_default())?);
                }
                5 => {
                    let (key, value) = map_entry(payload(tag, wire_type, buf)?)?;
                    plane.stat_names.insert(key, name_field(value.unwrap_or_default())?);
                }
                6 => plane.stats.push(Stat::decode(payload(tag, wire_type, buf)?)?),
                _ => skip(tag, wire_type, buf)?,
            }
            Ok(())
        })?;
        Ok(plane)
    }

    /// A plane without its lines (skipped whole, their events unchecked):
    /// its name, metadata and stats, for what they say of the trace.
    pub fn decode_metadata(wire: &'a [u8]) -> Result<Plane<'a>, DecodeError> {
        Plane::decode_with(wire, LinesAs::Skipped)
    }

    /// A plane's name alone: its other fields are skipped, its lines whole.
    pub fn decode_name(wire: &'a [u8]) -> Result<&'a str, DecodeError> {
        name_field(wire)
    }

    /// The name of an event's metadata (empty if unknown).
    pub fn event_name(&self, metadata_id: i64) -> &'a str {
        self.event_metadata.get(&metadata_id).map_or("", |m| m.name)
    }
}

/// What [`Plane::decode_with`] does with a plane's lines.
enum LinesAs<'r> {
    Framed(Release<'r>),
    Unframed,
    Skipped,
}

/// One entry of a protobuf map: key (field 1) and message value (field 2).
fn map_entry(wire: &[u8]) -> Result<(i64, Option<&[u8]>), DecodeError> {
    let (mut key, mut value) = (0, None);
    for_each_field(wire, |tag, wire_type, buf| {
        match tag {
            1 => int64::merge(wire_type, &mut key, buf, DecodeContext::default())?,
            2 => value = Some(payload(tag, wire_type, buf)?),
            _ => skip(tag, wire_type, buf)?,
        }
        Ok(())
    })?;
    Ok((key, value))
}

/// Field 2 of a message, a string: the name of an `XPlane` and of an
/// `XStatMetadata`.
fn name_field(wire: &[u8]) -> Result<&str, DecodeError> {
    let mut name = "";
    for_each_field(wire, |tag, wire_type, buf| {
        match tag {
            2 => name = utf8(payload(tag, wire_type, buf)?)?,
            _ => skip(tag, wire_type, buf)?,
        }
        Ok(())
    })?;
    Ok(name)
}

/// An `XEventMetadata`: what events that share it are.
#[derive(Debug, Default, Clone)]
pub struct EventMetadata<'a> {
    pub id: i64,
    pub name: &'a str,
    pub display_name: &'a str,
    /// Serialized extra metadata (e.g. an `HloProto` in `/host:metadata`).
    pub metadata: &'a [u8],
    pub stats: Vec<Stat<'a>>,
}

impl<'a> EventMetadata<'a> {
    fn decode(wire: &'a [u8]) -> Result<EventMetadata<'a>, DecodeError> {
        let mut meta = EventMetadata::default();
        for_each_field(wire, |tag, wire_type, buf| {
            match tag {
                1 => int64::merge(wire_type, &mut meta.id, buf, DecodeContext::default())?,
                2 => meta.name = utf8(payload(tag, wire_type, buf)?)?,
                3 => meta.metadata = payload(tag, wire_type, buf)?,
                4 => meta.display_name = utf8(payload(tag, wire_type, buf)?)?,
                5 => meta.stats.push(Stat::decode(payload(tag, wire_type, buf)?)?),
                _ => skip(tag, wire_type, buf)?,
            }
            Ok(())
        })?;
        Ok(meta)
    }
}

/// Protobuf `string` fields must hold UTF-8 (prost refuses them otherwise).
/// prost makes its own errors with `DecodeError::new`, now hidden; the same
/// message keeps errors alike whichever decoder read the field.
#[allow(deprecated)]
fn utf8(bytes: &[u8]) -> Result<&str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|_| DecodeError::new("invalid string value: data is not UTF-8 encoded"))
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;
    use crate::proto::tensorflow::profiler as xp;
    use crate::test_random::XorShift;

    /// What the generated decoder reads, in the shape of the lazy one.
    fn generated_view(space: &xp::XSpace) -> Vec<String> {
        let mut out = Vec::new();
        for plane in &space.planes {
            out.push(format!("plane {} {:?} stats={}", plane.id, plane.name, plane.stats.len()));
            let mut metas: Vec<_> = plane.event_metadata.iter().collect();
            metas.sort_by_key(|(k, _)| **k);
            for (k, m) in metas {
                out.push(format!("emeta {k} {} {:?} {:?} {} {}", m.id, m.name, m.display_name, m.metadata.len(), m.stats.len()));
            }
            let mut snames: Vec<_> = plane.stat_metadata.iter().map(|(k, m)| (*k, m.name.clone())).collect();
            snames.sort();
            for (k, n) in snames {
                out.push(format!("smeta {k} {n:?}"));
            }
            for line in &plane.lines {
                out.push(format!("line {} {} {:?} {:?} {} {}", line.id, line.display_id, line.name, line.display_name, line.timestamp_ns, line.duration_ps));
                for e in &line.events {
                    let (offset, occ) = match e.data {
                        Some(xp::x_event::Data::OffsetPs(o)) => (o, 0),
                        Some(xp::x_event::Data::NumOccurrences(n)) => (0, n),
                        None => (0, 0),
                    };
                    out.push(format!("event {} {offset} {occ} {}", e.metadata_id, e.duration_ps));
                    for s in &e.stats {
                        let v = match &s.value {
                            None => StatValue::None,
                            Some(xp::x_stat::Value::DoubleValue(v)) => StatValue::Double(*v),
                            Some(xp::x_stat::Value::Uint64Value(v)) => StatValue::Uint64(*v),
                            Some(xp::x_stat::Value::Int64Value(v)) => StatValue::Int64(*v),
                            Some(xp::x_stat::Value::StrValue(v)) => StatValue::Str(v),
                            Some(xp::x_stat::Value::BytesValue(v)) => StatValue::Bytes(v),
                            Some(xp::x_stat::Value::RefValue(v)) => StatValue::Ref(*v),
                        };
                        out.push(format!("stat {} {v:?}", s.metadata_id));
                    }
                }
            }
        }
        out
    }

    fn lazy_view(wire: &[u8]) -> Result<Vec<String>, DecodeError> {
        let mut out = Vec::new();
        for plane in Space::decode(wire)?.planes {
            let plane = Plane::decode(plane)?;
            out.push(format!("plane {} {:?} stats={}", plane.id, plane.name, plane.stats.len()));
            let mut metas: Vec<_> = plane.event_metadata.iter().collect();
            metas.sort_by_key(|(k, _)| **k);
            for (k, m) in metas {
                out.push(format!("emeta {k} {} {:?} {:?} {} {}", m.id, m.name, m.display_name, m.metadata.len(), m.stats.len()));
            }
            let mut snames: Vec<_> = plane.stat_names.iter().map(|(k, n)| (*k, n.to_string())).collect();
            snames.sort();
            for (k, n) in snames {
                out.push(format!("smeta {k} {n:?}"));
            }
            for line in &plane.lines {
                out.push(format!("line {} {} {:?} {:?} {} {}", line.id, line.display_id, line.name, line.display_name, line.timestamp_ns, line.duration_ps));
                for e in line.events() {
                    let e = e?;
                    out.push(format!("event {} {} {} {}", e.metadata_id, e.offset_ps, e.num_occurrences, e.duration_ps));
                    for s in e.stats() {
                        out.push(format!("stat {} {:?}", s.metadata_id, s.value));
                    }
                }
            }
        }
        Ok(out)
    }

    pub(super) fn sample_space() -> xp::XSpace {
        let stat = |id, value| xp::XStat { metadata_id: id, value: Some(value) };
        let event = |meta, offset, dur, stats| xp::XEvent { metadata_id: meta, duration_ps: dur, stats, data: Some(xp::x_event::Data::OffsetPs(offset)) };
        let mut plane = xp::XPlane { id: 3, name: "/host:CPU".into(), ..Default::default() };
        plane.event_metadata.insert(1, xp::XEventMetadata { id: 1, name: "dense/MatMul:MatMul".into(), ..Default::default() });
        plane.event_metadata.insert(2, xp::XEventMetadata { id: 2, name: "train".into(), display_name: "Train".into(), ..Default::default() });
        plane.stat_metadata.insert(7, xp::XStatMetadata { id: 7, name: "step_num".into(), ..Default::default() });
        plane.stat_metadata.insert(8, xp::XStatMetadata { id: 8, name: "tf_op".into(), ..Default::default() });
        plane.lines.push(xp::XLine {
            id: 11,
            name: "tf_Compute".into(),
            timestamp_ns: 1_000,
            events: vec![
                event(2, 0, 9_000_000, vec![stat(7, xp::x_stat::Value::Int64Value(4))]),
                event(1, 5, 1_234_567, vec![stat(8, xp::x_stat::Value::RefValue(7)), stat(8, xp::x_stat::Value::DoubleValue(2.5))]),
                xp::XEvent { metadata_id: 1, duration_ps: 3, data: Some(xp::x_event::Data::NumOccurrences(9)), stats: vec![] },
                // Ten-byte varints, and every kind of value.
                event(
                    -1,
                    -5,
                    7,
                    vec![
                        stat(-8, xp::x_stat::Value::Int64Value(-3)),
                        stat(8, xp::x_stat::Value::Uint64Value(u64::MAX)),
                        stat(8, xp::x_stat::Value::StrValue("tf_op:éÅ".into())),
                        stat(9, xp::x_stat::Value::BytesValue(vec![0xff, 0])),
                    ],
                ),
            ],
            ..Default::default()
        });
        xp::XSpace { planes: vec![plane], hostnames: vec!["host0".into()], ..Default::default() }
    }

    /// A JAX GPU kernel's stats: every kind of value, varints of 1 to 10
    /// bytes, ids that a set of ids can and cannot hold.
    pub(super) fn jax_gpu_kernel() -> xp::XEvent {
        let stat = |id, value| xp::XStat { metadata_id: id, value: Some(value) };
        use xp::x_stat::Value::*;
        xp::XEvent {
            metadata_id: 6,
            duration_ps: 1_920_000,
            data: Some(xp::x_event::Data::OffsetPs(3_884_247_000)),
            stats: vec![
                stat(1, Uint64Value(57)),
                stat(2, Int64Value(281_474_976_711_174)),
                stat(3, StrValue("$$1".into())),
                stat(4, Uint64Value(9)),
                stat(5, Uint64Value(38_654_705_669)),
                stat(6, DoubleValue(100.0)),
                stat(7, Int64Value(264)),
                stat(8, Int64Value(1024)),
                stat(9, RefValue(35)),
                stat(10, RefValue(20)),
                stat(127, RefValue(30)),
                stat(128, RefValue(32)),
                stat(12, Int64Value(-1)),
                stat(13, BytesValue(vec![0x80, 0xff])),
                stat(14, Uint64Value(1 << 62)),
                stat(1 << 20, Int64Value(13_258)),
            ],
        }
    }

    #[test]
    fn reads_what_the_generated_decoder_reads() {
        let space = sample_space();
        let wire = space.encode_to_vec();
        assert_eq!(lazy_view(&wire).unwrap(), generated_view(&space));
        assert_eq!(Space::decode(&wire).unwrap().hostnames, vec!["host0"]);
    }

    /// Randomly corrupted traces: wherever the generated decoder succeeds the
    /// lazy one reads the same, and nothing panics either way.
    #[test]
    fn corrupted_traces_decode_like_the_generated_decoder() {
        let wire = sample_space().encode_to_vec();
        let mut rng = XorShift::new(0x5e_ed0f_7a1e);
        for _ in 0..3000 {
            let mut bytes = wire.clone();
            rng.corrupt(&mut bytes, 3);
            let lazy = lazy_view(&bytes);
            if let Ok(full) = xp::XSpace::decode(bytes.as_slice()) {
                assert_eq!(lazy.expect("the generated decoder took it"), generated_view(&full));
            }
        }
    }
}
