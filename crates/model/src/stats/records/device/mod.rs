//! The device tables' rows (XProf's `hlo_stats` and `kernel_stats`), which
//! the XPlane and PyTorch importers fill in the walk that makes the nodes,
//! and [`kernel`]: XProf's rules that make launches into rows.

pub mod kernel;

/// What the device tables of one trace (or of every job, merged) hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tables {
    /// By total time, longest first (XProf's order).
    pub hlo_ops: Vec<HloOp>,
    /// By total duration, longest first, then by key (XProf's order).
    pub kernels: Vec<Kernel>,
}

/// One XLA instruction that ran (XProf's `hlo_stats` row).
#[derive(Clone, Debug, PartialEq)]
pub struct HloOp {
    /// The job it ran in ("" for one trace).
    pub job: String,
    /// XLA's program id (unsigned: TPU programs use all 64 bits).
    pub program_id: u64,
    pub module: String,
    pub hlo_op_name: String,
    /// XLA's category (`loop fusion`, `custom-call`, …).
    pub category: String,
    /// The framework op (JAX's name stack, TF's op); empty when the
    /// instruction names none (as in XProf).
    pub framework_op: String,
    pub occurrences: i64,
    pub total_ps: i128,
    /// Less the instructions nested in it (host XLA ops); on devices, the
    /// total.
    pub self_ps: i128,
    /// The Python frames that made it, innermost first.
    pub source: Vec<String>,
    /// Its total time in each step, by step number (the step whose marker
    /// holds an execution's start, as the node model's), only where asked
    /// for (`rtfprof check` judges each instruction per step); else empty.
    pub step_ps: Vec<(i64, i128)>,
}

/// One kernel launch configuration of one op (XProf's `kernel_stats` row).
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub job: String,
    pub kernel_name: String,
    /// The framework op that launched it; empty when none is known.
    pub op_name: String,
    pub registers_per_thread: u32,
    pub static_shmem_bytes: u32,
    pub dynamic_shmem_bytes: u32,
    pub block_dim: [u32; 3],
    pub grid_dim: [u32; 3],
    /// `None` where the trace gives none (PyTorch traces of AMD GPUs).
    pub occupancy_pct: Option<f64>,
    pub is_op_tensor_core_eligible: bool,
    pub is_kernel_using_tensor_core: bool,
    pub occurrences: i64,
    /// Durations in whole nanoseconds, each event's truncated (as XProf).
    pub total_ns: i64,
    pub min_ns: i64,
    pub max_ns: i64,
}

impl Kernel {
    pub fn shmem_bytes(&self) -> u64 {
        u64::from(self.static_shmem_bytes) + u64::from(self.dynamic_shmem_bytes)
    }

    /// More launches of this row's key: counts and times add up, the
    /// extremes are kept, the occupancy stays the first launch's (XProf's
    /// rows of one key, from several instructions or windows of a trace).
    pub fn add(&mut self, launches: &kernel::Sums) {
        self.occurrences += launches.occurrences;
        self.total_ns += launches.total_ns;
        self.min_ns = self.min_ns.min(launches.min_ns);
        self.max_ns = self.max_ns.max(launches.max_ns);
    }

    /// This row's launches, as [`Kernel::add`] takes them.
    pub fn sums(&self) -> kernel::Sums {
        kernel::Sums { occupancy_pct: self.occupancy_pct, occurrences: self.occurrences, total_ns: self.total_ns, min_ns: self.min_ns, max_ns: self.max_ns }
    }
}

impl Tables {
    pub fn is_empty(&self) -> bool {
        self.hlo_ops.is_empty() && self.kernels.is_empty()
    }

    /// The tables of several jobs as one, each row knowing its job.
    pub fn merge(jobs: impl IntoIterator<Item = (String, Tables)>) -> Tables {
        let mut merged = Tables::default();
        for (job, tables) in jobs {
            merged.hlo_ops.extend(tables.hlo_ops.into_iter().map(|r| HloOp { job: job.clone(), ..r }));
            merged.kernels.extend(tables.kernels.into_iter().map(|k| Kernel { job: job.clone(), ..k }));
        }
        merged.sort();
        merged
    }

    /// XProf's orders: instructions by total time, kernels by total
    /// duration, longest first; ties by name (kernels: by their key).
    pub fn sort(&mut self) {
        self.hlo_ops
            .sort_by(|a, b| b.total_ps.cmp(&a.total_ps).then_with(|| (&a.job, a.program_id, &a.hlo_op_name).cmp(&(&b.job, b.program_id, &b.hlo_op_name))));
        self.kernels.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| kernel::key_order(a, b)));
    }
}
