//! The XLA programs a trace ran: the optimized `HloProto` of each, which
//! JAX and TF write to the `/host:metadata` plane (one event metadata per
//! program, with `Hlo Proto` and `program_id` stats), decoded once for
//! every reader of the trace.
//!
//! An instruction is what device events name (`hlo_op`); its metadata
//! gives the framework op (`op_name`: JAX's name stack, or TF's op), and
//! the module's stack frames the Python lines that made it. The module's
//! schedule gives the order in which XLA runs, and numbers, its thunks,
//! which is how kernels inside a command buffer are told apart (see
//! [`Program::command_buffer`] and [`super::thunks`]). The `HloProto`'s
//! buffer assignment (what memory each instruction's results take) is kept
//! undecoded until asked for ([`Program::buffer_assignment`]): only
//! `rtfprof memory` reads it.

use prost::{DecodeError, Message};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::decode::{Plane, StatValue};
use super::names::derive_op_type;
use super::planes::PlaneKind;
use super::stats::{StatKind, StatKinds};
use super::thunks::CommandBuffer;
use crate::inputs::wire::{for_each_field, payload, skip};
use crate::proto::xla;
pub use crate::stats::records::Frame;

/// Every program of a trace, by program id.
#[derive(Debug, Default)]
pub struct Programs {
    by_id: FxHashMap<i64, Program>,
}

/// One XLA program (an `HloModule`).
#[derive(Debug)]
pub struct Program {
    pub id: i64,
    /// The module's name (`jit_step`).
    pub module: String,
    pub instructions: Vec<Instruction>,
    by_name: FxHashMap<String, u32>,
    /// The module itself, for the command buffers (made when first asked:
    /// only GPU traces need them).
    proto: xla::HloModuleProto,
    command_buffers: std::sync::OnceLock<FxHashMap<i64, CommandBuffer>>,
    /// The `HloProto`'s `buffer_assignment` as the trace holds it (empty
    /// if none), decoded when first asked.
    buffer_assignment_wire: Vec<u8>,
    buffer_assignment: std::sync::OnceLock<Result<xla::BufferAssignmentProto, DecodeError>>,
}

/// One HLO instruction, with what the views show of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// `fusion.25`, `custom-call.2`.
    pub name: String,
    /// `fusion`, `custom-call`, `copy`.
    pub opcode: String,
    /// XProf's category (XLA's `HloInstruction::ToCategory`): `loop
    /// fusion`, `custom-call`, `data formatting`, …
    pub category: String,
    /// The framework op it implements: the metadata's `op_name` (JAX's name
    /// stack, `jit(step)/grad/jvp(dense_0)/dot_general`), else
    /// `<module>/<instruction>`.
    pub node: String,
    /// The metadata's `op_name` as it is (empty if none): what XProf names
    /// the framework op in its tables.
    pub op_name: String,
    /// The framework op's type: the metadata's `op_type` (TF), else the
    /// primitive the name ends in (`dot_general`, as XProf types JAX ops),
    /// else the opcode.
    pub op_type: String,
    /// The Python frames that made it, innermost first, from the module's
    /// stack frame index or the metadata's source file and line; empty if
    /// the trace does not say.
    pub frames: Vec<Frame>,
}

impl Programs {
    /// The programs of every metadata plane among `planes`. A program
    /// whose `HloProto` does not decode is an error: the trace is damaged.
    pub fn from_planes(planes: &[Plane<'_>]) -> Result<Programs, DecodeError> {
        let mut protos: Vec<(i64, &[u8])> = Vec::new();
        for plane in planes.iter().filter(|p| PlaneKind::of(p.name) == PlaneKind::Metadata) {
            let stats = StatKinds::of(plane);
            for (id, meta) in &plane.event_metadata {
                let bytes = match stats.find(meta.stats.iter().copied(), StatKind::HloProto) {
                    Some(StatValue::Bytes(b)) => b,
                    _ => meta.metadata,
                };
                if !bytes.is_empty() {
                    let program = stats.find(meta.stats.iter().copied(), StatKind::ProgramId).and_then(StatValue::as_id).unwrap_or(*id);
                    protos.push((program, bytes));
                }
            }
        }
        // (Decoded on all cores: a small JAX trace is mostly its programs.
        // Kept in the order read, so that a program named twice is its
        // last and a damaged trace reports its first damaged program.)
        let read: Vec<Result<Option<Program>, DecodeError>> = protos.par_iter().map(|&(program, bytes)| Program::from_hlo_proto(program, bytes)).collect();
        let mut programs = Programs::default();
        for ((program, _), read) in protos.iter().zip(read) {
            if let Some(read) = read? {
                programs.by_id.insert(*program, read);
            }
        }
        Ok(programs)
    }

    /// The programs of an `XSpace`'s metadata planes (the other planes are
    /// not decoded).
    pub fn from_space(wire: &[u8]) -> Result<Programs, DecodeError> {
        let space = super::decode::Space::decode(wire)?;
        let mut planes = Vec::new();
        for plane in space.planes {
            if plane_name(plane)? == super::planes::METADATA_PLANE.as_bytes() {
                planes.push(Plane::decode(plane)?);
            }
        }
        Programs::from_planes(&planes)
    }

    pub fn get(&self, program_id: i64) -> Option<&Program> {
        self.by_id.get(&program_id)
    }

    /// The programs, by id.
    pub fn iter(&self) -> impl Iterator<Item = &Program> {
        let mut ids: Vec<&i64> = self.by_id.keys().collect();
        ids.sort_unstable();
        ids.into_iter().map(|id| &self.by_id[id])
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

impl Program {
    fn new(id: i64, module: xla::HloModuleProto) -> Program {
        let frames = StackFrames::new(module.stack_frame_index.as_ref());
        let mut instructions = Vec::new();
        for instruction in module.computations.iter().flat_map(|c| &c.instructions) {
            let metadata = instruction.metadata.clone().unwrap_or_default();
            let (node, op_type) = if metadata.op_name.is_empty() {
                (format!("{}/{}", module.name, instruction.name), instruction.opcode.clone())
            } else if !metadata.op_type.is_empty() {
                (metadata.op_name.clone(), metadata.op_type.clone())
            } else {
                let primitive = derive_op_type(&metadata.op_name);
                let primitive = primitive.split_once('[').map_or(primitive, |(head, _)| head);
                (metadata.op_name.clone(), primitive.to_owned())
            };
            let mut stack = frames.stack(metadata.stack_frame_id);
            if stack.is_empty() && !metadata.source_file.is_empty() {
                stack.push(Frame { file: metadata.source_file.clone(), line: metadata.source_line, function: String::new() });
            }
            instructions.push(Instruction {
                name: instruction.name.clone(),
                opcode: instruction.opcode.clone(),
                category: category(&instruction.opcode, &instruction.fusion_kind),
                node,
                op_name: metadata.op_name.clone(),
                op_type,
                frames: stack,
            });
        }
        let by_name = instructions.iter().enumerate().map(|(i, ins)| (ins.name.clone(), i as u32)).collect();
        Program {
            id,
            module: module.name.clone(),
            instructions,
            by_name,
            proto: module,
            command_buffers: std::sync::OnceLock::new(),
            buffer_assignment_wire: Vec::new(),
            buffer_assignment: std::sync::OnceLock::new(),
        }
    }

    /// XLA's buffer assignment of the program: its logical buffers, the
    /// allocations that hold them and the heap simulator's traces. A
    /// program saved without one has an empty one; bytes that do not
    /// decode are the error.
    pub fn buffer_assignment(&self) -> Result<&xla::BufferAssignmentProto, &DecodeError> {
        self.buffer_assignment.get_or_init(|| xla::BufferAssignmentProto::decode(self.buffer_assignment_wire.as_slice())).as_ref()
    }

    /// The module as the trace holds it.
    pub fn proto(&self) -> &xla::HloModuleProto {
        &self.proto
    }

    /// A program from an `HloModuleProto`'s bytes (as fuzzing feeds them).
    pub fn decode(id: i64, bytes: &[u8]) -> Result<Program, DecodeError> {
        Ok(Program::new(id, xla::HloModuleProto::decode(bytes)?))
    }

    /// A program from an `HloProto`'s bytes (module and buffer assignment,
    /// as the metadata plane holds them); `None` without a module.
    pub fn from_hlo_proto(id: i64, bytes: &[u8]) -> Result<Option<Program>, DecodeError> {
        let (Some(module), buffer_assignment) = split_hlo_proto(bytes)? else { return Ok(None) };
        let mut program = Program::new(id, module);
        program.buffer_assignment_wire = buffer_assignment;
        Ok(Some(program))
    }

    /// The instruction called `name` (an event's `hlo_op`).
    pub fn instruction(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// The command buffer `command_buffer_<first_thunk>` of this program,
    /// as XLA's GPU runtime makes it ([`super::thunks`]).
    pub fn command_buffer(&self, first_thunk: i64) -> Option<&CommandBuffer> {
        self.command_buffers
            .get_or_init(|| {
                let index: FxHashMap<i64, u32> =
                    self.proto.computations.iter().flat_map(|c| &c.instructions).enumerate().map(|(k, i)| (i.id, k as u32)).collect();
                super::thunks::command_buffers(&self.proto, &index)
            })
            .get(&first_thunk)
    }
}

/// An `HloProto`'s module, decoded, and its buffer assignment's bytes
/// (each a message field: repeats are concatenated, which decodes as
/// protobuf merges them). The buffer assignment, often as large as the
/// module, is left for [`Program::buffer_assignment`].
fn split_hlo_proto(bytes: &[u8]) -> Result<(Option<xla::HloModuleProto>, Vec<u8>), DecodeError> {
    let (mut module, mut buffer_assignment): (Vec<&[u8]>, Vec<u8>) = (Vec::new(), Vec::new());
    for_each_field(bytes, |tag, wire_type, buf| {
        match tag {
            1 => module.push(payload(tag, wire_type, buf)?),
            3 => buffer_assignment.extend_from_slice(payload(tag, wire_type, buf)?),
            _ => skip(tag, wire_type, buf)?,
        }
        Ok(())
    })?;
    let module = match module.as_slice() {
        [] => None,
        [one] => Some(xla::HloModuleProto::decode(*one)?),
        several => Some(xla::HloModuleProto::decode(several.concat().as_slice())?),
    };
    Ok((module, buffer_assignment))
}

/// A plane's name, read without decoding the rest of it.
fn plane_name(wire: &[u8]) -> Result<&[u8], DecodeError> {
    let mut name: &[u8] = &[];
    for_each_field(wire, |tag, wire_type, buf| {
        match tag {
            2 => name = payload(tag, wire_type, buf)?,
            _ => skip(tag, wire_type, buf)?,
        }
        Ok(())
    })?;
    Ok(name)
}

/// XLA's `HloInstruction::ToCategory`, which XProf shows: fusions by kind,
/// layout changes as `data formatting`, lone elementwise ops as
/// `non-fusion elementwise`, anything else by opcode.
pub fn category(opcode: &str, fusion_kind: &str) -> String {
    const ELEMENTWISE: &[&str] = &[
        "abs",
        "add",
        "and",
        "atan2",
        "bitcast-convert",
        "cbrt",
        "ceil",
        "clamp",
        "clz",
        "compare",
        "complex",
        "convert",
        "cos",
        "divide",
        "erf",
        "exp",
        "expm1",
        "floor",
        "imag",
        "is-finite",
        "log",
        "log1p",
        "logistic",
        "maximum",
        "minimum",
        "multiply",
        "negate",
        "not",
        "or",
        "popcnt",
        "power",
        "real",
        "reduce-precision",
        "remainder",
        "round-nearest-afz",
        "round-nearest-even",
        "rsqrt",
        "select",
        "shift-left",
        "shift-right-arithmetic",
        "shift-right-logical",
        "sign",
        "sin",
        "sqrt",
        "stochastic-convert",
        "subtract",
        "tan",
        "tanh",
        "xor",
    ];
    match opcode {
        "fusion" => match fusion_kind {
            "kLoop" => "loop fusion".into(),
            "kInput" => "input fusion".into(),
            "kOutput" => "output fusion".into(),
            "kCustom" => "custom fusion".into(),
            _ => "fusion".into(),
        },
        "transpose" | "copy" | "reshape" | "dynamic-reshape" => "data formatting".into(),
        _ if ELEMENTWISE.contains(&opcode) => "non-fusion elementwise".into(),
        _ => opcode.into(),
    }
}

/// A shape as XLA prints it with its layout (`ShapeUtil::HumanStringWithLayout`,
/// which XProf's memory viewer shows): `f32[8192,256]{1,0}`, `s32[]`,
/// `(f32[2]{0}, /*index=5*/u32[])`, tiles and memory spaces as
/// `{1,0:T(8,128)S(1)}`.
pub fn shape_text(shape: &xla::ShapeProto) -> String {
    let mut out = String::new();
    write_shape(&mut out, shape, 0);
    out
}

/// Deeper than this, a (damaged) shape is cut short with `...`.
const SHAPE_DEPTH: usize = 64;

fn write_shape(out: &mut String, shape: &xla::ShapeProto, depth: usize) {
    use std::fmt::Write;
    if depth > SHAPE_DEPTH {
        out.push_str("...");
        return;
    }
    if shape.element_type == xla::PrimitiveType::Tuple as i32 {
        out.push('(');
        for (i, element) in shape.tuple_shapes.iter().enumerate() {
            match i {
                0 => {}
                _ if i % 5 == 0 => {
                    let _ = write!(out, ", /*index={i}*/");
                }
                _ => out.push_str(", "),
            }
            write_shape(out, element, depth + 1);
        }
        out.push(')');
        return;
    }
    out.push_str(&type_name(shape.element_type));
    out.push('[');
    for (i, &dim) in shape.dimensions.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match shape.is_dynamic_dimension.get(i) {
            Some(true) if dim == i64::MIN => out.push('?'),
            Some(true) => {
                let _ = write!(out, "<={dim}");
            }
            _ => {
                let _ = write!(out, "{dim}");
            }
        }
    }
    out.push(']');
    let array = !matches!(xla::PrimitiveType::try_from(shape.element_type), Ok(xla::PrimitiveType::Token | xla::PrimitiveType::OpaqueType));
    if let (true, Some(layout)) = (array, &shape.layout) {
        let text = layout_text(layout, depth);
        // (Scalars print no `{}`.)
        if !(shape.dimensions.is_empty() && text == "{}") {
            out.push_str(&text);
        }
    }
}

/// XLA's `Layout::ToString`: minor-to-major order, then what differs from
/// the default after a colon.
fn layout_text(layout: &xla::LayoutProto, depth: usize) -> String {
    use std::fmt::Write;
    let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let mut out = format!("{{{}", join(&layout.minor_to_major));
    let mut colon = false;
    let mut part = |out: &mut String, text: &str| {
        if !std::mem::replace(&mut colon, true) {
            out.push(':');
        }
        out.push_str(text);
    };
    if !layout.tiles.is_empty() {
        let tiles: String = layout
            .tiles
            .iter()
            .map(|t| format!("({})", t.dimensions.iter().map(|&d| if d == i64::MIN { "*".to_owned() } else { d.to_string() }).collect::<Vec<_>>().join(",")))
            .collect();
        part(&mut out, &format!("T{tiles}"));
    }
    if layout.tail_padding_alignment_in_elements > 1 {
        part(&mut out, &format!("L({})", layout.tail_padding_alignment_in_elements));
    }
    for (value, mark) in [(layout.index_primitive_type, '#'), (layout.pointer_primitive_type, '*')] {
        if value != xla::PrimitiveType::Invalid as i32 {
            let name = if is_integral(value) { type_name(value) } else { "invalid".to_owned() };
            part(&mut out, &format!("{mark}({name})"));
        }
    }
    if layout.element_size_in_bits != 0 {
        part(&mut out, &format!("E({})", layout.element_size_in_bits));
    }
    if layout.memory_space != 0 {
        part(&mut out, &format!("S({})", layout.memory_space));
    }
    if !layout.split_configs.is_empty() {
        let mut configs = String::from("SC");
        for c in &layout.split_configs {
            let _ = write!(configs, "({}:{})", c.dimension, join(&c.split_indices));
        }
        part(&mut out, &configs);
    }
    if let Some(physical) = &layout.physical_shape {
        let mut inner = String::new();
        write_shape(&mut inner, physical, depth + 1);
        part(&mut out, &format!("P({inner})"));
    }
    if layout.dynamic_shape_metadata_prefix_bytes > 0 {
        part(&mut out, &format!("M({})", layout.dynamic_shape_metadata_prefix_bytes));
    }
    out.push('}');
    out
}

/// XLA's lower-case name of a primitive type (`f32`, `bf16`, `opaque`).
fn type_name(value: i32) -> String {
    match xla::PrimitiveType::try_from(value) {
        Ok(xla::PrimitiveType::OpaqueType) => "opaque".into(),
        Ok(t) if t != xla::PrimitiveType::Invalid => t.as_str_name().to_ascii_lowercase(),
        _ => "invalid".into(),
    }
}

fn is_integral(value: i32) -> bool {
    use xla::PrimitiveType as T;
    matches!(T::try_from(value), Ok(T::S1 | T::S2 | T::S4 | T::S8 | T::S16 | T::S32 | T::S64 | T::U1 | T::U2 | T::U4 | T::U8 | T::U16 | T::U32 | T::U64))
}

/// The bytes a shape takes without layout padding (XLA's `ShapeUtil::ByteSizeOf`
/// of the shape with its default layout): elements × their byte width
/// (sub-byte types take a byte), 8 bytes per tuple element (the tuple's
/// index table) or opaque value, 0 for a token.
pub fn unpadded_bytes(shape: &xla::ShapeProto) -> i64 {
    use xla::PrimitiveType as T;
    let width = match T::try_from(shape.element_type) {
        Ok(T::Tuple) => return 8i64.wrapping_mul(shape.tuple_shapes.len() as i64),
        Ok(T::OpaqueType) => return 8,
        Ok(T::Token | T::Invalid | T::Buffer) | Err(_) => return 0,
        Ok(T::C128) => 16,
        Ok(T::S64 | T::U64 | T::F64 | T::C64) => 8,
        Ok(T::S32 | T::U32 | T::F32) => 4,
        Ok(T::S16 | T::U16 | T::F16 | T::Bf16) => 2,
        Ok(_) => 1,
    };
    shape.dimensions.iter().fold(width, |bytes, &d| bytes.wrapping_mul(d))
}

/// The shape of the value at `index` of `shape` (a path into nested
/// tuples); `None` where the shape has no such element.
pub fn subshape<'s>(shape: &'s xla::ShapeProto, index: &[i64]) -> Option<&'s xla::ShapeProto> {
    index.iter().try_fold(shape, |s, &i| usize::try_from(i).ok().and_then(|i| s.tuple_shapes.get(i)))
}

/// A module's stack frame index: frame id → its frame, and its parent.
struct StackFrames {
    frames: Vec<(Frame, i32)>,
}

impl StackFrames {
    fn new(index: Option<&xla::StackFrameIndexProto>) -> StackFrames {
        let Some(index) = index else { return StackFrames { frames: Vec::new() } };
        fn text(names: &[String], id: i32) -> &str {
            usize::try_from(id - 1).ok().and_then(|i| names.get(i)).map_or("", String::as_str)
        }
        let frames = index
            .stack_frames
            .iter()
            .map(|frame| {
                let location = usize::try_from(frame.file_location_id - 1).ok().and_then(|i| index.file_locations.get(i));
                let shown = location.map_or_else(
                    || Frame { file: String::new(), line: 0, function: String::new() },
                    |l| Frame {
                        file: text(&index.file_names, l.file_name_id).to_owned(),
                        line: l.line,
                        function: text(&index.function_names, l.function_name_id).to_owned(),
                    },
                );
                (shown, frame.parent_frame_id)
            })
            .collect();
        StackFrames { frames }
    }

    /// The frames from `id` (1-based; 0 is none) up to the outermost,
    /// innermost first. A cycle ends the walk.
    fn stack(&self, mut id: i32) -> Vec<Frame> {
        let mut stack = Vec::new();
        while let Some((shown, parent)) = usize::try_from(id - 1).ok().and_then(|i| self.frames.get(i)) {
            if stack.len() > self.frames.len() {
                break;
            }
            stack.push(shown.clone());
            id = *parent;
        }
        stack
    }
}

/// An HLO instruction's opcode from its name (`copy-done.4` → `copy-done`),
/// for instructions known by name only (TPU events of a program the trace
/// does not hold).
pub fn opcode_of_name(instruction: &str) -> &str {
    let name = instruction.trim_start_matches('%');
    let name = name.split(' ').next().unwrap_or(name);
    match name.rsplit_once('.') {
        Some((head, suffix)) if suffix.parse::<u64>().is_ok() => head,
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_drop_the_instruction_number() {
        assert_eq!(opcode_of_name("copy-done.4"), "copy-done");
        assert_eq!(opcode_of_name("copy-done"), "copy-done");
        assert_eq!(opcode_of_name("%all-reduce = f32[5] all-reduce(...)"), "all-reduce");
        assert_eq!(opcode_of_name("ynn_fusion"), "ynn_fusion");
    }

    #[test]
    fn categories_are_xlas() {
        assert_eq!(category("fusion", "kLoop"), "loop fusion");
        assert_eq!(category("fusion", "kInput"), "input fusion");
        assert_eq!(category("fusion", "kCustom"), "custom fusion");
        assert_eq!(category("copy", ""), "data formatting");
        assert_eq!(category("custom-call", ""), "custom-call");
        assert_eq!(category("add", ""), "non-fusion elementwise");
        assert_eq!(category("broadcast", ""), "broadcast");
        assert_eq!(category("copy-done", ""), "copy-done");
    }

    /// XLA's `HumanStringWithLayout`: scalars without `{}`, a tuple's every
    /// fifth element numbered, dynamic dimensions, tiles and memory spaces.
    #[test]
    fn shapes_print_as_xla_prints_them() {
        let array = |t: xla::PrimitiveType, dims: &[i64], minor_to_major: &[i64]| xla::ShapeProto {
            element_type: t as i32,
            dimensions: dims.to_vec(),
            is_dynamic_dimension: vec![false; dims.len()],
            layout: Some(Box::new(xla::LayoutProto { minor_to_major: minor_to_major.to_vec(), ..Default::default() })),
            ..Default::default()
        };
        assert_eq!(shape_text(&array(xla::PrimitiveType::F32, &[8192, 256], &[1, 0])), "f32[8192,256]{1,0}");
        assert_eq!(shape_text(&array(xla::PrimitiveType::S32, &[], &[])), "s32[]");
        assert_eq!(shape_text(&xla::ShapeProto { layout: None, ..array(xla::PrimitiveType::Bf16, &[2], &[0]) }), "bf16[2]");
        let mut tiled = array(xla::PrimitiveType::F32, &[5, 1024], &[1, 0]);
        let layout = tiled.layout.as_mut().unwrap();
        layout.tiles = vec![xla::TileProto { dimensions: vec![8, 128] }, xla::TileProto { dimensions: vec![2, i64::MIN] }];
        layout.memory_space = 5;
        assert_eq!(shape_text(&tiled), "f32[5,1024]{1,0:T(8,128)(2,*)S(5)}");
        let mut dynamic = array(xla::PrimitiveType::U8, &[4, 7], &[1, 0]);
        dynamic.is_dynamic_dimension = vec![true, false];
        assert_eq!(shape_text(&dynamic), "u8[<=4,7]{1,0}");
        let tuple = xla::ShapeProto {
            element_type: xla::PrimitiveType::Tuple as i32,
            tuple_shapes: (0..6)
                .map(|_| array(xla::PrimitiveType::Pred, &[], &[]))
                .chain([xla::ShapeProto { element_type: xla::PrimitiveType::Tuple as i32, ..Default::default() }])
                .collect(),
            ..Default::default()
        };
        assert_eq!(shape_text(&tuple), "(pred[], pred[], pred[], pred[], pred[], /*index=5*/pred[], ())");
        assert_eq!(unpadded_bytes(&tuple), 7 * 8);
        assert_eq!(unpadded_bytes(&array(xla::PrimitiveType::Bf16, &[3, 5], &[1, 0])), 30);
        assert_eq!(subshape(&tuple, &[6]).map(shape_text).as_deref(), Some("()"));
        assert!(subshape(&tuple, &[7]).is_none() && subshape(&tuple, &[-1]).is_none());
    }

    #[test]
    fn stack_frames_are_innermost_first_and_stop_at_cycles() {
        use xla::stack_frame_index_proto::{FileLocation, StackFrame};
        let index = xla::StackFrameIndexProto {
            file_names: vec!["train.py".into(), "model.py".into()],
            function_names: vec!["<module>".into(), "step".into()],
            file_locations: vec![
                FileLocation { file_name_id: 1, function_name_id: 1, line: 30, ..Default::default() },
                FileLocation { file_name_id: 2, function_name_id: 2, line: 12, ..Default::default() },
            ],
            stack_frames: vec![StackFrame { file_location_id: 1, parent_frame_id: 0 }, StackFrame { file_location_id: 2, parent_frame_id: 1 }],
        };
        let frames = StackFrames::new(Some(&index));
        let shown: Vec<String> = frames.stack(2).iter().map(Frame::to_string).collect();
        assert_eq!(shown, ["model.py:12 step", "train.py:30 <module>"]);
        assert!(frames.stack(0).is_empty() && frames.stack(7).is_empty());
        let cyclic = xla::StackFrameIndexProto {
            stack_frames: vec![StackFrame { file_location_id: 1, parent_frame_id: 2 }, StackFrame { file_location_id: 1, parent_frame_id: 1 }],
            ..index
        };
        assert!(StackFrames::new(Some(&cyclic)).stack(1).len() <= 3);
    }
}
