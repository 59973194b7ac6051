//! An ordered parallel pipeline: numbered pieces of work handed out to
//! threads in order, no more than a few ahead of the one being consumed,
//! and their results taken back in order.
//!
//! It exists for [`Line::walk`](crate::inputs::xplane::decode::Line::walk):
//! a line may hold most of a 1 GB trace, and decoding is most of a walk.
//! Its pieces are decoded on a thread a core, but consumed in file order as
//! they come (rayon's ordered `collect` would hold every decoded piece
//! before the first is consumed; a channel, pieces in the order they
//! finish), with at most `ahead` pieces' results waiting in memory; the
//! first error in order ends the walk as a serial walk would, and a thread
//! that is gone (panicked, or its consumer failed) stops the others.
//! (Tested through `Line::walk`'s tests, in `xplane/decode/line.rs`.)

use rustc_hash::FxHashMap;

/// Pieces handed out to threads in order, no more than `ahead` past the one
/// being consumed (their results wait in memory), and their results taken
/// back in order: batches of `T`, or an error `E`. A piece that fails is
/// the last handed out: what precedes it is still consumed first.
pub(crate) struct InOrder<T, E> {
    state: std::sync::Mutex<InOrderState<T, E>>,
    /// A piece was decoded, or the walk stopped.
    ready: std::sync::Condvar,
    /// A piece was consumed (room ahead), or the walk stopped.
    room: std::sync::Condvar,
    ahead: usize,
}

/// Stops an [`InOrder`] walk when dropped (with `.1`, only while a panic
/// unwinds), so that no thread waits for one that is gone.
pub(crate) struct StopOnDrop<'o, T, E>(pub(crate) &'o InOrder<T, E>, pub(crate) bool);

impl<T, E> Drop for StopOnDrop<'_, T, E> {
    fn drop(&mut self) {
        if !self.1 || std::thread::panicking() {
            self.0.stop();
        }
    }
}

struct InOrderState<T, E> {
    /// The next piece to hand out, and the end of those to hand out.
    next: usize,
    end: usize,
    consumed: usize,
    decoded: FxHashMap<usize, Result<T, E>>,
    /// Consumed batches, for their room.
    spare: Vec<T>,
    stopped: bool,
}

impl<T, E> InOrder<T, E> {
    pub(crate) fn new(pieces: usize, ahead: usize) -> Self {
        let state = InOrderState { next: 0, end: pieces, consumed: 0, decoded: FxHashMap::default(), spare: Vec::new(), stopped: false };
        InOrder { state: std::sync::Mutex::new(state), ready: std::sync::Condvar::new(), room: std::sync::Condvar::new(), ahead }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, InOrderState<T, E>> {
        // (Poisoned only by a panicking thread, whose panic the scope raises.)
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A piece to decode and an empty batch for it; `None` once every
    /// piece is handed out or the walk stopped.
    pub(crate) fn next_piece(&self) -> Option<(usize, T)>
    where
        T: Default,
    {
        let mut state = self.lock();
        loop {
            if state.stopped || state.next >= state.end {
                return None;
            }
            if state.next < state.consumed + self.ahead {
                let i = state.next;
                state.next += 1;
                return Some((i, state.spare.pop().unwrap_or_default()));
            }
            state = self.room.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    pub(crate) fn decoded(&self, i: usize, result: Result<T, E>) {
        let mut state = self.lock();
        if result.is_err() {
            state.end = state.end.min(i + 1);
        }
        state.decoded.insert(i, result);
        self.ready.notify_all();
    }

    /// Piece `i`'s results, once decoded (every piece before it was handed
    /// out before it, so it comes unless the walk stopped: `None`).
    pub(crate) fn take(&self, i: usize) -> Option<Result<T, E>> {
        let mut state = self.lock();
        loop {
            if let Some(result) = state.decoded.remove(&i) {
                return Some(result);
            }
            if state.stopped {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    pub(crate) fn consumed(&self, i: usize, batch: T) {
        let mut state = self.lock();
        state.consumed = i + 1;
        state.spare.push(batch);
        self.room.notify_all();
    }

    fn stop(&self) {
        self.lock().stopped = true;
        self.room.notify_all();
        self.ready.notify_all();
    }
}
