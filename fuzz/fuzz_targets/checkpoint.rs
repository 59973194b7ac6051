//! A V2 checkpoint (`--checkpoint_path`): the input is
//! `[index length: u32 LE][P.index bytes][P.data-00000-of-00001 bytes]`,
//! written to a per-process directory; then `Checkpoint::open`, every
//! variable's tensor read and formatted, and the checkpoint added to the ckpt
//! fixture's graph and shown in the scope view with every column.
#![no_main]

#[path = "common.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rtfprof::inputs::GraphRecord;
use rtfprof::inputs::checkpoint::{Checkpoint, format_tensor_value};
use rtfprof::stats::Stats;
use rtfprof::views::View;

fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("rtfprof-fuzz-checkpoint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("fuzz temp dir");
        dir.join("model.ckpt")
    })
}

fn graph() -> GraphRecord {
    static GRAPH: OnceLock<GraphRecord> = OnceLock::new();
    GRAPH
        .get_or_init(|| {
            let bytes = include_bytes!("../../testdata/ckpt/graph.pbtxt");
            rtfprof::inputs::decode_graph(&bytes[..], Path::new("ckpt/graph.pbtxt"), true).expect("ckpt graph decodes")
        })
        .clone()
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((len, rest)) = data.split_first_chunk::<4>() else { return };
    let len = (u32::from_le_bytes(*len) as usize).min(rest.len());
    let (index, shard) = rest.split_at(len);
    let prefix = prefix();
    let with = |suffix: &str| {
        let mut p = prefix.as_os_str().to_owned();
        p.push(suffix);
        PathBuf::from(p)
    };
    std::fs::write(with(".index"), index).expect("write index");
    std::fs::write(with(".data-00000-of-00001"), shard).expect("write data");
    let Ok(checkpoint) = common::decode(|| Checkpoint::open(prefix)) else { return };
    let _ = checkpoint.variable_dtypes();
    for name in checkpoint.variable_shapes().keys() {
        if let Ok(tensor) = checkpoint.tensor(name) {
            let _ = format_tensor_value(&tensor);
        }
    }
    let mut stats = Stats::new();
    stats.add_graph(graph());
    let variables = checkpoint.variable_shapes().into_keys();
    stats.add_checkpoint(Box::new(checkpoint), variables);
    common::render(&stats, &[View::Scope]);
});
