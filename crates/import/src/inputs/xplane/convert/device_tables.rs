//! The device tables (`rtfprof hlo`, `rtfprof kernels`): XProf's
//! `hlo_stats` rows, per XLA instruction that ran, and `kernel_stats`
//! rows, per kernel; the framework ops' Python frames (the code view);
//! and the ops of command buffers' child-graph nodes, which their
//! kernels run.

use std::collections::BTreeMap;

use prost::DecodeError;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::UNATTRIBUTED_TYPE;
use super::executions::{Executions, LineRead};
use super::ops::{NO_PROGRAM, Op, OpTable, ProgramOps};
use super::plane_context::{ChildNode, Launched, LineResult};
use super::steps::StepLookup;
use crate::inputs::xplane::decode::Plane;
use crate::inputs::xplane::hlo::{self, Programs, opcode_of_name};
use crate::inputs::xplane::planes::PlaneKind;
use crate::stats::records::device::kernel::{self, Launches};

/// XProf's `hlo_stats` rows: per XLA instruction that ran (an op with a
/// program), its executions, total time (on devices the time counted, on
/// hosts the events' durations) and self time; with `steps`, its total
/// time in each step too ([`step_times`]).
pub(super) fn hlo_ops(
    planes: &[Plane<'_>],
    ops: &[Op<'_>],
    programs: &Programs,
    lines: &[LineRead],
    steps: Option<&StepLookup>,
) -> Vec<crate::stats::records::device::HloOp> {
    if !ops.iter().any(|op| op.3 != NO_PROGRAM) {
        return Vec::new();
    }
    // Per op of a program (numbered in `slot_of` among those): its
    // executions (none: it did not run), total and self time; pieces
    // summed on all cores (an execution runs at least once: the
    // saturating sum of runs does not depend on the order).
    let with_program: Vec<usize> = (0..ops.len()).filter(|&op| ops[op].3 != NO_PROGRAM).collect();
    let mut slot_of = vec![u32::MAX; ops.len()];
    with_program.iter().enumerate().for_each(|(slot, &op)| slot_of[op] = slot as u32);
    let add = |mut sums: Vec<(i64, i128, i128)>, (host, piece): (bool, &Executions)| {
        for e in piece.iter() {
            let Some(sum) = sums.get_mut(slot_of[e.op as usize] as usize) else { continue };
            sum.0 = sum.0.saturating_add(e.runs);
            sum.1 += i128::from(if host { e.duration_ps } else { e.time_ps });
            sum.2 += i128::from(e.time_ps);
        }
        sums
    };
    let merge = |mut sums: Vec<(i64, i128, i128)>, other: Vec<(i64, i128, i128)>| {
        for (sum, other) in sums.iter_mut().zip(other) {
            *sum = (sum.0.saturating_add(other.0), sum.1 + other.1, sum.2 + other.2);
        }
        sums
    };
    // XProf's hlo_stats reads the devices' op metrics where a device ran
    // any of the programs, and the host's only in a trace of the host
    // alone: on ROCm the host's launch calls carry `hlo_op` and
    // `program_id` too, and are no executions of the instruction.
    let on_host = |line: &LineRead| PlaneKind::of(planes[line.plane].name) == PlaneKind::Host;
    let device_ran =
        lines.iter().filter(|line| !on_host(line)).any(|line| line.pieces.iter().any(|piece| piece.iter().any(|e| slot_of[e.op as usize] != u32::MAX)));
    // (Each line counted, and whether it is the host's.)
    let counted: Vec<(&LineRead, bool)> = lines.iter().map(|line| (line, on_host(line))).filter(|&(_, host)| !(device_ran && host)).collect();
    let pieces: Vec<(bool, &Executions)> = counted.iter().flat_map(|&(line, host)| line.pieces.iter().map(move |piece| (host, piece))).collect();
    let zero = || vec![(0, 0, 0); with_program.len()];
    let per_thread = pieces.len().div_ceil(2 * rayon::current_num_threads()).max(1);
    let sums = pieces.into_par_iter().with_min_len(per_thread).fold(zero, add).reduce(zero, merge);
    let mut by_step = steps.map_or_else(Vec::new, |steps| step_times(&counted, steps, &slot_of));
    with_program
        .into_iter()
        .zip(sums)
        .enumerate()
        .filter(|(_, (_, (occurrences, ..)))| *occurrences > 0)
        .map(|(slot, (op, (occurrences, total_ps, self_ps)))| {
            let (node, _, name, program) = ops[op];
            let known = programs.get(program).and_then(|p| Some((p, &p.instructions[p.instruction(name)? as usize])));
            crate::stats::records::device::HloOp {
                job: String::new(),
                program_id: program as u64,
                module: known.map_or_else(String::new, |(p, _)| p.module.clone()),
                hlo_op_name: name.to_owned(),
                category: known.map_or_else(|| hlo::category(opcode_of_name(name), ""), |(_, ins)| ins.category.clone()),
                framework_op: known.map_or_else(|| if node == name { String::new() } else { node.to_owned() }, |(_, ins)| ins.op_name.clone()),
                occurrences,
                total_ps,
                self_ps,
                source: known.map_or_else(Vec::new, |(_, ins)| ins.frames.iter().map(|f| f.to_string()).collect()),
                step_ps: by_step.get_mut(slot).map(std::mem::take).unwrap_or_default(),
            }
        })
        .collect()
}

/// Per instruction (by its slot among those with a program): its time in
/// each step, by step number, counted as [`hlo_ops`] counts its total (on
/// devices the time counted, on hosts the events' durations). An
/// execution is in the step whose marker holds its start, else in the
/// step after the last, as the node model's executions are
/// ([`StepLookup::step`]). `lines`: each line counted, and whether it is
/// the host's.
fn step_times(lines: &[(&LineRead, bool)], steps: &StepLookup, slot_of: &[u32]) -> Vec<Vec<(i64, i128)>> {
    let slots = slot_of.iter().filter(|&&slot| slot != u32::MAX).count();
    // A line's executions mostly come in step order: each step's times are
    // summed in a vector by slot, and given out when the step changes (a
    // map entry per execution took 1.5 s more of a 10.8 s check of two
    // 500 MB traces; bench/check.md).
    let line_sums = |&(line, host): &(&LineRead, bool)| {
        // (The step's sum by slot, and whether the slot ran in it.)
        let (mut sums, mut out) = (vec![(0i128, false); slots], Vec::new());
        let (mut touched, mut current, mut hint) = (Vec::new(), None, 0);
        let flush = |sums: &mut [(i128, bool)], touched: &mut Vec<u32>, step: i64, out: &mut Vec<(u32, i64, i128)>| {
            for slot in touched.drain(..) {
                out.push((slot, step, std::mem::take(&mut sums[slot as usize]).0));
            }
        };
        for e in line.pieces.iter().flat_map(|piece| piece.iter()) {
            let slot = slot_of[e.op as usize];
            if slot == u32::MAX {
                continue;
            }
            let step = steps.step_hinted(line.base_ps + i128::from(e.offset_ps), &mut hint);
            if current != Some(step) {
                if let Some(previous) = current {
                    flush(&mut sums, &mut touched, previous, &mut out);
                }
                current = Some(step);
            }
            let (sum, ran) = &mut sums[slot as usize];
            if !*ran {
                *ran = true;
                touched.push(slot);
            }
            *sum += i128::from(if host { e.duration_ps } else { e.time_ps });
        }
        if let Some(last) = current {
            flush(&mut sums, &mut touched, last, &mut out);
        }
        out
    };
    let mut per_slot: Vec<BTreeMap<i64, i128>> = vec![BTreeMap::new(); slots];
    for sums in lines.par_iter().map(line_sums).collect::<Vec<_>>() {
        for (slot, step, ps) in sums {
            *per_slot[slot as usize].entry(step).or_default() += ps;
        }
    }
    per_slot.into_iter().map(|steps| steps.into_iter().collect()).collect()
}

/// Each framework op's Python frames: those of its first instruction (in
/// op order) that has any.
pub(super) fn node_frames(ops: &[Op<'_>], programs: &Programs) -> Vec<(String, Vec<hlo::Frame>)> {
    let mut frames: BTreeMap<&str, &[hlo::Frame]> = BTreeMap::new();
    for &(node, _, instruction, program) in ops.iter().filter(|op| op.3 != NO_PROGRAM) {
        if frames.contains_key(node) {
            continue;
        }
        let Some(stack) = programs.get(program).and_then(|p| Some(&p.instructions[p.instruction(instruction)? as usize].frames)) else { continue };
        if !stack.is_empty() {
            frames.insert(node, stack);
        }
    }
    frames.into_iter().map(|(node, stack)| (node.to_owned(), stack.to_vec())).collect()
}

/// XProf's `kernel_stats` rows: the op of a kernel is named as XProf names
/// it (an instruction's `op_name`, TF's op, nothing for the unattributed),
/// and launches whose key and op name agree are one row, whichever
/// instruction ran them (XLA reuses a kernel for identical fusions).
pub(super) fn kernel_rows(ops: &[Op<'_>], programs: &Programs, launches: Launches<'_>) -> Vec<crate::stats::records::device::Kernel> {
    let mut rows: Vec<crate::stats::records::device::Kernel> = Vec::new();
    let mut index: FxHashMap<(kernel::Key<'_>, String), usize> = FxHashMap::default();
    for (key, sums) in launches.keys.into_iter().zip(launches.sums) {
        let (node, op_type, instruction, program) = ops[key.op as usize];
        let op_name = if program != NO_PROGRAM {
            programs.get(program).and_then(|p| Some(p.instructions[p.instruction(instruction)? as usize].op_name.clone())).unwrap_or_default()
        } else if op_type == UNATTRIBUTED_TYPE {
            String::new()
        } else {
            node.to_owned()
        };
        match index.entry((kernel::Key { op: 0, ..key }, op_name.clone())) {
            std::collections::hash_map::Entry::Occupied(at) => rows[*at.get()].add(&sums),
            std::collections::hash_map::Entry::Vacant(at) => {
                at.insert(rows.len());
                rows.push(key.row(op_name, &sums));
            }
        }
    }
    rows
}

/// The op of every command-buffer child node the pieces saw: the
/// instruction of the child-graph command it belongs to (see
/// [`CommandBuffer::child_nodes`](crate::inputs::xplane::thunks::CommandBuffer::child_nodes)),
/// else `(unattributed)/command_buffer_<N>`.
///
/// A buffer's launches (its events by `correlation_id`, in time) are read
/// only where its child nodes are not one to one with its child commands:
/// `launched` reads the trace again for those buffers. (Kept for every
/// event while reading, they grew with the trace: 0.6 GB of the 1.3 GB
/// peak of `scope` on the 1.09 GB jax_lstm x364 trace, whose buffers need
/// none; bench/README.md.)
pub(super) fn child_graph_ops<'p>(
    read: &[LineResult<'p>],
    module_ops: &ProgramOps<'p>,
    ops: &mut OpTable<'p>,
    launched: impl FnOnce(&FxHashSet<(i64, i64)>) -> Result<Vec<Launched>, DecodeError>,
) -> Result<FxHashMap<ChildNode, u32>, DecodeError> {
    let children: std::collections::BTreeSet<ChildNode> = read.iter().flat_map(|r| r.children.iter().copied()).collect();
    if children.is_empty() {
        return Ok(FxHashMap::default());
    }
    // Per buffer: its nodes seen.
    let mut buffers: BTreeMap<(i64, i64), Vec<u32>> = BTreeMap::new();
    for &(program, buffer, node) in read.iter().flat_map(|r| &r.buffer_nodes) {
        buffers.entry((program, buffer)).or_default().push(node);
    }
    let commands_of = |(program, buffer): (i64, i64)| module_ops.programs.get(program).and_then(|p| p.command_buffer(buffer));
    let wanted: FxHashSet<(i64, i64)> =
        buffers.iter().filter(|&(&key, nodes)| commands_of(key).is_some_and(|c| c.needs_launches(nodes))).map(|(&key, _)| key).collect();
    // Per buffer wanted: its events by launch, and its memset nodes.
    type ByLaunch = BTreeMap<i64, Vec<(i128, u32)>>;
    let mut launches: BTreeMap<(i64, i64), ByLaunch> = BTreeMap::new();
    let mut memsets: FxHashMap<(i64, i64), FxHashSet<u32>> = FxHashMap::default();
    if !wanted.is_empty() {
        for e in launched(&wanted)? {
            let buffer = (e.node.0, e.node.1);
            launches.entry(buffer).or_default().entry(e.launch).or_default().push((e.start_ps, e.node.2));
            if e.memset {
                memsets.entry(buffer).or_default().insert(e.node.2);
            }
        }
    }
    let mut resolved = FxHashMap::default();
    for (&(program, buffer), nodes) in &buffers {
        let Some(commands) = commands_of((program, buffer)) else { continue };
        let launches: Vec<Vec<(i128, u32)>> = launches.remove(&(program, buffer)).map(|l| l.into_values().collect()).unwrap_or_default();
        let memsets = memsets.remove(&(program, buffer)).unwrap_or_default();
        for (node, instruction) in commands.child_nodes(nodes, &launches, &memsets) {
            if let Some(op) = module_ops.instruction_op(program, instruction) {
                resolved.insert((program, buffer, node), op);
            }
        }
    }
    Ok(children
        .into_iter()
        .map(|child| {
            // (A node past the commands of a buffer with no child graph.)
            let op = resolved.get(&child).copied().unwrap_or_else(|| ops.intern(("command_buffer child graph", UNATTRIBUTED_TYPE, "", NO_PROGRAM)));
            (child, op)
        })
        .collect())
}
