//! The selection flags that `rtfprof cut` and the timeline output
//! (`--output timeline:outfile=PATH`) share: `--steps A..B`, `--time_ms
//! A..B`, `--devices LIST` and `--min_dur_us N`, parsed and checked before
//! any trace is read. Each reader applies them its own way (a PyTorch cut:
//! `pytorch::cut::select`; an XPlane trace's timeline: its events).

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

/// The span of time a selection keeps: some steps, or a span of time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    Steps(StepRange),
    Time(TimeRange),
}

impl std::fmt::Display for Window {
    /// As a summary names it: `step 3`, `steps 10..12`, `1.5..2 ms`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Window::Steps(r) if r.first == r.last => write!(f, "step {}", r.first),
            Window::Steps(r) => write!(f, "steps {}..{}", r.first, r.last),
            Window::Time(t) => write!(f, "{}..{} ms", t.start_ns as f64 / 1e6, t.end_ns as f64 / 1e6),
        }
    }
}

/// The selection flags as given; `Default` is none given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventSelection {
    /// `--steps` or `--time_ms` (not both).
    pub window: Option<Window>,
    /// `--devices`: the devices (GPU numbers) whose device events are kept;
    /// `None`: all. A host's events are always kept.
    pub devices: Option<Vec<i64>>,
    /// `--min_dur_us`, in nanoseconds: complete events shorter than this
    /// are left out.
    pub min_dur_ns: Option<i64>,
}

impl EventSelection {
    /// From the flags' text; each is optional, but `steps` and `time_ms`
    /// exclude each other.
    pub fn parse(steps: Option<&str>, time_ms: Option<&str>, devices: Option<&str>, min_dur_us: Option<&str>) -> Result<EventSelection> {
        let window = match (steps, time_ms) {
            (Some(steps), None) => Some(Window::Steps(StepRange::parse(steps)?)),
            (None, Some(time)) => Some(Window::Time(TimeRange::parse(time)?)),
            (Some(_), Some(_)) => return Err(Error::flag("--time_ms", "give --steps or --time_ms, not both")),
            (None, None) => None,
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
        Ok(EventSelection { window, devices, min_dur_ns })
    }

    /// Whether no flag was given.
    pub fn is_empty(&self) -> bool {
        self.window.is_none() && self.devices.is_none() && self.min_dur_ns.is_none()
    }

    /// The flags given, in the order `--help` lists them, for errors about
    /// flags that do not apply.
    pub fn flags(&self) -> Vec<&'static str> {
        let window = self.window.map(|w| match w {
            Window::Steps(_) => "--steps",
            Window::Time(_) => "--time_ms",
        });
        [window, self.devices.as_ref().map(|_| "--devices"), self.min_dur_ns.map(|_| "--min_dur_us")].into_iter().flatten().collect()
    }

    /// Whether the device events of `device` are kept (`None`: an event
    /// of no known device, kept only without `--devices`).
    pub fn keeps_device(&self, device: Option<i64>) -> bool {
        keeps_device(self.devices.as_deref(), device)
    }

    /// Whether a complete event of `dur` ns is kept.
    pub fn keeps_duration(&self, dur: Option<i64>) -> bool {
        keeps_duration(self.min_dur_ns, dur)
    }

    /// `--min_dur_us` as a summary says it: `5`, `0.5`.
    pub fn min_dur_us(&self) -> Option<String> {
        self.min_dur_ns.map(|ns| (ns as f64 / 1e3).to_string())
    }

    /// `--devices` as a summary says it: `0, 3`.
    pub fn devices_text(&self) -> Option<String> {
        self.devices.as_ref().map(|list| list.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
    }
}

/// [`EventSelection::keeps_device`] of a `--devices` list.
pub fn keeps_device(devices: Option<&[i64]>, device: Option<i64>) -> bool {
    match (devices, device) {
        (None, _) => true,
        (Some(list), Some(d)) => list.contains(&d),
        (Some(_), None) => false,
    }
}

/// [`EventSelection::keeps_duration`] of a `--min_dur_us` in nanoseconds.
pub fn keeps_duration(min_dur_ns: Option<i64>, dur: Option<i64>) -> bool {
    min_dur_ns.is_none_or(|min| dur.unwrap_or(0) >= min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_parse() {
        let s = EventSelection::parse(None, Some("1.5..2"), Some("0, 3"), Some("0.5")).unwrap();
        assert_eq!(s.window, Some(Window::Time(TimeRange { start_ns: 1_500_000, end_ns: 2_000_000 })));
        assert_eq!((s.devices.clone(), s.min_dur_ns), (Some(vec![0, 3]), Some(500)));
        assert_eq!(s.flags(), ["--time_ms", "--devices", "--min_dur_us"]);
        assert_eq!((s.min_dur_us().unwrap(), s.devices_text().unwrap(), s.window.unwrap().to_string()), ("0.5".into(), "0, 3".into(), "1.5..2 ms".into()));
        let none = EventSelection::parse(None, None, None, None).unwrap();
        assert!(none.is_empty() && none.flags().is_empty() && none == EventSelection::default());
        let steps = EventSelection::parse(Some("4..6"), None, None, Some("5")).unwrap();
        assert_eq!((steps.window.unwrap().to_string(), steps.min_dur_us().unwrap()), ("steps 4..6".into(), "5".into()));
        for (steps, time, devices, min_dur, flag) in [
            (Some("1"), Some("0..1"), None, None, "--time_ms"),
            (None, Some("2..1"), None, None, "--time_ms"),
            (None, Some("1"), None, None, "--time_ms"),
            (None, Some("nan..1"), None, None, "--time_ms"),
            (None, Some("0..1e300"), None, None, "--time_ms"),
            (Some("x"), None, None, None, "--steps"),
            (None, None, Some("0,x"), None, "--devices"),
            (None, None, Some("-1"), None, "--devices"),
            (None, None, None, Some("-3"), "--min_dur_us"),
            (None, None, None, Some("inf"), "--min_dur_us"),
        ] {
            let e = EventSelection::parse(steps, time, devices, min_dur).unwrap_err().to_string();
            assert!(e.starts_with(flag), "{flag}: {e}");
        }
    }
}
