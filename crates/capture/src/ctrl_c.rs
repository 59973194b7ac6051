//! Ctrl-C in a capture session: it ends the session's wait (for the hosts'
//! traces, or between captures), or the next one, so that the traces that
//! arrived are kept and said; in work the caller marks as
//! [`CtrlC::exiting`] (the steps table of a large trace being made) it ends
//! the process at once, as it does every other rtfprof command, with the
//! status a shell gives a command Ctrl-C ended.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::watch;

/// The exit status of a session Ctrl-C ended: 128 + SIGINT, what shells
/// report for a command the signal killed.
pub const EXIT_STATUS: u8 = 130;

/// Watches for Ctrl-C (SIGINT) from [`CtrlC::watch`] on, for the rest of
/// the process.
pub(crate) struct CtrlC {
    shared: Arc<Shared>,
}

struct Shared {
    /// Whether Ctrl-C ends the process now.
    exits: Mutex<bool>,
    /// Set once Ctrl-C was pressed (and did not end the process).
    pressed: watch::Sender<bool>,
}

impl CtrlC {
    /// Starts watching, on a thread of its own (a Ctrl-C must be seen while
    /// the session's runtime is idle, between its calls); returns once
    /// SIGINT is caught.
    pub(crate) fn watch() -> std::io::Result<CtrlC> {
        let shared = Arc::new(Shared { exits: Mutex::new(false), pressed: watch::Sender::new(false) });
        let (ready, caught) = std::sync::mpsc::channel();
        let watching = shared.clone();
        std::thread::Builder::new().name("rtfprof-ctrl-c".into()).spawn(move || match listen() {
            Err(e) => drop(ready.send(Err(e))),
            Ok((runtime, mut interrupts)) => {
                let _ = ready.send(Ok(()));
                runtime.block_on(async {
                    while interrupts.recv().await.is_some() {
                        // (Held while it exits: no work marked `exiting`
                        // ends meanwhile, none starts.)
                        let exits = watching.exits();
                        if *exits {
                            std::process::exit(EXIT_STATUS.into());
                        }
                        watching.pressed.send_replace(true);
                    }
                });
            }
        })?;
        caught.recv().map_err(|_| std::io::Error::other("the Ctrl-C watcher ended"))??;
        Ok(CtrlC { shared })
    }

    /// Watching for no signal: the caller says when Ctrl-C came, with
    /// the [`Interrupt`] (Python, whose own SIGINT handler only its main
    /// thread sees).
    pub(crate) fn by_caller() -> (CtrlC, Interrupt) {
        let shared = Arc::new(Shared { exits: Mutex::new(false), pressed: watch::Sender::new(false) });
        (CtrlC { shared: shared.clone() }, Interrupt(shared))
    }

    /// Whether Ctrl-C was pressed (outside [`CtrlC::exiting`] work).
    pub(crate) fn pressed(&self) -> bool {
        *self.shared.pressed.borrow()
    }

    /// Runs `work` as a wait that Ctrl-C ends: `None` if Ctrl-C came first
    /// (or before). Called inside the session's runtime.
    pub(crate) async fn unless_pressed<F: Future>(&self, work: F) -> Option<F::Output> {
        let mut pressed = self.shared.pressed.subscribe();
        tokio::select! {
            biased;
            // (An error: the watcher is gone, so Ctrl-C cannot come.)
            Ok(_) = pressed.wait_for(|pressed| *pressed) => None,
            output = work => Some(output),
        }
    }

    /// Runs `work` with Ctrl-C ending the process at once.
    pub(crate) fn exiting<T>(&self, work: impl FnOnce() -> T) -> T {
        let _exits = Exits::start(&self.shared);
        work()
    }
}

/// Ends a session's wait as Ctrl-C does, for a caller that catches Ctrl-C
/// itself ([`crate::Session::interruptible`]); it can be sent to another
/// thread than the session's.
#[derive(Clone)]
pub struct Interrupt(Arc<Shared>);

impl Interrupt {
    /// Ends the session's wait under way, or the next one.
    pub fn interrupt(&self) {
        self.0.pressed.send_replace(true);
    }
}

/// The watcher's runtime, and SIGINT caught from now on. (What
/// `tokio::signal::ctrl_c` listens to, but made at once, not on its first
/// poll: no Ctrl-C after [`CtrlC::watch`] returns ends the process
/// mid-wait.)
fn listen() -> std::io::Result<(tokio::runtime::Runtime, Signal)> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let interrupts = {
        let _entered = runtime.enter();
        signal(SignalKind::interrupt())?
    };
    Ok((runtime, interrupts))
}

impl Shared {
    fn exits(&self) -> MutexGuard<'_, bool> {
        self.exits.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Work under way that Ctrl-C ends with the process (until dropped).
struct Exits<'a>(&'a Shared);

impl<'a> Exits<'a> {
    fn start(shared: &'a Shared) -> Self {
        *shared.exits() = true;
        Exits(shared)
    }
}

impl Drop for Exits<'_> {
    fn drop(&mut self) {
        *self.0.exits() = false;
    }
}
