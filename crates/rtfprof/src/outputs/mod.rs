//! Outputs: how a result is written, and where it goes.
//!
//! The analyses produce data (the views' trees, [`crate::steps::Steps`],
//! [`crate::ranks::Ranks`], [`crate::memory::MemoryProfile`], the device
//! [`crate::device::Tables`], advice, job summaries, diffs); a module here
//! renders each (`steps`, `ranks`, `memory`, `device`, `advise`, `jobs`,
//! `diff`, and for the views `view`, `table`, `folded`, `pprof`,
//! `timeline`, `html`). The reports that have a text, a
//! JSON and maybe a CSV form implement [`Report`], and [`emit`] writes any
//! of them where `--output` says: one dispatch for every command, as
//! hyperfine's exporters share one trait.
//!
//! Files are written to a temporary file beside the target and renamed on
//! success, so a failure never leaves a partial file behind. Devices and
//! pipes (`/dev/null`, `/dev/stdout`, a FIFO) are written in place.

pub mod advise;
pub mod check;
pub mod device;
pub mod diff;
pub mod folded;
pub mod html;
pub mod jobs;
pub mod memory;
pub mod node_proto;
pub(crate) mod pprof;
pub mod ranks;
pub mod steps;
pub mod table;
pub(crate) mod text;
pub mod timeline;
pub mod torch_table;
pub mod view;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::show::options::Output;

/// A result with a text form (stdout or `file:outfile=PATH`), a JSON form
/// (`json:outfile=PATH`) and maybe a CSV one (`csv:outfile=PATH`).
pub trait Report {
    /// What `--output` prints on stdout, or writes to a file.
    fn text(&self) -> String;
    /// The JSON document (its schema is in `schemas/`).
    fn write_json(&self, out: &mut dyn Write) -> io::Result<()>;
    /// The CSV table, or `None` where the result has no CSV form ([`check()`]
    /// refuses `csv:` before anything is read).
    fn write_csv(&self, _out: &mut dyn Write) -> Option<io::Result<()>> {
        None
    }
}

/// Refuses an `--output` that `command`'s [`Report`] cannot write, before
/// any input is read: text (stdout, `file:`), `json:`, and `csv:` where
/// `csv` says.
pub fn check(command: &str, csv: bool, output: &Output) -> Result<()> {
    match output {
        Output::Stdout | Output::None | Output::File(_) | Output::Json(_) => Ok(()),
        Output::Csv(_) if csv => Ok(()),
        _ if csv => {
            Err(Error::flag("--output", format!("{command} writes text (stdout, file:outfile=PATH), json:outfile=PATH or csv:outfile=PATH, not {output}")))
        }
        _ => Err(Error::flag("--output", format!("{command} writes text (stdout, file:outfile=PATH) or json:outfile=PATH, not {output}"))),
    }
}

/// Writes `report` where `--output` says: its text onto `stdout` or into a
/// file, its JSON or CSV into a file (atomically, see [`stream_atomic`]).
pub fn emit(report: &dyn Report, output: &Output, stdout: &mut String) -> Result<()> {
    match output {
        Output::Json(path) => stream_atomic(path, |mut out| report.write_json(&mut out).map(|()| out)),
        Output::Csv(path) => {
            stream_atomic(path, |mut out| report.write_csv(&mut out).unwrap_or_else(|| Err(io::Error::other("this output has no CSV form"))).map(|()| out))
        }
        Output::File(path) => write_atomic(path, report.text().as_bytes()),
        Output::None => Ok(()),
        _ => {
            stdout.push_str(&report.text());
            Ok(())
        }
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    stream_atomic(path, |mut out| out.write_all(bytes).map(|()| out))
}

/// Streams into a temporary file beside `path` and renames it to `path` once
/// `write` succeeded; on any error the temporary file is removed. Through a
/// symbolic link, the file it points to is replaced, not the link.
pub fn stream_atomic(path: &Path, write: impl FnOnce(BufWriter<&mut File>) -> std::io::Result<BufWriter<&mut File>>) -> Result<()> {
    let io_err = |source| Error::Io { kind: "--output", path: path.to_owned(), source };
    let write_all = |file: &mut File| -> Result<()> {
        let out = write(BufWriter::new(file)).map_err(io_err)?;
        out.into_inner().map_err(|e| io_err(e.into_error()))?;
        Ok(())
    };
    // Renaming over a device or a pipe would replace it with a regular file
    // (as root, `/dev/null` itself), so those are opened and written.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return write_all(&mut std::fs::OpenOptions::new().write(true).open(path).map_err(io_err)?);
    }
    let resolved = std::fs::canonicalize(path).ok();
    let path = resolved.as_deref().unwrap_or(path);
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".rtfprof-");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut tmp = builder.tempfile_in(dir).map_err(io_err)?;
    write_all(tmp.as_file_mut())?;
    tmp.persist(path).map_err(|e| io_err(e.error))?;
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn pipes_are_written_in_place() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_atomic(&fifo, b"through the pipe\n").unwrap();
        // (Checked before joining: a replaced FIFO never gets its writer.)
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
        assert_eq!(reader.join().unwrap(), "through the pipe\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left");
    }

    #[test]
    fn a_symlink_keeps_pointing_at_the_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let (target, link) = (dir.path().join("target.txt"), dir.path().join("link.txt"));
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }
}
