//! V2 checkpoint reading (`rtfprof::inputs::checkpoint`) against the fixture
//! TensorFlow wrote (`tools/gen_checkpoint.py` → `testdata/ckpt/`), corrupted
//! and hand-made bad checkpoints, and tfprof's `tensor_value` text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use prost::Message;
use rtfprof::Error;
use rtfprof::inputs::checkpoint::{Checkpoint, MAX_DISPLAY_LEN, Tensor, TensorValues, format_tensor_value, format_tensor_value_bytes, mask_crc};
use rtfprof::proto::tensorflow::{BundleEntryProto, BundleHeaderProto, DataType, TensorShapeProto, VersionDef, tensor_shape_proto};
use serde_json::Value;

const FIXTURE: &str = "testdata/ckpt";

fn fixture_prefix() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE).join("model.ckpt")
}

fn expected() -> BTreeMap<String, Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE).join("expected.json");
    let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    json["tensors"].as_object().unwrap().clone().into_iter().collect()
}

/// The fixture copied to a temporary directory, to corrupt.
fn fixture_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for name in ["model.ckpt.index", "model.ckpt.data-00000-of-00001"] {
        std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE).join(name), dir.path().join(name)).unwrap();
    }
    let prefix = dir.path().join("model.ckpt");
    (dir, prefix)
}

/// The one-line message of an input error (and checks the error's kind).
fn input_message(err: Error) -> String {
    match err {
        Error::Input { kind, message, .. } => {
            assert_eq!(kind, "--checkpoint_path");
            assert!(!message.contains('\n'), "{message}");
            message
        }
        other => panic!("not an input error: {other:?}"),
    }
}

fn dtype_of(name: &str) -> DataType {
    match name {
        "float32" => DataType::DtFloat,
        "float64" => DataType::DtDouble,
        "float16" => DataType::DtHalf,
        "int32" => DataType::DtInt32,
        "int64" => DataType::DtInt64,
        "uint8" => DataType::DtUint8,
        "bool" => DataType::DtBool,
        "string" => DataType::DtString,
        other => panic!("dtype {other} not in this test"),
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|&c| c != b'=') {
        acc = (acc << 6) | ALPHABET.iter().position(|&a| a == c).unwrap() as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

fn hex_decode(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

/// A float as expected.json writes it: repr(), "nan", "-nan", "inf", "-inf".
fn parse_float(text: &str) -> f64 {
    match text {
        "nan" => f64::NAN,
        "-nan" => -f64::NAN,
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        _ => text.parse().unwrap(),
    }
}

/// Same value, bit for bit (so -0.0 differs from 0.0), any NaN matching a NaN
/// of the same sign.
fn same_float(a: f64, b: f64) -> bool {
    if a.is_nan() || b.is_nan() { a.is_nan() && b.is_nan() && a.is_sign_negative() == b.is_sign_negative() } else { a.to_bits() == b.to_bits() }
}

/// expected.json's values as this crate's widened values.
fn expected_values(dtype: DataType, spec: &Value) -> TensorValues {
    if let Some(b64) = spec.get("values_b64") {
        let raw = base64_decode(b64.as_str().unwrap());
        return match dtype {
            DataType::DtFloat => TensorValues::Float(raw.chunks_exact(4).map(|c| f64::from(f32::from_le_bytes(c.try_into().unwrap()))).collect()),
            other => panic!("no base64 values of {other:?} in the fixture"),
        };
    }
    let values = spec["values"].as_array().unwrap();
    match dtype {
        DataType::DtFloat | DataType::DtDouble | DataType::DtHalf => TensorValues::Float(values.iter().map(|v| parse_float(v.as_str().unwrap())).collect()),
        DataType::DtString => TensorValues::Str(values.iter().map(|v| hex_decode(v.as_str().unwrap())).collect()),
        _ => TensorValues::Int(values.iter().map(|v| v.as_i64().unwrap()).collect()),
    }
}

#[test]
fn every_tensor_matches_what_tensorflow_reads() {
    let ckpt = Checkpoint::open(&fixture_prefix()).unwrap();
    let expected = expected();
    assert_eq!(expected.len(), 16);
    for (name, spec) in &expected {
        let dtype = dtype_of(spec["dtype"].as_str().unwrap());
        let shape: Vec<i64> = spec["shape"].as_array().unwrap().iter().map(|d| d.as_i64().unwrap()).collect();
        if spec["sliced"].as_bool().unwrap() {
            let message = input_message(ckpt.tensor(name).unwrap_err());
            assert!(message.contains(&format!("tensor '{name}' is saved as 2 slices")), "{message}");
            continue;
        }
        let tensor = ckpt.tensor(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(tensor.dtype, dtype, "{name}");
        assert_eq!(tensor.shape, shape, "{name}");
        let want = expected_values(dtype, spec);
        match (&tensor.values, &want) {
            (TensorValues::Float(got), TensorValues::Float(want)) => {
                assert_eq!(got.len(), want.len(), "{name}");
                for (i, (g, w)) in got.iter().zip(want).enumerate() {
                    assert!(same_float(*g, *w), "{name}[{i}]: {g:?} != {w:?}");
                }
            }
            _ => assert_eq!(tensor.values, want, "{name}"),
        }
    }
}

#[test]
fn variable_shapes_are_tensorflows_variables() {
    let ckpt = Checkpoint::open(&fixture_prefix()).unwrap();
    let want: BTreeMap<String, Vec<i64>> =
        expected().into_iter().map(|(name, spec)| (name, spec["shape"].as_array().unwrap().iter().map(|d| d.as_i64().unwrap()).collect())).collect();
    assert_eq!(ckpt.variable_shapes(), want);
    // The partitioned variable is one variable; its two slice entries exist
    // in the index but are not variables.
    assert_eq!(ckpt.variable_shapes()["part/emb"], vec![6, 2]);
    assert_eq!(ckpt.entry("part/emb").unwrap().slices.len(), 2);
    assert_eq!(ckpt.variable_dtypes()["vocab"], DataType::DtString);
    assert_eq!(ckpt.header().num_shards, 1);
    assert!(ckpt.contains("bias") && !ckpt.contains("nope"));
    let message = input_message(ckpt.tensor("nope").unwrap_err());
    assert_eq!(message, "no tensor 'nope' in the checkpoint");
}

#[test]
fn fixture_tensor_values_as_tfprof_shows_them() {
    let ckpt = Checkpoint::open(&fixture_prefix()).unwrap();
    let show = |name: &str| format_tensor_value(&ckpt.tensor(name).unwrap());
    assert_eq!(show("ScalarW"), "[-0.32 ],\n");
    assert_eq!(show("bias"), "[-0.99 0.55 2.43 0.29 0.09 ],\n");
    assert_eq!(show("dense/kernel"), "[[-0.14 -0.25 -0.22 0.92 ],\n[1.18 -2.11 -0.98 0.30 ],\n[-0.52 0.32 -0.55 -2.47 ],\n],\n");
    assert_eq!(show("rnn/cell"), "[[[1.14 -0.06 1.34 ],\n[0.74 -0.03 -0.80 ],\n],\n[[-0.04 -0.37 0.99 ],\n[1.12 -1.90 0.82 ],\n],\n],\n");
    // Computed by C++ (`std::ostringstream << double`, `strtod`, `%.2f`),
    // which is what tfprof does with abseil's equivalent parse and format.
    // 2.0549999f and 2.055f both print "2.055" at 6 digits, which parses to
    // the double just above 2.055: "2.06". 1234567 prints "1.23457e+06".
    let special = "[2.06 2.06 2.06 -1.50 -0.00 -0.00 0.12 1234570.00 10000000000.00 \
                   340282000000000014192072600942972764160.00 0.00 nan -nan inf -inf 0.10 ],\n";
    assert_eq!(show("special"), special);
    assert_eq!(show("special64"), format!("{} 2.06 0.33 ],\n", special.strip_suffix(" ],\n").unwrap()));
    assert_eq!(show("counts"), "[[0 -1 7 ],\n[2147483647 -2147483648 42 ],\n],\n");
    assert_eq!(show("global_step"), "[9223372036854775807 -9223372036854775808 0 -5 ],\n");
    assert_eq!(format_tensor_value_bytes(&ckpt.tensor("vocab").unwrap()), b"['hello' '' 'caf\xc3\xa9' 'a b'c' '\x00\xff' ],\n".to_vec());
    assert_eq!(show("empty"), "[],\n");
    // Not shown by tfprof: only float, double, int32, int64 and string are.
    for name in ["flags", "half", "small_ints"] {
        assert_eq!(show(name), "", "{name}");
    }
    // 12000 values: cut at 10000 bytes.
    let big = show("embedding/big");
    assert_eq!(big.len(), MAX_DISPLAY_LEN + "],\n...omitted from display\n\n".len());
    assert!(big.ends_with("],\n...omitted from display\n\n"), "{}", &big[big.len() - 40..]);
    let conv = show("conv1/weights");
    assert!(conv.starts_with("[[[[") && conv.ends_with("],\n],\n],\n],\n") && conv.len() < MAX_DISPLAY_LEN);
    assert_eq!(conv.matches("],\n").count(), 1 + 3 + 3 * 3 + 3 * 3 * 8);
}

// ---------------------------------------------------------------------------
// Corrupted fixture.

#[test]
fn flipped_data_byte_is_a_checksum_error_naming_the_tensor() {
    let (_dir, prefix) = fixture_copy();
    let ckpt = Checkpoint::open(&prefix).unwrap();
    let data = PathBuf::from(format!("{}.data-00000-of-00001", prefix.display()));
    let offset = ckpt.entry("dense/kernel").unwrap().offset as usize;
    let mut bytes = std::fs::read(&data).unwrap();
    bytes[offset + 5] ^= 0x10;
    std::fs::write(&data, &bytes).unwrap();
    let err = ckpt.tensor("dense/kernel").unwrap_err();
    assert!(matches!(&err, Error::Input { path, .. } if *path == data), "{err:?}");
    let message = input_message(err);
    assert!(message.starts_with("tensor 'dense/kernel': checksum mismatch (stored 0x"), "{message}");
    // Other tensors are still read.
    ckpt.tensor("bias").unwrap();
    ckpt.tensor("embedding/big").unwrap();
}

#[test]
fn corrupted_string_tensor() {
    let (_dir, prefix) = fixture_copy();
    let ckpt = Checkpoint::open(&prefix).unwrap();
    let data = PathBuf::from(format!("{}.data-00000-of-00001", prefix.display()));
    let entry = ckpt.entry("vocab").unwrap();
    let (offset, size) = (entry.offset as usize, entry.size as usize);
    let original = std::fs::read(&data).unwrap();
    // A string byte (the last one) → the tensor's checksum.
    let mut bytes = original.clone();
    bytes[offset + size - 1] ^= 1;
    std::fs::write(&data, &bytes).unwrap();
    let message = input_message(ckpt.tensor("vocab").unwrap_err());
    assert!(message.starts_with("tensor 'vocab': checksum mismatch"), "{message}");
    // The first length (5, "hello") → the lengths' own checksum.
    let mut bytes = original.clone();
    bytes[offset] = 4;
    std::fs::write(&data, &bytes).unwrap();
    let message = input_message(ckpt.tensor("vocab").unwrap_err());
    assert!(message.contains("string lengths' checksum does not match"), "{message}");
    // A huge length → an error, no allocation.
    let mut bytes = original.clone();
    bytes[offset] = 0xff;
    std::fs::write(&data, &bytes).unwrap();
    input_message(ckpt.tensor("vocab").unwrap_err());
}

#[test]
fn flipped_index_byte_is_a_block_checksum_error() {
    let (_dir, prefix) = fixture_copy();
    let index = PathBuf::from(format!("{}.index", prefix.display()));
    let original = std::fs::read(&index).unwrap();
    let mut bytes = original.clone();
    bytes[20] ^= 0x01;
    std::fs::write(&index, &bytes).unwrap();
    let err = Checkpoint::open(&prefix).unwrap_err();
    assert!(matches!(&err, Error::Input { path, .. } if *path == index), "{err:?}");
    assert_eq!(input_message(err), "checkpoint index: block checksum mismatch at offset 0");
    // Any single flipped byte: an error (or, in the footer's padding, which
    // nothing reads, no effect), never a panic.
    let mut errors = 0;
    for at in 0..original.len() {
        let mut bytes = original.clone();
        bytes[at] ^= 0x80;
        std::fs::write(&index, &bytes).unwrap();
        match Checkpoint::open(&prefix) {
            Err(e) => {
                input_message(e);
                errors += 1;
            }
            Ok(ckpt) => assert_eq!(ckpt.variable_shapes().len(), 16, "byte {at}"),
        }
    }
    assert!(errors >= original.len() - 40, "{errors} of {}", original.len());
}

#[test]
fn truncated_index() {
    let (_dir, prefix) = fixture_copy();
    let index = PathBuf::from(format!("{}.index", prefix.display()));
    let original = std::fs::read(&index).unwrap();
    std::fs::write(&index, b"").unwrap();
    assert_eq!(input_message(Checkpoint::open(&prefix).unwrap_err()), "is empty");
    for len in [1, 10, 47, 48, 100, original.len() / 2, original.len() - 48, original.len() - 1] {
        std::fs::write(&index, &original[..len]).unwrap();
        let message = input_message(Checkpoint::open(&prefix).unwrap_err());
        assert!(message.starts_with("checkpoint index: "), "{len}: {message}");
    }
    std::fs::write(&index, &original[..10]).unwrap();
    assert_eq!(input_message(Checkpoint::open(&prefix).unwrap_err()), "checkpoint index: file too short for an SSTable (10 bytes; the footer alone is 48)");
    // Not an SSTable at all.
    std::fs::write(&index, vec![b'x'; 500]).unwrap();
    let message = input_message(Checkpoint::open(&prefix).unwrap_err());
    assert!(message.starts_with("checkpoint index: not an SSTable (bad magic number"), "{message}");
}

#[test]
fn missing_or_truncated_data_shard() {
    let (_dir, prefix) = fixture_copy();
    let data = PathBuf::from(format!("{}.data-00000-of-00001", prefix.display()));
    let original = std::fs::read(&data).unwrap();
    let ckpt = Checkpoint::open(&prefix).unwrap();
    std::fs::write(&data, &original[..100]).unwrap();
    let message = input_message(ckpt.tensor("embedding/big").unwrap_err());
    assert!(message.contains("past the end of the data shard (100 bytes)"), "{message}");
    std::fs::remove_file(&data).unwrap();
    // The index alone opens (shards are read lazily); tensors do not.
    let ckpt = Checkpoint::open(&prefix).unwrap();
    assert_eq!(ckpt.variable_shapes().len(), 16);
    let err = ckpt.tensor("bias").unwrap_err();
    assert!(matches!(&err, Error::Input { path, .. } if *path == data), "{err:?}");
    let message = input_message(err);
    assert!(message.starts_with("cannot open data shard for tensor 'bias': "), "{message}");
}

#[test]
fn wrong_prefix() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let message = input_message(Checkpoint::open(&dir.join("nothing.ckpt")).unwrap_err());
    assert!(message.starts_with("cannot read checkpoint index: "), "{message}");
    // The index file itself instead of the prefix.
    let message = input_message(Checkpoint::open(&dir.join("model.ckpt.index")).unwrap_err());
    assert!(message.ends_with("(give the checkpoint prefix, without .index or .data-…)"), "{message}");
}

// ---------------------------------------------------------------------------
// Hand-made checkpoints with absurd entries.

#[path = "support/sstable.rs"]
mod sstable;
use sstable::write_table;

/// A table of sorted records with TensorFlow's restart interval, in one
/// data block.
fn sstable(records: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let records: Vec<(&[u8], Vec<u8>)> = records.iter().map(|(k, v)| (k.as_slice(), v.clone())).collect();
    write_table(&records, 16, usize::MAX)
}

fn header(num_shards: i32, endianness: i32) -> BundleHeaderProto {
    BundleHeaderProto { num_shards, endianness, version: Some(VersionDef { producer: 1, min_consumer: 0, bad_consumers: vec![] }) }
}

fn shape(dims: &[i64]) -> Option<TensorShapeProto> {
    Some(TensorShapeProto { dim: dims.iter().map(|&size| tensor_shape_proto::Dim { size, name: String::new() }).collect(), unknown_rank: false })
}

fn entry(dtype: DataType, dims: &[i64], offset: i64, data: &[u8]) -> BundleEntryProto {
    BundleEntryProto {
        dtype: dtype as i32,
        shape: shape(dims),
        shard_id: 0,
        offset,
        size: data.len() as i64,
        crc32c: mask_crc(crc32c::crc32c(data)),
        slices: vec![],
    }
}

/// Writes `dir/ckpt.index` (header first, then the entries, which must be
/// sorted) and `dir/ckpt.data-00000-of-00001`; returns the prefix.
fn write_checkpoint(dir: &Path, header: &BundleHeaderProto, entries: &[(&str, Vec<u8>)], data: &[u8]) -> PathBuf {
    let mut records = vec![(Vec::new(), header.encode_to_vec())];
    records.extend(entries.iter().map(|(k, v)| (k.as_bytes().to_vec(), v.clone())));
    let prefix = dir.join("ckpt");
    std::fs::write(dir.join("ckpt.index"), sstable(&records)).unwrap();
    std::fs::write(dir.join("ckpt.data-00000-of-00001"), data).unwrap();
    prefix
}

#[test]
fn hand_made_checkpoint_reads() {
    let dir = tempfile::tempdir().unwrap();
    let floats: Vec<u8> = [1.5f32, -2.25].iter().flat_map(|f| f.to_le_bytes()).collect();
    let e = entry(DataType::DtFloat, &[2], 0, &floats);
    let prefix = write_checkpoint(dir.path(), &header(1, 0), &[("w", e.encode_to_vec())], &floats);
    let ckpt = Checkpoint::open(&prefix).unwrap();
    let t = ckpt.tensor("w").unwrap();
    assert_eq!(t.values, TensorValues::Float(vec![1.5, -2.25]));
    assert_eq!(format_tensor_value(&t), "[1.50 -2.25 ],\n");
}

#[test]
fn absurd_entries_are_errors_without_huge_allocations() {
    let dir = tempfile::tempdir().unwrap();
    let data = vec![0u8; 64];
    let check_open = |header: &BundleHeaderProto, entries: &[(&str, Vec<u8>)], want: &str| {
        let prefix = write_checkpoint(dir.path(), header, entries, &data);
        let message = input_message(Checkpoint::open(&prefix).unwrap_err());
        assert!(message.contains(want), "{message} (wanted {want})");
    };
    let check_tensor = |entries: &[(&str, Vec<u8>)], want: &str| {
        let prefix = write_checkpoint(dir.path(), &header(1, 0), entries, &data);
        let ckpt = Checkpoint::open(&prefix).unwrap();
        let message = input_message(ckpt.tensor(entries[0].0).unwrap_err());
        assert!(message.contains(want), "{message} (wanted {want})");
    };
    let good = entry(DataType::DtFloat, &[2], 0, &data[..8]);

    // Shapes: more than 2^63 elements, negative, unknown rank, too many dims.
    let mut e = good.clone();
    e.shape = shape(&[1 << 40, 1 << 40]);
    check_open(&header(1, 0), &[("x", e.encode_to_vec())], "more than 2^63 elements");
    e.shape = shape(&[-1, 2]);
    check_open(&header(1, 0), &[("x", e.encode_to_vec())], "negative dimension");
    e.shape = Some(TensorShapeProto { dim: vec![], unknown_rank: true });
    check_open(&header(1, 0), &[("x", e.encode_to_vec())], "unknown rank");
    e.shape = shape(&[1; 300]);
    check_open(&header(1, 0), &[("x", e.encode_to_vec())], "300 dimensions");
    // Header: big-endian, no shards, too new; missing; not a proto.
    check_open(&header(1, 1), &[("x", good.encode_to_vec())], "big-endian checkpoints are not supported");
    check_open(&header(0, 0), &[("x", good.encode_to_vec())], "0 data shards");
    let mut h = header(1, 0);
    h.version = Some(VersionDef { producer: 1, min_consumer: 2, bad_consumers: vec![] });
    check_open(&h, &[("x", good.encode_to_vec())], "requires a reader of version at least 2");
    check_open(&header(1, 0), &[("x", vec![0xff, 0xff])], "entry 'x' is not a BundleEntryProto");
    let prefix = dir.path().join("nohdr");
    std::fs::write(dir.path().join("nohdr.index"), sstable(&[(b"x".to_vec(), good.encode_to_vec())])).unwrap();
    let message = input_message(Checkpoint::open(&prefix).unwrap_err());
    assert_eq!(message, "checkpoint index: no bundle header (the entry with the empty key)");

    // Sizes and offsets: a consistent but huge tensor, past the end, wrong
    // size, negative offset, bad shard, bad dtype.
    let mut e = good.clone();
    e.shape = shape(&[1 << 60]);
    e.size = 1 << 62;
    check_tensor(&[("x", e.encode_to_vec())], "past the end of the data shard (64 bytes)");
    let mut e = good.clone();
    e.offset = i64::MAX - 2;
    check_tensor(&[("x", e.encode_to_vec())], "past the end of the data shard");
    let mut e = good.clone();
    e.size = 12;
    check_tensor(&[("x", e.encode_to_vec())], "invalid size in bundle entry: stored 12 bytes, expected 8");
    let mut e = good.clone();
    e.offset = -1;
    check_tensor(&[("x", e.encode_to_vec())], "negative offset -1");
    let mut e = good.clone();
    e.shard_id = 3;
    check_tensor(&[("x", e.encode_to_vec())], "shard 3 out of range (the checkpoint has 1)");
    let mut e = good.clone();
    e.dtype = 999;
    check_tensor(&[("x", e.encode_to_vec())], "invalid dtype 999");
    // Strings: 2^40 elements in 64 bytes; lengths past the size.
    let mut e = entry(DataType::DtString, &[1 << 40], 0, &data);
    check_tensor(&[("s", e.encode_to_vec())], "invalid size in bundle entry: 64 bytes for 1099511627776 strings");
    e.shape = shape(&[2]);
    let mut strings = vec![0xff, 0xff, 0xff, 0x7f, 1];
    strings.resize(64, 0);
    let prefix = write_checkpoint(dir.path(), &header(1, 0), &[("s", e.encode_to_vec())], &strings);
    input_message(Checkpoint::open(&prefix).unwrap().tensor("s").unwrap_err());
}

// ---------------------------------------------------------------------------
// format_tensor_value.

fn floats(shape: &[i64], values: &[f64]) -> Tensor {
    Tensor { dtype: DataType::DtFloat, shape: shape.to_vec(), values: TensorValues::Float(values.to_vec()) }
}

fn ints(shape: &[i64], values: &[i64]) -> Tensor {
    Tensor { dtype: DataType::DtInt64, shape: shape.to_vec(), values: TensorValues::Int(values.to_vec()) }
}

#[test]
fn format_layout() {
    assert_eq!(format_tensor_value(&floats(&[], &[3.0])), "[3.00 ],\n");
    assert_eq!(format_tensor_value(&floats(&[3], &[1.8, 2.1, 2.06])), "[1.80 2.10 2.06 ],\n");
    assert_eq!(format_tensor_value(&floats(&[2, 2], &[1.0, 2.0, 3.0, 4.0])), "[[1.00 2.00 ],\n[3.00 4.00 ],\n],\n");
    assert_eq!(format_tensor_value(&ints(&[2, 1, 2], &[1, 2, 3, 4])), "[[[1 2 ],\n],\n[[3 4 ],\n],\n],\n");
    assert_eq!(format_tensor_value(&ints(&[], &[-7])), "[-7 ],\n");
    assert_eq!(format_tensor_value(&ints(&[0], &[])), "[],\n");
    assert_eq!(format_tensor_value(&ints(&[2, 0], &[])), "[[],\n[],\n],\n");
    let strings = Tensor { dtype: DataType::DtString, shape: vec![2], values: TensorValues::Str(vec![b"a b".to_vec(), b"".to_vec()]) };
    assert_eq!(format_tensor_value(&strings), "['a b' '' ],\n");
    let int32 = Tensor { dtype: DataType::DtInt32, shape: vec![2], values: TensorValues::Int(vec![i64::MIN, 5]) };
    assert_eq!(format_tensor_value(&int32), "[-9223372036854775808 5 ],\n");
    // tfprof shows nothing for other dtypes, nor for values not matching the
    // shape.
    let flags = Tensor { dtype: DataType::DtBool, shape: vec![1], values: TensorValues::Int(vec![1]) };
    assert_eq!(format_tensor_value(&flags), "");
    let half = Tensor { dtype: DataType::DtHalf, shape: vec![1], values: TensorValues::Float(vec![1.0]) };
    assert_eq!(format_tensor_value(&half), "");
    assert_eq!(format_tensor_value(&floats(&[3], &[1.0])), "");
}

#[test]
fn format_rounds_to_6_significant_digits_then_2_decimals() {
    // tfprof writes each double with `ostream <<` (6 significant digits, as
    // C's %g), parses that back, and prints the result with %.2f (exact value,
    // ties to even, like glibc's printf). Each expectation below is what a
    // C++ program doing exactly that printed:
    let cases: &[(f64, &str)] = &[
        // 2.0549999 alone would print 2.05 (it is below 2.055), but at 6 digits
        // it is "2.055", and the double nearest 2.055 is 2.05500000000000016:
        // 2.06. Likewise 2.055 itself and 2.0549999999999997.
        (2.0549999, "2.06"),
        (2.055, "2.06"),
        (2.0549999999999997, "2.06"),
        // Fewer than 7 significant digits: unchanged by the first step, and
        // below 2.055: 2.05.
        (2.05499, "2.05"),
        // 1.0050001 alone would print 1.01; "1.005" parses to
        // 1.00499999999999989: 1.00.
        (1.0050001, "1.00"),
        (1.005, "1.00"),
        (2.675, "2.67"),
        // Exact binary ties round to even.
        (0.125, "0.12"),
        (0.375, "0.38"),
        (-0.125, "-0.12"),
        // Negative numbers and zeros keep their sign, as printf does.
        (-1.5, "-1.50"),
        (-0.004, "-0.00"),
        (-0.0, "-0.00"),
        (0.0, "0.00"),
        // 6 significant digits, then all the integer digits.
        (1234567.0, "1234570.00"),
        (-999999.5, "-1000000.00"),
        (1e10, "10000000000.00"),
        (3.4028234663852886e38, "340282000000000014192072600942972764160.00"),
        (1e-30, "0.00"),
        (0.005, "0.01"),
        (f64::NAN, "nan"),
        (-f64::NAN, "-nan"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
    ];
    for &(v, want) in cases {
        assert_eq!(format_tensor_value(&floats(&[], &[v])), format!("[{want} ],\n"), "{v:?}");
    }
    // Floats are widened to double first: 0.1f is 0.100000001490116…, "0.1".
    assert_eq!(format_tensor_value(&floats(&[], &[f64::from(0.1f32)])), "[0.10 ],\n");
}

/// tfprof's `BuildOutput` as written in C++, without shortcuts: every value
/// is appended, and each level's end cuts the text to 10000 bytes.
fn reference_format(shape: &[i64], values: &[String]) -> String {
    fn level(shape: &[i64], depth: usize, start: &mut usize, values: &[String], out: &mut String) {
        out.push('[');
        if shape.is_empty() {
            out.push_str(&values[0]);
        } else {
            for _ in 0..shape[depth] {
                if depth == shape.len() - 1 {
                    out.push_str(&values[*start]);
                    *start += 1;
                } else {
                    level(shape, depth + 1, start, values, out);
                }
            }
        }
        out.truncate(MAX_DISPLAY_LEN);
        out.push_str("],\n");
    }
    let mut out = String::new();
    level(shape, 0, &mut 0, values, &mut out);
    if out.len() >= MAX_DISPLAY_LEN {
        out.push_str("...omitted from display\n\n");
    }
    out
}

#[test]
fn format_cuts_at_10000_characters() {
    // 3000 × "1.00 ": cut inside the 2000th value.
    let t = floats(&[3000], &[1.0; 3000]);
    let mut want = "[".to_string() + &"1.00 ".repeat(3000);
    want.truncate(10000);
    want.push_str("],\n...omitted from display\n\n");
    assert_eq!(format_tensor_value(&t), want);
    // The text reaching exactly 10000 characters gets the note too; one
    // character less does not.
    let exact = format_tensor_value(&ints(&[4998], &[1; 4998]));
    assert_eq!(exact.len(), 10000 + "...omitted from display\n\n".len());
    assert!(exact.ends_with("1 ],\n...omitted from display\n\n"));
    let under = format_tensor_value(&ints(&[4997], &[1; 4997]));
    assert_eq!(under.len(), 9998);
    assert!(under.ends_with("1 ],\n"));
    // Multi-dimensional cuts match the C++ algorithm, closing brackets
    // included.
    for shape in [vec![100, 100], vec![7, 300, 3], vec![2, 2, 2000], vec![2500, 0], vec![4000, 1], vec![1, 1, 1]] {
        let n: i64 = shape.iter().product();
        let values: Vec<i64> = (0..n).map(|i| i * 7919 % 100_003 - 50_000).collect();
        let texts: Vec<String> = values.iter().map(|v| format!("{v} ")).collect();
        assert_eq!(format_tensor_value(&ints(&shape, &values)), reference_format(&shape, &texts), "{shape:?}");
    }
    // Strings are cut by bytes, even inside a multi-byte character: "[" and
    // 1666 × "'aé' " (6 bytes each) make 9997 bytes; then "'", "a" and the
    // first byte of "é" reach 10000.
    let s = Tensor { dtype: DataType::DtString, shape: vec![2000], values: TensorValues::Str(vec!["aé".as_bytes().to_vec(); 2000]) };
    let mut want = b"[".to_vec();
    want.extend(std::iter::repeat_n("'aé' ".as_bytes(), 2000).flatten());
    want.truncate(10000);
    assert_eq!(&want[9997..], b"'a\xc3");
    want.extend_from_slice(b"],\n...omitted from display\n\n");
    assert_eq!(format_tensor_value_bytes(&s), want);
    assert!(format_tensor_value(&s).ends_with("'a\u{fffd}],\n...omitted from display\n\n"));
}
