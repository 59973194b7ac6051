//! `--graph_path`: a GraphDef's nodes, decoded on all cores into lean
//! records.
//!
//! tfprof reads a node's name, op, inputs and two attributes (`shape` for
//! parameter counts, `_output_shapes` for input shapes); FLOPs estimates and
//! `advise` read a few more. The generated `NodeDef` builds a B-tree of
//! decoded attributes per node, `Const` tensors included, so the nodes are
//! split out of the GraphDef and decoded in parallel into records that keep
//! the attributes as slices of the file until they are known to be needed.

use std::collections::BTreeMap;

use bytes::Bytes;
use prost::Message;
use rayon::prelude::*;

use super::wire::split_repeated_field_shared;
use crate::proto::tensorflow::attr_value::Value;
use crate::proto::tensorflow::{AttrValue, FunctionDefLibrary, NodeDef, TensorProto};
pub use crate::stats::records::{FunctionRecord, GraphRecord, NodeRecord};

/// Decodes a binary GraphDef. The other fields (versions, debug info, and
/// without attributes the function library) are checked for
/// well-formedness only.
pub fn decode_binary(bytes: Bytes, with_attrs: bool) -> Result<GraphRecord, prost::DecodeError> {
    let (entries, rest) = split_repeated_field_shared(&bytes)?;
    let functions = if with_attrs {
        functions(OtherFieldsWithLibrary::decode(rest.as_slice())?.library, with_attrs)
    } else {
        OtherFields::decode(rest.as_slice())?;
        Vec::new()
    };
    let nodes = entries.into_par_iter().map(|node| decode_node(node, with_attrs)).collect::<Result<Vec<_>, _>>()?;
    Ok(GraphRecord { nodes, functions })
}

/// The functions of a library, as records (without attributes: none).
pub fn functions(library: Option<FunctionDefLibrary>, with_attrs: bool) -> Vec<FunctionRecord> {
    let Some(library) = library.filter(|_| with_attrs) else { return Vec::new() };
    library
        .function
        .into_iter()
        .filter_map(|f| {
            let signature = f.signature?;
            let mut ret = f.ret;
            Some(FunctionRecord {
                name: signature.name,
                args: signature.input_arg.into_iter().map(|a| a.name).collect(),
                rets: signature
                    .output_arg
                    .into_iter()
                    .map(|a| {
                        let source = ret.remove(&a.name).unwrap_or_default();
                        (a.name, source)
                    })
                    .collect(),
                nodes: f.node_def.into_iter().map(|n| record_from_node_def(n, with_attrs)).collect(),
            })
        })
        .collect()
}

/// The record of a node already decoded (text-format graphs are parsed
/// into `NodeDef`s); the same as [`decode_binary`] gives for its bytes.
pub fn record_from_node_def(def: NodeDef, with_attrs: bool) -> NodeRecord {
    let mut attrs = def.attr;
    if let Some(value) = attrs.remove("value")
        && with_attrs
    {
        attrs.insert("value".into(), if value.encoded_len() <= MAX_CONST_BYTES { value } else { lean_value(&value) });
    }
    let output_shapes = match attrs.remove("_output_shapes").and_then(|a| a.value) {
        Some(Value::List(list)) => Some(list.shape),
        _ => None,
    };
    let shape = match attrs.get("shape").and_then(|a| a.value.clone()) {
        Some(Value::Shape(shape)) => Some(shape),
        _ => None,
    };
    NodeRecord { name: def.name, op: def.op, inputs: def.input, shape, output_shapes, attrs: if with_attrs { attrs } else { BTreeMap::new() } }
}

/// A `Const` value up to this size (encoded) is kept whole: shape
/// inference reads small integer tensors (shapes, axes); of a larger one
/// only its dtype and shape are kept, so weights frozen into a graph cost
/// nothing.
const MAX_CONST_BYTES: usize = 1 << 12;

/// A `value` attribute with only its tensor's dtype and shape.
fn lean_value(value: &AttrValue) -> AttrValue {
    let tensor = match &value.value {
        Some(Value::Tensor(t)) => TensorProto { dtype: t.dtype, tensor_shape: t.tensor_shape.clone(), ..Default::default() },
        _ => return AttrValue::default(),
    };
    AttrValue { value: Some(Value::Tensor(Box::new(tensor))) }
}

/// An `AttrValue` holding a tensor, decoded without its values.
#[derive(Clone, PartialEq, Message)]
struct LeanTensorAttr {
    #[prost(message, optional, tag = "8")]
    tensor: Option<LeanTensor>,
}

#[derive(Clone, PartialEq, Message)]
struct LeanTensor {
    #[prost(int32, tag = "1")]
    dtype: i32,
    #[prost(message, optional, tag = "2")]
    tensor_shape: Option<crate::proto::tensorflow::TensorShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct LeanAttrEntry {
    #[prost(message, optional, tag = "2")]
    value: Option<LeanTensorAttr>,
}

/// A GraphDef's fields other than its nodes, none of which rtfprof reads.
#[derive(Clone, PartialEq, Message)]
struct OtherFields {}

/// A GraphDef's fields other than its nodes, with its function library.
#[derive(Clone, PartialEq, Message)]
struct OtherFieldsWithLibrary {
    #[prost(message, optional, tag = "2")]
    library: Option<FunctionDefLibrary>,
}

/// `tensorflow.NodeDef` with its attribute map entries undecoded.
#[derive(Clone, PartialEq, Message)]
struct NodeDefWire {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    op: String,
    #[prost(string, repeated, tag = "3")]
    input: Vec<String>,
    #[prost(bytes = "bytes", repeated, tag = "5")]
    attr: Vec<Bytes>,
}

/// The key of an attribute map entry, its value skipped.
#[derive(Clone, PartialEq, Message)]
struct AttrKey {
    #[prost(string, tag = "1")]
    key: String,
}

#[derive(Clone, PartialEq, Message)]
struct AttrEntry {
    #[prost(string, tag = "1")]
    key: String,
    #[prost(message, optional, tag = "2")]
    value: Option<AttrValue>,
}

fn decode_node(bytes: Bytes, with_attrs: bool) -> Result<NodeRecord, prost::DecodeError> {
    let wire = NodeDefWire::decode(bytes)?;
    let mut record = NodeRecord { name: wire.name, op: wire.op, inputs: wire.input, ..Default::default() };
    // Map semantics: the last entry of a key is its value.
    let (mut shape, mut output_shapes) = (None, None);
    for entry in wire.attr {
        let key = AttrKey::decode(entry.clone())?.key;
        let wanted = key == "shape" || key == "_output_shapes" || with_attrs;
        if !wanted {
            continue;
        }
        // (An entry is its value and at most 16 bytes of key and lengths.)
        if key == "value" && entry.len() > MAX_CONST_BYTES + 16 {
            let tensor = LeanAttrEntry::decode(entry)?.value.and_then(|v| v.tensor);
            let lean = tensor.map(|t| TensorProto { dtype: t.dtype, tensor_shape: t.tensor_shape, ..Default::default() });
            record.attrs.insert(key, AttrValue { value: lean.map(|t| Value::Tensor(Box::new(t))) });
            continue;
        }
        let value = AttrEntry::decode(entry)?.value.unwrap_or_default();
        match key.as_str() {
            "_output_shapes" => output_shapes = Some(value),
            "shape" => {
                if with_attrs {
                    record.attrs.insert(key, value.clone());
                }
                shape = Some(value);
            }
            "value" if value.encoded_len() > MAX_CONST_BYTES => {
                record.attrs.insert(key, lean_value(&value));
            }
            _ => {
                record.attrs.insert(key, value);
            }
        }
    }
    record.shape = match shape.and_then(|a| a.value) {
        Some(Value::Shape(shape)) => Some(shape),
        _ => None,
    };
    record.output_shapes = match output_shapes.and_then(|a| a.value) {
        Some(Value::List(list)) => Some(list.shape),
        _ => None,
    };
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tensorflow::GraphDef;

    fn graph_pb(model: &str) -> Bytes {
        let path = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(format!("testdata/{model}/graph.pb"));
        Bytes::from(std::fs::read(path).unwrap())
    }

    #[test]
    fn records_equal_the_generated_decode() {
        for model in ["mlp", "cnn", "while"] {
            let bytes = graph_pb(model);
            let full = GraphDef::decode(bytes.clone()).unwrap();
            for with_attrs in [false, true] {
                let lean = decode_binary(bytes.clone(), with_attrs).unwrap();
                let want: Vec<NodeRecord> = full.node.iter().map(|def| record_from_node_def(def.clone(), with_attrs)).collect();
                assert_eq!(lean.nodes, want, "{model}, attrs {with_attrs}");
            }
            assert!(full.node.iter().any(|n| n.attr.contains_key("_output_shapes")), "{model} has output shapes");
        }
    }

    #[test]
    fn a_repeated_attribute_keeps_its_last_value() {
        use crate::proto::tensorflow::tensor_shape_proto::Dim;
        let shape = |size: i64| AttrValue {
            value: Some(Value::Shape(crate::proto::tensorflow::TensorShapeProto { dim: vec![Dim { size, name: String::new() }], unknown_rank: false })),
        };
        // One node given as two pieces (protobuf merges them), so that its
        // attribute map holds "shape" twice on the wire.
        let mut node = Vec::new();
        NodeDef { name: "v".into(), op: "VariableV2".into(), attr: [("shape".to_owned(), shape(3))].into(), ..Default::default() }.encode(&mut node).unwrap();
        NodeDef { attr: [("shape".to_owned(), shape(7))].into(), ..Default::default() }.encode(&mut node).unwrap();
        let mut graph = vec![0x0a];
        prost::encoding::encode_varint(node.len() as u64, &mut graph);
        graph.extend(node);
        let full = GraphDef::decode(graph.as_slice()).unwrap();
        let lean = decode_binary(Bytes::from(graph), true).unwrap();
        assert_eq!(lean.nodes[0].shape.as_ref().unwrap().dim[0].size, 7);
        assert_eq!(lean.nodes, vec![record_from_node_def(full.node[0].clone(), true)]);
    }
}
