//! The rules file of `rtfprof check --rules FILE` (TOML): what the flags
//! cannot say. Its format, and the precedence of what it sets, are in
//! docs/book/src/commands/check.md ("Rules file"):
//!
//! ```toml
//! ignore = ['op:.*AssignSubVariableOp.*']   # neither judged nor failed
//!
//! [defaults]                  # as the flags; a flag given wins
//! max_regression = "10%"
//!
//! [[threshold]]               # the first rule whose regex matches wins
//! metric = 'op:.*layer2/.*'
//! max_regression = "100%"
//!
//! [[budget]]                  # the new run's median, baseline or not
//! metric = "step_time"
//! max = "20ms"
//! ```
//!
//! Every regex must match a metric's whole label (`step_time`,
//! `category:NAME`, `memory:ALLOCATOR`, `op:NAME`, `hlo:MODULE/NAME`, …), so that
//! `memory:cpu` is not also `memory:cpu_pinned`. The file is parsed by the
//! `toml` crate with serde, unknown keys refused, and every amount and
//! regex checked before anything is compared: a bad file is one error
//! naming the file and the line.

use std::ops::Range;
use std::path::Path;

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use super::metrics::Kind;
use super::options::{self, Options};
use crate::error::{Error, Result};

/// A regex over metric labels, matched against the whole label.
#[derive(Clone, Debug)]
pub struct Pattern {
    source: String,
    regex: Regex,
}

impl Pattern {
    /// `source` anchored at both ends (`^(?:source)$`).
    pub fn new(source: &str) -> std::result::Result<Pattern, regex::Error> {
        Ok(Pattern { source: source.to_owned(), regex: Regex::new(&format!("^(?:{source})$"))? })
    }

    /// The regex as the file has it.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    pub fn matches(&self, label: &str) -> bool {
        self.regex.is_match(label)
    }
}

/// Two patterns are equal when written alike (a compiled regex has no
/// equality of its own).
impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.source == other.source
    }
}

/// `[[threshold]]`: the relative growth that passes for the metrics it
/// matches, instead of their kind's.
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdRule {
    pub metric: Pattern,
    pub max_regression: f64,
}

/// The limit of a budget: a time or an amount of memory. Which it is
/// decides which metrics the budget judges: a time limit step time,
/// categories and ops; a memory limit allocators' peaks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    /// Microseconds.
    Time(f64),
    Bytes(f64),
}

impl Limit {
    /// The value in the unit of its metrics' samples (`us`, `bytes`).
    pub fn value(self) -> f64 {
        match self {
            Limit::Time(v) | Limit::Bytes(v) => v,
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Limit::Time(_) => "us",
            Limit::Bytes(_) => "bytes",
        }
    }

    /// Whether the budget judges metrics of `kind` (op counts: never).
    pub fn applies_to(self, kind: Kind) -> bool {
        !kind.is_count() && kind.unit() == self.unit()
    }
}

/// `[[budget]]`: the largest median the new run may have, for each metric
/// it matches, whatever the baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    pub metric: Pattern,
    pub max: Limit,
    /// The limit as the file writes it (`20ms`), for outputs.
    pub text: String,
}

/// What a rules file sets: the defaults (`None` where it leaves one to
/// the built-in default), then the lists.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rules {
    pub max_regression: Option<f64>,
    pub max_op_regression: Option<f64>,
    pub max_memory_regression: Option<f64>,
    pub min_memory_change: Option<f64>,
    pub min_share: Option<f64>,
    pub min_part_growth: Option<f64>,
    pub alpha: Option<f64>,
    pub min_steps: Option<usize>,
    pub thresholds: Vec<ThresholdRule>,
    pub budgets: Vec<Budget>,
    pub ignore: Vec<Pattern>,
}

impl Rules {
    /// The built-in defaults with the file's over them; `source` is what
    /// outputs call the file. Flags given on the command line are set on
    /// the result afterwards, so they win.
    pub fn into_options(self, source: String) -> Options {
        let d = Options::default();
        let mut options = d.clone();
        options.max_regression = self.max_regression.unwrap_or(d.max_regression);
        options.max_op_regression = self.max_op_regression.unwrap_or(d.max_op_regression);
        options.max_memory_regression = self.max_memory_regression.unwrap_or(d.max_memory_regression);
        options.min_memory_change = self.min_memory_change.unwrap_or(d.min_memory_change);
        options.min_share = self.min_share.unwrap_or(d.min_share);
        options.min_part_growth = self.min_part_growth.or(d.min_part_growth);
        options.alpha = self.alpha.unwrap_or(d.alpha);
        options.min_steps = self.min_steps.unwrap_or(d.min_steps);
        options.threshold_rules = self.thresholds;
        options.budgets = self.budgets;
        options.ignore = self.ignore;
        options.rules = Some(source);
        options
    }
}

/// Reads and checks the rules file at `path`: any error is one line,
/// `--rules PATH: line N: …` (named by its flag, as other inputs are).
pub fn read(path: &Path) -> Result<Rules> {
    let text = std::fs::read(path).map_err(|source| Error::Io { kind: "--rules", path: path.to_owned(), source })?;
    let text = String::from_utf8(text).map_err(|_| Error::input("--rules", path, "not UTF-8 text, as a TOML rules file is"))?;
    parse(&text).map_err(|message| Error::input("--rules", path, format!("{message} (a TOML rules file: docs/book/src/commands/check.md)")))
}

/// Parses a rules file's text; the error is one line, starting with the
/// line number where one is known.
pub fn parse(text: &str) -> std::result::Result<Rules, String> {
    let file: File = toml::from_str(text).map_err(|e| at(text, e.span(), e.message()))?;
    let mut rules = Rules::default();
    let d = &file.defaults;
    let fraction = |v: &Option<Spanned<String>>, key: &str| -> std::result::Result<Option<f64>, String> {
        v.as_ref().map(|s| parse_with(text, s, &format!("[defaults] {key}"), |x| options::parse_fraction(key, x))).transpose()
    };
    rules.max_regression = fraction(&d.max_regression, "max_regression")?;
    rules.max_op_regression = fraction(&d.max_op_regression, "max_op_regression")?;
    rules.max_memory_regression = fraction(&d.max_memory_regression, "max_memory_regression")?;
    rules.min_share = fraction(&d.min_share, "min_share")?;
    rules.min_part_growth = fraction(&d.min_part_growth, "min_part_growth")?;
    rules.min_memory_change = d
        .min_memory_change
        .as_ref()
        .map(|s| parse_with(text, s, "[defaults] min_memory_change", |x| options::parse_bytes("min_memory_change", x)))
        .transpose()?;
    if let Some(alpha) = &d.alpha {
        let value = *alpha.get_ref();
        if !(value > 0.0 && value < 1.0) {
            return Err(at(text, Some(alpha.span()), &format!("[defaults] alpha: {value} is not a level between 0 and 1 (e.g. 0.01)")));
        }
        rules.alpha = Some(value);
    }
    rules.min_steps = d.min_steps;
    for rule in &file.threshold {
        let metric = pattern(text, &rule.metric, "[[threshold]] metric")?;
        let max_regression = parse_with(text, &rule.max_regression, "[[threshold]] max_regression", |x| options::parse_fraction("max_regression", x))?;
        rules.thresholds.push(ThresholdRule { metric, max_regression });
    }
    for budget in &file.budget {
        let metric = pattern(text, &budget.metric, "[[budget]] metric")?;
        let max = parse_with(text, &budget.max, "[[budget]] max", parse_limit)?;
        rules.budgets.push(Budget { metric, max, text: budget.max.get_ref().trim().to_owned() });
    }
    for source in &file.ignore {
        rules.ignore.push(pattern(text, source, "ignore")?);
    }
    Ok(rules)
}

/// Parses a budget's limit: a time with its unit (`us`, `ms`, `s`) or an
/// amount of memory with its unit (as `--min_memory_change`: `B`, `KB`,
/// `MB`, `GB`, `KiB`, `MiB`, `GiB`). A bare number is refused: which
/// kind it is would be a guess.
pub fn parse_limit(value: &str) -> Result<Limit> {
    let trimmed = value.trim();
    let bad = || Error::flag("max", format!("'{value}' is not a time or an amount of memory with its unit (e.g. 20ms, 500us, 1.5s, 2GB or 512MiB)"));
    let times = [("us", 1.0), ("µs", 1.0), ("ms", 1e3), ("s", 1e6)];
    if let Some((number, scale)) = times.iter().find_map(|(unit, scale)| trimmed.strip_suffix(unit).map(|n| (n.trim(), *scale))) {
        return match number.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(Limit::Time(v * scale)),
            _ => Err(bad()),
        };
    }
    if !trimmed.ends_with('B') {
        return Err(bad());
    }
    options::parse_bytes("max", trimmed).map(Limit::Bytes).map_err(|_| bad())
}

/// The file as serde reads it: unknown keys are errors.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    ignore: Vec<Spanned<String>>,
    #[serde(default)]
    defaults: Defaults,
    #[serde(default)]
    threshold: Vec<ThresholdEntry>,
    #[serde(default)]
    budget: Vec<BudgetEntry>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Defaults {
    max_regression: Option<Spanned<String>>,
    max_op_regression: Option<Spanned<String>>,
    max_memory_regression: Option<Spanned<String>>,
    min_memory_change: Option<Spanned<String>>,
    min_share: Option<Spanned<String>>,
    min_part_growth: Option<Spanned<String>>,
    alpha: Option<Spanned<f64>>,
    min_steps: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThresholdEntry {
    metric: Spanned<String>,
    max_regression: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetEntry {
    metric: Spanned<String>,
    max: Spanned<String>,
}

/// `parse` applied to a value of the file, its error placed at the value's
/// line and named by `key`.
fn parse_with<T>(text: &str, value: &Spanned<String>, key: &str, parse: impl Fn(&str) -> Result<T>) -> std::result::Result<T, String> {
    parse(value.get_ref()).map_err(|e| {
        // The parsers name their flag first ("max: …"): the key replaces it.
        let message = match e {
            Error::Flag { message, .. } => message,
            other => other.to_string(),
        };
        at(text, Some(value.span()), &format!("{key}: {message}"))
    })
}

fn pattern(text: &str, value: &Spanned<String>, key: &str) -> std::result::Result<Pattern, String> {
    Pattern::new(value.get_ref()).map_err(|e| {
        // regex's message draws the pattern over several lines: its last
        // line says what is wrong.
        let why = e.to_string().lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
        at(text, Some(value.span()), &format!("{key}: '{}' is not a regex: {}", value.get_ref(), why.trim_start_matches("error: ")))
    })
}

/// `line N: message` (one line), where `span` says where in `text`.
fn at(text: &str, span: Option<Range<usize>>, message: &str) -> String {
    let message = crate::error::one_line(message);
    match span {
        Some(span) => {
            let line = text.as_bytes()[..span.start.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1;
            format!("line {line}: {message}")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
ignore = ['op:.*tanh', "count:.*"]

[defaults]
max_regression = "10%"
min_memory_change = "8MiB"
min_part_growth = "2%"
alpha = 0.05
min_steps = 3

[[threshold]]
metric = 'op:layer2/MatMul'
max_regression = "10%"

[[threshold]]
metric = 'op:(gradient_tape/)?layer2/.*'
max_regression = "100%"

[[budget]]
metric = "step_time"
max = "20ms"

[[budget]]
metric = 'memory:.*'
max = "1.5 GB"
"#;

    #[test]
    fn a_file_sets_defaults_thresholds_budgets_and_ignores() {
        let rules = parse(EXAMPLE).unwrap();
        assert_eq!(rules.max_regression, Some(0.1));
        assert_eq!(rules.max_op_regression, None);
        assert_eq!(rules.min_memory_change, Some(8.0 * 1024.0 * 1024.0));
        assert_eq!((rules.alpha, rules.min_steps, rules.min_part_growth), (Some(0.05), Some(3), Some(0.02)));
        assert_eq!(rules.thresholds.len(), 2);
        assert_eq!(rules.budgets[0].max, Limit::Time(20_000.0));
        assert_eq!(rules.budgets[1].max, Limit::Bytes(1.5e9));
        assert_eq!(rules.budgets[1].text, "1.5 GB");
        assert_eq!(rules.ignore.iter().map(Pattern::as_str).collect::<Vec<_>>(), ["op:.*tanh", "count:.*"]);
        let options = rules.into_options("rules.toml".into());
        assert_eq!((options.max_regression, options.max_op_regression), (0.1, super::super::defaults::MAX_OP_REGRESSION));
        assert_eq!((options.rules.as_deref(), options.min_part_growth), (Some("rules.toml"), Some(0.02)));
        // An empty file changes nothing.
        assert_eq!(parse("").unwrap().into_options("x".into()), Options { rules: Some("x".into()), ..Options::default() });
    }

    #[test]
    fn regexes_match_whole_labels() {
        let p = Pattern::new("memory:cpu").unwrap();
        assert!(p.matches("memory:cpu"));
        assert!(!p.matches("memory:cpu_pinned") && !p.matches("xmemory:cpu"));
        let alternatives = Pattern::new("step_time|op:a").unwrap();
        assert!(alternatives.matches("step_time") && alternatives.matches("op:a") && !alternatives.matches("op:ab"));
        assert!(Pattern::new(r"op:aten::.*conv.*").unwrap().matches("op:aten::cudnn_convolution"));
    }

    #[test]
    fn limits_need_a_unit() {
        assert_eq!(parse_limit("20ms").unwrap(), Limit::Time(20_000.0));
        assert_eq!(parse_limit("500 us").unwrap(), Limit::Time(500.0));
        assert_eq!(parse_limit("1.5s").unwrap(), Limit::Time(1.5e6));
        assert_eq!(parse_limit("2GB").unwrap(), Limit::Bytes(2e9));
        assert_eq!(parse_limit("512MiB").unwrap(), Limit::Bytes(512.0 * 1024.0 * 1024.0));
        assert!(Limit::Time(1.0).applies_to(Kind::OpTime) && Limit::Time(1.0).applies_to(Kind::StepTime));
        assert!(!Limit::Time(1.0).applies_to(Kind::PeakMemory) && !Limit::Bytes(1.0).applies_to(Kind::OpTime));
        assert!(!Limit::Time(1.0).applies_to(Kind::OpCount));
        for bad in ["20", "", "ms", "-1ms", "NaN s", "20 parsecs", "5 TB", "inf ms"] {
            assert!(parse_limit(bad).is_err(), "{bad}");
        }
    }

    /// Each bad file is one line naming the line and what is wrong.
    #[test]
    fn bad_files_say_where() {
        let cases = [
            ("[defaults]\nmax_regresion = \"5%\"\n", "line 2: unknown field `max_regresion`"),
            ("ignore = [\"op:x\"\n", "line "),
            ("[[budget]]\nmetric = \"step_time\"\nmax = \"20\"\n", "line 3: [[budget]] max: '20' is not a time or an amount of memory"),
            ("[[budget]]\nmetric = \"step_time\"\n", "missing field `max`"),
            ("[[threshold]]\nmetric = 'op:(x'\nmax_regression = \"5%\"\n", "line 2: [[threshold]] metric: 'op:(x' is not a regex: unclosed group"),
            ("[[threshold]]\nmetric = 'op:x'\nmax_regression = \"five\"\n", "line 3: [[threshold]] max_regression: 'five' is not a relative amount"),
            ("\n\n[defaults]\nalpha = 2.0\n", "line 4: [defaults] alpha: 2 is not a level"),
            ("[defaults]\nmin_memory_change = \"lots\"\n", "line 2: [defaults] min_memory_change: 'lots' is not an amount of memory"),
            ("[defaults]\nmin_steps = -1\n", "line 2: "),
            ("[[budgets]]\nmetric = \"step_time\"\nmax = \"1ms\"\n", "line 1: unknown field `budgets`"),
            ("[[budget]]\nmetric = \"step_time\"\nmax = \"1ms\"\nignore = ['x']\n", "line 4: unknown field `ignore`"),
            ("ignore = 'op:x'\n", "line 1: "),
        ];
        for (text, want) in cases {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(want) || (want.starts_with("missing") && e.contains(want)), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
