use std::process::ExitCode;

/// Decoding allocates millions of small strings and vectors; mimalloc's
/// reuse halves rtfprof's page faults compared with glibc's arenas. Version
/// 2 (the `v2` feature) touched less memory than version 3 here and ran
/// 5-8% faster on the benchmark's x1 workloads.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    rtfprof_cli::tune_process_memory();
    ExitCode::from(rtfprof_cli::cli::main(std::env::args_os()))
}
