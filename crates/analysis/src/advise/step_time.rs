//! StepTimeChecker (rtfprof's own, for XPlane traces): XProf's conclusion
//! from its step-time breakdown (`input_pipeline_analyzer`'s summary and next
//! step), computed from the same numbers `rtfprof steps` prints, with
//! XProf's pointers into its own page and into TF's tools said in rtfprof's
//! commands and in the terms of the trace's framework. tfprof has no such
//! checker, so profiles read from tfprof's own files do not get it; PyTorch
//! traces get their own (see [`super::pytorch`]).

use super::Framework;
use crate::steps::{self, xplane::Hardware};

/// Before the next step (XProf's, with its pointers into its own page
/// turned into rtfprof commands: see [`next_step`]).
pub const NEXT_STEP_PREFIX: &str = "Next step: ";

/// The XPlane steps' conclusions.
pub fn check(analyzed: &steps::Steps, framework: Framework) -> Vec<String> {
    let hardware = match analyzed.source {
        steps::Source::Xplane(hardware) => hardware,
        _ => Hardware::CpuOnly,
    };
    if analyzed.rows.is_empty() && hardware == Hardware::Tpu {
        return vec![format!(
            "{}; AcceleratorUtilizationChecker gives XProf's duty cycle of the TPUs, rtfprof hlo the time of their XLA ops.",
            steps::no_steps_message(analyzed)
        )];
    }
    let summary = steps::summary(analyzed);
    let next = if summary.input_classification == "unknown" {
        format!("rtfprof steps has no step to measure here: {}.", steps::no_steps_message(analyzed))
    } else {
        next_step(&strip_html(&summary.next_step), framework, hardware)
    };
    let mut reports = vec![summary.input_statement, format!("{NEXT_STEP_PREFIX}{next}")];
    reports.extend([summary.device_collectives_statement, summary.kernel_launch_statement, summary.all_other_statement].into_iter().filter(|s| !s.is_empty()));
    reports.extend(idle_statement(analyzed));
    reports
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

/// XProf's next step (HTML stripped), said for the trace's framework and
/// hardware: what it says of its own page ("Section 3", "the rest of this
/// page") in rtfprof's commands, its tf.data advice only to TF programs
/// (other programs are told where their host time shows instead); any
/// other text as it is.
pub fn next_step(xprof: &str, framework: Framework, hardware: Hardware) -> String {
    const SECTION_3: &str = "Look at Section 3 for the breakdown of input time on the host.";
    const IGNORE_SECTION_3: &str = " (please ignore Section 3 below)";
    const SKIP: &str = "You may skip the rest of this page.";
    const TF_DATA: &str = "Consider using the tf.data API";
    if xprof == SECTION_3 {
        return "Look at the breakdown of input time on the host: rtfprof op --select micros --order_by micros --account_type_regexes Dataset (tf.data's ops)."
            .into();
    }
    if xprof == SKIP {
        return match hardware {
            Hardware::CpuOnly => "The steps are not input-bound: look at where the host time goes (rtfprof op --select micros --order_by micros).".into(),
            _ if matches!(framework, Framework::Tf1 | Framework::Tf2) => {
                "The steps are not input-bound: look at where the device time goes (rtfprof op --select accelerator_micros --order_by accelerator_micros; on GPUs, rtfprof kernels).".into()
            }
            _ => "The steps are not input-bound: look at where the device time goes (rtfprof op --select accelerator_micros --order_by accelerator_micros; the XLA ops: rtfprof hlo; on GPUs, rtfprof kernels).".into(),
        };
    }
    if xprof.starts_with(TF_DATA) && !matches!(framework, Framework::Tf1 | Framework::Tf2) {
        return "Look at what the host does between the steps (Python, data loading, host-to-device copies): rtfprof steps shows each step's Other, Transfers and Device idle time; a step's host and device events: rtfprof scope --step N --output timeline:outfile=PATH (Perfetto).".into();
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
    use super::{Framework, Hardware, next_step};

    #[test]
    fn xprofs_page_references_become_rtfprof_commands() {
        for text in ["Look at Section 3 for the breakdown of input time on the host.", "You may skip the rest of this page."] {
            for hardware in [Hardware::CpuOnly, Hardware::Gpu] {
                let ours = next_step(text, Framework::Tf2, hardware);
                assert!(ours.contains("rtfprof op") && !ours.contains("Section") && !ours.contains("page"), "{ours}");
            }
        }
        // Host time on CPUs, device time on GPUs.
        assert!(next_step("You may skip the rest of this page.", Framework::Jax, Hardware::CpuOnly).contains("--select micros "));
        assert!(next_step("You may skip the rest of this page.", Framework::Jax, Hardware::Gpu).contains("rtfprof hlo"));
        let tf_data = "Consider using the tf.data API (https://www.tensorflow.org/guide/data) to enable profiler's host-side analysis for input pipeline. Profiler currently does not support custom input pipeline (please ignore Section 3 below).";
        let tf = next_step(tf_data, Framework::Tf2, Hardware::Gpu);
        assert!(!tf.contains("Section") && tf.contains("tf.data"), "{tf}");
        // Not TF advice to a JAX program.
        let jax = next_step(tf_data, Framework::Jax, Hardware::Gpu);
        assert!(!jax.contains("tf.data API") && jax.starts_with("Look at what the host does") && jax.contains("rtfprof steps"), "{jax}");
        assert_eq!(next_step("Other text.", Framework::Jax, Hardware::Gpu), "Other text.");
    }

    #[test]
    fn links_become_text_and_address() {
        assert_eq!(
            super::strip_html("Consider using <a href=\"https://x.org/data\" target=\"_blank\">the tf.data API</a> to enable it."),
            "Consider using the tf.data API (https://x.org/data) to enable it."
        );
    }
}
