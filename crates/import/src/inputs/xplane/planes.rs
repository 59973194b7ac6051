//! What a plane of a trace is, by its name: the one rule every reader (the
//! views' conversion, `rtfprof steps`, the programs) takes it from, with
//! XProf's names (`tsl/profiler/utils/xplane_schema.h`).

use prost::DecodeError;

use super::decode::{Plane, StatValue};
use crate::inputs::wire::{for_each_field, skip};

/// XProf's `kHostThreadsPlaneName`. XProf finds the host plane by this exact
/// name (`FindPlaneWithName`), and so does rtfprof: a plane that only starts
/// with it is some other plane.
pub const HOST_PLANE: &str = "/host:CPU";

/// XProf's `kMetadataPlaneName`: where JAX and TF put XLA programs (see
/// [`super::hlo`]).
pub const METADATA_PLANE: &str = "/host:metadata";

/// XProf's `kGpuPlanePrefix` and `kTpuPlanePrefix`: device planes are
/// numbered after them.
const GPU_PREFIX: &str = "/device:GPU:";
const TPU_PREFIX: &str = "/device:TPU:";

/// The ids of the lines XProf derives from a device plane's events, which
/// traces written with them store: `kThreadIdDerivedMin` (0xdeadbeef as an
/// int32) and the 99 after it, the range `rtfprof steps` was checked
/// against XProf with (newer TSL reserves more after it, for host lines).
const DERIVED_MIN: i64 = 0xdead_beef_u32 as i32 as i64;
const DERIVED_MAX: i64 = DERIVED_MIN + 99;

/// The derived line of a device's steps (`kThreadIdStepInfo`).
pub const STEP_INFO_LINE: i64 = DERIVED_MIN;

/// XProf's `IsDerivedThreadId`: a line XProf derived, whose events repeat
/// the time of the device's own lines (steps, ops, modules, name scopes).
pub fn is_derived_line(id: i64) -> bool {
    (DERIVED_MIN..=DERIVED_MAX).contains(&id)
}

/// What kind of plane, and so which of its events are what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaneKind {
    /// The host's threads.
    Host,
    Gpu,
    Tpu,
    /// The XLA programs.
    Metadata,
    /// Anything else (`Task Environment`, `/host:__ScopeRangeCallStack__`).
    Other,
}

impl PlaneKind {
    pub fn of(name: &str) -> PlaneKind {
        match name {
            HOST_PLANE => PlaneKind::Host,
            METADATA_PLANE => PlaneKind::Metadata,
            _ if name.starts_with(GPU_PREFIX) => PlaneKind::Gpu,
            _ if name.starts_with(TPU_PREFIX) => PlaneKind::Tpu,
            _ => PlaneKind::Other,
        }
    }
}

/// A device plane's number (`/device:GPU:3` is 3, as `--devices` names
/// it); `None` for the host's planes and the others.
pub fn device_number(name: &str) -> Option<i64> {
    let rest = name.strip_prefix(GPU_PREFIX).or_else(|| name.strip_prefix(TPU_PREFIX))?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).map_or(rest, |end| &rest[..end]);
    digits.parse().ok()
}

/// The `local_chip_id` (field 4) of a plane's `core_details` stat (XProf's
/// `CoreDetails` proto), 0 when the field is absent; `None` without the
/// stat.
pub fn local_chip_id(plane: &Plane<'_>) -> Result<Option<u32>, DecodeError> {
    let Some(id) = plane.stat_names.iter().find(|(_, name)| **name == "core_details").map(|(id, _)| *id) else { return Ok(None) };
    let Some(StatValue::Bytes(bytes)) = plane.stats.iter().rev().find(|s| s.metadata_id == id).map(|s| s.value) else { return Ok(None) };
    let mut chip = 0u32;
    for_each_field(bytes, |tag, wire_type, buf| {
        if tag == 4 { prost::encoding::uint32::merge(wire_type, &mut chip, buf, prost::encoding::DecodeContext::default()) } else { skip(tag, wire_type, buf) }
    })?;
    Ok(Some(chip))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_are_known_by_xprofs_names() {
        assert_eq!(PlaneKind::of("/host:CPU"), PlaneKind::Host);
        // XProf's exact match: only the host plane itself is the host.
        assert_eq!(PlaneKind::of("/host:CPU (something)"), PlaneKind::Other);
        assert_eq!(PlaneKind::of("/host:CPU:0"), PlaneKind::Other);
        assert_eq!(PlaneKind::of("/host:metadata"), PlaneKind::Metadata);
        assert_eq!(PlaneKind::of("/device:GPU:0"), PlaneKind::Gpu);
        assert_eq!(PlaneKind::of("/device:GPU:12"), PlaneKind::Gpu);
        assert_eq!(PlaneKind::of("/device:TPU:3"), PlaneKind::Tpu);
        assert_eq!(PlaneKind::of("/device:TPU_SYSTEM:0"), PlaneKind::Other);
        assert_eq!(PlaneKind::of("Task Environment"), PlaneKind::Other);
        assert_eq!(PlaneKind::of(""), PlaneKind::Other);
    }

    #[test]
    fn device_planes_are_numbered() {
        assert_eq!(device_number("/device:GPU:0"), Some(0));
        assert_eq!(device_number("/device:GPU:12"), Some(12));
        assert_eq!(device_number("/device:TPU:3 (pid 7)"), Some(3));
        for other in ["/host:CPU", "/host:metadata", "/device:TPU_SYSTEM:0", "/device:GPU:", "Task Environment"] {
            assert_eq!(device_number(other), None, "{other}");
        }
    }

    #[test]
    fn derived_lines_are_known_by_id() {
        assert_eq!(STEP_INFO_LINE, -559038737);
        assert!([STEP_INFO_LINE, STEP_INFO_LINE + 3, STEP_INFO_LINE + 99].into_iter().all(is_derived_line));
        assert!(![STEP_INFO_LINE - 1, STEP_INFO_LINE + 100, 0, 7, 0xdead_beef].into_iter().any(is_derived_line));
    }
}
