//! `rtfprof advise`'s text: each checker's name, then its reports.

use crate::advise::Checker;

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
