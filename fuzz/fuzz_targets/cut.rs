//! Three bytes of selection (a range of steps or of time, devices kept,
//! a minimum duration), then a trace → `rtfprof cut`: as a PyTorch trace
//! (JSON, or gzip of it), its streaming passes; as an XPlane trace, the
//! steps' window and the wire-level cut, and a cut to a window of the two
//! range bytes (most inputs have no steps). Never a panic; a cut, when
//! there is one, is a trace that reads back and keeps no more events than
//! the trace had.
#![no_main]

use prost::Message;
use rtfprof::inputs::pytorch::Trace;
use rtfprof::inputs::pytorch::cut::{Selection, StepRange, TimeRange, Window, cut_to_vec};
use rtfprof::inputs::xplane::XplaneFile;
use rtfprof::inputs::xplane::cut::{Keep, cut_to_vec as xplane_cut_to_vec};
use rtfprof::proto::tensorflow::profiler::XSpace;

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
    let xplane_devices = devices.clone();
    if let Ok((bytes, cut)) = cut_to_vec(&path, &Selection { window, devices, min_dur_ns }) {
        assert!(cut.kept_events + cut.too_short <= cut.total_events);
        assert!(mode & 1 == 1 || !cut.steps.is_empty());
        // A cut of a trace that reads is a trace that reads.
        if Trace::from_bytes(trace).is_ok() {
            Trace::from_bytes(&bytes).expect("a cut of a trace reads back");
        }
    }
    let Ok(file) = XplaneFile::open(&path) else { return };
    let reads = XSpace::decode(&file.bytes[..]).is_ok();
    let mut keeps = vec![Keep::window((i128::from(first) * 1000, i128::from(last) * 1000 + 1), a & 1 == 0)];
    if let Ok(window) = rtfprof::steps::cut::window(&file, StepRange { first, last }) {
        assert!(!window.steps.is_empty());
        assert!(window.span_ps.0 <= window.span_ps.1);
        keeps.push(Keep::window(window.span_ps, true));
    }
    let min_dur_ps = min_dur_ns.map(|ns| i128::from(ns) * 1000);
    keeps.push(Keep { devices: xplane_devices.as_deref(), min_dur_ps, ..keeps[0] });
    for keep in keeps {
        if let Ok((bytes, cut)) = xplane_cut_to_vec(&file, keep) {
            assert!(cut.kept_events + cut.other_devices + cut.too_short <= cut.total_events);
            assert!(bytes.len() <= file.bytes.len());
            if reads {
                XSpace::decode(bytes.as_slice()).expect("a cut of a trace reads back");
            }
        }
    }
});
