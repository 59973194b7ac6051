//! `rtfprof memory --output json:outfile=PATH`:
//!
//! ```text
//! {"schema_version": 1, "steps": [{"step": N, "allocators": {"<name>": {
//!   "peak_bytes": int, "peak_micros": int, "live_at_peak": {"<node>": bytes},
//!   "curve": [[micros, bytes], ...]}}}],
//!  "programs": [{"job": str, "program_id": int, "module": str,
//!   "entry_computation": str, "peak_bytes": int, "peak_unpadded_bytes": int,
//!   "indefinite_bytes": int, "peak_event": int, "peak_instruction": str,
//!   "parameter_bytes": int, "output_bytes": int, "non_reusable_bytes": int,
//!   "total_allocation_bytes": int, "indefinite_allocation_bytes": int,
//!   "indefinite_allocations": int,
//!   "live_at_peak": [{"logical_buffer": int, "instruction": str,
//!     "shape_index": [int], "opcode": str, "op_name": str, "shape": str,
//!     "bytes": int, "unpadded_bytes": int, "kind": str}],
//!   "curve": [[instruction, bytes, unpadded_bytes], ...]}]}
//! ```
//!
//! Allocators are in name order, live nodes most bytes first; times are µs
//! from the step's start. Written compactly on one line: curves are long.
//!
//! `programs` (XPlane traces: [`crate::memory::programs`]) lists the XLA programs
//! that ran, largest peak first; a program XProf's memory viewer fails on
//! has `"error"` instead of its numbers. Its buffers are in XProf's order
//! (the whole-run ones by allocation, then the heap's as they became live);
//! `kind` is XProf's group (`Parameter`, `Output`, `Thread-local`,
//! `Constant`, `Temporary`); its curve has the bytes before each heap
//! simulator event, then after the last.
//!
//! The layout: `schemas/memory.schema.json` (checked by
//! `tests/integration/json_schemas.rs`).

use std::io::Write;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::memory::programs::{Buffer, ProgramMemory};
use crate::memory::{AllocatorMemory, LiveNode, MemoryProfile};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    steps: Vec<Step<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    programs: Vec<Program<'a>>,
}

#[derive(Serialize)]
struct Program<'a> {
    job: &'a str,
    /// (Unsigned: TPU programs use all 64 bits.)
    program_id: u64,
    module: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(flatten)]
    heap: Option<HeapJson<'a>>,
}

#[derive(Serialize)]
struct HeapJson<'a> {
    entry_computation: &'a str,
    peak_bytes: i64,
    peak_unpadded_bytes: i64,
    indefinite_bytes: i64,
    peak_event: usize,
    peak_instruction: &'a str,
    parameter_bytes: i64,
    output_bytes: i64,
    non_reusable_bytes: i64,
    total_allocation_bytes: i64,
    indefinite_allocation_bytes: i64,
    indefinite_allocations: usize,
    live_at_peak: Vec<BufferJson<'a>>,
    curve: Vec<(&'a str, i64, i64)>,
}

#[derive(Serialize)]
struct BufferJson<'a> {
    logical_buffer: i64,
    instruction: &'a str,
    shape_index: &'a [i64],
    opcode: &'a str,
    op_name: &'a str,
    shape: &'a str,
    bytes: i64,
    unpadded_bytes: i64,
    kind: &'static str,
}

impl<'a> Program<'a> {
    fn new(p: &'a ProgramMemory) -> Program<'a> {
        let buffer = |b: &'a Buffer| BufferJson {
            logical_buffer: b.logical_buffer,
            instruction: &b.instruction,
            shape_index: &b.shape_index,
            opcode: &b.opcode,
            op_name: &b.op_name,
            shape: &b.shape,
            bytes: b.bytes,
            unpadded_bytes: b.unpadded_bytes,
            kind: b.kind.as_str(),
        };
        let (error, heap) = match &p.heap {
            Err(why) => (Some(why.as_str()), None),
            Ok(h) => (
                None,
                Some(HeapJson {
                    entry_computation: &h.entry_computation,
                    peak_bytes: h.peak_bytes,
                    peak_unpadded_bytes: h.peak_unpadded_bytes,
                    indefinite_bytes: h.indefinite_bytes,
                    peak_event: h.peak_event,
                    peak_instruction: h.curve.get(h.peak_event).map_or("", |p| p.instruction.as_str()),
                    parameter_bytes: h.parameter_bytes,
                    output_bytes: h.output_bytes,
                    non_reusable_bytes: h.non_reusable_bytes,
                    total_allocation_bytes: h.total_allocation_bytes,
                    indefinite_allocation_bytes: h.indefinite_allocation_bytes,
                    indefinite_allocations: h.indefinite_allocations,
                    live_at_peak: h.live_at_peak.iter().map(buffer).collect(),
                    curve: h.curve.iter().map(|p| (p.instruction.as_str(), p.bytes, p.unpadded_bytes)).collect(),
                }),
            ),
        };
        Program { job: &p.job, program_id: p.program_id as u64, module: &p.module, error, heap }
    }
}

#[derive(Serialize)]
struct Step<'a> {
    step: i64,
    allocators: Allocators<'a>,
}

struct Allocators<'a>(&'a [AllocatorMemory]);

impl Serialize for Allocators<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for a in self.0 {
            map.serialize_entry(
                &a.name,
                &Allocator { peak_bytes: a.peak_bytes, peak_micros: a.peak_micros, live_at_peak: Live(&a.live_at_peak), curve: &a.curve },
            )?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct Allocator<'a> {
    peak_bytes: i64,
    peak_micros: i64,
    live_at_peak: Live<'a>,
    curve: &'a [(i64, i64)],
}

struct Live<'a>(&'a [LiveNode]);

impl Serialize for Live<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for node in self.0 {
            map.serialize_entry(&node.name, &node.bytes)?;
        }
        map.end()
    }
}

pub fn write<W: Write>(profile: &MemoryProfile, mut out: W) -> std::io::Result<W> {
    let document = Document {
        schema_version: SCHEMA_VERSION,
        steps: profile.steps.iter().map(|s| Step { step: s.step, allocators: Allocators(&s.allocators) }).collect(),
        programs: profile.programs.iter().map(Program::new).collect(),
    };
    serde_json::to_writer(&mut out, &document)?;
    out.write_all(b"\n")?;
    Ok(out)
}
