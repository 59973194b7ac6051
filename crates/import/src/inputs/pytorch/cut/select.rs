//! What a cut keeps: `--steps`, `--time_ms`, `--devices` and
//! `--min_dur_us`, parsed and checked before the trace is read.

use crate::error::{Error, Result};
pub use crate::inputs::step_range::StepRange;

/// A span of time in nanoseconds from the trace's first event, as
/// `--time_ms A..B` gives it in milliseconds (what Perfetto's and
/// TensorBoard's time axes show).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeRange {
    pub start_ns: i64,
    pub end_ns: i64,
}

impl TimeRange {
    pub fn parse(text: &str) -> Result<TimeRange> {
        let bad = || Error::flag("--time_ms", format!("'{text}' is not a span of milliseconds like 1200..1500 (from the trace's first event)"));
        let (a, b) = text.split_once("..").ok_or_else(bad)?;
        let ms = |s: &str| match s.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 && v * 1e6 < i64::MAX as f64 => Ok((v * 1e6).round() as i64),
            _ => Err(bad()),
        };
        let range = TimeRange { start_ns: ms(a)?, end_ns: ms(b)? };
        if range.start_ns >= range.end_ns {
            return Err(Error::flag("--time_ms", format!("'{text}' is empty: it must end after it starts")));
        }
        Ok(range)
    }
}

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

/// The span of time a cut keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    Steps(StepRange),
    Time(TimeRange),
}

impl Selection {
    /// The steps and nothing else dropped.
    pub fn steps(steps: StepRange) -> Selection {
        Selection { window: Window::Steps(steps), devices: None, min_dur_ns: None }
    }

    /// From the flags' text: exactly one of `steps` and `time_ms`.
    pub fn parse(steps: Option<&str>, time_ms: Option<&str>, devices: Option<&str>, min_dur_us: Option<&str>) -> Result<Selection> {
        let window = match (steps, time_ms) {
            (Some(steps), None) => Window::Steps(StepRange::parse(steps)?),
            (None, Some(time)) => Window::Time(TimeRange::parse(time)?),
            (Some(_), Some(_)) => return Err(Error::flag("--time_ms", "give --steps or --time_ms, not both")),
            (None, None) => return Err(Error::flag("--steps", "cut needs --steps A..B or --time_ms A..B: what to keep")),
        };
        let devices = devices
            .map(|text| {
                let bad = || Error::flag("--devices", format!("'{text}' is not a list of device numbers like 0,3"));
                let list: Vec<i64> = text.split(',').map(|d| d.trim().parse::<i64>().ok().filter(|d| *d >= 0).ok_or_else(bad)).collect::<Result<_>>()?;
                Ok::<_, Error>(list)
            })
            .transpose()?;
        let min_dur_ns = min_dur_us
            .map(|text| match text.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 && v * 1e3 < i64::MAX as f64 => Ok((v * 1e3).round() as i64),
                _ => Err(Error::flag("--min_dur_us", format!("'{text}' is not a duration in microseconds like 5 or 0.5"))),
            })
            .transpose()?;
        Ok(Selection { window, devices, min_dur_ns })
    }

    /// Whether the device events of `device` are kept.
    pub(super) fn keeps_device(&self, device: Option<i64>) -> bool {
        match (&self.devices, device) {
            (None, _) => true,
            (Some(list), Some(d)) => list.contains(&d),
            (Some(_), None) => false,
        }
    }

    /// Whether a complete event of `dur` ns is kept.
    pub(super) fn keeps_duration(&self, dur: Option<i64>) -> bool {
        self.min_dur_ns.is_none_or(|min| dur.unwrap_or(0) >= min)
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
            (None, Some("1"), None, None, "--time_ms"),
            (None, Some("nan..1"), None, None, "--time_ms"),
            (None, Some("0..1e300"), None, None, "--time_ms"),
            (Some("1"), None, Some("0,x"), None, "--devices"),
            (Some("1"), None, Some("-1"), None, "--devices"),
            (Some("1"), None, None, Some("-3"), "--min_dur_us"),
            (Some("1"), None, None, Some("inf"), "--min_dur_us"),
        ] {
            let e = Selection::parse(steps, time, devices, min_dur).unwrap_err().to_string();
            assert!(e.starts_with(flag), "{flag}: {e}");
        }
    }
}
