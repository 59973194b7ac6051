//! Protobuf text format → wire bytes, driven by the message descriptors.
//!
//! prost-reflect's text parser builds a `DynamicMessage` (a map of boxed
//! values per message) that is then encoded and decoded again: most of the
//! time of loading a text GraphDef. This transcoder lexes the text byte by
//! byte and writes wire bytes straight away, which prost then decodes.
//!
//! It takes the text format TensorFlow writes and the common forms around it
//! (see the tests), and gives the same message as prost-reflect whenever it
//! accepts. Anything else — extensions and `Any` expansions (`[…]`), groups,
//! unknown fields, every kind of error, and a few lexical oddities such as
//! `1.5e` or `09` — is [`Rejected`]: the caller then runs prost-reflect,
//! which parses the text or reports the error as before.
//!
//! Nested messages go on the wire as a 5-byte length, padded with
//! continuation bits and filled in when the message closes, so that no
//! message is written twice (protobuf decoders accept non-minimal varints).
//! The parser keeps its own stack of open messages instead of recursing, and
//! rejects nesting deeper than `TEXT_NESTING_LIMIT`.

use std::fmt;
use std::sync::OnceLock;

use prost::Message;
use prost_reflect::{DescriptorPool, Kind};
use rustc_hash::FxHashMap;

/// How deeply text-format messages may nest: prost's limit for binary input
/// (`RECURSION_LIMIT`), which prost-reflect's recursive text parser lacks
/// (the reader checks it before falling back to that parser).
pub const TEXT_NESTING_LIMIT: usize = 100;

/// Why the transcoder did not take the text: `at` is a byte offset. Not an
/// error message for users: prost-reflect gives that.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    pub at: usize,
    pub reason: &'static str,
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.at)
    }
}

fn reject<T>(at: usize, reason: &'static str) -> Result<T, Rejected> {
    Err(Rejected { at, reason })
}

/// Parses `text` as the message `full_name` of rtfprof's compiled protos
/// (e.g. `tensorflow.GraphDef`).
pub fn parse<M: Message + Default>(text: &str, full_name: &str) -> Result<M, Rejected> {
    parse_with(text, full_name, |wire| M::decode(wire))
}

/// [`parse`] with a decoder of its own for the wire bytes.
pub fn parse_with<T>(text: &str, full_name: &str, decode: impl Fn(&[u8]) -> Result<T, prost::DecodeError>) -> Result<T, Rejected> {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    let schema = SCHEMA.get_or_init(|| Schema::new(crate::proto::descriptor_pool()));
    let wire = schema.transcode(full_name, text)?;
    decode(wire.as_slice()).map_err(|_| Rejected { at: text.len(), reason: "the wire bytes do not decode" })
}

/// The descriptors of a pool in the form the parser looks them up.
pub struct Schema {
    messages: Vec<MessageInfo>,
    enums: Vec<EnumInfo>,
    by_name: FxHashMap<String, u32>,
}

struct MessageInfo {
    by_name: FxHashMap<Box<str>, u32>,
    fields: Vec<FieldInfo>,
    /// One "is set" flag per field and then one per oneof.
    slots: usize,
}

#[derive(Clone, Copy, Debug)]
struct FieldInfo {
    number: u32,
    kind: FieldKind,
    /// A list or a map (maps are repeated entry messages on the wire).
    repeated: bool,
    /// Set means set, even to the default value (prost-reflect's `has`).
    presence: bool,
    /// A default value given for a field without presence is not written:
    /// prost-reflect does not encode it (this matters for `-0.0`).
    skip_default: bool,
    /// The slot of the oneof it belongs to.
    oneof: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FieldKind {
    Double,
    Float,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Bool,
    String,
    Bytes,
    Enum(u32),
    Message(u32),
    Group,
}

struct EnumInfo {
    by_name: FxHashMap<Box<str>, i32>,
    default: i32,
}

impl Schema {
    /// Indexes every message and enum of `pool`, once per pool.
    pub fn new(pool: &DescriptorPool) -> Schema {
        let by_name: FxHashMap<String, u32> = pool.all_messages().enumerate().map(|(i, m)| (m.full_name().to_owned(), i as u32)).collect();
        let enum_by_name: FxHashMap<String, u32> = pool.all_enums().enumerate().map(|(i, e)| (e.full_name().to_owned(), i as u32)).collect();
        let enums = pool
            .all_enums()
            .map(|e| EnumInfo { by_name: e.values().map(|v| (v.name().into(), v.number())).collect(), default: e.default_value().number() })
            .collect();
        let messages = pool
            .all_messages()
            .map(|m| {
                let oneofs: Vec<String> = m.oneofs().map(|o| o.full_name().to_owned()).collect();
                let field_count = m.fields().len();
                let fields: Vec<FieldInfo> = m
                    .fields()
                    .map(|f| {
                        let kind = match f.kind() {
                            _ if f.is_group() => FieldKind::Group,
                            Kind::Double => FieldKind::Double,
                            Kind::Float => FieldKind::Float,
                            Kind::Int32 => FieldKind::Int32,
                            Kind::Int64 => FieldKind::Int64,
                            Kind::Uint32 => FieldKind::Uint32,
                            Kind::Uint64 => FieldKind::Uint64,
                            Kind::Sint32 => FieldKind::Sint32,
                            Kind::Sint64 => FieldKind::Sint64,
                            Kind::Fixed32 => FieldKind::Fixed32,
                            Kind::Fixed64 => FieldKind::Fixed64,
                            Kind::Sfixed32 => FieldKind::Sfixed32,
                            Kind::Sfixed64 => FieldKind::Sfixed64,
                            Kind::Bool => FieldKind::Bool,
                            Kind::String => FieldKind::String,
                            Kind::Bytes => FieldKind::Bytes,
                            Kind::Enum(e) => FieldKind::Enum(enum_by_name[e.full_name()]),
                            Kind::Message(d) => FieldKind::Message(by_name[d.full_name()]),
                        };
                        let repeated = f.is_list() || f.is_map();
                        let presence = f.supports_presence();
                        FieldInfo {
                            number: f.number(),
                            kind,
                            repeated,
                            presence,
                            skip_default: !repeated && !presence,
                            oneof: f.containing_oneof().map(|o| {
                                let index = oneofs.iter().position(|name| name == o.full_name()).expect("own oneof");
                                (field_count + index) as u32
                            }),
                        }
                    })
                    .collect();
                MessageInfo { by_name: m.fields().enumerate().map(|(i, f)| (f.name().into(), i as u32)).collect(), fields, slots: field_count + oneofs.len() }
            })
            .collect();
        Schema { messages, enums, by_name }
    }

    /// The wire bytes of `text` parsed as the message `full_name`.
    pub fn transcode(&self, full_name: &str, text: &str) -> Result<Vec<u8>, Rejected> {
        let Some(&root) = self.by_name.get(full_name) else {
            return reject(0, "no such message");
        };
        let mut parser = Parser {
            schema: self,
            lexer: Lexer { text: text.as_bytes(), pos: 0, peeked: None },
            out: Vec::with_capacity(text.len() / 2),
            frames: Vec::new(),
            slots: Vec::new(),
            scratch: Vec::new(),
        };
        parser.push(root, 0, usize::MAX, None)?;
        parser.run()?;
        Ok(parser.out)
    }
}

// ---------------------------------------------------------------- lexer

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    Eof,
    Ident,
    /// An integer; its digits start at `digits` (after a `0` or `0x` prefix).
    Int {
        radix: u32,
        digits: usize,
    },
    Float,
    /// A string literal, quotes included; `escaped` if it has a backslash.
    Str {
        escaped: bool,
    },
    Punct(u8),
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Tok,
    start: usize,
    end: usize,
}

/// prost-reflect's tokens (a logos lexer), except that a number directly
/// followed by a letter, digit, `_` or `.` is rejected rather than split.
struct Lexer<'t> {
    text: &'t [u8],
    pos: usize,
    peeked: Option<Token>,
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'t> Lexer<'t> {
    fn next(&mut self) -> Result<Token, Rejected> {
        match self.peeked.take() {
            Some(token) => Ok(token),
            None => self.lex(),
        }
    }

    fn peek(&mut self) -> Result<Token, Rejected> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lex()?);
        }
        Ok(self.peeked.expect("just set"))
    }

    /// The token's text (tokens start and end on ASCII bytes).
    fn str(&self, from: usize, to: usize) -> &'t str {
        std::str::from_utf8(&self.text[from..to]).expect("ASCII token")
    }

    fn lex(&mut self) -> Result<Token, Rejected> {
        let text = self.text;
        let mut i = self.pos;
        // Whitespace is [\t\n\v\f\r ]; a comment runs from `#` to the newline.
        loop {
            match text.get(i) {
                Some(b' ' | b'\n' | b'\t' | b'\r' | 0x0b | 0x0c) => i += 1,
                Some(b'#') => {
                    i += 1;
                    while i < text.len() && text[i] != b'\n' {
                        i += 1;
                    }
                }
                _ => break,
            }
        }
        let start = i;
        let kind = match text.get(i) {
            None => Tok::Eof,
            Some(b) if b.is_ascii_alphabetic() || *b == b'_' => {
                i += 1;
                while i < text.len() && is_ident_byte(text[i]) {
                    i += 1;
                }
                Tok::Ident
            }
            Some(b'0'..=b'9') => return self.number(start),
            Some(b'.') if text.get(i + 1).is_some_and(u8::is_ascii_digit) => return self.number(start),
            Some(&quote @ (b'"' | b'\'')) => {
                i += 1;
                let mut escaped = false;
                loop {
                    match text.get(i) {
                        None | Some(0 | b'\n') => return reject(i, "unterminated string"),
                        Some(&b) if b == quote => break,
                        Some(b'\\') => {
                            escaped = true;
                            i = escape(text, i)?.1;
                        }
                        Some(_) => i += 1,
                    }
                }
                i += 1;
                Tok::Str { escaped }
            }
            Some(&b @ (b'{' | b'}' | b'<' | b'>' | b'[' | b']' | b':' | b',' | b';' | b'-')) => {
                i += 1;
                Tok::Punct(b)
            }
            Some(_) => return reject(i, "unexpected character"),
        };
        self.pos = i;
        Ok(Token { kind, start, end: i })
    }

    /// Integer and float literals, as logos's longest match of
    /// `0`, `[1-9][0-9]*`, `0[0-7]+`, `0[xX][0-9A-Fa-f]+` (integers) and
    /// `0[fF]`, `[1-9][0-9]*[fF]`, `[0-9]+\.[0-9]*(exp)?[fF]?`,
    /// `[0-9]+(exp)[fF]?`, `\.[0-9]+(exp)?[fF]?` (floats).
    fn number(&mut self, start: usize) -> Result<Token, Rejected> {
        let text = self.text;
        let digits_end = |mut i: usize| {
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        // `[eE][+-]?[0-9]+` at `i`: where it ends, if it is there.
        let exponent_end = |i: usize| {
            if !matches!(text.get(i), Some(b'e' | b'E')) {
                return None;
            }
            let j = if matches!(text.get(i + 1), Some(b'+' | b'-')) { i + 2 } else { i + 1 };
            let end = digits_end(j);
            (end > j).then_some(end)
        };
        let float_suffix = |i: usize| if matches!(text.get(i), Some(b'f' | b'F')) { i + 1 } else { i };
        let int_end = digits_end(start);
        let (kind, end) = if text.get(int_end) == Some(&b'.') {
            let fraction_end = digits_end(int_end + 1);
            (Tok::Float, float_suffix(exponent_end(fraction_end).unwrap_or(fraction_end)))
        } else if let Some(end) = exponent_end(int_end) {
            (Tok::Float, float_suffix(end))
        } else if text[start] == b'0'
            && int_end == start + 1
            && matches!(text.get(int_end), Some(b'x' | b'X'))
            && text.get(int_end + 1).is_some_and(u8::is_ascii_hexdigit)
        {
            let mut end = int_end + 1;
            while end < text.len() && text[end].is_ascii_hexdigit() {
                end += 1;
            }
            (Tok::Int { radix: 16, digits: start + 2 }, end)
        } else if matches!(text.get(int_end), Some(b'f' | b'F')) {
            if text[start] == b'0' && int_end > start + 1 {
                return reject(start, "octal-looking float");
            }
            (Tok::Float, int_end + 1)
        } else if text[start] == b'0' && int_end > start + 1 {
            if text[start..int_end].iter().any(|&b| b > b'7') {
                return reject(start, "8 or 9 in an octal number");
            }
            (Tok::Int { radix: 8, digits: start + 1 }, int_end)
        } else {
            (Tok::Int { radix: 10, digits: start }, int_end)
        };
        if text.get(end).is_some_and(|&b| is_ident_byte(b) || b == b'.') {
            return reject(end, "a number runs into other characters");
        }
        self.pos = end;
        Ok(Token { kind, start, end })
    }
}

/// A decoded escape sequence.
enum Escaped {
    Byte(u8),
    Char(char),
}

/// The escape sequence at `text[i]` (a backslash), as prost-reflect's lexer
/// reads it, and where it ends.
fn escape(text: &[u8], i: usize) -> Result<(Escaped, usize), Rejected> {
    let hex_run = |from: usize, max: usize| {
        let mut end = from;
        while end < text.len() && end - from < max && text[end].is_ascii_hexdigit() {
            end += 1;
        }
        end
    };
    let number = |from: usize, to: usize, radix: u32| u32::from_str_radix(std::str::from_utf8(&text[from..to]).expect("ASCII digits"), radix).expect("digits");
    let unicode = |digits: usize| {
        let end = hex_run(i + 2, digits);
        if end != i + 2 + digits {
            return reject(i, "short unicode escape");
        }
        match char::from_u32(number(i + 2, end, 16)) {
            Some(c) => Ok((Escaped::Char(c), end)),
            None => reject(i, "unicode escape out of range"),
        }
    };
    let byte = |b: u8| Ok((Escaped::Byte(b), i + 2));
    match text.get(i + 1) {
        Some(b'x' | b'X') => {
            let end = hex_run(i + 2, 2);
            if end == i + 2 {
                return reject(i, "empty hex escape");
            }
            Ok((Escaped::Byte(number(i + 2, end, 16) as u8), end))
        }
        Some(b'0'..=b'7') => {
            let mut end = i + 1;
            while end < text.len() && end - (i + 1) < 3 && matches!(text[end], b'0'..=b'7') {
                end += 1;
            }
            match u8::try_from(number(i + 1, end, 8)) {
                Ok(b) => Ok((Escaped::Byte(b), end)),
                Err(_) => reject(i, "octal escape over 255"),
            }
        }
        Some(b'a') => byte(0x07),
        Some(b'b') => byte(0x08),
        Some(b'f') => byte(0x0c),
        Some(b'n') => byte(b'\n'),
        Some(b'r') => byte(b'\r'),
        Some(b't') => byte(b'\t'),
        Some(b'v') => byte(0x0b),
        Some(&b @ (b'?' | b'\\' | b'\'' | b'"')) => byte(b),
        Some(b'u') => unicode(4),
        Some(b'U') => unicode(8),
        _ => reject(i, "unknown escape"),
    }
}

// ---------------------------------------------------------------- parser

/// An open message.
#[derive(Clone, Copy)]
struct Frame {
    message: u32,
    /// The byte that closes it (`}` or `>`); 0 for the root, which the end
    /// of the text closes.
    close: u8,
    /// Where its 5-byte length goes in the output.
    length_at: usize,
    /// Where its flags start in `Parser::slots`.
    slots_at: usize,
    /// The repeated field it is an element of, inside `[…]`.
    list: Option<FieldInfo>,
}

/// What a value was.
#[derive(PartialEq, Eq)]
enum Wrote {
    Value,
    /// The default value of its kind (written only if not `skip_default`).
    Default,
    /// A message, left open: the main loop parses its fields.
    Opened,
}

struct Parser<'s, 't> {
    schema: &'s Schema,
    lexer: Lexer<'t>,
    out: Vec<u8>,
    frames: Vec<Frame>,
    /// "Is set" flags of the open messages' fields and oneofs, frame after
    /// frame: prost-reflect rejects a field or a oneof set twice.
    slots: Vec<bool>,
    /// Strings with escapes or in several pieces are assembled here.
    scratch: Vec<u8>,
}

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LENGTH_DELIMITED: u32 = 2;
const FIXED32: u32 = 5;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_tag(out: &mut Vec<u8>, number: u32, wire_type: u32) {
    put_varint(out, u64::from(number << 3 | wire_type));
}

impl<'t> Parser<'_, 't> {
    fn run(&mut self) -> Result<(), Rejected> {
        loop {
            let token = self.lexer.next()?;
            let frame = *self.frames.last().expect("the root stays open");
            match token.kind {
                Tok::Ident => self.field(frame, token)?,
                Tok::Eof if frame.close == 0 => return Ok(()),
                Tok::Punct(b) if b == frame.close => self.close()?,
                _ => return reject(token.start, "expected a field name"),
            }
        }
    }

    fn push(&mut self, message: u32, close: u8, length_at: usize, list: Option<FieldInfo>) -> Result<(), Rejected> {
        // The root is depth 0, as in `read::text_nesting_depth`.
        if self.frames.len() > TEXT_NESTING_LIMIT {
            return reject(self.lexer.pos, "nested too deep");
        }
        let slots_at = self.slots.len();
        self.slots.resize(slots_at + self.schema.messages[message as usize].slots, false);
        self.frames.push(Frame { message, close, length_at, slots_at, list });
        Ok(())
    }

    fn close(&mut self) -> Result<(), Rejected> {
        let frame = self.frames.pop().expect("not the root");
        self.slots.truncate(frame.slots_at);
        let len = self.out.len() - frame.length_at - 5;
        let Ok(len) = u32::try_from(len) else {
            return reject(self.lexer.pos, "message over 4 GiB");
        };
        let padded = [0, 7, 14, 21, 28].map(|shift| (len >> shift) as u8 & 0x7f | if shift < 28 { 0x80 } else { 0 });
        self.out[frame.length_at..frame.length_at + 5].copy_from_slice(&padded);
        match frame.list {
            Some(field) => self.list_rest(field),
            None => self.separator(),
        }
    }

    /// One field, from its name on; a message value is left open.
    fn field(&mut self, frame: Frame, name: Token) -> Result<(), Rejected> {
        let message = &self.schema.messages[frame.message as usize];
        let Some(&index) = message.by_name.get(self.lexer.str(name.start, name.end)) else {
            return reject(name.start, "unknown field");
        };
        let field = message.fields[index as usize];
        if field.kind == FieldKind::Group {
            return reject(name.start, "group");
        }
        let mut token = self.lexer.next()?;
        let colon = token.kind == Tok::Punct(b':');
        if colon {
            token = self.lexer.next()?;
        } else if !matches!(token.kind, Tok::Punct(b'{' | b'<')) {
            return reject(token.start, "expected ':' or a message");
        }
        if field.repeated {
            if colon && token.kind == Tok::Punct(b'[') {
                if self.lexer.peek()?.kind == Tok::Punct(b']') {
                    self.lexer.next()?;
                    return self.separator();
                }
                let first = self.lexer.next()?;
                return match self.value(field, first, true)? {
                    Wrote::Opened => Ok(()),
                    _ => self.list_rest(field),
                };
            }
            return match self.value(field, token, false)? {
                Wrote::Opened => Ok(()),
                _ => self.separator(),
            };
        }
        let own = frame.slots_at + index as usize;
        let oneof = field.oneof.map(|slot| frame.slots_at + slot as usize);
        if self.slots[own] || oneof.is_some_and(|slot| self.slots[slot]) {
            return reject(name.start, "field already set");
        }
        let wrote = self.value(field, token, false)?;
        if field.presence || wrote != Wrote::Default {
            self.slots[own] = true;
            if let Some(slot) = oneof {
                self.slots[slot] = true;
            }
        }
        match wrote {
            Wrote::Opened => Ok(()),
            _ => self.separator(),
        }
    }

    /// After a value inside `[…]`: `,` and the next value, or `]`.
    fn list_rest(&mut self, field: FieldInfo) -> Result<(), Rejected> {
        loop {
            let token = self.lexer.next()?;
            match token.kind {
                Tok::Punct(b',') => {
                    let token = self.lexer.next()?;
                    if self.value(field, token, true)? == Wrote::Opened {
                        return Ok(());
                    }
                }
                Tok::Punct(b']') => return self.separator(),
                _ => return reject(token.start, "expected ',' or ']'"),
            }
        }
    }

    /// The `,` or `;` that may follow a field.
    fn separator(&mut self) -> Result<(), Rejected> {
        if matches!(self.lexer.peek()?.kind, Tok::Punct(b',' | b';')) {
            self.lexer.next()?;
        }
        Ok(())
    }

    /// One value of `field`, from its first token on.
    fn value(&mut self, field: FieldInfo, token: Token, in_list: bool) -> Result<Wrote, Rejected> {
        let (wire_type, bits, default) = match field.kind {
            FieldKind::Message(message) => {
                let close = match token.kind {
                    Tok::Punct(b'{') => b'}',
                    Tok::Punct(b'<') => b'>',
                    _ => return reject(token.start, "expected '{' or '<'"),
                };
                put_tag(&mut self.out, field.number, LENGTH_DELIMITED);
                let length_at = self.out.len();
                self.out.extend_from_slice(&[0; 5]);
                self.push(message, close, length_at, in_list.then_some(field))?;
                return Ok(Wrote::Opened);
            }
            FieldKind::String | FieldKind::Bytes => return self.string(field, token),
            FieldKind::Double => {
                let v = self.float(token)?;
                (FIXED64, v.to_bits(), v == 0.0)
            }
            FieldKind::Float => {
                let v = self.float(token)? as f32;
                (FIXED32, u64::from(v.to_bits()), v == 0.0)
            }
            FieldKind::Int32 | FieldKind::Sint32 | FieldKind::Sfixed32 => {
                let v = self.int32(token)?;
                let bits = match field.kind {
                    FieldKind::Int32 => v as i64 as u64,
                    FieldKind::Sint32 => u64::from(((v << 1) ^ (v >> 31)) as u32),
                    _ => u64::from(v as u32),
                };
                (if field.kind == FieldKind::Sfixed32 { FIXED32 } else { VARINT }, bits, v == 0)
            }
            FieldKind::Int64 | FieldKind::Sint64 | FieldKind::Sfixed64 => {
                let v = self.int64(token)?;
                let bits = if field.kind == FieldKind::Sint64 { ((v << 1) ^ (v >> 63)) as u64 } else { v as u64 };
                (if field.kind == FieldKind::Sfixed64 { FIXED64 } else { VARINT }, bits, v == 0)
            }
            FieldKind::Uint32 | FieldKind::Fixed32 => {
                let v = self.uint32(token)?;
                (if field.kind == FieldKind::Fixed32 { FIXED32 } else { VARINT }, u64::from(v), v == 0)
            }
            FieldKind::Uint64 | FieldKind::Fixed64 => {
                let v = self.uint64(token)?;
                (if field.kind == FieldKind::Fixed64 { FIXED64 } else { VARINT }, v, v == 0)
            }
            FieldKind::Bool => {
                let v = self.bool(token)?;
                (VARINT, u64::from(v), !v)
            }
            FieldKind::Enum(e) => {
                let v = self.enum_number(e, token)?;
                (VARINT, v as i64 as u64, v == self.schema.enums[e as usize].default)
            }
            FieldKind::Group => return reject(token.start, "group"),
        };
        if default && field.skip_default {
            return Ok(Wrote::Default);
        }
        put_tag(&mut self.out, field.number, wire_type);
        match wire_type {
            VARINT => put_varint(&mut self.out, bits),
            FIXED64 => self.out.extend_from_slice(&bits.to_le_bytes()),
            _ => self.out.extend_from_slice(&(bits as u32).to_le_bytes()),
        }
        Ok(if default { Wrote::Default } else { Wrote::Value })
    }

    /// A string or bytes value: one or more adjacent literals.
    fn string(&mut self, field: FieldInfo, first: Token) -> Result<Wrote, Rejected> {
        let Tok::Str { escaped } = first.kind else {
            return reject(first.start, "expected a string");
        };
        let text = self.lexer.text;
        let bytes: &[u8] = if !escaped && !matches!(self.lexer.peek()?.kind, Tok::Str { .. }) {
            // Between two ASCII quotes of a `str`: valid UTF-8.
            &text[first.start + 1..first.end - 1]
        } else {
            self.scratch.clear();
            let mut any_escaped = escaped;
            append_literal(&mut self.scratch, text, first)?;
            while let Tok::Str { escaped } = self.lexer.peek()?.kind {
                any_escaped |= escaped;
                let piece = self.lexer.next()?;
                append_literal(&mut self.scratch, text, piece)?;
            }
            if any_escaped && field.kind == FieldKind::String && std::str::from_utf8(&self.scratch).is_err() {
                return reject(first.start, "string is not UTF-8");
            }
            &self.scratch
        };
        let default = bytes.is_empty();
        if default && field.skip_default {
            return Ok(Wrote::Default);
        }
        put_tag(&mut self.out, field.number, LENGTH_DELIMITED);
        put_varint(&mut self.out, bytes.len() as u64);
        self.out.extend_from_slice(bytes);
        Ok(if default { Wrote::Default } else { Wrote::Value })
    }

    /// A float or double: a float literal, a decimal integer, `inf`,
    /// `infinity` or `nan` (any case), after an optional `-`.
    fn float(&mut self, token: Token) -> Result<f64, Rejected> {
        let (negative, token) = self.minus(token)?;
        let value = match token.kind {
            Tok::Float => {
                let s = self.lexer.str(token.start, token.end);
                let s = s.strip_suffix(['f', 'F']).unwrap_or(s);
                s.parse().or_else(|_| reject(token.start, "bad float"))?
            }
            Tok::Int { radix: 10, digits } => self.lexer.str(digits, token.end).parse().or_else(|_| reject(token.start, "bad float"))?,
            Tok::Ident => match self.lexer.str(token.start, token.end) {
                s if s.eq_ignore_ascii_case("inf") || s.eq_ignore_ascii_case("infinity") => f64::INFINITY,
                s if s.eq_ignore_ascii_case("nan") => f64::NAN,
                _ => return reject(token.start, "expected a number"),
            },
            _ => return reject(token.start, "expected a number"),
        };
        Ok(if negative { -value } else { value })
    }

    /// An optional `-` before `token`: whether there was one, and the token
    /// after it.
    fn minus(&mut self, token: Token) -> Result<(bool, Token), Rejected> {
        if token.kind == Tok::Punct(b'-') { Ok((true, self.lexer.next()?)) } else { Ok((false, token)) }
    }

    /// An integer literal after an optional `-`: sign, digits and radix.
    fn integer(&mut self, token: Token) -> Result<(bool, &'t str, u32), Rejected> {
        let (negative, token) = self.minus(token)?;
        match token.kind {
            Tok::Int { radix, digits } => Ok((negative, self.lexer.str(digits, token.end), radix)),
            _ => reject(token.start, "expected an integer"),
        }
    }

    // The ranges as prost-reflect checks them: the magnitude is parsed
    // unsigned and then negated, so that `-0x80000000` is i32::MIN.

    fn int32(&mut self, token: Token) -> Result<i32, Rejected> {
        let (negative, digits, radix) = self.integer(token)?;
        let value = if negative {
            u32::from_str_radix(digits, radix).ok().and_then(|v| if v == i32::MAX as u32 + 1 { Some(i32::MIN) } else { i32::try_from(v).ok().map(|v| -v) })
        } else {
            i32::from_str_radix(digits, radix).ok()
        };
        value.map_or_else(|| reject(token.start, "out of range"), Ok)
    }

    fn int64(&mut self, token: Token) -> Result<i64, Rejected> {
        let (negative, digits, radix) = self.integer(token)?;
        let value = if negative {
            u64::from_str_radix(digits, radix).ok().and_then(|v| if v == i64::MAX as u64 + 1 { Some(i64::MIN) } else { i64::try_from(v).ok().map(|v| -v) })
        } else {
            i64::from_str_radix(digits, radix).ok()
        };
        value.map_or_else(|| reject(token.start, "out of range"), Ok)
    }

    fn uint32(&mut self, token: Token) -> Result<u32, Rejected> {
        match self.integer(token)? {
            (false, digits, radix) => u32::from_str_radix(digits, radix).or_else(|_| reject(token.start, "out of range")),
            (true, ..) => reject(token.start, "negative unsigned"),
        }
    }

    fn uint64(&mut self, token: Token) -> Result<u64, Rejected> {
        match self.integer(token)? {
            (false, digits, radix) => u64::from_str_radix(digits, radix).or_else(|_| reject(token.start, "out of range")),
            (true, ..) => reject(token.start, "negative unsigned"),
        }
    }

    /// `true`, `True`, `t`, `false`, `False`, `f`, or an integer 0 or 1.
    fn bool(&mut self, token: Token) -> Result<bool, Rejected> {
        match token.kind {
            Tok::Ident => match self.lexer.str(token.start, token.end) {
                "true" | "True" | "t" => Ok(true),
                "false" | "False" | "f" => Ok(false),
                _ => reject(token.start, "expected a bool"),
            },
            Tok::Int { radix, digits } => match u8::from_str_radix(self.lexer.str(digits, token.end), radix) {
                Ok(0) => Ok(false),
                Ok(1) => Ok(true),
                _ => reject(token.start, "expected 0 or 1"),
            },
            _ => reject(token.start, "expected a bool"),
        }
    }

    /// An enum value by name, or any int32 number.
    fn enum_number(&mut self, e: u32, token: Token) -> Result<i32, Rejected> {
        if token.kind != Tok::Ident {
            return self.int32(token);
        }
        match self.schema.enums[e as usize].by_name.get(self.lexer.str(token.start, token.end)) {
            Some(&number) => Ok(number),
            None => reject(token.start, "unknown enum value"),
        }
    }
}

/// Appends the bytes a string literal stands for.
fn append_literal(out: &mut Vec<u8>, text: &[u8], literal: Token) -> Result<(), Rejected> {
    let (mut i, end) = (literal.start + 1, literal.end - 1);
    if literal.kind == (Tok::Str { escaped: false }) {
        out.extend_from_slice(&text[i..end]);
        return Ok(());
    }
    while i < end {
        let plain = text[i..end].iter().position(|&b| b == b'\\').map_or(end, |n| i + n);
        out.extend_from_slice(&text[i..plain]);
        if plain == end {
            break;
        }
        let (escaped, next) = escape(text, plain)?;
        match escaped {
            Escaped::Byte(b) => out.push(b),
            Escaped::Char(c) => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
        i = next;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Every test runs both parsers: the transcoder must give prost-reflect's
    //! message, or reject text prost-reflect rejects too.

    use std::fmt::Debug;
    use std::path::Path;

    use prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
    use prost_reflect::prost_types::{
        DescriptorProto, EnumDescriptorProto, EnumValueDescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet, MessageOptions,
        OneofDescriptorProto,
    };
    use prost_reflect::{DynamicMessage, MessageDescriptor};

    use super::*;
    use crate::proto::tensorflow::{AttrValue, GpuOptions, GraphDebugInfo, GraphDef, NodeDef, RunMetadata, TensorProto};

    /// prost-reflect's parse, on a big stack (it recurses once per level).
    fn reflect(descriptor: &MessageDescriptor, text: &str) -> Option<DynamicMessage> {
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn_scoped(s, || DynamicMessage::parse_text_format(descriptor.clone(), text).ok())
                .unwrap()
                .join()
                .unwrap()
        })
    }

    fn tf(full_name: &str) -> MessageDescriptor {
        crate::proto::descriptor_pool().get_message_by_name(full_name).unwrap()
    }

    /// Both parsers accept `text` as `M` and give the same message: the same
    /// encoding and the same `Debug` (which tells -0.0 from 0.0; the encoding
    /// tells NaNs apart).
    fn same<M: Message + Default + Debug>(full_name: &str, text: &str) -> M {
        let fast = parse::<M>(text, full_name).unwrap_or_else(|e| panic!("transcoder rejected {text:?}: {e}"));
        let slow: M = reflect(&tf(full_name), text).unwrap_or_else(|| panic!("prost-reflect rejected {text:?}")).transcode_to().unwrap();
        assert_eq!(fast.encode_to_vec(), slow.encode_to_vec(), "{text:?}");
        assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{text:?}");
        fast
    }

    fn node(text: &str) -> NodeDef {
        same("tensorflow.NodeDef", text)
    }

    /// Both parsers reject `text` as the message `full_name` of the pool.
    fn both_reject(descriptor: &MessageDescriptor, text: &str) {
        let schema = Schema::new(descriptor.parent_pool());
        assert!(schema.transcode(descriptor.full_name(), text).is_err(), "transcoder accepted {text:?}");
        assert!(reflect(descriptor, text).is_none(), "prost-reflect accepted {text:?}");
    }

    // A pool with every field kind: proto3 `t.All` and proto2 `t2.P2`.

    fn field(name: &str, number: i32, label: Label, kind: Type, type_name: &str) -> FieldDescriptorProto {
        FieldDescriptorProto {
            name: Some(name.into()),
            number: Some(number),
            label: Some(label as i32),
            r#type: Some(kind as i32),
            type_name: (!type_name.is_empty()).then(|| type_name.into()),
            ..Default::default()
        }
    }

    fn map_entry(name: &str, key: Type, value: Type, value_type: &str) -> DescriptorProto {
        DescriptorProto {
            name: Some(name.into()),
            field: vec![field("key", 1, Label::Optional, key, ""), field("value", 2, Label::Optional, value, value_type)],
            options: Some(MessageOptions { map_entry: Some(true), ..Default::default() }),
            ..Default::default()
        }
    }

    const SCALARS: [(&str, Type); 15] = [
        ("double", Type::Double),
        ("float", Type::Float),
        ("int32", Type::Int32),
        ("int64", Type::Int64),
        ("uint32", Type::Uint32),
        ("uint64", Type::Uint64),
        ("sint32", Type::Sint32),
        ("sint64", Type::Sint64),
        ("fixed32", Type::Fixed32),
        ("fixed64", Type::Fixed64),
        ("sfixed32", Type::Sfixed32),
        ("sfixed64", Type::Sfixed64),
        ("bool", Type::Bool),
        ("string", Type::String),
        ("bytes", Type::Bytes),
    ];

    fn test_pool() -> &'static DescriptorPool {
        static POOL: OnceLock<DescriptorPool> = OnceLock::new();
        POOL.get_or_init(|| {
            let enum_e = EnumDescriptorProto {
                name: Some("E".into()),
                value: ["ZERO", "ONE", "TWO"]
                    .iter()
                    .enumerate()
                    .map(|(i, n)| EnumValueDescriptorProto { name: Some((*n).into()), number: Some(i as i32), ..Default::default() })
                    .collect(),
                ..Default::default()
            };
            let mut all = vec![];
            for (i, (name, kind)) in SCALARS.iter().enumerate() {
                all.push(field(name, i as i32 + 1, Label::Optional, *kind, ""));
                all.push(field(&format!("r_{name}"), i as i32 + 101, Label::Repeated, *kind, ""));
            }
            all.extend([
                field("e", 16, Label::Optional, Type::Enum, ".t.E"),
                field("r_e", 116, Label::Repeated, Type::Enum, ".t.E"),
                field("child", 17, Label::Optional, Type::Message, ".t.All"),
                field("r_child", 117, Label::Repeated, Type::Message, ".t.All"),
                field("CamelName", 18, Label::Optional, Type::Int32, ""),
                field("m_si", 201, Label::Repeated, Type::Message, ".t.All.MSiEntry"),
                field("m_ia", 202, Label::Repeated, Type::Message, ".t.All.MIaEntry"),
                field("m_sf", 203, Label::Repeated, Type::Message, ".t.All.MSfEntry"),
                field("m_bs", 204, Label::Repeated, Type::Message, ".t.All.MBsEntry"),
                FieldDescriptorProto { oneof_index: Some(0), ..field("o_int32", 301, Label::Optional, Type::Int32, "") },
                FieldDescriptorProto { oneof_index: Some(0), ..field("o_string", 302, Label::Optional, Type::String, "") },
                FieldDescriptorProto { oneof_index: Some(0), ..field("o_child", 303, Label::Optional, Type::Message, ".t.All") },
                FieldDescriptorProto { oneof_index: Some(0), ..field("o_float", 304, Label::Optional, Type::Float, "") },
                FieldDescriptorProto { oneof_index: Some(1), proto3_optional: Some(true), ..field("opt", 401, Label::Optional, Type::Int32, "") },
            ]);
            let message_all = DescriptorProto {
                name: Some("All".into()),
                field: all,
                nested_type: vec![
                    map_entry("MSiEntry", Type::String, Type::Int32, ""),
                    map_entry("MIaEntry", Type::Int64, Type::Message, ".t.All"),
                    map_entry("MSfEntry", Type::String, Type::Float, ""),
                    map_entry("MBsEntry", Type::Bool, Type::String, ""),
                ],
                oneof_decl: vec![
                    OneofDescriptorProto { name: Some("o".into()), ..Default::default() },
                    OneofDescriptorProto { name: Some("_opt".into()), ..Default::default() },
                ],
                ..Default::default()
            };
            let proto3 = FileDescriptorProto {
                name: Some("t.proto".into()),
                package: Some("t".into()),
                message_type: vec![message_all],
                enum_type: vec![enum_e],
                syntax: Some("proto3".into()),
                ..Default::default()
            };
            let enum_p = EnumDescriptorProto {
                name: Some("P".into()),
                value: vec![
                    EnumValueDescriptorProto { name: Some("P_FIRST".into()), number: Some(3), ..Default::default() },
                    EnumValueDescriptorProto { name: Some("P_OTHER".into()), number: Some(4), ..Default::default() },
                ],
                ..Default::default()
            };
            let message_p2 = DescriptorProto {
                name: Some("P2".into()),
                field: vec![
                    FieldDescriptorProto { default_value: Some("5".into()), ..field("a", 1, Label::Optional, Type::Int32, "") },
                    field("p", 2, Label::Optional, Type::Enum, ".t2.P"),
                    field("g", 3, Label::Optional, Type::Group, ".t2.P2.G"),
                    field("r", 4, Label::Repeated, Type::Int32, ""),
                    field("md", 5, Label::Repeated, Type::Message, ".t2.P2.MdEntry"),
                    field("d", 6, Label::Optional, Type::Double, ""),
                ],
                nested_type: vec![
                    DescriptorProto { name: Some("G".into()), field: vec![field("x", 1, Label::Optional, Type::Int32, "")], ..Default::default() },
                    map_entry("MdEntry", Type::String, Type::Double, ""),
                ],
                ..Default::default()
            };
            let proto2 = FileDescriptorProto {
                name: Some("t2.proto".into()),
                package: Some("t2".into()),
                message_type: vec![message_p2],
                enum_type: vec![enum_p],
                syntax: Some("proto2".into()),
                ..Default::default()
            };
            DescriptorPool::from_file_descriptor_set(FileDescriptorSet { file: vec![proto3, proto2] }).unwrap()
        })
    }

    fn test_schema() -> &'static Schema {
        static SCHEMA: OnceLock<Schema> = OnceLock::new();
        SCHEMA.get_or_init(|| Schema::new(test_pool()))
    }

    fn all() -> MessageDescriptor {
        test_pool().get_message_by_name("t.All").unwrap()
    }

    fn p2() -> MessageDescriptor {
        test_pool().get_message_by_name("t2.P2").unwrap()
    }

    /// Both parsers accept `text` and give equal messages (compared after a
    /// round trip through the wire, where maps compare as maps, and by their
    /// encoding, which tells NaNs apart). Returns both for finer checks.
    fn same_dynamic(descriptor: &MessageDescriptor, text: &str) -> (DynamicMessage, DynamicMessage) {
        let wire = test_schema().transcode(descriptor.full_name(), text).unwrap_or_else(|e| panic!("transcoder rejected {text:?}: {e}"));
        let fast = DynamicMessage::decode(descriptor.clone(), wire.as_slice()).unwrap();
        let slow = reflect(descriptor, text).unwrap_or_else(|| panic!("prost-reflect rejected {text:?}"));
        let slow = DynamicMessage::decode(descriptor.clone(), slow.encode_to_vec().as_slice()).unwrap();
        assert!(fast == slow || fast.encode_to_vec() == slow.encode_to_vec(), "{text:?}:\n{fast:?}\n{slow:?}");
        (fast, slow)
    }

    fn same_all(text: &str) {
        same_dynamic(&all(), text);
    }

    fn f32_bits(message: &DynamicMessage, name: &str) -> u32 {
        message.get_field_by_name(name).unwrap().as_f32().unwrap().to_bits()
    }

    #[test]
    fn message_forms() {
        let n = node(r#"name: "a" op: "Const" attr { key: "k" value { i: 1 } } attr < key: "l" value: < b: true > > attr: { key: "m" value: { f: 2 } }"#);
        assert_eq!(n.attr.len(), 3);
        same::<GraphDef>("tensorflow.GraphDef", "node { name: 'a' op: 'b' } node: [{ name: 'c' op: 'd' }, < name: 'e' op: 'f' >] versions { producer: 5 }");
        same_all("child { child { int32: 1 } r_child { } } r_child <> r_child: [] r_child: [{}, {int32: 2}]");
    }

    #[test]
    fn repeated_fields_and_lists() {
        let n = node(r#"name: "a" input: "x" input: ["y", 'z'] input: [] input: "w""#);
        assert_eq!(n.input, ["x", "y", "z", "w"]);
        for (name, value) in [
            ("double", "1.5"),
            ("float", "-2"),
            ("int32", "-7"),
            ("int64", "-9000000000"),
            ("uint32", "7"),
            ("uint64", "18446744073709551615"),
            ("sint32", "-3"),
            ("sint64", "-3"),
            ("fixed32", "4294967295"),
            ("fixed64", "5"),
            ("sfixed32", "-5"),
            ("sfixed64", "-5"),
            ("bool", "true"),
            ("string", "'s'"),
            ("bytes", r#""\xff""#),
            ("e", "TWO"),
        ] {
            same_all(&format!("r_{name}: {value} r_{name}: [{value}, {value}] r_{name}: {value}; r_{name}: [], r_{name}: [{value}]"));
        }
        same_all("r_float: [0, -0, -0.0, 1e-50, nan, -inf]");
    }

    #[test]
    fn separators_comments_and_whitespace() {
        same_all("int32: 1, int64: 2; string: 'x' # comment { [\n bool: true,\r\n\x0b\x0cchild {uint32: 1;};");
        same_all("# only a comment");
        same_all("");
        same_all("child{int32:1}int64:2 r_int32:[1,2]string:'a'");
    }

    #[test]
    fn integers() {
        for (name, values) in [
            ("int32", &["0", "-0", "2147483647", "-2147483648", "0x7fffffff", "-0x80000000", "017", "-017", "0X1f", "00"][..]),
            ("int64", &["9223372036854775807", "-9223372036854775808", "-0x8000000000000000", "0777"]),
            ("uint32", &["4294967295", "0xffffffff", "0"]),
            ("uint64", &["18446744073709551615", "0xFFFFFFFFFFFFFFFF"]),
            ("sint32", &["-2147483648", "2147483647", "-1"]),
            ("sint64", &["-9223372036854775808", "9223372036854775807"]),
            ("fixed32", &["4294967295", "1"]),
            ("fixed64", &["18446744073709551615"]),
            ("sfixed32", &["-2147483648", "2147483647"]),
            ("sfixed64", &["-9223372036854775808"]),
            ("e", &["ONE", "2", "-1", "99", "-2147483648", "0x1"]),
        ] {
            for value in values {
                same_all(&format!("{name}: {value}"));
                if let Some(magnitude) = value.strip_prefix('-') {
                    same_all(&format!("{name}: - # a comment\n {magnitude}"));
                }
            }
        }
        for (name, value) in [
            ("int32", "2147483648"),
            ("int32", "-2147483649"),
            ("int32", "0x80000000"),
            ("int64", "9223372036854775808"),
            ("int64", "-9223372036854775809"),
            ("uint32", "4294967296"),
            ("uint32", "-0"),
            ("uint64", "18446744073709551616"),
            ("uint64", "-1"),
            ("sfixed32", "2147483648"),
            ("int32", "1.0"),
            ("int32", "1e3"),
            ("int32", "--1"),
            ("int32", "inf"),
            ("e", "THREE"),
            ("e", "1.0"),
            ("e", "'ONE'"),
        ] {
            both_reject(&all(), &format!("{name}: {value}"));
        }
    }

    #[test]
    fn bools() {
        for value in ["true", "false", "True", "False", "t", "f", "1", "0", "0x1", "01", "00"] {
            same_all(&format!("bool: {value}"));
        }
        for value in ["TRUE", "2", "-1", "-0", "1.0", "yes", "'true'"] {
            both_reject(&all(), &format!("bool: {value}"));
        }
    }

    #[test]
    fn floats() {
        let values = [
            "1",
            "-1",
            "0",
            "1.5",
            "-1.5",
            ".5",
            "5.",
            "1e5",
            "1E5",
            "1e+5",
            "1.5e-3",
            "-.5e2",
            "1.e2",
            "1f",
            "1.5F",
            "0f",
            "5.f",
            "0.5e1f",
            "0e0",
            "00.5",
            "08.5",
            "017e1",
            "inf",
            "-inf",
            "INF",
            "Infinity",
            "-infinity",
            "nan",
            "-nan",
            "NaN",
            "1e400",
            "-1e400",
            "1e-400",
            "3.4028235e38",
            "3.5e38",
            "1e-50",
            "123456789012345678901234567890",
            "0.1",
        ];
        for value in values {
            same_all(&format!("double: {value}"));
            same_all(&format!("float: {value}"));
            same_all(&format!("o_float: {value}"));
            same::<GpuOptions>("tensorflow.GPUOptions", &format!("per_process_gpu_memory_fraction: {value}"));
            same::<AttrValue>("tensorflow.AttrValue", &format!("f: {value}"));
            same::<TensorProto>("tensorflow.TensorProto", &format!("float_val: {value} double_val: {value}"));
        }
        for value in ["0x10", "010", "- 'x'", "infinityy", "e5", "1e", "1.5e", "1.5.5", "1ff", "-", "1_0"] {
            both_reject(&all(), &format!("double: {value}"));
        }
    }

    #[test]
    fn negative_zero_as_prost_reflect() {
        // Without presence -0.0 is the default value: not encoded, so +0.0.
        let (fast, slow) = same_dynamic(&all(), "float: -0.0 double: -0 r_float: -0.0 o_float: -0.0");
        for name in ["float", "o_float"] {
            assert_eq!(f32_bits(&fast, name), f32_bits(&slow, name), "{name}");
        }
        assert_eq!(f32_bits(&fast, "o_float"), (-0.0f32).to_bits());
        let options = same::<GpuOptions>("tensorflow.GPUOptions", "per_process_gpu_memory_fraction: -0.0");
        assert_eq!(options.per_process_gpu_memory_fraction.to_bits(), 0);
        // A default value does not count as set: a second value is fine.
        same_all("float: -0.0 float: 2");
        same_all("int32: 0 int32: 5");
        same_all("string: '' string: 'x'");
        same_all("e: ZERO e: ONE");
        same_all("bool: false bool: true");
        // Map entries too (proto3 map entry fields have no presence).
        let (fast, slow) = same_dynamic(&all(), "m_sf { key: 'a' value: -0.0 }");
        let value = |m: &DynamicMessage| {
            let map = m.get_field_by_name("m_sf").unwrap().as_map().unwrap().clone();
            map.values().next().unwrap().as_f32().unwrap().to_bits()
        };
        assert_eq!(value(&fast), value(&slow));
        assert_eq!(value(&fast), 0);
    }

    #[test]
    fn set_twice() {
        for text in [
            "int32: 1 int32: 2",
            "int32: 1 int32: 0",
            "int32: 1 int32: 1",
            "string: 'a' string: ''",
            "child {} child {}",
            "child {} child: { int32: 1 }",
            "o_int32: 0 o_string: ''",
            "o_int32: 0 o_int32: 0",
            "o_child {} o_float: 1",
            "opt: 0 opt: 0",
            "child { int32: 1 int32: 2 }",
            "m_si { key: 'a' key: 'b' }",
            "m_si { value: 1 value: 2 }",
        ] {
            both_reject(&all(), text);
        }
        same_all("opt: 0 o_int32: 0 child {} r_child {} r_child {}");
        same_all("m_si { key: '' key: 'b' value: 0 value: 3 }");
        // proto2: every field has presence.
        for text in ["a: 0 a: 0", "p: P_FIRST p: P_FIRST", "d: 0 d: 1"] {
            both_reject(&p2(), text);
        }
        same_dynamic(&p2(), "a: 0 p: P_OTHER d: -0.0 r: [1, 2] md { key: '' value: 0 }");
        both_reject(&tf("tensorflow.NodeDef"), "name: 'a' name: 'b'");
        both_reject(&tf("tensorflow.AttrValue"), "i: 1 s: 'x'");
        both_reject(&tf("tensorflow.GraphDef"), "versions {} versions {}");
    }

    #[test]
    fn maps() {
        same_all("m_si { key: 'a' value: 1 } m_si { key: 'b' value: 2 } m_si { key: 'a' value: 3 }");
        same_all("m_si { key: 'a' } m_si { value: 4 } m_si: [{ key: 'x' value: 5 }, < key: 'y' >] m_si {}");
        same_all("m_ia { key: -1 value { int32: 1 m_ia { key: 2 } } } m_ia { key: 0 }");
        same_all("m_bs { key: true value: 'x' } m_bs { key: t }");
        same_dynamic(&p2(), "md { key: 'a' value: 1.5 } md { key: 'a' value: nan }");
        let n = node("name: 'n' attr { key: 'a' value { s: 'x' } } attr { key: 'a' value { i: 2 } } attr { key: 'b' }");
        assert_eq!(n.attr.len(), 2);
        same::<GraphDebugInfo>(
            "tensorflow.GraphDebugInfo",
            "files: 'f.py' frames_by_id { key: 18446744073709551615 value { line: 0 func: '' } } name_to_trace_id { key: 'n' value: 0 } traces { key: 't' value { frame_id: [1, 2] file_line_cols { col: 3 } } }",
        );
        both_reject(&all(), "m_si { key: 1 }");
        both_reject(&all(), "m_si { other: 1 }");
    }

    #[test]
    fn strings_and_bytes() {
        let literals = [
            r#""plain""#,
            r#"'single "quoted"'"#,
            r#""double 'quoted'""#,
            r#""\n\t\r\a\b\f\v\?\\\'\"""#,
            r#""\x41\x4a\X4B\x4""#,
            r#""\x414""#,
            r#""\101\60\0\1234\177""#,
            r#""\u00e9\u4e2d\U0001F600\uFFFF""#,
            r#""é中😀 raw""#,
            r#""a" 'b' "c""#,
            "\"a\" # comment\n 'b'",
            r#""""#,
            r#""" """#,
            r#""\xc3" "\xa9""#,
            "\"tab\tand\rcarriage\"",
        ];
        for literal in literals {
            same_all(&format!("string: {literal}"));
            same_all(&format!("bytes: {literal}"));
            same_all(&format!("r_string: {literal} r_bytes: [{literal}, {literal}]"));
            same_all(&format!("o_string: {literal}"));
        }
        same_all(r#"bytes: "\xff\200\x00" r_bytes: '\xc3'"#);
        same_all(r#"string: "a"int32: 1"#);
        same::<TensorProto>("tensorflow.TensorProto", r#"dtype: DT_FLOAT tensor_content: "\000\000\200?\315\314L>" string_val: "\377""#);
        for literal in [
            r#""\xff""#,
            r#""\xc3" "a""#,
            r#""\777""#,
            r#""\400""#,
            r#""\x""#,
            r#""\q""#,
            r#""\u12""#,
            r#""\ud800""#,
            r#""\U00110000""#,
            r#""\UFFFFFFFF""#,
            "\"new\nline\"",
            "\"nul\0\"",
            r#""unterminated"#,
            r#"'mixed""#,
            r#""a" b"#,
        ] {
            both_reject(&all(), &format!("string: {literal}"));
        }
        both_reject(&all(), r#"bytes: "\q""#);
        both_reject(&all(), "bytes: 1");
    }

    #[test]
    fn field_names_follow_the_descriptor() {
        same_all("CamelName: 1");
        both_reject(&all(), "camelname: 1");
        both_reject(&all(), "Int32: 1");
        both_reject(&all(), "no_such_field: 1");
    }

    #[test]
    fn syntax_errors() {
        for text in [
            "int32 1",
            "int32: 1,,",
            ", int32: 1",
            "}",
            "child { int32: 1",
            "child { int32: 1 >",
            "child < int32: 1 }",
            "child: 1",
            "int32 { }",
            "child [ {} ]",
            "r_child [ {} ]",
            "r_int32: [1, ]",
            "r_int32: [1 2]",
            "r_int32: [,]",
            "int32: [1]",
            "child { , }",
            "child {} }",
            ": 1",
            "int32: 1 @",
            "int32: 10int64: 1",
            "int32: 1 .",
            "int32: 0x",
            "é: 1",
            "int32: 1 /",
        ] {
            both_reject(&all(), text);
        }
    }

    #[test]
    fn rejected_for_the_fallback() {
        // Extensions, Any and groups: prost-reflect's business.
        let schema = test_schema();
        for text in ["[t.ext]: 1", "[type.googleapis.com/t.All] { }", "G { x: 1 }", "g { x: 1 }"] {
            assert!(schema.transcode("t2.P2", text).is_err(), "{text}");
        }
        assert!(reflect(&p2(), "G { x: 1 }").is_some(), "prost-reflect takes groups by their type name");
        // Lexical oddities that prost-reflect splits into several tokens.
        for text in ["double: 1.5e r_int32: 1", "double: 1.5.5", "double: 1.5int32: 2", "int32: 09"] {
            assert!(schema.transcode("t.All", text).is_err(), "{text}");
        }
        assert!(reflect(&all(), "double: 1.5int32: 2").is_some());
    }

    #[test]
    fn nesting_is_bounded() {
        let nested = |levels: usize| format!("{}{}", "child { ".repeat(levels), "} ".repeat(levels));
        same_all(&nested(TEXT_NESTING_LIMIT));
        let deep = nested(TEXT_NESTING_LIMIT + 1);
        assert!(test_schema().transcode("t.All", &deep).is_err());
        let deeper = nested(100_000);
        assert_eq!(test_schema().transcode("t.All", &deeper).unwrap_err().reason, "nested too deep");
    }

    #[test]
    fn padded_lengths_decode() {
        // Field 17, then its length 0 in five bytes.
        assert_eq!(test_schema().transcode("t.All", "child {}").unwrap(), [0x8a, 0x01, 0x80, 0x80, 0x80, 0x80, 0x00]);
        same_all("child {}");
        // Messages over 127 bytes, nested.
        let long = "x".repeat(300);
        let n = node(&format!("name: '{long}' attr {{ key: '{long}' value {{ list {{ s: ['{long}', '{long}'] }} }} }}"));
        assert!(n.attr[&long].value.is_some());
    }

    /// Every text fixture: the transcoder takes it, and gives prost-reflect's message.
    #[test]
    fn fixtures_match_prost_reflect() {
        let mut files = vec![];
        let mut dirs = vec![Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "pbtxt") {
                    files.push(path);
                }
            }
        }
        assert!(files.len() >= 10, "{files:?}");
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy();
            if name.starts_with("run_meta") {
                same::<RunMetadata>("tensorflow.RunMetadata", &text);
            } else {
                let graph = same::<GraphDef>("tensorflow.GraphDef", &text);
                assert!(!graph.node.is_empty(), "{}", path.display());
            }
        }
    }
}
