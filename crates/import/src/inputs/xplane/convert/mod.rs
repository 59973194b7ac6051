//! XPlane events → per-step execution totals of tfprof nodes.
//!
//! The rules (docs/book/src/guide/xplane.md) follow XProf's conversion where
//! XProf has one, so that occurrences and times agree with its
//! `framework_op_stats`:
//! - A node is an op: `<op name>:<op type>` events on `/host:CPU`
//!   (`ParseTfOpFullname`, see [`super::names`]), tf.data `Iterator::…`
//!   events, eager ops (`EagerLocalExecute: <type>`, named `(eager)/<type>`;
//!   XProf leaves them out), XLA ops (JAX CPU events with `hlo_op`, TPU
//!   `XLA Ops` events, named by their framework op), GPU kernels and memcpys
//!   (by their `tf_op`, `level 0` or `annotation` stat). The runtime's
//!   TraceMes that XProf's rule reads as ops (`ThenExecuteCallback:<caller>`)
//!   go under `(runtime)/` ([`super::names::runtime_node`]).
//! - Host time is self time: an op event's duration minus the op events
//!   nested in it on the same line.
//! - An execution belongs to the step whose marker (an event with a
//!   `step_num` stat) contains its start; those outside every marker form one
//!   more step after the last.
//! - Times are summed in picoseconds per (node, step, device) and rounded
//!   once, to the nearest microsecond.
//! - Allocator events (`MemoryAllocation`/`MemoryDeallocation` on the host)
//!   give the nodes' bytes columns and, when asked for, become
//!   [`AllocationEvent`]s for `rtfprof memory`, read as XProf's
//!   `memory_profile` reads them.
//!
//! The driver, [`convert_releasing`], reads a trace on all cores:
//! 1. It frames the planes (their lines cut into pieces of events) while
//!    the XLA programs are read; the plane holding most of the trace is
//!    framed while the others' events are read, or, a large trace's GPU
//!    plane, cut where its events seem to start (`Long`).
//! 2. It interns the ops that metadata names (`ops`), then reads the
//!    pieces (`plane_context`) into executions (`executions`), step
//!    markers, allocator events and kernel launches.
//! 3. It names the ops of command buffers' child-graph nodes, now that
//!    every node is seen (`device_tables`), puts the pieces back into
//!    lines, their ops numbered as the whole trace's, and makes host times
//!    self times (`self_time`).
//! 4. It makes the steps (`steps`), the device tables (`device_tables`),
//!    the totals, handed to the sink a few steps at a time (`totals`), and
//!    the nodes' bytes and allocator events (`memory`).

mod device_tables;
mod executions;
mod memory;
mod ops;
mod plane_context;
mod self_time;
mod steps;
mod totals;

use std::collections::{BTreeMap, HashSet};

use prost::DecodeError;
use rayon::prelude::*;

use super::decode::{Line, PIECE_EVENTS, Plane, Release, Space};
use super::hlo::Programs;
use super::planes::{PlaneKind, is_derived_line};
use crate::stats::MemoryTotal;
use crate::stats::allocations::AllocationEvent;
use crate::stats::records::device::kernel::Launches;
use device_tables::{child_graph_ops, hlo_ops, kernel_rows, node_frames};
use executions::{Executions, LineRead};
use memory::{MemoryEvent, MemoryNames, attribute_allocator_events, memory_totals};
use ops::{CHILD_OP, LINE_OP, OpTable, ProgramOps};
use plane_context::{Launched, LineResult, PlaneContext, eager_names};
use self_time::subtract_nested;
pub use steps::StepSpan;
use steps::{StepLookup, step_spans};
use totals::totals;
pub use totals::{Total, TotalNames, TotalsSink};

const PS_PER_US: i128 = 1_000_000;

/// Everything a trace says about its ops but their totals, which
/// [`convert_releasing`] hands to a sink as it makes them.
#[derive(Debug, Default)]
pub struct Converted {
    /// Nodes by [`Total::node`]: name and op type.
    pub nodes: Vec<(String, String)>,
    /// Totals made (one per node, step and plane).
    pub total_count: u64,
    /// Step markers, by step number: the marker's name and its span (ps).
    pub steps: BTreeMap<i64, StepSpan>,
    /// The step given to executions outside every marker, if there were any.
    pub outside_step: Option<i64>,
    /// Plane names, in file order.
    pub planes: Vec<String>,
    /// The planes as devices (lowercased, like RunMetadata devices).
    pub devices: Vec<&'static str>,
    /// Per plane: whether its time is accelerator time (not the host's).
    pub accelerators: Vec<bool>,
    /// Op executions read (events that became part of a node).
    pub executions: u64,
    /// Allocator events (`MemoryAllocation`/`MemoryDeallocation`) seen.
    pub memory_events: u64,
    /// Per node and step, the bytes of the allocations its `tf_op` names.
    pub memory: Vec<MemoryTotal>,
    /// Allocations whose `tf_op` names no node (e.g. a function).
    pub unattributed_allocations: u64,
    /// The allocator events in time order, when asked for (empty otherwise).
    pub allocator_events: Vec<AllocationEvent>,
    /// The XLA instructions and kernels that ran (`rtfprof hlo`, `kernels`).
    pub device: crate::stats::records::device::Tables,
    /// Per node that is a framework op of XLA instructions: the Python
    /// frames of its first instruction that names any (the code view).
    pub frames: Vec<(String, Vec<super::hlo::Frame>)>,
}

/// The type (and scope) of GPU work whose annotation names no op.
pub const ANNOTATION_TYPE: &str = "(annotation)";

/// The type (and scope) of device work rtfprof cannot attribute: an
/// `hlo_op` no program of the trace holds, a command buffer it cannot
/// replay, a kernel with no op at all. Shown, never dropped: XProf drops
/// such events silently.
pub const UNATTRIBUTED_TYPE: &str = "(unattributed)";

/// The scope eager ops are shown under: they have a type but no name.
pub const EAGER_SCOPE: &str = "(eager)";

/// How many events a thread reads at a time.
const EVENTS_PER_PIECE: usize = PIECE_EVENTS;
/// About how many bytes a guessed piece holds (see [`Long::Guessed`]): as
/// many as a piece of [`PIECE_EVENTS`] JAX GPU events.
const GUESSED_PIECE_BYTES: usize = if cfg!(fuzzing) { 256 } else { 2 << 20 };

/// What a conversion keeps, where asked, besides the totals and the device
/// tables: records only some commands read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Keep {
    /// The allocator events in time order ([`Converted::allocator_events`]).
    pub allocator_events: bool,
    /// Each XLA instruction's time in each step
    /// ([`HloOp::step_ps`](crate::stats::records::device::HloOp::step_ps)).
    pub hlo_steps: bool,
}

/// Converts a whole trace (with its allocator events if asked); returns its
/// totals too, all at once.
pub fn convert(bytes: &[u8], allocator_events: bool) -> Result<(Converted, Vec<Total>), DecodeError> {
    let mut totals = Vec::new();
    let keep = Keep { allocator_events, ..Keep::default() };
    let converted = convert_releasing(bytes, keep, &|_| {}, &mut |_, chunk| totals.extend_from_slice(chunk))?;
    Ok((converted, totals))
}

/// Converts a whole trace, giving its totals to `sink`; with
/// `allocator_events`, keeps those. Calls `release` with each stretch of the
/// lines' events once it has been read (a mapped trace gives its pages back,
/// see [`super::XplaneFile`]); slices of them stay valid.
pub fn convert_releasing(bytes: &[u8], keep: Keep, release: Release<'_>, sink: TotalsSink<'_>) -> Result<Converted, DecodeError> {
    let space = Space::decode(bytes)?;
    let long = longest_plane(&space, bytes.len());
    or_framed_first(long, |long| convert_framed_first(bytes, &space, long, keep, release, &mut *sink))
}

/// `convert` with `long`, or with every plane framed first where that fails.
fn or_framed_first(long: Option<Long>, mut convert: impl FnMut(Option<Long>) -> Result<Converted, DecodeError>) -> Result<Converted, DecodeError> {
    match long {
        // (A damaged trace is read again the plain way, for the error it
        // gives: the first of its framing, then of its events; and so is a
        // trace whose guessed pieces were not cut at its events.)
        Some(long) => convert(Some(long)).or_else(|_| convert(None)),
        None => convert(None),
    }
}

/// How the plane holding most of a trace is read, while other planes have
/// lines to read (see [`convert_framed_first`]).
#[derive(Debug, Clone, Copy)]
enum Long {
    /// Its lines framed while the other planes' events are read: framing
    /// them is one core's walk of most of the file. (On the 272 MB jax_lstm
    /// trace the GPU plane's framing took 53 ms of one core, and reading
    /// the host's events 35 ms, bench/README.md.)
    FramedMeanwhile(usize),
    /// A GPU plane of a large trace: its lines cut where events seem to
    /// start ([`Line::guessed_pieces`]), framed as their pieces are read,
    /// with the other planes' (a TF trace's long plane, a host's, is
    /// framed: its events' bytes are less alike, and guesses cost a second
    /// reading where they fail).
    Guessed { plane: usize, piece_bytes: usize },
}

/// Traces from this size have their GPU plane's pieces guessed (its pieces'
/// executions then get room for as many as their bytes could hold, which
/// only a mapped piece leaves untouched: see [`Executions::with_room`]).
/// Fuzzed, every trace is, in small pieces.
const GUESS_FROM_TRACE_BYTES: usize = if cfg!(fuzzing) { 0 } else { Executions::MAPPED_FROM_TRACE_BYTES };

/// The plane holding most of a trace, if other planes have lines to read
/// while its lines are framed, and how it is read.
fn longest_plane(space: &Space<'_>, trace_bytes: usize) -> Option<Long> {
    let long = (0..space.planes.len()).max_by_key(|&i| space.planes[i].len())?;
    if space.planes.len() == 1 {
        return None;
    }
    let gpu = Plane::decode_name(space.planes[long]).is_ok_and(|name| PlaneKind::of(name) == PlaneKind::Gpu);
    Some(match gpu && trace_bytes >= GUESS_FROM_TRACE_BYTES {
        true => Long::Guessed { plane: long, piece_bytes: GUESSED_PIECE_BYTES },
        false => Long::FramedMeanwhile(long),
    })
}

/// Converts a trace, all its planes framed before any event is read; or,
/// with `long`, the plane holding most of the trace read as [`Long`] says.
fn convert_framed_first<'a>(
    bytes: &'a [u8],
    space: &Space<'a>,
    long: Option<Long>,
    keep: Keep,
    release: Release<'_>,
    sink: TotalsSink<'_>,
) -> Result<Converted, DecodeError> {
    let (meanwhile, guessed, piece_bytes) = match long {
        Some(Long::FramedMeanwhile(index)) => (Some(index), None, 0),
        Some(Long::Guessed { plane, piece_bytes }) => (None, Some(plane), piece_bytes),
        None => (None, None, 0),
    };
    // (The programs are read while the planes are framed.)
    let frame = |(index, wire): (usize, &&'a [u8])| match Some(index) {
        i if i == meanwhile => Plane::decode_metadata(wire),
        i if i == guessed => Plane::decode_unframed(wire),
        _ => Plane::decode_releasing(wire, release),
    };
    let (planes, programs) =
        rayon::join(|| space.planes.par_iter().enumerate().map(frame).collect::<Result<Vec<Plane<'_>>, _>>(), || Programs::from_space(bytes));
    let (planes, programs) = (planes?, programs?);
    let eager_names = eager_names(&planes);

    // Every op that metadata names, before the lines are read on all cores.
    let mut ops = OpTable::default();
    let module_ops = ProgramOps::new(&programs, &mut ops);
    let contexts: Vec<PlaneContext<'_, '_>> =
        planes.iter().enumerate().map(|(index, plane)| PlaneContext::new(plane, &mut ops, &module_ops, eager_names.get(&index))).collect();

    // The lines to read, cut into pieces read on all cores: one thread's
    // line holds most of a TF trace.
    let pieces_of = |index: usize, lines: &[Line<'a>]| -> Vec<(usize, usize, Line<'a>)> {
        let kind = PlaneKind::of(planes[index].name);
        let mut pieces = Vec::new();
        for (line_no, line) in lines.iter().enumerate() {
            let read = match kind {
                PlaneKind::Host => true,
                // (Derived lines repeat the kernels' time.)
                PlaneKind::Gpu => !is_derived_line(line.id),
                PlaneKind::Tpu => line.name == "XLA Ops",
                PlaneKind::Metadata | PlaneKind::Other => false,
            };
            if read {
                let line_pieces = if line.framed { line.pieces(EVENTS_PER_PIECE) } else { line.guessed_pieces(piece_bytes, release) };
                pieces.extend(line_pieces.into_iter().map(|piece| (index, line_no, piece)));
            }
        }
        pieces
    };
    let read_pieces = |pieces: &[(usize, usize, Line<'a>)]| -> Result<Vec<LineResult<'a>>, DecodeError> {
        // (One piece at a time: rayon otherwise hands a thread a stretch of
        // pieces that another thread, done with its own, cannot take from.)
        pieces.par_iter().with_max_len(1).map(|(index, _, piece)| contexts[*index].read_piece(piece, bytes.len()).inspect(|_| release(piece.wire()))).collect()
    };
    // (The plane framed meanwhile has no lines among `planes`.)
    let mut pieces: Vec<(usize, usize, Line<'_>)> = planes.iter().enumerate().flat_map(|(index, plane)| pieces_of(index, &plane.lines)).collect();
    let (long_lines, read) = rayon::join(|| meanwhile.map(|long| Plane::decode_releasing(space.planes[long], release)).transpose(), || read_pieces(&pieces));
    let mut read = read?;
    if let (Some(long), Some(long_plane)) = (meanwhile, long_lines?) {
        let long_pieces = pieces_of(long, &long_plane.lines);
        let long_read = read_pieces(&long_pieces)?;
        // In the order of the planes, as if read with the others.
        let at = pieces.partition_point(|(index, ..)| *index < long);
        pieces.splice(at..at, long_pieces);
        read.splice(at..at, long_read);
    }

    // Command buffers' child-graph nodes, now that every node is seen.
    let child_op = child_graph_ops(&read, &module_ops, &mut ops, |wanted| {
        let launched: Vec<Vec<Launched>> = pieces
            .par_iter()
            .filter(|(index, ..)| PlaneKind::of(contexts[*index].plane.name) == PlaneKind::Gpu)
            .map(|(index, _, piece)| contexts[*index].launched(piece, wanted).inspect(|_| release(piece.wire())))
            .collect::<Result<_, _>>()?;
        Ok(launched.into_iter().flatten().collect())
    })?;

    // Pieces back into lines, in order.
    let mut kernels = Launches::default();
    let mut markers: Vec<(i64, &str, i128, i128)> = Vec::new();
    let mut lines_read: Vec<LineRead> = Vec::new();
    // (Sized at once: a vector grown by doubling leaves its smaller copies
    // resident, as freed memory is kept.)
    let mut memory_events: Vec<MemoryEvent> = Vec::with_capacity(read.iter().map(|r| r.memory.len()).sum());
    let mut memory_names = MemoryNames::default();
    let mut last_line = None;
    for ((index, line_no, piece), mut result) in pieces.iter().zip(read) {
        markers.append(&mut result.markers);
        if !result.memory.is_empty() {
            let allocators: Vec<u32> = result.memory_names.allocators.iter().map(|&a| memory_names.allocator(a)).collect();
            let tf_ops: Vec<u32> = result.memory_names.tf_ops.iter().map(|&t| memory_names.tf_op(t)).collect();
            memory_events.extend(result.memory.iter().map(|e| MemoryEvent {
                allocator: allocators[e.allocator as usize],
                tf_op: tf_ops[e.tf_op as usize],
                ..*e
            }));
            drop(std::mem::take(&mut result.memory));
        }
        let own: Vec<u32> = result.own_ops.ops.iter().map(|op| ops.intern(*op)).collect();
        if !own.is_empty() {
            for e in result.executions.iter_mut().filter(|e| e.op & LINE_OP != 0) {
                e.op = own[(e.op & !LINE_OP) as usize];
            }
        }
        if !result.children.is_empty() {
            for e in result.executions.iter_mut().filter(|e| e.op & LINE_OP == 0 && e.op & CHILD_OP != 0) {
                e.op = child_op[&result.children[(e.op & !CHILD_OP) as usize]];
            }
        }
        if !result.kernels.keys.is_empty() {
            let children = &result.children;
            kernels.append(std::mem::take(&mut result.kernels), |op| match op {
                _ if op & LINE_OP != 0 => own[(op & !LINE_OP) as usize],
                _ if op & CHILD_OP != 0 => child_op[&children[(op & !CHILD_OP) as usize]],
                _ => op,
            });
        }
        if last_line != Some((index, line_no)) {
            lines_read.push(LineRead { plane: *index, base_ps: i128::from(piece.timestamp_ns) * 1000, pieces: Vec::new() });
        }
        lines_read.last_mut().expect("pushed above").pieces.push(result.executions);
        last_line = Some((index, line_no));
    }
    lines_read.par_iter_mut().filter(|line| PlaneKind::of(planes[line.plane].name) == PlaneKind::Host).for_each(|line| subtract_nested(&mut line.pieces));

    let steps = step_spans(&markers);
    let step_of = StepLookup::new(&steps);
    let mut converted = Converted {
        planes: planes.iter().map(|p| p.name.to_owned()).collect(),
        devices: planes.iter().map(|p| crate::stats::symbol::symbol(&p.name.to_ascii_lowercase())).collect(),
        accelerators: planes.iter().map(|p| PlaneKind::of(p.name) != PlaneKind::Host).collect(),
        executions: lines_read.iter().flat_map(|l| &l.pieces).map(|p| p.len() as u64).sum(),
        memory_events: memory_events.len() as u64,
        ..Default::default()
    };
    converted.device = crate::stats::records::device::Tables {
        hlo_ops: hlo_ops(&planes, &ops.ops, &programs, &lines_read, keep.hlo_steps.then_some(&step_of)),
        kernels: kernel_rows(&ops.ops, &programs, kernels),
    };
    converted.device.sort();
    converted.frames = node_frames(&ops.ops, &programs);
    totals(&planes, &ops.ops, lines_read, &steps, &mut converted, sink);
    let nodes: HashSet<&str> = converted.nodes.iter().map(|(name, _)| name.as_str()).collect();
    let (memory, unattributed) = memory_totals(&mut memory_events, &memory_names, |t| step_of.step(t), &nodes);
    converted.memory = memory;
    converted.unattributed_allocations = unattributed;
    if converted.outside_step.is_none() && !steps.is_empty() && memory_events.iter().any(|e| step_of.step(e.time_ps) == step_of.after_last) {
        converted.outside_step = Some(step_of.after_last);
    }
    if keep.allocator_events {
        converted.allocator_events = attribute_allocator_events(&memory_events, &memory_names, &step_of);
    }
    converted.steps = steps;
    Ok(converted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fixture converts alike when its planes are all framed first,
    /// when any one plane's lines are framed while the others are read, and
    /// when they are cut at guessed starts; a damaged fixture gives the
    /// error that framing first gives.
    #[test]
    fn planes_framed_meanwhile_or_guessed_convert_as_when_all_are_framed_first() {
        let root = format!("{}/testdata/xplane", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        let mut paths: Vec<std::path::PathBuf> =
            std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path().join("plugins/profile/run0")).filter(|p| p.is_dir()).collect();
        paths.sort();
        let (mut compared, mut guessed_ok) = (0, 0);
        for dir in paths {
            for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
                let bytes = std::fs::read(&path).unwrap();
                let space = Space::decode(&bytes).unwrap();
                let convert = |bytes: &[u8], space: &Space<'_>, long: Option<Long>| {
                    let mut totals = Vec::new();
                    convert_framed_first(bytes, space, long, Keep { allocator_events: true, hlo_steps: true }, &|_| {}, &mut |_, chunk| {
                        totals.extend_from_slice(chunk)
                    })
                    .map(|c| format!("{c:?} {totals:?}"))
                };
                let framed_first = convert(&bytes, &space, None).unwrap();
                for long in 0..space.planes.len() {
                    // (Not assert_eq: a trace's conversion is long.)
                    assert!(convert(&bytes, &space, Some(Long::FramedMeanwhile(long))).unwrap() == framed_first, "{} plane {long}", path.display());
                    compared += 1;
                    // Pieces guessed in any plane, small enough to be many:
                    // the same conversion, or one that fails and is read
                    // framed first (never in a GPU plane, whose events are
                    // what the guesses look for).
                    for piece_bytes in [97, 1000, 20_000] {
                        let guessed = Some(Long::Guessed { plane: long, piece_bytes });
                        match convert(&bytes, &space, guessed) {
                            Ok(converted) => {
                                assert!(converted == framed_first, "{} plane {long} guessed {piece_bytes}", path.display());
                                guessed_ok += 1;
                            }
                            Err(e) => {
                                let name = Plane::decode_name(space.planes[long]).unwrap();
                                assert!(PlaneKind::of(name) != PlaneKind::Gpu, "{} plane {long} guessed {piece_bytes}: {e}", path.display());
                            }
                        }
                    }
                }
                // A byte of the longest plane's events changed: the error
                // (if any) is that of the plain reading, its pieces framed
                // or guessed.
                let mut damaged = bytes.clone();
                let long = match longest_plane(&space, bytes.len()).unwrap() {
                    Long::FramedMeanwhile(plane) | Long::Guessed { plane, .. } => plane,
                };
                let at = space.planes[long].as_ptr() as usize - bytes.as_ptr() as usize + space.planes[long].len() / 2;
                for byte in [0xff, 0x00, 0x80] {
                    damaged[at] = byte;
                    let Ok(space) = Space::decode(&damaged) else { continue };
                    let mut totals = Vec::new();
                    let converted =
                        convert_releasing(&damaged, Keep { allocator_events: true, hlo_steps: true }, &|_| {}, &mut |_, chunk| totals.extend_from_slice(chunk))
                            .map(|c| format!("{c:?} {totals:?}"));
                    let framed_first = convert(&damaged, &space, None).map_err(|e| e.to_string());
                    assert_eq!(converted.map_err(|e| e.to_string()), framed_first, "{}", path.display());
                    let guessed = Some(Long::Guessed { plane: long, piece_bytes: 1000 });
                    let mut totals = Vec::new();
                    let mut sink = |_: &TotalNames<'_>, chunk: &[Total]| totals.extend_from_slice(chunk);
                    let converted = or_framed_first(guessed, |long| {
                        convert_framed_first(&damaged, &space, long, Keep { allocator_events: true, hlo_steps: true }, &|_| {}, &mut sink)
                    });
                    let converted = converted.map(|c| format!("{c:?} {totals:?}"));
                    assert_eq!(converted.map_err(|e| e.to_string()), framed_first, "{} guessed", path.display());
                }
            }
        }
        assert!(compared >= 40, "{compared} conversions compared");
        assert!(guessed_ok >= 40, "{guessed_ok} conversions of guessed pieces");
    }

    /// Asked for, each XLA instruction's times per step add up to its
    /// total (every execution is in one step), its steps are the trace's
    /// (a marker's, or the one after the last); not asked for, none are
    /// kept. On every fixture with XLA programs: JAX on CPU, on an H200
    /// with and without command buffers, on MI300X.
    #[test]
    fn instructions_times_per_step_add_up_to_their_totals() {
        let root = format!("{}/testdata/xplane", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&root)
            .unwrap()
            .flat_map(|e| std::fs::read_dir(e.unwrap().path().join("plugins/profile/run0")).into_iter().flatten())
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".xplane.pb"))
            .collect();
        files.sort();
        let (mut with_programs, mut over_steps) = (0, 0);
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            let Ok(converted) = convert_releasing(&bytes, Keep { hlo_steps: true, ..Keep::default() }, &|_| {}, &mut |_, _| {}) else { continue };
            let after_last = converted.steps.keys().next_back().map_or(0, |last| last + 1);
            for op in &converted.device.hlo_ops {
                assert_eq!(op.step_ps.iter().map(|s| s.1).sum::<i128>(), op.total_ps, "{} {}", file.display(), op.hlo_op_name);
                assert!(op.step_ps.iter().all(|(step, _)| converted.steps.contains_key(step) || *step == after_last), "{} {op:?}", file.display());
                assert!(op.step_ps.windows(2).all(|w| w[0].0 < w[1].0), "by step");
            }
            with_programs += usize::from(!converted.device.hlo_ops.is_empty());
            over_steps += usize::from(converted.device.hlo_ops.iter().any(|op| op.step_ps.len() > 1));
            let (plain, _) = convert(&bytes, false).unwrap();
            assert!(plain.device.hlo_ops.iter().all(|op| op.step_ps.is_empty()), "kept only when asked: {}", file.display());
        }
        assert!(with_programs >= 10 && over_steps >= 7, "{with_programs} traces with programs, {over_steps} over several steps");
    }

    /// A plane with one line of one event of `metadata` (an op by name), 5 µs.
    fn one_event_plane(name: &str, line_id: i64, metadata: &str) -> crate::proto::tensorflow::profiler::XPlane {
        use crate::proto::tensorflow::profiler as xp;
        let mut plane = xp::XPlane { id: 1, name: name.into(), ..Default::default() };
        plane.event_metadata.insert(1, xp::XEventMetadata { id: 1, name: metadata.into(), ..Default::default() });
        let event = xp::XEvent { metadata_id: 1, duration_ps: 5_000_000, data: Some(xp::x_event::Data::OffsetPs(0)), ..Default::default() };
        plane.lines.push(xp::XLine { id: line_id, timestamp_ns: 1000, events: vec![event], ..Default::default() });
        plane
    }

    /// The executions read from a trace of `planes`, and its totals' planes by name.
    fn executions_and_planes(planes: Vec<crate::proto::tensorflow::profiler::XPlane>) -> (u64, Vec<String>) {
        use crate::proto::tensorflow::profiler as xp;
        use prost::Message;
        let wire = xp::XSpace { planes, ..Default::default() }.encode_to_vec();
        let (converted, totals) = convert(&wire, false).unwrap();
        (converted.executions, totals.iter().map(|t| converted.planes[t.plane as usize].clone()).collect())
    }

    /// Only the plane named exactly `/host:CPU` is the host's, as XProf
    /// finds it: the ops of a plane whose name only starts so are not read.
    #[test]
    fn only_the_host_plane_itself_has_host_ops() {
        let planes = vec![one_event_plane("/host:CPU", 1, "dense/MatMul:MatMul"), one_event_plane("/host:CPU (something)", 1, "dense/MatMul:MatMul")];
        assert_eq!(executions_and_planes(planes), (1, vec!["/host:CPU".to_owned()]));
    }

    /// Of a GPU plane's lines, those XProf derives are known by their ids
    /// (its `IsDerivedThreadId`), not their names: they are not read.
    #[test]
    fn derived_gpu_lines_are_known_by_id() {
        let mut plane = one_event_plane("/device:GPU:0", super::super::planes::STEP_INFO_LINE + 3, "kernel");
        plane.lines[0].name = "Stream #7(Compute)".into();
        let mut raw = plane.lines[0].clone();
        (raw.id, raw.name) = (7, "TensorFlow Ops".into());
        plane.lines.push(raw);
        assert_eq!(executions_and_planes(vec![plane]), (1, vec!["/device:GPU:0".to_owned()]));
    }
}
