//! The loader: from the files a user names to the node model and the trace
//! events the analyses read. The command line, `rtfprof::api` and the
//! Python module all load through here.
//!
//! [`Sources`] says what was given; [`Purpose`] what it is for (which
//! decides what is worth decoding: code traces, node attributes,
//! allocations). An XPlane run directory becomes one job a host; `--job`s
//! are loaded apart and merged. Each input is opened and imported by its
//! kind's module through [`crate::inputs::Input`].

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::inputs::{Input, InputPaths, Kind, Trace};
use crate::jobs::JobSpec;
use crate::stats::Stats;

/// What a user gave: the files of one kind (TF files, a profile, an event
/// log) in `paths`, or a trace, or jobs.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// The files and how to read them; `paths.xplane_path` is the one
    /// host's trace the loader resolves `xplane_path` to.
    pub paths: InputPaths,
    /// A TF2/JAX trace: a `.xplane.pb` file, a run directory (one job a
    /// host) or a log directory (its newest run, or `xplane_run`).
    pub xplane_path: Option<PathBuf>,
    pub xplane_run: Option<String>,
    /// A PyTorch trace (`*.pt.trace.json[.gz]`), or a directory of them
    /// (one a rank: one job a rank).
    pub pytorch_path: Option<PathBuf>,
    /// Whether `steps` reads PyTorch traces whole or a window of steps at a
    /// time ([`crate::inputs::pytorch::windows`]).
    pub pytorch_windows: crate::inputs::pytorch::windows::Windowing,
    /// `NAME=PATH` jobs to load apart and merge.
    pub jobs: Vec<String>,
    /// Partial profiles (files, or directories of `*.rtfprof` files), merged
    /// (see [`crate::partial`]).
    pub partial_paths: Vec<PathBuf>,
    /// A partial profile's bytes (the Python module's `partial=`), merged
    /// with those of `partial_paths`.
    pub partial_bytes: Option<std::sync::Arc<Vec<u8>>>,
}

impl Sources {
    /// Whether any input was given.
    pub fn is_empty(&self) -> bool {
        let paths = &self.paths;
        paths.graph_path.is_none()
            && paths.run_meta_paths.is_empty()
            && paths.profile_path.is_none()
            && self.xplane_path.is_none()
            && self.pytorch_path.is_none()
            && paths.events_path.is_none()
            && self.jobs.is_empty()
            && self.partial_paths.is_empty()
            && self.partial_bytes.is_none()
    }

    /// The inputs as the command line's flags and values (the report's
    /// header names them so).
    pub fn flags(&self) -> Vec<(String, String)> {
        let paths = &self.paths;
        let mut flags = Vec::new();
        let mut add = |flag: &str, value: Option<String>| {
            if let Some(value) = value {
                flags.push((flag.to_owned(), value));
            }
        };
        let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
        add("--profile_path", path(&paths.profile_path));
        add("--xplane_path", path(&self.xplane_path));
        add("--xplane_run", self.xplane_run.clone());
        add("--pytorch_path", path(&self.pytorch_path));
        add("--events_path", path(&paths.events_path));
        add("--events_run", paths.events_run.clone());
        add("--events_tags", paths.events_tags.clone());
        add("--graph_path", path(&paths.graph_path));
        let run_meta: Vec<String> = paths.run_meta_paths.iter().map(|p| p.display().to_string()).collect();
        add("--run_meta_path", (!run_meta.is_empty()).then(|| run_meta.join(",")));
        add("--op_log_path", path(&paths.op_log_path));
        add("--checkpoint_path", path(&paths.checkpoint_path));
        for job in &self.jobs {
            add("--job", Some(job.clone()));
        }
        for partial in &self.partial_paths {
            add("--partial_path", Some(partial.display().to_string()));
        }
        flags
    }

    /// Whether the inputs are partial profiles.
    pub fn has_partials(&self) -> bool {
        !self.partial_paths.is_empty() || self.partial_bytes.is_some()
    }
}

/// Which tfprof view to show (what decides, among other things, whether
/// the loader keeps code traces). The views themselves are in
/// `crate::views`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Scope,
    Graph,
    Op,
    Code,
}

impl View {
    pub const ALL: [View; 4] = [View::Scope, View::Graph, View::Op, View::Code];

    /// The view a tfprof command names.
    pub fn parse(command: &str) -> Option<View> {
        View::ALL.into_iter().find(|v| v.as_str() == command)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            View::Scope => "scope",
            View::Graph => "graph",
            View::Op => "op",
            View::Code => "code",
        }
    }
}

/// What the inputs are loaded for, which decides what is worth decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    View(View),
    Advise,
    /// The `tfprof>` prompt: any view or advice may follow.
    Prompt,
    Memory,
    Steps,
    /// `hlo` and `kernels`.
    Tables,
    Report,
    /// `diff`: each side is loaded as its view needs.
    Diff,
    /// `jobs`: each job's summary.
    Jobs,
    /// A partial profile (see [`crate::partial`]): what the views read.
    Partial,
    /// `check`: the scope view's nodes and the allocation records (each
    /// allocator's peak a step).
    Check,
}

/// A loaded profile: the node model every view reads, and what the
/// analyses read besides.
#[derive(Debug)]
pub struct Loaded {
    pub stats: Stats,
    /// The kind of each job's input (one entry without jobs).
    pub kinds: Vec<Kind>,
    /// The traces whose events `steps`, timelines and the device tables
    /// read, with their job's name ("" without jobs).
    pub traces: Vec<(String, Trace)>,
    /// tfprof's start-up lines, printed before a view ("Reading Files...").
    pub listing: String,
    /// Run graph coverage of the run metadata, or of each job (the report's
    /// header).
    pub coverage: Vec<(String, f64)>,
    /// The ranks that partial profiles carry, by job name, when they are
    /// several and each is a rank, loaded for the report (its ranks tab;
    /// traces give it from `traces`).
    pub rank_summaries: Option<Vec<(String, crate::stats::records::ranks::RankSummary)>>,
}

impl Loaded {
    /// Whether every input is of `kind`.
    pub fn all(&self, kind: Kind) -> bool {
        !self.kinds.is_empty() && self.kinds.iter().all(|k| *k == kind)
    }

    /// Whether the profile was read from traces (XPlane, PyTorch), whose
    /// nodes are the ops and scopes of executions rather than of a graph.
    pub fn from_traces(&self) -> bool {
        self.kinds.iter().any(|k| matches!(k, Kind::Xplane | Kind::PyTorch))
    }

    /// The XPlane traces, with their job's name.
    pub fn xplane_traces(&self) -> impl Iterator<Item = (&str, &std::sync::Arc<crate::inputs::xplane::TraceSource>)> {
        self.traces.iter().filter_map(|(job, trace)| match trace {
            Trace::Xplane(source) => Some((job.as_str(), source)),
            Trace::PyTorch(_) => None,
        })
    }

    /// The PyTorch traces, with their job's (rank's) name.
    pub fn pytorch_traces(&self) -> impl Iterator<Item = (&str, &std::sync::Arc<crate::inputs::pytorch::Trace>)> {
        self.traces.iter().filter_map(|(job, trace)| match trace {
            Trace::PyTorch(trace) => Some((job.as_str(), trace)),
            Trace::Xplane(_) => None,
        })
    }
}

/// `--events_run` and `--events_tags` go with event logs (`--events_path`,
/// or `diff` sides and, for the tags, jobs that may be event logs); the tag
/// regex is checked before any file is read.
pub fn check_event_flags(sources: &Sources, purpose: Purpose) -> Result<()> {
    let (paths, jobs) = (&sources.paths, &sources.jobs);
    let diff = purpose == Purpose::Diff;
    if paths.events_run.is_some() && !jobs.is_empty() {
        return Err(Error::flag("--events_run", "with --job, give each job its run's directory (--job NAME=LOGDIR/RUN)"));
    }
    if paths.events_run.is_some() && paths.events_path.is_none() && !diff {
        return Err(Error::flag("--events_run", "needs --events_path"));
    }
    if paths.events_tags.is_some() && paths.events_path.is_none() && jobs.is_empty() && !diff {
        return Err(Error::flag("--events_tags", "needs --events_path (or --job)"));
    }
    paths.events_tags.as_deref().map(crate::inputs::events::tag_filter).transpose().map(drop)
}

/// [`xplane_hosts`]' answer: the (host, file) pairs and the note.
pub type XplaneHosts = (Vec<(String, PathBuf)>, Option<String>);

/// The trace files of `--xplane_path`, one a host (`None` without one),
/// and [`crate::inputs::xplane::locate`]'s note about the run it chose.
pub fn xplane_hosts(sources: &Sources) -> Result<Option<XplaneHosts>> {
    if sources.xplane_run.is_some() && sources.xplane_path.is_none() {
        return Err(Error::flag("--xplane_run", "needs --xplane_path LOGDIR"));
    }
    let Some(path) = &sources.xplane_path else { return Ok(None) };
    if !sources.jobs.is_empty() {
        return Err(Error::flag("--xplane_path", "give each job's trace with --job NAME=PATH instead"));
    }
    let located = crate::inputs::xplane::locate(path, sources.xplane_run.as_deref())?;
    Ok(Some((located.hosts, located.note)))
}

/// The inputs resolved for loading: the paths of a single input (with its
/// one host's trace), or jobs (`--job`s, or an XPlane run directory's
/// hosts), and the note about the trace's run.
pub struct Resolved {
    pub paths: InputPaths,
    /// One job a host of a run directory with several.
    pub hosts: Vec<JobSpec>,
    pub note: Option<String>,
}

/// What `purpose` reads, set on `sources`' paths, and the XPlane trace
/// resolved to its host files.
pub fn resolve(sources: &Sources, purpose: Purpose) -> Result<Resolved> {
    let mut paths = sources.paths.clone();
    // Only the code view (text or pprof), advise and the prompt read code traces.
    paths.skip_code_traces = matches!(purpose, Purpose::View(View::Scope | View::Graph | View::Op));
    // Only advise, the prompt and FLOPs estimates read node attributes.
    paths.skip_attrs = matches!(purpose, Purpose::View(_) | Purpose::Report) && !paths.estimate_flops.is_on();
    // The report's memory tab replays the allocation records, and check
    // judges each allocator's peak.
    paths.allocations = matches!(purpose, Purpose::Report | Purpose::Check);
    // Check judges each XLA instruction per step.
    paths.hlo_steps = purpose == Purpose::Check;
    if matches!(purpose, Purpose::Memory) {
        paths.allocations = true;
        paths.skip_code_traces = true;
        paths.skip_attrs = !paths.estimate_flops.is_on();
    }
    if purpose == Purpose::Partial {
        // Every view's nodes, code traces included; no allocations.
        paths.skip_code_traces = false;
        paths.skip_attrs = !paths.estimate_flops.is_on();
    }
    if matches!(purpose, Purpose::Steps | Purpose::Tables | Purpose::Check) {
        paths.skip_code_traces = true;
        paths.skip_attrs = !paths.estimate_flops.is_on();
    }
    // Only the views read nothing but the node model.
    paths.pytorch_windows = matches!(purpose, Purpose::View(_)).then_some(sources.pytorch_windows);
    let mut hosts = Vec::new();
    let mut note = None;
    if let Some((files, chosen)) = xplane_hosts(sources)? {
        note = chosen;
        match files.as_slice() {
            [(_, file)] => paths.xplane_path = Some(file.clone()),
            files => {
                hosts = files
                    .iter()
                    .map(|(host, file)| JobSpec {
                        name: host.clone(),
                        inputs: InputPaths { xplane_path: Some(file.clone()), graph_path: paths.graph_path.clone(), ..paths.clone() },
                    })
                    .collect();
            }
        }
    }
    if let Some(path) = &sources.pytorch_path {
        if !sources.jobs.is_empty() || sources.xplane_path.is_some() {
            return Err(Error::flag("--pytorch_path", "is set: do not set --job or --xplane_path"));
        }
        match pytorch_ranks(path)?.as_slice() {
            [(_, file)] => paths.pytorch_path = Some(file.clone()),
            ranks => {
                hosts = ranks
                    .iter()
                    .map(|(rank, file)| JobSpec { name: rank.clone(), inputs: InputPaths { pytorch_path: Some(file.clone()), ..paths.clone() } })
                    .collect();
            }
        }
    }
    Ok(Resolved { paths, hosts, note })
}

/// The PyTorch traces `path` names, one a rank, named after their files:
/// the file itself, or a directory's `*.json` and `*.json.gz` files that
/// are traces.
pub fn pytorch_ranks(path: &std::path::Path) -> Result<Vec<(String, PathBuf)>> {
    const FLAG: &str = "--pytorch_path";
    let metadata = std::fs::metadata(path).map_err(|source| Error::Io { kind: FLAG, path: path.to_owned(), source })?;
    if !metadata.is_dir() {
        return Ok(vec![(rank_name(path), path.to_owned())]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|source| Error::Io { kind: FLAG, path: path.to_owned(), source })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".json") || n.ends_with(".json.gz")))
        // (Other JSON files may lie beside the traces.)
        .filter(|p| crate::inputs::sniff::sniff_file(p).is_some_and(|(kind, _)| kind == crate::inputs::sniff::Kind::ChromeTrace))
        .collect();
    if files.is_empty() {
        return Err(Error::input(FLAG, path, "holds no *.pt.trace.json or *.json.gz trace"));
    }
    files.sort();
    Ok(files.into_iter().map(|f| (rank_name(&f), f)).collect())
}

/// The PyTorch traces and their ranks' names ("" for a single trace) when
/// `--pytorch_path` is the only input: what `steps` reads without the node
/// model.
pub fn pytorch_only(sources: &Sources) -> Result<Option<Vec<(String, PathBuf)>>> {
    let Some(path) = &sources.pytorch_path else { return Ok(None) };
    if !sources.jobs.is_empty() || sources.xplane_path.is_some() {
        return Ok(None);
    }
    let mut ranks = pytorch_ranks(path)?;
    if let [(name, _)] = ranks.as_mut_slice()
        && !path.is_dir()
    {
        name.clear();
    }
    Ok(Some(ranks))
}

/// The windows to read `--pytorch_path` in when it is the only input and
/// one trace that its windowing cuts (see
/// [`crate::inputs::pytorch::windows`]); `None` for other inputs, which are
/// read whole.
pub fn lone_pytorch_windows(sources: &Sources) -> Result<Option<crate::inputs::pytorch::windows::Windows>> {
    if sources.has_partials() {
        return Ok(None);
    }
    let Some(ranks) = pytorch_only(sources)? else { return Ok(None) };
    let [(_, file)] = ranks.as_slice() else { return Ok(None) };
    sources.pytorch_windows.plan(file)
}

/// `worker0.1234` for `…/worker0.1234.pt.trace.json.gz`.
fn rank_name(file: &std::path::Path) -> String {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(name);
    let name = name.strip_suffix(".json").unwrap_or(name);
    name.strip_suffix(".pt.trace").unwrap_or(name).to_owned()
}

/// Opens and imports one input (no jobs): its kind's module maps it into
/// the node model; float ops are estimated as `paths` asks.
pub fn load_paths(paths: &InputPaths) -> Result<Loaded> {
    let imported = Input::open(paths)?.import(paths)?;
    let mut stats = imported.stats;
    stats.estimate_missing_flops(paths.estimate_flops);
    let coverage = if paths.run_meta_paths.is_empty() { Vec::new() } else { vec![(String::new(), stats.run_coverage())] };
    Ok(Loaded {
        stats,
        kinds: vec![imported.kind],
        traces: imported.trace.map(|t| (String::new(), t)).into_iter().collect(),
        listing: imported.listing,
        coverage,
        rank_summaries: None,
    })
}

/// Loads `sources` for `purpose`: one input, or each job (in parallel)
/// merged into one profile. The note about the trace's run, if any, starts
/// the listing.
pub fn load(sources: &Sources, purpose: Purpose) -> Result<Loaded> {
    if sources.has_partials() {
        return load_partials(sources, purpose);
    }
    let resolved = resolve(sources, purpose)?;
    let mut loaded = load_resolved(sources, &resolved, purpose)?;
    if let Some(note) = resolved.note {
        loaded.listing.insert_str(0, &format!("{note}\n"));
    }
    Ok(loaded)
}

fn load_resolved(sources: &Sources, resolved: &Resolved, purpose: Purpose) -> Result<Loaded> {
    let paths = &resolved.paths;
    if (paths.xplane_path.is_some() || !resolved.hosts.is_empty() && sources.xplane_path.is_some())
        && purpose == Purpose::View(View::Graph)
        && paths.graph_path.is_none()
    {
        return Err(Error::flag("graph", "an XPlane trace has no graph edges: add the model's GraphDef with --graph_path"));
    }
    if sources.pytorch_path.is_some() && purpose == Purpose::View(View::Graph) {
        return Err(Error::flag("graph", "a PyTorch trace has no graph edges: use scope, op or code"));
    }
    if sources.jobs.is_empty() && resolved.hosts.is_empty() {
        let loaded = load_paths(paths)?;
        check_code_traces(purpose, &loaded)?;
        return Ok(loaded);
    }
    let mut jobs = load_jobs(sources, resolved)?;
    // Merged in name order, as partial profiles are (see
    // [`crate::partial`]): the same jobs give the same profile however
    // they were given.
    jobs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut listing = String::from("Reading Files...\n");
    let mut coverage = Vec::new();
    for (name, job) in &jobs {
        let job_coverage = job.stats.run_coverage();
        listing.push_str(&format!("job {name}: run graph coverage: {job_coverage:.2}\n"));
        // (A trace's ops are all executions: coverage means nothing there.)
        if !job.from_traces() {
            coverage.push((name.clone(), job_coverage));
        }
    }
    let loaded = merge(jobs, listing, coverage);
    check_code_traces(purpose, &loaded)?;
    Ok(loaded)
}

/// The merged partial profiles of `sources`, alone: the node model for the
/// views, the report and advice (partials hold no trace events).
fn load_partials(sources: &Sources, purpose: Purpose) -> Result<Loaded> {
    let needs_events = match purpose {
        Purpose::Memory => Some("memory"),
        Purpose::Steps => Some("steps"),
        Purpose::Tables => Some("hlo and kernels"),
        Purpose::Jobs => Some("jobs"),
        _ => None,
    };
    if let Some(command) = needs_events {
        return Err(Error::flag(
            command,
            "reads the traces' events, which partial profiles do not hold: give the traces (--job, --pytorch_path, --xplane_path)",
        ));
    }
    let partial = partials_of(sources)?;
    // (Only the report reads them: its ranks tab.)
    let ranks = if purpose == Purpose::Report && partial.job_names().count() >= 2 { partial.rank_summaries(&partials_named(sources)).ok() } else { None };
    let mut loaded = partial.into_loaded();
    loaded.rank_summaries = ranks;
    check_code_traces(purpose, &loaded)?;
    Ok(loaded)
}

/// The partial profiles of `sources` (its paths' and its bytes'), merged;
/// no other inputs may be given.
pub fn partials_of(sources: &Sources) -> Result<crate::partial::Partial> {
    let mut others = sources.clone();
    (others.partial_paths, others.partial_bytes) = (Vec::new(), None);
    if !others.is_empty() {
        return Err(Error::flag("--partial_path", "is set: give no other inputs (make a partial of each with 'rtfprof partial')"));
    }
    let mut partial = if sources.partial_paths.is_empty() { crate::partial::Partial::default() } else { crate::partial::read(&sources.partial_paths)? };
    if let Some(bytes) = &sources.partial_bytes {
        let given = crate::partial::from_bytes(bytes, std::path::Path::new("<bytes>"))?;
        partial = crate::partial::merge([partial, given])?;
    }
    Ok(partial)
}

/// What errors call the partials of `sources`: the first path.
pub fn partials_named(sources: &Sources) -> std::path::PathBuf {
    sources.partial_paths.first().cloned().unwrap_or_else(|| "<bytes>".into())
}

/// Each job loaded on its own (in parallel): `--job`s, or the hosts of an
/// XPlane run directory (for `rtfprof jobs`, and to merge).
pub fn load_jobs_apart(sources: &Sources, purpose: Purpose) -> Result<Vec<(String, Loaded)>> {
    load_jobs(sources, &resolve(sources, purpose)?)
}

fn load_jobs(sources: &Sources, resolved: &Resolved) -> Result<Vec<(String, Loaded)>> {
    crate::jobs::load(&jobs_of(sources, resolved)?, load_paths)
}

/// The jobs of `sources` as `resolved`: each `--job`, or each host of an
/// XPlane run directory or rank of a PyTorch directory.
pub fn jobs_of(sources: &Sources, resolved: &Resolved) -> Result<Vec<JobSpec>> {
    if resolved.hosts.is_empty() { job_specs(&sources.jobs, &resolved.paths) } else { Ok(resolved.hosts.clone()) }
}

/// The `--job NAME=PATH` specs, with the global reading options; no other
/// inputs may be given.
fn job_specs(specs: &[String], paths: &InputPaths) -> Result<Vec<JobSpec>> {
    if paths.graph_path.is_some()
        || !paths.run_meta_paths.is_empty()
        || paths.profile_path.is_some()
        || paths.op_log_path.is_some()
        || paths.events_path.is_some()
    {
        return Err(Error::flag("--job", "give each job's files with --job NAME=PATH, not with the single-job input flags"));
    }
    let mut specs = specs.iter().map(|s| JobSpec::parse(s)).collect::<Result<Vec<_>>>()?;
    for spec in &mut specs {
        spec.inputs.estimate_flops = paths.estimate_flops;
        if spec.inputs.events_path.is_some() {
            spec.inputs.events_tags.clone_from(&paths.events_tags);
        }
        spec.inputs.allocations = paths.allocations;
        spec.inputs.pytorch_windows = paths.pytorch_windows;
    }
    let mut names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::flag("--job", format!("job name '{}' given twice", w[0])));
    }
    Ok(specs)
}

/// Jobs merged into one profile (see [`crate::jobs::merge`]): their
/// traces and kinds kept, each trace under its job's name.
pub fn merge(jobs: Vec<(String, Loaded)>, listing: String, coverage: Vec<(String, f64)>) -> Loaded {
    let mut kinds = Vec::new();
    let mut traces = Vec::new();
    let mut models = Vec::new();
    for (name, job) in jobs {
        kinds.extend(job.kinds);
        traces.extend(job.traces.into_iter().map(|(_, trace)| (name.clone(), trace)));
        models.push((name, job.stats));
    }
    Loaded { stats: crate::jobs::merge(models), kinds, traces, listing, coverage, rank_summaries: None }
}

/// The code view of traces needs Python frames: those XLA programs record
/// for their instructions (JAX's do; TF's ops carry none), or PyTorch's
/// `python_function` events (`with_stack=True`).
fn check_code_traces(purpose: Purpose, loaded: &Loaded) -> Result<()> {
    if purpose == Purpose::View(View::Code) && loaded.from_traces() && !loaded.stats.has_code_traces {
        let why = if loaded.kinds.contains(&Kind::PyTorch) {
            "this PyTorch trace has no Python call stacks for its ops (torch.profiler.profile(with_stack=True) records them): use scope or op"
        } else {
            "this XPlane trace has no Python call stacks for its ops (JAX's XLA programs record them; TF's ops do not): use scope or op"
        };
        return Err(Error::flag("code", why));
    }
    Ok(())
}

/// Whether a file name is an XPlane trace's (`*.xplane.pb[.gz]`).
pub fn is_xplane_file(name: &str) -> bool {
    let name = name.strip_suffix(".gz").unwrap_or(name);
    name.ends_with(".xplane.pb")
}

/// Whether a file name is a PyTorch trace's (`*.pt.trace.json[.gz]`).
pub fn is_pytorch_file(name: &str) -> bool {
    let name = name.strip_suffix(".gz").unwrap_or(name);
    name.ends_with(".pt.trace.json")
}

/// The first file of `dir` whose name `matches`, if `dir` is a directory.
pub fn first_file_named(dir: &std::path::Path, matches: fn(&str) -> bool) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| matches(n)).collect();
    names.sort();
    names.into_iter().next()
}
