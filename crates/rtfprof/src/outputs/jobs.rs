//! `rtfprof jobs`' text: a line per job, then each step's wall time and
//! busiest devices.

use crate::jobs::JobSummary;
use crate::show::format;

/// The per-job summary text.
pub fn render(summaries: &[JobSummary]) -> String {
    let mut out = String::new();
    for job in summaries {
        out.push_str(&format!("job {}: {} nodes, {} steps, run graph coverage {:.2}\n", job.name, job.nodes, job.steps.len(), job.coverage));
        for step in &job.steps {
            let busiest: Vec<String> = step
                .devices
                .iter()
                .take(3)
                .map(|(d, t)| {
                    let share = if step.wall_micros > 0 { 100.0 * *t as f64 / step.wall_micros as f64 } else { 0.0 };
                    format!("{d} {} ({share:.1}% busy)", format::micros(*t))
                })
                .collect();
            out.push_str(&format!("  step {}: {}; busiest: {}\n", step.step, format::micros(step.wall_micros), busiest.join(", ")));
        }
    }
    out
}
