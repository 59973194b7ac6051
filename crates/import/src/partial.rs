//! Mergeable partial profiles: one rank's or host's trace (any input the
//! loader reads) reduced to what the views read — the node model's totals
//! per node and step, names, op types, devices, code traces, the step list —
//! and a small per-rank summary (each step's time), under the job's (rank's)
//! name. Partials are made where the traces lie (`rtfprof partial`,
//! `rtfprof.partial` in Python, one a worker), sent as bytes, merged in any
//! order or grouping, and shown like `--job`s (`--partial_path`).
//!
//! **Canonical form.** A partial is a list of jobs sorted by name (names
//! unique); each job's nodes keep the order its import gave them, which is
//! a function of its files alone. Merging concatenates the jobs and sorts
//! them by name, so it is associative and commutative: the merged bytes of
//! N partials are the same whatever the order or grouping. The loader
//! merges `--job`s in the same name order, so views from merged partials
//! equal views from `--job` loading byte for byte.
//!
//! **Serialisation.** A 16-byte magic, a little-endian `u32` version, then
//! a protobuf message (prost, which rtfprof already uses for TensorFlow's
//! files: no new dependency, compact varints, a schema that documents
//! itself and decodes in bounded time on any input). prost writes fields in
//! tag order and repeated fields in their order, so the bytes are a
//! function of the partial. Measured (bench/partials.md): the 2.9 MB
//! (201 KB gzipped) H200 ResNet-18 PyTorch fixture becomes a 340 KB partial
//! (35 KB gzipped), made in 0.08 s end to end by `rtfprof partial`.
//!
//! **Ranks.** A job read from one PyTorch trace or one XPlane host also
//! carries itself as a rank ([`RankSummary`]), so `rtfprof
//! ranks --partial_path` and the report's ranks tab give what they give for
//! the traces read together.
//!
//! **Not carried** (the traces' events, not the node model): `steps`,
//! `memory`, `hlo` and `kernels`, the timeline output and the report's step
//! breakdown, memory and device tabs read the traces themselves; node
//! attributes (only `advise` reads them) and checkpoints are left out too.

use std::path::{Path, PathBuf};

use prost::Message;

use crate::error::{Error, Result};
use crate::inputs::Kind;
use crate::load::Loaded;
use crate::proto::tensorflow::tfprof::CodeDef;
use crate::stats::Stats;
use crate::stats::node::{ExecStep, Input, MemoryRecord, Node};
use crate::stats::records::ranks::{CommOverlap, DIRECTIONS, Rank, RankStep, RankSummary, Source as RankSource, Transfer};
use crate::stats::small_map::SmallMap;
use crate::stats::symbol::symbol;

/// The format's version: a partial of another version is refused with one
/// line saying which versions were found and expected.
pub const VERSION: u32 = 1;

/// The first bytes of every partial file.
pub const MAGIC: &[u8; 16] = b"rtfprof-partial\n";

/// The file name ending of partials in a directory given to `--partial_path`.
pub const EXTENSION: &str = "rtfprof";

const FLAG: &str = "--partial_path";

/// One or more jobs' node models, in canonical form (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Partial {
    jobs: Vec<Job>,
}

/// A job as read from a partial, or as made from a profile: then encoded
/// node by node as it is made, since its nodes as messages take ten times
/// their encoding (a 10 GB PyTorch trace's: 3.5 GB, against 320 MB).
#[derive(Clone, Debug)]
enum Job {
    Decoded(Box<JobProto>),
    /// A [`JobProto`]'s encoding (its fields, without a key or length).
    Encoded {
        name: String,
        bytes: Vec<u8>,
    },
}

impl Job {
    fn name(&self) -> &str {
        match self {
            Job::Decoded(job) => &job.name,
            Job::Encoded { name, .. } => name,
        }
    }

    fn decoded(&self) -> std::borrow::Cow<'_, JobProto> {
        match self {
            Job::Decoded(job) => std::borrow::Cow::Borrowed(job),
            Job::Encoded { bytes, .. } => std::borrow::Cow::Owned(JobProto::decode(bytes.as_slice()).expect("a job encoded here decodes")),
        }
    }

    fn into_decoded(self) -> JobProto {
        match self {
            Job::Decoded(job) => *job,
            encoded => encoded.decoded().into_owned(),
        }
    }

    /// The length of its encoding.
    fn encoded_len(&self) -> usize {
        match self {
            Job::Decoded(job) => job.encoded_len(),
            Job::Encoded { bytes, .. } => bytes.len(),
        }
    }

    /// Writes it as `PartialProto` writes an element of its field 1.
    fn write(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut key = Vec::with_capacity(16);
        prost::encoding::encode_key(1, prost::encoding::WireType::LengthDelimited, &mut key);
        prost::encoding::encode_varint(self.encoded_len() as u64, &mut key);
        out.write_all(&key)?;
        match self {
            Job::Decoded(job) => out.write_all(&job.encode_to_vec()),
            Job::Encoded { bytes, .. } => out.write_all(bytes),
        }
    }
}

impl PartialEq for Job {
    fn eq(&self, other: &Job) -> bool {
        self.decoded() == other.decoded()
    }
}

/// What a partial says of one job, for a cheap look without building its
/// node model (`rtfprof jobs`-like summaries).
#[derive(Clone, Debug, PartialEq)]
pub struct JobSummary {
    pub name: String,
    pub nodes: usize,
    /// Each step and its wall time (µs), from the first op's start to the
    /// last op's end.
    pub step_micros: Vec<(i64, i64)>,
}

#[derive(Clone, PartialEq, Message)]
struct PartialProto {
    #[prost(message, repeated, tag = "1")]
    jobs: Vec<JobProto>,
}

#[derive(Clone, PartialEq, Message)]
struct JobProto {
    #[prost(string, tag = "1")]
    name: String,
    /// [`Kind`], as [`kind_name`] spells it.
    #[prost(string, tag = "2")]
    kind: String,
    #[prost(double, tag = "3")]
    coverage: f64,
    #[prost(int64, repeated, tag = "4")]
    steps: Vec<i64>,
    /// Code traces' strings, by id.
    #[prost(message, repeated, tag = "5")]
    strings: Vec<IdString>,
    #[prost(bool, tag = "6")]
    has_code_traces: bool,
    #[prost(bool, tag = "7")]
    miss_accelerator_stream: bool,
    #[prost(string, repeated, tag = "8")]
    warnings: Vec<String>,
    #[prost(message, repeated, tag = "9")]
    nodes: Vec<NodeProto>,
    /// (step, wall µs), the per-rank summary.
    #[prost(message, repeated, tag = "10")]
    step_times: Vec<StepTime>,
    /// The job as a rank of `rtfprof ranks`, where its input is one
    /// PyTorch trace or XPlane host.
    #[prost(message, optional, tag = "11")]
    rank: Option<RankProto>,
}

/// [`RankSummary`].
#[derive(Clone, PartialEq, Message)]
struct RankProto {
    /// `pytorch` or `xplane`.
    #[prost(string, tag = "1")]
    source: String,
    #[prost(int64, optional, tag = "2")]
    given_rank: Option<i64>,
    #[prost(int64, optional, tag = "3")]
    world_size: Option<i64>,
    #[prost(message, repeated, tag = "4")]
    steps: Vec<RankStepProto>,
    #[prost(message, repeated, tag = "5")]
    transfers: Vec<TransferProto>,
    #[prost(message, optional, tag = "6")]
    overlap: Option<OverlapProto>,
    #[prost(message, optional, tag = "7")]
    overlap_without_last_step: Option<OverlapProto>,
    #[prost(string, repeated, tag = "8")]
    step_names: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
struct RankStepProto {
    #[prost(string, tag = "1")]
    step: String,
    #[prost(double, tag = "2")]
    step_us: f64,
    #[prost(double, optional, tag = "3")]
    compute_us: Option<f64>,
    #[prost(double, optional, tag = "4")]
    communication_us: Option<f64>,
    #[prost(double, optional, tag = "5")]
    exposed_communication_us: Option<f64>,
    #[prost(double, optional, tag = "6")]
    idle_us: Option<f64>,
}

#[derive(Clone, PartialEq, Message)]
struct TransferProto {
    #[prost(string, tag = "1")]
    direction: String,
    #[prost(uint64, tag = "2")]
    count: u64,
    #[prost(int64, optional, tag = "3")]
    bytes: Option<i64>,
    #[prost(double, tag = "4")]
    us: f64,
}

#[derive(Clone, Copy, PartialEq, Message)]
struct OverlapProto {
    #[prost(double, tag = "1")]
    percent: f64,
    #[prost(double, tag = "2")]
    exact_ratio: f64,
}

impl RankProto {
    fn of(summary: &RankSummary) -> RankProto {
        let rank = &summary.rank;
        let overlap = |o: Option<CommOverlap>| o.map(|o| OverlapProto { percent: o.percent, exact_ratio: o.exact_ratio });
        RankProto {
            source: match summary.source {
                RankSource::PyTorch => "pytorch",
                RankSource::Xplane => "xplane",
            }
            .to_owned(),
            given_rank: summary.given_rank,
            world_size: rank.world_size,
            steps: rank
                .steps
                .iter()
                .map(|s| RankStepProto {
                    step: s.step.clone(),
                    step_us: s.step_us,
                    compute_us: s.compute_us,
                    communication_us: s.communication_us,
                    exposed_communication_us: s.exposed_communication_us,
                    idle_us: s.idle_us,
                })
                .collect(),
            transfers: rank.transfers.iter().map(|t| TransferProto { direction: t.direction.to_owned(), count: t.count, bytes: t.bytes, us: t.us }).collect(),
            overlap: overlap(rank.overlap),
            overlap_without_last_step: overlap(summary.overlap_without_last_step),
            step_names: summary.step_names.clone(),
        }
    }

    /// The summary of job `name`; `None` for a field no version wrote.
    fn summary(&self, name: &str) -> Option<RankSummary> {
        let source = match self.source.as_str() {
            "pytorch" => RankSource::PyTorch,
            "xplane" => RankSource::Xplane,
            _ => return None,
        };
        let overlap = |o: Option<OverlapProto>| o.map(|o| CommOverlap { percent: o.percent, exact_ratio: o.exact_ratio });
        let transfers = self
            .transfers
            .iter()
            .map(|t| {
                let direction = DIRECTIONS.iter().find(|d| **d == t.direction)?;
                Some(Transfer { direction, count: t.count, bytes: t.bytes, us: t.us })
            })
            .collect::<Option<Vec<_>>>()?;
        let steps = self
            .steps
            .iter()
            .map(|s| RankStep {
                step: s.step.clone(),
                step_us: s.step_us,
                compute_us: s.compute_us,
                communication_us: s.communication_us,
                exposed_communication_us: s.exposed_communication_us,
                idle_us: s.idle_us,
            })
            .collect();
        Some(RankSummary {
            source,
            rank: Rank { rank: 0, name: name.to_owned(), world_size: self.world_size, steps, transfers, overlap: overlap(self.overlap), straggler: false },
            given_rank: self.given_rank,
            step_names: self.step_names.clone(),
            overlap_without_last_step: overlap(self.overlap_without_last_step),
        })
    }
}

#[derive(Clone, PartialEq, Message)]
struct IdString {
    #[prost(int64, tag = "1")]
    id: i64,
    #[prost(string, tag = "2")]
    value: String,
}

#[derive(Clone, PartialEq, Message)]
struct StepTime {
    #[prost(int64, tag = "1")]
    step: i64,
    #[prost(int64, tag = "2")]
    wall_micros: i64,
}

#[derive(Clone, PartialEq, Message)]
struct NodeProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    op: String,
    #[prost(string, repeated, tag = "3")]
    op_types: Vec<String>,
    #[prost(int64, repeated, tag = "4")]
    shape: Vec<i64>,
    #[prost(message, repeated, tag = "5")]
    output_shapes: Vec<SlotShape>,
    #[prost(message, repeated, tag = "6")]
    inputs: Vec<InputProto>,
    #[prost(int64, tag = "7")]
    float_ops: i64,
    #[prost(message, optional, tag = "8")]
    trace: Option<CodeDef>,
    #[prost(string, tag = "9")]
    canonical_device: String,
    #[prost(message, repeated, tag = "10")]
    execs: Vec<ExecProto>,
    #[prost(message, repeated, tag = "11")]
    memory: Vec<StepMemory>,
}

#[derive(Clone, PartialEq, Message)]
struct SlotShape {
    #[prost(int64, tag = "1")]
    slot: i64,
    #[prost(int64, repeated, tag = "2")]
    dims: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
struct InputProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(int64, tag = "2")]
    src_output: i64,
    #[prost(int64, tag = "3")]
    shape_slot: i64,
}

#[derive(Clone, PartialEq, Message)]
struct ExecProto {
    #[prost(int64, tag = "1")]
    step: i64,
    #[prost(int64, tag = "2")]
    run_count: i64,
    #[prost(int64, tag = "3")]
    all_start_micros: i64,
    #[prost(int64, tag = "4")]
    latest_end_micros: i64,
    #[prost(message, repeated, tag = "5")]
    accelerator: Vec<DeviceTimesProto>,
    #[prost(message, repeated, tag = "6")]
    cpu: Vec<DeviceTimesProto>,
}

/// One device's executions: starts and durations, side by side.
#[derive(Clone, PartialEq, Message)]
struct DeviceTimesProto {
    #[prost(string, tag = "1")]
    device: String,
    #[prost(int64, repeated, tag = "2")]
    starts: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    micros: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
struct StepMemory {
    #[prost(int64, tag = "1")]
    step: i64,
    #[prost(message, repeated, tag = "2")]
    records: Vec<MemoryRecord>,
}

/// How a partial names an input kind.
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::TfFiles => "tf",
        Kind::Events => "events",
        Kind::Profile => "profile",
        Kind::Xplane => "xplane",
        Kind::PyTorch => "pytorch",
    }
}

fn kind_of(name: &str) -> Option<Kind> {
    [Kind::TfFiles, Kind::Events, Kind::Profile, Kind::Xplane, Kind::PyTorch].into_iter().find(|&k| kind_name(k) == name)
}

fn device_times<'a>(times: impl Iterator<Item = (&'static str, crate::stats::node::DeviceTimes<'a>)>) -> Vec<DeviceTimesProto> {
    times
        .map(|(device, times)| DeviceTimesProto {
            device: device.to_owned(),
            starts: times.iter().map(|t| t.0).collect(),
            micros: times.iter().map(|t| t.1).collect(),
        })
        .collect()
}

fn node_proto(node: &Node) -> NodeProto {
    NodeProto {
        name: node.name.to_string(),
        op: node.op.to_owned(),
        op_types: node.op_types.iter().map(|t| (*t).to_owned()).collect(),
        shape: node.shape.clone(),
        output_shapes: node.output_shapes.iter().map(|(&slot, dims)| SlotShape { slot, dims: dims.clone() }).collect(),
        inputs: node.inputs.iter().map(|i| InputProto { name: i.name.to_string(), src_output: i.src_output, shape_slot: i.shape_slot }).collect(),
        float_ops: node.float_ops,
        trace: node.trace.clone(),
        canonical_device: node.canonical_device.to_owned(),
        execs: node
            .execs
            .iter()
            .map(|(&step, exec)| ExecProto {
                step,
                run_count: exec.run_count,
                all_start_micros: exec.all_start_micros,
                latest_end_micros: exec.latest_end_micros,
                accelerator: device_times(exec.accelerator_execs()),
                cpu: device_times(exec.cpu_execs()),
            })
            .collect(),
        memory: node.memory.iter().map(|(&step, records)| StepMemory { step, records: records.clone() }).collect(),
    }
}

fn device_map(times: Vec<DeviceTimesProto>) -> SmallMap<&'static str, Vec<(i64, i64)>> {
    times.into_iter().map(|t| (symbol(&t.device), t.starts.into_iter().zip(t.micros).collect())).collect()
}

fn node_of(proto: NodeProto) -> Node {
    let canonical_device = symbol(&proto.canonical_device);
    Node {
        name: proto.name.into(),
        op: symbol(&proto.op),
        op_types: proto.op_types.iter().map(|t| symbol(t)).collect(),
        shape: proto.shape,
        output_shapes: proto.output_shapes.into_iter().map(|s| (s.slot, s.dims)).collect(),
        inputs: proto.inputs.into_iter().map(|i| Input { name: i.name.into(), src_output: i.src_output, shape_slot: i.shape_slot }).collect(),
        float_ops: proto.float_ops,
        trace: proto.trace,
        canonical_device,
        execs: proto
            .execs
            .into_iter()
            .map(|e| (e.step, ExecStep::from_parts(e.run_count, e.all_start_micros, e.latest_end_micros, device_map(e.accelerator), device_map(e.cpu))))
            .collect(),
        memory: proto.memory.into_iter().map(|m| (m.step, m.records)).collect(),
        ..Default::default()
    }
}

impl Partial {
    /// One job's partial from its loaded profile, with the job as a rank
    /// where it is one (the ranks analysis computes that: see
    /// `make_partial`).
    pub fn from_loaded(name: &str, loaded: &Loaded, rank: Option<&RankSummary>) -> Partial {
        let stats = &loaded.stats;
        let kind = loaded.kinds.first().copied().unwrap_or(Kind::Profile);
        let summary = crate::jobs::summarize(name, stats);
        // The fields before the nodes (9), each node as it is made, then
        // the fields after: the bytes the whole message encodes to.
        let before = JobProto {
            name: name.to_owned(),
            kind: kind_name(kind).to_owned(),
            coverage: stats.run_coverage(),
            steps: stats.steps.iter().copied().collect(),
            strings: stats.id_to_string.iter().map(|(&id, s)| IdString { id, value: s.clone() }).collect(),
            has_code_traces: stats.has_code_traces,
            miss_accelerator_stream: stats.miss_accelerator_stream,
            warnings: stats.warnings.clone(),
            ..JobProto::default()
        };
        let after = JobProto {
            step_times: summary.steps.iter().map(|s| StepTime { step: s.step, wall_micros: s.wall_micros }).collect(),
            rank: rank.map(RankProto::of),
            ..JobProto::default()
        };
        let mut bytes = before.encode_to_vec();
        for node in &stats.nodes {
            prost::encoding::message::encode(9, &node_proto(node), &mut bytes);
        }
        after.encode(&mut bytes).expect("a Vec grows");
        Partial { jobs: vec![Job::Encoded { name: name.to_owned(), bytes }] }
    }

    /// The rank each job carries, by job name: every job must carry one
    /// (a partial of one PyTorch trace or XPlane host does). `what` names
    /// the partials in errors.
    pub fn rank_summaries(&self, what: &Path) -> Result<Vec<(String, RankSummary)>> {
        let mut summaries = Vec::new();
        for job in &self.jobs {
            let job = job.decoded();
            let summary = job.rank.as_ref().and_then(|r| r.summary(&job.name)).ok_or_else(|| {
                Error::input(FLAG, what, format!("job {} carries no rank: ranks reads partials of PyTorch traces or XPlane hosts, one a rank", job.name))
            })?;
            summaries.push((job.name.clone(), summary));
        }
        Ok(summaries)
    }

    /// The jobs' names, in canonical (name) order.
    pub fn job_names(&self) -> impl Iterator<Item = &str> {
        self.jobs.iter().map(Job::name)
    }

    /// Each job's size and step times, in name order.
    pub fn summaries(&self) -> Vec<JobSummary> {
        self.jobs
            .iter()
            .map(|j| j.decoded())
            .map(|j| JobSummary { name: j.name.clone(), nodes: j.nodes.len(), step_micros: j.step_times.iter().map(|s| (s.step, s.wall_micros)).collect() })
            .collect()
    }

    /// The profile the views read: each job's node model, merged as
    /// `--job`s are (nodes `NAME/<node>`, devices `/NAME<device>`), with
    /// the loader's listing of the jobs.
    pub fn into_loaded(self) -> Loaded {
        let mut listing = String::from("Reading Files...\n");
        let mut coverage = Vec::new();
        let jobs = self
            .jobs
            .into_iter()
            .map(Job::into_decoded)
            .map(|job| {
                listing.push_str(&format!("job {}: run graph coverage: {:.2}\n", job.name, job.coverage));
                coverage.push((job.name.clone(), job.coverage));
                let mut stats = Stats::new();
                stats.steps = job.steps.into_iter().collect();
                stats.id_to_string = job.strings.into_iter().map(|s| (s.id, s.value)).collect();
                stats.has_code_traces = job.has_code_traces;
                stats.miss_accelerator_stream = job.miss_accelerator_stream;
                stats.warnings = job.warnings;
                for node in job.nodes {
                    stats.insert_node(node_of(node));
                }
                let kinds = kind_of(&job.kind).into_iter().collect();
                (job.name, Loaded { stats, kinds, traces: Vec::new(), listing: String::new(), coverage: Vec::new(), rank_summaries: None })
            })
            .collect();
        crate::load::merge(jobs, listing, coverage)
    }
}

/// Merges partials: their jobs, sorted by name. Associative and
/// commutative; a job name in two partials is an error (a rank profiled
/// twice, or two ranks given one name).
pub fn merge(partials: impl IntoIterator<Item = Partial>) -> Result<Partial> {
    let mut jobs: Vec<Job> = partials.into_iter().flat_map(|p| p.jobs).collect();
    jobs.sort_by(|a, b| a.name().cmp(b.name()));
    if let Some(w) = jobs.windows(2).find(|w| w[0].name() == w[1].name()) {
        return Err(Error::flag("merge", format!("job '{}' is in two partials: give each rank or host its own name", w[0].name())));
    }
    Ok(Partial { jobs })
}

/// The partial's bytes: [`MAGIC`], [`VERSION`] (u32, little-endian), then
/// the protobuf message. Its jobs are encoded as `PartialProto` encodes
/// its field 1, without copying them into one: the copy was the peak of
/// `rtfprof partial` on a 1 GB XPlane trace (bench/large_xplane.md).
pub fn to_bytes(partial: &Partial) -> Vec<u8> {
    let len: usize = partial.jobs.iter().map(|j| 1 + prost::encoding::encoded_len_varint(j.encoded_len() as u64) + j.encoded_len()).sum();
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + len);
    write(partial, &mut out).expect("a Vec grows");
    out
}

/// Writes [`to_bytes`]'s bytes to `out`, without making them first.
pub fn write(partial: &Partial, out: &mut impl std::io::Write) -> std::io::Result<()> {
    out.write_all(MAGIC)?;
    out.write_all(&VERSION.to_le_bytes())?;
    for job in &partial.jobs {
        job.write(out)?;
    }
    Ok(())
}

/// Reads a partial's bytes; `path` names where they came from in errors
/// (one line: not a partial, another version, truncated or corrupt).
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Partial> {
    let bad = |message: String| Error::input(FLAG, path, message);
    let Some(body) = bytes.strip_prefix(MAGIC.as_slice()) else {
        return Err(bad("not an rtfprof partial profile (make one with 'rtfprof partial')".to_owned()));
    };
    let Some((version, body)) = body.split_first_chunk::<4>() else {
        return Err(bad("truncated rtfprof partial profile (no version)".to_owned()));
    };
    let version = u32::from_le_bytes(*version);
    if version != VERSION {
        return Err(bad(format!("rtfprof partial profile of version {version}; this rtfprof reads version {VERSION} (make it again with this rtfprof)")));
    }
    let message = PartialProto::decode(body).map_err(|e| bad(format!("truncated or corrupt rtfprof partial profile: {e}")))?;
    let names: Vec<&str> = message.jobs.iter().map(|j| j.name.as_str()).collect();
    if names.windows(2).any(|w| w[0] >= w[1]) {
        return Err(bad("corrupt rtfprof partial profile: its jobs are not in name order".to_owned()));
    }
    if let Some(job) = message.jobs.iter().find(|j| kind_of(&j.kind).is_none()) {
        return Err(bad(format!("corrupt rtfprof partial profile: job '{}' has unknown input kind '{}'", job.name, job.kind)));
    }
    Ok(Partial { jobs: message.jobs.into_iter().map(|job| Job::Decoded(Box::new(job))).collect() })
}

/// The partial files `path` names: the file itself, or a directory's
/// `*.rtfprof` files.
pub fn files(path: &Path) -> Result<Vec<PathBuf>> {
    let metadata = std::fs::metadata(path).map_err(|source| Error::Io { kind: FLAG, path: path.to_owned(), source })?;
    if !metadata.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|source| Error::Io { kind: FLAG, path: path.to_owned(), source })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == EXTENSION))
        .collect();
    if files.is_empty() {
        return Err(Error::input(FLAG, path, format!("holds no *.{EXTENSION} partial profile")));
    }
    files.sort();
    Ok(files)
}

/// Reads and merges the partials `paths` name (files or directories of
/// them), in parallel.
pub fn read(paths: &[PathBuf]) -> Result<Partial> {
    use rayon::prelude::*;
    let files: Vec<PathBuf> = paths.iter().map(|p| files(p)).collect::<Result<Vec<_>>>()?.into_iter().flatten().collect();
    let partials = files
        .par_iter()
        .map(|file| {
            let bytes = std::fs::read(file).map_err(|source| Error::Io { kind: FLAG, path: file.clone(), source })?;
            from_bytes(&bytes, file)
        })
        .collect::<Result<Vec<_>>>()?;
    merge(partials)
}

/// The job name of a trace file: `worker0.1234` for
/// `…/worker0.1234.pt.trace.json.gz`, `host0` for `…/host0.xplane.pb`,
/// else the file's (or directory's) name.
pub fn job_name(path: &Path) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("job");
    let name = name.strip_suffix(".gz").unwrap_or(name);
    for suffix in [".pt.trace.json", ".json", ".xplane.pb", ".pb", ".pbtxt"] {
        if let Some(stem) = name.strip_suffix(suffix) {
            return stem.to_owned();
        }
    }
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `to_bytes` writes the jobs as the derived `PartialProto` encodes
    /// them (two jobs, so that the repeated field's order shows).
    #[test]
    fn to_bytes_is_the_messages_encoding() {
        let trace = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pytorch/threads_memory.pt.trace.json"));
        let sources = crate::load::Sources { pytorch_path: Some(trace.to_owned()), ..Default::default() };
        let loaded = crate::load::load(&sources, crate::load::Purpose::Partial).unwrap();
        let partial = merge(["b", "a"].map(|name| Partial::from_loaded(name, &loaded, None))).unwrap();
        let mut expected = MAGIC.to_vec();
        expected.extend_from_slice(&VERSION.to_le_bytes());
        PartialProto { jobs: partial.jobs.iter().map(|j| j.decoded().into_owned()).collect() }.encode(&mut expected).unwrap();
        assert_eq!(partial.jobs.len(), 2);
        assert!(to_bytes(&partial) == expected);
    }
}
