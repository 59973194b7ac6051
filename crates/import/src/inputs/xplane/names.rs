//! What an XPlane event name says about the op it runs: XProf's
//! `ParseTfOpFullname` (`xla/tsl/profiler/utils/tf_op_utils.cc`), so that
//! rtfprof and XProf agree on which events are ops, and on their names and
//! types; and which events are memcpys, by XProf's rule and by rtfprof's.

/// An op named by an event: its name (the node) and its type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpName<'a> {
    pub name: &'a str,
    pub op_type: &'a str,
}

/// The type of tf.data iterator events (`Iterator::Root::Prefetch`).
pub const DATASET_TYPE: &str = "Dataset";

/// Parses `<op name>:<op type>` (TF ops, JAX `name:` pairs), tf.data
/// iterators and GPU memcpys; `None` for every other event (runtime
/// TraceMes, Python frames, step markers).
pub fn parse_op(fullname: &str) -> Option<OpName<'_>> {
    let Some((name, op_type)) = fullname.split_once(':') else {
        return memcpy_type(fullname).map(|op_type| OpName { name: fullname, op_type });
    };
    if name == "Iterator" {
        return Some(OpName { name: fullname, op_type: DATASET_TYPE });
    }
    if is_tf_op_name(name) && is_tf_op_type(op_type) {
        return Some(OpName { name, op_type });
    }
    let derived = if op_type.is_empty() { derive_op_type(name) } else { op_type };
    if is_jax_op_type(derived) {
        let op_type = derived.split_once('[').map_or(derived, |(head, _)| head);
        return Some(OpName { name, op_type });
    }
    // `name:` whose derived type is no JAX type still names a TF op.
    op_type.is_empty().then_some(OpName { name, op_type: derived })
}

/// XProf's type for an op known only by name (`jit(f)/add_1` → `add`): the
/// last scope component without a numeric `_N` suffix.
pub fn derive_op_type(full_name: &str) -> &str {
    let last = full_name.rsplit('/').next().unwrap_or(full_name);
    match last.rsplit_once('_') {
        Some((head, suffix)) if suffix.parse::<i64>().is_ok() => head,
        _ => last,
    }
}

/// `[A-Za-z0-9.][A-Za-z0-9_.\/>-]*`
fn is_tf_op_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '.')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '\\' | '/' | '>' | '-'))
}

/// `[A-Z_][a-zA-Z0-9_]*`
fn is_tf_op_type(op_type: &str) -> bool {
    let mut chars = op_type.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `[a-z_][a-z0-9_]*(\[.*\])?`
fn is_jax_op_type(op_type: &str) -> bool {
    let (head, bracket) = match op_type.find('[') {
        Some(at) => (&op_type[..at], Some(&op_type[at..])),
        None => (op_type, None),
    };
    let mut chars = head.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && bracket.is_none_or(|b| b.len() >= 2 && b.ends_with(']'))
}

/// The scope of runtime internals that XProf's name rule reads as ops.
pub const RUNTIME_SCOPE: &str = "(runtime)";

/// The node of a host "op" that is the runtime's, not the model's:
/// XLA's PjRt client records `LocalDeviceState::ThenExecuteCallback` as a
/// TraceMe named `ThenExecuteCallback:<caller>` (e.g.
/// `GetEventForComputeStreamSyncPoint`), which [`parse_op`] (as XProf's
/// `ParseTfOpFullname`) takes for an op `ThenExecuteCallback` of type
/// `<caller>`. Its type stays XProf's (the op view and XProf's tables keep
/// it); in the scope tree it goes under `(runtime)/`, beside the model's
/// scopes rather than among them.
pub fn runtime_node(name: &str) -> Option<&'static str> {
    match name {
        "ThenExecuteCallback" => Some("(runtime)/ThenExecuteCallback"),
        _ => None,
    }
}

// Memcpys. Two rules read them from event names, side by side here:
// XProf's (`memcpy_type`, `is_memcpy`, `classify_gpu_event`) knows only
// TF's spellings (`MEMCPYHToD …`), and decides `rtfprof steps`, which must
// give XProf's numbers; rtfprof's own (`transfer`) also knows JAX's
// (`MemcpyH2D`), so that a JAX trace's copies show as transfers in the
// views and in steps' transfer time, where XProf files them as compute.

/// XProf's memcpy op types (`ParseTfOpFullname`): an event whose name
/// starts with `MEMCPYHToD` (any case) is a `MemcpyHToD` op, and so on.
fn memcpy_type(name: &str) -> Option<&'static str> {
    const MEMCPYS: [(&str, &str); 4] = [("MEMCPYHToD", "MemcpyHToD"), ("MEMCPYDToH", "MemcpyDToH"), ("MEMCPYDToD", "MemcpyDToD"), ("MEMCPYHToH", "MemcpyHToH")];
    let starts = |prefix: &str| name.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix));
    MEMCPYS.into_iter().find(|(prefix, _)| starts(prefix)).map(|(_, op_type)| op_type)
}

/// XProf's memcpy test (`IsMemcpyHToDOp(ParseTfOpFullname(name))` and its
/// kin): whether the event is an op of type `op_type` (`MemcpyHToD`, ...)
/// as XProf parses names. JAX's `MemcpyH2D` is none.
pub fn is_memcpy(name: &str, op_type: &str) -> bool {
    parse_op(name).is_some_and(|op| op.op_type == op_type)
}

/// What XProf's `ClassifyGpuEvent` makes of a GPU event for its step
/// breakdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuEventClass {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    Collectives,
    /// Compute in half precision (by its shapes, else its name), and not.
    Compute16,
    Compute32,
}

/// XProf's `ClassifyGpuEvent`: memcpys by [`is_memcpy`] (TF's spellings
/// only), `nccl…` collectives, the rest compute.
pub fn classify_gpu_event(name: &str, shapes: &str) -> GpuEventClass {
    if is_memcpy(name, "MemcpyHToD") {
        GpuEventClass::HostToDevice
    } else if is_memcpy(name, "MemcpyDToH") {
        GpuEventClass::DeviceToHost
    } else if is_memcpy(name, "MemcpyDToD") {
        GpuEventClass::DeviceToDevice
    } else if name.get(..4).is_some_and(|h| h.eq_ignore_ascii_case("nccl")) {
        GpuEventClass::Collectives
    } else {
        let half = if shapes.is_empty() { name.contains("half") || name.contains("fp16") } else { shapes.contains("half") };
        if half { GpuEventClass::Compute16 } else { GpuEventClass::Compute32 }
    }
}

/// The scope of memcpys that no op made (`jax.device_put`, `np.asarray`).
pub const TRANSFER_SCOPE: &str = "(transfer)";

/// rtfprof's memcpy rule: a memcpy's transfer node and type, from its
/// event name in JAX's spelling (`MemcpyH2D`) or TF's (`MEMCPYHtoD`), any
/// case; `None` for other events.
pub fn transfer(name: &str) -> Option<(&'static str, &'static str)> {
    const TRANSFERS: [(&str, &str, &str, &str); 5] = [
        ("memcpyh2d", "memcpyhtod", "(transfer)/host-to-device", "MemcpyHToD"),
        ("memcpyd2h", "memcpydtoh", "(transfer)/device-to-host", "MemcpyDToH"),
        ("memcpyd2d", "memcpydtod", "(transfer)/device-to-device", "MemcpyDToD"),
        ("memcpyp2p", "memcpyptop", "(transfer)/peer-to-peer", "MemcpyPToP"),
        ("memcpyh2h", "memcpyhtoh", "(transfer)/host-to-host", "MemcpyHToH"),
    ];
    let starts = |prefix: &str| name.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix));
    TRANSFERS.iter().find(|(short, long, ..)| starts(short) || starts(long)).map(|&(_, _, node, op_type)| (node, op_type))
}

/// Whether a GPU event is a memset (CUPTI's `Memset 0`; TF's `MEMSET`).
pub fn is_memset(name: &str) -> bool {
    name.get(..6).is_some_and(|head| head.eq_ignore_ascii_case("memset"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(s: &str) -> Option<(&str, &str)> {
        parse_op(s).map(|o| (o.name, o.op_type))
    }

    #[test]
    fn parses_like_xprof() {
        assert_eq!(parsed("gradient_tape/MatMul_1/MatMul:MatMul"), Some(("gradient_tape/MatMul_1/MatMul", "MatMul")));
        assert_eq!(parsed("dense/Relu:_FusedMatMul"), Some(("dense/Relu", "_FusedMatMul")));
        assert_eq!(parsed("Iterator::Root::Prefetch"), Some(("Iterator::Root::Prefetch", "Dataset")));
        assert_eq!(parsed("jit(f)/jit(main)/add_1:"), Some(("jit(f)/jit(main)/add_1", "add")));
        assert_eq!(parsed("mlp/add_1:"), Some(("mlp/add_1", "add")));
        assert_eq!(parsed("x/transpose:transpose[permutation=(1, 0)]"), Some(("x/transpose", "transpose")));
        assert_eq!(parsed("MEMCPYHToD"), Some(("MEMCPYHToD", "MemcpyHToD")));
        assert_eq!(parsed("memcpyDtoH"), Some(("memcpyDtoH", "MemcpyDToH")));
        // Not ops: an internal name, runtime TraceMes, eager wrappers, frames.
        assert_eq!(parsed("_send_range_0:_Send"), None);
        assert_eq!(parsed("EagerLocalExecute: AddV2"), None);
        assert_eq!(parsed("end: dot.2"), None);
        assert_eq!(parsed("$main.py:12 step"), None);
        assert_eq!(parsed("train"), None);
        assert_eq!(parsed("ExecutorState::Process"), None);
    }

    /// TF's memcpys are memcpys to XProf and to rtfprof; JAX's
    /// (`MemcpyH2D`) are transfers to rtfprof only: XProf's step rules,
    /// which `rtfprof steps` follows, count them as compute.
    #[test]
    fn memcpys_by_xprofs_rule_and_by_rtfprofs() {
        for name in ["MEMCPYHToD", "memcpyHtoD 1024 bytes"] {
            assert!(is_memcpy(name, "MemcpyHToD"), "{name}");
            assert_eq!(classify_gpu_event(name, ""), GpuEventClass::HostToDevice, "{name}");
            assert_eq!(transfer(name), Some(("(transfer)/host-to-device", "MemcpyHToD")), "{name}");
        }
        assert_eq!(transfer("MemcpyH2D"), Some(("(transfer)/host-to-device", "MemcpyHToD")));
        assert_eq!(parse_op("MemcpyH2D"), None);
        let callback = parse_op("ThenExecuteCallback:GetEventForComputeStreamSyncPoint").unwrap();
        assert_eq!(callback.op_type, "GetEventForComputeStreamSyncPoint");
        assert_eq!(runtime_node(callback.name), Some("(runtime)/ThenExecuteCallback"));
        assert!(runtime_node("jit(step)/dot_general").is_none());
        assert!(!is_memcpy("MemcpyH2D", "MemcpyHToD"));
        assert_eq!(classify_gpu_event("MemcpyH2D", ""), GpuEventClass::Compute32);
        assert_eq!(classify_gpu_event("MEMCPYDToH", ""), GpuEventClass::DeviceToHost);
        assert_eq!(classify_gpu_event("MemcpyD2H", ""), GpuEventClass::Compute32);
        assert_eq!(transfer("MemcpyD2H"), Some(("(transfer)/device-to-host", "MemcpyDToH")));
        assert_eq!(transfer("MemcpyP2P"), Some(("(transfer)/peer-to-peer", "MemcpyPToP")));
        // Not memcpys.
        assert_eq!(transfer("volta_sgemm_128x64_nn"), None);
        assert_eq!(classify_gpu_event("ncclAllReduceRingLLKernel", ""), GpuEventClass::Collectives);
        assert_eq!(classify_gpu_event("volta_fp16_sgemm", ""), GpuEventClass::Compute16);
        assert_eq!(classify_gpu_event("volta_fp16_sgemm", "(float[8])"), GpuEventClass::Compute32);
        assert!(["MemcpyH2D", "MEMCPYDToD", "memcpyh2h"].iter().all(|n| transfer(n).is_some_and(|(node, _)| node.starts_with(TRANSFER_SCOPE))));
    }

    #[test]
    fn derives_types_from_names() {
        assert_eq!(derive_op_type("jit(f)/jit(main)/add"), "add");
        assert_eq!(derive_op_type("a/dot_general_12"), "dot_general");
        assert_eq!(derive_op_type("MatMul"), "MatMul");
        assert_eq!(derive_op_type("a/b_c"), "b_c");
    }
}
