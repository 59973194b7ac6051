//! Device classification (`tfprof_node.cc`). All tests take the lowercased
//! device string.

use std::sync::OnceLock;

use regex::Regex;

/// A device name, shared by every execution record on that device: a large
/// profile has millions of records and a few dozen devices.
pub type DeviceName = super::symbol::Symbol;

/// A RunMetadata device, lowercased and classified once for all its stats.
#[derive(Clone, Debug)]
pub struct Device {
    pub name: DeviceName,
    pub canonical: bool,
    pub accelerator_time: bool,
}

impl Device {
    pub fn classify(raw: &str) -> Device {
        let name = raw.to_ascii_lowercase();
        Device { canonical: is_canonical(&name), accelerator_time: counts_as_accelerator_time(&name), name: super::symbol::symbol(&name) }
    }
}

/// The op runs on an accelerator (its scheduling, not necessarily its kernel).
pub fn is_placed_on_accelerator(dev: &str) -> bool {
    dev.contains("gpu")
}

/// The op runs on a CPU (`IsPlacedOnCPU`).
pub fn is_placed_on_cpu(dev: &str) -> bool {
    dev.contains("cpu")
}

/// GPU kernel time is read from the combined `stream:all` lane only.
pub fn counts_as_accelerator_time(dev: &str) -> bool {
    dev.contains("stream:all")
}

/// `/…/(device:)?(gpu|cpu):N` — the device an op is placed on. Its time counts
/// as cpu time (for a GPU op that is the host-side scheduling time).
pub fn is_canonical(dev: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\A.*/(device:gpu|gpu|device:cpu|cpu):[0-9]+\z").expect("valid regex")).is_match(dev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_matches_tfprof() {
        assert!(is_canonical("/job:a/replica:0/task:0/device:gpu:0"));
        assert!(is_canonical("/cpu:0"));
        assert!(!is_canonical("/device:gpu:0/stream:all"));
        assert!(!is_canonical("/device:gpu:0/stream:7"));
        assert!(!is_canonical("/job:a/device:xla_gpu:0"));
        assert!(counts_as_accelerator_time("/device:gpu:0/stream:all"));
    }
}
