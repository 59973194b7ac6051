//! `advise`: tfprof's checkers, each reading [`crate::stats::Stats`] or a view's result
//! (`internal/advisor/*.h`). Reports print as `\n<Checker>:\n` followed by
//! one line per report. tfprof prints its checkers in protobuf hash-map order,
//! which changes from run to run; rtfprof always uses the order of TF's docs.

mod accelerator;
mod expensive;
mod operation;
mod step_time;

pub use step_time::{next_step, strip_html, NEXT_STEP_PREFIX};

use crate::error::Result;
use crate::load::Loaded;

/// One checker's findings.
pub struct Checker {
    pub name: &'static str,
    pub reports: Vec<String>,
}

/// Runs every checker; messages tfprof prints on stderr go to `warnings`.
pub fn advise(loaded: &Loaded, warnings: &mut Vec<String>) -> Result<Vec<Checker>> {
    let stats = &loaded.stats;
    let mut checkers = vec![
        Checker { name: "AcceleratorUtilizationChecker", reports: accelerator::check(stats) },
        Checker { name: "OperationChecker", reports: operation::check(stats) },
        Checker { name: "ExpensiveOperationChecker", reports: expensive::check(stats, loaded.from_traces(), warnings)? },
    ];
    // rtfprof's own, for XPlane traces only: tfprof's files keep tfprof's output.
    if let Some(reports) = step_time::check(loaded)? {
        checkers.push(Checker { name: "StepTimeChecker", reports });
    }
    Ok(checkers)
}

/// Runs every checker, printing their stderr messages.
pub fn advise_printing_warnings(loaded: &Loaded) -> Result<Vec<Checker>> {
    let mut warnings = Vec::new();
    let checkers = advise(loaded, &mut warnings);
    for warning in warnings {
        eprintln!("{warning}");
    }
    checkers
}

/// The text tfprof prints for the checkers' reports.
pub fn render(checkers: &[Checker]) -> String {
    let mut out = String::new();
    for checker in checkers {
        out.push_str(&format!("\n{}:\n", checker.name));
        for report in &checker.reports {
            out.push_str(report);
            out.push('\n');
        }
    }
    out
}
