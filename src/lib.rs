//! The `rtfprof` command line (its binary is `src/main.rs`): clap's flags
//! and subcommands, the `tfprof>` prompt, the progress line and colour, and
//! the process's memory settings. It is glue over the `rtfprof` library;
//! the Python module runs it in-process (`python -m rtfprof`). Only this
//! crate depends on clap, rustyline, indicatif, anstream and mimalloc.

pub mod cli;

// The library's modules, reachable as `crate::…`.
pub(crate) use rtfprof::{
    advise, api, check, device, diff, error, inputs, jobs, load, make_partial, memory, outputs, partial, ranks, show, stack, stats, steps, views,
};

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
