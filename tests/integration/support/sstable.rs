//! A minimal LevelDB table writer, as TensorFlow's `TableBuilder` writes a
//! checkpoint index, for tests: the reader's unit tests and the hand-made
//! checkpoints of `tests/integration/checkpoint.rs` include this file.
//! `mask_crc` comes from the including module.

use super::mask_crc;

/// The magic number that ends a LevelDB table.
const TABLE_MAGIC: u64 = 0xdb47_7524_8b80_fb57;

/// A minimal LevelDB table writer (uncompressed, `restart_interval`
/// entries between restarts, a new data block every `block_entries`).
pub fn write_table(records: &[(&[u8], Vec<u8>)], restart_interval: usize, block_entries: usize) -> Vec<u8> {
    fn put_varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    fn block(records: &[(&[u8], Vec<u8>)], restart_interval: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut restarts = vec![0u32];
        let mut last: &[u8] = b"";
        for (i, (key, value)) in records.iter().enumerate() {
            let mut shared = 0;
            if i % restart_interval == 0 {
                if i > 0 {
                    restarts.push(out.len() as u32);
                }
            } else {
                while shared < last.len().min(key.len()) && last[shared] == key[shared] {
                    shared += 1;
                }
            }
            put_varint(&mut out, shared as u64);
            put_varint(&mut out, (key.len() - shared) as u64);
            put_varint(&mut out, value.len() as u64);
            out.extend_from_slice(&key[shared..]);
            out.extend_from_slice(value);
            last = key;
        }
        for r in &restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
        out
    }
    fn emit(file: &mut Vec<u8>, contents: &[u8]) -> Vec<u8> {
        let mut handle = Vec::new();
        put_varint(&mut handle, file.len() as u64);
        put_varint(&mut handle, contents.len() as u64);
        file.extend_from_slice(contents);
        file.push(0);
        let crc = crc32c::crc32c_append(crc32c::crc32c(contents), &[0]);
        file.extend_from_slice(&mask_crc(crc).to_le_bytes());
        handle
    }
    let mut file = Vec::new();
    let mut index: Vec<(&[u8], Vec<u8>)> = Vec::new();
    for chunk in records.chunks(block_entries) {
        let handle = emit(&mut file, &block(chunk, restart_interval));
        index.push((chunk.last().unwrap().0, handle));
    }
    let meta = emit(&mut file, &block(&[], restart_interval));
    let index = emit(&mut file, &block(&index, 1));
    let mut footer = meta;
    footer.extend_from_slice(&index);
    footer.resize(40, 0);
    footer.extend_from_slice(&TABLE_MAGIC.to_le_bytes());
    file.extend_from_slice(&footer);
    file
}
