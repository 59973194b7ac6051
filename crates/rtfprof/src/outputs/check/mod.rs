//! `rtfprof check`'s outputs, one file a format: the text table
//! ([`text`]), JSON ([`json`], schemas/check.schema.json), JUnit XML
//! ([`junit`]), GitHub Actions annotations ([`github`]), Markdown
//! ([`markdown`]), github-action-benchmark's `customSmallerIsBetter`
//! ([`benchmark`]); and the baseline summary a check can read back
//! instead of a trace ([`baseline`]).
//!
//! Each format renders a [`Check`] to bytes and touches no file; [`write()`]
//! then writes them all, each file atomically, only once every format has
//! rendered, so a failure leaves no partial output.

pub mod baseline;
pub mod benchmark;
pub mod github;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod text;

use std::path::PathBuf;

use crate::check::Check;
use crate::error::{Error, Result};

/// One `--output` of `rtfprof check` (it may be given several times).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckOutput {
    /// The text table, on stdout (`stdout`, the default) or in a file.
    Text(Option<PathBuf>),
    Json(PathBuf),
    Junit(PathBuf),
    /// Annotations on stdout, for a GitHub Actions step.
    Github,
    Markdown(PathBuf),
    Benchmark(PathBuf),
    None,
}

const KINDS: &str = "stdout, file:outfile=PATH, json:outfile=PATH, junit:outfile=PATH, github, markdown:outfile=PATH, benchmark:outfile=PATH or none";

impl CheckOutput {
    /// Parses rtfprof's `--output` syntax: `KIND` or `KIND:outfile=PATH`.
    pub fn parse(value: &str) -> Result<CheckOutput> {
        let bad = |message: String| Error::flag("--output", message);
        let (kind, rest) = value.split_once(':').map_or((value, None), |(k, r)| (k, Some(r)));
        let outfile = match rest {
            None | Some("") => None,
            Some(rest) => match rest.split_once('=') {
                Some(("outfile", path)) if !path.is_empty() => Some(PathBuf::from(path)),
                _ => return Err(bad(format!("'{rest}' is not outfile=PATH (e.g. --output {kind}:outfile=PATH)"))),
            },
        };
        let need = |o: Option<PathBuf>| o.ok_or_else(|| bad(format!("output type {kind} needs outfile (e.g. --output {kind}:outfile=PATH)")));
        let none = |o: &Option<PathBuf>, output: CheckOutput| match o {
            Some(_) => Err(bad(format!("output type {kind} takes no outfile: it prints on stdout"))),
            None => Ok(output),
        };
        match kind {
            "" | "stdout" => none(&outfile, CheckOutput::Text(None)),
            "none" => none(&outfile, CheckOutput::None),
            "github" => none(&outfile, CheckOutput::Github),
            "file" => Ok(CheckOutput::Text(Some(need(outfile)?))),
            "json" => Ok(CheckOutput::Json(need(outfile)?)),
            "junit" => Ok(CheckOutput::Junit(need(outfile)?)),
            "markdown" => Ok(CheckOutput::Markdown(need(outfile)?)),
            "benchmark" => Ok(CheckOutput::Benchmark(need(outfile)?)),
            _ => Err(bad(format!("unknown output type '{kind}' for check (valid: {KINDS})"))),
        }
    }

    fn render(&self, check: &Check) -> Vec<u8> {
        match self {
            CheckOutput::Text(_) => text::render(check).into_bytes(),
            CheckOutput::Json(_) => json::render(check),
            CheckOutput::Junit(_) => junit::render(check),
            CheckOutput::Github => github::render(check).into_bytes(),
            CheckOutput::Markdown(_) => markdown::render(check).into_bytes(),
            CheckOutput::Benchmark(_) => benchmark::render(check),
            CheckOutput::None => Vec::new(),
        }
    }

    fn path(&self) -> Option<&PathBuf> {
        match self {
            CheckOutput::Text(path) => path.as_ref(),
            CheckOutput::Json(p) | CheckOutput::Junit(p) | CheckOutput::Markdown(p) | CheckOutput::Benchmark(p) => Some(p),
            CheckOutput::Github | CheckOutput::None => None,
        }
    }
}

/// Renders `check` in every format of `outputs`, then writes the files
/// (atomically) and appends what goes to stdout to `stdout`.
pub fn write(check: &Check, outputs: &[CheckOutput], stdout: &mut String) -> Result<()> {
    let rendered: Vec<(&CheckOutput, Vec<u8>)> = outputs.iter().map(|o| (o, o.render(check))).collect();
    for (output, bytes) in &rendered {
        match output.path() {
            Some(path) => super::write_atomic(path, bytes)?,
            None => stdout.push_str(&String::from_utf8_lossy(bytes)),
        }
    }
    Ok(())
}

/// A relative change as a signed percentage (`+12.3%`), or `new` where the
/// baseline was 0.
pub(crate) fn percent(change: Option<f64>) -> String {
    change.map_or_else(|| "new".to_owned(), |c| format!("{:+.1}%", c * 100.0))
}

pub(crate) use crate::check::result::amount;

/// A row's run medians, each side's in run order: `101us 111us` and
/// `115us`.
pub(crate) fn run_medians(row: &crate::check::Row) -> (String, String) {
    let unit = row.kind.unit();
    let side = |medians: &[f64]| medians.iter().map(|&m| amount(m, unit)).collect::<Vec<_>>().join(" ");
    (side(&row.baseline_run_medians), side(&row.new_run_medians))
}

/// A p-value for people: `p=0.0012`, or `-` where no test ran.
pub(crate) fn p_value(p: Option<f64>) -> String {
    p.map_or_else(|| "-".to_owned(), |p| if p < 1e-4 { format!("{p:.1e}") } else { format!("{p:.4}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of 8 steps with only a step time: 100 µs or so, each step
    /// `extra` slower (for the outputs' tests of several runs a side).
    pub(crate) fn step_run(extra: f64) -> crate::check::Samples {
        use crate::check::{Kind, Metric, Samples};
        let steps = [100.0, 103.0, 98.0, 101.0, 99.0, 130.0, 100.5, 102.0].map(|s| s + extra);
        let metrics = vec![Metric { kind: Kind::StepTime, name: "step_time".into(), samples: steps.to_vec() }];
        Samples { source: "run".into(), steps: (0..8).map(|i| i.to_string()).collect(), metrics }
    }

    #[test]
    fn parse() {
        assert_eq!(CheckOutput::parse("stdout").unwrap(), CheckOutput::Text(None));
        assert_eq!(CheckOutput::parse("github").unwrap(), CheckOutput::Github);
        assert_eq!(CheckOutput::parse("junit:outfile=a=b.xml").unwrap(), CheckOutput::Junit("a=b.xml".into()));
        for bad in ["junit", "xml:outfile=x", "github:outfile=x", "json:path=x", "json:outfile="] {
            assert!(CheckOutput::parse(bad).unwrap_err().to_string().starts_with("--output: "), "{bad}");
        }
    }

    #[test]
    fn amounts() {
        assert_eq!(amount(3600.0, "us"), "3.60ms");
        assert_eq!(amount(72_580_000.0, "bytes"), "72.58MB");
        assert_eq!(amount(2_500_000_000.0, "bytes"), "2.50GB");
        assert_eq!(amount(512.0, "bytes"), "512B");
        assert_eq!(amount(2.0, "count"), "2");
    }
}
