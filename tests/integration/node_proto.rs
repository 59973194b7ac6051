//! What `tf.profiler.profile` returns — tfprof's `GraphNodeProto` or
//! `MultiGraphNodeProto` — for views of the fixtures with option dicts made
//! by TensorFlow's `ProfileOptionBuilder`: `testdata/python/results.json.gz`,
//! written by `tools/gen_python_fixtures.py` from TensorFlow's own engine,
//! against `rtfprof::api::profile` (`outputs::node_proto`), every field of
//! every node. The Python module's nodes are checked against the same file
//! by `python/tests`.

use std::io::Read;

use prost::Message;
use prost_reflect::{DynamicMessage, ReflectMessage, Value as Field};
use rtfprof::inputs::InputPaths;
use rtfprof::load::Sources;
use rtfprof::outputs::node_proto::ViewProto;
use rtfprof::show::Options;
use rtfprof::show::options::DictValue;
use rtfprof::views::View;
use serde_json::{Value, json};

use crate::common;

fn cases() -> Vec<Value> {
    cases_in("python/results.json.gz")
}

/// The cases of a generator's gzipped JSON under testdata/.
pub(crate) fn cases_in(path: &str) -> Vec<Value> {
    let file = std::fs::File::open(common::testdata().join(path)).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(file).read_to_string(&mut text).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

pub(crate) fn dict_value(value: &Value) -> DictValue {
    match value {
        Value::Bool(b) => DictValue::Bool(*b),
        Value::Number(n) => DictValue::Int(n.as_i64().unwrap()),
        Value::String(s) => DictValue::Str(s.clone()),
        Value::Array(items) => DictValue::List(items.iter().map(|i| i.as_str().unwrap().to_owned()).collect()),
        other => panic!("not an option value: {other}"),
    }
}

pub(crate) fn inputs(case: &Value) -> Sources {
    let path = |key: &str| case["inputs"][key].as_str().map(|p| common::testdata().join(p));
    let run_meta_paths =
        case["inputs"]["run_meta_path"].as_array().map(|list| list.iter().map(|p| common::testdata().join(p.as_str().unwrap())).collect()).unwrap_or_default();
    let paths = InputPaths {
        graph_path: path("graph_path"),
        run_meta_paths,
        op_log_path: path("op_log_path"),
        profile_path: path("profile_path"),
        ..InputPaths::default()
    };
    Sources { paths, ..Sources::default() }
}

/// A message as the generator writes it: every field, a shape as its
/// dimensions (null for an unknown rank), maps keyed by strings.
fn plain(message: &DynamicMessage) -> Value {
    let mut out = serde_json::Map::new();
    for field in message.descriptor().fields() {
        let value = message.get_field(&field);
        let converted = match (field.name(), value.as_ref()) {
            ("tensor_value", _) if !message.has_field(&field) => Value::Null,
            ("input_shapes", Field::Map(map)) => {
                let mut entries: Vec<(i32, Value)> = map.iter().map(|(k, v)| (k.as_i32().unwrap(), shape(v.as_message().unwrap()))).collect();
                entries.sort_by_key(|(k, _)| *k);
                Value::Object(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }
            ("shapes", Field::List(list)) => list.iter().map(|s| shape(s.as_message().unwrap())).collect(),
            (_, other) => scalar(other),
        };
        out.insert(field.name().to_owned(), converted);
    }
    Value::Object(out)
}

fn shape(message: &DynamicMessage) -> Value {
    if message.get_field_by_name("unknown_rank").unwrap().as_bool().unwrap() {
        return Value::Null;
    }
    let dims = message.get_field_by_name("dim").unwrap();
    let size = |d: &Field| d.as_message().unwrap().get_field_by_name("size").unwrap().as_i64().unwrap();
    Value::Array(dims.as_list().unwrap().iter().map(|d| json!(size(d))).collect())
}

fn scalar(value: &Field) -> Value {
    match value {
        Field::I64(v) => json!(v),
        Field::I32(v) | Field::EnumNumber(v) => json!(v),
        Field::F64(v) => json!(v),
        Field::String(s) => json!(s),
        Field::Bool(b) => json!(b),
        Field::List(items) => items.iter().map(scalar).collect(),
        Field::Message(m) => plain(m),
        other => panic!("unexpected field value {other:?}"),
    }
}

pub(crate) fn as_plain(proto: &ViewProto) -> Value {
    let pool = rtfprof::proto::descriptor_pool();
    let (name, bytes) = match proto {
        ViewProto::Graph(m) => ("tensorflow.tfprof.GraphNodeProto", m.encode_to_vec()),
        ViewProto::Multi(m) => ("tensorflow.tfprof.MultiGraphNodeProto", m.encode_to_vec()),
    };
    let message = DynamicMessage::decode(pool.get_message_by_name(name).unwrap(), bytes.as_slice()).unwrap();
    plain(&message)
}

/// The path of the first difference of two JSON values, e.g.
/// `children[2].graph_nodes[0].exec_micros: 3 != 4` (common::first_difference
/// compares texts line by line).
pub(crate) fn first_value_difference(expected: &Value, actual: &Value, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let name = e.get("name").map_or(String::new(), |n| format!(" (in {n})"));
                let av = a.get(k).unwrap_or(&Value::Null);
                if let Some(d) = first_value_difference(ev, av, &format!("{path}.{k}")) {
                    // Only the innermost node's name.
                    return Some(if k == "name" || d.contains(" (in ") { d } else { format!("{d}{name}") });
                }
            }
            a.keys().find(|k| !e.contains_key(*k)).map(|k| format!("{path}.{k}: not in TensorFlow's message"))
        }
        (Value::Array(e), Value::Array(a)) => {
            if let Some(d) = e.iter().zip(a).enumerate().find_map(|(i, (ev, av))| first_value_difference(ev, av, &format!("{path}[{i}]"))) {
                return Some(d);
            }
            (e.len() != a.len()).then(|| format!("{path}: {} items != {}", e.len(), a.len()))
        }
        _ => (expected != actual).then(|| format!("{path}: expected {expected}, got {actual}")),
    }
}

#[test]
fn results_equal_tensorflows() {
    let cases = cases();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let mut failures = Vec::new();
    let mut nodes = 0;
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let view = View::parse(case["cmd"].as_str().unwrap()).unwrap();
        let entries = case["options"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), dict_value(v)));
        let opts = Options::from_tf_dict(Options::default(), entries).unwrap();
        let profiled = rtfprof::api::profile(view, &inputs(case), &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        let actual = as_plain(&profiled.proto);
        nodes += actual.to_string().matches("\"name\":").count();
        if let Some(d) = first_value_difference(&case["result"], &actual, "root") {
            failures.push(format!("{name}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
    assert!(nodes > 5000, "only {nodes} nodes compared");
}
