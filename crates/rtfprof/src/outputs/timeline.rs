//! `--output timeline:outfile=PATH`: Chrome trace-event JSON that loads in
//! chrome://tracing and in Perfetto without import errors.
//!
//! Compared with tfprof's timeline (`tfprof_timeline.cc`), slices nest
//! properly on every thread, every process and thread is named with `M`
//! events, flows end with `"bp":"e"` inside their target slice, counters carry
//! numbers only (tfprof puts strings there, which Perfetto rejects), and
//! timestamps start at the step's first op. Events are written one by one to
//! the output file; nothing builds the whole JSON in memory.
//!
//! - Graph view: one process per device, one slice per op execution, lanes
//!   (threads) packed so slices on a lane never overlap; a flow for each
//!   tensor that crosses devices; an `Allocator Bytes in Use` counter per
//!   device that reports allocator usage.
//! - Scope and code views: the displayed tree as nested slices on one thread,
//!   each node as long as its total execution time, children back to back.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::inputs::selection::{EventSelection, Window};
use crate::show::Displayed;
use crate::stats::{NodeId, Stats, device};

/// Writes JSON trace events to a sink, one at a time.
pub struct TraceWriter<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> TraceWriter<W> {
    pub fn new(mut out: W) -> std::io::Result<Self> {
        out.write_all(b"{\"traceEvents\":[\n")?;
        Ok(TraceWriter { out, first: true })
    }

    pub fn event(&mut self, event: &Value) -> std::io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.out, event)?;
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

fn process_name(pid: usize, name: &str) -> Value {
    json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}})
}

fn process_sort_index(pid: usize) -> Value {
    json!({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
}

fn thread_name(pid: usize, tid: usize, name: &str) -> Value {
    json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})
}

/// One op execution on one device.
struct Slice {
    node: NodeId,
    start: i64,
    duration: i64,
    lane: usize,
}

/// Writes the graph-view timeline of `step` for the displayed nodes.
pub fn write_graph<W: Write>(stats: &Stats, root: &Displayed, step: i64, out: W) -> std::io::Result<W> {
    let mut nodes = Vec::new();
    let mut seen = HashSet::new();
    collect_graph_nodes(root, &mut seen, &mut nodes);

    // device → slices, in (start, node) order.
    let mut by_device: BTreeMap<&str, Vec<Slice>> = BTreeMap::new();
    for &id in &nodes {
        let Some(exec) = stats.nodes[id].execs.get(&step) else { continue };
        for (dev, times) in exec.accelerator_execs().chain(exec.cpu_execs()) {
            let slices = by_device.entry(dev).or_default();
            for &(start, duration) in times.iter() {
                slices.push(Slice { node: id, start, duration: duration.max(0), lane: 0 });
            }
        }
    }
    let origin = by_device.values().flatten().map(|s| s.start).min().unwrap_or(0);

    let mut w = TraceWriter::new(out)?;
    // Where each node ran on each canonical device (for flows).
    let mut placed: HashMap<(NodeId, &str), (usize, usize, i64, i64)> = HashMap::new();
    for (pid, (dev, slices)) in by_device.iter_mut().enumerate() {
        slices.sort_by_key(|s| (s.start, s.node));
        let lanes = pack_lanes(slices);
        let kind = if dev.contains("stream") { "Op execution threads" } else { "Op scheduling threads" };
        w.event(&process_name(pid, &format!("{kind}: {dev}")))?;
        w.event(&process_sort_index(pid))?;
        for lane in 0..lanes {
            w.event(&thread_name(pid, lane, &format!("lane {lane}")))?;
        }
        for s in slices.iter() {
            let node = &stats.nodes[s.node];
            w.event(&json!({
                "ph": "X", "cat": "Op", "name": &*node.name, "pid": pid, "tid": s.lane,
                "ts": s.start - origin, "dur": s.duration,
                "args": {"name": &*node.name, "op": node.op},
            }))?;
            if device::is_canonical(dev) {
                placed.entry((s.node, dev)).or_insert((pid, s.lane, s.start - origin, s.duration));
            }
        }
    }

    // A flow for each input produced on another canonical device.
    let mut flow_id = 0u64;
    for &id in &nodes {
        let node = &stats.nodes[id];
        let Some(&(pid, tid, ts, _)) = placed.get(&(id, node.canonical_device)) else { continue };
        let mut inputs_seen = HashSet::new();
        for input in &node.inputs {
            let Some(src) = stats.node_id(&input.name) else { continue };
            let src_dev = stats.nodes[src].canonical_device;
            if src_dev == node.canonical_device || !inputs_seen.insert(src) {
                continue;
            }
            let Some(&(src_pid, src_tid, src_ts, _)) = placed.get(&(src, src_dev)) else { continue };
            flow_id += 1;
            let name = format!("{}_flow", stats.nodes[src].name);
            w.event(&json!({"ph": "s", "cat": "DataFlow", "name": name, "id": flow_id, "pid": src_pid, "tid": src_tid, "ts": src_ts}))?;
            w.event(&json!({"ph": "f", "bp": "e", "cat": "DataFlow", "name": name, "id": flow_id, "pid": pid, "tid": tid, "ts": ts}))?;
        }
    }

    // Allocator usage over time, per canonical device that reports it.
    let mut usage: BTreeMap<&str, BTreeMap<i64, i64>> = BTreeMap::new();
    for &id in &nodes {
        let node = &stats.nodes[id];
        for mem in node.memory_at(step).iter().filter(|m| m.allocator_bytes_in_use > 0 && m.memory_micros > 0) {
            usage.entry(node.canonical_device).or_default().insert(mem.memory_micros, mem.allocator_bytes_in_use);
        }
    }
    let first_counter_pid = by_device.len();
    for (i, (dev, points)) in usage.iter().enumerate() {
        let pid = first_counter_pid + i;
        w.event(&process_name(pid, &format!("mem usage on:{dev}")))?;
        w.event(&process_sort_index(pid))?;
        for (&t, &bytes) in points {
            w.event(&json!({
                "ph": "C", "cat": "Memory", "name": "Allocated Bytes", "pid": pid, "tid": 0,
                "ts": (t - origin).max(0), "args": {"Allocator Bytes in Use": bytes},
            }))?;
        }
    }
    w.finish()
}

/// What tfprof prints after writing a graph timeline, before saying where:
/// the peak of each GPU allocator over the step, for every GPU that a
/// displayed node which ran in the step was placed on, in device order
/// (`Timeline::GenerateGraphTimeline`; CPU allocators are not tracked).
/// Points are keyed by time, a later node's value replacing an earlier one's.
pub fn peak_memory_note(stats: &Stats, root: &Displayed, step: i64) -> String {
    let mut nodes = Vec::new();
    collect_graph_nodes(root, &mut HashSet::new(), &mut nodes);
    let mut in_use: BTreeMap<&str, BTreeMap<i64, i64>> = BTreeMap::new();
    for &id in &nodes {
        let node = &stats.nodes[id];
        if node.execs.get(&step).is_none_or(|e| e.all_start_micros <= 0) {
            continue;
        }
        let points = in_use.entry(node.canonical_device).or_default();
        for mem in node.memory_at(step).iter().filter(|m| m.memory_micros > 0) {
            points.insert(mem.memory_micros, mem.allocator_bytes_in_use);
        }
    }
    in_use
        .iter()
        .filter(|(dev, _)| !device::is_placed_on_cpu(dev) && device::is_placed_on_accelerator(dev))
        .map(|(dev, points)| {
            let peak = points.values().fold(0, |peak, &bytes| peak.max(bytes));
            format!("{dev} peak memory: {:.2} MB\n", peak as f64 / 1_000_000.0)
        })
        .collect()
}

fn collect_graph_nodes(node: &Displayed, seen: &mut HashSet<NodeId>, out: &mut Vec<NodeId>) {
    for &id in &node.graph_nodes {
        if seen.insert(id) {
            out.push(id);
        }
    }
    for child in &node.children {
        collect_graph_nodes(child, seen, out);
    }
}

/// Assigns each slice (sorted by start) the first lane whose last slice has
/// ended, opening a lane when none has; returns the number of lanes.
fn pack_lanes(slices: &mut [Slice]) -> usize {
    let mut lane_ends: Vec<i64> = Vec::new();
    for s in slices.iter_mut() {
        match lane_ends.iter().position(|&end| end <= s.start) {
            Some(lane) => {
                s.lane = lane;
                lane_ends[lane] = s.start + s.duration;
            }
            None => {
                s.lane = lane_ends.len();
                lane_ends.push(s.start + s.duration);
            }
        }
    }
    lane_ends.len()
}

/// Writes a scope or code view as nested slices: each displayed node lasts
/// its total execution time, children back to back from the parent's start.
pub fn write_tree<W: Write>(root: &Displayed, view_name: &str, out: W) -> std::io::Result<W> {
    let mut w = TraceWriter::new(out)?;
    w.event(&process_name(0, &format!("{view_name} view (total execution time)")))?;
    w.event(&thread_name(0, 0, "nodes"))?;
    emit_tree(&mut w, root, 0)?;
    w.finish()
}

fn emit_tree<W: Write>(w: &mut TraceWriter<W>, node: &Displayed, start: i64) -> std::io::Result<()> {
    let t = &node.totals;
    w.event(&json!({
        "ph": "X", "cat": "Op", "name": node.name, "pid": 0, "tid": 0, "ts": start, "dur": t.exec_micros,
        "args": {"total_micros": t.exec_micros, "accelerator_micros": t.accelerator_micros, "cpu_micros": t.cpu_micros,
                 "requested_bytes": t.requested_bytes},
    }))?;
    let mut at = start;
    for child in node.children.iter().filter(|c| c.totals.exec_micros > 0) {
        // Children never outlast their parent (totals include them); clamp in
        // case account_displayed_op_only made a child's total the larger.
        let room = start + t.exec_micros - at;
        if room <= 0 {
            break;
        }
        emit_tree(w, child, at)?;
        at += child.totals.exec_micros.min(room);
    }
    Ok(())
}

/// tfprof names timeline files `<outfile>_<step>`.
///
/// A name ending in `.gz` (`trace.json.gz`) keeps its suffix after the step
/// (`trace_3.json.gz`), and the file is gzip ([`write_file`]): Perfetto
/// and chrome://tracing open it, and a large trace's timeline stays small.
pub fn file_for_step(outfile: &Path, step: i64) -> PathBuf {
    let text = outfile.to_string_lossy();
    if let Some(stem) = text.strip_suffix(".gz") {
        let (stem, ext) = stem.strip_suffix(".json").map_or((stem, ".gz"), |s| (s, ".json.gz"));
        return PathBuf::from(format!("{stem}_{step}{ext}"));
    }
    let mut name = outfile.as_os_str().to_owned();
    name.push(format!("_{step}"));
    PathBuf::from(name)
}

/// Writes a timeline file atomically ([`crate::outputs::stream_atomic`]),
/// through gzip when `path` ends in `.gz`.
pub fn write_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> crate::error::Result<()> {
    crate::outputs::stream_atomic(path, |mut out| {
        if path.to_string_lossy().ends_with(".gz") {
            let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
            write(&mut gz)?;
            gz.finish()
        } else {
            write(&mut out)?;
            Ok(out)
        }
    })
}

/// What tfprof prints after writing a timeline.
pub fn written_message(path: &Path) -> String {
    format!(
        "\n******************************************************\nTimeline file is written to {}.\nOpen a Chrome browser, enter URL chrome://tracing and load the timeline file.\n******************************************************\n",
        path.display()
    )
}

/// What a selected XPlane timeline kept and left out (`--steps`,
/// `--time_ms`, `--devices`, `--min_dur_us`), in events: slices and
/// counter points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    /// Events written.
    pub kept: u64,
    /// Events outside the steps or the span of time asked for.
    pub outside: u64,
    /// Events of the device planes that `--devices` does not list.
    pub other_devices: u64,
    /// Slices shorter than `--min_dur_us`.
    pub too_short: u64,
}

impl Kept {
    /// The events the timeline has without the selection flags.
    pub fn total(&self) -> u64 {
        self.kept + self.outside + self.other_devices + self.too_short
    }

    /// The line that says what `select` left out (`timeline: kept 232
    /// events of 747 (515 outside steps 2..3 left out)`); `None` when
    /// nothing was.
    pub fn summary(&self, select: &EventSelection) -> Option<String> {
        let mut why = Vec::new();
        if let (n @ 1.., Some(window)) = (self.outside, select.window) {
            why.push(format!("{} outside {window}", thousands(n)));
        }
        if let (n @ 1.., Some(devices)) = (self.other_devices, select.devices_text()) {
            why.push(format!("{} on devices other than {devices}", thousands(n)));
        }
        if let (n @ 1.., Some(us)) = (self.too_short, select.min_dur_us()) {
            why.push(format!("{} shorter than {us} us", thousands(n)));
        }
        (!why.is_empty()).then(|| format!("timeline: kept {} events of {} ({} left out)", thousands(self.kept), thousands(self.total()), why.join("; ")))
    }
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// XPlane input: the trace's own events, for one step (`step < 0`: all).
/// One process per plane (per job and plane for several hosts), one thread
/// per line; events that would overlap an enclosing one without nesting in
/// it go to another lane of that line. Allocator events become an
/// `Allocator Bytes in Use` counter per allocator. Times are µs with ns
/// precision from the first event of the step (of the trace, for `step <
/// 0`).
///
/// `select` keeps fewer (none given: every event of the step): the events
/// that overlap a window, `--steps`' of each trace in `step_spans` (its
/// picoseconds, in the order of `traces`) or `--time_ms`' from the first
/// event; the device planes `--devices` lists (the host's are all kept);
/// slices at least `--min_dur_us` long.
pub fn write_xplane<'a, W: Write>(
    traces: impl Iterator<Item = (&'a str, &'a std::sync::Arc<crate::inputs::xplane::TraceSource>)>,
    step: i64,
    select: &EventSelection,
    step_spans: &[(i128, i128)],
    out: W,
) -> std::io::Result<(W, Kept)> {
    use crate::inputs::xplane::planes::device_number;
    use crate::inputs::xplane::stats::{StatKind, StatKinds};
    use crate::inputs::xplane::{Event, Plane, Space, StatValue};
    // (A trace that does not decode is invalid data: prost's `From`.)
    let mut w = TraceWriter::new(out)?;
    // Decoded once; the event walks below borrow from them.
    let mut sources = Vec::new();
    for (job, trace) in traces {
        let space = Space::decode(&trace.bytes)?;
        let planes: Vec<Plane<'_>> = space.planes.iter().map(|p| Plane::decode_releasing(p, &|part| trace.release(part))).collect::<Result<_, _>>()?;
        sources.push((job, trace, trace.window(step), planes));
    }
    // The origin: the earliest event the window keeps.
    let mut origin: Option<i128> = None;
    for (_, trace, window, planes) in &sources {
        for line in planes.iter().flat_map(|p| &p.lines) {
            origin = origin.into_iter().chain(line.first_start_ps(&|part| trace.release(part), |start| window.contains(start))?).min();
        }
    }
    let origin = origin.unwrap_or_default();
    let micros = |ps: i128| ((ps / 1000) as f64) / 1000.0;
    let min_dur_ps = select.min_dur_ns.map(|ns| i128::from(ns) * 1000);
    let mut kept = Kept::default();
    let mut pid = 0;
    for (i, (job, trace, window, planes)) in sources.iter().enumerate() {
        // `--steps`' or `--time_ms`' window, in this trace's picoseconds.
        let span = match select.window {
            Some(Window::Steps(_)) => step_spans.get(i).copied(),
            Some(Window::Time(t)) => Some((origin + i128::from(t.start_ns) * 1000, origin + i128::from(t.end_ns) * 1000)),
            None => None,
        };
        // Whether an event from `start` to `end` overlaps it (one of no
        // length: starts in it).
        let in_span = |start: i128, end: i128| span.is_none_or(|(from, to)| start < to && end.max(start + 1) > from);
        for plane in planes {
            pid += 1;
            // (A device's plane `--devices` leaves out has no process.)
            let plane_kept = device_number(plane.name).is_none_or(|n| select.keeps_device(Some(n)));
            let process = if job.is_empty() { plane.name.to_owned() } else { format!("/{job}{}", plane.name) };
            if plane_kept {
                w.event(&process_name(pid, &process))?;
                w.event(&process_sort_index(pid))?;
            }
            let stat_kinds = StatKinds::of(plane);
            let mut tid = 0;
            for line in &plane.lines {
                let base = i128::from(line.timestamp_ns) * 1000;
                let mut slices: Vec<(i128, i128, Value)> = Vec::new();
                line.walk(
                    &|part| trace.release(part),
                    |_, wire| Event::decode(wire),
                    |event| -> std::io::Result<()> {
                        let start = base + i128::from(event.offset_ps);
                        if !window.contains(start) {
                            return Ok(());
                        }
                        let name = plane.event_name(event.metadata_id);
                        if name == "MemoryAllocation" || name == "MemoryDeallocation" {
                            let pool = stat_kinds.find(event.stats(), StatKind::AllocatorName).and_then(|v| v.as_str(plane)).unwrap_or("allocator");
                            if let Some(bytes) = stat_kinds.find(event.stats(), StatKind::BytesAllocated).and_then(StatValue::as_i64) {
                                if !in_span(start, start) {
                                    kept.outside += 1;
                                } else if !plane_kept {
                                    kept.other_devices += 1;
                                } else {
                                    kept.kept += 1;
                                    w.event(&json!({"ph": "C", "pid": pid, "tid": 0, "name": format!("Allocator Bytes in Use: {pool}"),
                                    "ts": micros(start - origin), "args": {"bytes": bytes}}))?;
                                }
                            }
                            return Ok(());
                        }
                        let end = start + i128::from(event.duration_ps.max(0));
                        if !in_span(start, end) {
                            kept.outside += 1;
                            return Ok(());
                        } else if !plane_kept {
                            kept.other_devices += 1;
                            return Ok(());
                        } else if min_dur_ps.is_some_and(|min| end - start < min) {
                            kept.too_short += 1;
                            return Ok(());
                        }
                        kept.kept += 1;
                        let mut args = serde_json::Map::new();
                        for stat in event.stats() {
                            let key = plane.stat_names.get(&stat.metadata_id).copied().unwrap_or("?");
                            let value = match stat.value {
                                StatValue::Int64(v) => json!(v),
                                StatValue::Uint64(v) => json!(v),
                                StatValue::Double(v) if v.is_finite() => json!(v),
                                StatValue::Str(_) | StatValue::Ref(_) => json!(stat.value.as_str(plane).unwrap_or_default()),
                                _ => continue,
                            };
                            args.insert(key.to_owned(), value);
                        }
                        slices.push((
                            start,
                            end,
                            json!({"ph": "X", "name": name, "pid": pid, "ts": micros(start - origin),
                        "dur": (((end - origin) / 1000 - (start - origin) / 1000) as f64) / 1000.0, "args": args}),
                        ));
                        Ok(())
                    },
                )?;
                if slices.is_empty() {
                    continue;
                }
                slices.sort_by_key(|s| (s.0, std::cmp::Reverse(s.1)));
                // Lanes of nested slices: each keeps the ends of its open slices.
                let mut lanes: Vec<Vec<i128>> = Vec::new();
                let first_tid = tid + 1;
                let line_name = if line.display_name.is_empty() { line.name } else { line.display_name };
                for (start, end, mut slice) in slices {
                    let lane = lanes
                        .iter_mut()
                        .position(|open| {
                            while open.last().is_some_and(|&e| e <= start) {
                                open.pop();
                            }
                            open.last().is_none_or(|&e| end <= e)
                        })
                        .unwrap_or_else(|| {
                            lanes.push(Vec::new());
                            lanes.len() - 1
                        });
                    lanes[lane].push(end);
                    if first_tid + lane > tid {
                        tid = first_tid + lane;
                        let name = if lane == 0 { line_name.to_owned() } else { format!("{line_name} ({})", lane + 1) };
                        w.event(&thread_name(pid, tid, &name))?;
                    }
                    slice["tid"] = json!(first_tid + lane);
                    w.event(&slice)?;
                }
            }
        }
    }
    for (_, trace, ..) in &sources {
        trace.walked();
    }
    Ok((w.finish()?, kept))
}
