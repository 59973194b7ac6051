//! `rtfprof kernels` on a PyTorch trace: XProf's `kernel_stats` rows
//! ([`crate::stats::records::device::Kernel`]) from Kineto's `kernel` events.
//!
//! A row is XProf's key: the kernel's name, its launch configuration (as
//! the event's args give it, [`super::KernelLaunch`]) and the op that
//! launched it ([`Trace::launching_ops`]; none for an unattributed
//! kernel), with the launches' count and durations (whole nanoseconds, as
//! the trace has them). As XProf's, launches of no duration are left out,
//! and the occupancy is the first launch's. What the args leave out takes
//! XProf's defaults (0 registers and bytes, dims of 1), the occupancy
//! none.
//!
//! TensorCores: a kernel that CUPTI recorded (its args give registers per
//! thread, which roctracer's do not) is taken as using them by XProf's
//! rule on NVIDIA kernel names ([`kernel::uses_tensor_core`]); its op is
//! eligible if the kernel uses them or XProf's rule on op names says so.
//! Other kernels (AMD's) are claimed neither: the rules are NVIDIA's.

use super::{Category, Sym, Trace};
use crate::stats::records::device::Kernel;
use crate::stats::records::device::kernel::{self, Key, Launches};

/// The kernel rows of `trace`, in the order each key is first seen (see
/// [`crate::stats::records::device::Tables::sort`] for XProf's).
pub fn kernel_stats(trace: &Trace) -> Vec<Kernel> {
    kernel_stats_of(trace, &|_| true)
}

/// [`kernel_stats`] of the kernels (by index into the events) `keep` keeps:
/// a window's own ([`super::windows::Window::owns`]).
pub fn kernel_stats_of(trace: &Trace, keep: &dyn Fn(u32) -> bool) -> Vec<Kernel> {
    let ops = trace.launching_ops();
    let mut launches = Launches::default();
    for (i, e) in trace.events.iter().enumerate() {
        if e.category != Category::Kernel || e.dur <= 0 || !keep(i as u32) {
            continue;
        }
        let name = trace.str(e.name);
        let launch = trace.kernel_launch(i as u32).copied().unwrap_or_default();
        let op: Option<Sym> = ops.of(i as u32).map(|op| trace.events[op as usize].name);
        let cupti = launch.registers_per_thread.is_some();
        let uses_tensor_core = cupti && kernel::uses_tensor_core(name, kernel::Vendor::Nvidia);
        let op_tensor_core_eligible = op.is_some_and(|op| uses_tensor_core || kernel::op_tensor_core_eligible(trace.str(op)));
        let key = Key {
            name,
            grid_dim: launch.grid.unwrap_or([1; 3]),
            block_dim: launch.block.unwrap_or([1; 3]),
            registers_per_thread: launch.registers_per_thread.unwrap_or(0),
            // (Kineto writes static plus dynamic as one number.)
            static_shmem_bytes: launch.shared_memory.unwrap_or(0),
            dynamic_shmem_bytes: 0,
            uses_tensor_core,
            op_tensor_core_eligible,
            // The op's name (0: none): launches of ops of one name are one row.
            op: op.map_or(0, |op| op.0.get()),
        };
        launches.add(key, launch.occupancy_pct, e.dur);
    }
    launches
        .keys
        .into_iter()
        .zip(launches.sums)
        .map(|(key, sums)| key.row(std::num::NonZeroU32::new(key.op).map_or_else(String::new, |op| trace.str(Sym(op)).to_owned()), &sums))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(events: &str) -> Trace {
        Trace::from_bytes(format!("{{\"traceEvents\": [{events}]}}").as_bytes()).unwrap()
    }

    #[test]
    fn rows_group_by_name_op_and_launch() {
        let t = trace(
            r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 100, "args": {"External id": 1}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"External id": 1, "correlation": 7}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"External id": 1, "correlation": 8}},
            {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7, "ts": 30, "dur": 2.5, "args": {"correlation": 7, "grid": [4, 2, 1], "block": [128, 1, 1], "registers per thread": 168, "shared memory": 1024, "est. achieved occupancy %": 25}},
            {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7, "ts": 40, "dur": 1.5, "args": {"correlation": 8, "grid": [4, 2, 1], "block": [128, 1, 1], "registers per thread": 168, "shared memory": 1024, "est. achieved occupancy %": 50}},
            {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7, "ts": 50, "dur": 1, "args": {"correlation": 9, "grid": [8, 2, 1], "block": [128, 1, 1], "registers per thread": 168, "shared memory": 1024}},
            {"ph": "X", "cat": "kernel", "name": "Cijk_Alik_Bljk_MT64x64", "pid": 0, "tid": 7, "ts": 60, "dur": 3, "args": {"correlation": 10, "grid": [9, 1, 1], "block": [256, 1, 1], "kind": "Dispatch Kernel"}},
            {"ph": "X", "cat": "kernel", "name": "empty", "pid": 0, "tid": 7, "ts": 70, "dur": 0, "args": {"correlation": 11}}"#,
        );
        let rows = kernel_stats(&t);
        assert_eq!(rows.len(), 3, "{rows:#?}");
        let mm = &rows[0];
        assert_eq!((mm.op_name.as_str(), mm.occurrences, mm.total_ns, mm.min_ns, mm.max_ns), ("aten::mm", 2, 4000, 1500, 2500));
        assert_eq!((mm.grid_dim, mm.block_dim, mm.registers_per_thread, mm.shmem_bytes()), ([4, 2, 1], [128, 1, 1], 168, 1024));
        assert_eq!(mm.occupancy_pct, Some(25.0));
        assert!(mm.is_kernel_using_tensor_core && mm.is_op_tensor_core_eligible);
        // No launch in the trace: no op; the args give no occupancy.
        let other = &rows[1];
        assert_eq!((other.op_name.as_str(), other.grid_dim, other.occupancy_pct), ("", [8, 2, 1], None));
        assert!(other.is_kernel_using_tensor_core && !other.is_op_tensor_core_eligible);
        // roctracer's record: no TensorCore claim, XProf's defaults.
        let amd = &rows[2];
        assert_eq!((amd.registers_per_thread, amd.shmem_bytes(), amd.grid_dim, amd.occupancy_pct), (0, 0, [9, 1, 1], None));
        assert!(!amd.is_kernel_using_tensor_core && !amd.is_op_tensor_core_eligible);
    }

    /// The launch table read split on several threads is the one read on
    /// one (configurations numbered in order of first appearance).
    #[test]
    fn split_reading_keeps_the_launch_table() {
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata/pytorch/h200_tx.steps2-3.pt.trace.json.gz");
        let bytes = std::fs::read(path).unwrap();
        let one = Trace::from_bytes_split(&bytes, 0, 0).unwrap();
        let kernels = one.events.iter().filter(|e| e.category == Category::Kernel).count();
        assert_eq!(one.kernel_launch_of.len(), kernels);
        assert!(!one.kernel_launches.is_empty() && one.kernel_launches.len() < kernels);
        for (segment, workers) in [(3000, 3), (40_000, 2)] {
            assert!(Trace::from_bytes_split(&bytes, segment, workers).unwrap() == one, "segments of {segment} bytes on {workers} workers");
        }
    }

    #[test]
    fn malformed_launch_args_are_left_out() {
        let t = trace(
            r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0, "dur": 1, "args": {"grid": [1, 2], "block": [1, -2, 3], "registers per thread": 1.5, "shared memory": "x", "est. achieved occupancy %": null}},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 1, "args": {"grid": [1, 2, 3, 4], "block": {"x": 1}, "registers per thread": 99999999999, "shared memory": [1]}}"#,
        );
        assert!(t.kernel_launch_of.is_empty() && t.kernel_launches.is_empty());
        let rows = kernel_stats(&t);
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].grid_dim, rows[0].block_dim, rows[0].registers_per_thread, rows[0].occurrences), ([1; 3], [1; 3], 0, 2));
    }
}
