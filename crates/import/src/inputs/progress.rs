//! How many bytes of the inputs have been read, for a progress line: the
//! importers count as they go (a PyTorch trace's file bytes as they are
//! read, an XPlane trace's lines as they are walked), the command line
//! shows it. One process-wide counter: reads of several files add up.

use std::sync::atomic::{AtomicU64, Ordering};

static READ: AtomicU64 = AtomicU64::new(0);

/// Adds `bytes` read.
pub fn add(bytes: u64) {
    READ.fetch_add(bytes, Ordering::Relaxed);
}

/// The bytes read since the process started (or [`reset`]).
pub fn bytes_read() -> u64 {
    READ.load(Ordering::Relaxed)
}

/// Starts counting again (before a command's inputs are read).
pub fn reset() {
    READ.store(0, Ordering::Relaxed);
}

/// A reader that counts what it reads.
pub struct Counting<R>(pub R);

impl<R: std::io::Read> std::io::Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        add(n as u64);
        Ok(n)
    }
}
