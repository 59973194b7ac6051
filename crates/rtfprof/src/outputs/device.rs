//! `rtfprof hlo` and `rtfprof kernels`' outputs: the text table, JSON and
//! CSV of [`Tables`], in XProf's column names.

use std::io::{self, Write};

use serde::Serialize;

use super::Report;
use super::text::escape;
use crate::device::{HloOp, Kernel, Table, Tables};
use crate::show::format;

/// One of the two tables as `rtfprof hlo` or `rtfprof kernels` writes it:
/// `rows` rows of text (all of them in JSON and CSV).
pub struct TableReport<'a> {
    pub tables: &'a Tables,
    pub table: Table,
    pub rows: usize,
}

impl Report for TableReport<'_> {
    fn text(&self) -> String {
        render_text(self.tables, self.table, self.rows)
    }

    fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        write_json(self.tables, self.table, out).map(drop)
    }

    fn write_csv(&self, out: &mut dyn Write) -> Option<io::Result<()>> {
        Some(write_csv(self.tables, self.table, out).map(drop))
    }
}

fn us(ps: i128) -> f64 {
    ps as f64 / 1e6
}

fn ns_us(ns: i64) -> f64 {
    ns as f64 / 1e3
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
                    k.occupancy_pct.map_or_else(|| "-".into(), |o| format!("{}%", format::percent(o))),
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
    // C++ kernel names run to thousands of characters (templates, lambdas):
    // a text table cuts names; CSV and JSON keep them whole.
    let mut cut = false;
    for row in cells.iter_mut().skip(1) {
        for cell in row.iter_mut() {
            if cell.chars().count() > MAX_NAME_CHARS {
                *cell = cell.chars().take(MAX_NAME_CHARS - 3).collect::<String>() + "...";
                cut = true;
            }
        }
    }
    let columns = cells[0].len();
    let widths: Vec<usize> = (0..columns).map(|c| cells.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    // Names go left, numbers right.
    let left = |c: usize| !cells[0][c].is_empty() && ["job", "HLO op", "category", "framework op", "module", "kernel", "op"].contains(&cells[0][c].as_str());
    let lefts: Vec<bool> = (0..columns).map(left).collect();
    let mut out = format!("{title}:\n");
    for row in cells.drain(..) {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| if lefts[c] { format!("{cell:<w$}", w = widths[c]) } else { format!("{cell:>w$}", w = widths[c]) })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    if total > rows {
        out.push_str(&format!("({} more rows: --max_depth N shows N rows; --output csv:outfile=PATH or json:outfile=PATH has them all)\n", total - rows));
    }
    if cut {
        out.push_str(&format!("(names longer than {MAX_NAME_CHARS} characters are cut: --output csv or json has them whole)\n"));
    }
    out
}

/// The widest a name is printed in a text table.
const MAX_NAME_CHARS: usize = 160;

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
    /// `null` (JSON), empty (CSV) where the trace gives none.
    occupancy_pct: Option<f64>,
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
