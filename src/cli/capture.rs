//! `rtfprof capture`: the glue between the command line and
//! [`crate::capture`], then `steps` on what was captured.

use std::time::Duration;

use super::args::CaptureArgs;
use super::{Print, steps, term, write_stdout};
use crate::capture::{self, HostError, SetupError};
use crate::error::{Error, Result};
use crate::inputs::xplane;
use crate::show::options::Options;

// (The model's error gives the status; the capture crate documents it.)
const _: () = assert!(capture::INTERRUPTED_EXIT_STATUS == 130);

/// Takes `--count` captures, printing after each the run it saved and its
/// steps table (or, on stderr, why it has none). Each host that failed is
/// named on one line (the last one is the returned error, so the exit
/// status is 1); the others' traces are kept and shown. Ctrl-C ends it with one line saying what was kept
/// (exit status 130), except while a steps table is made: then it ends the
/// process at once, as it does any command (the run was said before).
pub fn run(args: &CaptureArgs, opts: &Options, stdout: &mut String, print: Print) -> Result<()> {
    if !(args.interval_s.is_finite() && args.interval_s >= 0.0) {
        return Err(Error::flag("--interval_s", format!("'{}' is not a number of seconds (0 or more)", args.interval_s)));
    }
    let options = args.options();
    let session = capture::Session::ending_on_ctrl_c().map_err(setup_error)?;
    let mut failures = Vec::new();
    let mut kept = Vec::new();
    for n in 0..args.count {
        let when = || if args.count > 1 { format!(" during capture {} of {}", n + 1, args.count) } else { String::new() };
        if n > 0 && !session.sleep(Duration::from_secs_f64(args.interval_s)) {
            return Err(interrupted(&format!(" before capture {} of {}", n + 1, args.count), &kept, &[], &failures));
        }
        let taken = session.capture(&args.service_addr, &args.logdir, &options).map_err(setup_error)?;
        let saved = taken.saved().count();
        if saved > 0 {
            kept.push(format!("{} ({} of {})", taken.run_dir.display(), super::plural(saved, "host"), super::plural(taken.hosts.len(), "host")));
        }
        let unanswered: Vec<&str> = taken.failed().filter(|(_, e)| matches!(e, HostError::Interrupted)).map(|(address, _)| address).collect();
        for (address, error) in taken.failed().filter(|(_, e)| !matches!(e, HostError::Interrupted)) {
            failures.push(format!("capture {address}: {error}"));
        }
        if session.interrupted() {
            return Err(interrupted(&when(), &kept, &unanswered, &failures));
        }
        // (Said as they happen; the last one waits to be the error.)
        let (last, earlier) = failures.split_last().map_or((None, &[][..]), |(l, e)| (Some(l), e));
        for line in earlier {
            term::error(line);
        }
        failures = last.cloned().into_iter().collect();
        if saved == 0 {
            continue;
        }
        stdout.push_str(&format!("Captured {} of {} in {}\n", super::plural(saved, "host"), super::plural(taken.hosts.len(), "host"), taken.run_dir.display()));
        if print == Print::Live {
            write_stdout(std::mem::take(stdout).as_bytes())?;
        }
        session.exiting_on_ctrl_c(|| xplane::locate(&taken.run_dir, None).and_then(|located| steps::run_captured(&located.hosts, opts, stdout)))?;
        if print == Print::Live {
            write_stdout(std::mem::take(stdout).as_bytes())?;
        }
    }
    match failures.pop() {
        Some(line) => Err(Error::Profile(line)),
        None => Ok(()),
    }
}

/// The session's end by Ctrl-C: the hosts' failures said, then one line
/// with the runs kept (`kept`) and the hosts that had not answered.
fn interrupted(when: &str, kept: &[String], unanswered: &[&str], failures: &[String]) -> Error {
    for line in failures {
        term::error(line);
    }
    let mut line = format!("capture: interrupted (Ctrl-C){when}; ");
    line.push_str(&if kept.is_empty() { "nothing was saved".to_owned() } else { format!("kept {}", kept.join(", ")) });
    if !unanswered.is_empty() {
        line.push_str(&format!("; no trace from {}", unanswered.join(", ")));
    }
    Error::Interrupted(line)
}

fn setup_error(error: SetupError) -> Error {
    match error {
        SetupError::Flag { flag, message } => Error::flag(flag, message),
        other => Error::Profile(other.to_string()),
    }
}
