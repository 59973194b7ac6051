//! The command line's contract: usage errors exit 2 with one line ending in a
//! `--help` hint; input errors exit 1 with one line naming the file; `--help`
//! lists every option with tfprof's default; no arguments print tfprof's help.

use std::process::Command;

use crate::common;

use common::{fixture_flags, rtfprof, testdata};

#[test]
fn usage_errors_are_one_line_with_a_help_hint() {
    for args in
        [&["scope", "--bogus=1"][..], &["scope", "--select=foo"], &["scope", "--max_depth=x"], &["scope", "--order_by=size"], &["scope", "--output=html"]]
    {
        let run = rtfprof(args).run();
        let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("rtfprof: ") && err.trim_end().ends_with("see 'rtfprof --help'"), "{err}");
    }
}

/// tfprof's command line assigns each argument in turn (TensorFlow's
/// `Flags::Parse`, `command_line_flags.cc`), and its prompt likewise: a
/// flag given twice takes its last value.
#[test]
fn a_flag_given_twice_takes_its_last_value() {
    let flags = fixture_flags("cnn");
    let view = |extra: &[&str]| rtfprof(["scope"]).args(&flags).args(extra).stdout();
    let last = view(&["--max_depth=2", "--select=micros"]);
    assert_ne!(last, view(&["--max_depth=1", "--select=micros"]), "the test needs depths that differ");
    assert_eq!(view(&["--max_depth=1", "-max_depth", "2", "--select=bytes", "--select=micros"]), last);
    let prompt = |line: &str| rtfprof(&flags).stdin(format!("{line}\nquit\n")).stdout();
    assert_eq!(prompt("scope -max_depth 1 -max_depth 2 -select micros"), prompt("scope -max_depth 2 -select micros"));
    assert_ne!(prompt("scope -max_depth 1 -select micros"), prompt("scope -max_depth 2 -select micros"));
}

#[test]
fn input_errors_exit_1_naming_the_file() {
    let run = rtfprof(["scope", "--graph_path=/nonexistent/graph.pb"]).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!((code, out), (1, ""));
    assert_eq!(err, "rtfprof: --graph_path /nonexistent/graph.pb: No such file or directory (os error 2)\n");
}

#[test]
fn help_lists_every_option_with_its_default() {
    let run = rtfprof(["--help"]).run();
    let (out, code) = (run.stdout_str(), run.exit_code());
    assert_eq!(code, 0);
    for (flag, default) in
        [("--max_depth", "10"), ("--step", "-1"), ("--order_by", "name"), ("--select", "micros"), ("--account_type_regexes", ".*"), ("--output", "stdout")]
    {
        let line = out.lines().position(|l| l.trim_start().starts_with(flag)).unwrap_or_else(|| panic!("{flag} missing"));
        let described: String = out.lines().skip(line).take(4).collect();
        assert!(described.contains(&format!("[default: {default}]")), "{flag}: {described}");
    }
}

/// `rtfprof` alone says what it is, its commands and examples, and no flag
/// that it does not have (tfprof's help text names `--run_log_path`).
#[test]
fn no_arguments_print_an_overview() {
    let run = rtfprof([] as [&str; 0]).run();
    let (out, code) = (run.stdout_str(), run.exit_code());
    assert_eq!(code, 0);
    assert!(out.starts_with("rtfprof: ") && out.contains("XPlane"), "{out}");
    for command in ["scope", "op", "steps", "memory", "report", "hlo", "kernels"] {
        assert!(out.lines().any(|l| l.trim_start().starts_with(&format!("{command} "))), "{command} missing:\n{out}");
    }
    assert!(out.contains("Examples") && !out.contains("run_log_path") && !out.contains("--min_bytes"), "{out}");
}

/// Each subcommand's help lists the flags that command reads and no other
/// (they are still accepted, as tfprof's flags are anywhere).
#[test]
fn subcommand_help_lists_its_own_flags() {
    let listed = |command: &str, flag: &str| {
        let run = rtfprof([command, "--help"]).run();
        let (out, code) = (run.stdout_str(), run.exit_code());
        assert_eq!(code, 0);
        out.lines().any(|l| l.trim_start().starts_with(flag))
    };
    for (command, read, not_read) in [
        ("steps", &["--xplane_path", "--profile_path", "--output"][..], &["--order_by", "--checkpoint_path", "--select", "--op_log_path"][..]),
        ("hlo", &["--xplane_path", "--max_depth"], &["--graph_path", "--select", "--min_bytes"]),
        ("scope", &["--select", "--order_by", "--xplane_path", "--graph_path"], &[]),
        ("memory", &["--step", "--min_bytes"], &["--select", "--op_log_path"]),
        ("man", &[], &["--graph_path", "--output"]),
        ("cut", &["--steps", "--time_ms", "--devices", "--min_dur_us", "--xplane_path"], &["--select", "--step "]),
        ("code", &["--steps", "--min_dur_us"], &[]),
        ("steps", &[], &["--steps", "--min_dur_us"]),
        (
            "capture",
            &["--service_addr", "--logdir", "--duration_ms", "--host_tracer_level", "--delay_ms", "--count", "--output"],
            &["--xplane_path", "--select"],
        ),
    ] {
        for flag in read {
            assert!(listed(command, flag), "{command} --help lacks {flag}");
        }
        for flag in not_read {
            assert!(!listed(command, flag), "{command} --help lists {flag}");
        }
    }
    // A flag a command does not list still parses anywhere.
    rtfprof(["steps", "--profile_path", "testdata/cnn/profile", "--order_by", "micros", "--output", "none"]).run().ok();
}

#[cfg(unix)]
/// Every example in the help texts runs as written, from the repository
/// root's point of view (output files go to a scratch directory).
#[test]
fn help_examples_run() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(testdata(), dir.path().join("testdata")).unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_rtfprof"));
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let mut helps = vec![rtfprof(["--help"]).stdout()];
    for command in ["scope", "graph", "op", "code", "advise", "diff", "jobs", "memory", "report", "steps", "hlo", "kernels", "partial", "completions", "man"] {
        let help = rtfprof([command, "--help"]).stdout();
        assert!(help.contains("Examples:"), "{command} has no examples");
        helps.push(help);
    }
    let examples: Vec<String> = helps.iter().flat_map(|h| h.lines()).filter_map(|l| l.strip_prefix("  rtfprof ")).map(|l| format!("rtfprof {l}")).collect();
    assert!(examples.len() >= 30, "{examples:?}");
    for example in examples {
        let out = Command::new("sh").arg("-c").arg(&example).current_dir(dir.path()).env("PATH", &path).output().unwrap();
        assert!(out.status.success(), "{example}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!out.stdout.is_empty() || example.contains('>') || example.contains("outfile="), "{example} printed nothing");
    }
}

/// Inputs from pipes, as a shell's `<(…)` gives them: each is read once from
/// the descriptor opened, and the view equals the one from the files.
#[cfg(unix)]
#[test]
fn inputs_can_be_pipes() {
    let data = testdata().join("mlp");
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["scope".to_owned(), "--select=bytes,micros,params".to_owned()];
    let mut writers = Vec::new();
    for (flag, file) in [("--graph_path", "graph.pb"), ("--run_meta_path", "run_meta_0"), ("--op_log_path", "tfprof_log")] {
        let fifo = dir.path().join(file);
        assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let bytes = std::fs::read(data.join(file)).unwrap();
        let target = fifo.clone();
        writers.push(std::thread::spawn(move || std::fs::write(target, bytes).unwrap()));
        args.push(format!("{flag}={}", fifo.display()));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = rtfprof(&args).run();
    let (from_pipes, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    // (Checked before joining: a writer whose pipe was never opened waits.)
    assert_eq!(code, 0, "{err}");
    writers.into_iter().for_each(|w| w.join().unwrap());
    let graph = data.join("graph.pb").display().to_string();
    let run_meta = data.join("run_meta_0").display().to_string();
    let op_log = data.join("tfprof_log").display().to_string();
    let from_files = rtfprof([
        "scope",
        "--select=bytes,micros,params",
        &format!("--graph_path={graph}"),
        &format!("--run_meta_path={run_meta}"),
        &format!("--op_log_path={op_log}"),
    ])
    .stdout();
    assert_eq!(from_pipes, from_files);
}

/// A view too large to render in one window is streamed to its output file
/// window by window; the file holds exactly the text printed on stdout.
#[test]
fn large_views_stream_to_files_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("graph.pbtxt");
    let nodes: String = (0..100_000).map(|i| format!("node {{ name: \"s{}/t{}/n{i}\" op: \"NoOp\" }}\n", i % 11, i % 97)).collect();
    std::fs::write(&graph, nodes).unwrap();
    let file = dir.path().join("out.txt");
    let common = ["scope".to_owned(), format!("--graph_path={}", graph.display()), "--max_depth=10".to_owned(), "--select=params,op_types".to_owned()];
    let with = |extra: &[String]| -> Vec<String> { common.iter().chain(extra).cloned().collect() };
    let to_file = with(&[format!("--output=file:outfile={}", file.display())]);
    rtfprof(&to_file).run().ok();
    let run = rtfprof(with(&[])).run();
    let (printed, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.lines().count() > 100_000, "{} lines", written.lines().count());
    assert!(printed.ends_with(&written), "the file differs from stdout");
    assert!(written.starts_with("\nDoc:\n"), "{}", &written[..40]);
}

/// A mistyped flag or command gets clap's suggestion in its one line,
/// whether typed with two dashes or with tfprof's one.
#[test]
fn typos_get_a_suggestion() {
    for (args, says) in [
        (&["scope", "--selct", "micros"][..], "unexpected argument '--selct' found; did you mean '--select'?"),
        (&["scope", "-selct", "micros"], "unexpected argument '--selct' found; did you mean '--select'?"),
        (&["scope", "-max_depht=3"], "unexpected argument '--max_depht' found; did you mean '--max_depth'?"),
        (&["scoep"], "unrecognized subcommand 'scoep'; did you mean"),
    ] {
        let run = rtfprof(args).run();
        let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
        assert_eq!((code, out), (2, ""), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // Negative numbers and short flags are left alone.
    rtfprof(["scope", "--step", "-1", "-h"]).run().ok();
}

/// An input given without its flag, as a newcomer first types it: the one
/// line says which flag reads it, from the file's first bytes (or the
/// traces a directory holds), never from its name.
#[test]
fn an_input_without_its_flag_gets_the_flag() {
    let xplane = "testdata/xplane/jax_gpu_cnn/plugins/profile/run0/host0.xplane.pb";
    let renamed = tempfile::tempdir().unwrap();
    let trace = renamed.path().join("trace.bin");
    std::fs::copy(xplane, &trace).unwrap();
    let trace = trace.to_str().unwrap();
    let torch = "testdata/pytorch/h200_tx.steps2-3.pt.trace.json.gz";
    for (args, says) in [
        (&["scope", xplane][..], format!("unexpected argument '{xplane}' found; it looks like an XPlane trace (*.xplane.pb): use --xplane_path {xplane}")),
        (&["scope", trace], format!("'{trace}' found; it looks like an XPlane trace (*.xplane.pb): use --xplane_path {trace}")),
        (&["steps", "testdata/xplane/jax_gpu_cnn"], "looks like a directory of XPlane traces: use --xplane_path testdata/xplane/jax_gpu_cnn".to_owned()),
        (&["op", torch], format!("looks like a PyTorch (Chrome JSON) trace: use --pytorch_path {torch}")),
        (&["op", "testdata/pytorch"], "looks like a directory of PyTorch traces: use --pytorch_path testdata/pytorch".to_owned()),
        (&["scope", "testdata/cnn/graph.pb"], "looks like a GraphDef: use --graph_path testdata/cnn/graph.pb".to_owned()),
    ] {
        let run = rtfprof(args).run();
        let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
        assert_eq!((code, out), (2, ""), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(&says), "{args:?}: {err}");
    }
    // Anything else keeps the plain usage line.
    for arg in ["no/such/file", "README.md", "testdata"] {
        let run = rtfprof(["scope", arg]).run();
        let (err, code) = (run.stderr_str(), run.exit_code());
        assert_eq!(code, 2, "{arg}");
        assert!(err.trim_end().ends_with(&format!("unexpected argument '{arg}' found; see 'rtfprof --help'")), "{arg}: {err}");
    }
}

/// Shell completions and the man page come from the same flag definitions.
#[test]
fn completions_and_the_man_page() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = rtfprof(["completions", shell]).run();
        let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains("select") && out.contains("xplane_path") && out.contains("kernels"), "{shell}");
    }
    // bash loads its script: `complete` knows rtfprof afterwards.
    let script = rtfprof(["completions", "bash"]).stdout();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rtfprof.bash"), &script).unwrap();
    let bash = Command::new("bash").arg("-c").arg(format!("source {}/rtfprof.bash && complete -p rtfprof", dir.path().display())).output();
    if let Ok(bash) = bash {
        assert!(bash.status.success() && String::from_utf8_lossy(&bash.stdout).contains("rtfprof"), "{}", String::from_utf8_lossy(&bash.stderr));
    }
    let run = rtfprof(["man"]).run();
    let (out, code) = (run.stdout_str(), run.exit_code());
    assert_eq!(code, 0);
    assert!(out.starts_with(".ie") && out.contains(".TH rtfprof 1") && out.contains("max_depth"), "{}", &out[..200.min(out.len())]);
    let run = rtfprof(["completions", "tcsh"]).run();
    let (err, code) = (run.stderr_str(), run.exit_code());
    assert_eq!(code, 2, "{err}");
}

/// Errors and warnings are coloured only where colour is asked for: a
/// terminal, or `CLICOLOR_FORCE=1`; `NO_COLOR` wins, and pipes (these
/// tests' stderr) get the plain line, byte for byte.
#[test]
fn colour_only_where_asked_for() {
    let run = |env: &[(&str, &str)]| {
        let mut command = rtfprof(["scope", "--select=nope", "--profile_path=x"]);
        for var in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE"] {
            command = command.env_remove(var);
        }
        for (key, value) in env {
            command = command.env(key, value);
        }
        let out = command.run();
        assert_eq!(out.code(), Some(2));
        out.stderr_str().to_owned()
    };
    let plain = run(&[]);
    assert!(plain.starts_with("rtfprof: --select: ") && !plain.contains('\x1b'), "{plain:?}");
    let forced = run(&[("CLICOLOR_FORCE", "1")]);
    assert!(forced.contains("\x1b["), "{forced:?}");
    let stripped: String = {
        // The same text once the escape sequences are taken out.
        let mut out = String::new();
        let mut chars = forced.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                chars.by_ref().find(|c| c.is_ascii_alphabetic());
            } else {
                out.push(c);
            }
        }
        out
    };
    assert_eq!(stripped, plain);
    assert_eq!(run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]), plain);
}

/// `rtfprof kernels --pytorch_path`: XProf's kernel table of a PyTorch
/// trace (its header, `--max_depth` rows and the line about the rest), the
/// CSV with the JSON's keys, a directory of ranks as jobs; a CPU-only
/// trace has no kernels, and `hlo` says a PyTorch trace runs no XLA.
#[test]
fn kernels_take_pytorch_traces() {
    let trace = testdata().join("pytorch/h200_resnet18.steps2-3.pt.trace.json.gz");
    let flag = format!("--pytorch_path={}", trace.display());
    let run = rtfprof(["kernels", &flag, "--max_depth=5"]).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Kernels (XProf's kernel_stats), by total time:", "{out}");
    let header = ["kernel", "op", "occurrences", "total", "avg", "min", "max", "regs", "shmem", "block", "grid", "occupancy", "TensorCore"];
    assert_eq!(lines[1].split_whitespace().collect::<Vec<_>>(), header, "{out}");
    // the rows, the line about the rest, the line about names cut (cuDNN's)
    assert_eq!(lines.len(), 2 + 5 + 2, "{out}");
    assert!(lines[2..7].iter().all(|l| l.contains(" aten::") && l.contains('%')), "{out}");
    assert!(lines[7].starts_with('(') && lines[7].contains(" more rows"), "{out}");
    assert!(lines[8].starts_with("(names longer than"), "{out}");

    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("kernels.csv");
    rtfprof(["kernels", &flag, &format!("--output=csv:outfile={}", csv.display())]).run().ok();
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "kernel_name,op_name,registers_per_thread,shmem_bytes,block_dim,grid_dim,occupancy_pct,is_op_tensor_core_eligible,is_kernel_using_tensor_core,occurrences,total_duration_us,avg_duration_us,min_duration_us,max_duration_us"
    );

    let ranks = dir.path().join("ranks");
    std::fs::create_dir(&ranks).unwrap();
    for rank in ["rank0", "rank1"] {
        std::fs::copy(&trace, ranks.join(format!("{rank}.pt.trace.json.gz"))).unwrap();
    }
    let run = rtfprof(["kernels", &format!("--pytorch_path={}", ranks.display()), "--max_depth=4"]).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().nth(1).unwrap().split_whitespace().next(), Some("job"), "{out}");
    assert!(out.lines().skip(2).take(4).all(|l| l.starts_with("rank0 ") || l.starts_with("rank1 ")), "{out}");

    let run = rtfprof(["kernels", &format!("--pytorch_path={}", testdata().join("pytorch/schedule.pt.trace.json.gz").display())]).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!((code, out), (1, ""), "{err}");
    assert!(err.contains("no GPU kernels"), "{err}");
    let run = rtfprof(["hlo", &flag]).run();
    let (err, code) = (run.stderr_str(), run.exit_code());
    assert_eq!(code, 1);
    assert!(err.contains("PyTorch trace runs no XLA instruction"), "{err}");
}

/// The book's Markdown pages (`docs/book/src`, SUMMARY.md included), by
/// path.
fn book_pages() -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut pages = Vec::new();
    walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/book/src"), &mut pages);
    pages.sort();
    pages
}

/// The docs hold together: every page of the book is in its SUMMARY.md and
/// every SUMMARY entry exists; every relative link of the README, the
/// book, CONTRIBUTING and CHANGELOG names a file that exists, and a `#anchor`
/// into a Markdown file names one of its headings (GitHub's and mdBook's
/// slugs: lowercase, punctuation dropped, spaces to hyphens).
#[test]
fn docs_links_resolve() {
    use std::path::{Path, PathBuf};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let book = root.join("docs/book/src");
    let mut files = book_pages();
    let summary = std::fs::read_to_string(book.join("SUMMARY.md")).unwrap();
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let listed: Vec<PathBuf> = link.captures_iter(&summary).map(|c| book.join(&c[1])).collect();
    for page in &files {
        assert!(page.ends_with("SUMMARY.md") || listed.contains(page), "{} is not in SUMMARY.md", page.display());
    }
    files.extend(["README.md", "CONTRIBUTING.md", "CHANGELOG.md"].map(|f| root.join(f)));
    let slug = |heading: &str| -> String {
        heading.trim().to_lowercase().chars().filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ').collect::<String>().replace(' ', "-")
    };
    let anchors = |text: &str| -> Vec<String> {
        let mut fence = false;
        let mut out = Vec::new();
        for line in text.lines() {
            if line.starts_with("```") {
                fence = !fence;
            } else if !fence && line.starts_with('#') {
                out.push(slug(line.trim_start_matches('#')));
            }
        }
        out
    };
    let mut bad = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let mut fence = false;
        for line in text.lines() {
            if line.starts_with("```") {
                fence = !fence;
            }
            if fence {
                continue;
            }
            for c in link.captures_iter(line) {
                let target = &c[1];
                if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                let dest = if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
                if !dest.exists() {
                    bad.push(format!("{}: {target}: no such file", file.display()));
                } else if !anchor.is_empty()
                    && dest.extension().is_some_and(|x| x == "md")
                    && !anchors(&std::fs::read_to_string(&dest).unwrap()).iter().any(|a| a == anchor)
                {
                    bad.push(format!("{}: {target}: no such heading", file.display()));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{} broken links:\n{}", bad.len(), bad.join("\n"));
}

/// The examples of the README and the book run, and show what rtfprof
/// prints. Each rtfprof command of a ```sh block (`cargo run --release --`
/// stands for `rtfprof`) whose inputs are files of the repository (not a
/// user's `logdir`) runs from a scratch directory that sees `testdata/`,
/// and must exit 0. Where an unlabelled block follows a block of such
/// commands only, it is what they print: its lines must appear in their
/// output in order, `…` standing for any text (a line of its own: any
/// lines).
#[test]
fn book_examples_run_and_show_real_output() {
    use std::path::{Path, PathBuf};
    use std::process::Command;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<PathBuf> = std::iter::once(root.join("README.md")).chain(book_pages()).collect();

    let scratch = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root.join("testdata"), scratch.path().join("testdata")).unwrap();
    let bin = scratch.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rtfprof"), bin.join("rtfprof")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());

    let (mut ran, mut checked, mut failures) = (0, 0, Vec::new());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // (language, lines, line number) of each fenced block
        let mut blocks: Vec<(String, Vec<&str>, usize)> = Vec::new();
        let mut open: Option<(String, Vec<&str>, usize)> = None;
        for (n, line) in text.lines().enumerate() {
            match (&mut open, line.strip_prefix("```")) {
                (None, Some(lang)) => open = Some((lang.trim().to_owned(), Vec::new(), n + 1)),
                (Some(_), Some(_)) => blocks.push(open.take().unwrap()),
                (Some((_, lines, _)), None) => lines.push(line),
                (None, None) => {}
            }
        }
        for (k, (lang, lines, at)) in blocks.iter().enumerate() {
            if lang != "sh" {
                continue;
            }
            // lines joined at a trailing backslash; comments dropped
            let mut commands: Vec<String> = Vec::new();
            let mut pending = String::new();
            for line in lines {
                let line = line.split(" #").next().unwrap().trim();
                if line.starts_with('#') || line.is_empty() {
                    continue;
                }
                match line.strip_suffix('\\') {
                    Some(head) => pending.push_str(head),
                    None => commands.push(std::mem::take(&mut pending) + line),
                }
            }
            let commands: Vec<String> = commands.iter().map(|c| c.replacen("cargo run --release --", "rtfprof", 1)).collect();
            // An input flag's value (`--graph_path a,b`, `--left_text f`)
            // names files of the repository, or the example is a user's (as
            // a profiler server's `--service_addr` always is).
            let inputs_exist = |c: &str| {
                let words: Vec<&str> = c.split_whitespace().collect();
                let value = |w: &[&str]| if w[0] == "--job" { w[1].split_once('=').map_or(w[1], |(_, p)| p).to_owned() } else { w[1].to_owned() };
                words
                    .windows(2)
                    .filter(|w| w[0].ends_with("_path") || w[0].ends_with("_text") || w[0] == "--job" || w[0] == "--service_addr")
                    .all(|w| value(w).split(',').all(|p| root.join(p).exists()))
            };
            let runnable = |c: &String| c.starts_with("rtfprof ") && inputs_exist(c);
            let mut output = String::new();
            for command in commands.iter().filter(|c| runnable(c)) {
                let out = Command::new("sh").arg("-c").arg(command).current_dir(scratch.path()).env("PATH", &path).output().unwrap();
                output.push_str(&String::from_utf8_lossy(&out.stdout));
                output.push_str(&String::from_utf8_lossy(&out.stderr));
                if !out.status.success() {
                    failures.push(format!("{}:{at}: `{command}` exited {}: {}", file.display(), out.status, String::from_utf8_lossy(&out.stderr).trim()));
                }
                ran += 1;
            }
            let Some((_, shown, shown_at)) = blocks.get(k + 1).filter(|b| b.0.is_empty() && !commands.is_empty() && commands.iter().all(runnable)) else {
                continue;
            };
            checked += 1;
            let got: Vec<&str> = output.lines().map(str::trim_end).collect();
            let mut next = 0;
            for line in shown.iter().map(|l| l.trim_end()).filter(|l| *l != "…") {
                let parts: Vec<String> = line.split('…').map(regex::escape).collect();
                let pattern = regex::Regex::new(&format!("^{}{}", parts.join(".*"), if line.ends_with('…') { "" } else { "$" })).unwrap();
                match got[next..].iter().position(|g| pattern.is_match(g)) {
                    Some(i) => next += i + 1,
                    None => {
                        failures.push(format!("{}:{shown_at}: shown but not printed (in order): {line}", file.display()));
                        break;
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} examples fail:\n{}", failures.len(), failures.join("\n"));
    assert!(ran >= 30 && checked >= 9, "{ran} commands run, {checked} outputs checked");
    eprintln!("{ran} commands run, {checked} outputs checked");
}
