//! `rtfprof hlo` and `rtfprof kernels`: the two tables GPU users read first,
//! as XProf's `hlo_stats` and `kernel_stats` give them.
//!
//! The XPlane importer fills [`Tables`] in the walk that makes the nodes
//! (one row per XLA instruction that ran, one per kernel launch
//! configuration); [`kernel`] holds XProf's rules for kernels. Where XProf
//! knows the op, the numbers are XProf's; inside XLA's command buffers,
//! where XProf names every kernel `XlaModule`, rtfprof names the JAX op
//! (see [`crate::inputs::xplane::thunks`]). [`busy`] gives how busy each
//! device was (advise's utilization).

pub mod busy;
pub mod kernel;

use std::io::Write;

use serde::Serialize;

use crate::show::format;

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
    pub occupancy_pct: f64,
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
        self.hlo_ops.sort_by(|a, b| {
            b.total_ps.cmp(&a.total_ps).then_with(|| (&a.job, a.program_id, &a.hlo_op_name).cmp(&(&b.job, b.program_id, &b.hlo_op_name)))
        });
        self.kernels.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| kernel::key_order(a, b)));
    }
}

fn us(ps: i128) -> f64 {
    ps as f64 / 1e6
}

fn ns_us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

/// Which table a command shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Hlo,
    Kernels,
}

/// The text of a table: a row per instruction or kernel, the longest
/// first; at most `rows` rows, and a line saying how many were left out.
pub fn render_text(tables: &Tables, table: Table, rows: usize) -> String {
    let jobs = tables.hlo_ops.iter().any(|r| !r.job.is_empty()) || tables.kernels.iter().any(|k| !k.job.is_empty());
    let (title, mut cells, total): (&str, Vec<Vec<String>>, usize) = match table {
        Table::Hlo => {
            let mut header: Vec<String> = ["HLO op", "category", "framework op", "occurrences", "total", "avg", "self", "module"].map(String::from).to_vec();
            if jobs {
                header.insert(0, "job".into());
            }
            let mut cells = vec![header];
            for r in tables.hlo_ops.iter().take(rows) {
                let mut row = vec![
                    escape(&r.hlo_op_name),
                    escape(&r.category),
                    escape(&r.framework_op),
                    r.occurrences.to_string(),
                    format::micros_f64(us(r.total_ps)),
                    format::micros_f64(us(r.total_ps) / r.occurrences.max(1) as f64),
                    format::micros_f64(us(r.self_ps)),
                    format!("{}({})", escape(&r.module), r.program_id),
                ];
                if jobs {
                    row.insert(0, escape(&r.job));
                }
                cells.push(row);
            }
            ("HLO ops (XProf's hlo_stats), by total time", cells, tables.hlo_ops.len())
        }
        Table::Kernels => {
            let mut header: Vec<String> =
                ["kernel", "op", "occurrences", "total", "avg", "min", "max", "regs", "shmem", "block", "grid", "occupancy", "TensorCore"]
                    .map(String::from)
                    .to_vec();
            if jobs {
                header.insert(0, "job".into());
            }
            let mut cells = vec![header];
            for k in tables.kernels.iter().take(rows) {
                let dims = |d: [u32; 3]| format!("{},{},{}", d[0], d[1], d[2]);
                let mut row = vec![
                    escape(&k.kernel_name),
                    escape(&k.op_name),
                    k.occurrences.to_string(),
                    format::micros_f64(ns_us(k.total_ns)),
                    format::micros_f64(ns_us(k.total_ns) / k.occurrences.max(1) as f64),
                    format::micros_f64(ns_us(k.min_ns)),
                    format::micros_f64(ns_us(k.max_ns)),
                    k.registers_per_thread.to_string(),
                    format::bytes(k.shmem_bytes() as i64),
                    dims(k.block_dim),
                    dims(k.grid_dim),
                    format!("{}%", format::percent(k.occupancy_pct)),
                    match (k.is_kernel_using_tensor_core, k.is_op_tensor_core_eligible) {
                        (true, _) => "used".into(),
                        (false, true) => "eligible, unused".into(),
                        (false, false) => "-".into(),
                    },
                ];
                if jobs {
                    row.insert(0, escape(&k.job));
                }
                cells.push(row);
            }
            ("Kernels (XProf's kernel_stats), by total time", cells, tables.kernels.len())
        }
    };
    let columns = cells[0].len();
    let widths: Vec<usize> = (0..columns).map(|c| cells.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    // Names go left, numbers right.
    let left = |c: usize| !cells[0][c].is_empty() && ["job", "HLO op", "category", "framework op", "module", "kernel", "op"].contains(&cells[0][c].as_str());
    let lefts: Vec<bool> = (0..columns).map(left).collect();
    let mut out = format!("{title}:\n");
    for row in cells.drain(..) {
        let line: Vec<String> =
            row.iter().enumerate().map(|(c, cell)| if lefts[c] { format!("{cell:<w$}", w = widths[c]) } else { format!("{cell:>w$}", w = widths[c]) }).collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    if total > rows {
        out.push_str(&format!("({} more rows: --max_depth N shows N rows; --output csv:outfile=PATH or json:outfile=PATH has them all)\n", total - rows));
    }
    out
}

/// `{"schema_version": 1, "hlo_ops": [...]}` or `{"schema_version": 1,
/// "kernels": [...]}`, every row, XProf's column names in its order
/// (`schemas/hlo.schema.json`, `schemas/kernels.schema.json`).
pub fn write_json<W: Write>(tables: &Tables, table: Table, mut out: W) -> std::io::Result<W> {
    #[derive(Serialize)]
    struct Doc<'t> {
        schema_version: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        hlo_ops: Option<Vec<HloRow<'t>>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        kernels: Option<Vec<KernelRow<'t>>>,
    }
    let doc = match table {
        Table::Hlo => Doc { schema_version: 1, hlo_ops: Some(tables.hlo_ops.iter().map(HloRow::of).collect()), kernels: None },
        Table::Kernels => Doc { schema_version: 1, hlo_ops: None, kernels: Some(tables.kernels.iter().map(KernelRow::of).collect()) },
    };
    serde_json::to_writer(&mut out, &doc)?;
    out.write_all(b"\n")?;
    Ok(out)
}

/// The same rows as CSV: a header of the JSON's keys, a line per row (a
/// row's Python frames joined by ` <- `, innermost first).
pub fn write_csv<W: Write>(tables: &Tables, table: Table, out: W) -> std::io::Result<W> {
    let mut writer = csv::Writer::from_writer(out);
    match table {
        Table::Hlo => {
            for r in &tables.hlo_ops {
                writer.serialize(HloRow { source: Source::Joined(r.source.join(" <- ")), ..HloRow::of(r) })?;
            }
        }
        Table::Kernels => {
            for k in &tables.kernels {
                writer.serialize(KernelRow::of(k))?;
            }
        }
    }
    writer.flush()?;
    writer.into_inner().map_err(|e| e.into_error())
}

/// One `hlo_ops` row as written.
#[derive(Serialize)]
struct HloRow<'t> {
    #[serde(skip_serializing_if = "str::is_empty")]
    job: &'t str,
    program_id: u64,
    module: &'t str,
    hlo_op_name: &'t str,
    category: &'t str,
    framework_op: &'t str,
    occurrences: i64,
    total_time_us: f64,
    avg_time_us: f64,
    total_self_time_us: f64,
    avg_self_time_us: f64,
    source: Source<'t>,
}

/// Python frames: a list in JSON, one cell in CSV.
#[derive(Serialize)]
#[serde(untagged)]
enum Source<'t> {
    Frames(&'t [String]),
    Joined(String),
}

impl<'t> HloRow<'t> {
    fn of(r: &'t HloOp) -> HloRow<'t> {
        let per = |total: f64| total / r.occurrences.max(1) as f64;
        HloRow {
            job: &r.job,
            program_id: r.program_id,
            module: &r.module,
            hlo_op_name: &r.hlo_op_name,
            category: &r.category,
            framework_op: &r.framework_op,
            occurrences: r.occurrences,
            total_time_us: us(r.total_ps),
            avg_time_us: per(us(r.total_ps)),
            total_self_time_us: us(r.self_ps),
            avg_self_time_us: per(us(r.self_ps)),
            source: Source::Frames(&r.source),
        }
    }
}

/// One `kernels` row as written: XProf's `kernel_stats` columns.
#[derive(Serialize)]
struct KernelRow<'t> {
    #[serde(skip_serializing_if = "str::is_empty")]
    job: &'t str,
    kernel_name: &'t str,
    op_name: &'t str,
    registers_per_thread: u32,
    shmem_bytes: u64,
    block_dim: String,
    grid_dim: String,
    occupancy_pct: f64,
    is_op_tensor_core_eligible: bool,
    is_kernel_using_tensor_core: bool,
    occurrences: i64,
    total_duration_us: f64,
    avg_duration_us: f64,
    min_duration_us: f64,
    max_duration_us: f64,
}

impl<'t> KernelRow<'t> {
    fn of(k: &'t Kernel) -> KernelRow<'t> {
        let dims = |d: [u32; 3]| format!("{},{},{}", d[0], d[1], d[2]);
        KernelRow {
            job: &k.job,
            kernel_name: &k.kernel_name,
            op_name: &k.op_name,
            registers_per_thread: k.registers_per_thread,
            shmem_bytes: k.shmem_bytes(),
            block_dim: dims(k.block_dim),
            grid_dim: dims(k.grid_dim),
            occupancy_pct: k.occupancy_pct,
            is_op_tensor_core_eligible: k.is_op_tensor_core_eligible,
            is_kernel_using_tensor_core: k.is_kernel_using_tensor_core,
            occurrences: k.occurrences,
            total_duration_us: ns_us(k.total_ns),
            avg_duration_us: ns_us(k.total_ns) / k.occurrences.max(1) as f64,
            min_duration_us: ns_us(k.min_ns),
            max_duration_us: ns_us(k.max_ns),
        }
    }
}

/// Names come from the trace: control characters are escaped so a row
/// stays one line.
fn escape(name: &str) -> String {
    name.chars().flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect()
}
