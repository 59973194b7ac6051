//! rtfprof: TensorFlow's tfprof profiler front-end, natively in Rust.
//!
//! The flow follows the module layout:
//!
//! 1. [`load`] is the one loader: the [`load::Sources`] a user gave, for a
//!    [`load::Purpose`], become a [`load::Loaded`]: the node model and the
//!    trace events the analyses read;
//! 2. [`inputs`] has one module per input kind behind [`inputs::Input`]:
//!    GraphDef, RunMetadata, OpLogProto and event files ([`inputs::tf`]),
//!    ProfileProto ([`inputs::profile`]), each decoded on all cores into
//!    lean records; TF2 and JAX traces go through one layer,
//!    [`inputs::xplane`], which the conversion, [`steps`] and the timeline
//!    read them with;
//! 3. [`stats`] is the node model: one table of nodes with per-step
//!    execution records, and the one accounting ([`stats::Metrics`]);
//! 4. [`views`] arranges nodes into a tree (scope, …);
//! 5. [`show`] accounts, filters, orders and formats a view exactly as tfprof;
//! 6. [`outputs`] writes the result (stdout or a file, atomically).
//!
//! [`advise`] runs tfprof's checkers over the stats and views; [`memory`]
//! replays the allocation records into bytes in use and the live nodes at
//! the peak; [`steps`] splits step time as XProf does; [`device`] lists XLA
//! instructions and kernels; [`diff`] compares two profiles. [`cli`] is the
//! `rtfprof` command line on top of the library; [`api`] is one view as a
//! function call, what the Python module calls. [`cache`] prefetches what
//! the passes over scattered records read next; [`stack`] gives the views'
//! recursion deep stacks.

pub mod advise;
pub mod api;
pub mod cache;
pub mod cli;
pub mod device;
pub mod diff;
pub mod error;
pub mod inputs;
pub mod intervals;
pub mod jobs;
pub mod load;
pub mod make_partial;
pub mod memory;
pub mod outputs;
pub mod partial;
pub mod patterns;
pub mod proto;
pub mod ranks;
pub mod sample;
pub mod show;
pub mod stack;
pub mod stats;
pub mod steps;
#[cfg(test)]
mod test_random;
pub mod views;

pub use error::{Error, Result};

/// Memory settings for a short-lived process with mimalloc as its global
/// allocator (the `rtfprof` binary, the examples), made before it allocates
/// much:
/// - mimalloc returns freed memory to the OS after 10 ms by default; rtfprof
///   frees decode buffers and soon allocates again, and on VMs where a fresh
///   page costs more than the work done in it, reusing them is faster:
///   nothing is returned before exit.
/// - mimalloc asks for transparent huge pages for its arenas, so that one
///   write to a fresh 2 MiB stretch has the kernel zero all of it. The node
///   model's per-node records are many blocks of tens of KiB, filled step by
///   step: on a 270 MB trace, huge pages made the peak 1.06 GB instead of
///   0.75 GB and tripled the system time (0.6 s to 2.6-3.9 s).
pub fn tune_process_memory() {
    /// `mi_option_purge_delay` in mimalloc.h (v2 and v3): -1 never purges.
    const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: sets a process-wide option; safe to call at any time.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    // (mimalloc's own `allow_thp` option is read when it starts, before
    // `main`; the process-wide flag applies to every later fault.)
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE only sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
