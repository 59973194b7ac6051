//! `--save_baseline PATH`: a profile's per-step samples as a small JSON
//! file that a later `rtfprof check` reads as its baseline, so CI keeps
//! kilobytes instead of a trace. The reader lives beside the writer so the
//! two cannot drift.
//!
//! Layout version 1 holds one run (`source`, `steps`, `metrics`); version
//! 2, written only for several runs, a list of them (`runs`), so that a
//! reader of version 1 says it cannot read the file rather than misread
//! it.

use std::path::Path;

use serde_json::{Value, json};

use crate::check::{Kind, Metric, Samples};
use crate::error::{Error, Result};

/// The key that marks the file, with the layout's version.
pub const MARKER: &str = "rtfprof_check_baseline";

/// The file of one run or more (at least one).
pub fn render(runs: &[Samples]) -> Vec<u8> {
    let (version, rest) = match runs {
        [one] => (1, run_value(one)),
        _ => (2, json!({ "runs": runs.iter().map(run_value).collect::<Vec<_>>() })),
    };
    // The marker first (serde_json orders keys by name), so that
    // [`is_baseline`] knows the file from its first bytes.
    format!("{{\"{MARKER}\":{version},{}\n", &rest.to_string()[1..]).into_bytes()
}

fn run_value(samples: &Samples) -> Value {
    let metrics: Vec<Value> = samples.metrics.iter().map(|m| json!({"kind": m.kind.as_str(), "name": m.name, "samples": m.samples})).collect();
    json!({ "source": samples.source, "steps": samples.steps, "metrics": metrics })
}

/// Whether `bytes` look like a baseline file (its first key is [`MARKER`]).
pub fn is_baseline(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64)];
    let text = String::from_utf8_lossy(head);
    text.trim_start().strip_prefix('{').is_some_and(|rest| rest.trim_start().starts_with(&format!("\"{MARKER}\"")))
}

/// Reads a baseline file: its runs (one or more); every problem is one
/// line naming it.
pub fn read(path: &Path) -> Result<Vec<Samples>> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io { kind: "baseline", path: path.to_owned(), source })?;
    parse(&bytes).map_err(|message| Error::input("baseline", path, message))
}

/// A baseline file's runs from its bytes, or why not (a line, without the
/// path: [`read`] names it).
pub fn parse(bytes: &[u8]) -> std::result::Result<Vec<Samples>, String> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| format!("not a baseline saved by 'rtfprof check --save_baseline': {e}"))?;
    match doc.get(MARKER).and_then(Value::as_u64) {
        Some(1) => Ok(vec![parse_run(&doc)?]),
        Some(2) => {
            let runs = doc.get("runs").and_then(Value::as_array).filter(|runs| !runs.is_empty()).ok_or("'runs' is not a list of runs")?;
            runs.iter().enumerate().map(|(i, run)| parse_run(run).map_err(|e| format!("run {}: {e}", i + 1))).collect()
        }
        Some(v) => Err(format!("baseline layout version {v}; this rtfprof reads versions 1 and 2")),
        None => Err("not a baseline saved by 'rtfprof check --save_baseline'".to_owned()),
    }
}

fn parse_run(doc: &Value) -> std::result::Result<Samples, String> {
    let strings = |v: Option<&Value>| -> Option<Vec<String>> { v?.as_array()?.iter().map(|s| s.as_str().map(str::to_owned)).collect() };
    let steps = strings(doc.get("steps")).ok_or("'steps' is not a list of names")?;
    let source = doc.get("source").and_then(Value::as_str).unwrap_or("").to_owned();
    let mut metrics = Vec::new();
    for m in doc.get("metrics").and_then(Value::as_array).ok_or("'metrics' is not a list")? {
        let kind = m.get("kind").and_then(Value::as_str).and_then(Kind::parse).ok_or("a metric has no known 'kind'")?;
        let name = m.get("name").and_then(Value::as_str).ok_or("a metric has no 'name'")?.to_owned();
        let samples: Option<Vec<f64>> = m.get("samples").and_then(Value::as_array).and_then(|a| a.iter().map(Value::as_f64).collect());
        let samples = samples.ok_or_else(|| format!("metric '{name}': 'samples' is not a list of numbers"))?;
        metrics.push(Metric { kind, name, samples });
    }
    if !metrics.iter().any(|m| m.kind == Kind::StepTime) {
        return Err("it has no step_time samples".to_owned());
    }
    Ok(Samples { source, steps, metrics })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let samples = Samples {
            source: "run\"a\".xplane.pb".into(),
            steps: vec!["1".into(), "2".into()],
            metrics: vec![
                Metric { kind: Kind::StepTime, name: "step_time".into(), samples: vec![1.5, 2.0] },
                Metric { kind: Kind::OpTime, name: "jit(f)/a,b:c".into(), samples: vec![0.25, 0.0] },
            ],
        };
        let bytes = render(std::slice::from_ref(&samples));
        assert!(is_baseline(&bytes));
        assert!(bytes.starts_with(b"{\"rtfprof_check_baseline\":1,"));
        assert_eq!(parse(&bytes).unwrap(), std::slice::from_ref(&samples));
        // Several runs: version 2, each run as it was.
        let other = Samples { source: "b".into(), ..samples.clone() };
        let both = render(&[samples.clone(), other.clone()]);
        assert!(is_baseline(&both) && both.starts_with(b"{\"rtfprof_check_baseline\":2,"));
        assert_eq!(parse(&both).unwrap(), [samples, other]);
        // Any number read is written back as itself (serde_json's
        // float_roundtrip: without it, this one read back 1 ulp off).
        let long = br#"{"rtfprof_check_baseline": 1, "steps": ["1"], "metrics": [{"kind": "step_time", "name": "step_time", "samples": [94.26555555555555555555555555555555555555555555555555555555555555555555555555555556]}]}"#;
        let read = parse(long).unwrap();
        assert_eq!(parse(&render(&read)).unwrap(), read);
        assert!(!is_baseline(b"{\"traceEvents\": []}"));
        assert!(parse(b"{\"rtfprof_check_baseline\": 3}").unwrap_err().contains("version 3"));
        assert!(parse(b"{\"rtfprof_check_baseline\": 2, \"runs\": []}").unwrap_err().contains("'runs'"));
        assert!(parse(b"{\"rtfprof_check_baseline\": 2, \"runs\": [{\"steps\": [], \"metrics\": []}]}").unwrap_err().contains("run 1: "));
        assert!(parse(b"{\"rtfprof_check_baseline\": 1, \"steps\": [], \"metrics\": []}").unwrap_err().contains("step_time"));
    }
}
