//! OperationChecker: known slow op choices. Its rules are about TF's ops
//! (tfprof's); other frameworks' traces get a line saying so.

use super::Framework;
use crate::stats::{Stats, device};

pub fn check(stats: &Stats, framework: Framework) -> Vec<String> {
    match framework {
        Framework::Tf1 => tf_rules(stats, |op_type| op_type == "FusedBatchNorm"),
        // (TF2 runs FusedBatchNormV3; tfprof's exact name would say a
        // fused batch norm is not one.)
        Framework::Tf2 => tf_rules(stats, |op_type| op_type.starts_with("FusedBatchNorm")),
        other => vec![format!(
            "No rule for {} programs: the rules here are TensorFlow's (BatchNorm ops without FusedBatchNorm, NHWC convolutions on GPU).",
            other.name()
        )],
    }
}

/// tfprof's rules; `fused` tells a fused batch norm op type.
fn tf_rules(stats: &Stats, fused: impl Fn(&str) -> bool) -> Vec<String> {
    let uses_batch_norm = stats.nodes.iter().any(|n| n.name.contains("BatchNorm"));
    let uses_fused_batch_norm = stats.nodes.iter().any(|n| n.op_types.iter().any(|t| fused(t)));
    let nhwc_on_gpu = stats.nodes.iter().any(|n| {
        let nhwc =
            n.attrs.get("data_format").is_some_and(|a| matches!(&a.value, Some(crate::proto::tensorflow::attr_value::Value::S(s)) if s.as_slice() == b"NHWC"));
        nhwc && device::is_placed_on_accelerator(n.canonical_device)
    });
    let mut reports = Vec::new();
    if uses_batch_norm && !uses_fused_batch_norm {
        reports.push("Maybe use faster FusedBatchNorm instead of BatchNorm".to_owned());
    }
    if nhwc_on_gpu {
        reports.push("Found operation using NHWC data_format on GPU. Maybe NCHW is faster.".to_owned());
    }
    reports
}
