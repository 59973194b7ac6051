//! What kind of file is this? Read from a file's first bytes when it fails
//! to decode as the kind it was given as, so that the error can say which
//! flag reads it ("… it looks like an XPlane trace: use --xplane_path").
//!
//! The rules look at the first fields only, as `file(1)` does: protobuf
//! kinds share field numbers, but the first message of each starts in its
//! own way (a device name, a plane name, a node name and op). A file no rule
//! recognizes gets no hint, never a wrong one.

use std::io::Read;
use std::path::Path;

use crate::error::Error;

/// A kind of input file rtfprof reads, and the flag that reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    GraphDef,
    GraphDefText,
    RunMetadata,
    RunMetadataText,
    OpLog,
    Profile,
    Xplane,
    Events,
    /// A Chrome trace (`{"traceEvents": …}`), as torch.profiler and
    /// XProf's trace viewer write them.
    ChromeTrace,
}

impl Kind {
    /// What to call it in a message.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::GraphDef => "a GraphDef",
            Kind::GraphDefText => "a GraphDef in text format",
            Kind::RunMetadata => "a RunMetadata",
            Kind::RunMetadataText => "a RunMetadata in text format",
            Kind::OpLog => "an OpLogProto (tfprof_log)",
            Kind::Profile => "a ProfileProto",
            Kind::Xplane => "an XPlane trace (*.xplane.pb)",
            Kind::Events => "a TensorBoard event file",
            Kind::ChromeTrace => "a PyTorch (Chrome JSON) trace",
        }
    }

    /// The flag that reads it; `None` where rtfprof has none.
    pub fn flag(self) -> Option<&'static str> {
        match self {
            Kind::GraphDef | Kind::GraphDefText => Some("--graph_path"),
            Kind::RunMetadata | Kind::RunMetadataText => Some("--run_meta_path"),
            Kind::OpLog => Some("--op_log_path"),
            Kind::Profile => Some("--profile_path"),
            Kind::Xplane => Some("--xplane_path"),
            Kind::Events => Some("--events_path"),
            Kind::ChromeTrace => Some("--pytorch_path"),
        }
    }
}

/// How much of a file the rules read (decompressed, for gzip).
const PREFIX: usize = 64 << 10;

/// The first bytes of the file at `path`, decompressed if it is gzipped;
/// whether it was.
fn prefix(path: &Path) -> Option<(Vec<u8>, bool)> {
    let mut head = Vec::with_capacity(PREFIX);
    std::fs::File::open(path).ok()?.take(PREFIX as u64).read_to_end(&mut head).ok()?;
    if !is_gzip(&head) {
        return Some((head, false));
    }
    let mut inflated = Vec::with_capacity(PREFIX);
    let file = std::fs::File::open(path).ok()?;
    // A short read of a valid stream is all the rules need.
    let _ = flate2::read::MultiGzDecoder::new(file).take(PREFIX as u64).read_to_end(&mut inflated);
    Some((inflated, true))
}

/// Whether `bytes` start as a gzip stream does.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b, 0x08])
}

/// The kind of the file at `path`, and whether it is gzipped; `None` when
/// unreadable or unrecognized.
pub fn sniff_file(path: &Path) -> Option<(Kind, bool)> {
    let (head, gzipped) = prefix(path)?;
    sniff(&head).map(|kind| (kind, gzipped))
}

/// The kind of a file that starts with `head`.
pub fn sniff(head: &[u8]) -> Option<Kind> {
    let text = head.iter().position(|b| !b.is_ascii_whitespace()).map_or(&[][..], |start| &head[start..]);
    if text.starts_with(b"{") || text.starts_with(b"[") {
        return window_contains(text, b"\"traceEvents\"").then_some(Kind::ChromeTrace);
    }
    for (start, kind) in [
        (&b"node {"[..], Kind::GraphDefText),
        (b"node{", Kind::GraphDefText),
        (b"step_stats {", Kind::RunMetadataText),
        (b"step_stats{", Kind::RunMetadataText),
    ] {
        if text.starts_with(start) {
            return Some(kind);
        }
    }
    if is_tf_record(head) {
        return Some(Kind::Events);
    }
    sniff_proto(head)
}

fn window_contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A TFRecord starts with its length and the masked CRC-32C of that length.
fn is_tf_record(head: &[u8]) -> bool {
    head.len() >= 12 && u32::from_le_bytes(head[8..12].try_into().unwrap()) == super::checkpoint::mask_crc(crc32c::crc32c(&head[..8]))
}

/// One protobuf field: its number and wire type, and for length-delimited
/// fields the payload (cut at the end of `head`).
struct Field<'a> {
    number: u64,
    wire_type: u8,
    payload: &'a [u8],
}

fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// The fields at the start of `bytes`, as far as they can be read.
fn fields(mut bytes: &[u8]) -> impl Iterator<Item = Field<'_>> {
    std::iter::from_fn(move || {
        let (tag, n) = varint(bytes)?;
        bytes = &bytes[n..];
        let (number, wire_type) = (tag >> 3, (tag & 7) as u8);
        if number == 0 {
            return None;
        }
        let payload = match wire_type {
            0 => {
                let (_, n) = varint(bytes)?;
                let payload = &bytes[..n];
                bytes = &bytes[n..];
                payload
            }
            1 | 5 => {
                let n = if wire_type == 1 { 8 } else { 4 };
                let payload = bytes.get(..n)?;
                bytes = &bytes[n..];
                payload
            }
            2 => {
                let (len, n) = varint(bytes)?;
                bytes = &bytes[n..];
                let len = usize::try_from(len).ok()?;
                let payload = &bytes[..len.min(bytes.len())];
                bytes = &bytes[payload.len()..];
                payload
            }
            _ => return None,
        };
        Some(Field { number, wire_type, payload })
    })
}

/// A name as TF and XLA write them: printable ASCII.
fn is_name(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' ')
}

fn is_device_name(bytes: &[u8]) -> bool {
    is_name(bytes) && (bytes.starts_with(b"/job:") || bytes.starts_with(b"/device:") || bytes.starts_with(b"/host:"))
}

/// The binary protobuf kinds, by their first message's first fields.
fn sniff_proto(head: &[u8]) -> Option<Kind> {
    let first = fields(head).next()?;
    if first.number != 1 || first.wire_type != 2 {
        return None;
    }
    let inner: Vec<Field> = fields(first.payload).take(3).collect();
    match inner.as_slice() {
        // RunMetadata.step_stats.dev_stats[0].device
        [Field { number: 1, wire_type: 2, payload }, ..]
            if fields(payload).next().is_some_and(|f| f.number == 1 && f.wire_type == 2 && is_device_name(f.payload)) =>
        {
            Some(Kind::RunMetadata)
        }
        // XSpace.planes[0]: id, then a name such as /host:CPU or /device:GPU:0.
        [Field { number: 1, wire_type: 0, .. }, Field { number: 2, wire_type: 2, payload }, ..] if payload.starts_with(b"/") && is_name(payload) => {
            Some(Kind::Xplane)
        }
        [Field { number: 2, wire_type: 2, payload }, ..] if payload.starts_with(b"/") && is_device_name(payload) => Some(Kind::Xplane),
        // ProfileProto.nodes: a map entry of an id and a ProfileNode.
        [Field { number: 1, wire_type: 0, .. }, Field { number: 2, wire_type: 2, payload }, ..]
            if fields(payload).next().is_some_and(|f| f.number == 1 && f.wire_type == 2 && is_name(f.payload)) =>
        {
            Some(Kind::Profile)
        }
        // GraphDef.node[0]: a name, then an op.
        [Field { number: 1, wire_type: 2, payload: name }, Field { number: 2, wire_type: 2, payload: op }, ..] if is_name(name) && is_name(op) => {
            Some(Kind::GraphDef)
        }
        // OpLogProto.log_entries[0]: a name, then float ops, types or a code trace.
        [Field { number: 1, wire_type: 2, payload: name }, Field { number: 2, wire_type: 0, .. } | Field { number: 3 | 4, wire_type: 2, .. }, ..]
            if is_name(name) =>
        {
            Some(Kind::OpLog)
        }
        _ => None,
    }
}

/// The error with what its file looks like added, where the file is of
/// another kind than the flag that named it reads ("… use --xplane_path").
/// Called once, where an error reaches the user (the command line, the
/// Python module): the error type itself knows nothing of file kinds.
pub fn add_hint(error: Error) -> Error {
    match error {
        Error::Input { kind, path, message } => {
            let message = match hint(kind, &path) {
                Some(hint) => format!("{message}; {hint}"),
                None => message,
            };
            Error::Input { kind, path, message }
        }
        e => e,
    }
}

/// The sentence added to an error about the file at `path` given as `flag`,
/// when the file is recognizably of another kind (or gzipped).
pub fn hint(flag: &str, path: &Path) -> Option<String> {
    let (kind, gzipped) = sniff_file(path)?;
    let what = if gzipped { format!("a gzipped {}", kind.describe().trim_start_matches("a ").trim_start_matches("an ")) } else { kind.describe().to_owned() };
    match kind.flag() {
        // Right flag (gzip is read too): the file is damaged, as the error says.
        Some(reads) if reads == flag => None,
        Some(reads) => Some(format!("the file looks like {what}: use {reads}")),
        None => Some(format!("the file looks like {what}, which rtfprof does not read")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every committed fixture of a known kind is recognized as it, and
    /// gzipped as well.
    #[test]
    fn fixtures_are_their_kind() {
        let testdata = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata");
        let expected = |name: &str| match name {
            "graph.pb" => Some(Kind::GraphDef),
            "graph.pbtxt" => Some(Kind::GraphDefText),
            "tfprof_log" => Some(Kind::OpLog),
            "profile" => Some(Kind::Profile),
            n if n.starts_with("run_meta_") && !n.contains('.') => Some(Kind::RunMetadata),
            n if n.ends_with(".xplane.pb") => Some(Kind::Xplane),
            n if n.starts_with("events.out.tfevents.") => Some(Kind::Events),
            _ => None,
        };
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![testdata.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    // Regression inputs are damaged on purpose.
                    if !path.ends_with("bad") {
                        stack.push(path);
                    }
                    continue;
                }
                let Some(kind) = expected(path.file_name().unwrap().to_str().unwrap()) else { continue };
                let bytes = std::fs::read(&path).unwrap();
                assert_eq!(sniff(&bytes[..bytes.len().min(PREFIX)]), Some(kind), "{}", path.display());
                seen.insert(format!("{kind:?}"));
            }
        }
        assert_eq!(seen.len(), 7, "{seen:?}");
        let dir = tempfile::tempdir().unwrap();
        let gz = dir.path().join("g.gz");
        let mut encoder = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
        std::io::Write::write_all(&mut encoder, &std::fs::read(testdata.join("cnn/run_meta_0")).unwrap()).unwrap();
        encoder.finish().unwrap();
        assert_eq!(sniff_file(&gz), Some((Kind::RunMetadata, true)));
        assert_eq!(hint("--graph_path", &gz).as_deref(), Some("the file looks like a gzipped RunMetadata: use --run_meta_path"));
        assert_eq!(hint("--run_meta_path", &gz), None);
    }

    /// Random and cut bytes never panic, and unknown bytes give no hint.
    #[test]
    fn arbitrary_bytes() {
        let mut random = crate::test_random::XorShift::new(7);
        for len in 0..200 {
            let bytes: Vec<u8> = (0..len).map(|_| random.next() as u8).collect();
            let _ = sniff(&bytes);
        }
        assert_eq!(sniff(b""), None);
        assert_eq!(sniff(b"hello, world"), None);
        assert_eq!(sniff(b"{\"a\": 1}"), None);
    }
}
