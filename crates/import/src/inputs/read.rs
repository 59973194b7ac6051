//! Path → bytes → message, with errors that name the file. Text format goes
//! through the transcoder in [`super::text_format`], or, for what it does not
//! take (and every error), through `prost-reflect` against the descriptors
//! compiled by `build.rs`.

use std::path::Path;

use prost::Message;
use prost_reflect::DynamicMessage;

use super::text_format::TEXT_NESTING_LIMIT;
use crate::error::{Error, Result, one_line};
use crate::proto::tensorflow::GraphDef;

/// Decodes a binary proto, or parses it as text format if that fails (tfprof's
/// `ReadProtoFile`). `what` is the message's name in package `tensorflow`.
pub fn decode_binary_or_text<M: Message + Default + Send>(kind: &'static str, path: &Path, bytes: &[u8], what: &str) -> Result<M> {
    decode_binary_or_text_with(kind, path, bytes, what, |wire| M::decode(wire))
}

/// [`decode_binary_or_text`] with a decoder of its own for the wire bytes
/// (text is transcoded to wire bytes first): for records that are not
/// prost messages.
pub fn decode_binary_or_text_with<T: Send>(
    kind: &'static str,
    path: &Path,
    bytes: &[u8],
    what: &str,
    decode: impl Fn(&[u8]) -> Result<T, prost::DecodeError> + Sync,
) -> Result<T> {
    let binary_err = match decode(bytes) {
        Ok(message) => return Ok(message),
        Err(e) => e,
    };
    match parse_text(bytes, what, &decode) {
        Ok(message) => Ok(message),
        Err(text_err) => Err(Error::input(kind, path, format!("not a {what} proto (binary: {}; text: {text_err})", describe_decode_error(&binary_err)))),
    }
}

/// Decodes a binary-only proto (tfprof reads op logs and profiles this way).
pub fn decode_binary<M: Message + Default>(kind: &'static str, path: &Path, bytes: &[u8], what: &str) -> Result<M> {
    M::decode(bytes).map_err(|e| Error::input(kind, path, format!("not a {what} proto ({})", describe_decode_error(&e))))
}

fn parse_text<T: Send>(bytes: &[u8], what: &str, decode: &(impl Fn(&[u8]) -> Result<T, prost::DecodeError> + Sync)) -> Result<T, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text at byte {}", e.valid_up_to()))?;
    let full_name = format!("tensorflow.{what}");
    if let Ok(message) = super::text_format::parse_with(text, &full_name, decode) {
        return Ok(message);
    }
    // Checked before parsing: deeper input would overflow the parser's stack.
    if text_nesting_depth(text) > TEXT_NESTING_LIMIT {
        return Err(format!("messages nested more than {TEXT_NESTING_LIMIT} deep"));
    }
    let descriptor = crate::proto::descriptor_pool().get_message_by_name(&full_name).ok_or_else(|| format!("no descriptor for {full_name}"))?;
    // The parser recurses once per level with large frames (about 22 KiB a
    // level unoptimized), more than a 2 MiB rayon worker stack holds at the
    // limit, so it runs on a thread of its own with room to spare.
    const TEXT_PARSE_STACK: usize = 32 << 20;
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("rtfprof-text".into())
            .stack_size(TEXT_PARSE_STACK)
            .spawn_scoped(scope, || {
                let dynamic = DynamicMessage::parse_text_format(descriptor, text).map_err(|e| one_line(&e.to_string()))?;
                decode(&dynamic.encode_to_vec()).map_err(|e| one_line(&e.to_string()))
            })
            .map_err(|e| format!("cannot start the text parser thread: {e}"))?
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The deepest `{`/`<` nesting of text-format input, skipping strings and
/// `#` comments as prost-reflect's lexer does. A parse never nests deeper than
/// this: where this scan stops early (a newline or NUL inside a string), the
/// lexer fails too.
fn text_nesting_depth(text: &str) -> usize {
    let bytes = text.as_bytes();
    let (mut depth, mut max, mut i) = (0usize, 0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'<' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b'>' => depth = depth.saturating_sub(1),
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            quote @ (b'"' | b'\'') => {
                i += 1;
                loop {
                    match bytes.get(i) {
                        None | Some(b'\n' | 0) => return max,
                        Some(&b) if b == quote => break,
                        Some(b'\\') => i += 2,
                        Some(_) => i += 1,
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    max
}

pub(crate) fn describe_decode_error(e: &prost::DecodeError) -> String {
    one_line(&e.to_string())
}

#[cfg(test)]
mod tests {
    use super::text_nesting_depth;

    #[test]
    fn nesting_depth_skips_strings_and_comments() {
        assert_eq!(text_nesting_depth("node { attr { key: \"{{{\" value < s: '<{' > } }"), 3);
        assert_eq!(text_nesting_depth("# {{{{\nnode {}"), 1);
        assert_eq!(text_nesting_depth(r#"a: "\"{" b { }"#), 1);
        assert_eq!(text_nesting_depth("}}} {"), 1);
        assert_eq!(text_nesting_depth(""), 0);
    }
}

/// Text GraphDefs at least this large are parsed in parallel chunks.
pub const PARALLEL_TEXT_BYTES: usize = 1 << 20;

/// Parses a large text GraphDef on all cores: the text is cut between
/// top-level fields (`node { … }` blocks), each chunk parsed on its own, and
/// the nodes concatenated in order. Falls back to one parse (and its error
/// message) if any chunk fails.
pub fn parse_graph_text_parallel(kind: &'static str, path: &Path, bytes: &[u8]) -> Result<GraphDef> {
    use rayon::prelude::*;
    let pieces = rayon::current_num_threads().max(1) * 4;
    let cuts = top_level_cuts(bytes, bytes.len() / pieces + 1);
    let chunks: Vec<&[u8]> = cuts.windows(2).map(|w| &bytes[w[0]..w[1]]).collect();
    let parsed: Result<Vec<GraphDef>, String> = chunks.par_iter().map(|c| parse_text(c, "GraphDef", &|wire| GraphDef::decode(wire))).collect();
    let Ok(parts) = parsed else {
        return decode_binary_or_text(kind, path, bytes, "GraphDef");
    };
    let mut graph = GraphDef::default();
    for part in parts {
        graph.node.extend(part.node);
        graph.versions = part.versions.or(graph.versions);
        graph.library = part.library.or(graph.library);
        graph.debug_info = part.debug_info.or(graph.debug_info);
        #[allow(deprecated)] // still on the wire in old graphs
        if part.version != 0 {
            graph.version = part.version;
        }
    }
    Ok(graph)
}

/// Byte offsets (from 0 to the end) where the text can be cut between
/// top-level fields, about `target` bytes apart. Strings (with escapes) and
/// `#` comments are skipped so that braces inside them do not count.
fn top_level_cuts(text: &[u8], target: usize) -> Vec<usize> {
    let mut cuts = vec![0];
    let (mut depth, mut i) = (0usize, 0usize);
    while i < text.len() {
        match text[i] {
            b'"' | b'\'' => {
                let quote = text[i];
                i += 1;
                while i < text.len() && text[i] != quote {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'#' => {
                while i < text.len() && text[i] != b'\n' {
                    i += 1;
                }
            }
            b'{' | b'<' => depth += 1,
            b'}' | b'>' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && i + 1 - cuts[cuts.len() - 1] >= target {
                    cuts.push(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    if *cuts.last().expect("starts with 0") != text.len() {
        cuts.push(text.len());
    }
    cuts
}

#[cfg(test)]
mod parallel_text_tests {
    use super::*;

    #[test]
    fn cuts_fall_between_top_level_fields_only() {
        let text = b"node { name: \"a}\" attr { key: \"x\" } } # } comment\nnode { name: 'b\\'}' }\nversions { producer: 1 }";
        let cuts = top_level_cuts(text, 1);
        let pieces: Vec<&str> = cuts.windows(2).map(|w| std::str::from_utf8(&text[w[0]..w[1]]).unwrap()).collect();
        assert_eq!(pieces.len(), 3, "{pieces:?}");
        assert!(pieces[0].ends_with("} }"));
        assert!(pieces[1].trim_start().starts_with("# } comment"));
        let graph = parse_graph_text_parallel("--graph_path", Path::new("t"), text).unwrap();
        let names: Vec<&str> = graph.node.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["a}", "b'}"]);
        assert_eq!(graph.versions.unwrap().producer, 1);
    }

    #[test]
    fn parallel_parse_equals_one_parse_on_real_graphs() {
        for model in ["mlp", "cnn", "while"] {
            let path = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(format!("testdata/{model}/graph.pbtxt"));
            let text = std::fs::read(&path).unwrap();
            let whole: GraphDef = decode_binary_or_text("--graph_path", &path, &text, "GraphDef").unwrap();
            let parallel = parse_graph_text_parallel("--graph_path", &path, &text).unwrap();
            assert_eq!(parallel, whole, "{model}");
            assert!(top_level_cuts(&text, text.len() / 8).len() > 4, "{model}: the text was cut");
        }
    }
}
