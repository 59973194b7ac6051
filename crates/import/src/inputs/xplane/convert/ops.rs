//! Ops by dense id: what an event runs (node, op type, XLA instruction
//! and program), interned once so that executions carry a number; and
//! the op of each instruction of the trace's XLA programs, interned
//! before the lines are read.

use rustc_hash::FxHashMap;

use crate::inputs::xplane::hlo::{Instruction, Programs};

/// An op an event runs: node name, op type, XLA instruction ("" if none)
/// and its program ([`NO_PROGRAM`] if none).
pub(super) type Op<'a> = (&'a str, &'a str, &'a str, i64);

/// The program of an op that is no XLA instruction.
pub(super) const NO_PROGRAM: i64 = i64::MIN;

/// Ops by dense id, so that executions and sums carry a number, not three
/// strings hashed again for every execution.
#[derive(Default)]
pub(super) struct OpTable<'a> {
    pub(super) ops: Vec<Op<'a>>,
    ids: FxHashMap<Op<'a>, u32>,
}

impl<'a> OpTable<'a> {
    pub(super) fn intern(&mut self, op: Op<'a>) -> u32 {
        *self.ids.entry(op).or_insert_with(|| {
            self.ops.push(op);
            (self.ops.len() - 1) as u32
        })
    }
}

/// Marks an op id as one of its line's own [`OpTable`] (GPU kernels, named
/// by their stats), renumbered once all lines are read. (Ops are far fewer
/// than 2^31.)
pub(super) const LINE_OP: u32 = 1 << 31;

/// Marks an op id as one of its line's command-buffer child nodes
/// ([`LineResult::children`](super::plane_context::LineResult::children)),
/// resolved once all lines are read.
pub(super) const CHILD_OP: u32 = 1 << 30;

/// The op of each instruction of each XLA program, interned before the
/// lines are read.
pub(super) struct ProgramOps<'p> {
    pub(super) programs: &'p Programs,
    /// Per program id, by instruction index.
    ops: FxHashMap<i64, Vec<u32>>,
}

impl<'p> ProgramOps<'p> {
    pub(super) fn new(programs: &'p Programs, table: &mut OpTable<'p>) -> ProgramOps<'p> {
        let ops = programs
            .iter()
            .map(|program| {
                let ids =
                    program.instructions.iter().map(|ins| table.intern((ins.node.as_str(), ins.op_type.as_str(), ins.name.as_str(), program.id))).collect();
                (program.id, ids)
            })
            .collect();
        ProgramOps { programs, ops }
    }

    /// The op of `instruction` of `program`, if the trace holds both.
    pub(super) fn op(&self, program: i64, instruction: &str) -> Option<u32> {
        self.instruction_op(program, self.programs.get(program)?.instruction(instruction)?)
    }

    /// The op of `program`'s instruction number `index`.
    pub(super) fn instruction_op(&self, program: i64, index: u32) -> Option<u32> {
        self.ops.get(&program)?.get(index as usize).copied()
    }

    /// The op and the instruction called `instruction` of `program`.
    pub(super) fn instruction(&self, program: i64, instruction: &str) -> Option<(u32, &'p Instruction)> {
        self.instruction_at(program, self.programs.get(program)?.instruction(instruction)?)
    }

    /// The op and the instruction number `index` of `program`.
    pub(super) fn instruction_at(&self, program: i64, index: u32) -> Option<(u32, &'p Instruction)> {
        let instruction = self.programs.get(program)?.instructions.get(index as usize)?;
        Some((self.instruction_op(program, index)?, instruction))
    }
}
