//! `rtfprof cut --xplane_path FILE --steps A..B -o OUT`: the `XSpace` of
//! one host with only the events of a time window (the steps' window, which
//! the steps analysis finds), written at the wire level.
//!
//! Every field of the space, its planes and their lines is copied byte for
//! byte (plane and event metadata, stats, hostnames, errors, …) except a
//! line's events: of those, only the ones that overlap the window are
//! written, each as the trace has it. An event that encloses the window (a
//! whole-run span) overlaps it and is kept whole; a device event whose
//! `device_offset_ps`/`device_duration_ps` overlap the window is kept too
//! (XProf times such events by them); aggregated events (no time) are
//! kept. Planes without lines (`/host:metadata` and its XLA programs) are
//! copied whole.
//!
//! [`Keep::devices`] leaves out the planes of the devices it does not list
//! (whole), and [`Keep::min_dur_ps`] the timed events shorter than it.
//!
//! With [`Keep::roots`], events that are roots of grouping (an `_r` stat)
//! are kept wherever they are: XProf and rtfprof number the groups of a
//! trace that is not grouped yet (JAX's) by counting its roots in time
//! order, so the steps of the cut keep the whole trace's numbers where
//! they are named by them.
//!
//! The trace is read in place from its mapping, twice a line (which events
//! stay, then the writing), its pages given back as it is written; what is
//! held is the byte runs of one plane's kept fields, not its events.

use std::io::Write;
use std::path::Path;

use prost::encoding::{WireType, decode_key, encode_key, encode_varint, encoded_len_varint};

use super::stats::{StatKind, StatKinds};
use super::{Event, Plane, StatIds, XplaneFile, not_an_xspace};
use crate::error::{Error, Result};
use crate::inputs::wire::{payload, skip};

/// What a cut keeps besides the planes without time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keep<'a> {
    /// The window, in the trace's picoseconds: events that overlap
    /// `[start, end)` are kept.
    pub window: (i128, i128),
    /// Also every event with an `_r` (root) stat.
    pub roots: bool,
    /// The numbers of the device planes (`/device:GPU:N`, TPU) to keep;
    /// `None`: all. The host's planes are always kept.
    pub devices: Option<&'a [i64]>,
    /// Timed events shorter than this (ps) are left out; aggregated events
    /// and roots are kept.
    pub min_dur_ps: Option<i128>,
}

impl Keep<'_> {
    /// The window alone: every device, every duration.
    pub fn window(window: (i128, i128), roots: bool) -> Keep<'static> {
        Keep { window, roots, devices: None, min_dur_ps: None }
    }
}

/// What a cut kept and left out, for the line `rtfprof cut` prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cut {
    pub kept_events: u64,
    pub total_events: u64,
    /// Events of the device planes [`Keep::devices`] left out.
    pub other_devices: u64,
    /// Events in the window shorter than [`Keep::min_dur_ps`].
    pub too_short: u64,
}

/// The start of the trace's earliest event (ps), which a time window
/// counts from, as timelines do (`--time_ms`); `None` without events.
pub fn first_event_ps(file: &XplaneFile) -> Result<Option<i128>> {
    file.check()?;
    let mut first: Option<i128> = None;
    let walked = (|| -> std::result::Result<(), prost::DecodeError> {
        for field in fields(&file.bytes) {
            let field = field?;
            let (1, Some(plane)) = (field.tag, field.payload) else { continue };
            let plane = Plane::decode_releasing(plane, &|part| file.release(part))?;
            for line in &plane.lines {
                first = first.into_iter().chain(line.first_start_ps(&|part| file.release(part), |_| true)?).min();
            }
        }
        Ok(())
    })();
    file.walked();
    walked.map_err(|e| not_an_xspace(&file.path, &e))?;
    Ok(first)
}

/// Writes to `out` the cut of `file`; `out_path` names `out` in errors.
pub fn cut(file: &XplaneFile, keep: Keep, out: &mut dyn Write, out_path: &Path) -> Result<Cut> {
    file.check()?;
    let write_error = |e: std::io::Error| Error::Io { kind: "-o", path: out_path.to_owned(), source: e };
    let mut cut = Cut::default();
    let result = write_space(file, keep, out, &mut cut);
    file.walked();
    match result {
        Ok(()) => Ok(cut),
        Err(Failed::Decode(e)) => Err(not_an_xspace(&file.path, &e)),
        Err(Failed::Write(e)) => Err(write_error(e)),
    }
}

/// The cut of `file` as bytes (for tests and the fuzz target).
pub fn cut_to_vec(file: &XplaneFile, keep: Keep) -> Result<(Vec<u8>, Cut)> {
    let mut out = Vec::new();
    let cut = cut(file, keep, &mut out, Path::new("<memory>"))?;
    Ok((out, cut))
}

/// Why writing stopped: the trace, or the output.
enum Failed {
    Decode(prost::DecodeError),
    Write(std::io::Error),
}

impl From<prost::DecodeError> for Failed {
    fn from(e: prost::DecodeError) -> Failed {
        Failed::Decode(e)
    }
}

impl From<std::io::Error> for Failed {
    fn from(e: std::io::Error) -> Failed {
        Failed::Write(e)
    }
}

/// The space's fields in order, its planes cut.
fn write_space(file: &XplaneFile, keep: Keep, out: &mut dyn Write, cut: &mut Cut) -> std::result::Result<(), Failed> {
    // (`cut` checked the framing of the top level: a file cut short is
    // refused before a byte is written.)
    for field in fields(&file.bytes) {
        let field = field?;
        let (1, Some(plane)) = (field.tag, field.payload) else {
            out.write_all(field.whole)?;
            continue;
        };
        let Some(plan) = plan_plane(file, plane, keep, cut)? else { continue };
        let mut head = Vec::with_capacity(16);
        encode_key(1, WireType::LengthDelimited, &mut head);
        encode_varint(plan.len as u64, &mut head);
        out.write_all(&head)?;
        write_plane(file, plane, &plan, out)?;
    }
    Ok(())
}

/// A field of a message: its number, all of its bytes, and its payload if
/// it is length-delimited.
struct Field<'a> {
    tag: u32,
    whole: &'a [u8],
    payload: Option<&'a [u8]>,
}

/// The fields of `wire`, in order; the first framing error ends them.
fn fields(wire: &[u8]) -> impl Iterator<Item = std::result::Result<Field<'_>, prost::DecodeError>> {
    let mut rest = wire;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let start = rest;
        let field = (|| {
            let (tag, wire_type) = decode_key(&mut rest)?;
            let payload = if wire_type == WireType::LengthDelimited {
                Some(payload(tag, wire_type, &mut rest)?)
            } else {
                skip(tag, wire_type, &mut rest).map(|()| None)?
            };
            Ok(Field { tag, whole: &start[..start.len() - rest.len()], payload })
        })();
        if field.is_err() {
            rest = &[];
        }
        Some(field)
    })
}

/// What of a plane is written: its new length and, line by line, the byte
/// runs of each line that stay (its own fields and its kept events).
struct PlanePlan {
    len: usize,
    lines: Vec<Vec<(usize, usize)>>,
}

/// Which events of each line of `plane` stay; `None`: the plane is left
/// out (a device that [`Keep::devices`] does not list).
fn plan_plane(file: &XplaneFile, plane: &[u8], keep: Keep, cut: &mut Cut) -> std::result::Result<Option<PlanePlan>, Failed> {
    let decoded = Plane::decode_releasing(plane, &|part| file.release(part))?;
    if let Some(devices) = keep.devices
        && let Some(device) = super::planes::device_number(decoded.name)
        && !devices.contains(&device)
    {
        let events: usize = decoded.lines.iter().map(|line| line.event_wires().count()).sum();
        file.release(plane);
        cut.total_events += events as u64;
        cut.other_devices += events as u64;
        return Ok(None);
    }
    let kinds = StatKinds::of(&decoded);
    let device_span = kinds.names(StatKind::DeviceOffsetPs) && kinds.names(StatKind::DeviceDurationPs);
    let roots = keep.roots && kinds.names(StatKind::IsRoot);
    let wanted = StatIds::of(|id| {
        matches!(kinds.get(id), Some(StatKind::DeviceOffsetPs | StatKind::DeviceDurationPs) if device_span)
            || (roots && kinds.get(id) == Some(StatKind::IsRoot))
    });
    let read_stats = device_span || roots;
    let mut plan = PlanePlan { len: 0, lines: Vec::with_capacity(decoded.lines.len()) };
    let mut lines = decoded.lines.iter();
    for field in fields(plane) {
        let field = field?;
        let (3, Some(wire)) = (field.tag, field.payload) else {
            plan.len += field.whole.len();
            continue;
        };
        // (Plane::decode read a line from each: its header, merged.)
        let base = i128::from(lines.next().map_or(0, |line| line.timestamp_ns)) * 1000;
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut line_len = 0;
        for part in fields(wire) {
            let part = part?;
            let stays = match (part.tag, part.payload) {
                (4, Some(event)) => {
                    cut.total_events += 1;
                    let (mut offset, mut duration, mut root) = (None, None, false);
                    let e = if read_stats {
                        Event::decode_with_wanted_stats(event, &wanted, |stat| match kinds.get(stat.metadata_id) {
                            Some(StatKind::DeviceOffsetPs) => offset = stat.value.as_id(),
                            Some(StatKind::DeviceDurationPs) => duration = stat.value.as_id(),
                            Some(StatKind::IsRoot) => root = stat.value.as_i64().is_some_and(|level| level != 0),
                            _ => {}
                        })?
                    } else {
                        Event::decode(event)?
                    };
                    let timed = |begin: i128, duration: i64| overlaps(keep.window, begin, begin + i128::from(duration.max(0)));
                    let kept = e.num_occurrences != 0
                        || (roots && root)
                        || timed(base + i128::from(e.offset_ps), e.duration_ps)
                        || offset.zip(duration).is_some_and(|(o, d)| timed(i128::from(o), d));
                    let too_short = kept && e.num_occurrences == 0 && !(roots && root) && keep.min_dur_ps.is_some_and(|min| i128::from(e.duration_ps) < min);
                    cut.too_short += u64::from(too_short);
                    cut.kept_events += u64::from(kept && !too_short);
                    kept && !too_short
                }
                _ => true,
            };
            if stays {
                let start = part.whole.as_ptr() as usize - wire.as_ptr() as usize;
                let end = start + part.whole.len();
                match runs.last_mut() {
                    Some(last) if last.1 == start => last.1 = end,
                    _ => runs.push((start, end)),
                }
                line_len += part.whole.len();
            }
        }
        file.release(wire);
        plan.len += field_len(3, line_len);
        plan.lines.push(runs);
    }
    Ok(Some(plan))
}

/// Writes `plane` as `plan` says: its fields in order, each line with only
/// its runs.
fn write_plane(file: &XplaneFile, plane: &[u8], plan: &PlanePlan, out: &mut dyn Write) -> std::result::Result<(), Failed> {
    let mut lines = plan.lines.iter();
    let mut head = Vec::with_capacity(16);
    for field in fields(plane) {
        let field = field?;
        let (3, Some(line)) = (field.tag, field.payload) else {
            out.write_all(field.whole)?;
            continue;
        };
        let runs = lines.next().expect("a plan per line");
        head.clear();
        encode_key(3, WireType::LengthDelimited, &mut head);
        encode_varint(runs.iter().map(|(s, e)| e - s).sum::<usize>() as u64, &mut head);
        out.write_all(&head)?;
        for &(start, end) in runs {
            out.write_all(&line[start..end])?;
        }
        file.release(line);
    }
    Ok(())
}

/// The bytes of a length-delimited field `tag` of `len` bytes.
fn field_len(tag: u32, len: usize) -> usize {
    prost::encoding::key_len(tag) + encoded_len_varint(len as u64) + len
}

/// Whether `[begin, end)` overlaps `window`; an instant overlaps it if it is
/// in it.
fn overlaps((start, end): (i128, i128), begin: i128, finish: i128) -> bool {
    begin < end && (finish > start || begin >= start)
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;
    use crate::proto::tensorflow::profiler as xp;

    fn file_of(bytes: Vec<u8>) -> XplaneFile {
        XplaneFile { path: "t.xplane.pb".into(), bytes: bytes.into(), pages: Default::default() }
    }

    fn event(meta: i64, offset_ps: i64, duration_ps: i64) -> xp::XEvent {
        xp::XEvent { metadata_id: meta, duration_ps, stats: vec![], data: Some(xp::x_event::Data::OffsetPs(offset_ps)) }
    }

    /// A host plane (a run span, steps, ops, a root before the window),
    /// a metadata plane without lines, hostnames and errors.
    fn space() -> xp::XSpace {
        let mut host = xp::XPlane { id: 1, name: "/host:CPU".into(), ..Default::default() };
        host.stat_metadata.insert(5, xp::XStatMetadata { id: 5, name: "_r".into(), ..Default::default() });
        host.stat_metadata.insert(6, xp::XStatMetadata { id: 6, name: "device_offset_ps".into(), ..Default::default() });
        host.stat_metadata.insert(7, xp::XStatMetadata { id: 7, name: "device_duration_ps".into(), ..Default::default() });
        host.event_metadata.insert(1, xp::XEventMetadata { id: 1, name: "train".into(), ..Default::default() });
        let root = |offset| xp::XEvent { stats: vec![xp::XStat { metadata_id: 5, value: Some(xp::x_stat::Value::Int64Value(1)) }], ..event(1, offset, 10_000) };
        let device = |offset: i64, device_offset: u64| xp::XEvent {
            stats: vec![
                xp::XStat { metadata_id: 6, value: Some(xp::x_stat::Value::Uint64Value(device_offset)) },
                xp::XStat { metadata_id: 7, value: Some(xp::x_stat::Value::Uint64Value(1_000)) },
            ],
            ..event(2, offset, 1_000)
        };
        host.lines.push(xp::XLine {
            id: 2,
            name: "main".into(),
            // (Events start at 1 µs: the window is 21_000..31_000 ps.)
            timestamp_ns: 1,
            duration_ps: 99,
            events: vec![
                event(3, 0, 100_000),
                root(0),
                root(10_000),
                root(20_000),
                root(30_000),
                event(2, 20_000, 0),
                event(2, 30_000, 0),
                event(2, 9_000, 1_000),
                device(0, 25_000),
                xp::XEvent { metadata_id: 2, data: Some(xp::x_event::Data::NumOccurrences(4)), ..Default::default() },
            ],
            ..Default::default()
        });
        let metadata = xp::XPlane { id: 2, name: "/host:metadata".into(), ..Default::default() };
        xp::XSpace { planes: vec![host, metadata], hostnames: vec!["h".into()], errors: vec!["e".into()], ..Default::default() }
    }

    /// The events kept, as (metadata id, offset) in order, and the rest of
    /// the space as the whole has it.
    #[test]
    fn keeps_what_overlaps_the_window_and_every_other_field() {
        let whole = space();
        let file = file_of(whole.encode_to_vec());
        for (roots, kept) in [
            (false, vec![(3, 0), (1, 20_000), (2, 20_000), (2, 0), (2, 0)]),
            (true, vec![(3, 0), (1, 0), (1, 10_000), (1, 20_000), (1, 30_000), (2, 20_000), (2, 0), (2, 0)]),
        ] {
            let (bytes, done) = cut_to_vec(&file, Keep::window((21_000, 31_000), roots)).unwrap();
            let part = xp::XSpace::decode(bytes.as_slice()).unwrap();
            let offsets: Vec<(i64, i64)> = part.planes[0].lines[0]
                .events
                .iter()
                .map(|e| {
                    (
                        e.metadata_id,
                        match e.data {
                            Some(xp::x_event::Data::OffsetPs(o)) => o,
                            _ => 0,
                        },
                    )
                })
                .collect();
            assert_eq!(offsets, kept, "roots {roots}");
            assert_eq!(done, Cut { kept_events: kept.len() as u64, total_events: 10, ..Cut::default() });
            let mut same = whole.clone();
            same.planes[0].lines[0].events.retain(|e| part.planes[0].lines[0].events.contains(e));
            assert_eq!(part, same);
        }
        // The whole trace's window keeps it byte for byte.
        let (bytes, _) = cut_to_vec(&file, Keep::window((0, i128::MAX), false)).unwrap();
        assert_eq!(bytes, file.bytes.to_vec());
    }

    /// Every prefix of a trace, and every byte of it changed, is cut or
    /// refused naming the file, never a panic; a cut reads back.
    #[test]
    fn damaged_traces_are_refused() {
        let wire = space().encode_to_vec();
        let keep = Keep::window((21_000, 31_000), true);
        for len in 0..wire.len() {
            if let Err(e) = cut_to_vec(&file_of(wire[..len].to_vec()), keep) {
                assert!(e.to_string().contains("t.xplane.pb"), "{len}: {e}");
            }
        }
        for at in 0..wire.len() {
            let mut bad = wire.clone();
            bad[at] ^= 0x55;
            if let Ok((bytes, _)) = cut_to_vec(&file_of(bad.clone()), keep)
                && xp::XSpace::decode(bad.as_slice()).is_ok()
            {
                xp::XSpace::decode(bytes.as_slice()).expect("a cut of a trace reads back");
            }
        }
    }
}
