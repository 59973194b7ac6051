//! `rtfprof hlo` and `rtfprof kernels`: the glue between the command line
//! and [`crate::device`].

use crate::device::Table;
use crate::error::{Error, Result};
use crate::load::Loaded;
use crate::outputs::{self, device::TableReport};
use crate::show::options::Options;

/// Writes the table of the loaded traces (every job's, merged) where
/// `--output` says; `--max_depth` rows of text. Inputs other than XPlane
/// traces, or a trace with no row, are an error saying why.
pub fn run(loaded: &Loaded, table: Table, opts: &Options, stdout: &mut String) -> Result<()> {
    let command = match table {
        Table::Hlo => "hlo",
        Table::Kernels => "kernels",
    };
    let tables = crate::load::tables(loaded, command).inspect_err(|_| stdout.clear())?;
    let empty = match table {
        Table::Hlo => tables.hlo_ops.is_empty(),
        Table::Kernels => tables.kernels.is_empty(),
    };
    if empty {
        stdout.clear();
        return Err(Error::Profile(match table {
            Table::Hlo => "hlo: the trace ran no XLA instruction (no event names an instruction of a program in /host:metadata)".into(),
            Table::Kernels => "kernels: the trace has no GPU kernels (no device event with a kernel_details stat)".into(),
        }));
    }
    let rows = usize::try_from(opts.max_depth).unwrap_or(0);
    outputs::emit(&TableReport { tables: &tables, table, rows }, &opts.output, stdout)
}
