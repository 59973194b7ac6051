//! A pull parser for the JSON Kineto writes, over any `Read` (a file or a
//! gzip stream) through one refilled buffer: no copy of the text and no
//! tree of values is kept, so memory is the model's, not the file's.
//!
//! It exists rather than serde_json because a trace needs what serde_json
//! does not give: numbers as their text (`"ts": 4816249284691.150` is a
//! whole number of nanoseconds, exact only as a decimal), and raw control
//! characters inside strings, which PyTorch has written into names and
//! which strict parsers reject. `bench/pytorch.md` has the measurements.

use std::io::Read;

/// Where and why the text is not JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub offset: u64,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, SyntaxError>;

/// The kind of the next value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Object,
    Array,
    String,
    Number,
    True,
    False,
    Null,
}

/// Arrays and objects skipped may nest this deep; deeper input is an error
/// rather than unbounded work on a malformed file.
const MAX_SKIP_DEPTH: usize = 10_000;

pub struct Parser<R> {
    src: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    /// Bytes of the input before `buf[0]`.
    base: u64,
    /// Unescaped strings that need it.
    scratch: Vec<u8>,
    /// A position in `buf` that a refill must keep (a key being returned).
    pin: Option<usize>,
    read_error: Option<std::io::Error>,
}

const CHUNK: usize = 1 << 20;

impl Parser<std::io::Empty> {
    /// A parser over text already in memory: `buf[..len]` is the whole
    /// input (nothing is copied; [`Parser::into_buf`] gives it back).
    pub fn from_vec(buf: Vec<u8>, len: usize) -> Self {
        debug_assert!(len <= buf.len());
        Parser { src: std::io::empty(), buf, pos: 0, end: len, eof: true, base: 0, scratch: Vec::new(), pin: None, read_error: None }
    }
}

impl<R: Read> Parser<R> {
    pub fn new(src: R) -> Self {
        Parser { src, buf: vec![0; CHUNK], pos: 0, end: 0, eof: false, base: 0, scratch: Vec::new(), pin: None, read_error: None }
    }

    pub fn into_buf(self) -> Vec<u8> {
        self.buf
    }

    /// The I/O error that ended the input early, if one did (it is reported
    /// as such rather than as the syntax error it causes).
    pub fn take_read_error(&mut self) -> Option<std::io::Error> {
        self.read_error.take()
    }

    /// Reads the rest of the input, unparsed, so that an I/O error in it
    /// (a corrupt gzip stream) is known whatever was read ahead; what was
    /// buffered is dropped.
    pub fn drain(&mut self) {
        self.pos = 0;
        self.end = 0;
        self.pin = None;
        while !self.eof {
            match self.src.read(&mut self.buf) {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.read_error = Some(e);
                    self.eof = true;
                }
            }
        }
    }

    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T> {
        Err(SyntaxError { offset: self.offset(), message: message.into() })
    }

    /// Reads more input after `end`, keeping `buf[keep..]` (moved to the
    /// front). Returns false at the end of the input.
    fn fill(&mut self, keep: usize) -> bool {
        if self.eof {
            return false;
        }
        let keep = self.pin.map_or(keep, |pin| pin.min(keep));
        if keep > 0 {
            self.buf.copy_within(keep..self.end, 0);
            self.base += keep as u64;
            self.pos -= keep;
            self.end -= keep;
        }
        if self.end == self.buf.len() {
            // A token longer than the buffer: grow it.
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return false;
                }
                Ok(n) => {
                    self.end += n;
                    return true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.read_error = Some(e);
                    self.eof = true;
                    return false;
                }
            }
        }
    }

    /// Moves the next `size` bytes or more of the input (the unread part of
    /// the buffer first, then the source, read straight into `seg`) into
    /// `seg`, up to a likely boundary between two elements of an array of
    /// objects: a `{` after `}`, `,` and white space only; the segment ends
    /// after the `,`. Returns the offset of `seg[0]` in the input, the
    /// length taken, and whether the input ended (then all of it was taken
    /// and no boundary is implied). The boundary is only a guess (it may lie
    /// in a string or a nested array): whoever parses the segment before
    /// must end exactly there for the next one to count.
    pub fn take_segment(&mut self, size: usize, seg: &mut Vec<u8>) -> (u64, usize, bool) {
        debug_assert!(self.pin.is_none());
        let start = self.offset();
        let left = self.end - self.pos;
        let want = left.max(size.saturating_add(CHUNK));
        if seg.len() < want {
            seg.resize(want, 0);
        }
        seg[..left].copy_from_slice(&self.buf[self.pos..self.end]);
        let mut len = left;
        let mut from = size.max(1);
        loop {
            while from < len {
                let Some(k) = memchr::memchr(b'{', &seg[from..len]) else {
                    from = len;
                    break;
                };
                let brace = from + k;
                if let Some(j) = boundary(&seg[..brace]) {
                    // The rest goes back to the buffer.
                    let rest = len - j;
                    if self.buf.len() < rest {
                        self.buf.resize(rest, 0);
                    }
                    self.buf[..rest].copy_from_slice(&seg[j..len]);
                    self.pos = 0;
                    self.end = rest;
                    self.base = start + j as u64;
                    return (start, j, false);
                }
                from = brace + 1;
            }
            if self.eof {
                self.pos = 0;
                self.end = 0;
                self.base = start + len as u64;
                return (start, len, true);
            }
            if len == seg.len() {
                seg.resize(seg.len() * 2, 0);
            }
            match self.src.read(&mut seg[len..]) {
                Ok(0) => self.eof = true,
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.read_error = Some(e);
                    self.eof = true;
                }
            }
        }
    }

    /// Puts text taken by [`Parser::take_segment`] back before the unread
    /// input: `pieces`, in order, are the input from offset `at` up to where
    /// the buffer's unread bytes start.
    pub fn unread(&mut self, at: u64, pieces: &[&[u8]]) {
        debug_assert!(self.pin.is_none());
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        debug_assert_eq!(at + total as u64, self.offset());
        let mut buf = Vec::with_capacity((total + self.end - self.pos).max(CHUNK));
        for piece in pieces {
            buf.extend_from_slice(piece);
        }
        buf.extend_from_slice(&self.buf[self.pos..self.end]);
        self.end = buf.len();
        buf.resize(buf.capacity(), 0);
        self.buf = buf;
        self.pos = 0;
        self.base = at;
    }

    /// Whether the parser is right at the end of the input (white space not
    /// skipped).
    pub fn exhausted(&self) -> bool {
        self.eof && self.pos == self.end
    }

    /// After an element of an array: consumes a `,` (`Some(true)`) or the
    /// closing `]` (`Some(false)`); anything else is left (`None`).
    pub fn after_element(&mut self) -> Option<bool> {
        match self.peek_byte() {
            Some(b',') => {
                self.pos += 1;
                Some(true)
            }
            Some(b']') => {
                self.pos += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// The next byte that is not white space, not consumed.
    fn peek_byte(&mut self) -> Option<u8> {
        loop {
            while self.pos < self.end {
                match self.buf[self.pos] {
                    b' ' | b'\n' | b'\r' | b'\t' => self.pos += 1,
                    b => return Some(b),
                }
            }
            if !self.fill(self.pos) {
                return None;
            }
        }
    }

    /// What the next value is; an error at the end of input or on a byte
    /// that starts no value.
    pub fn peek(&mut self) -> Result<Next> {
        match self.peek_byte() {
            Some(b'{') => Ok(Next::Object),
            Some(b'[') => Ok(Next::Array),
            Some(b'"') => Ok(Next::String),
            Some(b'-' | b'0'..=b'9') => Ok(Next::Number),
            Some(b't') => Ok(Next::True),
            Some(b'f') => Ok(Next::False),
            Some(b'n') => Ok(Next::Null),
            Some(b) => self.error(format!("unexpected {}", describe(b))),
            None => self.error("unexpected end of input"),
        }
    }

    /// True at the end of the input (white space aside).
    pub fn at_end(&mut self) -> bool {
        self.peek_byte().is_none()
    }

    fn expect(&mut self, byte: u8) -> Result<()> {
        match self.peek_byte() {
            Some(b) if b == byte => {
                self.pos += 1;
                Ok(())
            }
            Some(b) => self.error(format!("expected '{}', found {}", byte as char, describe(b))),
            None => self.error(format!("expected '{}', found the end of input", byte as char)),
        }
    }

    pub fn begin_object(&mut self) -> Result<()> {
        self.expect(b'{')
    }

    pub fn begin_array(&mut self) -> Result<()> {
        self.expect(b'[')
    }

    /// The next key of an object being read (after `begin_object`), or
    /// `None` after its closing brace. `first` says whether no key was read
    /// yet. The key is valid until the next call.
    pub fn next_key(&mut self, first: &mut bool) -> Result<Option<&[u8]>> {
        if !self.more(b'}', first)? {
            return Ok(None);
        }
        let (mut start, mut end, scratch) = self.string_range()?;
        // The key must outlive the refill that reading ':' may need.
        if !scratch {
            self.pin = Some(start);
        }
        let base = self.base;
        let colon = self.expect(b':');
        self.pin = None;
        colon?;
        if !scratch {
            let shift = (self.base - base) as usize;
            start -= shift;
            end -= shift;
        }
        Ok(Some(self.string_at((start, end, scratch))))
    }

    /// Whether an array being read (after `begin_array`) has another
    /// element; consumes the comma or the closing bracket.
    pub fn next_element(&mut self, first: &mut bool) -> Result<bool> {
        self.more(b']', first)
    }

    fn more(&mut self, close: u8, first: &mut bool) -> Result<bool> {
        match self.peek_byte() {
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            Some(b',') if !*first => {
                self.pos += 1;
                Ok(true)
            }
            Some(_) if *first => {
                *first = false;
                Ok(true)
            }
            Some(b) => self.error(format!("expected ',' or '{}', found {}", close as char, describe(b))),
            None => self.error(format!("expected ',' or '{}', found the end of input", close as char)),
        }
    }

    /// A string value, unescaped, valid until the next call. Raw control
    /// characters are kept; bytes that are not UTF-8 are the caller's to
    /// judge.
    pub fn string(&mut self) -> Result<&[u8]> {
        let range = self.string_range()?;
        Ok(self.string_at(range))
    }

    /// Reads a string; returns where its unescaped bytes are: in the buffer
    /// (`(start, end, false)`) or in `scratch` (`true`).
    fn string_range(&mut self) -> Result<(usize, usize, bool)> {
        self.expect(b'"')?;
        let mut start = self.pos;
        let mut i = start;
        let mut escaped = false;
        loop {
            match find_quote_or_backslash(&self.buf[i..self.end]) {
                Some(k) if self.buf[i + k] == b'"' => {
                    let close = i + k;
                    self.pos = close + 1;
                    if !escaped {
                        return Ok((start, close, false));
                    }
                    self.unescape(start, close)?;
                    return Ok((0, self.scratch.len(), true));
                }
                // Skip the escaped byte too (it may be a quote).
                Some(k) if i + k + 1 < self.end => {
                    escaped = true;
                    i += k + 2;
                    continue;
                }
                // A backslash last in the buffer: scanned again after it.
                Some(k) => i += k,
                None => i = self.end,
            }
            // More input is needed: keep the string from its start.
            self.pos = start;
            let more = self.fill(start);
            i -= start;
            start = 0;
            if !more {
                self.pos = self.end;
                return self.error("unterminated string");
            }
        }
    }

    fn string_at(&self, (start, end, scratch): (usize, usize, bool)) -> &[u8] {
        if scratch { &self.scratch[start..end] } else { &self.buf[start..end] }
    }

    fn unescape(&mut self, start: usize, end: usize) -> Result<()> {
        self.scratch.clear();
        let mut i = start;
        while i < end {
            let b = self.buf[i];
            if b != b'\\' {
                self.scratch.push(b);
                i += 1;
                continue;
            }
            let Some(&e) = self.buf.get(i + 1).filter(|_| i + 1 < end) else {
                return Err(SyntaxError { offset: self.base + i as u64, message: "unterminated escape".into() });
            };
            i += 2;
            let c = match e {
                b'"' => b'"',
                b'\\' => b'\\',
                b'/' => b'/',
                b'b' => 8,
                b'f' => 12,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'u' => {
                    let (unit, after) = self.hex4(i, end)?;
                    i = after;
                    let c = if (0xD800..0xDC00).contains(&unit) {
                        // A high surrogate: combined with the low one that
                        // follows, if it does.
                        match (self.buf.get(i..i + 2), self.hex4(i + 2, end)) {
                            (Some(b"\\u"), Ok((low, after))) if (0xDC00..0xE000).contains(&low) => {
                                i = after;
                                char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                            }
                            _ => None,
                        }
                    } else {
                        char::from_u32(unit)
                    };
                    let mut utf8 = [0; 4];
                    self.scratch.extend_from_slice(c.unwrap_or('\u{FFFD}').encode_utf8(&mut utf8).as_bytes());
                    continue;
                }
                other => {
                    return Err(SyntaxError { offset: self.base + i as u64 - 1, message: format!("invalid escape {}", describe(other)) });
                }
            };
            self.scratch.push(c);
        }
        Ok(())
    }

    fn hex4(&self, at: usize, end: usize) -> Result<(u32, usize)> {
        let digits = self.buf.get(at..at + 4).filter(|_| at + 4 <= end);
        let value = digits.and_then(|d| std::str::from_utf8(d).ok()).and_then(|d| u32::from_str_radix(d, 16).ok());
        match value {
            Some(v) => Ok((v, at + 4)),
            None => Err(SyntaxError { offset: self.base + at as u64, message: "invalid \\u escape".into() }),
        }
    }

    /// A number's text (`-`, digits, `.`, exponent), checked to be a JSON
    /// number.
    pub fn number(&mut self) -> Result<&[u8]> {
        self.peek_byte();
        let mut start = self.pos;
        let mut i = start;
        loop {
            while i < self.end && matches!(self.buf[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                i += 1;
            }
            if i < self.end {
                break;
            }
            self.pos = start;
            // (At the end of the input, nothing moves.)
            let base = self.base;
            let more = self.fill(start);
            let moved = (self.base - base) as usize;
            i -= moved;
            start -= moved;
            if !more {
                break;
            }
        }
        self.pos = i;
        self.check_number(start, i)
    }

    fn check_number(&self, start: usize, end: usize) -> Result<&[u8]> {
        let text = &self.buf[start..end];
        if !is_json_number(text) {
            return Err(SyntaxError { offset: self.base + start as u64, message: format!("invalid number {:?}", String::from_utf8_lossy(text)) });
        }
        Ok(text)
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<()> {
        self.peek_byte();
        while self.end - self.pos < word.len() {
            if !self.fill(self.pos) {
                break;
            }
        }
        if self.buf[self.pos..self.end].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            self.error(format!("invalid literal (expected {})", String::from_utf8_lossy(word)))
        }
    }

    pub fn null(&mut self) -> Result<()> {
        self.literal(b"null")
    }

    pub fn boolean(&mut self) -> Result<bool> {
        match self.peek()? {
            Next::True => self.literal(b"true").map(|_| true),
            Next::False => self.literal(b"false").map(|_| false),
            _ => self.error("expected true or false"),
        }
    }

    /// Skips one value of any kind, checking its syntax, without recursion.
    pub fn skip(&mut self) -> Result<()> {
        // One entry per open container: (is object, no element read yet).
        let mut stack: Vec<(bool, bool)> = Vec::new();
        loop {
            match self.peek()? {
                Next::Object => {
                    self.pos += 1;
                    stack.push((true, true));
                }
                Next::Array => {
                    self.pos += 1;
                    stack.push((false, true));
                }
                Next::String => {
                    self.string_range()?;
                }
                Next::Number => {
                    self.number()?;
                }
                Next::True => self.literal(b"true")?,
                Next::False => self.literal(b"false")?,
                Next::Null => self.literal(b"null")?,
            }
            if stack.len() > MAX_SKIP_DEPTH {
                return self.error(format!("values nested more than {MAX_SKIP_DEPTH} deep"));
            }
            // Close what is complete, then position at the next value.
            loop {
                let Some(top) = stack.last_mut() else {
                    return Ok(());
                };
                let (is_object, mut first) = *top;
                top.1 = false;
                let close = if is_object { b'}' } else { b']' };
                if !self.more(close, &mut first)? {
                    stack.pop();
                    continue;
                }
                if is_object {
                    self.string_range()?;
                    self.expect(b':')?;
                }
                break;
            }
        }
    }
}

/// The first `"` or `\\` in `hay`. Most strings of a trace (keys, phases,
/// categories) end within a few bytes: looked at byte by byte first, then
/// with memchr.
#[inline]
fn find_quote_or_backslash(hay: &[u8]) -> Option<usize> {
    const SHORT: usize = 16;
    let head = &hay[..hay.len().min(SHORT)];
    match head.iter().position(|&b| b == b'"' || b == b'\\') {
        Some(k) => Some(k),
        None if hay.len() > SHORT => memchr::memchr2(b'"', b'\\', &hay[SHORT..]).map(|k| k + SHORT),
        None => None,
    }
}

/// Where the text before a `{` ends in `}`, `,` and white space only (the
/// `{` likely starts the next object of an array of them): the length of
/// `before` up to and with the `,`.
fn boundary(before: &[u8]) -> Option<usize> {
    let is_space = |b: u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
    let comma = before.iter().rposition(|&b| !is_space(b))?;
    let close = before[..comma].iter().rposition(|&b| !is_space(b))?;
    (before[comma] == b',' && before[close] == b'}').then_some(comma + 1)
}

fn is_json_number(text: &[u8]) -> bool {
    let mut i = 0;
    if text.first() == Some(&b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < text.len() && text[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > s
    };
    let int_start = i;
    if !digits(&mut i) || (text[int_start] == b'0' && i - int_start > 1) {
        return false;
    }
    if text.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(text.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(text.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == text.len()
}

fn describe(b: u8) -> String {
    if b.is_ascii_graphic() { format!("'{}'", b as char) } else { format!("byte 0x{b:02x}") }
}
