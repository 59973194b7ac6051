//! pprof output of the code view: a gzipped `Profile` that a pprof reader
//! decodes, whose samples add up to what the code view shows.

use std::io::Read;
use std::path::Path;

use prost::Message;
use rtfprof::proto::tensorflow::tfprof::pprof::Profile;
use rtfprof::show::{self, Options, options::Select};
use rtfprof::stats::Stats;
use rtfprof::views::View;

use crate::common;

fn fixture(model: &str) -> (Vec<String>, Stats) {
    (common::fixture_flags(model), common::fixture_stats(model))
}

fn read_profile(path: &Path) -> Profile {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_end(&mut raw).expect("gzip");
    Profile::decode(raw.as_slice()).expect("pprof Profile")
}

#[test]
fn code_view_pprof_decodes_and_adds_up() {
    let dir = tempfile::tempdir().unwrap();
    for (model, select) in [("cnn", "micros"), ("mlp", "bytes"), ("while", "float_ops"), ("gpu_synth", "accelerator_micros")] {
        let (mut args, stats) = fixture(model);
        let out = dir.path().join(format!("{model}.pb.gz"));
        args.splice(0..0, ["code".to_owned(), format!("--select={select}"), "--max_depth=100".into(), format!("--output=pprof:outfile={}", out.display())]);
        let run = common::rtfprof(&args).run();
        assert!(run.success(), "{}", run.stderr_lossy());
        assert!(run.stdout_lossy().ends_with(&format!("\nRun pprof -png --nodecount=100 --sample_index=1 <{}>\n", out.display())));

        let p = read_profile(&out);
        let s = |i: i64| p.string_table[i as usize].as_str();
        assert_eq!(p.string_table[0], "");
        assert_eq!(p.sample_type.len(), 2);
        assert_eq!((s(p.sample_type[0].r#type), s(p.sample_type[0].unit)), ("count", "count"));
        assert_eq!(s(p.sample_type[1].r#type), select);
        let location_ids: std::collections::HashSet<u64> = p.location.iter().map(|l| l.id).collect();
        let function_ids: std::collections::HashSet<u64> = p.function.iter().map(|f| f.id).collect();
        assert!(p.location.iter().all(|l| l.line.iter().all(|line| function_ids.contains(&line.function_id))));
        let mut total = 0;
        for sample in &p.sample {
            assert_eq!(sample.value.len(), 2);
            assert_eq!(sample.value[0], 1);
            assert!(!sample.location_id.is_empty() && sample.location_id.iter().all(|id| location_ids.contains(id)));
            assert_eq!(s(sample.label[0].key), "graph node:");
            assert!(stats.node(s(sample.label[0].str)).is_some(), "label names a graph node");
            total += sample.value[1];
        }
        // The samples cover every graph node the code view accounts.
        let opts = Options { max_depth: 100, select: Select::parse(select).unwrap(), ..Options::default() };
        let root = show::run(&stats, View::Code, &opts).unwrap().root;
        let expected = match select {
            "micros" => root.totals.exec_micros,
            "bytes" => root.totals.requested_bytes,
            "float_ops" => root.totals.float_ops,
            _ => root.totals.accelerator_micros,
        };
        assert_eq!(total, expected, "{model}: samples add up to the code view's total {select}");
        assert!(p.sample.len() > 20, "{model}: {} samples", p.sample.len());
    }
}

#[test]
fn pprof_needs_the_code_view_and_one_metric() {
    let (args, _) = fixture("cnn");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.gz");
    for (view, select) in [("scope", "micros"), ("code", "micros,bytes"), ("code", "device")] {
        let mut a = vec![view.to_owned(), format!("--select={select}"), format!("--output=pprof:outfile={}", out.display())];
        a.extend(args.iter().cloned());
        let run = common::rtfprof(&a).run();
        assert!(!run.success(), "{view} {select} must fail");
        assert_eq!(run.stderr_lossy().lines().count(), 1);
        assert!(!out.exists(), "no output file on failure");
    }
}
