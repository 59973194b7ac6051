//! XPlane hosts as ranks: each host's steps as `rtfprof steps` gives them
//! for that host alone, and one pass over its GPU planes for what the steps
//! do not keep: the collective and computation kernels' spans (for the
//! exposed communication and HTA's overlap) and the copies with the bytes
//! their `memcpy_details` stat gives.
//!
//! The device events read are those XProf reads for its device steps:
//! events of a GPU plane's own lines (not the lines XProf derives) that
//! have a `correlation_id`. Copies are rtfprof's memcpy rule
//! ([`crate::inputs::xplane::names::transfer`]); collectives XProf's
//! (`nccl…`); the rest computation.

use prost::DecodeError;

use super::{CommOverlap, Rank, RankStep, Ranks, Source, transfers};
use crate::error::Result;
use crate::inputs::xplane::names::{GpuEventClass, classify_gpu_event, transfer};
use crate::inputs::xplane::not_an_xspace;
use crate::inputs::xplane::planes::{PlaneKind, is_derived_line};
use crate::inputs::xplane::stats::{StatKind, StatKinds};
use crate::inputs::xplane::{Event, Plane, Release, Space, XplaneFile};
use crate::intervals::{Empty, covered, difference, union};
use crate::steps::xplane::{Hardware, HostStep};

/// A host's GPU work, in picoseconds.
#[derive(Debug, Default)]
pub struct DeviceWork {
    pub compute: Vec<(i128, i128)>,
    pub collectives: Vec<(i128, i128)>,
    /// (direction, start, end, bytes).
    pub copies: Vec<(&'static str, i128, i128, Option<i64>)>,
}

/// `H2D` for rtfprof's memcpy types.
fn direction(op_type: &str) -> &'static str {
    match op_type {
        "MemcpyHToD" => "H2D",
        "MemcpyDToH" => "D2H",
        "MemcpyDToD" => "D2D",
        "MemcpyPToP" => "P2P",
        "MemcpyHToH" => "H2H",
        _ => "other",
    }
}

/// The `size:N` of a `memcpy_details` stat (`kind_src:pinned
/// kind_dst:device size:16777216 dest:0 async:1`).
fn details_size(details: &str) -> Option<i64> {
    details.split_whitespace().find_map(|field| field.strip_prefix("size:")).and_then(|n| n.parse().ok())
}

/// The GPU work of a trace, calling `release` with each stretch of the
/// file once walked (as [`crate::steps::xplane::analyze_releasing`] does).
/// Each line's events are decoded on several threads ([`Line::walk`]) and
/// kept in file order.
///
/// [`Line::walk`]: crate::inputs::xplane::Line::walk
pub fn device_work(bytes: &[u8], release: Release<'_>) -> Result<DeviceWork, DecodeError> {
    let mut work = DeviceWork::default();
    for wire in Space::decode(bytes)?.planes {
        if PlaneKind::of(Plane::decode_name(wire)?) != PlaneKind::Gpu {
            continue;
        }
        let plane = Plane::decode_releasing(wire, release)?;
        let kinds = StatKinds::of(&plane);
        let details_id = plane.stat_names.iter().find(|(_, n)| **n == "memcpy_details").map(|(id, _)| *id);
        for line in plane.lines.iter().filter(|l| !is_derived_line(l.id)) {
            let base = i128::from(line.timestamp_ns) * 1000;
            // An event with a `correlation_id`: its name, span and the size
            // its `memcpy_details` gives.
            let read = |_, wire| {
                let event = Event::decode(wire)?;
                let (mut correlated, mut size) = (false, None);
                for stat in event.stats() {
                    if kinds.get(stat.metadata_id) == Some(StatKind::CorrelationId) {
                        correlated = true;
                    } else if Some(stat.metadata_id) == details_id {
                        size = stat.value.as_str(&plane).and_then(details_size);
                    }
                }
                let begin = base + i128::from(event.offset_ps);
                let end = begin + i128::from(event.duration_ps.max(0));
                Ok(correlated.then(|| (plane.event_name(event.metadata_id), begin, end, size)))
            };
            line.walk(release, read, |event| {
                let Some((name, begin, end, size)) = event else { return Ok::<_, DecodeError>(()) };
                if let Some((_, op_type)) = transfer(name) {
                    work.copies.push((direction(op_type), begin, end, size));
                } else if classify_gpu_event(name, "") == GpuEventClass::Collectives {
                    work.collectives.push((begin, end));
                } else {
                    work.compute.push((begin, end));
                }
                Ok(())
            })?;
        }
    }
    Ok(work)
}

/// The collectives' merged spans, and the part of them that no
/// computation overlapped: what a host's communication numbers (per step,
/// and HTA's overlap) are measured on, merged once.
pub struct Collectives {
    merged: Vec<(i128, i128)>,
    exposed: Vec<(i128, i128)>,
}

impl Collectives {
    pub fn of(work: &DeviceWork) -> Collectives {
        let merged = union(work.collectives.clone(), Empty::Drop);
        let exposed = difference(&merged, &union(work.compute.clone(), Empty::Drop));
        Collectives { merged, exposed }
    }

    /// HTA's overlap of the collectives with the computation (see
    /// [`crate::hta::comm_comp_overlap`]) on the trace's own spans: the
    /// time both ran over the collectives' merged time.
    fn overlap(&self) -> f64 {
        let communication: i128 = self.merged.iter().map(|c| c.1 - c.0).sum();
        let exposed: i128 = self.exposed.iter().map(|c| c.1 - c.0).sum();
        (communication - exposed) as f64 / communication as f64
    }

    /// Each step's communication and exposed communication, in
    /// microseconds: the collectives' merged time inside the step, and the
    /// part of it that no computation overlapped.
    pub fn per_step(&self, steps: &[HostStep]) -> Vec<(f64, f64)> {
        let us = |ps: i128| ps as f64 / 1e6;
        steps
            .iter()
            .map(|step| {
                let (begin, end) = (step.begin_ps, step.begin_ps + step.duration_ps);
                (us(covered(&self.merged, begin, end)), us(covered(&self.exposed, begin, end)))
            })
            .collect()
    }
}

/// [`Collectives::per_step`] of a host's trace for its `steps`, `None` where
/// none of its GPU planes names a collective kernel: those traces (most)
/// are told from the planes' event names, without a walk of their events.
pub fn communication_of_steps(file: &XplaneFile, steps: &[HostStep]) -> Result<Option<Vec<(f64, f64)>>> {
    let names_a_collective = |bytes: &[u8]| -> Result<bool, DecodeError> {
        for wire in Space::decode(bytes)?.planes {
            if PlaneKind::of(Plane::decode_name(wire)?) == PlaneKind::Gpu {
                let plane = Plane::decode_unframed(wire)?;
                if plane.event_metadata.values().any(|m| classify_gpu_event(m.name, "") == GpuEventClass::Collectives) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    };
    if !names_a_collective(&file.bytes).map_err(|e| not_an_xspace(&file.path, &e))? {
        return Ok(None);
    }
    let work = device_work(&file.bytes, &|part| file.release(part));
    file.walked();
    let work = work.map_err(|e| not_an_xspace(&file.path, &e))?;
    Ok(Some(Collectives::of(&work).per_step(steps)))
}

/// One host's trace as a rank (`rank` its number). Its two walks (the
/// steps, then the GPU work) give the file's pages back as they go, and
/// all of them when done, as `steps` does: a 1 GB trace is then not
/// resident beside the steps' records (`ranks` of the 1.06 GB
/// flax_cnn_nocb x3400 trace peaked at 1.7 GB with them, a 1 GB file's
/// pages and 0.65 GB of records; bench/large_xplane.md).
pub fn host_rank(rank: i64, name: &str, file: &XplaneFile) -> Result<Rank> {
    let (path, bytes, release) = (&file.path, &file.bytes[..], &|part: &[u8]| file.release(part));
    let host = crate::steps::xplane::analyze_releasing(bytes, release);
    file.walked();
    let host = host.map_err(|e| not_an_xspace(path, &e))?;
    let rows = crate::steps::from_hosts(std::slice::from_ref(&host)).rows;
    let work = device_work(bytes, release);
    file.walked();
    let work = work.map_err(|e| not_an_xspace(path, &e))?;
    let gpu = host.hardware == Hardware::Gpu;
    let us = |ps: i128| ps as f64 / 1e6;
    // (With one host, the rows are its steps, in order.)
    let collectives = Collectives::of(&work);
    let communication = collectives.per_step(&host.steps);
    let steps: Vec<RankStep> = rows
        .iter()
        .zip(communication)
        .map(|(row, (communication, exposed))| {
            let compute = if gpu { row.categories[0] } else { row.categories[3] };
            RankStep {
                step: row.name.clone(),
                step_us: row.step_us,
                compute_us: compute,
                communication_us: gpu.then_some(communication),
                exposed_communication_us: gpu.then_some(exposed),
                idle_us: row.device_idle_us,
            }
        })
        .collect();
    let (from, to) = match (host.steps.first(), host.steps.last()) {
        (Some(first), Some(last)) => (first.begin_ps, last.begin_ps + last.duration_ps),
        _ => (0, 0),
    };
    let ratio = collectives.overlap();
    Ok(Rank {
        rank,
        name: name.to_owned(),
        world_size: None,
        steps,
        transfers: transfers(&work.copies, from, to, |s, e| us(e - s)),
        overlap: gpu.then_some(CommOverlap { percent: (100.0 * ratio * 100.0).round_ties_even() / 100.0, exact_ratio: ratio }),
        straggler: false,
    })
}

/// The summary of one host as a rank (see [`super::RankSummary`]).
pub fn summary(name: &str, file: &XplaneFile) -> Result<super::RankSummary> {
    let rank = host_rank(0, name, file)?;
    let overlap_without_last_step = rank.overlap;
    Ok(super::RankSummary { source: Source::Xplane, rank, given_rank: None, step_names: Vec::new(), overlap_without_last_step })
}

/// The hosts of a run directory as ranks, numbered in their order: each
/// host's name and mapped file.
pub fn analyze(hosts: &[(String, XplaneFile)]) -> Result<Ranks> {
    use rayon::prelude::*;
    let mut ranks = hosts.par_iter().enumerate().map(|(i, (name, file))| host_rank(i as i64, name, file)).collect::<Result<Vec<_>>>()?;
    Ok(super::finish(Source::Xplane, false, &mut ranks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_sizes_and_directions() {
        assert_eq!(details_size("kind_src:pinned kind_dst:device size:16777216 dest:0 async:1"), Some(16777216));
        assert_eq!(details_size("kind_src:pinned"), None);
        assert_eq!(direction("MemcpyDToH"), "D2H");
    }
}
