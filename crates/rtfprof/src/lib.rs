//! rtfprof: TensorFlow's tfprof profiler front-end, natively in Rust, and
//! XProf's and HTA's views of TF2, JAX and PyTorch traces. This crate is
//! the library's one door: every module of the crates below, under the
//! names they have always had, and the outputs.
//!
//! The flow runs one way, one crate a stage (docs/book/src/internals/
//! layout.md): `rtfprof-proto` (the schemas) → `rtfprof-model` ([`stats`],
//! the node model; [`error`]; [`intervals`]) → `rtfprof-import`
//! ([`inputs`], one module per input kind; [`load`], the loader; [`jobs`];
//! [`partial`]) → `rtfprof-analysis` ([`views`], [`show`], [`advise`],
//! [`steps`], [`ranks`], [`memory`], [`device`], [`diff`],
//! [`make_partial`]) → this crate: [`outputs`] (one `Report` trait, every
//! format) and [`api`] (one view, the steps, memory or device tables as a
//! function call, what the Python module calls). [`capture`]
//! (`rtfprof-capture`, beside the others: the gRPC client that asks running
//! profiler servers for traces) is the only crate with a network stack. The
//! command line is the `rtfprof-cli` crate above it.

pub mod api;
pub mod outputs;

pub use error::{Error, Result};
pub use rtfprof_analysis::{advise, check, device, diff, hta, key_averages, make_partial, memory, ranks, show, steps, views, windowed_report};
pub use rtfprof_capture as capture;
pub use rtfprof_import::{inputs, jobs, load, partial};
pub use rtfprof_model::{cache, error, intervals, patterns, sample, stack, stats};
pub use rtfprof_proto as proto;
