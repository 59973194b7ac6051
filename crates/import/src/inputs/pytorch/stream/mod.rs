//! Streaming passes over a Kineto file that keep nothing per event: the
//! trace's top-level fields and events as the bytes the file has
//! ([`scan`], one thread: `cut`), the events of `traceEvents` read on
//! several threads in segments of the text ([`segments`]: `windows`'
//! plan), and the few fields of an event that deciding where it goes
//! needs ([`fields`]).

pub(super) mod fields;
pub(super) mod scan;
pub(super) mod segments;
