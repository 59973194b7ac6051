//! Functional control flow and function calls (`functional_ops.cc`): the
//! ops TF2 builds for `tf.while_loop`, `tf.cond` and `tf.function` calls.
//! TF's shape functions do not look into the loop bodies or branches: they
//! read the `output_shapes` attr the Python builder writes, else fall back.

use super::super::dims::Shape;
use super::super::{Ctx, Out, tensor};
use super::outs;
use crate::proto::tensorflow::attr_value::Value;

pub(crate) fn infer(c: &Ctx) -> Option<Vec<Out>> {
    match c.op {
        // `WhileShapeInferenceFn`: the attr, else each input's shape.
        "While" | "StatelessWhile" => match output_shapes(c) {
            Some(shapes) if !shapes.is_empty() => (shapes.len() == c.n()).then(|| shapes.into_iter().map(Out::of).collect()),
            _ => outs((0..c.n()).map(|i| c.shape(i).clone())),
        },
        "_While" => outs((0..c.n()).map(|i| c.shape(i).clone())),
        // `IfShapeInferenceFn`, `CaseShapeInferenceFn`: the attr, else
        // unknown. (`Tout` says how many outputs there are.)
        "If" | "StatelessIf" | "Case" | "StatelessCase" => {
            let count = c.types("Tout")?.len();
            match output_shapes(c) {
                Some(shapes) if !shapes.is_empty() => (shapes.len() == count).then(|| shapes.into_iter().map(Out::of).collect()),
                _ => outs(vec![None; count]),
            }
        }
        _ => None,
    }
}

/// The `output_shapes` attr (`list(shape)`), as shapes.
fn output_shapes(c: &Ctx) -> Option<Vec<Shape>> {
    match c.attrs.get("output_shapes")?.value.as_ref()? {
        Value::List(list) => Some(list.shape.iter().map(tensor::from_proto).collect()),
        _ => None,
    }
}
