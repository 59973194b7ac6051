//! The integration tests, one test binary (as ripgrep's `tests/` are): each
//! file beside this one is a module of it, run as `cargo test --release
//! --test integration` (all of them) or `cargo test --release --test
//! integration golden::` (one file's tests). One binary links the library
//! once instead of once a file. `common` holds what the files share: the
//! fixtures' paths, `common::rtfprof(&[…])`, the one way to run the rtfprof
//! binary, and helpers for failure messages.

mod common;

mod advise;
mod bad_inputs;
mod capture;
mod check;
mod check_action;
mod checkpoint;
mod cli;
mod cut;
mod device;
mod diff;
mod events;
mod flops;
mod folded;
mod golden;
mod interactive;
mod jobs;
mod json_schemas;
mod memory;
mod memory_viewer;
mod node_proto;
mod partial;
mod pprof;
mod profile_equivalence;
mod pytorch;
mod pytorch_steps;
mod pytorch_views;
mod ranks;
mod report;
mod shapes;
mod steps;
mod table;
mod tensor_value;
mod timeline;
mod xplane;
