//! A Kineto trace's top-level fields and events, each as the bytes the
//! file has, streamed: what every pass of a cut reads.

use std::io::{BufRead, BufReader};
use std::path::Path;

use super::super::KIND;
use crate::error::{Error, Result};

/// What [`scan`] hands on, as bytes of the file.
pub(in crate::inputs::pytorch) enum Item<'a> {
    /// A top-level field (its key with the quotes) and its value; `None`
    /// where `traceEvents`' events begin.
    Field(&'a [u8], Option<&'a [u8]>),
    /// One event of `traceEvents`.
    Event(&'a [u8]),
}

/// The trace's top-level fields and each event of `traceEvents`, in file
/// order.
pub(in crate::inputs::pytorch) fn scan(path: &Path, on_item: &mut dyn FnMut(Item<'_>) -> Result<()>) -> Result<()> {
    let io_error = |source| Error::Io { kind: KIND, path: path.to_owned(), source };
    let file = std::fs::File::open(path).map_err(io_error)?;
    let mut head = BufReader::with_capacity(1 << 20, file);
    let gzipped = head.fill_buf().map_err(io_error)?.starts_with(&super::super::read::GZIP_MAGIC);
    let reader: Box<dyn BufRead> = if gzipped { Box::new(BufReader::with_capacity(1 << 20, flate2::read::MultiGzDecoder::new(head))) } else { Box::new(head) };
    let mut s = Scanner { r: reader, offset: 0 };
    let invalid = |message: String| Error::input(KIND, path, message);
    let at = |offset: u64, what: &str| invalid(format!("not a Kineto trace: {what} at byte {offset}"));
    let mut key = Vec::new();
    let mut value = Vec::new();
    if s.next_token().map_err(io_error)? != Some(b'{') {
        return Err(at(s.offset, "no JSON object"));
    }
    s.bump();
    let mut first = true;
    loop {
        match s.next_token().map_err(io_error)? {
            Some(b'}') => break,
            Some(b',') if !first => s.bump(),
            Some(_) if first => {}
            _ => return Err(at(s.offset, "the object is cut short")),
        }
        first = false;
        if s.next_token().map_err(io_error)? != Some(b'"') {
            return Err(at(s.offset, "a key is missing"));
        }
        key.clear();
        s.copy_value(&mut key).map_err(io_error)?.map_err(|what| at(s.offset, what))?;
        if s.next_token().map_err(io_error)? != Some(b':') {
            return Err(at(s.offset, "a ':' is missing"));
        }
        s.bump();
        s.next_token().map_err(io_error)?;
        if key == b"\"traceEvents\"" && s.peek_byte() == Some(b'[') {
            on_item(Item::Field(&key, None))?;
            s.bump();
            let mut first_event = true;
            loop {
                match s.next_token().map_err(io_error)? {
                    Some(b']') => {
                        s.bump();
                        break;
                    }
                    Some(b',') if !first_event => s.bump(),
                    Some(_) if first_event => {}
                    _ => return Err(at(s.offset, "traceEvents is cut short")),
                }
                first_event = false;
                s.next_token().map_err(io_error)?;
                value.clear();
                s.copy_value(&mut value).map_err(io_error)?.map_err(|what| at(s.offset, what))?;
                on_item(Item::Event(&value))?;
            }
        } else {
            value.clear();
            s.copy_value(&mut value).map_err(io_error)?.map_err(|what| at(s.offset, what))?;
            on_item(Item::Field(&key, Some(&value)))?;
        }
    }
    Ok(())
}

/// JSON values' bytes, one at a time, from a stream.
struct Scanner<R> {
    r: R,
    offset: u64,
}

impl<R: BufRead> Scanner<R> {
    fn peek_byte(&mut self) -> Option<u8> {
        self.r.fill_buf().ok()?.first().copied()
    }

    fn bump(&mut self) {
        self.r.consume(1);
        self.offset += 1;
    }

    /// The next byte that is not white space, not consumed.
    fn next_token(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                return Ok(None);
            }
            match buf.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(i) => {
                    let b = buf[i];
                    self.r.consume(i);
                    self.offset += i as u64;
                    return Ok(Some(b));
                }
                None => {
                    let n = buf.len();
                    self.r.consume(n);
                    self.offset += n as u64;
                }
            }
        }
    }

    /// Appends the bytes of the value that starts here (a string, number,
    /// literal, object or array) to `out`; the inner error says what is
    /// wrong with the text. Strings, most of a trace's bytes, are skipped
    /// with `memchr` to their next quote or backslash.
    fn copy_value(&mut self, out: &mut Vec<u8>) -> std::io::Result<std::result::Result<(), &'static str>> {
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        loop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                return Ok(Err("the text ends inside a value"));
            }
            let mut i = 0;
            let mut done = false;
            while i < buf.len() {
                if in_string {
                    if escaped {
                        escaped = false;
                        i += 1;
                        continue;
                    }
                    match memchr::memchr2(b'"', b'\\', &buf[i..]) {
                        None => {
                            i = buf.len();
                            break;
                        }
                        Some(k) if buf[i + k] == b'\\' => {
                            escaped = true;
                            i += k + 1;
                        }
                        Some(k) => {
                            in_string = false;
                            i += k + 1;
                            if depth == 0 {
                                done = true;
                                break;
                            }
                        }
                    }
                    continue;
                }
                match buf[i] {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' if depth == 0 => {
                        done = true;
                        break;
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            done = true;
                            break;
                        }
                    }
                    b',' | b' ' | b'\n' | b'\r' | b'\t' if depth == 0 => {
                        done = true;
                        break;
                    }
                    _ => {}
                }
                i += 1;
            }
            out.extend_from_slice(&buf[..i]);
            self.r.consume(i);
            self.offset += i as u64;
            if done {
                return Ok(if out.is_empty() { Err("a value is missing") } else { Ok(()) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_copied_whole() {
        let text = br#"{"a": [1, {"b": "x]}\"y"}], "n": -1.5e3, "s": "q,\\", "traceEvents": [{"ph": "M"}, {"ts": 1}]}"#;
        let mut s = Scanner { r: &text[..], offset: 0 };
        assert_eq!(s.next_token().unwrap(), Some(b'{'));
        s.bump();
        let mut out = Vec::new();
        s.next_token().unwrap();
        s.copy_value(&mut out).unwrap().unwrap();
        assert_eq!(out, br#""a""#);
        assert_eq!(s.next_token().unwrap(), Some(b':'));
        s.bump();
        s.next_token().unwrap();
        out.clear();
        s.copy_value(&mut out).unwrap().unwrap();
        assert_eq!(out, br#"[1, {"b": "x]}\"y"}]"#);
    }

    /// A value is the same whatever the reader's buffer cuts it into
    /// (an escape split from what it escapes, a quote at a buffer's end).
    #[test]
    fn values_across_buffers() {
        let text = br#"{"k\\": "a\"b\\", "n": [1, "x\\\"]", {"z": "}"}]} , "s""#;
        let whole = br#"{"k\\": "a\"b\\", "n": [1, "x\\\"]", {"z": "}"}]}"#;
        for capacity in 1..=12 {
            let mut s = Scanner { r: std::io::BufReader::with_capacity(capacity, &text[..]), offset: 0 };
            let mut out = Vec::new();
            s.copy_value(&mut out).unwrap().unwrap();
            assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(whole), "buffers of {capacity}");
            assert_eq!(s.offset, whole.len() as u64);
            assert_eq!(s.next_token().unwrap(), Some(b','));
            s.bump();
            s.next_token().unwrap();
            out.clear();
            s.copy_value(&mut out).unwrap().unwrap();
            assert_eq!(out, br#""s""#);
        }
    }
}
