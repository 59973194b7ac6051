//! What a cut keeps: `--steps`, `--time_ms`, `--devices` and
//! `--min_dur_us`, parsed and checked before the trace is read (by
//! [`crate::inputs::selection`], which the timeline output shares), with a
//! window of steps or time required.

use crate::error::{Error, Result};
use crate::inputs::selection::{self, EventSelection};
pub use crate::inputs::selection::{StepRange, TimeRange, Window};

/// What to keep of a trace, beside its metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    pub window: Window,
    /// `--devices`: the GPUs (`args.device`, else the `pid` Kineto gives a
    /// device's events) whose device events are kept; `None`: all.
    pub devices: Option<Vec<i64>>,
    /// `--min_dur_us`: complete events shorter than this are dropped.
    pub min_dur_ns: Option<i64>,
}

impl Selection {
    /// The steps and nothing else dropped.
    pub fn steps(steps: StepRange) -> Selection {
        Selection { window: Window::Steps(steps), devices: None, min_dur_ns: None }
    }

    /// From the flags' text: exactly one of `steps` and `time_ms`.
    pub fn parse(steps: Option<&str>, time_ms: Option<&str>, devices: Option<&str>, min_dur_us: Option<&str>) -> Result<Selection> {
        Selection::of(EventSelection::parse(steps, time_ms, devices, min_dur_us)?)
    }

    /// From the flags parsed: a cut needs a window.
    pub fn of(selection: EventSelection) -> Result<Selection> {
        let EventSelection { window, devices, min_dur_ns } = selection;
        let window = window.ok_or_else(|| Error::flag("--steps", "cut needs --steps A..B or --time_ms A..B: what to keep"))?;
        Ok(Selection { window, devices, min_dur_ns })
    }

    /// Whether the device events of `device` are kept.
    pub(super) fn keeps_device(&self, device: Option<i64>) -> bool {
        selection::keeps_device(self.devices.as_deref(), device)
    }

    /// Whether a complete event of `dur` ns is kept.
    pub(super) fn keeps_duration(&self, dur: Option<i64>) -> bool {
        selection::keeps_duration(self.min_dur_ns, dur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_parse() {
        let s = Selection::parse(None, Some("1.5..2"), Some("0, 3"), Some("0.5")).unwrap();
        assert_eq!(s.window, Window::Time(TimeRange { start_ns: 1_500_000, end_ns: 2_000_000 }));
        assert_eq!((s.devices, s.min_dur_ns), (Some(vec![0, 3]), Some(500)));
        assert_eq!(Selection::parse(Some("4"), None, None, None).unwrap(), Selection::steps(StepRange { first: 4, last: 4 }));
        for (steps, time, devices, min_dur, flag) in [
            (None, None, None, None, "--steps"),
            (Some("1"), Some("0..1"), None, None, "--time_ms"),
            (None, Some("2..1"), None, None, "--time_ms"),
            (Some("1"), None, Some("0,x"), None, "--devices"),
            (Some("1"), None, None, Some("-3"), "--min_dur_us"),
        ] {
            let e = Selection::parse(steps, time, devices, min_dur).unwrap_err().to_string();
            assert!(e.starts_with(flag), "{flag}: {e}");
        }
    }
}
