//! v1 control flow and the TensorArray/Stack/TensorList ops of while loops
//! (`control_flow_ops.cc`, `data_flow_ops.cc`, `list_ops.cc`). What TF infers here is
//! little: an `Enter` hides its input's shape unless `is_constant`, and a
//! loop's `Merge` meets its unknown back edge.

use super::super::dims::Shape;
use super::super::{Ctx, Out};
use super::{one, outs, scalar, vector};

pub(crate) fn infer(c: &Ctx) -> Option<Vec<Out>> {
    let passed = |shape: Shape| Out { shape, handle: c.input(0).handle.clone(), ..Out::default() };
    match c.op {
        "Enter" | "RefEnter" => {
            let shape = if c.flag("is_constant") { c.shape(0).clone() } else { None };
            Some(vec![passed(shape)])
        }
        "Exit" | "RefExit" | "NextIteration" | "RefNextIteration" => Some(vec![passed(c.shape(0).clone())]),
        "Switch" | "RefSwitch" => Some(vec![passed(c.shape(0).clone()), passed(c.shape(0).clone())]),
        "Merge" | "RefMerge" => outs([merge(c), scalar()]),
        "LoopCond" => one(scalar()),
        "NoOp" | "ControlTrigger" | "Abort" => outs([]),
        "TensorArrayV3" | "TensorArrayGradV3" | "TensorArrayGradWithShape" => outs([vector(2), scalar()]),
        "TensorArrayWriteV3" | "TensorArrayScatterV3" | "TensorArraySplitV3" | "TensorArraySizeV3" => one(scalar()),
        // (TF reads the element shape from handle data, which a
        // TensorArray of unknown element shape lacks.)
        "TensorArrayReadV3" | "StackPopV2" | "TensorArrayGatherV3" => one(None),
        "TensorArrayConcatV3" => outs([None, vector(-1)]),
        "TensorArrayCloseV3" | "StackCloseV2" => outs([]),
        "StackV2" => one(vector(2)),
        "StackPushV2" => one(c.shape(1).clone()),
        // TensorLists (`list_ops.cc`), as functional while loops keep their
        // gradients' accumulators: a list is a scalar variant.
        "EmptyTensorList" | "TensorListReserve" | "TensorListFromTensor" | "TensorListPushBack" | "TensorListSetItem" | "TensorListLength" => one(scalar()),
        _ => None,
    }
}

/// TF's Merge: the first input's shape where every input agrees, dim by
/// dim; unknown if any rank is unknown or differs.
fn merge(c: &Ctx) -> Shape {
    let mut out = c.shape(0).clone()?;
    for i in 1..c.n() {
        let other = c.shape(i).as_ref()?;
        if other.len() != out.len() {
            return None;
        }
        for (o, &d) in out.iter_mut().zip(other) {
            if *o != d {
                *o = -1;
            }
        }
    }
    Some(out)
}
