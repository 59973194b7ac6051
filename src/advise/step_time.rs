//! StepTimeChecker (rtfprof's own, for XPlane traces): XProf's conclusion
//! from its step-time breakdown (`input_pipeline_analyzer`'s summary and next
//! step), computed from the same numbers `rtfprof steps` prints. tfprof has
//! no such checker, so profiles read from tfprof's own files do not get it.

use crate::error::Result;
use crate::stats::Stats;
use crate::steps;

/// Before XProf's next step, which speaks of its own page's sections.
pub const NEXT_STEP_PREFIX: &str = "XProf's next step (its input-pipeline page): ";

/// `None` when the profile has no XPlane trace.
pub fn check(stats: &Stats) -> Result<Option<Vec<String>>> {
    if stats.traces.is_empty() {
        return Ok(None);
    }
    let analyzed = steps::analyze(stats)?;
    if analyzed.rows.is_empty() {
        if let steps::Source::Xplane(steps::xplane::Hardware::Tpu) = analyzed.source {
            return Ok(Some(vec![steps::no_steps_message(&analyzed)]));
        }
    }
    let summary = steps::summary(&analyzed);
    // The next step refers to the sections of XProf's page; say whose it is.
    let next_step = format!("{NEXT_STEP_PREFIX}{}", strip_html(&summary.next_step));
    let mut reports = vec![summary.input_statement, next_step];
    reports.extend(
        [summary.device_collectives_statement, summary.kernel_launch_statement, summary.all_other_statement].into_iter().filter(|s| !s.is_empty()),
    );
    Ok(Some(reports))
}

/// XProf's next step links its docs in HTML: `<a href="URL" …>text</a>`
/// becomes `text (URL)`.
pub fn strip_html(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("<a href=\"") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 9..];
        let (Some(url_end), Some(close)) = (after.find('"'), after.find("</a>")) else {
            out.push_str(&rest[open..]);
            return out;
        };
        let url = &after[..url_end];
        let label = after[..close].rsplit_once('>').map_or("", |(_, l)| l);
        out.push_str(&format!("{label} ({url})"));
        rest = &after[close + 4..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn links_become_text_and_address() {
        assert_eq!(
            super::strip_html("Consider using <a href=\"https://x.org/data\" target=\"_blank\">the tf.data API</a> to enable it."),
            "Consider using the tf.data API (https://x.org/data) to enable it."
        );
    }
}
