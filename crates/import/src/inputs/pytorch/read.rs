//! The trace's JSON, streamed into a [`Trace`].
//!
//! Tolerated, as PyTorch's own readers would: a trace that is a bare array
//! of events (chrome's JSON Array Format), raw control characters and
//! invalid UTF-8 in strings (kept; invalid bytes become U+FFFD), `ts`/`dur`
//! as integers or floats (older Kineto wrote microseconds that way), a
//! complete event without `dur` (0), unknown phases, categories and args
//! (kept as `Other` or skipped). Errors: anything that is not JSON, a top
//! level without `traceEvents`, an event that is not an object, an `X`
//! event without `ts`, a time or id that is not a number or does not fit
//! 64 bits.

use std::collections::hash_map::Entry;
use std::io::Read;
use std::num::NonZeroU64;

use super::json::{Next, Parser, SyntaxError};
use super::pool::OrderedPool;
use super::{Category, Event, Flow, FlowPhase, Id, KernelLaunch, MemoryEvent, PythonFrame, Sym, Thread, ThreadId, Trace};

pub(super) enum ReadError {
    Io(std::io::Error),
    Invalid(String),
}

pub(super) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How `traceEvents` is split to be parsed on several threads (see
/// [`Builder::events_split`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Split {
    /// Bytes of text a segment (at least; it ends at the next boundary).
    pub segment: usize,
    /// Threads that parse segments (beside the one that reads).
    pub workers: usize,
}

/// 4 MiB: a few milliseconds of parsing, so the two ends of the array
/// keep a worker idle only that long, and a few hundred segments' string
/// tables to merge for a GB. `bench/pytorch.md` has the timings.
pub(super) const SEGMENT: usize = 4 << 20;

impl Split {
    /// As many workers as there are cores (up to 8); none on one core.
    pub fn auto() -> Option<Split> {
        static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        (cores >= 2).then(|| Split { segment: SEGMENT, workers: cores.min(8) })
    }
}

/// Reads a whole trace from `src`, decompressing it on the fly if it starts
/// as gzip does.
pub(super) fn read_file<R: Read>(src: R) -> Result<Trace, ReadError> {
    read_file_split(src, Split::auto())
}

/// [`read_file`], with `traceEvents` parsed on one thread (`None`) or split
/// as `split` says.
pub(super) fn read_file_split<R: Read>(mut src: R, split: Option<Split>) -> Result<Trace, ReadError> {
    let mut head = [0u8; 2];
    let mut n = 0;
    while n < head.len() {
        match src.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
    if n == 0 {
        return Err(ReadError::Invalid("is empty".into()));
    }
    let src = (&head[..n]).chain(src);
    if head[..n] == GZIP_MAGIC {
        let mut parser = Parser::new(flate2::read::MultiGzDecoder::new(src));
        let result = parse(&mut parser, split);
        if result.is_err() {
            // Corrupt compressed data reads as bad JSON before its checksum
            // fails: the stream's error comes first, wherever it is
            // (however far the parser had read ahead).
            parser.drain();
        }
        // A gzip stream's errors are the file's content, not I/O.
        if let Some(e) = parser.take_read_error() {
            return Err(ReadError::Invalid(format!("not a valid gzip stream ({e})")));
        }
        result.map_err(ReadError::Invalid)
    } else {
        let mut parser = Parser::new(src);
        let result = parse(&mut parser, split);
        // (Not read to the end after an error, unlike gzip: a plain file's
        // read errors are the disk's, and the rest may be gigabytes. One
        // within the split reading's read-ahead, past a JSON error, is
        // reported instead of it.)
        if let Some(e) = parser.take_read_error() {
            return Err(ReadError::Io(e));
        }
        result.map_err(ReadError::Invalid)
    }
}

fn syntax(e: SyntaxError) -> String {
    format!("not a Kineto trace (invalid JSON at byte {}: {})", e.offset, e.message)
}

fn parse<R: Read>(p: &mut Parser<R>, split: Option<Split>) -> Result<Trace, String> {
    let mut b = Builder::default();
    let mut saw_events = false;
    match p.peek().map_err(syntax)? {
        Next::Object => {
            p.begin_object().map_err(syntax)?;
            let mut first = true;
            loop {
                let key = match p.next_key(&mut first).map_err(syntax)? {
                    None => break,
                    Some(b"traceEvents") => TopKey::Events,
                    Some(b"baseTimeNanoseconds") => TopKey::BaseTime,
                    Some(b"profile_memory") => TopKey::ProfileMemory,
                    Some(b"distributedInfo") => TopKey::DistributedInfo,
                    Some(_) => TopKey::Other,
                };
                match key {
                    TopKey::Events => {
                        if p.peek().map_err(syntax)? != Next::Array {
                            return Err("not a Kineto trace (traceEvents is not an array)".into());
                        }
                        b.events(p, split)?;
                        saw_events = true;
                    }
                    TopKey::BaseTime if p.peek().map_err(syntax)? == Next::Number => {
                        let text = p.number().map_err(syntax)?;
                        b.trace.base_time_ns = Some(integer(text).ok_or("baseTimeNanoseconds is not a 64-bit integer")?);
                    }
                    TopKey::ProfileMemory => {
                        b.trace.profile_memory = match p.peek().map_err(syntax)? {
                            Next::Number => p.number().map_err(syntax)? != b"0",
                            Next::True | Next::False => p.boolean().map_err(syntax)?,
                            _ => {
                                p.skip().map_err(syntax)?;
                                false
                            }
                        }
                    }
                    TopKey::DistributedInfo => b.trace.distributed = distributed_info(p).map_err(syntax)?,
                    _ => p.skip().map_err(syntax)?,
                }
            }
        }
        Next::Array => {
            b.events(p, split)?;
            saw_events = true;
        }
        _ => return Err("not a Kineto trace (not a JSON object)".into()),
    }
    if !p.at_end() {
        return Err(format!("not a Kineto trace (text after the JSON value at byte {})", p.offset()));
    }
    if !saw_events {
        return Err("not a Kineto trace (no traceEvents)".into());
    }
    Ok(b.finish())
}

enum TopKey {
    Events,
    BaseTime,
    ProfileMemory,
    DistributedInfo,
    Other,
}

/// `distributedInfo`'s `rank`, `world_size` and `backend`; a value of
/// another kind (or out of range) is left out, as is anything that is not
/// an object.
fn distributed_info<R: Read>(p: &mut Parser<R>) -> Result<Option<super::Distributed>, SyntaxError> {
    if p.peek()? != Next::Object {
        p.skip()?;
        return Ok(None);
    }
    let mut info = super::Distributed::default();
    p.begin_object()?;
    let mut first = true;
    while let Some(key) = p.next_key(&mut first)? {
        let field = match key {
            b"rank" => Some(&mut info.rank),
            b"world_size" => Some(&mut info.world_size),
            b"backend" => None,
            _ => {
                p.skip()?;
                continue;
            }
        };
        match (field, p.peek()?) {
            (Some(field), Next::Number) => *field = integer(p.number()?),
            (None, Next::String) => info.backend = Some(String::from_utf8_lossy(p.string()?).into_owned()),
            _ => p.skip()?,
        }
    }
    Ok(Some(info))
}

#[derive(Default)]
struct Builder {
    trace: Trace,
    threads: rustc_hash::FxHashMap<(Id, Id), ThreadId>,
    /// Reused for `Input Dims`.
    shapes: String,
    /// Where each launch configuration is in `trace.kernel_launches`.
    launches: rustc_hash::FxHashMap<KernelLaunch, u32>,
}

/// The fields of one event, before its phase says what it is.
#[derive(Default)]
struct Raw {
    ph: u8,
    name: Option<Sym>,
    cat: Option<Sym>,
    category: Option<Category>,
    pid: Option<Id>,
    tid: Option<Id>,
    ts: Option<i64>,
    dur: Option<i64>,
    id: Option<u64>,
    args: Args,
}

#[derive(Default)]
struct Args {
    external_id: Option<u64>,
    correlation: Option<u64>,
    device: Option<i64>,
    stream: Option<i64>,
    python_id: Option<u64>,
    python_parent: Option<u64>,
    input_shapes: Option<Sym>,
    bytes: Option<i64>,
    /// `bytes` (lower case): what a `gpu_memcpy` moved.
    copy_bytes: Option<i64>,
    device_type: Option<i64>,
    device_id: Option<i64>,
    addr: Option<u64>,
    total_allocated: Option<i64>,
    total_reserved: Option<i64>,
    name: Option<Sym>,
    /// A kernel's `grid`, `block`, `registers per thread`, `shared memory`
    /// and `est. achieved occupancy %`.
    launch: KernelLaunch,
}

/// A segment of `traceEvents` for a worker: `buf[..len]`, at offset `base`
/// of the input, the `n`th. The first starts after the `[`; the others
/// after a `,` (an element is next).
struct Job {
    base: u64,
    buf: Vec<u8>,
    len: usize,
    first: bool,
    /// The segment runs to the end of the input.
    last: bool,
}

/// A segment parsed on its own, into a builder of its own.
struct Parsed {
    job: Job,
    local: Builder,
    /// Elements of the array read (whatever their phase).
    elements: usize,
    end: SegmentEnd,
}

enum SegmentEnd {
    /// After a `,` at the very end of the segment: the next one starts
    /// where the sequential parser would be.
    Boundary,
    /// The array's `]` ends in the segment, before `buf[k]`.
    Close(usize),
    /// Anything else (an error, an element cut by the segment's end): the
    /// segment is read again on one thread, from its start.
    Other,
}

impl Builder {
    fn events<R: Read>(&mut self, p: &mut Parser<R>, split: Option<Split>) -> Result<(), String> {
        p.begin_array().map_err(syntax)?;
        let (mut index, mut first) = (0usize, true);
        if let Some(split) = split {
            match self.events_split(p, split) {
                None => return Ok(()),
                Some(resume) => (index, first) = resume,
            }
        }
        if !first {
            // After a ',': an element is next.
            self.event_at(p, index)?;
            index += 1;
        }
        while p.next_element(&mut first).map_err(syntax)? {
            self.event_at(p, index)?;
            index += 1;
        }
        Ok(())
    }

    /// The `index`th element of `traceEvents`.
    fn event_at<R: Read>(&mut self, p: &mut Parser<R>, index: usize) -> Result<(), String> {
        let at = p.offset();
        self.event(p).map_err(|e| match e {
            EventError::Syntax(e) => syntax(e),
            EventError::Field(message) => format!("event {index} at byte {at}: {message}"),
        })
    }

    /// Reads `traceEvents` (after its `[`) on `split.workers` threads:
    /// this one cuts the text into segments at likely event boundaries
    /// (reading or decompressing as it goes) and merges their events in
    /// file order; the workers parse segments, each into a builder of its
    /// own (strings and threads numbered in order of appearance there, so
    /// that merging them in order numbers them as one pass would). A
    /// segment counts once the one before it ended exactly at its start;
    /// at the first that does not (a guess inside a string, an error, the
    /// end of the input), its text and the later ones' go back to the
    /// parser, and `Some((elements read, whether no element was))` says
    /// that the rest is to be read on one thread from there, which gives
    /// the same events and the same errors as reading it all so. `None`:
    /// the array was read, and `p` is after its `]`. `bench/pytorch.md`
    /// has the timings.
    fn events_split<R: Read>(&mut self, p: &mut Parser<R>, split: Split) -> Option<(usize, bool)> {
        let mut buf = Vec::new();
        let (base, len, last) = p.take_segment(split.segment, &mut buf);
        if last {
            // Less than a segment: not worth a thread.
            p.unread(base, &[&buf[..len]]);
            return Some((0, true));
        }
        let first = Job { base, buf, len, first: true, last };
        let work = parse_segment;
        std::thread::scope(|scope| {
            let mut pool = OrderedPool::start(scope, split.workers, &work);
            if pool.workers() == 0 {
                p.unread(first.base, &[&first.buf[..first.len]]);
                return Some((0, true));
            }
            pool.send(first);
            let mut input_done = false;
            let mut spare: Vec<Vec<u8>> = Vec::new();
            let mut index = 0usize;
            loop {
                while !input_done && pool.pending() < 2 * pool.workers() {
                    let mut buf = spare.pop().unwrap_or_default();
                    let (base, len, last) = p.take_segment(split.segment, &mut buf);
                    pool.send(Job { base, buf, len, first: false, last });
                    input_done = last;
                }
                let parsed = pool.next().expect("a segment is out until the array ends");
                let fits = (self.trace.events.len() + parsed.local.trace.events.len()) as u64 <= 1 << 32;
                match parsed.end {
                    SegmentEnd::Boundary if fits && !parsed.job.last => {
                        index += parsed.elements;
                        self.merge(parsed.local);
                        spare.push(parsed.job.buf);
                    }
                    SegmentEnd::Close(k) if fits => {
                        self.merge(parsed.local);
                        let job = parsed.job;
                        let rest = pool.rest();
                        let mut pieces = vec![&job.buf[k..job.len]];
                        pieces.extend(rest.iter().map(|r| &r.job.buf[..r.job.len]));
                        p.unread(job.base + k as u64, &pieces);
                        return None;
                    }
                    _ => {
                        let job = parsed.job;
                        let rest = pool.rest();
                        let mut pieces = vec![&job.buf[..job.len]];
                        pieces.extend(rest.iter().map(|r| &r.job.buf[..r.job.len]));
                        p.unread(job.base, &pieces);
                        return Some((index, job.first));
                    }
                }
            }
        })
    }

    /// Adds the events of `local`, a builder that read the array's next
    /// elements, as if this one had read them: its strings and threads in
    /// its order of appearance, after this one's.
    fn merge(&mut self, local: Builder) {
        let local = local.trace;
        let syms: Vec<Sym> = local.strings.list[1..].iter().map(|s| self.trace.strings.intern(s)).collect();
        let sym = |s: Sym| syms[s.0.get() as usize - 1];
        let id = |id: Id| match id {
            Id::Num(n) => Id::Num(n),
            Id::Name(s) => Id::Name(sym(s)),
        };
        let threads: Vec<ThreadId> = local
            .threads
            .iter()
            .map(|t| {
                let thread = self.thread(Some(id(t.pid)), Some(id(t.tid)));
                if let Some(name) = t.name {
                    self.trace.threads[thread.0 as usize].name = Some(sym(name));
                }
                thread
            })
            .collect();
        let thread = |t: ThreadId| threads[t.0 as usize];
        let offset = self.trace.events.len() as u32;
        if self.trace.profiler_span.is_none() {
            self.trace.profiler_span = local.profiler_span.map(|i| i + offset);
        }
        let t = &mut self.trace;
        t.events.extend(local.events.iter().map(|e| Event {
            name: sym(e.name),
            cat: sym(e.cat),
            thread: thread(e.thread),
            input_shapes: e.input_shapes.map(sym),
            ..*e
        }));
        t.python_frames.extend(local.python_frames.iter().map(|f| PythonFrame { event: f.event + offset, ..*f }));
        t.copy_bytes.extend(local.copy_bytes.iter().map(|&(i, bytes)| (i + offset, bytes)));
        let launches: Vec<u32> = local.kernel_launches.iter().map(|&l| self.launch_id(l)).collect();
        let t = &mut self.trace;
        t.kernel_launch_of.extend(local.kernel_launch_of.iter().map(|&(i, l)| (i + offset, launches[l as usize])));
        t.memory.extend(local.memory.iter().map(|m| MemoryEvent { thread: thread(m.thread), ..*m }));
        t.flows.extend(local.flows.iter().map(|f| Flow { cat: sym(f.cat), thread: thread(f.thread), ..*f }));
        t.process_names.extend(local.process_names.iter().map(|&(pid, name)| (id(pid), sym(name))));
    }

    fn event<R: Read>(&mut self, p: &mut Parser<R>) -> Result<(), EventError> {
        if p.peek()? != Next::Object {
            return Err(EventError::Field("not an object".into()));
        }
        p.begin_object()?;
        let mut raw = Raw::default();
        let mut first = true;
        while let Some(key) = p.next_key(&mut first)? {
            match key {
                b"ph" => {
                    let ph = p.string_or_skip()?;
                    raw.ph = ph.and_then(|s| s.first().copied()).unwrap_or(0);
                }
                b"name" => raw.name = p.string_or_skip()?.map(|s| self.trace.strings.intern_bytes(s)),
                b"cat" => {
                    if let Some(s) = p.string_or_skip()? {
                        raw.category = Some(Category::of(s));
                        raw.cat = Some(self.trace.strings.intern_bytes(s));
                    }
                }
                b"pid" => raw.pid = self.id_value(p, "pid")?,
                b"tid" => raw.tid = self.id_value(p, "tid")?,
                b"ts" => raw.ts = time(p, "ts")?,
                b"dur" => raw.dur = time(p, "dur")?,
                b"id" => raw.id = id(p, "id")?,
                b"args" => self.args(p, &mut raw.args)?,
                _ => p.skip()?,
            }
        }
        self.add(raw)
    }

    fn args<R: Read>(&mut self, p: &mut Parser<R>, args: &mut Args) -> Result<(), EventError> {
        if p.peek()? != Next::Object {
            return Ok(p.skip()?);
        }
        p.begin_object()?;
        let mut first = true;
        while let Some(key) = p.next_key(&mut first)? {
            match key {
                b"External id" => args.external_id = id(p, "External id")?,
                // torch 1.8/1.9's Kineto events; an op's own `External id`
                // wins where both are written.
                b"external id" if args.external_id.is_none() => args.external_id = id(p, "external id")?,
                b"correlation" => args.correlation = id(p, "correlation")?,
                b"device" => args.device = int(p, "device")?,
                b"stream" => args.stream = int(p, "stream")?,
                b"Python id" => args.python_id = id(p, "Python id")?,
                b"Python parent id" => args.python_parent = id(p, "Python parent id")?,
                b"Input Dims" => args.input_shapes = self.input_shapes(p)?,
                b"Bytes" => args.bytes = int(p, "Bytes")?,
                b"bytes" => args.copy_bytes = int(p, "bytes")?,
                b"Device Type" => args.device_type = int(p, "Device Type")?,
                b"Device Id" => args.device_id = int(p, "Device Id")?,
                b"Addr" => args.addr = id(p, "Addr")?,
                b"Total Allocated" => args.total_allocated = int(p, "Total Allocated")?,
                b"Total Reserved" => args.total_reserved = int(p, "Total Reserved")?,
                b"name" => args.name = p.string_or_skip()?.map(|s| self.trace.strings.intern_bytes(s)),
                b"grid" => args.launch.grid = dims(p)?,
                b"block" => args.launch.block = dims(p)?,
                b"registers per thread" => args.launch.registers_per_thread = count(p)?,
                b"shared memory" => args.launch.shared_memory = count(p)?,
                b"est. achieved occupancy %" => args.launch.occupancy_pct = finite(p)?,
                _ => p.skip()?,
            }
        }
        Ok(())
    }

    /// `Input Dims` as torch's `str(input_shapes)`: `[[8, 16], [], []]`.
    /// torch's `shapes()` holds a list of sizes per input, and `[]` for an
    /// input that is not one tensor (a TensorList, written as a list of
    /// lists, or a scalar).
    fn input_shapes<R: Read>(&mut self, p: &mut Parser<R>) -> Result<Option<Sym>, EventError> {
        if p.peek()? != Next::Array {
            p.skip()?;
            return Ok(None);
        }
        let mut out = std::mem::take(&mut self.shapes);
        out.clear();
        out.push('[');
        p.begin_array()?;
        let mut first = true;
        let mut n = 0;
        while p.next_element(&mut first)? {
            if n > 0 {
                out.push_str(", ");
            }
            n += 1;
            out.push('[');
            if p.peek()? == Next::Array {
                let mark = out.len();
                let mut sizes = 0;
                let mut tensor = true;
                p.begin_array()?;
                let mut first = true;
                while p.next_element(&mut first)? {
                    if tensor && p.peek()? == Next::Number {
                        if sizes > 0 {
                            out.push_str(", ");
                        }
                        sizes += 1;
                        out.push_str(&String::from_utf8_lossy(p.number()?));
                    } else {
                        tensor = false;
                        p.skip()?;
                    }
                }
                if !tensor {
                    out.truncate(mark);
                }
            } else {
                p.skip()?;
            }
            out.push(']');
        }
        out.push(']');
        let sym = self.trace.strings.intern(&out);
        self.shapes = out;
        Ok(Some(sym))
    }

    fn id_value<R: Read>(&mut self, p: &mut Parser<R>, field: &str) -> Result<Option<Id>, EventError> {
        match p.peek()? {
            Next::Number => {
                let text = p.number()?;
                let n = integer(text).ok_or_else(|| EventError::Field(format!("{field} {} is not a 64-bit integer", lossy(text))))?;
                Ok(Some(Id::Num(n)))
            }
            Next::String => {
                let s = p.string()?;
                Ok(Some(Id::Name(self.trace.strings.intern_bytes(s))))
            }
            _ => {
                p.skip()?;
                Ok(None)
            }
        }
    }

    fn thread(&mut self, pid: Option<Id>, tid: Option<Id>) -> ThreadId {
        let key = (pid.unwrap_or(Id::Num(0)), tid.unwrap_or(Id::Num(0)));
        match self.threads.entry(key) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                let id = ThreadId(self.trace.threads.len() as u32);
                self.trace.threads.push(Thread { pid: key.0, tid: key.1, name: None });
                *e.insert(id)
            }
        }
    }

    fn add(&mut self, raw: Raw) -> Result<(), EventError> {
        match raw.ph {
            b'X' => {
                let ts = raw.ts.ok_or_else(|| EventError::Field("complete event without ts".into()))?;
                let dur = raw.dur.unwrap_or(0);
                ts.checked_add(dur).ok_or_else(|| EventError::Field("ts + dur does not fit 64 bits".into()))?;
                let thread = self.thread(raw.pid, raw.tid);
                let name = raw.name.unwrap_or_else(|| self.trace.strings.intern(""));
                let cat = raw.cat.unwrap_or_else(|| self.trace.strings.intern(""));
                let category = raw.category.unwrap_or(Category::Other);
                let index = u32::try_from(self.trace.events.len()).map_err(|_| EventError::Field("more than 2^32 events".into()))?;
                if category == Category::Trace && self.trace.profiler_span.is_none() {
                    self.trace.profiler_span = Some(index);
                }
                if category == Category::PythonFunction
                    && let Some(id) = raw.args.python_id
                {
                    self.trace.python_frames.push(PythonFrame { event: index, id, parent: raw.args.python_parent });
                }
                let small = |v: Option<i64>| v.and_then(|v| u32::try_from(v).ok());
                if category == Category::GpuMemcpy
                    && let Some(bytes) = raw.args.copy_bytes
                {
                    self.trace.copy_bytes.push((index, bytes));
                }
                if category == Category::Kernel && !raw.args.launch.is_empty() {
                    let launch = self.launch_id(raw.args.launch);
                    self.trace.kernel_launch_of.push((index, launch));
                }
                self.trace.events.push(Event {
                    name,
                    cat,
                    category,
                    thread,
                    ts,
                    dur,
                    external_id: raw.args.external_id.and_then(NonZeroU64::new),
                    correlation: raw.args.correlation.and_then(NonZeroU64::new),
                    device: small(raw.args.device),
                    stream: small(raw.args.stream),
                    input_shapes: raw.args.input_shapes,
                });
            }
            b'i' | b'I' => {
                let name = raw.name.map(|n| self.trace.str(n));
                let out_of_memory = match name {
                    Some("[memory]") => false,
                    Some("[OutOfMemory]") => true,
                    _ => return Ok(()),
                };
                let ts = raw.ts.ok_or_else(|| EventError::Field("memory event without ts".into()))?;
                let thread = self.thread(raw.pid, raw.tid);
                let a = &raw.args;
                self.trace.memory.push(MemoryEvent {
                    out_of_memory,
                    thread,
                    ts,
                    bytes: a.bytes.unwrap_or(0),
                    device_type: a.device_type.unwrap_or(0),
                    device_id: a.device_id.unwrap_or(-1),
                    addr: a.addr.unwrap_or(0),
                    total_allocated: a.total_allocated.unwrap_or(0),
                    total_reserved: a.total_reserved.unwrap_or(0),
                });
            }
            b's' | b't' | b'f' => {
                let (Some(id), Some(ts)) = (raw.id, raw.ts) else { return Ok(()) };
                let thread = self.thread(raw.pid, raw.tid);
                let phase = match raw.ph {
                    b's' => FlowPhase::Start,
                    b't' => FlowPhase::Step,
                    _ => FlowPhase::Finish,
                };
                let cat = raw.cat.unwrap_or_else(|| self.trace.strings.intern(""));
                self.trace.flows.push(Flow { cat, id, phase, thread, ts });
            }
            b'M' => {
                let (Some(name), Some(value)) = (raw.name, raw.args.name) else { return Ok(()) };
                match self.trace.str(name) {
                    "thread_name" => {
                        let thread = self.thread(raw.pid, raw.tid);
                        self.trace.threads[thread.0 as usize].name = Some(value);
                    }
                    "process_name" => self.trace.process_names.push((raw.pid.unwrap_or(Id::Num(0)), value)),
                    _ => {}
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Reads the elements of a segment of `traceEvents`: after the `[`
    /// (`first`), or after a `,`.
    fn segment(&mut self, p: &mut Parser<std::io::Empty>, first: bool, elements: &mut usize) -> SegmentEnd {
        if first {
            let mut first = true;
            match p.next_element(&mut first) {
                Ok(true) => {}
                Ok(false) => return SegmentEnd::Close(p.offset() as usize),
                Err(_) => return SegmentEnd::Other,
            }
        }
        loop {
            if self.event(p).is_err() {
                return SegmentEnd::Other;
            }
            *elements += 1;
            match p.after_element() {
                Some(true) if p.exhausted() => return SegmentEnd::Boundary,
                Some(true) => {}
                Some(false) => return SegmentEnd::Close(p.offset() as usize),
                None => return SegmentEnd::Other,
            }
        }
    }

    /// Where `launch` is in `trace.kernel_launches` (added if new).
    fn launch_id(&mut self, launch: KernelLaunch) -> u32 {
        let launches = &mut self.trace.kernel_launches;
        *self.launches.entry(launch).or_insert_with(|| {
            launches.push(launch);
            (launches.len() - 1) as u32
        })
    }

    fn finish(self) -> Trace {
        self.trace
    }
}

/// A worker's part of [`Builder::events_split`]: one segment, on its own.
fn parse_segment(mut job: Job) -> Parsed {
    let mut p = Parser::from_vec(std::mem::take(&mut job.buf), job.len);
    let mut local = Builder::default();
    let mut elements = 0;
    let end = local.segment(&mut p, job.first, &mut elements);
    job.buf = p.into_buf();
    Parsed { job, local, elements, end }
}

enum EventError {
    Syntax(SyntaxError),
    Field(String),
}

impl From<SyntaxError> for EventError {
    fn from(e: SyntaxError) -> Self {
        EventError::Syntax(e)
    }
}

impl<R: Read> Parser<R> {
    /// A string value, or `None` (skipped) for any other kind of value.
    fn string_or_skip(&mut self) -> Result<Option<&[u8]>, SyntaxError> {
        if self.peek()? == Next::String {
            Ok(Some(self.string()?))
        } else {
            self.skip()?;
            Ok(None)
        }
    }
}

fn lossy(text: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(text)
}

/// A `ts`/`dur` in whole nanoseconds. Kineto writes `"<µs>.<3 digits>"`,
/// which is parsed exactly; more digits are rounded (half away from 0),
/// exponents go through f64.
fn time<R: Read>(p: &mut Parser<R>, field: &str) -> Result<Option<i64>, EventError> {
    match p.peek()? {
        Next::Number => {
            let text = p.number()?;
            match micros_to_ns(text) {
                Some(ns) => Ok(Some(ns)),
                None => Err(EventError::Field(format!("{field} {} does not fit 64 bits of nanoseconds", lossy(text)))),
            }
        }
        Next::Null => {
            p.null()?;
            Ok(None)
        }
        _ => Err(EventError::Field(format!("{field} is not a number"))),
    }
}

pub(super) fn micros_to_ns(text: &[u8]) -> Option<i64> {
    if text.iter().any(|&b| b == b'e' || b == b'E') {
        let v: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
        let ns = (v * 1000.0).round();
        return (ns.is_finite() && ns.abs() < 9.2e18).then_some(ns as i64);
    }
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (whole, frac) = match digits.iter().position(|&b| b == b'.') {
        Some(dot) => (&digits[..dot], &digits[dot + 1..]),
        None => (digits, &b""[..]),
    };
    let mut ns: i64 = 0;
    for &d in whole {
        ns = ns.checked_mul(10)?.checked_add(i64::from(d - b'0'))?;
    }
    ns = ns.checked_mul(1000)?;
    let mut scale = 100;
    for &d in frac.iter().take(3) {
        ns = ns.checked_add(i64::from(d - b'0') * scale)?;
        scale /= 10;
    }
    if frac.get(3).is_some_and(|&d| d >= b'5') {
        ns = ns.checked_add(1)?;
    }
    Some(if negative { -ns } else { ns })
}

/// A number that must be a whole number in i64.
fn integer(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// An id: a non-negative whole number of at most 64 bits; `null` is none.
fn id<R: Read>(p: &mut Parser<R>, field: &str) -> Result<Option<u64>, EventError> {
    match p.peek()? {
        Next::Number => {
            let text = p.number()?;
            match std::str::from_utf8(text).ok().and_then(|t| t.parse::<u64>().ok()) {
                Some(v) => Ok(Some(v)),
                None => Err(EventError::Field(format!("{field} {} is not a 64-bit unsigned integer", lossy(text)))),
            }
        }
        _ => {
            p.skip()?;
            Ok(None)
        }
    }
}

/// A signed whole number of at most 64 bits; another kind of value is none.
fn int<R: Read>(p: &mut Parser<R>, field: &str) -> Result<Option<i64>, EventError> {
    match p.peek()? {
        Next::Number => {
            let text = p.number()?;
            match integer(text) {
                Some(v) => Ok(Some(v)),
                None => Err(EventError::Field(format!("{field} {} is not a 64-bit integer", lossy(text)))),
            }
        }
        _ => {
            p.skip()?;
            Ok(None)
        }
    }
}

/// A count that fits 32 bits (registers, bytes of shared memory); another
/// value is none (launch configurations are read as given, never an error).
fn count<R: Read>(p: &mut Parser<R>) -> Result<Option<u32>, SyntaxError> {
    if p.peek()? != Next::Number {
        p.skip()?;
        return Ok(None);
    }
    Ok(std::str::from_utf8(p.number()?).ok().and_then(|t| t.parse().ok()))
}

/// `[x, y, z]` of counts (`grid`, `block`); anything else is none.
fn dims<R: Read>(p: &mut Parser<R>) -> Result<Option<[u32; 3]>, SyntaxError> {
    if p.peek()? != Next::Array {
        p.skip()?;
        return Ok(None);
    }
    p.begin_array()?;
    let (mut dims, mut n, mut valid) = ([0u32; 3], 0, true);
    let mut first = true;
    while p.next_element(&mut first)? {
        match count(p)? {
            Some(d) if n < 3 => dims[n] = d,
            _ => valid = false,
        }
        n += 1;
    }
    Ok((valid && n == 3).then_some(dims))
}

/// A finite number; anything else is none.
fn finite<R: Read>(p: &mut Parser<R>) -> Result<Option<f64>, SyntaxError> {
    if p.peek()? != Next::Number {
        p.skip()?;
        return Ok(None);
    }
    Ok(std::str::from_utf8(p.number()?).ok().and_then(|t| t.parse::<f64>().ok()).filter(|v| v.is_finite()))
}

#[cfg(test)]
mod tests {
    use super::micros_to_ns;

    #[test]
    fn times_are_exact_nanoseconds() {
        assert_eq!(micros_to_ns(b"4816249284691.150"), Some(4816249284691150));
        assert_eq!(micros_to_ns(b"171.958"), Some(171958));
        assert_eq!(micros_to_ns(b"12"), Some(12000));
        assert_eq!(micros_to_ns(b"1.5"), Some(1500));
        assert_eq!(micros_to_ns(b"-0.001"), Some(-1));
        assert_eq!(micros_to_ns(b"0.0015"), Some(2));
        assert_eq!(micros_to_ns(b"1e3"), Some(1_000_000));
        assert_eq!(micros_to_ns(b"99999999999999999999"), None);
    }
}
