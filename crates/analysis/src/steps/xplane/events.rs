//! The records of the first walk ([`collect`](super::collect::collect)):
//! the events grouping and the step rules read, compactly ([`Node`]), their
//! rarer stats in [`Sparse`] columns, their lines ([`LineInfo`]) and what
//! grouping sets on them ([`Marks`]), all held by [`Events`].

use std::borrow::Cow;

use rustc_hash::FxHashMap as HashMap;

use super::step_events::gpu_event_type;
use crate::inputs::xplane::ids::IdMap;

/// One event, compactly: its time relative to its line's start, its name as
/// an index into [`Events::names`], and which of the rarer stats it has
/// (those live in [`Sparse`] columns). A trace may hold tens of millions.
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    pub(super) offset: i64,
    /// The duration (clamped at 0); for a threadpool region, the offset of
    /// its end (regions may end before they begin, as in XProf).
    pub(super) dur: i64,
    /// (Its line is found from [`LineInfo::first`]: a record is 24 bytes,
    /// and its [`Marks`] 9.)
    pub(super) name: u32,
    pub(super) flags: u16,
    /// Worked out before grouping (see [`more`]).
    pub(super) more: u8,
}

/// What a [`Node`] has, worked out from the stat columns before grouping
/// consumes them.
pub(super) mod more {
    /// A host event that consumes a context a host event produces (it is
    /// below an input-pipeline stage in XProf's host step rules).
    pub const CONSUMES_HOST_PRODUCER: u8 = 1;
}

/// The top bit of a record number in [`Events::contexts`]: a consumer.
pub(super) const CONSUMER: u32 = 1 << 31;

/// What a [`Node`] has.
pub(super) mod flag {
    // (1: free.)
    pub const ASYNC: u16 = 1 << 1;
    pub const IPL_STAGE: u16 = 1 << 2;
    pub const REGION: u16 = 1 << 3;
    pub const PRODUCER: u16 = 1 << 4;
    pub const CONSUMER: u16 = 1 << 5;
    // (1 << 6: free.)
    pub const STEP_ID: u16 = 1 << 7;
    pub const ITER_NUM: u16 = 1 << 8;
    pub const STEP_NUM: u16 = 1 << 9;
    pub const GRAPH_TYPE: u16 = 1 << 10;
    pub const CORRELATION_ID: u16 = 1 << 11;
    pub const SHAPES: u16 = 1 << 12;
    pub const DEVICE_SPAN: u16 = 1 << 13;
}

/// What grouping sets, kept apart from the records it reads, so that the
/// device events can be walked while it runs (see
/// [`analyze_releasing`](super::analyze_releasing)): each record's group
/// (from the trace's `group_id`, or grouping), and the roots' levels and
/// step names.
#[derive(Debug, Default)]
pub(super) struct Marks<'a> {
    /// Per record: its group, valid with [`Marks::GROUP`] in `set`.
    groups: Vec<i64>,
    pub(super) set: Vec<u8>,
    /// Non-zero root levels (`_r`, and XProf's root mutators).
    root_level: HashMap<u32, i64>,
    step_name: HashMap<u32, Cow<'a, str>>,
    /// (group, the record it spread from), as grouping made them.
    pub(super) roots: Vec<(i64, u32)>,
}

impl<'a> Marks<'a> {
    const GROUP: u8 = 1;
    /// A non-zero root level (in `root_level`).
    const ROOT: u8 = 1 << 1;
    /// A step name (in `step_name`).
    const STEP_NAME: u8 = 1 << 2;

    pub(super) fn with_capacity(records: usize) -> Marks<'a> {
        Marks { groups: Vec::with_capacity(records), set: Vec::with_capacity(records), ..Marks::default() }
    }

    /// A record's marks, as [`collect`](super::collect::collect) reads them.
    pub(super) fn push(&mut self, group: Option<i64>) {
        self.groups.push(group.unwrap_or(0));
        self.set.push(if group.is_some() { Marks::GROUP } else { 0 });
    }

    /// The last record's marks, as [`Nesting`](mod@super::collect)
    /// drops it (such a record has no group, root level or step name).
    fn pop(&mut self) {
        self.groups.pop();
        self.set.pop();
    }

    fn has(&self, i: usize, mark: u8) -> bool {
        self.set[i] & mark != 0
    }

    pub(super) fn group(&self, i: usize) -> Option<i64> {
        self.has(i, Marks::GROUP).then(|| self.groups[i])
    }

    pub(super) fn set_group(&mut self, i: usize, group: i64) {
        self.groups[i] = group;
        self.set[i] |= Marks::GROUP;
    }

    pub(super) fn root_level(&self, i: usize) -> i64 {
        if !self.has(i, Marks::ROOT) {
            return 0;
        }
        self.root_level.get(&(i as u32)).copied().unwrap_or(0)
    }

    pub(super) fn set_root_level(&mut self, i: usize, level: i64) {
        self.root_level.insert(i as u32, level);
        self.set[i] |= Marks::ROOT;
    }

    fn step_name(&self, i: usize) -> Option<&str> {
        if !self.has(i, Marks::STEP_NAME) {
            return None;
        }
        self.step_name.get(&(i as u32)).map(|s| s.as_ref())
    }

    pub(super) fn set_step_name(&mut self, i: usize, name: Cow<'a, str>) {
        self.step_name.insert(i as u32, name);
        self.set[i] |= Marks::STEP_NAME;
    }
}

/// A stat few events have, by event index (pushed in index order).
/// Held in chunks of [`Sparse::CHUNK`] entries: a column of tens of
/// millions grows without copying (a grown vector's old copy would stay
/// resident, as freed memory is kept: see `keep_freed_memory`).
#[derive(Debug)]
pub(super) struct Sparse<T> {
    index: Vec<Vec<u32>>,
    values: Vec<Vec<T>>,
}

impl<T: Copy> Sparse<T> {
    const CHUNK: usize = 1 << 16;

    pub(super) fn new() -> Sparse<T> {
        Sparse { index: Vec::new(), values: Vec::new() }
    }

    pub(super) fn push(&mut self, event: usize, value: T) {
        match self.index.last() {
            // (The first chunk grows as a vector does: most columns are short.)
            None => {
                self.index.push(Vec::new());
                self.values.push(Vec::new());
            }
            Some(last) if last.len() == Self::CHUNK => {
                self.index.push(Vec::with_capacity(Self::CHUNK));
                self.values.push(Vec::with_capacity(Self::CHUNK));
            }
            Some(_) => {}
        }
        self.index.last_mut().expect("a chunk").push(event as u32);
        self.values.last_mut().expect("a chunk").push(value);
    }

    fn get(&self, event: usize) -> Option<T> {
        let event = event as u32;
        let chunk = self.index.partition_point(|c| c[0] <= event).checked_sub(1)?;
        self.index[chunk].binary_search(&event).ok().map(|k| self.values[chunk][k])
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, T)> + '_ {
        self.index.iter().zip(&self.values).flat_map(|(index, values)| index.iter().zip(values)).map(|(&i, &v)| (i as usize, v))
    }

    /// The events with a value in both columns, in event order (one walk
    /// over both, no lookups).
    pub(super) fn join<'s, U: Copy>(&'s self, other: &'s Sparse<U>) -> impl Iterator<Item = (usize, T, U)> + 's {
        let mut others = other.iter().peekable();
        self.iter().filter_map(move |(i, v)| {
            while others.next_if(|&(j, _)| j < i).is_some() {}
            others.peek().filter(|&&(j, _)| j == i).map(|&(_, u)| (i, v, u))
        })
    }
}

/// One line of the trace.
#[derive(Debug)]
pub(super) struct LineInfo {
    pub(super) plane: usize,
    pub(super) id: i64,
    /// The line's start in picoseconds.
    pub(super) base: i128,
    /// Its first record in [`Events::nodes`] (a line's records are contiguous).
    pub(super) first: usize,
    /// The number of its first event among the file's events.
    pub(super) first_event: usize,
    /// Its first threadpool region's record (regions follow its events).
    pub(super) regions: usize,
}

/// The events [`collect`](super::collect::collect) keeps (see
/// [`Nesting`](mod@super::collect)), in plane/line/event order, with
/// the stats grouping and the step rules read.
pub(super) struct Events<'a> {
    pub(super) nodes: Vec<Node>,
    pub(super) lines: Vec<LineInfo>,
    pub(super) names: Vec<&'a str>,
    pub(super) name_codes: Vec<u8>,
    /// Per plane: event metadata id → index in `names`.
    pub(super) name_index: Vec<IdMap<u32>>,
    /// One bit per event of the file, in plane/line/event order: kept as
    /// a record (see [`Nesting`](mod@super::collect)).
    pub(super) keep: Vec<u64>,
    /// The nesting links (parent, child) between records, found in
    /// [`collect`](super::collect::collect) (async events are left out).
    pub(super) nest: Vec<(u32, u32)>,
    /// Per plane: is it the host's
    /// ([`PlaneKind::Host`](crate::inputs::xplane::planes::PlaneKind::Host)).
    pub(super) host: Vec<bool>,
    /// The context stats (`_pt`/`_p`, `_ct`/`_c`), by record: (context type
    /// and pid as a number in `context_classes`, record with
    /// [`CONSUMER`] set for a consumer, id). 16 bytes: there may be tens
    /// of millions; grouping sorts them in place.
    pub(super) contexts: Vec<(u32, u32, i64)>,
    /// (context type, pid) of each number in `contexts`.
    pub(super) context_classes: Vec<(i64, Option<i64>)>,
    pub(super) class_numbers: HashMap<(i64, Option<i64>), u32>,
    pub(super) step_id: Sparse<i64>,
    pub(super) iter_num: Sparse<i64>,
    pub(super) step_num: Sparse<i64>,
    pub(super) graph_type: Sparse<&'a str>,
    pub(super) correlation_id: Sparse<i64>,
    pub(super) shapes: Sparse<&'a str>,
    /// `device_offset_ps`, `device_duration_ps`.
    pub(super) device_span: Sparse<(i64, i64)>,
    pub(super) marks: Marks<'a>,
}

impl<'a> Events<'a> {
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    pub(super) fn add_context(&mut self, i: usize, class: (i64, Option<i64>), id: i64, consumer: bool) {
        let next = self.context_classes.len() as u32;
        let number = *self.class_numbers.entry(class).or_insert(next);
        if number == next {
            self.context_classes.push(class);
        }
        // (Records are numbered below 2^31: a trace has fewer events.)
        self.contexts.push((number, i as u32 | if consumer { CONSUMER } else { 0 }, id));
    }

    pub(super) fn kept(&self, ordinal: usize) -> bool {
        self.keep[ordinal / 64] & (1 << (ordinal % 64)) != 0
    }

    pub(super) fn unkeep(&mut self, ordinal: usize) {
        self.keep[ordinal / 64] &= !(1 << (ordinal % 64));
    }

    pub(super) fn name(&self, i: usize) -> &'a str {
        self.names[self.nodes[i].name as usize]
    }

    fn line(&self, i: usize) -> &LineInfo {
        &self.lines[self.lines.partition_point(|l| l.first <= i) - 1]
    }

    /// The event's span, given its line's start (see [`LineInfo::base`]).
    pub(super) fn span_from(&self, i: usize, base: i128) -> (i128, i128) {
        let n = &self.nodes[i];
        let begin = base + i128::from(n.offset);
        (begin, if n.flags & flag::REGION != 0 { base + i128::from(n.dur) } else { begin + i128::from(n.dur) })
    }

    pub(super) fn begin(&self, i: usize) -> i128 {
        self.line(i).base + i128::from(self.nodes[i].offset)
    }

    pub(super) fn end(&self, i: usize) -> i128 {
        let n = &self.nodes[i];
        if n.flags & flag::REGION != 0 { self.line(i).base + i128::from(n.dur) } else { self.begin(i) + i128::from(n.dur) }
    }

    pub(super) fn has(&self, i: usize, f: u16) -> bool {
        self.nodes[i].flags & f != 0
    }

    pub(super) fn get<T: Copy>(&self, i: usize, f: u16, column: &Sparse<T>) -> Option<T> {
        if self.has(i, f) { column.get(i) } else { None }
    }

    pub(super) fn group(&self, i: usize) -> Option<i64> {
        self.marks.group(i)
    }

    /// The group of a record, if `record` names one.
    pub(super) fn group_of(&self, record: Option<u32>) -> Option<i64> {
        record.and_then(|i| self.group(i as usize))
    }

    pub(super) fn step_id(&self, i: usize) -> Option<i64> {
        self.get(i, flag::STEP_ID, &self.step_id)
    }

    pub(super) fn iter_num(&self, i: usize) -> Option<i64> {
        self.get(i, flag::ITER_NUM, &self.iter_num)
    }

    pub(super) fn step_num(&self, i: usize) -> Option<i64> {
        self.get(i, flag::STEP_NUM, &self.step_num)
    }

    pub(super) fn graph_type(&self, i: usize) -> Option<&'a str> {
        self.get(i, flag::GRAPH_TYPE, &self.graph_type)
    }

    /// Whether the event has a `correlation_id` (a kernel or its launch),
    /// without looking the id up.
    pub(super) fn has_correlation_id(&self, i: usize) -> bool {
        self.has(i, flag::CORRELATION_ID)
    }

    /// XProf's type of a device event ([`gpu_event_type`]), `types` being
    /// its names' types without shapes (most events have none).
    pub(super) fn gpu_event_type(&self, i: usize, types: &[u8]) -> u8 {
        match self.get(i, flag::SHAPES, &self.shapes) {
            Some(shapes) => gpu_event_type(self.name(i), shapes),
            None => types[self.nodes[i].name as usize],
        }
    }

    /// [`Events::gpu_event_type`]'s `types`: per name, its type without shapes.
    pub(super) fn gpu_event_types(&self) -> Vec<u8> {
        self.names.iter().map(|n| gpu_event_type(n, "")).collect()
    }

    pub(super) fn step_name(&self, i: usize) -> Option<&str> {
        self.marks.step_name(i)
    }

    /// Drops the last record (see [`Nesting`](mod@super::collect)).
    pub(super) fn pop_record(&mut self) {
        self.nodes.pop();
        self.marks.pop();
    }

    pub(super) fn is_host(&self, i: usize) -> bool {
        self.host[self.line(i).plane]
    }

    pub(super) fn line_range(&self, l: usize) -> std::ops::Range<usize> {
        let end = self.lines.get(l + 1).map_or(self.nodes.len(), |next| next.first);
        self.lines[l].first..end
    }
}

/// The name index of `ThreadpoolListener::Region` in [`Events::names`].
pub(super) const REGION_NAME: u32 = 1;

pub(super) fn add_child(edges: &mut Vec<(u32, u32)>, parent: usize, child: usize) {
    edges.push((parent as u32, child as u32));
}
