//! The same pass over a PyTorch trace with several JSON approaches: visit
//! every event, intern its name, sum `dur`, count `args["External id"]`.
//!
//!     cargo run --release -- MODE TRACE.json
//!
//! MODE: pull (rtfprof's pull parser, streaming through a 1 MiB buffer),
//! serde-value (serde_json DOM from the mapped file), serde-slice (serde_json
//! visitor over the mapped file, names borrowed), serde-reader (the visitor
//! over a buffered reader), simd (simd-json's serde visitor over a mutable
//! copy of the file), sonic (sonic-rs with the visitor over the mapped file).

use std::collections::HashMap;
use std::fmt;
use std::time::Instant;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

#[path = "../../../src/inputs/pytorch/json.rs"]
#[allow(dead_code)]
mod json;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Default, Debug)]
struct Summary {
    events: u64,
    dur_us: f64,
    external_ids: u64,
    names: HashMap<Box<str>, u32>,
}

impl Summary {
    fn name(&mut self, s: &str) {
        if !self.names.contains_key(s) {
            let n = self.names.len() as u32;
            self.names.insert(s.into(), n);
        }
    }
}

// ---- serde: one visitor for serde_json, simd-json and sonic-rs ----

struct Top<'a>(&'a mut Summary);
struct Events<'a>(&'a mut Summary);
struct Event<'a>(&'a mut Summary);
struct Args<'a>(&'a mut Summary);
struct Name<'a>(&'a mut Summary);

enum Key {
    Name,
    Dur,
    Args,
    ExternalId,
    Other,
}

impl<'de> serde::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, s: &str) -> Result<Key, E> {
                Ok(match s {
                    "name" => Key::Name,
                    "dur" => Key::Dur,
                    "args" => Key::Args,
                    "External id" => Key::ExternalId,
                    "traceEvents" => Key::Other,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "traceEvents" {
                map.next_value_seed(Events(self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Event(self.0))?.is_some() {}
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Event<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Event<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.events += 1;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Name => map.next_value_seed(Name(self.0))?,
                Key::Dur => self.0.dur_us += map.next_value::<f64>()?,
                Key::Args => map.next_value_seed(Args(self.0))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Args<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Args<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("args")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key>()? {
            if let Key::ExternalId = key {
                map.next_value::<u64>()?;
                self.0.external_ids += 1;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Name<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Name<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a name")
    }
    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.0.name(s);
        Ok(())
    }
}

// ---- the pull parser ----

fn pull<R: std::io::Read>(src: R, s: &mut Summary) -> Result<(), json::SyntaxError> {
    let mut p = json::Parser::new(src);
    let mut dur_ns: i64 = 0;
    p.begin_object()?;
    let mut first = true;
    while let Some(key) = p.next_key(&mut first)? {
        if key != b"traceEvents" {
            p.skip()?;
            continue;
        }
        p.begin_array()?;
        let mut first = true;
        while p.next_element(&mut first)? {
            s.events += 1;
            p.begin_object()?;
            let mut first = true;
            while let Some(key) = p.next_key(&mut first)? {
                match key {
                    b"name" => {
                        let name = p.string()?;
                        s.name(&String::from_utf8_lossy(name));
                    }
                    b"dur" => {
                        let text = p.number()?;
                        dur_ns += ns(text);
                    }
                    b"args" => {
                        p.begin_object()?;
                        let mut first = true;
                        while let Some(key) = p.next_key(&mut first)? {
                            if key == b"External id" {
                                p.number()?;
                                s.external_ids += 1;
                            } else {
                                p.skip()?;
                            }
                        }
                    }
                    _ => p.skip()?,
                }
            }
        }
    }
    s.dur_us = dur_ns as f64 / 1000.0;
    Ok(())
}

fn ns(text: &[u8]) -> i64 {
    let (whole, frac) = match text.iter().position(|&b| b == b'.') {
        Some(d) => (&text[..d], &text[d + 1..]),
        None => (text, &b""[..]),
    };
    let mut n: i64 = 0;
    for &d in whole {
        n = n * 10 + i64::from(d - b'0');
    }
    n *= 1000;
    let mut scale = 100;
    for &d in frac.iter().take(3) {
        n += i64::from(d - b'0') * scale;
        scale /= 10;
    }
    n
}

fn main() {
    let mode = std::env::args().nth(1).expect("MODE");
    let path = std::env::args().nth(2).expect("TRACE");
    let file = std::fs::File::open(&path).unwrap();
    let start = Instant::now();
    let mut s = Summary::default();
    match mode.as_str() {
        "pull" => pull(file, &mut s).unwrap(),
        "serde-value" => {
            let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
            let v: serde_json::Value = serde_json::from_slice(&map).unwrap();
            for e in v["traceEvents"].as_array().unwrap() {
                s.events += 1;
                if let Some(n) = e["name"].as_str() {
                    s.name(n);
                }
                s.dur_us += e["dur"].as_f64().unwrap_or(0.0);
                if e["args"]["External id"].is_u64() {
                    s.external_ids += 1;
                }
            }
        }
        "serde-slice" => {
            let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
            let mut d = serde_json::Deserializer::from_slice(&map);
            Top(&mut s).deserialize(&mut d).unwrap();
        }
        "serde-reader" => {
            let mut d = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(1 << 20, file));
            Top(&mut s).deserialize(&mut d).unwrap();
        }
        "simd" => {
            let mut bytes = std::fs::read(&path).unwrap();
            let mut d = simd_json::Deserializer::from_slice(&mut bytes).unwrap();
            Top(&mut s).deserialize(&mut d).unwrap();
        }
        "sonic" => {
            let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
            let mut d = sonic_rs::Deserializer::from_slice(&map);
            Top(&mut s).deserialize(&mut d).unwrap();
        }
        other => panic!("unknown mode {other}"),
    }
    eprintln!(
        "{mode}: {:.2} s, {} events, {} names, {} External ids, dur {:.3} us",
        start.elapsed().as_secs_f64(),
        s.events,
        s.names.len(),
        s.external_ids,
        s.dur_us
    );
}
