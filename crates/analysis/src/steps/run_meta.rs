//! Steps of RunMetadata, event-file and ProfileProto profiles. Their records
//! tell kernels on a GPU's `stream:all` (device compute) from ops scheduled
//! on a CPU (host compute). Memcpy streams are not kept in the node model
//! (so memcpy time is not told apart), and nothing marks kernel launch,
//! input, output, compilation or collectives.
//! A step's time runs from its first execution's start to its last's end;
//! where device and host work overlap the device counts (as in XProf), and
//! the rest of the step is "other".

use std::collections::BTreeMap;

use super::{Source, StepRow, Steps};
use crate::intervals::{Empty, difference, union};
use crate::stats::Stats;
use crate::stats::device::is_placed_on_cpu;

/// Per step: (first start, last end, device intervals, host intervals), µs.
type Spans = (i64, i64, Vec<(i64, i64)>, Vec<(i64, i64)>);

pub fn analyze(stats: &Stats) -> Steps {
    let mut steps: BTreeMap<i64, Spans> = BTreeMap::new();
    for node in &stats.nodes {
        for (step, exec) in node.execs.iter() {
            let entry = steps.entry(*step).or_insert((i64::MAX, i64::MIN, Vec::new(), Vec::new()));
            for (_, runs) in exec.accelerator_execs() {
                for &(start, duration) in runs.iter() {
                    entry.2.push((start, start.saturating_add(duration.max(0))));
                }
            }
            for (device, runs) in exec.cpu_execs() {
                if !is_placed_on_cpu(device) {
                    continue;
                }
                for &(start, duration) in runs.iter() {
                    entry.3.push((start, start.saturating_add(duration.max(0))));
                }
            }
            for &(start, end) in entry.2.iter().chain(entry.3.iter()) {
                entry.0 = entry.0.min(start);
                entry.1 = entry.1.max(end);
            }
        }
    }
    let rows = steps
        .into_iter()
        .filter(|(_, s)| s.1 > s.0)
        .map(|(step, (begin, end, device, host))| {
            let device_union = union(device, Empty::Keep);
            let device_us = total(&device_union);
            let host_only = total(&difference(&union(host, Empty::Keep), &device_union));
            let step_us = (end - begin) as f64;
            let mut categories = [None; 9];
            categories[0] = Some(device_us as f64);
            categories[3] = Some(host_only as f64);
            categories[8] = Some((step_us - device_us as f64 - host_only as f64).max(0.0));
            StepRow { name: step.to_string(), step_us, categories, transfers_us: None, device_idle_us: None }
        })
        .collect();
    Steps { source: Source::RunMetadata, rows, tf_data_in_use: false, pytorch: Vec::new() }
}

fn total(spans: &[(i64, i64)]) -> i64 {
    spans.iter().map(|(b, e)| e - b).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_time_wins_over_host_time() {
        let device = union(vec![(0, 10), (5, 20)], Empty::Keep);
        assert_eq!(device, vec![(0, 20)]);
        assert_eq!(difference(&union(vec![(15, 30), (40, 50)], Empty::Keep), &device), vec![(20, 30), (40, 50)]);
    }
}
