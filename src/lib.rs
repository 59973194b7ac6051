//! The `rtfprof` command line (its binary is `src/main.rs`): clap's flags
//! and subcommands, the `tfprof>` prompt, the progress line and colour, and
//! the process's memory settings. It is glue over the `rtfprof` library;
//! the Python module runs it in-process (`python -m rtfprof`). Only this
//! crate depends on clap, rustyline, indicatif, anstream and mimalloc.

pub mod cli;

// The library's modules, reachable as `crate::…`.
pub(crate) use rtfprof::{
    advise, api, capture, check, device, diff, error, inputs, jobs, load, make_partial, memory, outputs, partial, ranks, show, stack, stats, steps, views,
};

/// `mi_option_purge_delay` in mimalloc.h (v2 and v3): -1 never purges, 0
/// purges at once.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

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
///
/// A large XPlane trace's stages free hundreds of MB, and what mimalloc
/// keeps it does not reuse well: see [`give_back_freed_memory`].
pub fn tune_process_memory() {
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

/// Traces (XPlane, or PyTorch JSON as text) at least this large are read
/// giving freed memory back to the OS ([`give_back_freed_memory`]).
pub const GIVE_BACK_FROM_BYTES: u64 = 512 << 20;

/// From here on, mimalloc gives the memory it frees back to the OS at once
/// (its pages are purged), instead of keeping it ([`tune_process_memory`]).
/// For large inputs: with the freed pages kept, mimalloc placed what the
/// next stage allocated beside them rather than in them, in the room its
/// arenas had reserved for the earlier stage's large vectors, so that each
/// stage's peak added to the last's. On the 1.06 GB flax_cnn_nocb x3400
/// XPlane trace, peak RSS with the pages given back (bench/large_xplane.md):
/// `steps` 869 → 722 MB, `memory` 921 → 705 MB, `scope` 649 → 520 MB,
/// `cut` 1.77 → 0.86 GB. A large PyTorch trace read in windows frees each
/// window's trace before the next is read: on the 1 GB GPT-2 trace, `op`
/// in windows of 128 MB 265 → 171 MB, `memory` (whole) 761 → 630 MB.
pub fn give_back_freed_memory() {
    // SAFETY: sets a process-wide option; safe to call at any time.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
}

/// Runs `stage` giving the memory it frees back to the OS
/// ([`give_back_freed_memory`]), then goes back to the setting before: for
/// a stage whose memory the next one would not take over. `report` reads
/// an XPlane trace's steps before loading it: with the steps' records
/// kept, the 1.06 GB trace's was 0.85 GB resident after the steps and
/// 1.31 GB once loaded.
pub fn giving_back_freed_memory<T>(stage: impl FnOnce() -> T) -> T {
    // SAFETY: reads a process-wide option.
    let before = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
    give_back_freed_memory();
    let done = stage();
    // SAFETY: collects this thread's freed pages (they are purged), then
    // sets the option back.
    unsafe {
        libmimalloc_sys::mi_collect(true);
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, before);
    }
    done
}
