//! Table-driven comparison against tfprof's own outputs.
//!
//! `testdata/golden/cases.txt` lists `<case> <view> <flags…>`; for each case
//! `<case>.out` is what TensorFlow's tfprof CLI prints on stdout and
//! `<case>.file` what it writes for `--output=file:outfile=NAME`. All were
//! produced by `tools/gen_golden.py` with real TensorFlow; none is hand-written.
//! `testdata/events/cases.txt` and `testdata/events/golden/` are the same
//! for `--events_path` (`tools/gen_events.py`: tfprof's engine on the graph
//! and run metadata TensorFlow's reader takes out of the event files).
//! On a mismatch the actual output is saved under `target/golden-actual/` and
//! the first differing line is reported.

use std::path::{Path, PathBuf};

use rtfprof_cli::cli::execute;

use crate::common;

use common::{first_difference, rtfprof, testdata};

struct Case {
    name: String,
    view: String,
    args: Vec<String>,
}

/// A table of cases and the directory of their goldens.
#[derive(Clone, Copy)]
struct Table {
    cases: &'static str,
    golden: &'static str,
}

/// tools/gen_golden.py's cases.
const TFPROF: Table = Table { cases: "golden/cases.txt", golden: "golden" };
/// tools/gen_events.py's cases.
const EVENTS: Table = Table { cases: "events/cases.txt", golden: "events/golden" };

fn cases(table: Table) -> Vec<Case> {
    let text = std::fs::read_to_string(testdata().join(table.cases)).expect("cases.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let mut words = line.split_whitespace().map(str::to_owned);
            let name = words.next().expect("case name");
            let view = words.next().expect("view");
            Case { name, view, args: words.collect() }
        })
        .collect()
}

/// Cases where rtfprof deliberately differs from tfprof: tfprof silently
/// accepts an unknown `select`/`order_by` value and an invalid regex (which
/// then never matches); rtfprof rejects them with one line naming the flag,
/// before reading any file. Each entry: case-name suffix → the flag named.
const DELIBERATE_ERRORS: &[(&str, &str)] = &[
    (".select.dup_unknown", "--select"),
    (".order_by.unknown", "--order_by"),
    (".hide.invalid_regex", "--hide_name_regexes"),
    (".show.invalid_regex", "--show_name_regexes"),
];

/// Makes input paths absolute and points output files into `out_dir`.
fn resolve_args(case: &Case, out_dir: &Path) -> Vec<String> {
    let data = testdata();
    case.args
        .iter()
        .map(|arg| {
            let Some((flag, value)) = arg.split_once('=') else { return arg.clone() };
            match flag {
                "--graph_path" | "--op_log_path" | "--profile_path" | "--checkpoint_path" | "--run_meta_path" | "--events_path" => {
                    let joined: Vec<String> = value.split(',').filter(|s| !s.is_empty()).map(|p| data.join(p).display().to_string()).collect();
                    format!("{flag}={}", joined.join(","))
                }
                "--output" => match value.split_once(":outfile=") {
                    Some((kind, file)) => format!("{flag}={kind}:outfile={}", out_dir.join(file).display()),
                    None => arg.clone(),
                },
                _ => arg.clone(),
            }
        })
        .collect()
}

fn save_actual(name: &str, suffix: &str, actual: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/golden-actual");
    std::fs::create_dir_all(&dir).expect("create target/golden-actual");
    let path = dir.join(format!("{name}.{suffix}"));
    std::fs::write(&path, actual).expect("save actual output");
    path
}

/// tfprof prints the advisor's checkers in protobuf hash-map order, which
/// differs between runs of the same engine on the same input (the goldens
/// show several orders). The invariant compared instead: the same start-up
/// lines, and the same checker sections with identical contents.
fn advise_sections(stdout: &str) -> (String, Vec<String>) {
    const CHECKERS: [&str; 4] = ["AcceleratorUtilizationChecker", "OperationChecker", "ExpensiveOperationChecker", "JobChecker"];
    let mut starts: Vec<usize> = CHECKERS.iter().filter_map(|c| stdout.find(&format!("\n{c}:\n"))).collect();
    starts.sort_unstable();
    starts.push(stdout.len());
    let prelude = stdout[..starts[0]].to_owned();
    let mut sections: Vec<String> = starts.windows(2).map(|w| stdout[w[0]..w[1]].to_owned()).collect();
    sections.sort();
    (prelude, sections)
}

/// Runs one case; returns a failure description.
fn check(table: Table, case: &Case) -> Option<String> {
    let golden = testdata().join(table.golden);
    let out_dir = tempfile::tempdir().expect("temp dir");
    let mut argv = vec!["rtfprof".to_owned(), case.view.clone()];
    argv.extend(resolve_args(case, out_dir.path()));
    let cli = match rtfprof_cli::cli::parse(argv.iter().map(Into::into)) {
        Ok(cli) => cli,
        Err(e) => return Some(format!("{}: flags rejected: {e}", case.name)),
    };
    let mut stdout = String::new();
    let result = execute(cli, &mut stdout);
    // Messages about written files name them as the case does.
    let stdout = stdout.replace(&format!("{}/", out_dir.path().display()), "");
    if let Some((_, flag)) = DELIBERATE_ERRORS.iter().find(|(suffix, _)| case.name.ends_with(suffix)) {
        return match result {
            Err(e) if e.to_string().starts_with(flag) && stdout.is_empty() => None,
            other => Some(format!("{}: expected an error naming {flag} and no output, got {other:?}", case.name)),
        };
    }
    let Ok(expected_out) = std::fs::read_to_string(golden.join(format!("{}.out", case.name))) else {
        return Some(format!("{}: golden {}.out is missing (rerun tools/gen_golden.py)", case.name, case.name));
    };
    let mut failures = Vec::new();
    let same = if case.view == "advise" { advise_sections(&stdout) == advise_sections(&expected_out) } else { stdout == expected_out };
    if !same {
        let saved = save_actual(&case.name, "out", &stdout);
        failures.push(format!(
            "{}.out differs at {} (actual saved to {}; result {result:?})",
            case.name,
            first_difference(&expected_out, &stdout, ["expected", "actual"]),
            saved.display()
        ));
    }
    let expected_file = golden.join(format!("{}.file", case.name));
    if expected_file.exists() {
        let expected = std::fs::read_to_string(&expected_file).expect("golden .file");
        let written = case.args.iter().find_map(|a| a.strip_prefix("--output=file:outfile=")).expect("outfile");
        let actual = std::fs::read_to_string(out_dir.path().join(written)).unwrap_or_default();
        if actual != expected {
            let saved = save_actual(&case.name, "file", &actual);
            failures.push(format!(
                "{}.file differs at {} (actual saved to {})",
                case.name,
                first_difference(&expected, &actual, ["expected", "actual"]),
                saved.display()
            ));
        }
    }
    if failures.is_empty() { None } else { Some(failures.join("\n")) }
}

#[test]
fn golden_cases_match_tfprof_byte_for_byte() {
    let cases = cases(TFPROF);
    assert!(cases.len() >= 100, "cases.txt lists only {} cases", cases.len());
    let failures: Vec<String> = cases.iter().filter_map(|case| check(TFPROF, case)).collect();
    eprintln!("golden: {} cases, {} failed", cases.len(), failures.len());
    assert!(failures.is_empty(), "{} golden case(s) differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn event_file_cases_match_tfprof_byte_for_byte() {
    let cases = cases(EVENTS);
    assert!(cases.len() >= 8, "events/cases.txt lists only {} cases", cases.len());
    assert!(cases.iter().any(|c| c.args.iter().any(|a| a.starts_with("--step="))), "a --step case");
    let failures: Vec<String> = cases.iter().filter_map(|case| check(EVENTS, case)).collect();
    assert!(failures.is_empty(), "{} event-file case(s) differ:\n{}", failures.len(), failures.join("\n"));
}

/// The `rtfprof` binary writes a view shown on stdout as it is made, not
/// through `execute`'s text; its stdout must be the same bytes.
#[test]
fn the_binary_prints_the_golden_stdout() {
    use rayon::prelude::*;
    let on_stdout = |case: &&Case| {
        case.view != "advise"
            && !case.args.iter().any(|a| a.starts_with("--output") && a != "--output=stdout")
            && !DELIBERATE_ERRORS.iter().any(|(suffix, _)| case.name.ends_with(suffix))
    };
    let tables = [TFPROF, EVENTS];
    let cases: Vec<(Table, Case)> = tables.iter().flat_map(|&table| cases(table).into_iter().map(move |case| (table, case))).collect();
    let cases: Vec<&(Table, Case)> = cases.iter().filter(|(_, case)| on_stdout(&case)).collect();
    assert!(cases.len() >= 100, "only {} cases print a view on stdout", cases.len());
    let failures: Vec<String> = cases
        .par_iter()
        .filter_map(|(table, case)| {
            let out_dir = tempfile::tempdir().expect("temp dir");
            let output = rtfprof([&case.view]).args(resolve_args(case, out_dir.path())).run();
            let expected = std::fs::read(testdata().join(table.golden).join(format!("{}.out", case.name))).expect("golden .out");
            (output.stdout != expected).then(|| {
                let actual = output.stdout_lossy();
                format!("{}: {}", case.name, first_difference(&String::from_utf8_lossy(&expected), &actual, ["expected", "actual"]))
            })
        })
        .collect();
    assert!(failures.is_empty(), "{} case(s) differ:\n{}", failures.len(), failures.join("\n"));
}
