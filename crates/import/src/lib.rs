//! rtfprof's importers: from the files a user names to the model.
//!
//! - [`inputs`]: one module per input kind behind [`inputs::Input`]
//!   (GraphDef, RunMetadata, OpLogProto and event files, profiles,
//!   checkpoints, TF2/JAX XPlane traces, PyTorch traces), each decoded on
//!   all cores into the model's records; [`inputs::sniff`] says what a file
//!   is when it is not what its flag reads;
//! - [`load`]: the one loader: [`load::Sources`] for a [`load::Purpose`]
//!   become a [`load::Loaded`] (the node model and the traces' events);
//! - [`jobs`]: several jobs loaded apart and merged;
//! - [`partial`]: the partial-profile format and its codec.
//!
//! May import `rtfprof-proto` and `rtfprof-model`, never an analysis or an
//! output. The XPlane wire decoder is the XPlane importer's; analyses read
//! traces through [`inputs::xplane`]'s event types.

pub mod inputs;
pub mod jobs;
pub mod load;
pub mod partial;

// The model's modules, reachable as `crate::…` as in one crate.
#[cfg(test)]
pub(crate) use rtfprof_model::test_random;
pub(crate) use rtfprof_model::{cache, error, patterns, stats};
pub(crate) use rtfprof_proto as proto;
