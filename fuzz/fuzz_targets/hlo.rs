//! XSpace bytes → the XLA programs of its `/host:metadata` plane
//! (`HloProto` decoding, instructions, Python frames) → every command
//! buffer XLA's GPU runtime would make of each (thunk ids, the command-buffer
//! pass, conditionals' branch graphs) → nested nodes assigned from a
//! synthetic launch with memsets among them; and each
//! program's memory from its buffer assignment (the heap simulator's
//! replay, `rtfprof memory`'s text and JSON of it). Seeded with the JAX GPU
//! fixtures, whose bytes are mostly their programs, so most mutations land
//! in an `HloProto`.
#![no_main]

use rtfprof::inputs::xplane::hlo::Programs;
use rtfprof::inputs::xplane::{Plane, Space};
use rtfprof::memory::programs::ProgramMemory;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(space) = Space::decode(data) else { return };
    let Ok(planes) = space.planes.iter().map(|p| Plane::decode(p)).collect::<Result<Vec<_>, _>>() else { return };
    let Ok(programs) = Programs::from_planes(&planes) else { return };
    let memory: Vec<ProgramMemory> = programs.iter().map(|p| ProgramMemory::of("", p, true)).collect();
    let profile = rtfprof::memory::MemoryProfile { steps: Vec::new(), programs: memory };
    let _ = rtfprof::outputs::memory::text::render_programs(&profile.programs, true, &Default::default());
    let _ = rtfprof::outputs::memory::json::write(&profile, Vec::new());
    for program in programs.iter() {
        for instruction in &program.instructions {
            let _ = (instruction.frames.iter().map(|f| f.to_string()).count(), &instruction.category);
        }
        for first in 0..=program.instructions.len() as i64 + 1 {
            if let Some(buffer) = program.command_buffer(first) {
                let nodes: Vec<u32> = (0..buffer.commands.len() as u32 + 3).collect();
                let launch: Vec<(i128, u32)> = nodes.iter().rev().map(|&n| (i128::from(n), n)).collect();
                let memsets = nodes.iter().copied().filter(|n| n % 3 == 0).collect();
                let _ = buffer.child_nodes(&nodes, &[launch], &memsets);
            }
        }
    }
});
