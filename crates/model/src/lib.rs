//! rtfprof's model: what every importer produces and every analysis reads.
//!
//! - [`stats`]: the node model (tfprof's `TFStats`: one table of nodes with
//!   per-step execution records, and the one accounting), and in
//!   [`stats::records`] the plain records importers hand it (GraphDef and
//!   RunMetadata records, device-table rows, rank summaries, checkpoint
//!   tensors behind [`stats::records::Variables`]);
//! - [`error`]: the one error type, each naming its file or flag;
//! - arithmetic several analyses share, written once: [`intervals`]
//!   (union, difference, coverage), [`sample`] (mean, deviation, CV),
//!   [`patterns`] (tfprof's RE2 name lists);
//! - [`cache`] (prefetching scattered records) and [`stack`] (deep stacks
//!   for recursive walks).
//!
//! May import only `rtfprof-proto`: never an importer, an analysis or an
//! output (Cargo keeps it so: they are crates above this one).

pub mod cache;
pub mod error;
pub mod intervals;
pub mod patterns;
pub mod sample;
pub mod shapes;
pub mod stack;
pub mod stats;
#[doc(hidden)]
pub mod test_random;

pub use error::{Error, Result};
pub(crate) use rtfprof_proto as proto;
