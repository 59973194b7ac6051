//! One byte of window size, then a trace → `rtfprof steps` read a window
//! of steps at a time: the plan's three streaming passes over the file, each
//! window read back, and the windows' analysis. Never a panic; where the
//! trace has steps and reads, every window reads too.
#![no_main]

use rtfprof::inputs::pytorch::Trace;
use rtfprof::inputs::pytorch::windows::{Budget, Windows};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let [size, trace @ ..] = data else { return };
    let path = std::env::temp_dir().join(format!("rtfprof-fuzz-windows-{}", std::process::id()));
    std::fs::write(&path, trace).expect("a temporary file");
    let budget = if size & 1 == 0 { Budget::Steps(usize::from(size >> 1)) } else { Budget::Bytes(u64::from(size >> 1)) };
    let Ok(Some(windows)) = Windows::plan(&path, budget) else { return };
    let reads = Trace::from_bytes(trace).is_ok();
    for k in 0..windows.windows.len() {
        let window = windows.read(k);
        assert!(!reads || window.is_ok(), "window {k} of a trace that reads: {:?}", window.err());
    }
    let _ = rtfprof::steps::windowed::analyze_windows("r", &windows);
});
