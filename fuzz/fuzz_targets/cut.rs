//! Two bytes of step range, then a PyTorch trace (JSON, or gzip of it) →
//! `rtfprof cut`'s three streaming passes: never a panic; a cut, when
//! there is one, is a trace that reads back and keeps no more events than
//! the trace had.
#![no_main]

use rtfprof::inputs::pytorch::Trace;
use rtfprof::inputs::pytorch::cut::{StepRange, cut_to_vec};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let [a, b, trace @ ..] = data else { return };
    let (first, last) = (u64::from(*a.min(b)), u64::from(*a.max(b)));
    let path = std::env::temp_dir().join(format!("rtfprof-fuzz-cut-{}", std::process::id()));
    std::fs::write(&path, trace).expect("a temporary file");
    if let Ok((bytes, cut)) = cut_to_vec(&path, StepRange { first, last }) {
        assert!(cut.kept_events <= cut.total_events);
        assert!(!cut.steps.is_empty());
        // A cut of a trace that reads is a trace that reads.
        if Trace::from_bytes(trace).is_ok() {
            Trace::from_bytes(&bytes).expect("a cut of a trace reads back");
        }
    }
});
