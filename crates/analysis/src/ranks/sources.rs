//! The ranks of a user's inputs, as `rtfprof ranks` reads them: a
//! directory of PyTorch traces, an XPlane run, one trace, or partial
//! profiles that each carry their rank.

use super::Ranks;
use crate::error::{Error, Result};
use crate::inputs::pytorch::windows::Windows;
use crate::load::{self, Sources};

/// `rtfprof ranks`' inputs read: a directory of PyTorch traces (one a
/// rank) or an XPlane run (one host a rank; a log directory's newest run),
/// or one trace (one rank); with the note about the XPlane run chosen. A
/// directory that holds both kinds of trace, or PyTorch traces of which
/// some name their rank and others not, is an error.
pub fn from_sources(sources: &Sources) -> Result<(Ranks, Option<String>)> {
    use rayon::prelude::*;
    if sources.has_partials() {
        // Each partial job carries its rank.
        let what = load::partials_named(sources);
        return Ok((super::from_summaries(&what, load::partials_of(sources)?.rank_summaries(&what)?)?, None));
    }
    let paths = &sources.paths;
    if !sources.jobs.is_empty()
        || paths.graph_path.is_some()
        || !paths.run_meta_paths.is_empty()
        || paths.profile_path.is_some()
        || paths.op_log_path.is_some()
        || paths.events_path.is_some()
    {
        return Err(Error::flag(
            "ranks",
            "reads traces with a rank each: --pytorch_path DIR (PyTorch) or --xplane_path DIR (XPlane hosts), not --job or TensorFlow's inputs",
        ));
    }
    match (&sources.pytorch_path, &sources.xplane_path) {
        (Some(_), Some(_)) => Err(Error::flag("--pytorch_path", "is set: do not set --xplane_path (ranks reads one kind of trace)")),
        (None, None) => Err(Error::flag("ranks", "needs --pytorch_path DIR (a PyTorch trace a rank) or --xplane_path DIR (an XPlane trace a host)")),
        (Some(path), None) => {
            if let Some(xplane) = load::first_file_named(path, load::is_xplane_file) {
                let message = match load::first_file_named(path, load::is_pytorch_file) {
                    Some(trace) => format!(
                        "holds PyTorch traces ({trace}) and XPlane traces ({xplane}): ranks reads the ranks of one job; put each kind in a directory of its own"
                    ),
                    None => format!("holds XPlane traces ({xplane}), not PyTorch traces: use --xplane_path"),
                };
                return Err(Error::input("--pytorch_path", path, message));
            }
            let files = load::pytorch_ranks(path)?;
            // Each rank whole, or (a large one) planned to be read a window
            // of steps at a time.
            let read: Vec<(String, Read)> = files
                .par_iter()
                .map(|(name, file)| {
                    if let Some(windows) = sources.pytorch_windows.plan(file)? {
                        let head = windows.head()?;
                        return Ok((name.clone(), Read { trace: head, windows: Some(windows) }));
                    }
                    Ok((name.clone(), Read { trace: crate::inputs::pytorch::Trace::open(file)?, windows: None }))
                })
                .collect::<Result<_>>()?;
            let traces: Vec<(String, super::RankTrace<'_>)> = read
                .iter()
                .map(|(name, read)| {
                    let trace = match &read.windows {
                        None => super::RankTrace::Whole(&read.trace),
                        Some(windows) => super::RankTrace::Windows(windows, &read.trace),
                    };
                    (name.clone(), trace)
                })
                .collect();
            Ok((super::analyze_pytorch_read(path, &traces)?, None))
        }
        (None, Some(_)) => {
            let (hosts, note) = load::xplane_hosts(sources)?.expect("--xplane_path is set");
            if let Some(dir) = hosts.first().and_then(|(_, file)| file.parent())
                && let Some(trace) = load::first_file_named(dir, load::is_pytorch_file)
            {
                return Err(Error::input(
                    "--xplane_path",
                    dir,
                    format!(
                        "holds XPlane traces ({}) and PyTorch traces ({trace}): ranks reads the ranks of one job; put each kind in a directory of its own",
                        hosts[0].1.file_name().map_or(hosts[0].0.clone(), |n| n.to_string_lossy().into_owned())
                    ),
                ));
            }
            let files = hosts
                .par_iter()
                .map(|(name, path)| {
                    let file = crate::inputs::xplane::XplaneFile::open(path)?;
                    file.check()?;
                    Ok((name.clone(), file))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok((super::xplane::analyze(&files)?, note))
        }
    }
}

/// A rank's trace as read for `ranks`: whole, or planned to be read in
/// windows (`trace` then holds its top-level fields alone).
struct Read {
    trace: crate::inputs::pytorch::Trace,
    windows: Option<Windows>,
}
