//! Variables (ref and resource), their updates, initializers and random
//! ops (`state_ops.cc`, `resource_variable_ops.cc`, `training_ops.cc`).

use super::super::dims::{self};
use super::super::{Ctx, Out};
use super::{one, outs, scalar, vector};

pub(crate) fn infer(c: &Ctx) -> Option<Vec<Out>> {
    let op = c.op;
    if op.starts_with("ResourceApply") || op.starts_with("ResourceSparseApply") {
        return outs([]);
    }
    if op.starts_with("Apply") || op.starts_with("SparseApply") {
        // The updated variable (a ref to input 0).
        return one(c.shape(0).clone());
    }
    match op {
        "VariableV2" | "Variable" | "TemporaryVariable" => one(c.attr_shape("shape").flatten()),
        "VarHandleOp" => Some(vec![Out { shape: scalar(), handle: Some(c.attr_shape("shape").flatten()), ..Out::default() }]),
        "ReadVariableOp" => one(c.input(0).handle.clone().flatten()),
        "ResourceGather" => {
            let params = c.input(0).handle.clone().flatten();
            let batch = c.int("batch_dims").unwrap_or(0);
            one(params.and_then(|p| {
                let i = c.shape(1).as_ref()?;
                let batch = usize::try_from(batch).ok()?;
                (p.len() > batch && i.len() >= batch).then(|| i.iter().chain(&p[batch + 1..]).copied().collect())
            }))
        }
        "ResourceGatherNd" => one(super::array::gather_nd(&c.input(0).handle.clone().flatten(), c.shape(1))),
        "VariableShape" => one(vector(c.input(0).handle.clone().flatten().map_or(-1, |d| d.len() as i64))),
        "AssignVariableOp" | "AssignAddVariableOp" | "AssignSubVariableOp" | "DestroyResourceOp" => outs([]),
        "VarIsInitializedOp" | "IsVariableInitialized" => one(scalar()),
        "Assign" => one(if c.attrs.get("validate_shape").is_none() || c.flag("validate_shape") {
            dims::merge_or_first(c.shape(0), c.shape(1))
        } else {
            c.shape(1).clone()
        }),
        "AssignAdd" | "AssignSub" => one(c.shape(0).clone()),
        "RandomUniform"
        | "RandomStandardNormal"
        | "TruncatedNormal"
        | "RandomUniformInt"
        | "StatelessRandomUniform"
        | "StatelessRandomNormal"
        | "StatelessTruncatedNormal" => one(c.shape_input(0)),
        _ => None,
    }
}
