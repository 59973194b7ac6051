//! StepTimeChecker (rtfprof's own, for XPlane traces): XProf's conclusion
//! from its step-time breakdown (`input_pipeline_analyzer`'s summary and next
//! step), computed from the same numbers `rtfprof steps` prints. tfprof has
//! no such checker, so profiles read from tfprof's own files do not get it.

use crate::error::Result;
use crate::load::Loaded;
use crate::steps;

/// Before the next step (XProf's, with its pointers into its own page
/// turned into rtfprof commands: see [`next_step`]).
pub const NEXT_STEP_PREFIX: &str = "Next step: ";

/// `None` when the profile has no XPlane trace.
pub fn check(loaded: &Loaded) -> Result<Option<Vec<String>>> {
    // (PyTorch traces have steps of their own: see `rtfprof steps`.)
    if loaded.xplane_traces().next().is_none() {
        return Ok(None);
    }
    let analyzed = steps::analyze(loaded)?;
    if analyzed.rows.is_empty() {
        if let steps::Source::Xplane(steps::xplane::Hardware::Tpu) = analyzed.source {
            return Ok(Some(vec![steps::no_steps_message(&analyzed)]));
        }
    }
    let summary = steps::summary(&analyzed);
    let next_step = format!("{NEXT_STEP_PREFIX}{}", next_step(&strip_html(&summary.next_step)));
    let mut reports = vec![summary.input_statement, next_step];
    reports.extend(
        [summary.device_collectives_statement, summary.kernel_launch_statement, summary.all_other_statement].into_iter().filter(|s| !s.is_empty()),
    );
    reports.extend(idle_statement(&analyzed));
    Ok(Some(reports))
}

/// Beyond XProf, on GPU traces: how much of the steps' time no device ran
/// anything (XProf files it under "All others"), when that is a fifth or
/// more.
fn idle_statement(analyzed: &steps::Steps) -> Option<String> {
    let (mut idle, mut total, mut transfers) = (0.0, 0.0, 0.0);
    for row in &analyzed.rows {
        idle += row.device_idle_us?;
        transfers += row.transfers_us?;
        total += row.step_us;
    }
    let share = 100.0 * idle / total;
    (total > 0.0 && share >= 20.0).then(|| {
        format!(
            "The GPUs ran nothing for {share:.1}% of the steps' time (device_idle_us in rtfprof steps; memcpys took {:.1}%): they wait for the host.",
            100.0 * transfers / total
        )
    })
}

/// XProf's next step (HTML stripped) with what it says of its own page (its
/// sections, "the rest of this page") said of rtfprof's commands instead;
/// any other text as it is.
pub fn next_step(xprof: &str) -> String {
    const SECTION_3: &str = "Look at Section 3 for the breakdown of input time on the host.";
    const IGNORE_SECTION_3: &str = " (please ignore Section 3 below)";
    const SKIP: &str = "You may skip the rest of this page.";
    if xprof == SECTION_3 {
        return "Look at the breakdown of input time on the host: rtfprof op --select micros --order_by micros --account_type_regexes Dataset (tf.data's ops).".into();
    }
    if xprof == SKIP {
        return "The steps are not input-bound: look at where the device time goes (rtfprof op --select accelerator_micros --order_by accelerator_micros; on GPUs, rtfprof kernels).".into();
    }
    xprof.replace(IGNORE_SECTION_3, "")
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
    fn xprofs_page_references_become_rtfprof_commands() {
        for text in ["Look at Section 3 for the breakdown of input time on the host.", "You may skip the rest of this page."] {
            let ours = super::next_step(text);
            assert!(ours.contains("rtfprof op") && !ours.contains("Section") && !ours.contains("page"), "{ours}");
        }
        let tf_data = "Consider using the tf.data API (https://www.tensorflow.org/guide/data) to enable profiler's host-side analysis for input pipeline. Profiler currently does not support custom input pipeline (please ignore Section 3 below).";
        assert!(!super::next_step(tf_data).contains("Section"));
        assert_eq!(super::next_step("Other text."), "Other text.");
    }

    #[test]
    fn links_become_text_and_address() {
        assert_eq!(
            super::strip_html("Consider using <a href=\"https://x.org/data\" target=\"_blank\">the tf.data API</a> to enable it."),
            "Consider using the tf.data API (https://x.org/data) to enable it."
        );
    }
}
