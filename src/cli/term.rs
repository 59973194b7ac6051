//! What the command line shows on a terminal only: colour in its messages on
//! stderr, and a progress line while slow inputs are read. Pipes, files and
//! CI logs get the plain lines, byte for byte the same as before.
//!
//! Colour follows the conventions `anstream` implements: on when stderr is
//! a terminal, off with `NO_COLOR` set or `CLICOLOR=0`, forced with
//! `CLICOLOR_FORCE=1`. The progress line (indicatif) appears only after
//! [`PROGRESS_AFTER`] of reading, only when stderr is a terminal and `CI`
//! is not set, and it is cleared before anything else is printed. While
//! traces are read it shows the bytes read of their total and the rate
//! (the importers count them: `inputs::progress`).

use std::io::Write;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use anstyle::{AnsiColor, Style};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

const PREFIX: Style = Style::new().bold();
const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default();

/// Prints an error line: `rtfprof: <message>`, the prefix bold and the
/// message red where colour is on.
pub fn error(message: &str) {
    let mut err = anstream::stderr().lock();
    let _ = writeln!(err, "{PREFIX}rtfprof:{PREFIX:#} {ERROR}{message}{ERROR:#}");
}

/// Prints a warning about the inputs, yellow where colour is on.
pub fn warning(message: &str) {
    let mut err = anstream::stderr().lock();
    let _ = writeln!(err, "{WARNING}{message}{WARNING:#}");
}

/// Prints a line about what was done (what a timeline left out), plain.
pub fn note(message: &str) {
    let mut err = anstream::stderr().lock();
    let _ = writeln!(err, "{message}");
}

/// How long reading may take before the progress line appears: quick runs
/// never show it.
pub const PROGRESS_AFTER: Duration = Duration::from_secs(1);

/// Whether a progress line may be drawn: on a terminal, outside CI.
fn progress_allowed(stderr_is_terminal: bool, ci: bool) -> bool {
    stderr_is_terminal && !ci
}

/// A spinner with the elapsed time, drawn on stderr from [`PROGRESS_AFTER`]
/// on while the value lives, with the bytes read of `total()` (the traces'
/// size, only asked for where the line may be drawn; 0: not shown) and the
/// rate; dropping it clears the line.
pub struct Progress {
    done: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts timing `what` (e.g. "reading the trace").
    pub fn start(what: &str, total: impl FnOnce() -> u64) -> Progress {
        use std::io::IsTerminal;
        if !progress_allowed(std::io::stderr().is_terminal(), std::env::var_os("CI").is_some()) {
            return Progress { done: None, thread: None };
        }
        let total = total();
        crate::inputs::progress::reset();
        let (done, wait) = mpsc::channel::<()>();
        let what = what.to_owned();
        let thread = std::thread::spawn(move || {
            if wait.recv_timeout(PROGRESS_AFTER) != Err(mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            let bar = ProgressBar::with_draw_target((total > 0).then_some(total), ProgressDrawTarget::stderr());
            let template = if total > 0 { "{spinner} {msg} {bytes}/{total_bytes} ({binary_bytes_per_sec}) {elapsed}" } else { "{spinner} {msg} {elapsed}" };
            bar.set_style(ProgressStyle::with_template(template).expect("a valid template"));
            bar.set_message(what);
            bar.enable_steady_tick(Duration::from_millis(120));
            // Until the reading is done (or the reader went away). (Some
            // commands walk a trace twice: the count stops at the total.)
            while let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(Duration::from_millis(200)) {
                bar.set_position(crate::inputs::progress::bytes_read().min(total));
            }
            bar.finish_and_clear();
        });
        Progress { done: Some(done), thread: Some(thread) }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(thread) = self.thread.take() {
            // The line is cleared before the caller prints anything.
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_only_on_a_terminal_outside_ci() {
        assert!(progress_allowed(true, false));
        assert!(!progress_allowed(false, false));
        assert!(!progress_allowed(true, true));
    }

    #[test]
    fn a_quick_run_never_draws_and_returns_at_once() {
        let started = std::time::Instant::now();
        drop(Progress::start("reading", || 1 << 30));
        assert!(started.elapsed() < PROGRESS_AFTER);
    }
}
