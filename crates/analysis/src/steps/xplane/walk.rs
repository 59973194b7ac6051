//! The second walk over a line ([`walk_line`]): its events again, in file
//! order, the kept ones read from their records and the others decoded and
//! given the group of the event they nest in. The step events are read
//! from it (`step_events.rs`).

use prost::DecodeError;

use super::collect::name_code;
use super::events::{Events, REGION_NAME, flag};
use crate::inputs::xplane::{Event, Line, Plane, Release};

/// An event as the second walk over a line ([`walk_line`]) sees it.
#[derive(Clone, Copy)]
pub(super) struct Seen<G = i64> {
    /// Its record, if [`collect`](super::collect::collect) kept one.
    pub(super) record: Option<usize>,
    pub(super) name: u32,
    pub(super) begin: i128,
    pub(super) end: i128,
    /// Its group: its record's, or, for an event without one, that of
    /// the event it nests in when grouping ran. (Or what stands for it in
    /// a walk while grouping runs: see [`walk_line`].)
    pub(super) group: Option<G>,
    /// A threadpool region, seen where its stop is (not after the line).
    pub(super) region: bool,
    /// On the line's nesting stack (not async, not a region).
    pub(super) nested: bool,
}

pub(super) enum Visit<G = i64> {
    Event(Seen<G>),
    /// A kept event of this group left the nesting stack.
    Left(G),
}

/// Walks a line's events again, in file order: kept ones from their
/// records, the others decoded, with the group of the event they nest in
/// when grouping ran (`inherit`): XProf's walk from the root reaches them
/// through it and nothing else (see [`Nesting`](mod@super::collect)).
pub(super) fn walk_line(
    ev: &Events<'_>,
    line: &Line<'_>,
    l: usize,
    inherit: bool,
    release: Release<'_>,
    stack: &mut Vec<(i128, i128, Option<i64>, bool)>,
    visit: impl FnMut(Visit),
) -> Result<(), DecodeError> {
    walk_line_grouped_by(ev, line, l, inherit, release, stack, |i| ev.group(i), visit)
}

/// [`walk_line`], a record's group being `group_of(record)`: a walk while
/// grouping runs, which cannot read the groups, takes the record itself
/// and looks its group up afterwards
/// ([`walk_derived_device`](super::step_events::walk_derived_device)).
#[allow(clippy::too_many_arguments)]
pub(super) fn walk_line_grouped_by<G: Copy>(
    ev: &Events<'_>,
    line: &Line<'_>,
    l: usize,
    inherit: bool,
    release: Release<'_>,
    stack: &mut Vec<(i128, i128, Option<G>, bool)>,
    group_of: impl Fn(usize) -> Option<G>,
    mut visit: impl FnMut(Visit<G>),
) -> Result<(), DecodeError> {
    let info = &ev.lines[l];
    let names = &ev.name_index[info.plane];
    let (mut record, mut region) = (info.first, info.regions);
    let mut started = false;
    stack.clear();
    // (The events `collect` kept are read from their records.)
    let decode = |k, wire| {
        if ev.kept(info.first_event + k) {
            return Ok(None);
        }
        let event = Event::decode(wire)?;
        Ok(Some((names.get(event.metadata_id).unwrap_or(0), event.offset_ps, event.duration_ps)))
    };
    let mut on_event = |decoded: Option<(u32, i64, i64)>| -> Result<(), DecodeError> {
        let mut seen = match decoded {
            None => {
                let i = record;
                record += 1;
                let (begin, end) = ev.span_from(i, info.base);
                Seen { record: Some(i), name: ev.nodes[i].name, begin, end, group: group_of(i), region: false, nested: !ev.has(i, flag::ASYNC) }
            }
            Some((name, offset_ps, duration_ps)) => {
                let begin = info.base + i128::from(offset_ps);
                Seen { record: None, name, begin, end: begin + i128::from(duration_ps.max(0)), group: None, region: false, nested: true }
            }
        };
        if seen.nested {
            while let Some(top) = stack.last() {
                if top.0 <= seen.begin && seen.end <= top.1 {
                    break;
                }
                if let (Some(g), true) = (top.2, top.3) {
                    visit(Visit::Left(g));
                }
                stack.pop();
            }
            if seen.record.is_none() && inherit {
                seen.group = stack.last().and_then(|top| top.2);
            }
            stack.push((seen.begin, seen.end, seen.group, seen.record.is_some()));
        }
        visit(Visit::Event(seen));
        match ev.name_codes[seen.name as usize] {
            name_code::START_REGION if seen.record.is_some_and(|i| ev.has(i, flag::CONSUMER)) => started = true,
            name_code::STOP_REGION if started => {
                let i = region;
                region += 1;
                let (begin, end) = ev.span_from(i, info.base);
                visit(Visit::Event(Seen { record: Some(i), name: REGION_NAME, begin, end, group: group_of(i), region: true, nested: false }));
            }
            _ => {}
        }
        Ok(())
    };
    if info.regions - info.first == line.event_count {
        // Every event was kept (a GPU line's kernels and copies all have
        // a `correlation_id`): the records are the line, whose bytes need
        // not be read again.
        (0..line.event_count).try_for_each(|_| on_event(None))?;
    } else {
        line.walk(release, decode, &mut on_event)?;
    }
    while let Some(top) = stack.pop() {
        if let (Some(g), true) = (top.2, top.3) {
            visit(Visit::Left(g));
        }
    }
    debug_assert_eq!(record, info.regions);
    Ok(())
}

/// The global line indices of plane `p`'s lines, with the lines.
pub(super) fn lines_of<'p, 'a>(ev: &Events<'_>, plane: &'p Plane<'a>, p: usize) -> impl Iterator<Item = (usize, &'p Line<'a>)> {
    let first = ev.lines.iter().position(|l| l.plane == p).unwrap_or(0);
    plane.lines.iter().enumerate().map(move |(k, line)| (first + k, line))
}
