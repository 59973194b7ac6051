//! Streaming passes over a Kineto file that keep nothing per event: the
//! trace's top-level fields and events as the bytes the file has
//! ([`scan`]), and the few fields of an event that deciding where it goes
//! needs ([`fields`]). `cut` and `windows` read the file so.

pub(super) mod fields;
pub(super) mod scan;
