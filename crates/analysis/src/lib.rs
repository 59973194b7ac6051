//! rtfprof's analyses: what the views, commands and report compute from a
//! loaded profile or, for the large traces, from the trace's events in
//! place.
//!
//! - [`views`] arranges nodes into a tree (scope, graph, code) or a list
//!   (op); [`show`] accounts, filters, orders and formats a view exactly as
//!   tfprof; [`advise`] runs tfprof's checkers and the trace-aware ones;
//! - [`steps`] splits step time as XProf, tfprof's run metadata and HTA do;
//!   [`ranks`] sets a distributed job's ranks side by side; [`memory`]
//!   replays allocations; [`device`] gives XProf's `hlo_stats` and
//!   `kernel_stats` and each device's busy time; [`diff`] compares two
//!   profiles; [`key_averages`] is PyTorch's own `prof.key_averages()` and
//!   [`hta`] Holistic Trace Analysis's GPU time breakdowns of a PyTorch
//!   trace;
//! - [`make_partial`] reduces a loaded profile to a partial (with its rank).
//!
//! May import `rtfprof-proto`, `rtfprof-model` and `rtfprof-import`; never
//! an output (results are data; `rtfprof`'s `outputs` renders them) or the
//! command line.

pub mod advise;
pub mod check;
pub mod device;
pub mod diff;
pub mod hta;
pub mod key_averages;
pub mod make_partial;
pub mod memory;
pub mod ranks;
pub mod show;
pub mod steps;
pub mod views;
pub mod windowed_report;

// The lower crates' modules, reachable as `crate::…` as in one crate.
pub(crate) use rtfprof_import::{inputs, jobs, load, partial};
#[cfg(test)]
pub(crate) use rtfprof_model::test_random;
pub(crate) use rtfprof_model::{cache, error, intervals, patterns, sample, stack, stats};
pub(crate) use rtfprof_proto as proto;
