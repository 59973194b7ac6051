//! PyTorch traces: the chrome-trace JSON that `torch.profiler` writes through
//! Kineto (`prof.export_chrome_trace`, `tensorboard_trace_handler`:
//! `*.pt.trace.json`, gzip-compressed or not).
//!
//! [`Trace::open`] reads a file once, streaming, into an event-level model:
//! complete events (`ph: "X"`) with their category, thread, times in whole
//! nanoseconds and the ids that link them (`External id`, `correlation`),
//! Python frames, `[memory]` records, flows, thread names and kernels'
//! launch configurations. Names are interned ([`Strings`]). Analyses read
//! this model, never the file: the analyses' `key_averages` gives
//! PyTorch's own `prof.key_averages()` (the outputs' `torch_table` prints it
//! as `EventList.table()` does) and `hta` splits GPU time as Holistic Trace
//! Analysis does.

pub mod cut;
pub(crate) mod import;
mod json;
pub mod kernels;
pub mod launch;
mod pool;
mod read;
mod stream;
pub mod windows;

use std::num::{NonZeroU32, NonZeroU64};
use std::path::Path;

use crate::error::{Error, Result};

pub use import::{StepAllocations, WindowedImport, allocations_windows};
pub use launch::LaunchingOps;

/// The profiler's own ops, not the program's, which torch drops
/// (`profiler_util._filter_name`, less its memory records).
pub const PROFILER_NAMES: [&str; 6] = [
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
];

/// The `kind` of errors about these files: the flag that reads them.
pub const KIND: &str = "--pytorch_path";

/// An interned string; [`Trace::str`] gives its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(NonZeroU32);

impl Sym {
    /// Its place in [`Strings::all`], so that a table of one value per
    /// string can stand for a map from strings.
    pub fn index(self) -> usize {
        self.0.get() as usize
    }
}

/// The strings of a trace, each stored once: a trace of millions of events
/// has a few thousand distinct names.
#[derive(Clone, Debug)]
pub struct Strings {
    list: Vec<Box<str>>,
    table: hashbrown::HashTable<Sym>,
}

/// The same strings in the same order (the table follows from the list).
impl PartialEq for Strings {
    fn eq(&self, other: &Strings) -> bool {
        self.list == other.list
    }
}

impl Eq for Strings {}

impl Default for Strings {
    fn default() -> Self {
        // Index 0 is unused so that `Option<Sym>` takes no more room.
        Strings { list: vec!["".into()], table: hashbrown::HashTable::new() }
    }
}

fn hash_str(s: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(s)
}

impl Strings {
    pub fn intern(&mut self, s: &str) -> Sym {
        let hash = hash_str(s);
        let list = &self.list;
        if let Some(&sym) = self.table.find(hash, |&sym| &*list[sym.0.get() as usize] == s) {
            return sym;
        }
        let index = u32::try_from(self.list.len()).ok().and_then(NonZeroU32::new).expect("fewer than 2^32 strings");
        let sym = Sym(index);
        self.list.push(s.into());
        let list = &self.list;
        self.table.insert_unique(hash, sym, |&sym| hash_str(&list[sym.0.get() as usize]));
        sym
    }

    /// Interns text that should be UTF-8; bytes that are not become U+FFFD.
    pub fn intern_bytes(&mut self, bytes: &[u8]) -> Sym {
        match std::str::from_utf8(bytes) {
            Ok(s) => self.intern(s),
            Err(_) => self.intern(&String::from_utf8_lossy(bytes)),
        }
    }

    /// The symbol of `s` if it occurs in the trace.
    /// Every string, in [`Sym::index`] order.
    pub fn all(&self) -> impl Iterator<Item = &str> {
        self.list.iter().map(|s| &**s)
    }

    pub fn lookup(&self, s: &str) -> Option<Sym> {
        let list = &self.list;
        self.table.find(hash_str(s), |&sym| &*list[sym.0.get() as usize] == s).copied()
    }

    pub fn get(&self, sym: Sym) -> &str {
        &self.list[sym.0.get() as usize]
    }

    pub fn len(&self) -> usize {
        self.list.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What an event is, from its `cat` (Kineto's `ActivityType` names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// An ATen operator or other `RecordFunction` (`cpu_op`).
    CpuOp,
    /// `record_function(...)` spans and `ProfilerStep#N` (`user_annotation`).
    UserAnnotation,
    /// A Python frame (`python_function`, with `with_stack=True`).
    PythonFunction,
    CudaRuntime,
    CudaDriver,
    Kernel,
    GpuMemcpy,
    GpuMemset,
    /// A `record_function` span as it ran on a GPU stream.
    GpuUserAnnotation,
    CudaSync,
    CudaProfilerRange,
    /// The profiler's own span (`PyTorch Profiler (0)`).
    Trace,
    /// Any other category (the text is [`Event::cat`]).
    Other,
}

impl Category {
    pub(crate) fn of(cat: &[u8]) -> Category {
        match cat {
            b"cpu_op" | b"Operator" => Category::CpuOp,
            b"user_annotation" => Category::UserAnnotation,
            b"python_function" => Category::PythonFunction,
            // MTIA's and other backends' (PrivateUse1, XPU) runtimes launch
            // as CUDA's does.
            b"cuda_runtime" | b"Runtime" | b"mtia_runtime" | b"privateuse1_runtime" | b"xpu_runtime" => Category::CudaRuntime,
            b"cuda_driver" | b"Driver" | b"privateuse1_driver" => Category::CudaDriver,
            // MTIA's device events (its kernels and `dma_request` copies,
            // which `steps` tells apart by name, as HTA does).
            b"kernel" | b"Kernel" | b"mtia_ccp_events" => Category::Kernel,
            b"gpu_memcpy" | b"Memcpy" => Category::GpuMemcpy,
            b"gpu_memset" | b"Memset" => Category::GpuMemset,
            b"gpu_user_annotation" => Category::GpuUserAnnotation,
            b"cuda_sync" => Category::CudaSync,
            b"cuda_profiler_range" => Category::CudaProfilerRange,
            b"Trace" => Category::Trace,
            _ => Category::Other,
        }
    }

    /// Whether the event is a runtime or driver call: what launches GPU
    /// work.
    pub fn is_launch(self) -> bool {
        matches!(self, Category::CudaRuntime | Category::CudaDriver)
    }

    /// Whether the event ran on a device (a GPU stream) rather than a CPU
    /// thread (torch's `deviceTypeFromActivity`).
    pub fn on_device(self) -> bool {
        matches!(
            self,
            Category::Kernel | Category::GpuMemcpy | Category::GpuMemset | Category::GpuUserAnnotation | Category::CudaSync | Category::CudaProfilerRange
        )
    }
}

/// A `pid` or `tid`: a number, or a label (`"Spans"`, `"stream 7"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Id {
    Num(i64),
    Name(Sym),
}

/// Index into [`Trace::threads`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(pub u32);

/// One `(pid, tid)` pair: a CPU thread, or a device's stream (Kineto writes
/// GPU events with pid = device, tid = stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thread {
    pub pid: Id,
    pub tid: Id,
    /// From the `thread_name` metadata event, if any.
    pub name: Option<Sym>,
}

/// A complete event (`ph: "X"`). Times are whole nanoseconds as written,
/// i.e. counted from `baseTimeNanoseconds` ([`Trace::base_time_ns`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub name: Sym,
    pub cat: Sym,
    pub category: Category,
    pub thread: ThreadId,
    pub ts: i64,
    /// 0 where the event has none.
    pub dur: i64,
    /// `args["External id"]` (torch 1.8/1.9 on Kineto's events: `external
    /// id`): an op's own id; on runtime calls, kernels, copies and sets, in
    /// most schemas the id of the op that launched them ([`launch`] says
    /// which link to trust).
    pub external_id: Option<NonZeroU64>,
    /// `args.correlation`: CUPTI's id, shared by a launch and its kernel.
    pub correlation: Option<NonZeroU64>,
    /// `args.device` / `args.stream` of device events.
    pub device: Option<u32>,
    pub stream: Option<u32>,
    /// `args["Input Dims"]` as torch's `str(event.input_shapes)` (a
    /// TensorList input is `[]` there), where the op has them.
    pub input_shapes: Option<Sym>,
}

impl Event {
    pub fn end(&self) -> i64 {
        self.ts.saturating_add(self.dur)
    }
}

/// `Python id` / `Python parent id` of a `python_function` event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PythonFrame {
    /// Index into [`Trace::events`].
    pub event: u32,
    pub id: u64,
    pub parent: Option<u64>,
}

/// A `[memory]` (or `[OutOfMemory]`) instant: one allocation (`bytes` > 0)
/// or free (< 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryEvent {
    pub out_of_memory: bool,
    pub thread: ThreadId,
    pub ts: i64,
    pub bytes: i64,
    /// c10::DeviceType: 0 CPU, 1 CUDA, …
    pub device_type: i64,
    pub device_id: i64,
    pub addr: u64,
    pub total_allocated: i64,
    pub total_reserved: i64,
}

impl MemoryEvent {
    /// CPU memory in torch's sense (CPU, MKLDNN, IDEEP).
    pub fn is_cpu(&self) -> bool {
        matches!(self.device_type, 0 | 2 | 5)
    }

    /// Device memory in torch's sense (CUDA, HIP, XPU, PrivateUse1).
    pub fn is_device(&self) -> bool {
        matches!(self.device_type, 1 | 6 | 12 | 20)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowPhase {
    Start,
    Step,
    Finish,
}

/// A flow arrow end (`ph` `s`/`t`/`f`): `ac2g` links a launch to its kernel
/// (id = correlation), `fwdbwd` a forward op to its backward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    pub cat: Sym,
    pub id: u64,
    pub phase: FlowPhase,
    pub thread: ThreadId,
    pub ts: i64,
}

/// A trace read into memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    pub strings: Strings,
    pub threads: Vec<Thread>,
    /// Complete events in file order (PyTorch's CPU buffer, then Kineto's).
    pub events: Vec<Event>,
    pub python_frames: Vec<PythonFrame>,
    pub memory: Vec<MemoryEvent>,
    pub flows: Vec<Flow>,
    /// `(pid, name)` of `process_name` metadata.
    pub process_names: Vec<(Id, Sym)>,
    /// `baseTimeNanoseconds`: the epoch time of ts 0.
    pub base_time_ns: Option<i64>,
    /// The header's `profile_memory` (the table's memory columns).
    pub profile_memory: bool,
    /// Index of the profiler's span (`PyTorch Profiler (0)`, category
    /// `Trace`) in `events`: its start is torch's `trace_start_ns`.
    pub profiler_span: Option<u32>,
    /// The header's `distributedInfo` (torch.distributed was initialised
    /// when the profile was taken).
    pub distributed: Option<Distributed>,
    /// `args.bytes` of the `gpu_memcpy` events that have it: (index into
    /// `events`, bytes), in the order of `events`.
    pub copy_bytes: Vec<(u32, i64)>,
    /// The launch configurations of `kernel` events, each distinct one
    /// once (a trace of millions of kernels has a few thousand).
    pub kernel_launches: Vec<KernelLaunch>,
    /// The `kernel` events whose args give a launch configuration: (index
    /// into `events`, index into `kernel_launches`), in the order of
    /// `events`.
    pub kernel_launch_of: Vec<(u32, u32)>,
}

/// A `kernel` event's launch configuration as its args give it. Kineto
/// writes CUPTI's record (`grid`, `block`, `registers per thread`, `shared
/// memory`: static plus dynamic, `est. achieved occupancy %`); roctracer's
/// gives `grid` and `block` only. What the args leave out, or give
/// malformed, is `None`.
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelLaunch {
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub registers_per_thread: Option<u32>,
    pub shared_memory: Option<u32>,
    pub occupancy_pct: Option<f64>,
}

impl KernelLaunch {
    /// Whether the args gave anything.
    pub fn is_empty(&self) -> bool {
        *self == KernelLaunch::default()
    }

    /// The occupancy by its bits (equal and hashed as given).
    fn occupancy_bits(&self) -> Option<u64> {
        self.occupancy_pct.map(f64::to_bits)
    }
}

impl PartialEq for KernelLaunch {
    fn eq(&self, other: &KernelLaunch) -> bool {
        (self.grid, self.block, self.registers_per_thread, self.shared_memory, self.occupancy_bits())
            == (other.grid, other.block, other.registers_per_thread, other.shared_memory, other.occupancy_bits())
    }
}

impl Eq for KernelLaunch {}

impl std::hash::Hash for KernelLaunch {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.grid, self.block, self.registers_per_thread, self.shared_memory, self.occupancy_bits()).hash(state);
    }
}

/// What `distributedInfo` says about the process that wrote the trace
/// (torch's `_get_distributed_info`: backend, rank, world size, …).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Distributed {
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    pub backend: Option<String>,
}

impl Trace {
    /// Reads a trace file, plain or gzip-compressed (recognised by its
    /// bytes, not its name); errors name the file.
    pub fn open(path: &Path) -> Result<Trace> {
        let io_error = |source| Error::Io { kind: KIND, path: path.to_owned(), source };
        let file = std::fs::File::open(path).map_err(io_error)?;
        read::read_file(crate::inputs::progress::Counting(file)).map_err(|e| match e {
            read::ReadError::Io(source) => io_error(source),
            read::ReadError::Invalid(message) => Error::input(KIND, path, message),
        })
    }

    /// Reads a trace from bytes (plain or gzip), as [`Trace::open`];
    /// errors are messages without a file name.
    pub fn from_bytes(bytes: &[u8]) -> std::result::Result<Trace, String> {
        read::read_file(bytes).map_err(|e| match e {
            read::ReadError::Io(e) => e.to_string(),
            read::ReadError::Invalid(message) => message,
        })
    }

    /// [`Trace::from_bytes`] with `traceEvents` cut into segments of
    /// `segment` bytes or more, parsed on `workers` threads, as large files
    /// are (`workers` 0: on one thread). For tests: the result is the same.
    #[doc(hidden)]
    pub fn from_bytes_split(bytes: &[u8], segment: usize, workers: usize) -> std::result::Result<Trace, String> {
        let split = (workers > 0).then_some(read::Split { segment, workers });
        read::read_file_split(bytes, split).map_err(|e| match e {
            read::ReadError::Io(e) => e.to_string(),
            read::ReadError::Invalid(message) => message,
        })
    }

    /// Reads a trace from any reader (plain or gzip), as [`Trace::open`].
    pub fn from_reader(reader: impl std::io::Read) -> std::result::Result<Trace, String> {
        read::read_file(reader).map_err(|e| match e {
            read::ReadError::Io(e) => e.to_string(),
            read::ReadError::Invalid(message) => message,
        })
    }

    pub fn str(&self, sym: Sym) -> &str {
        self.strings.get(sym)
    }

    pub fn thread(&self, id: ThreadId) -> &Thread {
        &self.threads[id.0 as usize]
    }

    /// torch's `trace_start_ns`: the start of the profiler's span, or, in a
    /// trace without one, its earliest event.
    pub fn start_ns(&self) -> i64 {
        match self.profiler_span {
            Some(i) => self.events[i as usize].ts,
            None => self.events.iter().map(|e| e.ts).chain(self.memory.iter().map(|m| m.ts)).min().unwrap_or(0),
        }
    }

    /// `ProfilerStep#N` spans: `(N, index into events)`, in file order.
    pub fn steps(&self) -> Vec<(u64, u32)> {
        let mut steps = Vec::new();
        for (i, e) in self.events.iter().enumerate() {
            if e.category == Category::UserAnnotation
                && let Some(n) = self.str(e.name).strip_prefix("ProfilerStep#").and_then(|n| n.parse().ok())
            {
                steps.push((n, i as u32));
            }
        }
        steps
    }

    /// The bytes a `gpu_memcpy` event moved (`args.bytes`), if the trace
    /// says.
    pub fn copy_bytes(&self, event: u32) -> Option<i64> {
        self.copy_bytes.binary_search_by_key(&event, |&(i, _)| i).ok().map(|k| self.copy_bytes[k].1)
    }

    /// The launch configuration of `kernel` event `event`, if its args
    /// give one.
    pub fn kernel_launch(&self, event: u32) -> Option<&KernelLaunch> {
        let k = self.kernel_launch_of.binary_search_by_key(&event, |&(i, _)| i).ok()?;
        self.kernel_launches.get(self.kernel_launch_of[k].1 as usize)
    }

    /// The CPU op (`cpu_op` or `user_annotation`) of each `External id`:
    /// where runtime calls and kernels link to.
    pub fn ops_by_external_id(&self) -> rustc_hash::FxHashMap<u64, u32> {
        let mut map = rustc_hash::FxHashMap::default();
        for (i, e) in self.events.iter().enumerate() {
            if matches!(e.category, Category::CpuOp | Category::UserAnnotation)
                && let Some(id) = e.external_id
            {
                map.entry(id.get()).or_insert(i as u32);
            }
        }
        map
    }

    /// The runtime or driver call of each CUPTI `correlation`: the launch
    /// of a kernel, copy or set with that correlation.
    pub fn launches_by_correlation(&self) -> rustc_hash::FxHashMap<u64, u32> {
        let mut map = rustc_hash::FxHashMap::default();
        for (i, e) in self.events.iter().enumerate() {
            if e.category.is_launch()
                && let Some(c) = e.correlation
            {
                map.entry(c.get()).or_insert(i as u32);
            }
        }
        map
    }
}

/// Every Kineto trace of the repository's test data, recursively (every
/// `.json` and `.json.gz` under `testdata/pytorch`: callers skip what does
/// not open), for the tests of the windowed readings here and in the
/// analyses.
#[doc(hidden)]
pub fn test_traces() -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pytorch")).to_owned()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".json") || name.ends_with(".json.gz") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Every test trace ([`test_traces`]) that opens and that `whole` reads
/// (`None`: skipped), planned in windows of one, two and three steps
/// (those with too few steps skipped): `check(whole's, windows, what)`,
/// `what` naming the trace and the windows for messages. Returns how many
/// windowings were checked, which the tests bound from below so that they
/// cannot all be skipped.
#[doc(hidden)]
pub fn for_each_windowing<W>(mut whole: impl FnMut(&Path, &Trace) -> Option<W>, mut check: impl FnMut(&W, &windows::Windows, &str)) -> usize {
    let mut checked = 0;
    for path in test_traces() {
        let Ok(trace) = Trace::open(&path) else { continue };
        let Some(read_whole) = whole(&path, &trace) else { continue };
        for n in 1..=3 {
            let Some(windows) = windows::Windows::plan(&path, windows::Budget::Steps(n)).expect("a test trace that opens is planned") else { continue };
            check(&read_whole, &windows, &format!("{} in windows of {n} steps", path.display()));
            checked += 1;
        }
    }
    checked
}
