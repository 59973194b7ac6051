//! The per-step totals: executions summed per (node, step, plane) in
//! picoseconds and rounded once, each step on its own and steps on all
//! cores, given to the sink a few steps at a time in step order; and
//! what the node model needs to name them ([`TotalNames`]).

use std::collections::BTreeMap;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::executions::{Executions, LineRead};
use super::ops::Op;
use super::steps::{StepLookup, StepSpan};
use super::{ANNOTATION_TYPE, Converted, PS_PER_US, UNATTRIBUTED_TYPE};
use crate::inputs::xplane::decode::Plane;
use crate::inputs::xplane::planes::PlaneKind;
use crate::stats::ExecTotal;

/// One node's executions in one step on one plane, rounded once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Total {
    /// Index into [`Converted::nodes`].
    pub node: u32,
    /// Index into [`Converted::planes`].
    pub plane: u32,
    pub step: i64,
    pub start_micros: i64,
    pub end_micros: i64,
    pub micros: i64,
    pub runs: i64,
}

/// What [`Total`]s' indices name, for the node model.
pub struct TotalNames<'a> {
    /// Per node: name and op type.
    nodes: &'a [(String, String)],
    /// Per node: the plane of its device (its first accelerator, else its
    /// host) and how many steps it ran in, both over the whole trace (nodes
    /// of one name share them).
    placed_on: Vec<u32>,
    node_steps: Vec<u32>,
    devices: &'a [&'static str],
    accelerators: &'a [bool],
}

impl TotalNames<'_> {
    /// A total as the node model takes it
    /// ([`crate::stats::Stats::add_exec_totals`]). Names are kept once per
    /// node, not once per total: a 10 MB trace has 200k totals.
    pub fn exec_total(&self, t: &Total) -> ExecTotal<'_> {
        let (node, op_type) = &self.nodes[t.node as usize];
        ExecTotal {
            step: t.step,
            node,
            input_node: t.node,
            op_type,
            device: self.devices[t.plane as usize],
            on_accelerator: self.accelerators[t.plane as usize],
            placed_on: self.devices[self.placed_on[t.node as usize] as usize],
            node_steps: self.node_steps[t.node as usize] as usize,
            start_micros: t.start_micros,
            end_micros: t.end_micros,
            micros: t.micros,
            runs: t.runs,
        }
    }
}

/// Receives totals as they are made, a few steps at a time in step order
/// (by node name and device within a step), so that a large trace's totals
/// never exist all at once.
pub type TotalsSink<'s> = &'s mut dyn FnMut(&TotalNames<'_>, &[Total]);

/// A piece of a line, once read: its executions, with self times.
struct Piece {
    plane: u32,
    /// The line's timestamp, in ps.
    base_ps: i128,
    executions: Executions,
}

/// How many totals the sink takes at a time.
const SINK_TOTALS: usize = 1 << 18;

/// Sums executions per (node, step, plane), rounding each sum once, and
/// gives the sums to `sink` in step order; sets the nodes' names and types.
pub(super) fn totals(
    planes: &[Plane<'_>],
    ops: &[Op<'_>],
    lines: Vec<LineRead>,
    steps: &BTreeMap<i64, StepSpan>,
    converted: &mut Converted,
    sink: TotalsSink<'_>,
) {
    let lookup = StepLookup::new(steps);
    let after_last = lookup.after_last;

    // Nodes (one per name and type), ranked by name, then type.
    let mut node_ids: FxHashMap<(&str, &str), u32> = FxHashMap::default();
    let mut nodes: Vec<(&str, &str)> = Vec::new();
    let node_of: Vec<u32> = ops
        .iter()
        .map(|&(name, op_type, _, _)| {
            *node_ids.entry((name, op_type)).or_insert_with(|| {
                nodes.push((name, op_type));
                (nodes.len() - 1) as u32
            })
        })
        .collect();
    // GPU work annotated without an op is a node under `(annotation)/`.
    let names: Vec<std::borrow::Cow<'_, str>> = nodes
        .iter()
        .map(|&(name, op_type)| if [ANNOTATION_TYPE, UNATTRIBUTED_TYPE].contains(&op_type) { format!("{op_type}/{name}").into() } else { name.into() })
        .collect();
    let mut by_name: Vec<u32> = (0..nodes.len() as u32).collect();
    by_name.sort_unstable_by_key(|&n| (&names[n as usize], nodes[n as usize].1));
    let (mut node_rank, mut name_rank) = (vec![0; nodes.len()], vec![0; nodes.len()]);
    for (rank, &node) in by_name.iter().enumerate() {
        node_rank[node as usize] = rank as u32;
        name_rank[node as usize] = match rank.checked_sub(1).map(|before| by_name[before] as usize) {
            Some(before) if names[before] == names[node as usize] => name_rank[before],
            _ => rank as u32,
        };
    }
    let devices: Vec<String> = planes.iter().map(|p| p.name.to_ascii_lowercase()).collect();
    let mut by_device: Vec<usize> = (0..planes.len()).collect();
    by_device.sort_by_key(|&p| &devices[p]);
    let mut device_rank = vec![0; planes.len()];
    by_device.iter().enumerate().for_each(|(rank, &p)| device_rank[p] = rank as u32);
    let on_host: Vec<bool> = planes.iter().map(|p| PlaneKind::of(p.name) == PlaneKind::Host).collect();
    converted.nodes = names.iter().zip(&nodes).map(|(name, (_, op_type))| (name.to_string(), (*op_type).to_owned())).collect();

    // Executions by step, as runs of a piece's executions in one step (a
    // line's times mostly grow, so a step's executions on a line are a
    // few runs), sorted by step, so that each step is summed on its own,
    // all steps on all cores. (A list of every execution's sums, sorted at
    // once, took 2.5x the memory of the executions themselves; a list of
    // references to every execution, sorted by step, was 8 bytes each and
    // a serial pass: 11 ms of the 272 MB jax_lstm trace's 0.29 s,
    // bench/README.md.) Steps are numbered by their order: markers, then
    // "outside".
    let step_numbers: Vec<i64> = steps.keys().copied().chain(std::iter::once(after_last)).collect();
    let span_index: Vec<usize> = lookup.spans.iter().map(|s| step_numbers.partition_point(|&n| n < s.2)).collect();
    let step_index = |start: i128, hint: &mut usize| -> usize {
        if lookup.spans.is_empty() {
            return 0;
        }
        lookup.span_at(start, hint).map_or(step_numbers.len() - 1, |at| span_index[at])
    };
    let mut pieces: Vec<Piece> = lines
        .into_iter()
        .flat_map(|line| {
            let (plane, base_ps) = (line.plane as u32, line.base_ps);
            line.pieces.into_iter().map(move |executions| Piece { plane, base_ps, executions })
        })
        .collect();
    // (step, run) of each piece, in the piece's order.
    let piece_runs: Vec<Vec<(u32, Run)>> = pieces
        .par_iter()
        .enumerate()
        .map(|(p, piece)| {
            let mut hint = 0;
            let mut runs: Vec<(u32, Run)> = Vec::new();
            for (i, e) in piece.executions.iter().enumerate() {
                let step = step_index(piece.base_ps + i128::from(e.offset_ps), &mut hint) as u32;
                match runs.last_mut() {
                    Some((last, run)) if *last == step => run.end += 1,
                    _ => runs.push((step, Run { piece: p as u32, start: i as u32, end: i as u32 + 1 })),
                }
            }
            runs
        })
        .collect();
    let mut first = vec![0usize; step_numbers.len() + 1];
    piece_runs.iter().flatten().for_each(|&(s, _)| first[s as usize + 1] += 1);
    (1..first.len()).for_each(|i| first[i] += first[i - 1]);
    let mut next = first.clone();
    let mut by_step = vec![Run::default(); first[first.len() - 1]];
    for &(s, run) in piece_runs.iter().flatten() {
        by_step[next[s as usize]] = run;
        next[s as usize] += 1;
    }
    // The step after which a piece is no longer read: its last marked step
    // (the executions outside every marker are summed first).
    let outside_index = step_numbers.len() - 1;
    let piece_done: Vec<usize> =
        piece_runs.iter().map(|runs| runs.iter().map(|&(s, _)| s as usize).filter(|&s| s != outside_index).max().unwrap_or(0)).collect();
    drop(piece_runs);
    // (Without markers everything is step 0, which is not "outside".)
    if !lookup.spans.is_empty() && first[outside_index] < first[outside_index + 1] {
        converted.outside_step = Some(after_last);
    }

    // Per name, over the whole trace: how many steps it ran in, and where it
    // is placed: the device of its first total in the order the sink gets
    // them (by step, then device), an accelerator's if it has any.
    // (Steps in ranges on all cores: each step is seen by one range.)
    let Placement { steps: name_steps, first_on, .. } = (0..step_numbers.len())
        .into_par_iter()
        .with_min_len(step_numbers.len().div_ceil(4 * rayon::current_num_threads()))
        .fold(
            || Placement::new(nodes.len()),
            |mut placement, s| {
                for run in &by_step[first[s]..first[s + 1]] {
                    let piece = &pieces[run.piece as usize];
                    for e in &piece.executions[run.start as usize..run.end as usize] {
                        let name = name_rank[node_of[e.op as usize] as usize] as usize;
                        placement.add(name, s, device_rank[piece.plane as usize], piece.plane, on_host[piece.plane as usize]);
                    }
                }
                placement
            },
        )
        .reduce_with(Placement::merge)
        .unwrap_or_else(|| Placement::new(nodes.len()));
    let [on_accelerator, on_host_first] = &first_on;
    let placed = |name: usize| on_accelerator[name].or(on_host_first[name]).map_or(0, |(_, plane)| plane);
    let names_for_sink = TotalNames {
        nodes: &converted.nodes,
        placed_on: (0..nodes.len()).map(|n| placed(name_rank[n] as usize)).collect(),
        node_steps: (0..nodes.len()).map(|n| name_steps[name_rank[n] as usize]).collect(),
        devices: &converted.devices,
        accelerators: &converted.accelerators,
    };

    let node = |p: &Part| node_of[p.op as usize] as usize;
    // The order of a step's totals, as one number per part: node name,
    // device, then op by node (then by id). Made once per part, not per
    // comparison (sorting by three looked-up ranks was a tenth of the
    // 270 MB bench trace's CPU time).
    let op_name_rank: Vec<u32> = node_of.iter().map(|&n| name_rank[n as usize]).collect();
    let mut by_node: Vec<u32> = (0..ops.len() as u32).collect();
    by_node.sort_unstable_by_key(|&op| (node_rank[node_of[op as usize] as usize], op));
    let mut op_rank = vec![0u32; ops.len()];
    by_node.iter().enumerate().for_each(|(rank, &op)| op_rank[op as usize] = rank as u32);
    drop(by_node);
    let order_key = |op: u32, plane: u32| -> u128 {
        u128::from(op_name_rank[op as usize]) << 64 | u128::from(device_rank[plane as usize]) << 32 | u128::from(op_rank[op as usize])
    };
    // One step's executions → its totals, in order: by node name and
    // device (then type); the parts of one op, then of one node, on a plane
    // are then adjacent, and are merged.
    // (Where ops times planes are too many for a table, every execution is
    // a part of its own.)
    let new_slots = || (ops.len() * planes.len() <= MAX_SLOTS).then(|| Slots::new(ops.len(), planes.len()));
    let step_totals = |pieces: &[Piece], index: usize, slots: Option<&mut Slots>| -> Vec<Total> {
        let step = step_numbers[index];
        let part = |p: u32, i: u32| {
            let piece = &pieces[p as usize];
            let e = &piece.executions[i as usize];
            let start = piece.base_ps + i128::from(e.offset_ps);
            Part {
                key: order_key(e.op, piece.plane),
                op: e.op,
                plane: piece.plane,
                sum: Sum { start_micros: micros(start), end_micros: micros((start + i128::from(e.duration_ps)).max(0)), time_ps: e.time_ps, runs: e.runs },
            }
        };
        // An op's executions in a stretch of the step are summed as they
        // come (a JAX step repeats a few hundred ops thousands of times),
        // then the stretches' parts are sorted and merged. (Sorting every
        // execution was half of the totals' time on the 272 MB jax_lstm
        // trace. Times and runs are not negative, so the order in which
        // they add up does not change their saturating sums.)
        let mut parts = summed_parts(&by_step[first[index]..first[index + 1]], part, slots);
        parts.par_sort_unstable_by_key(|p| p.key);
        // Per op (an XLA instruction, for XLA ops) the runs add up; per
        // node, they are the most any of its instructions ran.
        parts.dedup_by(|p, kept| {
            let same = (p.op, p.plane) == (kept.op, kept.plane);
            if same {
                kept.merge_runs(&p.sum);
            }
            same
        });
        parts.dedup_by(|p, kept| {
            let same = (node(p), p.plane) == (node(kept), kept.plane);
            if same {
                kept.sum.add(&p.sum);
                kept.sum.runs = kept.sum.runs.max(p.sum.runs);
            }
            same
        });
        // Runs: host executions count; device ones only for ops that have
        // none on the host (TPU and JAX programs), by node name.
        for group in parts.chunk_by_mut(|a, b| name_rank[node(a)] == name_rank[node(b)]) {
            if group.iter().any(|p| on_host[p.plane as usize]) {
                group.iter_mut().filter(|p| !on_host[p.plane as usize]).for_each(|p| p.sum.runs = 0);
            }
        }
        parts
            .into_iter()
            .map(|p| Total {
                node: node_of[p.op as usize],
                plane: p.plane,
                step,
                start_micros: p.sum.start_micros,
                end_micros: p.sum.end_micros,
                micros: micros(i128::from(p.sum.time_ps) + PS_PER_US / 2),
                runs: p.sum.runs,
            })
            .collect()
    };
    // Some steps at a time on all cores, given to the sink in order. A
    // piece's executions are dropped once its steps are summed, so that the
    // node model's records take their room: the steps outside every marker
    // are summed first and given last. (Eight steps at a time, the 910 of
    // the 272 MB jax_lstm x91 trace took 32 ms, the cores waiting at the
    // end of each eight; 64 at a time, 20 ms, and 32 were as fast in the
    // whole process, TF2 x25's peak 18 MB higher against 35 MB.)
    let has_executions = |i: usize| first[i] < first[i + 1];
    let outside = if has_executions(outside_index) { step_totals(&pieces, outside_index, new_slots().as_mut()) } else { Vec::new() };
    let mut free_order: Vec<usize> = (0..pieces.len()).collect();
    free_order.sort_by_key(|&p| piece_done[p]);
    let mut freed = 0;
    let mut count = 0;
    let mut batch: Vec<Total> = Vec::new();
    let indices: Vec<usize> = (0..outside_index).filter(|&i| has_executions(i)).collect();
    for chunk in indices.chunks(16 * rayon::current_num_threads()) {
        let done: Vec<Vec<Total>> = chunk.par_iter().map_init(new_slots, |slots, &i| step_totals(&pieces, i, slots.as_mut())).collect();
        done.into_iter().for_each(|t| batch.extend(t));
        if batch.len() >= SINK_TOTALS {
            sink(&names_for_sink, &batch);
            count += batch.len();
            batch.clear();
        }
        let last = chunk[chunk.len() - 1];
        while freed < free_order.len() && piece_done[free_order[freed]] <= last {
            pieces[free_order[freed]].executions = Executions::Heap(Vec::new());
            freed += 1;
        }
    }
    drop(pieces);
    batch.extend(outside);
    sink(&names_for_sink, &batch);
    count += batch.len();
    converted.total_count = count as u64;
}

/// Per node name, over some steps: how many steps it ran in, and its
/// first (step, device rank) and plane on an accelerator and on a host.
struct Placement {
    steps: Vec<u32>,
    last_seen: Vec<usize>,
    /// On an accelerator, on a host.
    first_on: [Vec<Option<FirstSeen>>; 2],
}

/// ((step, device rank), plane) of a name's first execution on a kind of
/// device.
type FirstSeen = ((usize, u32), u32);

impl Placement {
    fn new(names: usize) -> Placement {
        Placement { steps: vec![0; names], last_seen: vec![usize::MAX; names], first_on: [vec![None; names], vec![None; names]] }
    }

    /// An execution of `name` in step `step` on `plane`; a step's
    /// executions are added one after another.
    fn add(&mut self, name: usize, step: usize, device_rank: u32, plane: u32, on_host: bool) {
        if self.last_seen[name] != step {
            self.last_seen[name] = step;
            self.steps[name] += 1;
        }
        let key = (step, device_rank);
        let slot = &mut self.first_on[usize::from(on_host)][name];
        if slot.is_none_or(|(known, _)| key < known) {
            *slot = Some((key, plane));
        }
    }

    /// Two placements over different steps, as one.
    fn merge(mut self, other: Placement) -> Placement {
        self.steps.iter_mut().zip(&other.steps).for_each(|(a, b)| *a += b);
        for (mine, theirs) in self.first_on.iter_mut().zip(&other.first_on) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                if let Some((key, _)) = b
                    && a.is_none_or(|(known, _)| *key < known)
                {
                    *a = *b;
                }
            }
        }
        self
    }
}

/// Executions of one op in one step on one plane, summed as they merge.
#[derive(Clone, Copy, Default)]
struct Part {
    /// Where it goes among the step's totals.
    key: u128,
    op: u32,
    plane: u32,
    sum: Sum,
}

/// How many of a step's executions one thread sums before the sums are
/// sorted (a step without markers is the whole trace).
const PARTS_SUMMED_TOGETHER: usize = 1 << 16;

/// The most (op, plane) slots a table of [`Slots`] has (16 MB).
const MAX_SLOTS: usize = 1 << 22;

/// Executions `start..end` of piece `piece`.
#[derive(Clone, Copy, Debug, Default)]
struct Run {
    piece: u32,
    start: u32,
    end: u32,
}

impl Run {
    fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    /// (piece, index) of each execution, in order.
    fn executions(runs: &[Run]) -> impl Iterator<Item = (u32, u32)> + '_ {
        runs.iter().flat_map(|run| (run.start..run.end).map(move |i| (run.piece, i)))
    }
}

/// The parts of the executions of `runs` (`part` of each, by piece and
/// index), those of an (op, plane) summed in stretches where there are
/// `slots` to number them.
fn summed_parts(runs: &[Run], part: impl Fn(u32, u32) -> Part + Sync, slots: Option<&mut Slots>) -> Vec<Part> {
    let part = |(p, i): (u32, u32)| part(p, i);
    match slots {
        Some(slots) if runs.iter().map(Run::len).sum::<usize>() <= PARTS_SUMMED_TOGETHER => slots.sum(Run::executions(runs).map(part)),
        Some(slots) => stretches(runs, PARTS_SUMMED_TOGETHER)
            .par_iter()
            .map_init(|| slots.empty_like(), |slots, stretch| slots.sum(Run::executions(stretch).map(part)))
            .flatten_iter()
            .collect(),
        None => Run::executions(runs).map(part).collect(),
    }
}

/// `runs` cut into stretches of `size` executions (the last may have
/// fewer), in order.
fn stretches(runs: &[Run], size: usize) -> Vec<Vec<Run>> {
    let mut stretches = Vec::new();
    let (mut stretch, mut len) = (Vec::new(), 0);
    for run in runs {
        let mut start = run.start;
        while start < run.end {
            let end = run.end.min(start.saturating_add((size - len) as u32));
            stretch.push(Run { start, end, ..*run });
            len += (end - start) as usize;
            start = end;
            if len == size {
                stretches.push(std::mem::take(&mut stretch));
                len = 0;
            }
        }
    }
    if !stretch.is_empty() {
        stretches.push(stretch);
    }
    stretches
}

/// Where each (op, plane) is among the parts being summed
/// ([`Slots::sum`]), reused from step to step.
struct Slots {
    /// By `op * planes + plane`.
    at: Vec<u32>,
    planes: usize,
}

impl Slots {
    const NONE: u32 = u32::MAX;

    /// The table of `ops` ops on `planes` planes.
    fn new(ops: usize, planes: usize) -> Slots {
        Slots { at: vec![Slots::NONE; ops * planes], planes }
    }

    /// Another table of the same ops and planes.
    fn empty_like(&self) -> Slots {
        Slots { at: vec![Slots::NONE; self.at.len()], planes: self.planes }
    }

    fn slot(&self, part: &Part) -> usize {
        part.op as usize * self.planes + part.plane as usize
    }

    /// Parts, one per (op, plane), each the sum of those given.
    fn sum(&mut self, given: impl Iterator<Item = Part>) -> Vec<Part> {
        let mut parts: Vec<Part> = Vec::new();
        for part in given {
            let slot = self.slot(&part);
            match self.at[slot] {
                Slots::NONE => {
                    self.at[slot] = parts.len() as u32;
                    parts.push(part);
                }
                at => parts[at as usize].merge_runs(&part.sum),
            }
        }
        for part in &parts {
            let slot = self.slot(part);
            self.at[slot] = Slots::NONE;
        }
        parts
    }
}

impl Part {
    /// Another part of the same op: its runs add up.
    fn merge_runs(&mut self, other: &Sum) {
        self.sum.add(other);
        self.sum.runs = self.sum.runs.saturating_add(other.runs);
    }
}

/// Times and runs of executions.
#[derive(Clone, Copy, Default)]
struct Sum {
    start_micros: i64,
    end_micros: i64,
    /// Saturates at 106 days, which no op runs in a step.
    time_ps: i64,
    runs: i64,
}

impl Sum {
    fn add(&mut self, other: &Sum) {
        self.start_micros = self.start_micros.min(other.start_micros);
        self.end_micros = self.end_micros.max(other.end_micros);
        self.time_ps = self.time_ps.saturating_add(other.time_ps);
    }
}

/// Whole microseconds (floored) of a time in ps.
fn micros(ps: i128) -> i64 {
    // (128-bit division is a call; most times fit in 64 bits.)
    match i64::try_from(ps) {
        Ok(ps) => ps.div_euclid(PS_PER_US as i64),
        Err(_) => i64::try_from(ps.div_euclid(PS_PER_US)).unwrap_or(i64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// A step's parts summed per (op, plane) in stretches, in one table or
    /// in none, then sorted and merged, are the parts of every execution
    /// sorted and merged.
    #[test]
    fn parts_summed_in_stretches_merge_as_every_execution() {
        let mut rng = crate::test_random::XorShift::new(0x5107);
        let merged = |mut parts: Vec<Part>| {
            parts.sort_unstable_by_key(|p| p.key);
            parts.dedup_by(|p, kept| {
                let same = p.key == kept.key;
                if same {
                    kept.merge_runs(&p.sum);
                }
                same
            });
            parts.iter().map(|p| (p.op, p.plane, p.sum.start_micros, p.sum.end_micros, p.sum.time_ps, p.sum.runs)).collect::<Vec<_>>()
        };
        for count in [0, 1, 7, 5000, PARTS_SUMMED_TOGETHER + 1, 3 * PARTS_SUMMED_TOGETHER + 17] {
            let (ops, planes) = (1 + rng.below(300) as u32, 1 + rng.below(4) as u32);
            let executions: Vec<(u32, u32, i64, i64)> = (0..count)
                .map(|_| {
                    let start = rng.below(1_000_000) as i64;
                    (rng.below(u64::from(ops)) as u32, rng.below(u64::from(planes)) as u32, start, start + rng.below(5000) as i64)
                })
                .collect();
            // The executions in pieces of random sizes, given as runs of
            // random lengths.
            let mut pieces: Vec<&[(u32, u32, i64, i64)]> = Vec::new();
            let mut runs = Vec::new();
            let mut rest = &executions[..];
            while !rest.is_empty() {
                let (piece, after) = rest.split_at(rest.len().min(1 + rng.below(70_000) as usize));
                let mut start = 0;
                while start < piece.len() {
                    let end = piece.len().min(start + 1 + rng.below(20_000) as usize);
                    runs.push(Run { piece: pieces.len() as u32, start: start as u32, end: end as u32 });
                    start = end;
                }
                pieces.push(piece);
                rest = after;
            }
            let part = |p: u32, i: u32| {
                let (op, plane, start, end) = pieces[p as usize][i as usize];
                Part {
                    key: u128::from(op) << 32 | u128::from(plane),
                    op,
                    plane,
                    sum: Sum { start_micros: start, end_micros: end, time_ps: (end - start) * 1000, runs: 1 + (start % 3) },
                }
            };
            let every: Vec<(u32, u32)> = Run::executions(&runs).collect();
            assert_eq!(every.len(), count);
            assert!(every.iter().zip(&executions).all(|(&(p, i), e)| pieces[p as usize][i as usize] == *e), "runs give the executions in order");
            let expected = merged(summed_parts(&runs, part, None));
            assert_eq!(expected.len(), executions.iter().map(|e| (e.0, e.1)).collect::<HashSet<_>>().len());
            let mut slots = Slots::new(ops as usize, planes as usize);
            assert_eq!(merged(summed_parts(&runs, part, Some(&mut slots))), expected, "{count} executions");
            // (The table is left empty for the next step.)
            assert!(slots.at.iter().all(|&s| s == Slots::NONE));
            if count > PARTS_SUMMED_TOGETHER {
                assert!(summed_parts(&runs, part, Some(&mut slots)).len() > expected.len(), "summed in stretches");
                let cut = stretches(&runs, PARTS_SUMMED_TOGETHER);
                assert!(cut.iter().all(|s| s.iter().map(Run::len).sum::<usize>() <= PARTS_SUMMED_TOGETHER), "stretches are at most the size");
                assert_eq!(cut.iter().map(|s| Run::executions(s).collect::<Vec<_>>()).collect::<Vec<_>>().concat(), every, "stretches keep the order");
            }
        }
    }
}
