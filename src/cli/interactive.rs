//! The `tfprof>` prompt: inputs are loaded once, then each line is a command
//! (`scope`, `graph`, `op`, `code`, `advise`, `set`, `help`, `quit`) followed
//! by options in tfprof's `-flag value` form, parsed by the same flags as the
//! one-shot command line. `set` makes its options the defaults for later
//! commands; an empty line lists the current options. Line editing, history
//! (`.tfprof_history.txt`, as tfprof) and tab completion come from rustyline.

use std::borrow::Cow;
use std::io::{self, Write};

use clap::{CommandFactory, FromArgMatches, parser::ValueSource};
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper, history::DefaultHistory};

use super::{Cli, PROMPT_HELP, ShowArgs};
use crate::error::{Error, Result};
use crate::load::Loaded;
use crate::show::Options;
use crate::views::View;

const HISTORY_FILE: &str = ".tfprof_history.txt";
const COMMANDS: &[&str] = &["scope", "graph", "code", "op", "advise", "set", "help", "quit"];

/// Runs the prompt until `quit` or end of input.
pub fn run(loaded: &Loaded, mut defaults: Options) -> Result<()> {
    let mut editor: Editor<Completion, DefaultHistory> = Editor::new().map_err(|e| Error::Profile(format!("cannot start the prompt: {e}")))?;
    editor.set_helper(Some(Completion::new()));
    let _ = editor.load_history(HISTORY_FILE);
    loop {
        let line = match editor.readline("tfprof> ") {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => return Ok(()),
            Err(e) => return Err(Error::Profile(format!("reading the prompt: {e}"))),
        };
        if !line.trim().is_empty() {
            let _ = editor.add_history_entry(line.as_str());
            let _ = editor.save_history(HISTORY_FILE);
        }
        let mut stdout = String::new();
        match run_line(loaded, &line, &mut defaults, &mut stdout) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Quit) => return Ok(()),
            Err(e) => super::term::error(&e.to_string()),
        }
        let mut out = io::stdout().lock();
        if out.write_all(stdout.as_bytes()).and_then(|()| out.flush()).is_err() {
            return Ok(());
        }
    }
}

pub enum Flow {
    Continue,
    Quit,
}

/// Runs one prompt line, appending what it prints to `stdout`.
pub fn run_line(loaded: &Loaded, line: &str, defaults: &mut Options, stdout: &mut String) -> Result<Flow> {
    let words: Vec<&str> = line.split(' ').filter(|w| !w.is_empty()).collect();
    let Some((&command, flags)) = words.split_first() else {
        stdout.push_str(&defaults.listing());
        return Ok(Flow::Continue);
    };
    let view = match command {
        "quit" | "exit" => return Ok(Flow::Quit),
        "help" => {
            stdout.push_str(PROMPT_HELP);
            return Ok(Flow::Continue);
        }
        "scope" => Some(View::Scope),
        "graph" => Some(View::Graph),
        "op" => Some(View::Op),
        "code" => Some(View::Code),
        "advise" | "set" => None,
        other => return Err(Error::flag("command", format!("'{other}' is not a command ({})", COMMANDS.join(", ")))),
    };
    let opts = parse_flags(flags, defaults)?;
    match (command, view) {
        ("set", _) => *defaults = opts,
        (_, Some(view)) => {
            if let Some(line) = crate::outputs::view::write(loaded, view, &opts, stdout)? {
                super::term::note(&line);
            }
        }
        _ => stdout.push_str(&crate::outputs::advise::render(&crate::advise::advise_printing_warnings(loaded)?)),
    }
    Ok(Flow::Continue)
}

/// Applies the flags given on a prompt line on top of `defaults`. Values may
/// be quoted (`-select 'bytes,micros'`), as tfprof allows.
fn parse_flags(flags: &[&str], defaults: &Options) -> Result<Options> {
    let unquoted = flags.iter().map(|w| w.trim_matches(|c| c == '\'' || c == '"'));
    let argv = super::normalize_args(std::iter::once("rtfprof").chain(unquoted).map(Into::into));
    let matches = super::help::overriding(Cli::command()).try_get_matches_from(argv).map_err(|e| Error::flag("options", super::usage_error_line(&e)))?;
    for input in ["graph_path", "run_meta_path", "op_log_path", "profile_path", "events_path", "events_run", "events_tags"] {
        if matches.value_source(input) == Some(ValueSource::CommandLine) {
            return Err(Error::flag(format!("--{input}"), "inputs are read once at start-up; restart rtfprof to change them"));
        }
    }
    let given = ShowArgs::from_arg_matches(&matches).map_err(|e| Error::flag("options", e.to_string()))?.to_options()?;
    let explicit = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
    let mut opts = defaults.clone();
    macro_rules! take_explicit {
        ($($field:ident),*) => { $( if explicit(stringify!($field)) { opts.$field = given.$field.clone(); } )* };
    }
    take_explicit!(
        max_depth,
        min_bytes,
        min_peak_bytes,
        min_residual_bytes,
        min_output_bytes,
        min_micros,
        min_accelerator_micros,
        min_cpu_micros,
        min_params,
        min_float_ops,
        min_occurrence,
        step,
        order_by,
        account_type_regexes,
        start_name_regexes,
        trim_name_regexes,
        show_name_regexes,
        hide_name_regexes,
        account_displayed_op_only,
        select,
        output
    );
    // The selection flags, one by one (`--steps` and `--time_ms` are one
    // window).
    if explicit("steps") || explicit("time_ms") {
        opts.events.window = given.events.window;
    }
    if explicit("devices") {
        opts.events.devices = given.events.devices;
    }
    if explicit("min_dur_us") {
        opts.events.min_dur_ns = given.events.min_dur_ns;
    }
    Ok(opts)
}

/// Tab completion: commands first, then option names.
struct Completion {
    options: Vec<String>,
}

impl Completion {
    fn new() -> Self {
        let options = Cli::command().get_arguments().filter_map(|a| a.get_long()).map(|l| format!("-{l}")).collect();
        Completion { options }
    }
}

impl Completer for Completion {
    type Candidate = String;

    fn complete(&self, line: &str, pos: usize, _: &Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        let before = &line[..pos];
        let start = before.rfind(' ').map_or(0, |i| i + 1);
        let word = &before[start..];
        let candidates: Vec<String> = if start == 0 {
            COMMANDS.iter().filter(|c| c.starts_with(word)).map(|c| (*c).to_owned()).collect()
        } else {
            self.options.iter().filter(|o| o.starts_with(word) && word.starts_with('-')).cloned().collect()
        };
        Ok((start, candidates))
    }
}

impl Hinter for Completion {
    type Hint = String;
}

impl Highlighter for Completion {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(&'s self, prompt: &'p str, _: bool) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}

impl Validator for Completion {}

impl Helper for Completion {}
