//! TensorFlow V2 checkpoints (tensor bundles), read natively: tfprof's
//! `--checkpoint_path`, and the `tensor_value` text tfprof shows for them.
//!
//! A checkpoint prefix `P` names two kinds of files:
//!
//! - `P.index`: a LevelDB-format SSTable (TensorFlow's `lib/io/table*`,
//!   `format.cc`, `block.cc`). The entry with the empty key is a
//!   [`BundleHeaderProto`]; every other key is a tensor name whose value is a
//!   [`BundleEntryProto`] (dtype, shape, shard, offset, size, checksum).
//! - `P.data-SSSSS-of-NNNNN`: the tensors' bytes. A tensor is `size` bytes at
//!   `offset` in shard `shard_id`, checksummed with a masked CRC32C.
//!
//! [`Checkpoint::open`] reads and verifies the whole index (every block's
//! checksum, the footer's magic, the header); data shards are read lazily, one
//! tensor at a time, by [`Checkpoint::tensor`]. Bad input of any kind is an
//! [`Error::Input`] with one line naming the file, never a panic, and no
//! allocation is larger than the file it reads.
//!
//! [`format_tensor_value`] renders a tensor as tfprof's `tensor_value` column
//! does (`tfprof_tensor.h`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use prost::Message;

use crate::error::{Error, Result};
use crate::proto::tensorflow::bundle_header_proto::Endianness;
use crate::proto::tensorflow::{BundleEntryProto, BundleHeaderProto, DataType, TensorShapeProto};
pub use crate::stats::records::{Tensor, TensorValues};

/// The input kind every checkpoint error names.
const KIND: &str = "--checkpoint_path";

/// A V2 checkpoint: its verified index, ready to read tensors from.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    prefix: PathBuf,
    index_path: PathBuf,
    header: BundleHeaderProto,
    /// Every non-header entry by key (slice entries included), with its
    /// validated shape.
    entries: BTreeMap<Vec<u8>, (BundleEntryProto, Vec<i64>)>,
}

impl crate::stats::records::Variables for Checkpoint {
    fn contains(&self, name: &str) -> bool {
        Checkpoint::contains(self, name)
    }

    fn tensor(&self, name: &str) -> Result<Tensor> {
        Checkpoint::tensor(self, name)
    }
}

impl Checkpoint {
    /// Opens the checkpoint with this prefix (`model.ckpt` for
    /// `model.ckpt.index` + `model.ckpt.data-00000-of-00001`): reads and
    /// verifies the index. Data shards are only opened by [`Checkpoint::tensor`].
    pub fn open(prefix: &Path) -> Result<Checkpoint> {
        let index_path = with_suffix(prefix, ".index");
        let bytes = std::fs::read(&index_path).map_err(|e| {
            let hint = if prefix.to_string_lossy().ends_with(".index") || prefix.to_string_lossy().contains(".data-") {
                " (give the checkpoint prefix, without .index or .data-…)"
            } else {
                ""
            };
            Error::input(KIND, &index_path, format!("cannot read checkpoint index: {e}{hint}"))
        })?;
        if bytes.is_empty() {
            return Err(Error::input(KIND, &index_path, "is empty"));
        }
        let index_err = |message: String| Error::input(KIND, &index_path, format!("checkpoint index: {message}"));
        let table = read_table(&bytes).map_err(index_err)?;

        let mut records = table.into_iter();
        let header = match records.next() {
            Some((key, value)) if key.is_empty() => {
                BundleHeaderProto::decode(value.as_slice()).map_err(|e| index_err(format!("the header entry is not a BundleHeaderProto ({e})")))?
            }
            _ => return Err(index_err("no bundle header (the entry with the empty key)".into())),
        };
        check_header(&header).map_err(index_err)?;

        let mut entries = BTreeMap::new();
        for (key, value) in records {
            let name = String::from_utf8_lossy(&key).into_owned();
            let entry = BundleEntryProto::decode(value.as_slice())
                .map_err(|e| index_err(format!("entry '{}' is not a BundleEntryProto ({e})", name.escape_debug())))?;
            let shape = entry_shape(entry.shape.as_ref()).map_err(|m| index_err(format!("entry '{}': {m}", name.escape_debug())))?;
            entries.insert(key, (entry, shape));
        }
        Ok(Checkpoint { prefix: prefix.to_owned(), index_path, header, entries })
    }

    /// The prefix this checkpoint was opened with.
    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// The bundle header (number of shards, endianness, format version).
    pub fn header(&self) -> &BundleHeaderProto {
        &self.header
    }

    /// Every variable (tensor name) with its dimensions: TensorFlow's
    /// `CheckpointReader::GetVariableToShapeMap`, the names tfprof tags with
    /// the op type `_checkpoint_variables`. A partitioned variable is listed
    /// once, under its full name and full shape; the entries of its slices
    /// (keys starting with a NUL byte, as `EncodeTensorNameSlice` writes
    /// them) are not.
    pub fn variable_shapes(&self) -> BTreeMap<String, Vec<i64>> {
        self.variables().map(|(name, (_, shape))| (name, shape.clone())).collect()
    }

    /// Every variable with its dtype (`GetVariableToDataTypeMap`); unknown
    /// dtype numbers are `DtInvalid`.
    pub fn variable_dtypes(&self) -> BTreeMap<String, DataType> {
        self.variables().map(|(name, (entry, _))| (name, DataType::try_from(entry.dtype).unwrap_or(DataType::DtInvalid))).collect()
    }

    /// Whether the checkpoint has an entry for this tensor name.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name.as_bytes())
    }

    /// The index entry of a tensor (dtype, shape, shard, offset, size,
    /// checksum, slices), as stored.
    pub fn entry(&self, name: &str) -> Option<&BundleEntryProto> {
        self.entries.get(name.as_bytes()).map(|(entry, _)| entry)
    }

    fn variables(&self) -> impl Iterator<Item = (String, &(BundleEntryProto, Vec<i64>))> {
        self.entries.iter().filter(|(key, _)| key.first() != Some(&0)).map(|(key, value)| (String::from_utf8_lossy(key).into_owned(), value))
    }

    /// Reads one tensor from its data shard and verifies its checksum.
    pub fn tensor(&self, name: &str) -> Result<Tensor> {
        let shown = name.escape_debug();
        let Some((entry, shape)) = self.entries.get(name.as_bytes()) else {
            return Err(Error::input(KIND, &self.prefix, format!("no tensor '{shown}' in the checkpoint")));
        };
        let entry_err = |m: String| Error::input(KIND, &self.index_path, format!("tensor '{shown}': {m}"));
        if !entry.slices.is_empty() {
            return Err(Error::input(
                KIND,
                &self.prefix,
                format!("tensor '{shown}' is saved as {} slices (a partitioned variable); reading sliced tensors is not supported", entry.slices.len()),
            ));
        }
        let dtype = match DataType::try_from(entry.dtype) {
            Ok(DataType::DtInvalid) | Err(_) => return Err(entry_err(format!("invalid dtype {}", entry.dtype))),
            Ok(dtype) => dtype,
        };
        // Validated by `open`: the product fits in an i64.
        let num_elements = shape.iter().product::<i64>() as u64;
        let num_shards = self.header.num_shards;
        if entry.shard_id < 0 || entry.shard_id >= num_shards {
            return Err(entry_err(format!("shard {} out of range (the checkpoint has {num_shards})", entry.shard_id)));
        }
        if entry.offset < 0 || entry.size < 0 {
            return Err(entry_err(format!("negative offset {} or size {}", entry.offset, entry.size)));
        }
        let (offset, size) = (entry.offset as u64, entry.size as u64);
        let elem_size = element_size(dtype);
        if let Some(elem_size) = elem_size {
            let expected = num_elements.checked_mul(elem_size);
            if expected != Some(size) {
                return Err(entry_err(format!(
                    "invalid size in bundle entry: stored {size} bytes, expected {} for {num_elements} elements of {}",
                    expected.map_or_else(|| "more than 2^64".to_string(), |e| e.to_string()),
                    dtype.as_str_name()
                )));
            }
        } else if dtype == DataType::DtString && size > 0 && size < num_elements {
            // Each element's length takes at least one byte.
            return Err(entry_err(format!("invalid size in bundle entry: {size} bytes for {num_elements} strings")));
        }
        let unsupported = elem_size.is_none() && dtype != DataType::DtString;
        let data_path = with_suffix(&self.prefix, &format!(".data-{:05}-of-{:05}", entry.shard_id, num_shards));
        let data_err = |m: String| Error::input(KIND, &data_path, format!("tensor '{shown}': {m}"));
        if unsupported {
            // Variant and resource tensors: TensorFlow's checksum covers
            // decoded lengths, not the raw bytes; their values are not shown.
            return Ok(Tensor { dtype, shape: shape.clone(), values: TensorValues::Unsupported });
        }

        let mut file = File::open(&data_path).map_err(|e| Error::input(KIND, &data_path, format!("cannot open data shard for tensor '{shown}': {e}")))?;
        let file_len = file.metadata().map_err(|e| data_err(e.to_string()))?.len();
        match offset.checked_add(size) {
            Some(end) if end <= file_len => {}
            _ => {
                return Err(data_err(format!("bytes [{offset}, {offset}+{size}) lie past the end of the data shard ({file_len} bytes)")));
            }
        }
        // Bounded by the file's real length just above.
        let mut bytes = vec![0u8; size as usize];
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.read_exact(&mut bytes))
            .map_err(|e| data_err(format!("cannot read {size} bytes at offset {offset}: {e}")))?;

        let stored = unmask_crc(entry.crc32c);
        let (values, actual) = if dtype == DataType::DtString {
            let (strings, crc) = decode_strings(&bytes, num_elements).map_err(data_err)?;
            (TensorValues::Str(strings), crc)
        } else {
            (decode_fixed(dtype, &bytes), crc32c::crc32c(&bytes))
        };
        if stored != actual {
            return Err(data_err(format!(
                "checksum mismatch (stored {stored:#010x}, computed {actual:#010x} over {size} bytes at offset {offset}): the data shard is corrupt"
            )));
        }
        Ok(Tensor { dtype, shape: shape.clone(), values })
    }
}

/// `prefix` with `suffix` appended to its last component (no separator).
fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut s = OsString::from(prefix.as_os_str());
    s.push(suffix);
    PathBuf::from(s)
}

/// TensorFlow's `CheckVersions` for bundles (version 1, min producer 0), and
/// the byte order: only little-endian bundles are read.
fn check_header(header: &BundleHeaderProto) -> Result<(), String> {
    const CONSUMER: i32 = 1; // kTensorBundleVersion
    const MIN_PRODUCER: i32 = 0; // kTensorBundleMinProducer
    match Endianness::try_from(header.endianness) {
        Ok(Endianness::Little) => {}
        Ok(Endianness::Big) => return Err("big-endian checkpoints are not supported".into()),
        Err(_) => return Err(format!("unknown endianness {} in the header", header.endianness)),
    }
    if header.num_shards < 1 {
        return Err(format!("the header says {} data shards", header.num_shards));
    }
    if let Some(v) = &header.version {
        if v.producer < MIN_PRODUCER {
            return Err(format!("checkpoint producer version {} is below the minimum {MIN_PRODUCER}", v.producer));
        }
        if v.min_consumer > CONSUMER {
            return Err(format!("checkpoint requires a reader of version at least {}; this reader is version {CONSUMER}", v.min_consumer));
        }
        if v.bad_consumers.contains(&CONSUMER) {
            return Err(format!("checkpoint disallows readers of version {CONSUMER}"));
        }
    }
    Ok(())
}

/// Maximum number of dimensions of a TensorFlow tensor (`TensorShape`).
const MAX_DIMS: usize = 254;

/// A valid, fully known tensor shape (`TensorShape::IsValid`): at most 254
/// dimensions, none negative, and an element count that fits in an int64.
fn entry_shape(shape: Option<&TensorShapeProto>) -> Result<Vec<i64>, String> {
    let Some(shape) = shape else { return Ok(Vec::new()) };
    if shape.unknown_rank {
        return Err("shape of unknown rank".into());
    }
    if shape.dim.len() > MAX_DIMS {
        return Err(format!("shape has {} dimensions (at most {MAX_DIMS})", shape.dim.len()));
    }
    let dims: Vec<i64> = shape.dim.iter().map(|d| d.size).collect();
    let mut count: i64 = 1;
    for &d in &dims {
        if d < 0 {
            return Err(format!("invalid shape {dims:?} (negative dimension)"));
        }
        count = count.checked_mul(d).ok_or_else(|| format!("invalid shape {dims:?} (more than 2^63 elements)"))?;
    }
    Ok(dims)
}

/// Bytes per element of the dtypes TensorFlow stores with a plain memcpy
/// (`DataTypeCanUseMemcpy`), whose checksum is a CRC32C of the raw bytes.
fn element_size(dtype: DataType) -> Option<u64> {
    use DataType::*;
    Some(match dtype {
        DtBool | DtInt8 | DtUint8 | DtQint8 | DtQuint8 => 1,
        DtFloat8E5m2 | DtFloat8E4m3fn | DtFloat8E4m3fnuz | DtFloat8E4m3b11fnuz | DtFloat8E5m2fnuz => 1,
        DtInt16 | DtUint16 | DtQint16 | DtQuint16 | DtHalf | DtBfloat16 => 2,
        DtFloat | DtInt32 | DtUint32 | DtQint32 => 4,
        DtDouble | DtInt64 | DtUint64 | DtComplex64 => 8,
        DtComplex128 => 16,
        _ => return None,
    })
}

/// Decodes little-endian fixed-size values (`bytes.len()` is a multiple of the
/// element size, checked by the caller).
fn decode_fixed(dtype: DataType, bytes: &[u8]) -> TensorValues {
    use DataType::*;
    fn chunks<const N: usize>(bytes: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
        bytes.chunks_exact(N).map(|c| c.try_into().expect("exact chunk"))
    }
    match dtype {
        DtFloat => TensorValues::Float(chunks::<4>(bytes).map(|b| f32_to_f64(f32::from_le_bytes(b))).collect()),
        DtDouble => TensorValues::Float(chunks::<8>(bytes).map(f64::from_le_bytes).collect()),
        DtHalf => TensorValues::Float(chunks::<2>(bytes).map(|b| half_to_f64(u16::from_le_bytes(b))).collect()),
        DtBfloat16 => TensorValues::Float(chunks::<2>(bytes).map(|b| f32_to_f64(f32::from_bits(u32::from(u16::from_le_bytes(b)) << 16))).collect()),
        DtInt32 => TensorValues::Int(chunks::<4>(bytes).map(|b| i64::from(i32::from_le_bytes(b))).collect()),
        DtInt64 => TensorValues::Int(chunks::<8>(bytes).map(i64::from_le_bytes).collect()),
        DtInt16 => TensorValues::Int(chunks::<2>(bytes).map(|b| i64::from(i16::from_le_bytes(b))).collect()),
        DtUint16 => TensorValues::Int(chunks::<2>(bytes).map(|b| i64::from(u16::from_le_bytes(b))).collect()),
        DtUint32 => TensorValues::Int(chunks::<4>(bytes).map(|b| i64::from(u32::from_le_bytes(b))).collect()),
        DtInt8 => TensorValues::Int(bytes.iter().map(|&b| i64::from(b as i8)).collect()),
        DtUint8 => TensorValues::Int(bytes.iter().map(|&b| i64::from(b)).collect()),
        // C++ bool is one byte, 0 or 1.
        DtBool => TensorValues::Int(bytes.iter().map(|&b| i64::from(b != 0)).collect()),
        _ => TensorValues::Unsupported,
    }
}

/// `static_cast<double>(float)`, keeping a NaN's sign as C++ does.
fn f32_to_f64(x: f32) -> f64 {
    if x.is_nan() {
        let sign = u64::from(x.to_bits() >> 31) << 63;
        f64::from_bits(sign | 0x7ff8_0000_0000_0000)
    } else {
        f64::from(x)
    }
}

/// IEEE half precision to double (exact).
fn half_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x3ff);
    match exp {
        0 => sign * mant * 2f64.powi(-24),
        31 if mant == 0.0 => sign * f64::INFINITY,
        31 => f64::from_bits(if sign < 0.0 { 0xfff8_0000_0000_0000 } else { 0x7ff8_0000_0000_0000 }),
        _ => sign * (1.0 + mant / 1024.0) * 2f64.powi(exp - 15),
    }
}

/// A DT_STRING tensor's bytes (`tensor_bundle.cc`'s `ReadStringTensor`): the
/// varint64 length of every element, a masked CRC32C of those lengths (each
/// as a little-endian u32, or u64 if it does not fit), then the elements'
/// bytes. Returns the strings and the CRC32C TensorFlow compares with the
/// entry's: over the lengths (as u32/u64), the 4 checksum bytes and the data.
fn decode_strings(bytes: &[u8], num_elements: u64) -> Result<(Vec<Vec<u8>>, u32), String> {
    if bytes.is_empty() {
        // TensorFlow reads nothing: every element is empty.
        let n = usize::try_from(num_elements).map_err(|_| "too many elements".to_string())?;
        if n > 0 {
            return Err(format!("0 bytes for {n} strings"));
        }
        return Ok((Vec::new(), 0));
    }
    // The caller checked `num_elements <= bytes.len()`.
    let n = num_elements as usize;
    let mut pos = 0;
    let mut crc = 0u32;
    let mut lengths = Vec::with_capacity(n);
    for i in 0..n {
        let len = read_varint64(bytes, &mut pos).ok_or_else(|| format!("string length #{i} is truncated or malformed"))?;
        crc = match u32::try_from(len) {
            Ok(len32) => crc32c::crc32c_append(crc, &len32.to_le_bytes()),
            Err(_) => crc32c::crc32c_append(crc, &len.to_le_bytes()),
        };
        lengths.push(len);
    }
    let Some(raw_checksum) = bytes.get(pos..pos + 4) else {
        return Err("string lengths run past the tensor's size".into());
    };
    let raw_checksum: [u8; 4] = raw_checksum.try_into().expect("4 bytes");
    let stored = unmask_crc(u32::from_le_bytes(raw_checksum));
    if stored != crc {
        return Err(format!("the string lengths' checksum does not match (stored {stored:#010x}, computed {crc:#010x})"));
    }
    crc = crc32c::crc32c_append(crc, &raw_checksum);
    pos += 4;
    let mut strings = Vec::with_capacity(n);
    for (i, len) in lengths.into_iter().enumerate() {
        let end = usize::try_from(len).ok().and_then(|l| pos.checked_add(l)).filter(|&e| e <= bytes.len());
        let Some(end) = end else {
            return Err(format!("string #{i} ({len} bytes) runs past the tensor's size"));
        };
        let s = &bytes[pos..end];
        crc = crc32c::crc32c_append(crc, s);
        strings.push(s.to_vec());
        pos = end;
    }
    Ok((strings, crc))
}

// ---------------------------------------------------------------------------
// LevelDB-format SSTable (TensorFlow's lib/io/format.cc, block.cc, table.cc).

/// `kTableMagicNumber`.
const TABLE_MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// Footer: two BlockHandles padded to 2 * 20 bytes, then the 8-byte magic.
const FOOTER_LEN: usize = 48;
/// Each block is followed by its compression type (1 byte) and masked CRC32C.
const BLOCK_TRAILER_LEN: usize = 5;

/// CRC32C masking as in LevelDB/TensorFlow (`crc32c::Mask`).
pub fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Inverse of [`mask_crc`].
pub fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(0xa282_ead8).rotate_left(15)
}

/// A table's (key, value) records.
type Records = Vec<(Vec<u8>, Vec<u8>)>;

/// Every (key, value) of the table, in order, after verifying the footer,
/// every block's checksum and that keys strictly increase.
fn read_table(file: &[u8]) -> Result<Records, String> {
    if file.len() < FOOTER_LEN {
        return Err(format!("file too short for an SSTable ({} bytes; the footer alone is {FOOTER_LEN})", file.len()));
    }
    let footer_at = file.len() - FOOTER_LEN;
    let footer = &file[footer_at..];
    let magic = u64::from_le_bytes(footer[40..48].try_into().expect("8 bytes"));
    if magic != TABLE_MAGIC {
        return Err(format!("not an SSTable (bad magic number {magic:#018x})"));
    }
    let mut pos = 0;
    let meta_handle = read_handle(&footer[..40], &mut pos).ok_or("bad metaindex block handle in the footer")?;
    let index_handle = read_handle(&footer[..40], &mut pos).ok_or("bad index block handle in the footer")?;
    let data = &file[..footer_at];
    // TensorFlow never reads the metaindex block; its checksum is verified all
    // the same.
    read_block(data, meta_handle)?;
    let index = parse_block(read_block(data, index_handle)?, index_handle.0)?;
    let mut records: Records = Vec::new();
    for (_, handle_bytes) in index {
        let mut pos = 0;
        let handle = read_handle(&handle_bytes, &mut pos).ok_or_else(|| format!("bad data block handle in the index block at offset {}", index_handle.0))?;
        for (key, value) in parse_block(read_block(data, handle)?, handle.0)? {
            if records.last().is_some_and(|(last, _)| key <= *last) {
                return Err(format!("keys out of order in the block at offset {}", handle.0));
            }
            records.push((key, value));
        }
    }
    Ok(records)
}

/// A BlockHandle: (offset, size) as two varint64s.
fn read_handle(bytes: &[u8], pos: &mut usize) -> Option<(u64, u64)> {
    Some((read_varint64(bytes, pos)?, read_varint64(bytes, pos)?))
}

/// A block's contents after checking its bounds, type and checksum.
fn read_block(data: &[u8], (offset, size): (u64, u64)) -> Result<&[u8], String> {
    let end = offset.checked_add(size).and_then(|e| e.checked_add(BLOCK_TRAILER_LEN as u64));
    let (start, end) = match end {
        Some(end) if end <= data.len() as u64 => (offset as usize, end as usize),
        _ => {
            return Err(format!("block at offset {offset} of {size} bytes lies past the end of the table ({} bytes before the footer)", data.len()));
        }
    };
    let block = &data[start..end];
    let (contents, trailer) = block.split_at(block.len() - BLOCK_TRAILER_LEN);
    let stored = unmask_crc(u32::from_le_bytes(trailer[1..5].try_into().expect("4 bytes")));
    let actual = crc32c::crc32c(&block[..block.len() - 4]);
    if stored != actual {
        return Err(format!("block checksum mismatch at offset {offset}"));
    }
    match trailer[0] {
        0 => Ok(contents),
        1 => Err(format!("snappy-compressed block at offset {offset} (TensorFlow bundles are uncompressed; not supported)")),
        t => Err(format!("bad block type {t} at offset {offset}")),
    }
}

/// The entries of one block: prefix-compressed keys (shared, non-shared and
/// value lengths as varint32s), then the restart array and its length.
fn parse_block(block: &[u8], offset: u64) -> Result<Records, String> {
    let corrupt = |what: &str| format!("corrupt block at offset {offset} ({what})");
    if block.len() < 4 {
        return Err(corrupt("shorter than its restart count"));
    }
    let num_restarts = u32::from_le_bytes(block[block.len() - 4..].try_into().expect("4 bytes")) as usize;
    let max_restarts = (block.len() - 4) / 4;
    if num_restarts > max_restarts {
        return Err(corrupt("restart count larger than the block"));
    }
    if num_restarts == 0 {
        // TensorFlow's Block::NewIterator: an empty iterator.
        return Ok(Vec::new());
    }
    let limit = block.len() - (1 + num_restarts) * 4;
    let entries = &block[..limit];
    let mut out = Vec::new();
    let mut key: Vec<u8> = Vec::new();
    let mut pos = 0;
    while pos < limit {
        let bad_entry = || corrupt(&format!("bad entry at block offset {pos}"));
        let mut p = pos;
        let shared = read_varint32(entries, &mut p).ok_or_else(bad_entry)? as usize;
        let non_shared = read_varint32(entries, &mut p).ok_or_else(bad_entry)? as usize;
        let value_len = read_varint32(entries, &mut p).ok_or_else(bad_entry)? as usize;
        if shared > key.len() || non_shared.saturating_add(value_len) > limit - p {
            return Err(bad_entry());
        }
        key.truncate(shared);
        key.extend_from_slice(&entries[p..p + non_shared]);
        p += non_shared;
        out.push((key.clone(), entries[p..p + value_len].to_vec()));
        pos = p + value_len;
    }
    Ok(out)
}

/// A LevelDB varint (`GetVarint64`): at most 10 bytes, bits past 64 dropped.
fn read_varint64(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    read_varint(bytes, pos, 10)
}

/// A LevelDB varint32 (`GetVarint32`): at most 5 bytes, bits past 32 dropped.
fn read_varint32(bytes: &[u8], pos: &mut usize) -> Option<u32> {
    read_varint(bytes, pos, 5).map(|v| v as u32)
}

fn read_varint(bytes: &[u8], pos: &mut usize, max_bytes: usize) -> Option<u64> {
    let mut result = 0u64;
    for shift in (0..7 * max_bytes).step_by(7) {
        let byte = *bytes.get(*pos)?;
        *pos += 1;
        result |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(result);
        }
    }
    None
}

// ---------------------------------------------------------------------------
// tfprof's tensor_value display (tfprof_tensor.h, TFProfTensor).

/// tfprof's limit on the displayed text (`kTFProfTenosrMaxDisplayLen`).
pub const MAX_DISPLAY_LEN: usize = 10000;

/// The text tfprof's `tensor_value` column shows for this tensor (as
/// [`format_tensor_value_bytes`], with invalid UTF-8 replaced by U+FFFD).
pub fn format_tensor_value(t: &Tensor) -> String {
    String::from_utf8_lossy(&format_tensor_value_bytes(t)).into_owned()
}

/// The bytes tfprof's `TFProfTensor::Display` produces for this tensor:
///
/// - only DT_FLOAT and DT_DOUBLE (as doubles), DT_INT32 and DT_INT64 (as
///   int64) and DT_STRING are shown; any other dtype gives empty text (tfprof
///   prints "Not Supported type" to stderr);
/// - each value is first written with C++ `ostream <<` (6 significant digits
///   for doubles, like `%g`) and parsed back, then printed `%.2f ` (doubles),
///   `%d ` (integers) or `'<s>' ` (strings); NaN and infinities print as C
///   does (`nan`, `-nan`, `inf`, `-inf`) and negative zero as `-0.00`;
/// - a scalar is `[<v> ],\n`; otherwise each dimension level writes `[`, its
///   sub-levels (or, innermost, its values) and `],\n`;
/// - at the end of every level, before its `],\n`, the text is cut to
///   10000 bytes if longer; if the final text is at least 10000 bytes,
///   `...omitted from display\n\n` follows.
///
/// A tensor whose values do not match its shape gives empty text.
pub fn format_tensor_value_bytes(t: &Tensor) -> Vec<u8> {
    let values = match (t.dtype, &t.values) {
        (DataType::DtFloat | DataType::DtDouble, TensorValues::Float(v)) => Values::Float(v),
        (DataType::DtInt32 | DataType::DtInt64, TensorValues::Int(v)) => Values::Int(v),
        (DataType::DtString, TensorValues::Str(v)) => Values::Str(v),
        _ => return Vec::new(),
    };
    let count = t.shape.iter().try_fold(1usize, |acc, &d| usize::try_from(d).ok().and_then(|d| acc.checked_mul(d)));
    if count != Some(values.len()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    if t.shape.is_empty() {
        out.push(b'[');
        values.write(0, &mut out);
        close_level(&mut out);
    } else {
        build_level(&t.shape, 0, 0, &values, &mut out);
    }
    if out.len() >= MAX_DISPLAY_LEN {
        out.extend_from_slice(b"...omitted from display\n\n");
    }
    out
}

enum Values<'a> {
    Float(&'a [f64]),
    Int(&'a [i64]),
    Str(&'a [Vec<u8>]),
}

impl Values<'_> {
    fn len(&self) -> usize {
        match self {
            Values::Float(v) => v.len(),
            Values::Int(v) => v.len(),
            Values::Str(v) => v.len(),
        }
    }

    /// One value as tfprof appends it, with its trailing space.
    fn write(&self, i: usize, out: &mut Vec<u8>) {
        match self {
            Values::Float(v) => {
                out.extend_from_slice(format_f2(round_to_6_significant(v[i])).as_bytes());
                out.push(b' ');
            }
            Values::Int(v) => {
                let mut s = String::new();
                let _ = write!(s, "{} ", v[i]);
                out.extend_from_slice(s.as_bytes());
            }
            Values::Str(v) => {
                out.push(b'\'');
                out.extend_from_slice(&v[i]);
                out.extend_from_slice(b"' ");
            }
        }
    }
}

/// tfprof's `BuildOutput` for dimension `depth`, whose first value is
/// `values[start]`. Once the text is at least [`MAX_DISPLAY_LEN`] bytes long,
/// nothing more this level would write can survive its closing cut (a cut only
/// ever removes bytes past the limit), so the rest of the level is skipped:
/// the result is the same, and huge tensors format in bounded time.
fn build_level(shape: &[i64], depth: usize, start: usize, values: &Values<'_>, out: &mut Vec<u8>) {
    out.push(b'[');
    let dim = shape[depth] as usize;
    if depth == shape.len() - 1 {
        for i in 0..dim {
            if out.len() >= MAX_DISPLAY_LEN {
                break;
            }
            values.write(start + i, out);
        }
    } else {
        // Elements under one index of this dimension; the caller checked that
        // the product of all dimensions fits a usize.
        let stride: usize = shape[depth + 1..].iter().map(|&d| d as usize).product();
        for i in 0..dim {
            if out.len() >= MAX_DISPLAY_LEN {
                break;
            }
            build_level(shape, depth + 1, start + i * stride, values, out);
        }
    }
    close_level(out);
}

fn close_level(out: &mut Vec<u8>) {
    out.truncate(MAX_DISPLAY_LEN);
    out.extend_from_slice(b"],\n");
}

/// The exact decimal expansion of a finite, non-negative double:
/// `digits[0].digits[1..] × 10^exp`, with `digits[0] != 0` unless the value
/// is zero. 800 digits after the point hold any double's expansion exactly
/// (at most 767 significant digits), so no rounding happens here.
fn exact_digits(x: f64) -> (Vec<u8>, i32) {
    let s = format!("{x:.800e}");
    let (mantissa, exp) = s.split_once('e').expect("exponential format");
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect();
    (digits, exp.parse().expect("exponent"))
}

/// Rounds the decimal digits to the first `keep`, half to even (as glibc's
/// printf and abseil's StrFormat do on the exact binary value). Returns the
/// kept digits, with one more leading digit if the rounding carried out.
fn round_half_even(digits: &[u8], keep: usize) -> Vec<u8> {
    if keep >= digits.len() {
        let mut kept = digits.to_vec();
        kept.resize(keep, 0);
        return kept;
    }
    let mut kept = digits[..keep].to_vec();
    let rest = &digits[keep..];
    let round_up = match rest[0] {
        d if d > 5 => true,
        5 => rest[1..].iter().any(|&d| d != 0) || kept.last().is_some_and(|d| d % 2 == 1),
        _ => false,
    };
    if round_up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, 1);
                break;
            }
            i -= 1;
            if kept[i] == 9 {
                kept[i] = 0;
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    kept
}

/// `std::ostringstream << v` (6 significant digits, `%g`) parsed back with
/// `absl::SimpleAtod`: the double nearest to `v` rounded to 6 significant
/// decimal digits. Zeros, infinities and NaN (with its sign) pass unchanged.
pub fn round_to_6_significant(v: f64) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    let (digits, exp) = exact_digits(v.abs());
    let kept = round_half_even(&digits, 6);
    // `kept` is d0..d5 for d0.d1…d5 × 10^exp, or "1000000" when the rounding
    // carried (10^(exp+1)): either way the integer times 10^(exp-5).
    let mantissa: String = kept.iter().map(|&d| char::from(b'0' + d)).collect();
    let text = format!("{mantissa}e{}", exp - 5);
    let rounded: f64 = text.parse().expect("decimal literal");
    if v < 0.0 { -rounded } else { rounded }
}

/// C's `printf("%.2f", x)`: exact decimal value rounded half to even, `-` for
/// any negative sign (including `-0.00`), `nan`/`-nan`/`inf`/`-inf`.
pub fn format_f2(x: f64) -> String {
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_nan() {
        return format!("{sign}nan");
    }
    if x.is_infinite() {
        return format!("{sign}inf");
    }
    let (digits, exp) = exact_digits(x.abs());
    // Digits at 10^exp down to 10^-2: exp + 3 of them.
    let keep = exp + 3;
    let hundredths: Vec<u8> = if keep < 0 {
        // Below 0.001: less than half a hundredth.
        vec![0]
    } else {
        round_half_even(&digits, keep as usize)
    };
    let mut s: String = hundredths.iter().map(|&d| char::from(b'0' + d)).collect();
    let trimmed = s.trim_start_matches('0').len();
    s.drain(..s.len() - trimmed);
    while s.len() < 3 {
        s.insert(0, '0');
    }
    s.insert(s.len() - 2, '.');
    format!("{sign}{s}")
}

/// The table writer the tests share with `tests/integration/checkpoint.rs`.
#[cfg(test)]
#[path = "../../../../tests/integration/support/sstable.rs"]
mod sstable;

#[cfg(test)]
mod tests {
    use super::*;

    use super::sstable::write_table;

    #[test]
    fn varints_keep_leveldbs_bounds_and_low_bits() {
        let read32 = |b: &[u8]| read_varint32(b, &mut 0);
        let read64 = |b: &[u8]| read_varint64(b, &mut 0);
        assert_eq!(read32(&[0xac, 0x02]), Some(300));
        // A fifth byte's bits past 32 are dropped; a sixth byte is too many.
        assert_eq!(read32(&[0xff, 0xff, 0xff, 0xff, 0x7f]), Some(u32::MAX));
        assert_eq!(read32(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]), None);
        assert_eq!(read64(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]), Some(u64::MAX));
        assert_eq!(read64(&[0x80; 10]), None);
        assert_eq!(read64(&[0x80]), None, "truncated");
    }

    #[test]
    fn table_with_many_blocks_and_restarts() {
        let keys: Vec<Vec<u8>> = (0..100).map(|i| format!("scope/var_{i:03}/part").into_bytes()).collect();
        let records: Vec<(&[u8], Vec<u8>)> = keys.iter().map(|k| (k.as_slice(), k.repeat(2))).collect();
        let file = write_table(&records, 4, 7);
        let read = read_table(&file).unwrap();
        assert_eq!(read.len(), 100);
        for ((k, v), (ek, ev)) in read.iter().zip(&records) {
            assert_eq!(k.as_slice(), *ek);
            assert_eq!(v, ev);
        }
        // Every single-byte corruption is an error or changes nothing visible,
        // never a panic.
        for at in 0..file.len() {
            let mut bad = file.clone();
            bad[at] ^= 0x41;
            let _ = read_table(&bad);
        }
        for len in 0..file.len() {
            assert!(read_table(&file[..len]).is_err(), "truncated to {len}");
        }
    }

    #[test]
    fn out_of_order_keys_are_an_error() {
        let records: Vec<(&[u8], Vec<u8>)> = vec![(b"b", vec![1]), (b"a", vec![2])];
        let err = read_table(&write_table(&records, 16, 1)).unwrap_err();
        assert!(err.contains("out of order"), "{err}");
    }

    #[test]
    fn crc_mask_round_trips() {
        for crc in [0u32, 1, 0xdead_beef, u32::MAX] {
            assert_eq!(unmask_crc(mask_crc(crc)), crc);
        }
        // LevelDB's crc32c test vector: crc32c("123456789").
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
    }

    #[test]
    fn strings_decode_and_checksum() {
        // Two strings "ab" and "" as TensorFlow writes them.
        let mut crc = crc32c::crc32c(&2u32.to_le_bytes());
        crc = crc32c::crc32c_append(crc, &0u32.to_le_bytes());
        let masked = mask_crc(crc).to_le_bytes();
        let mut bytes = vec![2u8, 0];
        bytes.extend_from_slice(&masked);
        bytes.extend_from_slice(b"ab");
        let (strings, total) = decode_strings(&bytes, 2).unwrap();
        assert_eq!(strings, vec![b"ab".to_vec(), Vec::new()]);
        let expected = crc32c::crc32c_append(crc32c::crc32c_append(crc, &masked), b"ab");
        assert_eq!(total, expected);
        // A length past the end, a huge length, a bad length checksum.
        assert!(decode_strings(&[9, 0, masked[0], masked[1], masked[2], masked[3], b'a', b'b'], 2).is_err());
        let mut huge = vec![0xff; 9];
        huge.push(0x01);
        assert!(decode_strings(&huge, 1).is_err());
        let mut bad = bytes.clone();
        bad[2] ^= 1;
        assert!(decode_strings(&bad, 2).unwrap_err().contains("lengths' checksum"));
    }

    #[test]
    fn half_precision() {
        assert_eq!(half_to_f64(0x3c00), 1.0);
        assert_eq!(half_to_f64(0xc100), -2.5);
        assert_eq!(half_to_f64(0x7bff), 65504.0);
        assert_eq!(half_to_f64(0x0001), 2f64.powi(-24));
        assert_eq!(half_to_f64(0xfc00), f64::NEG_INFINITY);
        assert!(half_to_f64(0x7e00).is_nan());
    }
}
