//! Two bytes of step range, then a trace → `rtfprof cut`: as a PyTorch
//! trace (JSON, or gzip of it), its three streaming passes; as an XPlane
//! trace, the steps' window and the wire-level cut, and a cut to a window
//! of the two bytes (most inputs have no steps). Never a panic; a cut,
//! when there is one, is a trace that reads back and keeps no more events
//! than the trace had.
#![no_main]

use prost::Message;
use rtfprof::inputs::pytorch::Trace;
use rtfprof::inputs::pytorch::cut::{StepRange, cut_to_vec};
use rtfprof::inputs::xplane::XplaneFile;
use rtfprof::inputs::xplane::cut::{Keep, cut_to_vec as xplane_cut_to_vec};
use rtfprof::proto::tensorflow::profiler::XSpace;

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
    let Ok(file) = XplaneFile::open(&path) else { return };
    let reads = XSpace::decode(&file.bytes[..]).is_ok();
    let mut keeps = vec![Keep { window: (i128::from(first) * 1000, i128::from(last) * 1000 + 1), roots: a & 1 == 0 }];
    if let Ok(window) = rtfprof::steps::cut::window(&file, StepRange { first, last }) {
        assert!(!window.steps.is_empty());
        assert!(window.span_ps.0 <= window.span_ps.1);
        keeps.push(Keep { window: window.span_ps, roots: true });
    }
    for keep in keeps {
        if let Ok((bytes, cut)) = xplane_cut_to_vec(&file, keep) {
            assert!(cut.kept_events <= cut.total_events);
            assert!(bytes.len() <= file.bytes.len());
            if reads {
                XSpace::decode(bytes.as_slice()).expect("a cut of a trace reads back");
            }
        }
    }
});
