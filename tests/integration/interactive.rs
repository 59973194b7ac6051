//! The `tfprof>` prompt, driven through piped stdin: commands with `-flag
//! value` options print exactly what the one-shot command prints, `set`
//! changes later defaults, an empty line lists the options, errors go to
//! stderr without ending the session, and history is kept.

use std::path::Path;

use crate::common;

fn fixture_args() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cnn");
    vec![
        format!("--graph_path={}", dir.join("graph.pbtxt").display()),
        format!("--run_meta_path={},{}", dir.join("run_meta_0").display(), dir.join("run_meta_1").display()),
        format!("--op_log_path={}", dir.join("tfprof_log").display()),
    ]
}

/// The view text of a one-shot run (everything after the start-up lines).
fn one_shot(view: &str, flags: &[&str], cwd: &Path) -> String {
    let mut args = vec![view.to_owned()];
    args.extend(flags.iter().map(|f| f.to_string()));
    args.extend(fixture_args());
    let run = common::rtfprof(&args).stdin("").current_dir(cwd).run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok, "{err}");
    out.split_once("\n\nDoc:\n").map(|(_, rest)| format!("\nDoc:\n{rest}")).expect("doc section")
}

#[test]
fn prompt_session_end_to_end() {
    let cwd = tempfile::tempdir().unwrap();
    let session = "scope -max_depth 2 -select 'params,bytes'\n\nset -select micros -order_by micros\nop -max_depth 3\nbogus\nscope -max_depth x\ngraph -graph_path x\ncode -max_depth 3\nquit\nscope\n";
    let run = common::rtfprof(fixture_args()).stdin(session).current_dir(cwd.path()).run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok, "session failed: {err}");

    let scope = one_shot("scope", &["--max_depth=2", "--select=params,bytes"], cwd.path());
    let op = one_shot("op", &["--max_depth=3", "--select=micros", "--order_by=micros"], cwd.path());
    let code = one_shot("code", &["--max_depth=3", "--select=micros", "--order_by=micros"], cwd.path());
    let listing = rtfprof::show::Options::default().listing();
    let expected_start = "Reading Files...\nTry to use a single --profile_path instead of graph_path,op_log_path,run_meta_path\nrun graph coverage: 0.31\nrun graph coverage: 0.33\n";
    assert_eq!(out, format!("{expected_start}{scope}{listing}{op}{code}"), "stdout of the session");

    let errors: Vec<&str> = err.lines().collect();
    assert_eq!(errors.len(), 3, "one line per bad command: {err}");
    assert!(errors[0].contains("'bogus' is not a command"));
    assert!(errors[1].contains("--max_depth"));
    assert!(errors[2].starts_with("rtfprof: --graph_path: inputs are read once"));

    let history = std::fs::read_to_string(cwd.path().join(".tfprof_history.txt")).expect("history file");
    assert!(history.contains("set -select micros -order_by micros"));
}

#[test]
fn end_of_input_ends_the_session_quietly() {
    let cwd = tempfile::tempdir().unwrap();
    let run = common::rtfprof(fixture_args()).stdin("").current_dir(cwd.path()).run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok && err.is_empty(), "{err}");
    assert!(out.starts_with("Reading Files...\n"));
}
