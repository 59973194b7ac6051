//! `rtfprof hlo` and `rtfprof kernels`: the glue between the command line
//! and [`crate::device`].

use crate::device::{Table, Tables};
use crate::error::{Error, Result};
use crate::inputs::Kind;
use crate::load::Loaded;
use crate::outputs::{self, device::TableReport};
use crate::show::options::Options;

/// The command that shows `table`.
fn command(table: Table) -> &'static str {
    match table {
        Table::Hlo => "hlo",
        Table::Kernels => "kernels",
    }
}

/// Writes the table of the loaded traces (every job's, merged) where
/// `--output` says; `--max_depth` rows of text. Inputs other than traces,
/// or a trace with no row, are an error saying why.
pub fn run(loaded: &Loaded, table: Table, opts: &Options, stdout: &mut String) -> Result<()> {
    let tables = crate::device::tables(loaded, command(table)).inspect_err(|_| stdout.clear())?;
    show(&tables, table, loaded.all(Kind::PyTorch), opts, stdout)
}

/// Writes `table` of `tables` as [`run`] does (PyTorch traces read in
/// place: [`crate::device::pytorch_only_tables`]); an empty table is an error
/// saying why, for the kind of trace read (`pytorch` or XPlane).
pub fn show(tables: &Tables, table: Table, pytorch: bool, opts: &Options, stdout: &mut String) -> Result<()> {
    let empty = match table {
        Table::Hlo => tables.hlo_ops.is_empty(),
        Table::Kernels => tables.kernels.is_empty(),
    };
    if empty {
        stdout.clear();
        return Err(Error::Profile(match (table, pytorch) {
            (Table::Hlo, false) => "hlo: the trace ran no XLA instruction (no event names an instruction of a program in /host:metadata)".into(),
            (Table::Hlo, true) => "hlo: a PyTorch trace runs no XLA instruction (hlo reads TF2 and JAX traces, --xplane_path; kernels reads PyTorch's)".into(),
            (Table::Kernels, false) => "kernels: the trace has no GPU kernels (no device event with a kernel_details stat)".into(),
            (Table::Kernels, true) => "kernels: the trace has no GPU kernels (no event of category kernel with a duration)".into(),
        }));
    }
    let rows = usize::try_from(opts.max_depth).unwrap_or(0);
    outputs::emit(&TableReport { tables, table, rows }, &opts.output, stdout)
}
