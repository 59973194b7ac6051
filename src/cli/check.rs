//! `rtfprof check`: the two sides from BASELINE... NEW (or `--new`) or the
//! `--left_*`/`--right_*` flags, each one run or several, their samples
//! ([`crate::check::from_sources`], or a saved baseline), the decision,
//! and every `--output`.
//!
//! Its exit status is a contract for CI: 0 no regression, 1 a regression,
//! 2 anything else that went wrong (a bad flag, a missing or unreadable
//! input). Elsewhere rtfprof exits 1 for bad input; here 1 must mean a
//! regression only, so that a broken pipeline step is never mistaken for
//! a slower program, nor a slower program for a broken step.

use std::path::PathBuf;

use super::args::{CheckArgs, Cli, SideArgs};
use super::term;
use crate::api::named_by;
use crate::check::{self, Options, Samples, options::parse_fraction};
use crate::error::{Error, Result};
use crate::inputs::InputPaths;
use crate::load::Sources;
use crate::outputs::check::{CheckOutput, baseline};

/// Runs `rtfprof check` and prints as `main` does; returns the exit status.
pub fn main(cli: &Cli, args: &CheckArgs) -> u8 {
    let mut stdout = String::new();
    let result = run(cli, args, &mut stdout);
    let written = super::write_stdout(stdout.as_bytes());
    match result.and_then(|passed| written.map(|()| passed)) {
        Ok(Some(false)) => 1,
        Ok(_) => 0,
        Err(e) => {
            term::error(&e.to_string());
            2
        }
    }
}

/// Runs the check, appending what goes to stdout; `Some(passed)`, or
/// `None` when only a baseline was saved. Every flag is read, and both
/// sides are read, before any file is written.
pub fn run(cli: &Cli, args: &CheckArgs, stdout: &mut String) -> Result<Option<bool>> {
    if let Some(flag) = cli.show.selection_flag() {
        return Err(crate::outputs::view::selects_timelines_only(flag));
    }
    let options = options(args)?;
    let outputs: Vec<CheckOutput> = cli.show.output.iter().map(|o| CheckOutput::parse(o)).collect::<Result<_>>()?;
    let global = cli.inputs.paths();
    let right_flags = flag_sources(&args.sides, Which::New, &global).is_some();
    let (base_paths, new_paths) = split_profiles(args, right_flags);
    let base = side(base_paths, &args.sides, Which::Baseline, &global)?;
    let new = side(new_paths, &args.sides, Which::New, &global)?;
    let (base, new) = match (base, new, &args.save_baseline) {
        (Some(base), Some(new), _) => (base, new),
        // One side and --save_baseline: save it, compare nothing.
        (Some(only), None, Some(path)) | (None, Some(only), Some(path)) => {
            let runs = samples(&only)?;
            crate::outputs::write_atomic(path, &baseline::render(&runs))?;
            let steps: usize = runs.iter().map(|r| r.steps.len()).sum();
            let what = match runs.as_slice() {
                [one] => one.source.clone(),
                _ => format!("{} runs ({})", runs.len(), runs.iter().map(|r| r.source.as_str()).collect::<Vec<_>>().join(", ")),
            };
            stdout.push_str(&format!("Baseline of {what} ({steps} steps) written to {}\n", path.display()));
            return Ok(None);
        }
        (None, _, _) => return Err(Error::flag("check", "give the baseline as BASELINE or with the --left_* flags (e.g. rtfprof check BASELINE NEW)")),
        (_, None, _) => return Err(Error::flag("check", "give the new run as NEW or with the --right_* flags (e.g. rtfprof check BASELINE NEW)")),
    };
    let (base, new) = (samples(&base)?, samples(&new)?);
    let result = check::decide(&base, &new, &options);
    let mut printed = String::new();
    crate::outputs::check::write(&result, &outputs, &mut printed)?;
    if let Some(path) = &args.save_baseline {
        crate::outputs::write_atomic(path, &baseline::render(&new))?;
    }
    stdout.push_str(&printed);
    Ok(Some(result.passed()))
}

/// The decision's options: the built-in defaults, the rules file's over
/// them, and the flags given over both (a `--threshold` wins over the
/// file's regex thresholds too).
fn options(args: &CheckArgs) -> Result<Options> {
    let mut options = match &args.rules {
        Some(path) => check::rules::read(path)?.into_options(path.display().to_string()),
        None => Options::default(),
    };
    let fraction = |flag: &str, value: &Option<String>, into: &mut f64| -> Result<()> {
        if let Some(value) = value {
            *into = parse_fraction(flag, value)?;
        }
        Ok(())
    };
    fraction("--max_regression", &args.max_regression, &mut options.max_regression)?;
    fraction("--max_op_regression", &args.max_op_regression, &mut options.max_op_regression)?;
    fraction("--max_memory_regression", &args.max_memory_regression, &mut options.max_memory_regression)?;
    fraction("--min_share", &args.min_share, &mut options.min_share)?;
    if let Some(value) = &args.min_part_growth {
        options.min_part_growth = Some(parse_fraction("--min_part_growth", value)?);
    }
    if let Some(value) = &args.min_memory_change {
        options.min_memory_change = check::options::parse_bytes("--min_memory_change", value)?;
    }
    if let Some(alpha) = args.alpha {
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(Error::flag("--alpha", format!("{alpha} is not a level between 0 and 1 (e.g. 0.01)")));
        }
        options.alpha = alpha;
    }
    if let Some(min_steps) = args.min_steps {
        options.min_steps = min_steps;
    }
    for value in &args.threshold {
        let (label, amount) = check::options::parse_threshold(value)?;
        options.thresholds.insert(label, amount);
    }
    Ok(options)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Which {
    Baseline,
    New,
}

/// One input of a side: a profile's inputs (with its name in outputs, and
/// what its errors call it), or a path of any kind.
enum Input {
    Sources(Box<Sources>, String, &'static str),
    Path(PathBuf, &'static str),
}

impl Input {
    /// The input's runs: one, or a saved baseline's.
    fn samples(&self) -> Result<Vec<Samples>> {
        match self {
            Input::Sources(sources, name, flag) => check::from_sources(sources, name.clone()).map(|run| vec![run]).map_err(|e| named_by(e, flag)),
            Input::Path(path, word) => crate::api::check_samples(path, word),
        }
    }

    /// [`Input::samples`], giving back the memory each stage frees when
    /// the side is a large trace (as for the input flags, see
    /// [`crate::give_back_freed_memory`]): one side is read after the
    /// other.
    fn samples_giving_back(&self) -> Result<Vec<Samples>> {
        if self.trace_bytes() >= crate::GIVE_BACK_FROM_BYTES { crate::giving_back_freed_memory(|| self.samples()) } else { self.samples() }
    }

    /// The size of the side's traces as text (0 for other inputs).
    fn trace_bytes(&self) -> u64 {
        match self {
            Input::Sources(sources, ..) => super::large_trace_bytes(sources),
            Input::Path(path, _) if path.is_dir() => super::xplane_bytes(&Sources { xplane_path: Some(path.clone()), ..Sources::default() }),
            Input::Path(path, _) => crate::inputs::pytorch::windows::Windowing::text_bytes(path).unwrap_or(0),
        }
    }
}

/// BASELINE... NEW: the baseline's paths and the new run's. The last
/// PROFILE is the new run unless `--new` or the `--right_*` flags
/// (`right_flags`) give it.
fn split_profiles(args: &CheckArgs, right_flags: bool) -> (&[PathBuf], &[PathBuf]) {
    if !args.new.is_empty() {
        return (&args.profiles, &args.new);
    }
    match args.profiles.split_last() {
        Some((last, rest)) if !right_flags && !rest.is_empty() => (rest, std::slice::from_ref(last)),
        _ => (&args.profiles, &[]),
    }
}

/// A side's runs from its paths or its flags (not both), or `None`.
fn side(paths: &[PathBuf], flags: &SideArgs, which: Which, global: &InputPaths) -> Result<Option<Vec<Input>>> {
    let (word, prefix) = if which == Which::Baseline { ("BASELINE", "--left_") } else { ("NEW", "--right_") };
    match (paths, flag_sources(flags, which, global)) {
        ([_, ..], Some(_)) => Err(Error::flag(word, format!("give {word} or the {prefix}* flags, not both"))),
        ([_, ..], None) => Ok(Some(paths.iter().map(|path| Input::Path(path.clone(), word)).collect())),
        ([], Some((sources, flag))) => {
            let name = describe(&sources);
            Ok(Some(vec![Input::Sources(Box::new(sources), name, flag)]))
        }
        ([], None) => Ok(None),
    }
}

/// Every run of a side, read one input after the other.
fn samples(side: &[Input]) -> Result<Vec<Samples>> {
    let mut runs = Vec::new();
    for input in side {
        runs.extend(input.samples_giving_back()?);
    }
    Ok(runs)
}

/// The side's `--left_*` or `--right_*` inputs, if any was given, and the
/// flag its errors name (its trace's, else its first given).
fn flag_sources(f: &SideArgs, which: Which, global: &InputPaths) -> Option<(Sources, &'static str)> {
    let sources = f.sources(which == Which::Baseline, global);
    let p = &sources.paths;
    let given = [
        (sources.xplane_path.is_some(), "xplane_path"),
        (sources.pytorch_path.is_some(), "pytorch_path"),
        (p.profile_path.is_some(), "profile_path"),
        (p.events_path.is_some(), "events_path"),
        (!p.run_meta_paths.is_empty(), "run_meta_path"),
        (p.graph_path.is_some(), "graph_path"),
        (p.op_log_path.is_some(), "op_log_path"),
        (!sources.partial_paths.is_empty(), "partial_path"),
    ];
    let input = given.iter().find(|(is, _)| *is)?.1;
    Some((sources, side_flag(which, input)))
}

/// `--left_NAME` or `--right_NAME` as a static name.
fn side_flag(which: Which, input: &str) -> &'static str {
    const FLAGS: [(&str, &str, &str); 8] = [
        ("xplane_path", "--left_xplane_path", "--right_xplane_path"),
        ("pytorch_path", "--left_pytorch_path", "--right_pytorch_path"),
        ("profile_path", "--left_profile_path", "--right_profile_path"),
        ("events_path", "--left_events_path", "--right_events_path"),
        ("run_meta_path", "--left_run_meta_path", "--right_run_meta_path"),
        ("graph_path", "--left_graph_path", "--right_graph_path"),
        ("op_log_path", "--left_op_log_path", "--right_op_log_path"),
        ("partial_path", "--left_partial_path", "--right_partial_path"),
    ];
    let (_, left, right) = FLAGS.iter().find(|(name, ..)| *name == input).copied().unwrap_or(("", "--left_*", "--right_*"));
    if which == Which::Baseline { left } else { right }
}

/// What a side is called in outputs: its first input's path.
fn describe(sources: &Sources) -> String {
    let p = &sources.paths;
    [&sources.xplane_path, &sources.pytorch_path, &p.profile_path, &p.events_path, &p.graph_path]
        .into_iter()
        .flatten()
        .chain(p.run_meta_paths.first())
        .chain(sources.partial_paths.first())
        .next()
        .map_or_else(String::new, |p| p.display().to_string())
}
