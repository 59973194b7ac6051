//! The composite action (`action.yml`) run locally, as a GitHub runner
//! would run it: its inputs, with their defaults, replace the `${{
//! inputs.NAME }}` expressions (and are set as `INPUT_NAME` variables too);
//! each step's `run:` goes, in order, to `bash --noprofile --norc -eo
//! pipefail` with the step's `env:`, `GITHUB_ACTION_PATH` (the repository),
//! `RUNNER_TEMP`, `GITHUB_STEP_SUMMARY` and `GITHUB_OUTPUT`, in a fresh
//! workspace. The build step's `cargo install` is answered by a `cargo` on
//! `PATH` that checks its arguments and installs the binary these tests
//! built, instead of compiling the project again.
//!
//! action.yml is read by a small reader of the YAML it uses (block
//! mappings and sequences, `|` block scalars, plain and quoted scalars,
//! comments): anything else in it fails the test, so the reader cannot
//! silently misread a later edit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::testdata;

/// A YAML value of the subset action.yml uses.
#[derive(Clone, Debug, PartialEq)]
enum Yaml {
    Text(String),
    Map(Vec<(String, Yaml)>),
    List(Vec<Yaml>),
}

impl Yaml {
    fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn text(&self) -> &str {
        match self {
            Yaml::Text(t) => t,
            other => panic!("not a scalar: {other:?}"),
        }
    }

    fn list(&self) -> &[Yaml] {
        match self {
            Yaml::List(items) => items,
            other => panic!("not a list: {other:?}"),
        }
    }

    fn entries(&self) -> &[(String, Yaml)] {
        match self {
            Yaml::Map(entries) => entries,
            other => panic!("not a mapping: {other:?}"),
        }
    }
}

/// A line that carries content: its indent, its text from there, and its
/// index in the file.
type Line = (usize, String, usize);

/// The lines that carry content (not blank, not a comment).
fn content_lines(text: &str) -> Vec<Line> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (l.len() - l.trim_start().len(), l.trim_start().to_owned(), i))
        .filter(|(_, l, _)| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// A plain or quoted scalar (a trailing ` # comment` dropped from plain
/// ones).
fn scalar(text: &str) -> String {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix('\'') {
        // Up to the quote that is not doubled.
        let mut value = String::new();
        let mut chars = rest.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c != '\'' {
                value.push(c);
            } else if chars.peek().is_some_and(|&(_, n)| n == '\'') {
                value.push('\'');
                chars.next();
            } else {
                let after = rest[i + 1..].trim();
                assert!(after.is_empty() || after.starts_with('#'), "text after a quoted scalar: {t}");
                return value;
            }
        }
        panic!("unclosed quote: {t}");
    }
    if let Some(rest) = t.strip_prefix('"') {
        let (inner, after) = rest.split_once('"').unwrap_or_else(|| panic!("unclosed quote: {t}"));
        assert!(!inner.contains('\\'), "escapes in double quotes are not read here: {t}");
        assert!(after.trim().is_empty() || after.trim().starts_with('#'), "text after a quoted scalar: {t}");
        return inner.to_owned();
    }
    assert!(!t.starts_with(['{', '[', '&', '*', '!', '>']), "YAML this reader does not read: {t}");
    t.split(" #").next().unwrap().trim_end().to_owned()
}

/// Parses `text` (the whole file).
fn parse_yaml(text: &str) -> Yaml {
    assert!(!text.contains('\t'), "tabs in action.yml");
    let lines = content_lines(text);
    let mut at = 0;
    let value = block(text, &lines, &mut at, 0);
    assert_eq!(at, lines.len(), "action.yml: unread lines from {:?}", lines.get(at));
    value
}

/// The block (mapping or sequence) whose lines are indented by `indent`.
fn block(raw: &str, lines: &[Line], at: &mut usize, indent: usize) -> Yaml {
    let is_list = lines[*at].1.starts_with("- ");
    if is_list {
        let mut items = Vec::new();
        while *at < lines.len() && lines[*at].0 == indent && lines[*at].1.starts_with("- ") {
            // "- key: value" opens a mapping indented by two more.
            let rest = lines[*at].1[2..].to_owned();
            let start = *at + 1;
            let mut end = start;
            while end < lines.len() && lines[end].0 > indent {
                end += 1;
            }
            // "- scalar" (a workflow's `branches:` list).
            if end == start && !rest.contains(": ") && !rest.ends_with(':') {
                items.push(Yaml::Text(scalar(&rest)));
                *at = end;
                continue;
            }
            let mut sub: Vec<Line> = vec![(indent + 2, rest, lines[*at].2)];
            sub.extend_from_slice(&lines[start..end]);
            let mut i = 0;
            items.push(block(raw, &sub, &mut i, indent + 2));
            assert_eq!(i, sub.len(), "unread lines in a list item: {:?}", sub.get(i));
            *at = end;
        }
        return Yaml::List(items);
    }
    let mut entries = Vec::new();
    while *at < lines.len() && lines[*at].0 == indent {
        let line = lines[*at].1.clone();
        assert!(!line.starts_with("- "), "a list inside a mapping at the same indent: {line}");
        let (key, rest) = line.split_once(':').unwrap_or_else(|| panic!("not key: value: {line}"));
        let rest = rest.trim();
        *at += 1;
        let value = if rest == "|" {
            // A literal block: the following lines indented deeper, their
            // common indent removed, blank and comment lines kept as the
            // file has them (read from the raw text).
            let mut body = Vec::new();
            while *at < lines.len() && lines[*at].0 > indent {
                body.push(lines[*at].clone());
                *at += 1;
            }
            literal(raw, &body)
        } else if rest.is_empty() && *at < lines.len() && lines[*at].0 > indent {
            let deeper = lines[*at].0;
            block(raw, lines, at, deeper)
        } else if rest.is_empty() {
            // A key with no value (a workflow's `pull_request:`): null.
            Yaml::Text(String::new())
        } else {
            Yaml::Text(scalar(rest))
        };
        entries.push((key.trim().to_owned(), value));
    }
    Yaml::Map(entries)
}

/// A `|` block's text: the file's lines from its first content line to
/// its last (blank lines and comments in between kept), with the first
/// line's indent removed, and a final newline.
fn literal(raw: &str, body: &[Line]) -> Yaml {
    let (first, last) = (&body[0], &body[body.len() - 1]);
    let raw_lines: Vec<&str> = raw.lines().collect();
    let mut text = String::new();
    for l in &raw_lines[first.2..=last.2] {
        text.push_str(l.get(first.0..).unwrap_or(""));
        text.push('\n');
    }
    Yaml::Text(text)
}

/// `${{ inputs.NAME }}` replaced by the input's value; any other
/// expression fails the test (the runner would evaluate it; this does not).
fn substitute(text: &str, inputs: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("unclosed ${{") + start;
        let expression = rest[start + 3..end].trim();
        let name = expression.strip_prefix("inputs.").unwrap_or_else(|| panic!("an expression this test cannot evaluate: {expression}"));
        out.push_str(inputs.get(name).unwrap_or_else(|| panic!("no input {name}")));
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// What a run of the action left: each step's exit status (until the first
/// failure, as the runner stops there), the job summary, `GITHUB_OUTPUT`,
/// `GITHUB_PATH` (the folders it adds to later steps' `PATH`), and the
/// steps' stdout.
struct ActionRun {
    statuses: Vec<i32>,
    summary: String,
    outputs: String,
    path: Vec<String>,
    stdout: String,
    workspace: tempfile::TempDir,
}

impl ActionRun {
    /// The workspace the steps ran in.
    fn work(&self) -> PathBuf {
        self.workspace.path().join("work")
    }

    /// Runs a later step's `run:` script in the workspace as the runner
    /// would after the action: with the action's `GITHUB_PATH` folders
    /// first on `PATH` (and not the fake cargo's).
    fn run_later_step(&self, script: &str) -> std::process::Output {
        assert!(!script.contains("${{"), "an expression this test cannot evaluate: {script}");
        let mut path = self.path.clone();
        path.push(std::env::var("PATH").unwrap_or_default());
        let mut command = Command::new("bash");
        command.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script]).current_dir(self.work()).env("PATH", path.join(":"));
        command.output().unwrap()
    }
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// Runs action.yml's steps with `given` inputs (the others take their
/// defaults), in a workspace where `testdata/check` is `check/`.
fn run_action(given: &[(&str, &str)]) -> ActionRun {
    run_action_after(given, |_| {})
}

/// [`run_action`], once `prepare` has made in the workspace what earlier
/// steps of a job would have (a profile, a restored baseline).
fn run_action_after(given: &[(&str, &str)], prepare: impl FnOnce(&Path)) -> ActionRun {
    let action = parse_yaml(&std::fs::read_to_string(repository().join("action.yml")).unwrap());
    let mut inputs = BTreeMap::new();
    for (name, spec) in action.get("inputs").expect("inputs").entries() {
        let value = given.iter().find(|(n, _)| n == name).map(|(_, v)| (*v).to_owned());
        let required = spec.get("required").is_some_and(|r| r.text() == "true");
        let value = value.or_else(|| spec.get("default").map(|d| d.text().to_owned()));
        assert!(value.is_some() || !required, "required input {name} not given");
        inputs.insert(name.clone(), value.unwrap_or_default());
    }
    for (name, _) in given {
        assert!(inputs.contains_key(*name), "action.yml has no input {name}");
    }
    let runs = action.get("runs").expect("runs");
    assert_eq!(runs.get("using").map(Yaml::text), Some("composite"));

    let workspace = tempfile::tempdir().unwrap();
    let temp = workspace.path().join("runner_temp");
    let bin = workspace.path().join("fake_bin");
    let work = workspace.path().join("work");
    for dir in [&temp, &bin, &work] {
        std::fs::create_dir(dir).unwrap();
    }
    std::os::unix::fs::symlink(testdata().join("check"), work.join("check")).unwrap();
    prepare(&work);
    // `cargo install --locked --quiet --path P --root R`: checked, then the
    // built binary is installed as R/bin/rtfprof.
    let cargo = bin.join("cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/bash\nset -eu\n[ \"$1\" = install ] || {{ echo \"fake cargo: $*\" >&2; exit 3; }}\n\
             root=; path=\nwhile [ $# -gt 0 ]; do case \"$1\" in --root) root=$2; shift;; --path) path=$2; shift;; esac; shift; done\n\
             [ \"$path\" = \"$GITHUB_ACTION_PATH\" ] || {{ echo \"fake cargo: --path $path\" >&2; exit 3; }}\n\
             mkdir -p \"$root/bin\" && ln -sf '{}' \"$root/bin/rtfprof\"\n",
            env!("CARGO_BIN_EXE_rtfprof")
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (summary, outputs) = (workspace.path().join("summary.md"), workspace.path().join("output.txt"));
    let github_path = workspace.path().join("path.txt");
    for file in [&summary, &outputs, &github_path] {
        std::fs::write(file, "").unwrap();
    }

    let mut statuses = Vec::new();
    let mut stdout = String::new();
    for step in runs.get("steps").expect("steps").list() {
        assert_eq!(step.get("shell").map(Yaml::text), Some("bash"), "{step:?}");
        let script = substitute(step.get("run").expect("run").text(), &inputs);
        let mut command = Command::new("bash");
        command.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script]).current_dir(&work);
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        command.env("PATH", path).env("GITHUB_ACTION_PATH", repository()).env("RUNNER_TEMP", &temp);
        command.env("GITHUB_STEP_SUMMARY", &summary).env("GITHUB_OUTPUT", &outputs).env("GITHUB_PATH", &github_path).env("GITHUB_ACTIONS", "true");
        for (name, value) in &inputs {
            command.env(format!("INPUT_{}", name.to_uppercase()), value);
        }
        for (name, value) in step.get("env").map(Yaml::entries).unwrap_or_default() {
            command.env(name, substitute(value.text(), &inputs));
        }
        let out = command.output().unwrap();
        stdout.push_str(&String::from_utf8_lossy(&out.stdout));
        let status = out.status.code().expect("exited");
        statuses.push(status);
        if status != 0 {
            eprintln!("step {:?} exited {status}: {}", step.get("name"), String::from_utf8_lossy(&out.stderr));
            break;
        }
    }
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    let path = read(&github_path).lines().map(str::to_owned).collect();
    ActionRun { statuses, summary: read(&summary), outputs: read(&outputs), path, stdout, workspace }
}

#[test]
fn the_reader_reads_action_yml_shapes() {
    let doc = parse_yaml("# c\na: 'x''y' # c\nb:\n  c: \"q\"\n  d:\n    - e: 1\n      f: |\n        line 1\n\n        line 2 # kept\n    - e: 2\n");
    assert_eq!(doc.get("a").unwrap().text(), "x'y");
    let b = doc.get("b").unwrap();
    assert_eq!(b.get("c").unwrap().text(), "q");
    let d = b.get("d").unwrap().list();
    assert_eq!(d.len(), 2);
    assert_eq!(d[0].get("f").unwrap().text(), "line 1\n\nline 2 # kept\n");
    assert_eq!(d[1].get("e").unwrap().text(), "2");
    let doc = parse_yaml("on:\n  pull_request:\n  push:\n    branches:\n      - main\n");
    let on = doc.get("on").unwrap();
    assert_eq!(on.get("pull_request").unwrap().text(), "");
    assert_eq!(on.get("push").unwrap().get("branches").unwrap().list(), [Yaml::Text("main".into())]);
}

#[test]
fn the_action_passes_identical_runs() {
    let run = run_action(&[("baseline", "check/torch_base_a"), ("new", "check/torch_base_b")]);
    assert_eq!(run.statuses, [0, 0], "{}", run.stdout);
    assert!(run.summary.starts_with("### ✅ rtfprof check\n"), "{}", run.summary);
    assert!(run.summary.contains("PASS\\: no regression"), "{}", run.summary);
    assert_eq!(run.outputs, "passed=true\n");
    assert!(run.stdout.lines().last().unwrap().starts_with("::notice title=rtfprof check::PASS"), "{}", run.stdout);
    // The JUnit XML at the input's default path, in the workspace.
    let junit = std::fs::read_to_string(run.workspace.path().join("work/rtfprof-check.xml")).unwrap();
    assert!(junit.contains("<testsuite ") && !junit.contains("<failure"), "{junit}");
}

#[test]
fn the_action_fails_a_regression_with_annotations_and_a_summary() {
    let run = run_action(&[
        ("baseline", "check/tf_base_a"),
        ("new", "check/tf_memory"),
        ("args", "--max_regression 10000% --max_op_regression 10000%"),
        ("junit", "out/junit.xml"),
    ]);
    // (The JUnit path's folder does not exist: rtfprof must say so, exit 2.)
    assert_eq!(run.statuses, [0, 2], "{}", run.stdout);
    assert_eq!(run.outputs, "passed=false\n");
    assert_eq!(run.summary, "", "no summary is written when the check cannot run");

    let run = run_action(&[("baseline", "check/tf_base_a"), ("new", "check/tf_memory"), ("args", "--max_regression 10000% --max_op_regression 10000%")]);
    assert_eq!(run.statuses, [0, 1], "{}", run.stdout);
    assert_eq!(run.outputs, "passed=false\n");
    assert!(run.summary.starts_with("### ❌ rtfprof check\n"), "{}", run.summary);
    assert!(run.summary.contains("FAIL\\: 1 metric regressed\\: memory\\:"), "{}", run.summary);
    assert!(run.stdout.lines().any(|l| l.starts_with("::error title=rtfprof check%3A memory%3A")), "{}", run.stdout);
    assert!(run.stdout.lines().last().unwrap().starts_with("::error title=rtfprof check::FAIL"), "{}", run.stdout);
}

/// Several runs a side, one path a line: identical runs pass, more memory
/// fails, and the summary names every run.
#[test]
fn the_action_takes_several_runs_a_side() {
    let base = ("baseline", "check/torch_base_a\ncheck/torch_base_b\n");
    let run = run_action(&[base, ("new", "check/torch_fresh_a\n\ncheck/torch_fresh_b")]);
    assert_eq!(run.statuses, [0, 0], "{}", run.stdout);
    assert!(run.summary.contains("Baseline: check\\/torch\\_base\\_a\\, check\\/torch\\_base\\_b"), "{}", run.summary);
    assert!(run.summary.contains("New: check\\/torch\\_fresh\\_a\\, check\\/torch\\_fresh\\_b"), "{}", run.summary);
    let run = run_action(&[base, ("new", "check/torch_memory"), ("args", "--max_regression 10000% --max_op_regression 10000%")]);
    assert_eq!(run.statuses, [0, 1], "{}", run.stdout);
    assert!(run.summary.contains("FAIL\\: 1 metric regressed\\: memory\\:"), "{}", run.summary);
}

#[test]
fn the_rules_input_is_passed_as_rules() {
    // A path with a space: the action quotes it.
    let copy = |work: &Path| {
        std::fs::copy(testdata().join("check/rules.toml"), work.join("my rules.toml")).unwrap();
    };
    let run = run_action_after(&[("baseline", "check/tf_base_a"), ("new", "check/tf_wider"), ("rules", "my rules.toml")], copy);
    assert_eq!(run.statuses, [0, 1], "{}", run.stdout);
    assert!(run.summary.contains("#### Budgets") && run.summary.contains("| **OVER BUDGET** | step\\_time |"), "{}", run.summary);
    assert!(run.summary.contains("#### Ignored by the rules file"), "{}", run.summary);
    assert!(run.stdout.lines().any(|l| l.starts_with("::error title=rtfprof check%3A budget step_time::")), "{}", run.stdout);
    // Without it, no budget is judged.
    let run = run_action(&[("baseline", "check/tf_base_a"), ("new", "check/tf_wider")]);
    assert!(!run.summary.contains("#### Budgets"), "{}", run.summary);
    // A missing rules file is a bad input: exit 2, no summary.
    let run = run_action(&[("baseline", "check/tf_base_a"), ("new", "check/tf_wider"), ("rules", "nope.toml")]);
    assert_eq!(run.statuses, [0, 2], "{}", run.stdout);
    assert_eq!((run.summary.as_str(), run.outputs.as_str()), ("", "passed=false\n"));
}

const SUMMARY_BEGIN: &str = "<!-- job summary: begin (written by tests/integration/check_action.rs) -->\n";
const SUMMARY_END: &str = "<!-- job summary: end -->\n";

/// The book's example workflow (docs/book/src/commands/check.md, the
/// ```yaml block of "In a GitHub workflow") run locally: its check step
/// runs the action with the step's own `with:` inputs, in a workspace
/// holding what its earlier steps would have left there (the checkout's
/// rules file: testdata/check/rules.toml; the benchmark's profile `new`:
/// the tf_wider run; the restored `baseline.json`: saved from tf_base_a);
/// then its save step runs, with the action's rtfprof on `PATH`. The job
/// summary the check step writes is the one the page shows, as a
/// blockquote between its markers (`RTFPROF_BLESS=1` rewrites the page's
/// copy; review the diff).
#[test]
fn the_books_example_workflow_runs_and_writes_the_summary_the_book_shows() {
    let page_path = repository().join("docs/book/src/commands/check.md");
    let page = std::fs::read_to_string(&page_path).unwrap();
    let section = page.split("\n## In a GitHub workflow\n").nth(1).expect("the section");
    let yaml = section.split("```yaml\n").nth(1).and_then(|b| b.split("```").next()).expect("a ```yaml block");
    let workflow = parse_yaml(yaml);
    let (_, job) = &workflow.get("jobs").expect("jobs").entries()[0];
    let steps = job.get("steps").expect("steps").list();
    let check = steps.iter().find(|s| s.get("uses").is_some_and(|u| u.text().starts_with("OWNER/rtfprof@"))).expect("a step that uses the action");
    let with: Vec<(&str, &str)> = check.get("with").expect("with").entries().iter().map(|(k, v)| (k.as_str(), v.text())).collect();
    let input = |name: &str| with.iter().find(|(k, _)| *k == name).map(|(_, v)| *v).unwrap_or_else(|| panic!("the step gives no {name}"));
    let (baseline, new, rules) = (input("baseline"), input("new"), input("rules"));
    let save = steps.iter().find_map(|s| s.get("run").map(Yaml::text).filter(|r| r.contains("--save_baseline"))).expect("a step that saves the baseline");

    let prepare = |work: &Path| {
        let rules = work.join(rules);
        std::fs::create_dir_all(rules.parent().unwrap()).unwrap();
        std::fs::copy(testdata().join("check/rules.toml"), rules).unwrap();
        std::os::unix::fs::symlink(testdata().join("check/tf_wider"), work.join(new)).unwrap();
        // (From the workspace, so that the summary names the run by a
        // path of the repository's, not of this machine's.)
        let out = Command::new(env!("CARGO_BIN_EXE_rtfprof"))
            .args(["check", "check/tf_base_a", &format!("--save_baseline={baseline}")])
            .current_dir(work)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let run = run_action_after(&with, prepare);
    assert_eq!(run.statuses, [0, 1], "{}", run.stdout);
    assert_eq!(run.outputs, "passed=false\n");
    assert!(run.summary.contains("**OVER BUDGET**"), "{}", run.summary);

    // The page's copy, quoted.
    let quoted: String = run.summary.lines().map(|l| if l.is_empty() { ">\n".to_owned() } else { format!("> {l}\n") }).collect();
    let (head, rest) = page.split_once(SUMMARY_BEGIN).expect("the summary's begin marker");
    let (shown, tail) = rest.split_once(SUMMARY_END).expect("the summary's end marker");
    if std::env::var_os("RTFPROF_BLESS").is_some() {
        std::fs::write(&page_path, format!("{head}{SUMMARY_BEGIN}{quoted}{SUMMARY_END}{tail}")).unwrap();
    } else {
        assert!(shown == quoted, "the book's job summary is not the action's; if intended, rerun with RTFPROF_BLESS=1 and review:\n{quoted}");
    }

    // The save step, with the rtfprof the action installed.
    let out = run.run_later_step(save);
    assert!(out.status.success(), "{save}: {}", String::from_utf8_lossy(&out.stderr));
    let again = Command::new(env!("CARGO_BIN_EXE_rtfprof")).args(["check", baseline, new]).current_dir(run.work()).output().unwrap();
    assert_eq!(again.status.code(), Some(0), "the saved baseline is the new run's: {}", String::from_utf8_lossy(&again.stdout));
}
