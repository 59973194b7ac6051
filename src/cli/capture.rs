//! `rtfprof capture`: the glue between the command line and
//! [`crate::capture`], then `steps` on what was captured.

use std::time::Duration;

use super::args::CaptureArgs;
use super::{Print, steps, term, write_stdout};
use crate::capture::{self, SetupError};
use crate::error::{Error, Result};
use crate::inputs::xplane;
use crate::show::options::Options;

/// Takes `--count` captures, printing after each the run it saved and its
/// steps table. Each host that failed is named on one line (the last one
/// is the returned error, so the exit status is 1); the others' traces
/// are kept and shown.
pub fn run(args: &CaptureArgs, opts: &Options, stdout: &mut String, print: Print) -> Result<()> {
    if !(args.interval_s.is_finite() && args.interval_s >= 0.0) {
        return Err(Error::flag("--interval_s", format!("'{}' is not a number of seconds (0 or more)", args.interval_s)));
    }
    let options = args.options();
    let mut failures = Vec::new();
    for n in 0..args.count {
        if n > 0 {
            std::thread::sleep(Duration::from_secs_f64(args.interval_s));
        }
        let taken = capture::capture(&args.service_addr, &args.logdir, &options).map_err(setup_error)?;
        for (address, error) in taken.failed() {
            failures.push(format!("capture {address}: {error}"));
        }
        // (Said as they happen; the last one waits to be the error.)
        let (last, earlier) = failures.split_last().map_or((None, &[][..]), |(l, e)| (Some(l), e));
        for line in earlier {
            term::error(line);
        }
        failures = last.cloned().into_iter().collect();
        let saved = taken.saved().count();
        if saved == 0 {
            continue;
        }
        stdout.push_str(&format!("Captured {} of {} in {}\n", super::plural(saved, "host"), super::plural(taken.hosts.len(), "host"), taken.run_dir.display()));
        let located = xplane::locate(&taken.run_dir, None)?;
        steps::run_xplane(&located.hosts, opts, stdout)?;
        if print == Print::Live {
            write_stdout(std::mem::take(stdout).as_bytes())?;
        }
    }
    match failures.pop() {
        Some(line) => Err(Error::Profile(line)),
        None => Ok(()),
    }
}

fn setup_error(error: SetupError) -> Error {
    match error {
        SetupError::Flag { flag, message } => Error::flag(flag, message),
        other => Error::Profile(other.to_string()),
    }
}
