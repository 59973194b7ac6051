//! What `rtfprof memory` says of each XLA program against XProf 2.24.2's
//! `memory_viewer` (`testdata/xplane/expected/*.memory_viewer.json`, by
//! `tools/xplane/xprof_goldens.py`): every program of the committed JAX
//! fixtures (GPU, CPU), and the main program of the shared traces (GPU,
//! TPU) where `../shared` is present. XProf's numbers are MiB as doubles
//! (`bytes / 2^20`, the whole-run allocations' MiB added to the heap's):
//! rtfprof's bytes, converted the same way, must give the same doubles.

use crate::common;

use rtfprof::memory::programs::{self, Heap, ProgramMemory};
use serde_json::Value;

use common::testdata;

fn mib(bytes: i64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

/// XProf's MiB of a heap value that includes the whole-run allocations
/// (`BytesToMiB(heap) + BytesToMiB(indefinite)`).
fn heap_mib(bytes: i64, indefinite: i64) -> f64 {
    mib(bytes - indefinite) + mib(indefinite)
}

/// A JSON number, or a proto int64 written as a string; absent is 0 (proto3
/// JSON leaves defaults out).
fn num(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::String(s) => s.parse().unwrap(),
        v => v.as_f64().unwrap(),
    }
}

/// XProf's answer for a trace, its numbers kept as their text (read with
/// [`num`]): serde_json's own float parsing may be a unit in the last place
/// off, Rust's `str::parse` is not.
fn golden(name: &str) -> Value {
    let path = testdata().join("xplane/expected").join(format!("{name}.json"));
    let json = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut quoted = String::with_capacity(json.len() + json.len() / 4);
    let (mut in_string, mut escaped, mut in_number) = (false, false, false);
    for c in json.chars() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if in_number && !(c.is_ascii_digit() || "+-.eE".contains(c)) {
            quoted.push('"');
            in_number = false;
        } else if !in_number && (c.is_ascii_digit() || c == '-') {
            quoted.push('"');
            in_number = true;
        } else if c == '"' {
            in_string = true;
        }
        quoted.push(c);
    }
    serde_json::from_str(&quoted).unwrap()
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// XProf's `maxHeap` as rtfprof's buffers give it: buffers under 16 KiB
/// summed into one `small` entry at the end.
fn max_heap(heap: &Heap) -> Vec<Value> {
    let mut objects = Vec::new();
    let mut small = 0i64;
    for b in &heap.live_at_peak {
        if (b.bytes as u64) < programs::XPROF_SMALL_BUFFER_BYTES as u64 {
            small += b.bytes;
            continue;
        }
        objects.push(serde_json::json!({
            "numbered": objects.len(),
            "label": format!("{}: {} # {}", b.instruction, b.shape, b.op_name),
            "logicalBufferId": b.logical_buffer,
            "logicalBufferSizeMib": mib(b.bytes),
            "unpaddedShapeMib": mib(b.unpadded_bytes),
            "instructionName": b.instruction_with_index(),
            "shapeString": b.shape,
            "tfOpName": b.op_name,
            "groupName": b.kind.as_str(),
            "opCode": b.opcode,
        }));
    }
    if small != 0 {
        objects.push(serde_json::json!({
            "numbered": objects.len(),
            "label": format!("small (<{} bytes)", programs::XPROF_SMALL_BUFFER_BYTES),
            "logicalBufferId": -1,
            "logicalBufferSizeMib": mib(small),
            "unpaddedShapeMib": 0.0,
        }));
    }
    objects
}

/// Every field rtfprof shows of `ours` equals XProf's answer `xprof` (null
/// where XProf failed on the program).
fn check(name: &str, ours: &ProgramMemory, xprof: &Value) {
    if xprof.is_null() {
        assert!(ours.heap.is_err(), "{name}: XProf fails on it, rtfprof does not");
        return;
    }
    let heap = ours.heap.as_ref().unwrap_or_else(|e| panic!("{name}: {e}"));
    let add = heap.indefinite_bytes;
    assert_eq!(text(&xprof["moduleName"]), ours.module, "{name}");
    assert_eq!(text(&xprof["entryComputationName"]), heap.entry_computation, "{name}");
    assert_eq!(num(&xprof["peakHeapMib"]), heap_mib(heap.peak_bytes, add), "{name}: peak");
    assert_eq!(num(&xprof["peakUnpaddedHeapMib"]), heap_mib(heap.peak_unpadded_bytes, add), "{name}: unpadded peak");
    // XProf's position is the event that reached the peak, while its heap
    // sizes are taken before each event: heapSizes[position] is the heap
    // before the peak, the peak is one point later. An off-by-one in XProf,
    // we think, kept as it is (rtfprof's curve is XProf's).
    assert_eq!(num(&xprof["peakHeapSizePosition"]) as usize, heap.peak_event, "{name}: peak event");
    if heap.curve.len() > heap.peak_event + 1 && heap.peak_bytes != heap.indefinite_bytes {
        assert_eq!(heap.curve[heap.peak_event + 1].bytes, heap.peak_bytes, "{name}: the point after the peak event");
    }
    let list = |key: &str| xprof[key].as_array().cloned().unwrap_or_default();
    let sizes: Vec<f64> = list("heapSizes").iter().map(num).collect();
    assert_eq!(sizes, heap.curve.iter().map(|p| heap_mib(p.bytes, add)).collect::<Vec<_>>(), "{name}: heap sizes");
    let unpadded: Vec<f64> = list("unpaddedHeapSizes").iter().map(num).collect();
    assert_eq!(unpadded, heap.curve.iter().map(|p| heap_mib(p.unpadded_bytes, add)).collect::<Vec<_>>(), "{name}: unpadded heap sizes");
    let names: Vec<String> = list("hloInstructionNames").iter().map(|v| v.as_str().unwrap().to_owned()).collect();
    assert_eq!(names, heap.curve.iter().map(|p| p.instruction.clone()).collect::<Vec<_>>(), "{name}: instructions");
    let mine = max_heap(heap);
    let theirs = list("maxHeap");
    assert_eq!(theirs.len(), mine.len(), "{name}: buffers at the peak");
    for (m, t) in mine.iter().zip(&theirs) {
        for (key, value) in m.as_object().unwrap() {
            match value {
                Value::String(s) => assert_eq!(text(&t[key]), s, "{name}: {key} of {m}"),
                v => assert_eq!(num(&t[key]), v.as_f64().unwrap(), "{name}: {key} of {m}"),
            }
        }
    }
    for (key, bytes) in [
        ("totalBufferAllocationMib", heap.total_allocation_bytes),
        ("indefiniteBufferAllocationMib", heap.indefinite_allocation_bytes),
        ("entryComputationParametersMib", heap.parameter_bytes),
        ("maybeLiveOutMib", heap.output_bytes),
        ("nonReusableMib", heap.non_reusable_bytes),
    ] {
        assert_eq!(num(&xprof[key]), mib(bytes), "{name}: {key}");
    }
    assert_eq!(list("indefiniteLifetimes").len(), heap.indefinite_allocations, "{name}: indefinite allocations");
}

/// `jit_step(666811)`, as XProf names a program (ids unsigned).
fn xprof_name(p: &ProgramMemory) -> String {
    format!("{}({})", p.module, p.program_id as u64)
}

fn trace_programs(trace: &std::path::Path) -> Vec<ProgramMemory> {
    programs::of_trace(&std::fs::read(trace).unwrap()).unwrap()
}

/// Every program of every committed JAX fixture is XProf's, field by field.
#[test]
fn every_program_of_the_fixtures_is_xprofs() {
    let fixtures = ["jax_gpu_mlp", "jax_gpu_mlp_nocb", "jax_gpu_cnn", "jax_gpu_lstm", "jax_gpu_lstm_nocb", "jax_gpu_xfer", "jax_jit"];
    let mut checked = 0;
    for fixture in fixtures {
        let trace = testdata().join(format!("xplane/{fixture}/plugins/profile/run0/host0.xplane.pb"));
        let golden = golden(&format!("{fixture}.host0.memory_viewer"));
        let golden = golden.as_object().unwrap();
        let ours = trace_programs(&trace);
        let names: Vec<String> = ours.iter().map(xprof_name).collect();
        let mut expected: Vec<&String> = golden.keys().collect();
        expected.sort();
        let mut listed: Vec<&String> = names.iter().collect();
        listed.sort();
        assert_eq!(listed, expected, "{fixture}: programs");
        for (program, name) in ours.iter().zip(&names) {
            check(&format!("{fixture} {name}"), program, &golden[name]);
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} programs");
}

/// The main program of each shared trace (JAX on an H200, JAX on TPU) is
/// XProf's; skipped where `../shared` is absent.
#[test]
fn the_shared_traces_main_programs_are_xprofs() {
    for (name, trace) in common::shared_xplane_goldens() {
        let xprof = golden(&format!("{name}.memory_viewer"));
        let main = xprof["main"].as_str().unwrap();
        let ours = trace_programs(&trace);
        let program = ours.iter().find(|p| xprof_name(p) == main).unwrap_or_else(|| panic!("{name}: no {main}"));
        check(&format!("{name} {main}"), program, &xprof[main]);
    }
}

/// `rtfprof memory --output json` lists the programs that ran (the
/// fixtures' `jit_step`), with the library's numbers; the text says what
/// the trace tells.
#[test]
fn the_cli_lists_the_programs_that_ran() {
    let trace = testdata().join("xplane/jax_gpu_cnn");
    let doc = common::rtfprof(["memory", &format!("--xplane_path={}", trace.display())]).json();
    let listed = doc["programs"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let ours = trace_programs(&testdata().join("xplane/jax_gpu_cnn/plugins/profile/run0/host0.xplane.pb"));
    let step = ours.iter().find(|p| p.module == "jit_step").unwrap();
    let heap = step.heap.as_ref().unwrap();
    let p = &listed[0];
    assert_eq!((p["module"].as_str(), p["program_id"].as_i64()), (Some("jit_step"), Some(step.program_id)));
    assert_eq!(p["peak_bytes"].as_i64(), Some(heap.peak_bytes));
    assert_eq!(p["peak_instruction"].as_str(), Some(heap.curve[heap.peak_event].instruction.as_str()));
    assert_eq!(p["live_at_peak"].as_array().unwrap().len(), heap.live_at_peak.len());
    let bytes: i64 = p["live_at_peak"].as_array().unwrap().iter().map(|b| b["bytes"].as_i64().unwrap()).sum();
    assert_eq!(bytes, heap.peak_bytes, "the buffers live at the peak add up to it");
    assert_eq!(p["curve"].as_array().unwrap().len(), heap.curve.len());

    let text = common::rtfprof(["memory".into(), format!("--xplane_path={}", trace.display()), "--step=8".into()]).stdout();
    assert!(text.contains("The allocator's events above name no op"), "{text}");
    let line = format!("program jit_step ({}): peak ", step.program_id);
    assert!(text.contains(&line), "{text}");
    assert!(text.contains("largest buffers at the peak (10 of "), "{text}");
}

/// The text for a JAX trace, allocator replay and programs (written by
/// rtfprof itself: rerun with `RTFPROF_BLESS=1` and review the diff); the
/// book shows it (docs/book/src/commands/memory.md).
#[test]
fn jax_text_snapshot() {
    let args: Vec<String> = ["memory", "--xplane_path=testdata/xplane/jax_gpu_mlp", "--step=8", "--max_depth=4"].map(String::from).to_vec();
    let actual = common::rtfprof(&args).current_dir(env!("CARGO_MANIFEST_DIR")).stdout();
    let path = testdata().join("expected/jax_gpu_mlp.memory.txt");
    if std::env::var_os("RTFPROF_BLESS").is_some() {
        std::fs::write(&path, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} missing: run with RTFPROF_BLESS=1", path.display()));
    assert!(expected == actual, "memory text changed; if intended, rerun with RTFPROF_BLESS=1 and review the diff\n{actual}");
}
