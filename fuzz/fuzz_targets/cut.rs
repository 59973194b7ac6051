//! Three bytes of selection (a range of steps or of time, devices kept,
//! a minimum duration), then a PyTorch trace (JSON, or gzip of it) →
//! `rtfprof cut`'s streaming passes: never a panic; a cut, when there is
//! one, is a trace that reads back and keeps no more events than the trace
//! had.
#![no_main]

use rtfprof::inputs::pytorch::Trace;
use rtfprof::inputs::pytorch::cut::{Selection, StepRange, TimeRange, Window, cut_to_vec};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let [a, b, mode, trace @ ..] = data else { return };
    let (first, last) = (u64::from(*a.min(b)), u64::from(*a.max(b)));
    let window = if mode & 1 == 0 {
        Window::Steps(StepRange { first, last })
    } else {
        // Microseconds here: fuzzed traces are short.
        Window::Time(TimeRange { start_ns: first as i64 * 1000, end_ns: (last as i64 + 1) * 1000 })
    };
    let devices = (mode & 2 != 0).then(|| vec![i64::from(mode >> 4)]);
    let min_dur_ns = (mode & 4 != 0).then(|| i64::from(*b) * 100);
    let path = std::env::temp_dir().join(format!("rtfprof-fuzz-cut-{}", std::process::id()));
    std::fs::write(&path, trace).expect("a temporary file");
    if let Ok((bytes, cut)) = cut_to_vec(&path, &Selection { window, devices, min_dur_ns }) {
        assert!(cut.kept_events + cut.too_short <= cut.total_events);
        assert!(mode & 1 == 1 || !cut.steps.is_empty());
        // A cut of a trace that reads is a trace that reads.
        if Trace::from_bytes(trace).is_ok() {
            Trace::from_bytes(&bytes).expect("a cut of a trace reads back");
        }
    }
});
