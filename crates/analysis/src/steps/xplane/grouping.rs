//! Stage 1, groups: XProf's `GroupTfEvents` on a trace with no groups yet
//! ([`group`]): the records linked into a forest ([`Graph`]) and each
//! root's group spread through it; before it, the passes over the sorted
//! context stats ([`sort_contexts`], [`mark_host_consumers`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};

use rayon::slice::ParallelSliceMut;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::collect::name_code;
use super::events::{CONSUMER, Events, Marks, add_child, more};

/// Root events XProf names without the event's name and gives no step name.
const IMPLICIT_ROOTS: [&str; 4] = ["FunctionRun", "SessionRun", "RunGraph", "ExecutorState::Process"];
const TF_DATA_FUNCTIONS: [&str; 4] = [
    "InstantiatedCapturedFunction::Run",
    "InstantiatedCapturedFunction::RunWithBorrowedArgs",
    "InstantiatedCapturedFunction::RunInstantiated",
    "InstantiatedCapturedFunction::RunAsync",
];

/// The forest's links, by event index (kept apart from the events: most
/// events have none, and a trace may hold millions).
///
/// The producers and consumers of one context are linked through a hub
/// (a node numbered from `events` on) when that takes fewer links than
/// linking every pair: a trace repeated 25 times has 25 × 25 pairs per
/// context, 72 M links on the 270 MB bench trace, which were most of
/// `steps`' time and memory there.
struct Graph {
    /// The number of events; hubs come after them.
    events: usize,
    child_start: Vec<u32>,
    children: Vec<u32>,
    parent_start: Vec<u32>,
    parents: Vec<u32>,
}

impl Graph {
    /// The edges (parent, child) in both directions, each event's list in
    /// index order (as sorting the edges would give them, duplicates kept).
    /// Counting sorts: bucketed by child, then each direction filled in
    /// index order of the other, linear in the number of edges.
    fn new(events: usize, hubs: usize, edges: Vec<(u32, u32)>) -> Graph {
        let count = events + hubs;
        let starts = |ends: &mut dyn Iterator<Item = u32>| {
            let mut start = vec![0u32; count + 1];
            for end in ends {
                start[end as usize + 1] += 1;
            }
            for i in 1..start.len() {
                start[i] += start[i - 1];
            }
            start
        };
        let parent_start = starts(&mut edges.iter().map(|e| e.1));
        let mut parents = vec![0u32; edges.len()];
        let mut next = parent_start.clone();
        for &(from, to) in &edges {
            parents[next[to as usize] as usize] = from;
            next[to as usize] += 1;
        }
        drop(edges);
        let child_start = starts(&mut parents.iter().copied());
        let mut children = vec![0u32; parents.len()];
        next.copy_from_slice(&child_start);
        for child in 0..count {
            for &parent in &parents[parent_start[child] as usize..parent_start[child + 1] as usize] {
                children[next[parent as usize] as usize] = child as u32;
                next[parent as usize] += 1;
            }
        }
        next.copy_from_slice(&parent_start);
        for parent in 0..count {
            for &child in &children[child_start[parent] as usize..child_start[parent + 1] as usize] {
                parents[next[child as usize] as usize] = parent as u32;
                next[child as usize] += 1;
            }
        }
        Graph { events, child_start, children, parent_start, parents }
    }

    fn is_hub(&self, n: usize) -> bool {
        n >= self.events
    }

    fn children(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        self.children[self.child_start[n] as usize..self.child_start[n + 1] as usize].iter().map(|&c| c as usize)
    }

    fn parents(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        self.parents[self.parent_start[n] as usize..self.parent_start[n + 1] as usize].iter().map(|&p| p as usize)
    }

    /// An event's parents as if every pair of a context were linked: in
    /// index order, a hub's producers in its place.
    fn event_parents(&self, n: usize, into: &mut Vec<usize>) {
        into.clear();
        for p in self.parents(n) {
            if self.is_hub(p) {
                into.extend(self.parents(p));
            } else {
                into.push(p);
            }
        }
        into.sort_unstable();
    }
}

/// Sorts the contexts by (type, id), then (type and pid, id) within, then
/// record (producers first): runs of one (type, id) for
/// [`mark_host_consumers`], of one (type, pid, id) for [`group`].
pub(super) fn sort_contexts(ev: &mut Events<'_>) {
    let types: Vec<i64> = ev.context_classes.iter().map(|c| c.0).collect();
    // (On all cores: 1.7 → 1.15 s for the 23 M contexts of the 1 GB bench trace.)
    ev.contexts.par_sort_unstable_by_key(|&(class, record, id)| (types[class as usize], id, class, record));
}

/// Marks the host events that consume a context (type, id) a host event
/// produces ([`more::CONSUMES_HOST_PRODUCER`]). The contexts are sorted
/// ([`sort_contexts`]): a pass over them instead of a set of all
/// producers (tens of millions on the 1 GB bench trace, 2.5 s of lookups
/// that missed the caches).
pub(super) fn mark_host_consumers(ev: &mut Events<'_>, h: usize) {
    let records = (0..ev.lines.len()).filter(|&l| ev.lines[l].plane == h).map(|l| ev.line_range(l)).reduce(|a, b| a.start..b.end).unwrap_or(0..0);
    let on_host = |c: &(u32, u32, i64)| records.contains(&((c.1 & !CONSUMER) as usize));
    let Events { nodes, contexts, context_classes, .. } = ev;
    for run in contexts.chunk_by(|a, b| (context_classes[a.0 as usize].0, a.2) == (context_classes[b.0 as usize].0, b.2)) {
        if run.iter().any(|c| c.1 & CONSUMER == 0 && on_host(c)) {
            for c in run.iter().filter(|c| c.1 & CONSUMER != 0 && on_host(c)) {
                nodes[(c.1 & !CONSUMER) as usize].more |= more::CONSUMES_HOST_PRODUCER;
            }
        }
    }
}

/// XProf's `GroupTfEvents` on a trace with no groups yet: sets `group` (and
/// the roots' `step_name`).
pub(super) fn group<'a>(ev: &Events<'a>, marks: &mut Marks<'a>, links: Links) {
    group_linking(ev, marks, links, |producers, consumers| producers * consumers > producers + consumers)
}

/// What grouping links, taken from [`Events`] (grouping consumes them):
/// its sorted contexts ([`sort_contexts`]) and the nesting links.
pub(super) struct Links {
    contexts: Vec<(u32, u32, i64)>,
    nest: Vec<(u32, u32)>,
}

impl Links {
    pub(super) fn take(ev: &mut Events<'_>) -> Links {
        Links { contexts: std::mem::take(&mut ev.contexts), nest: std::mem::take(&mut ev.nest) }
    }
}

/// [`group`], linking a context's `producers` and `consumers` through a
/// hub where `through_hub(producers, consumers)` (see [`Graph`]), each
/// pair otherwise.
fn group_linking<'a>(ev: &Events<'a>, marks: &mut Marks<'a>, links: Links, through_hub: impl Fn(usize, usize) -> bool) {
    // Context groups: producers and consumers of each (type, id, pid);
    // large groups on both sides are not linked.
    let Links { contexts, nest } = links;
    let context_groups = || {
        contexts
            .chunk_by(|a, b| (a.0, a.2) == (b.0, b.2))
            .map(|run| run.split_at(run.partition_point(|c| c.1 & CONSUMER == 0)))
            .filter(|(p, c)| p.len() < 64 || c.len() < 64)
    };
    let links_needed: usize = context_groups().map(|(p, c)| if through_hub(p.len(), c.len()) { p.len() + c.len() } else { p.len() * c.len() }).sum();
    // Executor → IteratorGetNext by (id, iter_num); kernel launch → kernel.
    // (Read from the stat columns, in event order as a walk over all
    // events would: the last of equal keys wins. A TF2 trace has an
    // executor event per op, millions in a large one, and few
    // IteratorGetNext events: only the executors asked for are looked up.)
    let kinds: Vec<GroupingName> = ev.names.iter().map(|&n| GroupingName::of(n)).collect();
    let kind = |i: usize| kinds[ev.nodes[i].name as usize];
    let ids_and_iterations = || ev.step_id.join(&ev.iter_num);
    let mut executors: HashMap<(i64, i64), Option<usize>> =
        ids_and_iterations().filter(|&(i, ..)| kind(i) == GroupingName::IteratorGetNext).map(|(_, s, it)| ((s, it), None)).collect();
    if !executors.is_empty() {
        for (i, s, it) in ids_and_iterations().filter(|&(i, ..)| kind(i) == GroupingName::Executor) {
            if let Some(executor) = executors.get_mut(&(s, it)) {
                *executor = Some(i);
            }
        }
    }
    let known: Vec<bool> = ev.names.iter().map(|&n| known_type(n).is_some()).collect();
    let known = |i: usize| known[ev.nodes[i].name as usize];
    let mut launches: HashMap<i64, usize> = HashMap::default();
    for (i, c) in ev.correlation_id.iter() {
        if ev.is_host(i) && !known(i) {
            launches.insert(c, i);
        }
    }
    let mut links: Vec<(u32, u32)> = Vec::new();
    for (i, s, it) in ids_and_iterations().filter(|&(i, ..)| kind(i) == GroupingName::IteratorGetNext) {
        if let Some(&Some(p)) = executors.get(&(s, it)) {
            add_child(&mut links, p, i);
        }
    }
    for (i, c) in ev.correlation_id.iter() {
        if !ev.is_host(i)
            && !known(i)
            && let Some(&p) = launches.get(&c)
        {
            add_child(&mut links, p, i);
        }
    }
    drop((executors, launches));
    // The nesting links (`collect` found them), then the others.
    let mut edges = nest;
    edges.reserve(links_needed + links.len());
    let mut hubs = 0;
    for (producers, consumers) in context_groups() {
        if through_hub(producers.len(), consumers.len()) {
            let hub = (ev.len() + hubs) as u32;
            hubs += 1;
            edges.extend(producers.iter().map(|p| (p.1, hub)));
            edges.extend(consumers.iter().map(|c| (hub, c.1 & !CONSUMER)));
        } else {
            for p in producers {
                edges.extend(consumers.iter().map(|c| (p.1, c.1 & !CONSUMER)));
            }
        }
    }
    drop(contexts);
    edges.append(&mut links);
    drop(links);

    // tf.data's own steps, and TF loops: the other steps whose executor
    // events have an iteration other than 0. (Found before their events
    // are listed: most steps are no loop.)
    let tf_data: HashSet<i64> = ev.step_id.iter().filter(|&(i, _)| kind(i) == GroupingName::TfData).map(|(_, s)| s).collect();
    let loop_iterations = || ids_and_iterations().filter(|&(i, s, _)| kind(i) == GroupingName::Executor && !tf_data.contains(&s));
    // Per step: an iteration, and whether there are others.
    let mut iterations_of: HashMap<i64, (i64, bool)> = HashMap::default();
    for (_, step, iter) in loop_iterations() {
        iterations_of.entry(step).and_modify(|(first, more)| *more |= *first != iter).or_insert((iter, false));
    }
    let loop_steps: HashSet<i64> = iterations_of.into_iter().filter(|&(_, (iter, more))| more || iter != 0).map(|(step, _)| step).collect();
    let mut loops: HashMap<i64, BTreeMap<i64, Vec<usize>>> = HashMap::default();
    if !loop_steps.is_empty() {
        for (i, step, iter) in loop_iterations().filter(|(_, step, _)| loop_steps.contains(step)) {
            loops.entry(step).or_default().entry(iter).or_default().push(i);
        }
    }
    let mut iterations: Vec<(usize, Vec<usize>)> = Vec::new();
    for tf_loop in loops.into_values() {
        for events in tf_loop.into_values() {
            let first = events.iter().copied().fold(events[0], |a, b| if ev.begin(b) < ev.begin(a) { b } else { a });
            iterations.push((first, events));
        }
    }
    let mut next_group = 0;
    if !iterations.is_empty() {
        edges.reserve_exact(iterations.iter().map(|(_, events)| events.len()).sum());
        iterations.sort_by_key(|(first, _)| (ev.begin(*first), *first));
        for (first, events) in &iterations {
            for &e in events {
                if e != *first {
                    add_child(&mut edges, *first, e);
                }
            }
        }
        let graph = Graph::new(ev.len(), hubs, edges);
        let mut hubs_walked = vec![false; hubs];
        for (first, _) in iterations {
            process_root(ev, marks, &graph, &mut hubs_walked, next_group, first);
            next_group += 1;
        }
        return;
    }
    let mut roots: Vec<usize> = (0..ev.len())
        .filter(|&i| marks.root_level(i) > 0 || ev.name_codes[ev.nodes[i].name as usize] == name_code::TRACE_CONTEXT)
        .filter(|&i| ev.step_id(i).is_none_or(|s| !tf_data.contains(&s)))
        .collect();
    for &r in &roots {
        if marks.root_level(r) <= 0 {
            marks.set_root_level(r, 1);
        }
    }
    roots.sort_by_key(|&r| (std::cmp::Reverse(marks.root_level(r)), ev.begin(r), r));
    let graph = Graph::new(ev.len(), hubs, edges);
    let mut hubs_walked = vec![false; hubs];
    for root in roots {
        if root_needs_grouping(marks, &graph, root) {
            process_root(ev, marks, &graph, &mut hubs_walked, next_group, root);
            next_group += 1;
        }
    }
}

/// What grouping makes of an event's name.
#[derive(Clone, Copy, PartialEq)]
enum GroupingName {
    Executor,
    IteratorGetNext,
    TfData,
    Other,
}

impl GroupingName {
    fn of(name: &str) -> GroupingName {
        match name {
            "ExecutorState::Process" => GroupingName::Executor,
            "IteratorGetNextOp::DoCompute" | "IteratorGetNextAsOptionalOp::DoCompute" => GroupingName::IteratorGetNext,
            _ if TF_DATA_FUNCTIONS.contains(&name) => GroupingName::TfData,
            _ => GroupingName::Other,
        }
    }
}

/// The event types XProf knows by name (those are never kernel launches).
fn known_type(name: &str) -> Option<()> {
    const KNOWN: [&str; 11] = [
        "TraceContext",
        "SessionRun",
        "FunctionRun",
        "RunGraph",
        "EagerExecute",
        "ExecutorState::Process",
        "MemoryAllocation",
        "MemoryDeallocation",
        "KernelLaunch",
        "KernelExecute",
        "IteratorGetNextOp::DoCompute",
    ];
    KNOWN.contains(&name).then_some(())
}

/// Not grouped yet, and no ancestor is a root of the same level.
fn root_needs_grouping(marks: &Marks<'_>, graph: &Graph, root: usize) -> bool {
    if marks.group(root).is_some() {
        return false;
    }
    let level = marks.root_level(root);
    let mut seen: HashSet<usize> = HashSet::from_iter([root]);
    let mut queue: VecDeque<usize> = VecDeque::new();
    for p in graph.parents(root) {
        if seen.insert(p) {
            queue.push_back(p);
        }
    }
    while let Some(n) = queue.pop_front() {
        let l = if graph.is_hub(n) { 0 } else { marks.root_level(n) };
        if l > 0 && l == level {
            return false;
        }
        for p in graph.parents(n) {
            if seen.insert(p) {
                queue.push_back(p);
            }
        }
    }
    true
}

/// The first value a stat has on the event or, breadth first, its ancestors.
fn context_stat<'a, T>(ev: &Events<'a>, graph: &Graph, start: usize, get: impl Fn(&Events<'a>, usize) -> Option<T>) -> Option<T> {
    let mut seen: HashSet<usize> = HashSet::from_iter([start]);
    let mut queue = VecDeque::from([start]);
    let mut parents = Vec::new();
    while let Some(n) = queue.pop_front() {
        if let Some(v) = get(ev, n) {
            return Some(v);
        }
        graph.event_parents(n, &mut parents);
        for &p in &parents {
            if seen.insert(p) {
                queue.push_back(p);
            }
        }
    }
    None
}

/// `hubs_walked`: per hub, its consumers were reached by an earlier walk
/// (all of them are grouped then: no later walk needs to go through it).
fn process_root<'a>(ev: &Events<'a>, marks: &mut Marks<'a>, graph: &Graph, hubs_walked: &mut [bool], group: i64, root: usize) {
    marks.roots.push((group, root as u32));
    // The events reachable from the root through events not grouped yet
    // (grouped as they are found: the same events as XProf's walk, with no
    // set of those seen).
    if marks.group(root).is_none() {
        marks.set_group(root, group);
        let mut queue = VecDeque::from([root]);
        while let Some(n) = queue.pop_front() {
            for c in graph.children(n) {
                if graph.is_hub(c) {
                    if !hubs_walked[c - graph.events] {
                        hubs_walked[c - graph.events] = true;
                        queue.push_back(c);
                    }
                } else if marks.group(c).is_none() {
                    marks.set_group(c, group);
                    queue.push_back(c);
                }
            }
        }
    }
    // The group's name: `graph_type` or the root's name, then the step number.
    let root_name = ev.name(root);
    let implicit = IMPLICIT_ROOTS.contains(&root_name);
    let mut name = String::new();
    if let Some(g) = context_stat(ev, graph, root, |ev, n| ev.graph_type(n)) {
        name.push_str(g);
        name.push(' ');
    } else if !implicit {
        name.push_str(root_name);
        name.push(' ');
    }
    let number = context_stat(ev, graph, root, |ev, n| ev.iter_num(n)).or_else(|| context_stat(ev, graph, root, |ev, n| ev.step_num(n))).unwrap_or(group);
    name.push_str(&number.to_string());
    if !implicit {
        marks.set_step_name(root, Cow::Owned(name));
    }
}

#[cfg(test)]
mod tests {
    use super::super::collect::collect;
    use super::super::tests::TF_LOOP;
    use super::*;
    use crate::inputs::xplane::stats::StatKinds;
    use crate::inputs::xplane::{Plane, Space};

    /// The fixture's events repeated `times` times on each line, each copy
    /// after the last (as the bench traces are made): the contexts repeat,
    /// so each has `times` producers and consumers.
    fn repeated(bytes: &[u8], times: i64) -> Vec<u8> {
        use crate::proto::tensorflow::profiler as xp;
        use prost::Message;
        let mut space = xp::XSpace::decode(bytes).unwrap();
        for line in space.planes.iter_mut().flat_map(|p| &mut p.lines) {
            let offset = |e: &xp::XEvent| match e.data {
                Some(xp::x_event::Data::OffsetPs(o)) => o,
                _ => 0,
            };
            let span = line.events.iter().map(|e| offset(e) + e.duration_ps).max().unwrap_or(0) + 1;
            let copies: Vec<xp::XEvent> = (1..times)
                .flat_map(|k| line.events.iter().map(move |e| xp::XEvent { data: Some(xp::x_event::Data::OffsetPs(offset(e) + k * span)), ..e.clone() }))
                .collect();
            line.events.extend(copies);
        }
        space.encode_to_vec()
    }

    /// An event's group and step name.
    type Grouped = (Option<i64>, Option<String>);

    /// Each record's group and step name, grouped with `through_hub`; and
    /// how many contexts went through a hub.
    fn grouped(bytes: &[u8], through_hub: fn(usize, usize) -> bool) -> (Vec<Grouped>, usize) {
        let space = Space::decode(bytes).unwrap();
        let planes: Vec<Plane<'_>> = space.planes.iter().map(|p| Plane::decode(p).unwrap()).collect();
        let stats: Vec<StatKinds> = planes.iter().map(StatKinds::of).collect();
        let mut ev = collect(&planes, &stats, &|_| {}).unwrap();
        sort_contexts(&mut ev);
        let hubs = std::cell::Cell::new(0);
        let (links, mut marks) = (Links::take(&mut ev), std::mem::take(&mut ev.marks));
        group_linking(&ev, &mut marks, links, |p, c| {
            let hub = through_hub(p, c);
            hubs.set(hubs.get() + usize::from(hub));
            hub
        });
        ev.marks = marks;
        ((0..ev.len()).map(|i| (ev.group(i), ev.step_name(i).map(str::to_owned))).collect(), hubs.get())
    }

    /// Through a hub, an event's parents are listed as linking each pair
    /// lists them: in index order, duplicates kept (the order decides
    /// which ancestor's stat names a step).
    #[test]
    fn a_hubs_producers_are_parents_in_index_order() {
        // Events 0..6; hub 6 links producers 5 and 1 to consumer 3, which
        // also nests in 4 and is consumed from 1 directly.
        let graph = Graph::new(6, 1, vec![(4, 3), (5, 6), (1, 6), (6, 3), (1, 3)]);
        let mut parents = Vec::new();
        graph.event_parents(3, &mut parents);
        assert_eq!(parents, [1, 1, 4, 5]);
        let pairs = Graph::new(6, 0, vec![(4, 3), (5, 3), (1, 3), (1, 3)]);
        assert_eq!(pairs.parents(3).collect::<Vec<_>>(), parents);
    }

    /// Linking a context's producers and consumers through a hub groups
    /// and names every event as linking each pair does, on fixtures whose
    /// steps come from roots and from TF loops, repeated so that their
    /// contexts have several producers and consumers.
    #[test]
    fn hubs_group_as_every_pair_linked() {
        let fixtures: [&[u8]; 3] = [
            TF_LOOP,
            include_bytes!("../../../../../testdata/xplane/keras_fit/plugins/profile/run0/host0.xplane.pb"),
            include_bytes!("../../../../../testdata/xplane/tf_data_loop/plugins/profile/run0/host0.xplane.pb"),
        ];
        for (k, fixture) in fixtures.iter().enumerate() {
            let trace = repeated(fixture, 5);
            let (by_hubs, hubs) = grouped(&trace, |p, c| p * c > p + c);
            let (by_pairs, none) = grouped(&trace, |_, _| false);
            assert!(hubs > 0 && none == 0, "fixture {k}: {hubs} hubs");
            assert!(by_pairs.iter().any(|(g, _)| g.is_some()), "fixture {k} has groups");
            assert_eq!(by_hubs, by_pairs, "fixture {k}");
        }
    }
}
