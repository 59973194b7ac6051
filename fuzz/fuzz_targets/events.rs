//! A TensorBoard event log → `inputs::events::load` (TFRecord framing and
//! checksums, Event and summary decoding, the graph and the run metadata) →
//! every step ingested → scope and op views.
//!
//! The first byte picks how the rest becomes the file, which is written to a
//! per-process path (the reader takes paths, as the CLI gives them):
//! - 0: the rest is the file, as is (the framing and its checksums);
//! - 1: the rest is records, each `[length: u32 LE][data]`, framed here with
//!   valid checksums, so that mutations reach the Event decoder rather than
//!   stopping at a checksum;
//! - 2: as 1, with the last 5 bytes cut off (a log still being written).
#![no_main]

#[path = "common.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rtfprof::inputs::events;
use rtfprof::stats::Stats;
use rtfprof::views::View;

fn path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("rtfprof-fuzz-events-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("fuzz temp dir");
        dir.join("events.out.tfevents.fuzz")
    })
}

fn masked_crc(bytes: &[u8]) -> [u8; 4] {
    rtfprof::inputs::checkpoint::mask_crc(crc32c::crc32c(bytes)).to_le_bytes()
}

/// `[length: u32 LE][data]…` as TFRecords.
fn framed(mut rest: &[u8]) -> Vec<u8> {
    let mut file = Vec::new();
    while let Some((len, after)) = rest.split_first_chunk::<4>() {
        let len = (u32::from_le_bytes(*len) as usize).min(after.len());
        let (data, after) = after.split_at(len);
        let length = (len as u64).to_le_bytes();
        file.extend_from_slice(&length);
        file.extend_from_slice(&masked_crc(&length));
        file.extend_from_slice(data);
        file.extend_from_slice(&masked_crc(data));
        rest = after;
    }
    file
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let file = match mode {
        0 => rest.to_vec(),
        1 => framed(rest),
        2 => {
            let mut file = framed(rest);
            file.truncate(file.len().saturating_sub(5));
            file
        }
        _ => return,
    };
    std::fs::write(path(), file).expect("write the event file");
    let options = events::Options {
        run: None,
        tags: Some("step.*|.*trace.*|forward"),
        with_attrs: true,
        run_meta: rtfprof::inputs::run_meta::Detail { shapes: true, allocations: true },
    };
    let Ok(log) = common::decode(|| events::load(path(), options)) else { return };
    let mut stats = Stats::new();
    stats.add_graph(log.graph);
    if common::decode(|| rtfprof::inputs::tf::add_run_meta_files(&mut stats, &log.run_metas, |coverage| assert!(coverage.is_finite()))).is_err() {
        return;
    }
    common::render(&stats, &[View::Scope, View::Op]);
});
