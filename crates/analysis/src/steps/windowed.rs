//! `steps` of a PyTorch trace read a window of steps at a time
//! ([`Windows`]), in memory one window bounds, with the rows and the
//! whole-trace numbers of the trace read whole.
//!
//! - Rows: each window gives the rows of its own steps, the first of them
//!   starting where the window before left its last step's end (the
//!   plugin's chain of step ends runs across windows).
//! - HTA's whole-trace split: each window adds the device work it owns to
//!   an [`hta::Accumulator`] per timing, with the whole trace's last step
//!   (from the plan's steps) and HTA's join rule.
//! - Kernel launches: counts and sums add up; the medians come from the
//!   durations' counts ([`LaunchTally`]), which stay small (a trace of
//!   millions of kernels has a few thousand distinct durations).

use std::collections::BTreeMap;

use super::pytorch::{self, GpuTime, Launches, OwnSteps, Rank, SMALL_KERNEL_NS};
use crate::error::{Error, Result};
use crate::hta::{self, Timing};
use crate::inputs::pytorch::Trace;
use crate::inputs::pytorch::windows::Windows;

/// The steps of the trace `windows` plans, a window at a time; `rank` names
/// it as [`pytorch::analyze_trace`] does.
pub fn analyze_windows(rank: &str, windows: &Windows) -> Result<Rank> {
    analyze_windows_with(rank, windows, hta::SLACK_NS)
}

/// [`analyze_windows`], settling device work `slack_ns` before each
/// window's end ([`hta::Accumulator::with_slack`]).
fn analyze_windows_with(rank: &str, windows: &Windows, slack_ns: i64) -> Result<Rank> {
    let mut steps = WindowedSteps::new(windows, slack_ns);
    for k in 0..windows.windows.len() {
        let trace = windows.read(k)?;
        steps.add(k, &trace)?;
    }
    Ok(steps.finish(rank))
}

/// The steps of a trace fed a window at a time, in order, so that other
/// analyses can read each window's trace too (`ranks`).
pub struct WindowedSteps<'w> {
    windows: &'w Windows,
    last_step: [Option<i64>; 2],
    kept_without: [bool; 2],
    accumulators: [hta::Accumulator; 2],
    tally: LaunchTally,
    rows: Vec<pytorch::Row>,
    prev_end: Option<i64>,
}

impl<'w> WindowedSteps<'w> {
    /// Settles device work `slack_ns` before each window's end
    /// ([`hta::SLACK_NS`] but in tests).
    pub fn new(windows: &'w Windows, slack_ns: i64) -> WindowedSteps<'w> {
        let timings = [Timing::Exact, Timing::Hta];
        let last_step = timings.map(|t| hta::last_step_start(&windows.steps, t));
        let kept_without =
            [0, 1].map(|k| windows.first_uncorrelated_host_ns.is_some_and(|ts| last_step[k].is_none_or(|last| hta::span_start(ts, timings[k]) < last)));
        let accumulators = timings.map(|t| hta::Accumulator::with_slack(t, hta::CONSECUTIVE_KERNEL_DELAY_US, slack_ns));
        WindowedSteps { windows, last_step, kept_without, accumulators, tally: LaunchTally::default(), rows: Vec::new(), prev_end: None }
    }

    /// Adds window `k`, read as `trace` (windows in order); returns the
    /// rows of its own steps.
    pub fn add(&mut self, k: usize, trace: &Trace) -> Result<&[pytorch::Row]> {
        let window = &self.windows.windows[k];
        let own = OwnSteps { steps: &window.steps, prev_end: self.prev_end, devices: &self.windows.gpu_devices };
        let (last_step, kept_without, tally) = (self.last_step, self.kept_without, &mut self.tally);
        let accumulators = &mut self.accumulators;
        let ((window_rows, _), added) = rayon::join(
            || pytorch::step_rows(trace, Some(&own)),
            || -> std::result::Result<(), String> {
                for (a, acc) in accumulators.iter_mut().enumerate() {
                    let selection = hta::Selection::of_window(trace, acc.timing(), last_step[a], kept_without[a], window.own);
                    if acc.timing() == Timing::Exact {
                        tally.add(&pytorch::kernel_launches(trace, &selection));
                    }
                    acc.add(trace, &selection, window.own.1)?;
                }
                Ok(())
            },
        );
        added.map_err(|message| Error::input(crate::inputs::pytorch::KIND, self.windows.path(), format!("cannot be read a window at a time: {message}")))?;
        self.prev_end = window_rows.last().map(|r| r.end_ns).or(self.prev_end);
        let from = self.rows.len();
        self.rows.extend(window_rows);
        Ok(&self.rows[from..])
    }

    /// The rank, once every window is added.
    pub fn finish(self, rank: &str) -> Rank {
        let [exact, by_hta] = self.accumulators.map(|acc| {
            let (breakdown, idle) = acc.finish();
            pytorch::device_times(breakdown, &idle)
        });
        let gpu_time: Vec<GpuTime> = pytorch::gpu_time(by_hta, &exact);
        Rank { rank: rank.to_owned(), rows: self.rows, has_steps: true, gpu_time, launches: self.tally.finish() }
    }
}

/// [`Launches`] added up over windows: counts, sums and each duration's
/// count (for the medians).
#[derive(Debug, Default)]
pub struct LaunchTally {
    kernels: usize,
    shorter_than_launch: usize,
    small: usize,
    small_ns: i64,
    kernel_ns: i64,
    kernel_durations: BTreeMap<i64, usize>,
    launch_durations: BTreeMap<i64, usize>,
}

impl LaunchTally {
    pub fn add(&mut self, rows: &[hta::Launch]) {
        for l in rows {
            self.kernels += 1;
            self.shorter_than_launch += usize::from(l.gpu_duration < l.cpu_duration);
            if l.gpu_duration < SMALL_KERNEL_NS {
                self.small += 1;
                self.small_ns += l.gpu_duration;
            }
            self.kernel_ns += l.gpu_duration;
            *self.kernel_durations.entry(l.gpu_duration).or_default() += 1;
            *self.launch_durations.entry(l.cpu_duration).or_default() += 1;
        }
    }

    pub fn finish(&self) -> Launches {
        Launches {
            kernels: self.kernels,
            shorter_than_launch: self.shorter_than_launch,
            median_kernel_ns: median(&self.kernel_durations, self.kernels),
            median_launch_ns: median(&self.launch_durations, self.kernels),
            small: self.small,
            small_ns: self.small_ns,
            kernel_ns: self.kernel_ns,
        }
    }
}

/// pandas' median of `n` values given as counts: the middle one, or the
/// mean of the two middle ones.
fn median(counts: &BTreeMap<i64, usize>, n: usize) -> f64 {
    let nth = |k: usize| {
        let mut seen = 0;
        for (&value, &count) in counts {
            seen += count;
            if seen > k {
                return value;
            }
        }
        unreachable!("fewer than {k} values")
    };
    match n {
        0 => f64::NAN,
        n if n % 2 == 1 => nth(n / 2) as f64,
        n => (nth(n / 2 - 1) as f64 + nth(n / 2) as f64) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::pytorch::Trace;
    use crate::inputs::pytorch::windows::Budget;

    /// Read a window of one, two or three steps at a time, every trace of
    /// the test data with steps gives the rank the whole trace gives: its
    /// rows, HTA's split in both timings, the launches (one step a window
    /// is the hardest case: every step's start is carried, most device
    /// work is held across a window's end).
    #[test]
    fn windows_give_the_whole_traces_steps() {
        let whole = |_: &_, trace: &Trace| Some(format!("{:#?}", pytorch::analyze_trace("r", trace)));
        let windowed = crate::inputs::pytorch::for_each_windowing(whole, |whole, windows, what| {
            // Settled at each window's end (no slack), as early as device
            // work allows, and with the slack.
            for slack in [0, hta::SLACK_NS] {
                let by_windows = analyze_windows_with("r", windows, slack).unwrap();
                // (Compared as printed: a trace without kernels has NaN
                // medians, which `==` never finds equal; f64s print
                // exactly.)
                assert_eq!(&format!("{by_windows:#?}"), whole, "{what}, slack {slack}");
            }
        });
        assert!(windowed >= 80, "only {windowed} traces were windowed");
    }

    /// A GPU that works in one step only still has a row in every step
    /// read a window at a time, as in the whole trace.
    #[test]
    fn a_gpu_idle_in_a_window_keeps_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("two_gpus.pt.trace.json");
        let step =
            |n: u64, ts: u64| format!(r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{n}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 100}}"#);
        let launch = |c: u64, ts: u64| {
            format!(
                r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, "dur": 5, "args": {{"correlation": {c}}}}}"#
            )
        };
        let kernel = |c: u64, device: u32, ts: u64| {
            format!(
                r#"{{"ph": "X", "cat": "kernel", "name": "k", "pid": {device}, "tid": 7, "ts": {ts}, "dur": 20, "args": {{"correlation": {c}, "device": {device}, "stream": 7}}}}"#
            )
        };
        // (GPU 1 works in step 1 only: step 4's window, which holds steps
        // 3 and 4, has no event of it.)
        let events = [
            step(1, 0),
            launch(1, 10),
            launch(2, 20),
            step(2, 200),
            launch(3, 210),
            step(3, 400),
            step(4, 600),
            launch(4, 610),
            kernel(1, 0, 30),
            kernel(2, 1, 40),
            kernel(3, 0, 230),
            kernel(4, 0, 630),
        ];
        std::fs::write(&path, format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"))).unwrap();
        let whole = pytorch::analyze_trace("r", &Trace::open(&path).unwrap());
        assert_eq!(whole.rows.len(), 8, "{whole:#?}");
        let windows = Windows::plan(&path, Budget::Steps(1)).unwrap().unwrap();
        assert_eq!(windows.gpu_devices, [0, 1]);
        let by_windows = analyze_windows_with("r", &windows, 0).unwrap();
        assert_eq!(format!("{by_windows:#?}"), format!("{whole:#?}"));
    }

    /// The medians from counts are those of the values sorted.
    #[test]
    fn medians_from_counts() {
        for values in [vec![], vec![5], vec![3, 1], vec![4, 4, 1, 9], vec![7, 7, 7, 2, 2, 100, -3]] {
            let mut counts = BTreeMap::new();
            for &v in &values {
                *counts.entry(v).or_insert(0) += 1;
            }
            let rows: Vec<hta::Launch> = values.iter().map(|&v| hta::Launch { event: 0, cpu_duration: v, gpu_duration: v, launch_delay: 0 }).collect();
            let summary = hta::launch_summary(&rows, Timing::Exact);
            let ours = median(&counts, values.len());
            assert!(ours.to_bits() == summary.gpu_duration_median.to_bits(), "{values:?}: {ours} vs {}", summary.gpu_duration_median);
        }
    }
}
