//! The `rtfprof` command line: clap-derived flags with tfprof's spellings
//! (`--flag=v`, `--flag v` and tfprof's single-dash `-flag v`), turned into
//! [`InputPaths`](crate::inputs::InputPaths) and [`Options`] before any file is read.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;

mod args;
mod capture;
mod check;
mod cut;
pub(crate) mod device;
mod diff;
mod help;
pub mod interactive;
mod memory;
mod ranks;
mod steps;
mod term;

use crate::error::{Error, Result};
use crate::load::{self, Purpose};
use crate::outputs;
use crate::show::options::{Options, Output};
use crate::stack::with_deep_stack;
use crate::stats::Stats;
use crate::views::View;
pub use args::{CaptureArgs, CheckArgs, Cli, Command, CutArgs, DiffArgs, InputArgs, PartialArgs, ShowArgs, SideArgs};
pub use help::{PROMPT_HELP, command, normalize_args, parse, usage_error_line};
use help::{overview, path_without_flag, plural};

/// The `rtfprof` command: parses `args` (the program name first), runs it,
/// prints errors as one line on stderr and returns the exit code: 0, 1 for
/// bad input, 2 for bad usage, 130 where Ctrl-C ended `capture`'s wait.
/// The binary's `main` and the Python package's `rtfprof` command both
/// call this.
pub fn main(args: impl IntoIterator<Item = OsString>) -> u8 {
    let cli = match parse(args) {
        Ok(cli) => cli,
        // --help and --version print in full; usage errors get one line.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            let hint = path_without_flag(&e).unwrap_or_else(|| "see 'rtfprof --help'".to_owned());
            term::error(&format!("{}; {hint}", usage_error_line(&e)));
            return 2;
        }
    };
    // (Its exit status means something else: 1 is a regression.)
    if let Some(Command::Check(args)) = &cli.command {
        return check::main(&cli, args);
    }
    match run(cli).map_err(crate::inputs::sniff::add_hint) {
        Ok(()) => 0,
        Err(e) if e.exit_code() == 2 => {
            term::error(&format!("{e}; see 'rtfprof --help'"));
            2
        }
        Err(e) => {
            term::error(&e.to_string());
            e.exit_code()
        }
    }
}

/// Runs one invocation and writes what it prints to stdout, even when it
/// fails part way (tfprof prints its start-up lines before an unknown step).
///
/// The whole invocation runs on rayon's pool, built with deep stacks (see
/// `with_deep_stack`): memory freed by one phase (decoded records) is then
/// reused by the next (the view), instead of being stranded in the heap of
/// a thread that no longer allocates; that is 100 MB of a large graph's
/// scope view.
pub fn run(cli: Cli) -> Result<()> {
    // Built by the first call only; later calls find the deep pool there.
    let deep = crate::stack::install_deep_pool();
    let mut stdout = String::new();
    let result = if deep {
        let mut result = None;
        rayon::scope(|_| result = Some(execute_to(cli, &mut stdout, Print::Live)));
        result.expect("the pool ran the invocation")
    } else {
        execute_to(cli, &mut stdout, Print::Live)
    };
    write_stdout(stdout.as_bytes())?;
    result
}

/// Runs one invocation, appending to `stdout` exactly what tfprof's CLI prints
/// there. Output files are written here, atomically.
pub fn execute(cli: Cli, stdout: &mut String) -> Result<()> {
    execute_to(cli, stdout, Print::Keep)
}

/// Where a view shown on stdout goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Print {
    /// Appended to the `stdout` text, like everything else.
    Keep,
    /// Written to the process's stdout as it is made, after the text so far:
    /// a large view is never held whole, and a pipe sees its first lines
    /// early.
    Live,
}

/// `--window_mb` and `--window_steps` say how `steps`, `kernels`, `ranks`
/// and the views read a PyTorch trace; elsewhere they would be silently
/// ignored.
fn check_window_flags(cli: &Cli) -> Result<()> {
    let given = [("--window_mb", cli.inputs.window_mb.is_some()), ("--window_steps", cli.inputs.window_steps.is_some())];
    let Some((flag, _)) = given.into_iter().find(|(_, given)| *given) else { return Ok(()) };
    if !reads_in_windows(cli.command.as_ref()) || cli.inputs.pytorch_path.is_none() {
        return Err(Error::flag(
            flag,
            "applies to 'rtfprof steps', 'kernels', 'ranks', 'scope', 'op', 'code', 'memory', 'partial' and 'report' with --pytorch_path (the other commands read a trace whole)",
        ));
    }
    Ok(())
}

/// Whether `command` reads a large PyTorch trace a window of steps at a
/// time.
fn reads_in_windows(command: Option<&Command>) -> bool {
    matches!(
        command,
        Some(
            Command::Steps
                | Command::Kernels
                | Command::Ranks
                | Command::Scope
                | Command::Op
                | Command::Code
                | Command::Memory
                | Command::Partial(_)
                | Command::Report
        )
    )
}

fn execute_to(cli: Cli, stdout: &mut String, print: Print) -> Result<()> {
    match &cli.command {
        Some(Command::Completions { shell }) => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut command(), "rtfprof", &mut script);
            stdout.push_str(&String::from_utf8_lossy(&script));
            return Ok(());
        }
        Some(Command::Man) => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command()).render(&mut page).map_err(|e| Error::Io { kind: "man", path: PathBuf::from("-"), source: e })?;
            stdout.push_str(&String::from_utf8_lossy(&page));
            return Ok(());
        }
        // (Its --output is its own: several, other kinds.)
        Some(Command::Check(args)) => return check::run(&cli, args, stdout).map(drop),
        _ => {}
    }
    let mut opts = cli.show.to_options()?;
    let html = matches!(opts.output, Output::Html(_));
    match &cli.command {
        Some(Command::Report) if !html => {
            return Err(Error::flag("--output", "report writes one HTML file: give --output html:outfile=PATH"));
        }
        Some(Command::Report | Command::Hlo | Command::Kernels) if cli.show.max_depth.is_none() => opts.max_depth = i64::MAX,
        Some(Command::Report | Command::Diff(_)) => {}
        _ if html => return Err(Error::flag("--output", "html output is written by 'rtfprof report' and 'rtfprof diff'")),
        _ => {}
    }
    // The selection flags select a cut's or a view's timeline's events
    // (without a command, the prompt's views take them).
    if let (Some(flag), Some(command)) = (opts.events.flags().first(), &cli.command) {
        let timeline = command.view().is_some() && matches!(opts.output, Output::Timeline(_));
        if !timeline && !matches!(command, Command::Cut(_)) {
            return Err(outputs::view::selects_timelines_only(flag));
        }
    }
    if let (Output::Folded(_), Some(view)) = (&opts.output, cli.command.as_ref().and_then(Command::view)) {
        outputs::view::check_folded(view, &opts)?;
    }
    if let Some((command, csv)) = cli.command.as_ref().and_then(|c| Some((c, c.report_csv()?))) {
        outputs::check(command.name(), csv, &opts.output)?;
    }
    if let Some(Command::Capture(args)) = &cli.command {
        return capture::run(args, &opts, stdout, print);
    }
    let sources = cli.inputs.sources();
    let purpose = cli.command.as_ref().map_or(Purpose::Prompt, Command::purpose);
    load::check_event_flags(&sources, purpose)?;
    check_window_flags(&cli)?;
    if cli.command.is_none() && sources.is_empty() {
        stdout.push_str(&overview());
        return Ok(());
    }
    if large_trace_bytes(&sources) >= crate::GIVE_BACK_FROM_BYTES {
        crate::give_back_freed_memory();
    }
    // Cleared when the inputs are read (or on any return before).
    let windowed = reads_in_windows(cli.command.as_ref());
    let progress = term::Progress::start("reading the inputs", || trace_bytes(&sources, windowed));
    match &cli.command {
        Some(Command::Jobs) if sources.jobs.is_empty() => {
            return Err(Error::flag("jobs", "give the jobs to summarize with --job NAME=PATH"));
        }
        Some(Command::Jobs) => {
            let jobs = load::load_jobs_apart(&sources, purpose)?;
            let summaries: Vec<_> = jobs.iter().map(|(name, job)| crate::jobs::summarize(name, &job.stats)).collect();
            stdout.push_str(&crate::outputs::jobs::render(&summaries));
            return Ok(());
        }
        Some(Command::Cut(args)) => return cut::run(&sources, args, &opts.events, stdout),
        Some(Command::Partial(args)) => {
            let partial = crate::make_partial::from_sources(&sources, args.name.as_deref())?;
            outputs::stream_atomic(&args.outfile, |mut out| crate::partial::write(&partial, &mut out).map(|()| out))?;
            let jobs: Vec<&str> = partial.job_names().collect();
            stdout.push_str(&format!("Partial profile of {} ({}) written to {}\n", plural(jobs.len(), "job"), jobs.join(", "), args.outfile.display()));
            return Ok(());
        }
        // `steps` reads XPlane traces in place: it needs no nodes.
        Some(Command::Steps) => {
            if let Some((hosts, note)) = load::xplane_hosts(&sources)? {
                push_note(stdout, note);
                return steps::run_xplane(&hosts, &opts, stdout);
            }
            if let Some(ranks) = load::pytorch_only(&sources)? {
                return steps::run_pytorch(&ranks, sources.pytorch_windows, &opts, stdout);
            }
        }
        // `memory` reads a large PyTorch trace a window at a time.
        Some(Command::Memory) => {
            if let Some((profile, listing, any_records)) = crate::memory::pytorch_windowed(&sources, opts.step)? {
                drop(progress);
                stdout.push_str(&listing);
                return memory::write_windowed(&profile, any_records, &opts, stdout);
            }
        }
        // `ranks` reads each rank's trace on its own: it needs no nodes.
        Some(Command::Ranks) => return ranks::run(&sources, &opts, stdout),
        // So do `hlo` and `kernels` on PyTorch traces.
        Some(command @ (Command::Hlo | Command::Kernels)) => {
            if let Some(tables) = crate::device::pytorch_only_tables(&sources)? {
                let table = if matches!(command, Command::Hlo) { crate::device::Table::Hlo } else { crate::device::Table::Kernels };
                return device::show(&tables, table, true, &opts, stdout);
            }
        }
        Some(Command::Diff(args)) => {
            let resolved = load::resolve(&sources, purpose)?;
            push_note(stdout, resolved.note);
            return diff::run(args, &resolved.paths, &resolved.hosts, &sources.partial_paths, &opts, stdout);
        }
        _ => {}
    }
    // (`report` reads a large PyTorch trace a window at a time, and an
    // XPlane trace's steps before loading it, giving back what they took.)
    let (mut loaded, report_apart) = match (&cli.command, &opts.output) {
        (Some(Command::Report), Output::Html(_)) => match outputs::html::windowed(&sources, opts.step)? {
            Some(read) => read,
            None => {
                let apart = crate::giving_back_freed_memory(|| outputs::html::steps_before_loading(&sources));
                (load::load(&sources, purpose)?, apart)
            }
        },
        _ => (load::load(&sources, purpose)?, outputs::html::ReadApart::default()),
    };
    drop(progress);
    stdout.push_str(&std::mem::take(&mut loaded.listing));
    for warning in loaded.stats.warnings.drain(..) {
        term::warning(&warning);
    }
    if let (Some(Command::Report), Output::Html(path)) = (&cli.command, &opts.output) {
        let page = with_deep_stack(|| outputs::html::report_of(&loaded, &sources, &opts, report_apart))?;
        outputs::stream_atomic(path, |out| outputs::html::write(&page, out))?;
        stdout.push_str(&format!("Report written to {}\n", path.display()));
        std::mem::forget(loaded);
        return Ok(());
    }
    let Some(command) = cli.command else {
        // Print the start-up lines before the first prompt.
        let mut out = io::stdout().lock();
        let _ = out.write_all(std::mem::take(stdout).as_bytes()).and_then(|()| out.flush());
        drop(out);
        return with_deep_stack(|| interactive::run(&loaded, opts));
    };
    let result = match command.view() {
        _ if matches!(command, Command::Memory) => memory::run(&loaded, &opts, stdout),
        _ if matches!(command, Command::Steps) => steps::run(&loaded, &opts, stdout),
        _ if matches!(command, Command::Hlo) => device::run(&loaded, crate::device::Table::Hlo, &opts, stdout),
        _ if matches!(command, Command::Kernels) => device::run(&loaded, crate::device::Table::Kernels, &opts, stdout),
        Some(view) if print == Print::Live && opts.output == Output::Stdout => with_deep_stack(|| print_live(&loaded.stats, view, &opts, stdout)),
        Some(view) => with_deep_stack(|| outputs::view::write(&loaded, view, &opts, stdout)).map(|left_out| {
            // (Said after the start-up lines, as warnings are.)
            if let Some(line) = left_out {
                term::note(&line);
            }
        }),
        None => {
            with_deep_stack(|| crate::advise::advise_printing_warnings(&loaded)).map(|checkers| stdout.push_str(&crate::outputs::advise::render(&checkers)))
        }
    };
    // The process ends right after; freeing a large profile node by node
    // costs more than the view itself.
    std::mem::forget(loaded);
    result
}

/// The note about which run of a log directory was read, as a start-up line.
fn push_note(stdout: &mut String, note: Option<String>) {
    if let Some(note) = note {
        stdout.push_str(&note);
        stdout.push('\n');
    }
}

/// Writes `stdout`'s text so far, then the view, to the process's stdout (see
/// [`Print::Live`]). A closed pipe ends the view quietly, as in
/// [`write_stdout`].
fn print_live(stats: &Stats, view: View, opts: &Options, stdout: &mut String) -> Result<()> {
    crate::show::check(stats, view, opts)?;
    write_stdout(std::mem::take(stdout).as_bytes())?;
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    stdout_written(crate::show::write_checked(stats, view, opts, &mut out).and_then(|()| out.flush()))
}

/// Writes to stdout; a closed pipe (`rtfprof … | head`) is not an error.
fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = io::stdout().lock();
    stdout_written(out.write_all(bytes).and_then(|()| out.flush()))
}

/// The outcome of writing to stdout: a closed pipe is not an error.
fn stdout_written(written: io::Result<()>) -> Result<()> {
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Error::Io { kind: "stdout", path: PathBuf::from("-"), source: e }),
        _ => Ok(()),
    }
}

/// The size of the traces among `sources` (their files' bytes on disk, what
/// the importers count as read), for the progress line; 0 for other inputs.
/// The files are those the loader reads; a PyTorch trace read a window of
/// steps at a time (`windowed`: if the command does) counts twice, as the
/// plan's pass and the windows each count it.
fn trace_bytes(sources: &crate::load::Sources, windowed: bool) -> u64 {
    let times = |f: &std::path::Path| if windowed && sources.pytorch_windows.budget(f).is_some() { 2 } else { 1 };
    let pytorch =
        sources.pytorch_path.as_deref().and_then(|p| load::pytorch_ranks(p).ok()).map_or(0, |ranks| ranks.iter().map(|(_, f)| times(f) * file_bytes(f)).sum());
    pytorch + xplane_bytes(sources)
}

/// The size of the XPlane traces `sources` names.
pub(crate) fn xplane_bytes(sources: &crate::load::Sources) -> u64 {
    load::xplane_hosts(sources).ok().flatten().map_or(0, |(hosts, _)| hosts.iter().map(|(_, f)| file_bytes(f)).sum())
}

/// The size of the traces among `sources` as text (a gzip counted as
/// [`crate::inputs::pytorch::windows::Windowing::text_bytes`] counts it):
/// what decides whether they are read giving freed memory back.
pub(crate) fn large_trace_bytes(sources: &crate::load::Sources) -> u64 {
    let text = |f: &std::path::Path| crate::inputs::pytorch::windows::Windowing::text_bytes(f).unwrap_or(0);
    let pytorch = sources.pytorch_path.as_deref().and_then(|p| load::pytorch_ranks(p).ok()).map_or(0, |ranks| ranks.iter().map(|(_, f)| text(f)).sum());
    pytorch + xplane_bytes(sources)
}

pub(crate) fn file_bytes(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}
