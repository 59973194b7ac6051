//! A mode byte, then a PyTorch trace (JSON, or gzip of it) → `Trace`,
//! read at once (mode even) or a few bytes per `read` (odd: every token
//! meets a buffer refill), and with its events split into segments of a
//! few bytes parsed on two threads (the same result) → `key_averages`
//! grouped and not → `table` with torch's defaults and with a sort, a
//! row limit, narrow columns and top-level rows; the model's links and
//! steps.
#![no_main]

use rtfprof::inputs::pytorch::Trace;
use rtfprof::key_averages::key_averages;
use rtfprof::outputs::torch_table::{TableOptions, table};

struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.step = self.step % 5 + 1;
        let n = self.step.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&mode, data)) = data.split_first() else { return };
    let trace = if mode % 2 == 0 { Trace::from_bytes(data) } else { Trace::from_reader(Trickle { bytes: data, step: 0 }) };
    // traceEvents in segments on two threads, as large files are read:
    // the same trace, or the same error. (Up to 64 segments an input, so
    // that large inputs are not slow.)
    let split = Trace::from_bytes_split(data, (1 + mode as usize % 61).max(data.len() / 64), 2);
    assert!(split == trace, "split: {:?}, whole: {:?}", split.as_ref().err(), trace.as_ref().err());
    let trace = match trace {
        Ok(trace) => trace,
        Err(message) => {
            assert!(!message.is_empty() && !message.contains('\n'), "{message:?}");
            return;
        }
    };
    let _ = (trace.steps(), trace.ops_by_external_id(), trace.launches_by_correlation(), trace.start_ns());
    for by_shape in [false, true] {
        let rows = key_averages(&trace, by_shape);
        let mut options = TableOptions::for_trace(&trace);
        let _ = table(&rows, &options);
        options.sort_by = Some(["self_cpu_time_total", "cuda_time_total", "count", "cpu_memory_usage"][mode as usize / 2 % 4].to_owned());
        options.row_limit = Some(mode as usize % 7);
        options.max_name_column_width = Some(mode as usize % 9);
        options.max_shapes_column_width = Some(mode as usize % 11);
        options.top_level_events_only = mode & 4 != 0;
        options.time_unit = ["s", "ms", "us", "x"].get(mode as usize % 5).map(|u| u.to_string());
        options.header = Some("h".into());
        options.profile_memory = true;
        options.use_device = Some("cuda".into());
        let _ = table(&rows, &options);
    }
});
