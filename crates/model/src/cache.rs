//! Asking the CPU to load memory a pass will read soon. On large inputs the
//! records read next are scattered (entries of a file in id order, nodes in
//! name order), and without this each is a cache miss waited for in turn.

/// Asks the CPU to load `bytes` into cache, a line at a time.
pub fn prefetch_bytes(bytes: &[u8]) {
    const LINE: usize = 64;
    for at in (0..bytes.len()).step_by(LINE) {
        prefetch_line(bytes[at..].as_ptr());
    }
}

/// Asks the CPU to load the cache line that `value` starts in.
pub fn prefetch<T>(value: &T) {
    prefetch_line((value as *const T).cast());
}

fn prefetch_line(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults or writes, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
