//! What `rtfprof ranks` gives of a distributed job (one record a rank, the
//! straggler rule's numbers), and the summary of one rank a partial
//! profile carries: records, so that the partial codec (an importer) can
//! read and write them and the ranks analysis compute them.

/// Where the ranks were read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    PyTorch,
    Xplane,
}

/// One step of one rank (µs).
#[derive(Clone, Debug, PartialEq)]
pub struct RankStep {
    pub step: String,
    pub step_us: f64,
    /// Time some computation kernel ran (PyTorch: summed over the rank's
    /// GPUs; XPlane: XProf's device compute, or host compute on a host
    /// without devices). `None` without GPU work.
    pub compute_us: Option<f64>,
    /// Time some collective kernel ran.
    pub communication_us: Option<f64>,
    /// Time some collective kernel ran and no computation kernel did.
    pub exposed_communication_us: Option<f64>,
    /// Time no GPU work ran (PyTorch: summed over the rank's GPUs).
    pub idle_us: Option<f64>,
}

impl RankStep {
    /// The step time less the exposed communication: the straggler rule's
    /// measure.
    pub fn own_us(&self) -> f64 {
        self.step_us - self.exposed_communication_us.unwrap_or(0.0)
    }
}

/// Copies of one direction over a rank's steps.
#[derive(Clone, Debug, PartialEq)]
pub struct Transfer {
    /// `H2D`, `D2H`, `D2D`, `P2P`, `H2H`, or `other`.
    pub direction: &'static str,
    pub count: u64,
    /// `None` where some copy does not say how many bytes it moved.
    pub bytes: Option<i64>,
    /// The copies' summed durations.
    pub us: f64,
}

impl Transfer {
    /// Bytes per second of copying, in GB/s (10^9 bytes).
    pub fn gb_per_s(&self) -> Option<f64> {
        self.bytes.filter(|_| self.us > 0.0).map(|b| b as f64 / self.us / 1e3)
    }
}

/// A rank's communication/computation overlap as HTA defines it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CommOverlap {
    /// HTA's `comp_comm_overlap_pctg` (NaN without communication).
    pub percent: f64,
    /// The same ratio from the trace's own time resolution.
    pub exact_ratio: f64,
}

/// One rank.
#[derive(Clone, Debug, PartialEq)]
pub struct Rank {
    pub rank: i64,
    /// The trace's file name without `.pt.trace.json[.gz]`, or the host.
    pub name: String,
    pub world_size: Option<i64>,
    pub steps: Vec<RankStep>,
    pub transfers: Vec<Transfer>,
    pub overlap: Option<CommOverlap>,
    pub straggler: bool,
}

impl Rank {
    /// Mean, sample standard deviation and CV of the step times.
    pub fn step_time(&self) -> (f64, f64, f64) {
        crate::sample::stats_of(&self.steps.iter().map(|s| s.step_us).collect::<Vec<_>>())
    }

    /// The mean over the steps of one of their numbers; `None` where a step
    /// does not have it.
    pub fn mean(&self, f: impl Fn(&RankStep) -> Option<f64>) -> Option<f64> {
        let values: Option<Vec<f64>> = self.steps.iter().map(f).collect();
        values.filter(|v| !v.is_empty()).map(|v| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// The mean own time ([`RankStep::own_us`]); `None` without steps.
    pub fn own_us(&self) -> Option<f64> {
        self.mean(|s| Some(s.own_us()))
    }
}

/// The numbers the straggler rule compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    pub median_us: f64,
    /// `MAD_SCALE` (the ranks analysis) × the median absolute deviation from the median.
    pub scaled_mad_us: f64,
    pub threshold_us: f64,
}

/// The ranks of a job.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranks {
    pub source: Source,
    /// Rank ids come from the traces (`distributedInfo.rank`), not from
    /// the order of the files.
    pub ids_from_traces: bool,
    /// In rank order.
    pub ranks: Vec<Rank>,
    /// `None` with fewer than 3 ranks with steps (a median and its
    /// deviation need 3).
    pub rule: Option<Rule>,
    pub stragglers: Vec<i64>,
}

/// One rank as a partial profile carries it (`rtfprof::partial`): what
/// the ranks analysis (`rtfprof::ranks`) computes of the rank's trace
/// alone, and what they need of the other ranks left open, so that the
/// ranks of merged partials (`ranks::from_summaries`) equal those of the traces
/// read together.
#[derive(Clone, Debug, PartialEq)]
pub struct RankSummary {
    pub source: Source,
    /// The rank (its `rank` field unset: ids are given across ranks).
    pub rank: Rank,
    /// PyTorch: the trace's `distributedInfo.rank`.
    pub given_rank: Option<i64>,
    /// PyTorch: the `ProfilerStep#N` names of the trace, and HTA's overlap
    /// without the last step (HTA leaves it out when the ranks hold two or
    /// more step names between them); `rank.overlap` keeps every step.
    pub step_names: Vec<String>,
    pub overlap_without_last_step: Option<CommOverlap>,
}

/// The directions in the order they are listed.
pub const DIRECTIONS: [&str; 6] = ["H2D", "D2H", "D2D", "P2P", "H2H", "other"];
