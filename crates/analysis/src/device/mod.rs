//! `rtfprof hlo` and `rtfprof kernels`: the two tables GPU users read first,
//! as XProf's `hlo_stats` and `kernel_stats` give them.
//!
//! The XPlane importer fills [`Tables`] in the walk that makes the nodes
//! (one row per XLA instruction that ran, one per kernel launch
//! configuration); [`kernel`] holds XProf's rules for kernels. Where XProf
//! knows the op, the numbers are XProf's; inside XLA's command buffers,
//! where XProf names every kernel `XlaModule`, rtfprof names the JAX op
//! (see [`crate::inputs::xplane::thunks`]). PyTorch traces have kernel
//! rows too ([`crate::inputs::pytorch::kernels`], the same rules on
//! Kineto's kernel events). `busy` gives how busy each device was
//! (advise's utilization). `rtfprof::outputs::device` writes the tables.

pub(crate) mod busy;
mod tables;

pub use tables::{from_sources, pytorch_only_tables, tables};

pub use crate::stats::records::device::*;

/// Which table a command shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Hlo,
    Kernels,
}
