//! Deep stacks for the work that recurses: views follow name scopes and
//! input chains, which are thousands deep in real graphs.

use crate::error::{Error, Result};

/// Stack of a thread that builds views (address space; only what the
/// recursion reaches is touched).
pub const DEEP_STACK_BYTES: usize = 1 << 30;

/// Whether [`install_deep_pool`] built rayon's global pool with deep stacks.
static DEEP_POOL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Builds rayon's global pool with deep stacks, if no pool was built yet
/// (the first call of a process does it); whether the global pool has them.
pub fn install_deep_pool() -> bool {
    if rayon::ThreadPoolBuilder::new().stack_size(DEEP_STACK_BYTES).build_global().is_ok() {
        DEEP_POOL.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    DEEP_POOL.load(std::sync::atomic::Ordering::Relaxed)
}

/// Runs `work` on a thread with a large stack: the current one when it is
/// a worker of the pool [`install_deep_pool`] built, else one of its own.
pub fn with_deep_stack<T: Send>(work: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    if DEEP_POOL.load(std::sync::atomic::Ordering::Relaxed) && rayon::current_thread_index().is_some() {
        return work();
    }
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("rtfprof-render".into())
            .stack_size(DEEP_STACK_BYTES)
            .spawn_scoped(scope, work)
            .map_err(|e| Error::Profile(format!("cannot start the render thread: {e}")))?
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
