//! `rtfprof steps`' outputs: the text table, JSON and CSV, for the steps
//! of XPlane traces and run metadata (XProf's categories) and for those of
//! PyTorch traces (a table a rank and GPU, with columns of their own).

use std::io::{self, Write};

use super::Report;
use super::text::{csv_field, escape, push_table};
use crate::show::format;
use crate::steps::pytorch::{
    DeviceTime, FIRST_GPU, FIRST_KIND, FIRST_ROLE, GpuTime, KINDS, Rank, Row, SMALL_KERNEL_NS, launches_scope, number_names as pytorch_number_names, numbers,
};
use crate::steps::xplane::Hardware;
use crate::steps::{LABELS, Source, StepRow, Steps, number_names, stats_of};

/// A summary row under a steps table: its label, its pick of (mean, std,
/// CV), and whether it is a ratio.
type StatRow = (&'static str, fn((f64, f64, f64)) -> f64, bool);

impl Report for Steps {
    fn text(&self) -> String {
        render_text(self)
    }

    fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        write_json(self, out).map(drop)
    }

    fn write_csv(&self, out: &mut dyn Write) -> Option<io::Result<()>> {
        Some(write_csv(self, out).map(drop))
    }
}

/// The text `steps` prints: a row per step, then mean, std and CV.
pub fn render_text(steps: &Steps) -> String {
    if steps.source == Source::PyTorch {
        return pytorch_text(&steps.pytorch);
    }
    // The step time, then the categories and device columns some row has.
    let labels: Vec<&str> = LABELS.iter().copied().chain(["Transfers", "Device idle"]).collect();
    let columns: Vec<usize> = (0..labels.len()).filter(|&i| steps.rows.iter().any(|r| r.numbers().nth(i + 1).flatten().is_some())).collect();
    let mut header: Vec<String> = vec!["step".into(), "Step time".into()];
    header.extend(columns.iter().map(|&i| labels[i].to_owned()));
    let values = |r: &StepRow| -> Vec<Option<f64>> {
        let numbers: Vec<Option<f64>> = r.numbers().collect();
        let mut v = vec![Some(r.step_us)];
        v.extend(columns.iter().map(|&i| numbers[i + 1]));
        v
    };
    let us = |v: f64| format::micros(v.round() as i64);
    let mut table: Vec<Vec<String>> = vec![header];
    for r in &steps.rows {
        let mut cells = vec![escape(&r.name)];
        cells.extend(values(r).into_iter().map(|v| v.map_or("-".into(), us)));
        table.push(cells);
    }
    let ncols = table[0].len() - 1;
    let column = |c: usize| -> Vec<f64> { steps.rows.iter().filter_map(|r| values(r)[c]).collect() };
    let stat_rows: [StatRow; 3] = [("mean", |s| s.0, false), ("std", |s| s.1, false), ("CV", |s| s.2, true)];
    for (label, pick, ratio) in stat_rows {
        let mut cells = vec![label.to_owned()];
        for c in 0..ncols {
            let v = pick(stats_of(&column(c)));
            cells.push(if ratio { format!("{}%", format::percent(v * 100.0)) } else { us(v) });
        }
        table.push(cells);
    }
    let mut out = String::new();
    out.push_str(&match steps.source {
        Source::Xplane(Hardware::Gpu) => "Step time breakdown (XProf's input_pipeline_analyzer categories; then, beyond XProf, the step's time in memcpys on the GPUs and the time no GPU ran anything):\n".to_owned(),
        Source::Xplane(_) => "Step time breakdown (XProf's input_pipeline_analyzer categories):\n".to_owned(),
        Source::RunMetadata => "Step time breakdown from run metadata: only device compute (GPU kernels) and host compute (ops on CPUs) are told apart; kernel launch, input, output, compilation and collectives are not in these records, and memcpys are not kept (\"-\" columns); Other is the step's time neither covers.\n".to_owned(),
        Source::PyTorch => unreachable!("rendered by pytorch_text"),
    });
    push_table(&mut out, &table, |c| c == 0, Some(steps.rows.len() + 1));
    out
}

/// `{"schema_version": 1, "steps": [...]}`; categories the input cannot tell
/// are `null`. PyTorch traces' have their own keys, and `"gpu_time"` (see
/// `pytorch_json`). Both layouts: `schemas/steps.schema.json`.
pub fn write_json<W: Write>(steps: &Steps, mut out: W) -> std::io::Result<W> {
    use serde_json::{Map, Value, json};
    if steps.source == Source::PyTorch {
        return pytorch_json(&steps.pytorch, out);
    }
    let rows: Vec<Value> = steps
        .rows
        .iter()
        .map(|r| {
            let mut m = Map::new();
            m.insert("step".into(), json!(r.name));
            for (name, value) in number_names().zip(r.numbers()) {
                m.insert(name, value.map_or(Value::Null, |v| json!(v)));
            }
            Value::Object(m)
        })
        .collect();
    let mut doc = Map::new();
    doc.insert("schema_version".into(), json!(1));
    doc.insert("steps".into(), Value::Array(rows));
    serde_json::to_writer(&mut out, &Value::Object(doc))?;
    out.write_all(b"\n")?;
    Ok(out)
}

/// A header line, then a row per step; empty cells where the input cannot tell.
pub fn write_csv<W: Write>(steps: &Steps, mut out: W) -> std::io::Result<W> {
    if steps.source == Source::PyTorch {
        return pytorch_csv(&steps.pytorch, out);
    }
    let mut header = vec!["step".to_owned()];
    header.extend(number_names());
    writeln!(out, "{}", header.join(","))?;
    for r in &steps.rows {
        let mut cells = vec![csv_field(&r.name)];
        cells.extend(r.numbers().map(|c| c.map_or(String::new(), |v| v.to_string())));
        writeln!(out, "{}", cells.join(","))?;
    }
    Ok(out)
}

/// The labels of [`pytorch_number_names`] in the text tables.
fn labels() -> Vec<&'static str> {
    let mut labels = vec!["Step time", "CPU step", "Kernels"];
    labels.extend(["Kernel", "Memcpy", "Memset", "Communication", "Runtime", "DataLoader", "CPU Exec", "Other"]);
    labels.extend(["Compute", "Non-compute", "GPU idle"]);
    labels.extend(KINDS.iter().map(|k| k.label()));
    labels
}

/// Per rank and GPU: the step time breakdown, then the GPU's split and its
/// kernels by kind, a row per step, then mean, std and CV; then each
/// rank's whole-trace split as HTA gives it.
fn pytorch_text(ranks: &[Rank]) -> String {
    let mut out = String::from(
        "Step time breakdown (PyTorch's TensorBoard plugin: a step ends with the GPU work it launched; each instant goes to the first category then active):\n",
    );
    let several = ranks.len() > 1;
    for rank in ranks {
        let mut devices: Vec<Option<u32>> = rank.rows.iter().map(|r| r.gpu.as_ref().map(|g| g.device)).collect();
        devices.sort_unstable();
        devices.dedup();
        for device in &devices {
            let rows: Vec<&Row> = rank.rows.iter().filter(|r| r.gpu.as_ref().map(|g| g.device) == *device).collect();
            let values: Vec<Vec<Option<f64>>> = rows.iter().map(|r| numbers(r)).collect();
            let mut title = Vec::new();
            if several {
                title.push(format!("rank {}", rank.rank));
            }
            match device {
                Some(d) if devices.len() > 1 => title.push(format!("GPU {d}")),
                None => title.push("no GPU work in the trace (no kernels, copies or sets)".to_owned()),
                _ => {}
            }
            out.push('\n');
            if !title.is_empty() {
                out.push_str(&format!("{}:\n", title.join(", ")));
            }
            // The step's categories (Kernel and the CPU's always; the others
            // where some step has them).
            let nonzero = |c: usize| values.iter().any(|v| v[c].is_some_and(|x| x != 0.0));
            let always: &[usize] =
                if device.is_some() { &[0, 1, FIRST_ROLE, FIRST_ROLE + 4, FIRST_ROLE + 6, FIRST_ROLE + 7] } else { &[0, 1, FIRST_ROLE + 6, FIRST_ROLE + 7] };
            let breakdown: Vec<usize> = (0..FIRST_GPU).filter(|&c| c != 2 && (always.contains(&c) || nonzero(c))).collect();
            push_table(&mut out, &step_table(&rows, &values, &breakdown), |c| c == 0, Some(rows.len() + 1));
            if device.is_some() {
                out.push_str("\nOn the GPU (Compute + Non-compute + GPU idle = Step time), and its kernels' time by kind:\n");
                let gpu: Vec<usize> = std::iter::once(2).chain(FIRST_GPU..FIRST_KIND).chain((FIRST_KIND..labels().len()).filter(|&c| nonzero(c))).collect();
                push_table(&mut out, &step_table(&rows, &values, &gpu), |c| c == 0, Some(rows.len() + 1));
            }
        }
        if !rank.gpu_time.is_empty() {
            out.push_str(&format!(
                "\nGPU time of the whole {}trace as HTA 0.5.0 splits it (events rounded to µs, the last step left out; exact ns in --output json):\n",
                if several { format!("rank {} ", rank.rank) } else { String::new() }
            ));
            let header = ["GPU", "Span", "Compute", "Non-compute", "Idle", "Idle: host wait", "kernel wait", "other"];
            let mut table = vec![header.map(String::from).to_vec()];
            for g in &rank.gpu_time {
                let t = &g.hta;
                let mut cells = vec![g.device.to_string()];
                cells.extend(
                    [t.span_us, t.compute_us, t.non_compute_us, t.idle_us, t.idle_host_wait_us, t.idle_kernel_wait_us, t.idle_other_us].map(format::micros_f64),
                );
                table.push(cells);
            }
            push_table(&mut out, &table, |c| c == 0, None);
        }
        let l = &rank.launches;
        if l.kernels > 0 {
            let us = |ns: f64| format::micros_f64(ns / 1e3);
            out.push_str(&format!(
                "\nKernel launches {}({}, each kernel against the call that launched it as HTA's get_cuda_kernel_launch_stats pairs them, exact, the driver API's launches too): {} kernels, {} ran for less time than their launch call; median launch call {}, median kernel {}; {} kernels shorter than {} took {} of the kernels' {}.\n",
                if several { format!("of rank {} ", rank.rank) } else { String::new() },
                launches_scope(rank),
                l.kernels,
                l.shorter_than_launch,
                us(l.median_launch_ns),
                us(l.median_kernel_ns),
                l.small,
                us(SMALL_KERNEL_NS as f64),
                us(l.small_ns as f64),
                us(l.kernel_ns as f64)
            ));
        }
    }
    out
}

/// A table of the given columns of [`numbers`]: a row per step, then mean,
/// std and CV.
fn step_table(rows: &[&Row], values: &[Vec<Option<f64>>], columns: &[usize]) -> Vec<Vec<String>> {
    let labels = labels();
    let cell = |c: usize, v: f64| if c == 2 { format!("{v:.0}") } else { format::micros_f64(v) };
    let mut table: Vec<Vec<String>> = vec![std::iter::once("step".to_owned()).chain(columns.iter().map(|&c| labels[c].to_owned())).collect()];
    for (row, v) in rows.iter().zip(values) {
        let mut cells = vec![escape(&row.step)];
        cells.extend(columns.iter().map(|&c| v[c].map_or("-".to_owned(), |x| cell(c, x))));
        table.push(cells);
    }
    let stat_rows: [StatRow; 3] = [("mean", |s| s.0, false), ("std", |s| s.1, false), ("CV", |s| s.2, true)];
    for (label, pick, ratio) in stat_rows {
        let mut cells = vec![label.to_owned()];
        for &c in columns {
            let column: Vec<f64> = values.iter().filter_map(|v| v[c]).collect();
            let x = pick(stats_of(&column));
            cells.push(if ratio {
                format!("{}%", format::percent(x * 100.0))
            } else if c == 2 {
                format!("{x:.1}")
            } else {
                format::micros_f64(x)
            });
        }
        table.push(cells);
    }
    table
}

/// A row's JSON object: `step`, `rank`, `device` (`null` without GPU work),
/// then [`pytorch_number_names`].
fn row_json(rank: &Rank, row: &Row) -> serde_json::Value {
    use serde_json::{Map, Value, json};
    let mut m = Map::new();
    m.insert("step".into(), json!(row.step));
    m.insert("rank".into(), json!(rank.rank));
    m.insert("device".into(), row.gpu.as_ref().map_or(Value::Null, |g| json!(g.device)));
    for (name, value) in pytorch_number_names().into_iter().zip(numbers(row)) {
        let value = value.map_or(Value::Null, |v| if name == "kernels" { json!(v as u64) } else { json!(v) });
        m.insert(name, value);
    }
    Value::Object(m)
}

/// A device's whole-trace split as JSON: HTA's keys, `exact` beside.
fn gpu_time_json(rank: &Rank, g: &GpuTime) -> serde_json::Value {
    use serde_json::{Map, Value, json};
    let fields = |t: &DeviceTime| {
        let mut m = Map::new();
        let pairs = [
            ("span_us", t.span_us),
            ("compute_us", t.compute_us),
            ("non_compute_us", t.non_compute_us),
            ("idle_us", t.idle_us),
            ("idle_host_wait_us", t.idle_host_wait_us),
            ("idle_kernel_wait_us", t.idle_kernel_wait_us),
            ("idle_other_us", t.idle_other_us),
        ];
        for (k, v) in pairs {
            m.insert(k.into(), json!(v));
        }
        m
    };
    let mut m = Map::new();
    m.insert("rank".into(), json!(rank.rank));
    m.insert("device".into(), json!(g.device));
    m.extend(fields(&g.hta));
    m.insert("exact".into(), Value::Object(fields(&g.exact)));
    Value::Object(m)
}

/// A rank's [`Launches`] as JSON (µs).
fn launches_json(rank: &Rank) -> serde_json::Value {
    let l = &rank.launches;
    serde_json::json!({
        "rank": rank.rank,
        "kernels": l.kernels,
        "shorter_than_launch": l.shorter_than_launch,
        "median_launch_us": l.median_launch_ns / 1e3,
        "median_kernel_us": l.median_kernel_ns / 1e3,
        "small_kernels": l.small,
        "small_kernel_us": l.small_ns as f64 / 1e3,
        "kernel_us": l.kernel_ns as f64 / 1e3,
    })
}

/// `{"schema_version": 1, "steps": [...], "gpu_time": [...], "launches":
/// [...]}`: a row per rank, step and GPU ([`row_json`]); per rank and GPU,
/// HTA 0.5.0's whole-trace numbers (`span_us`, `compute_us`,
/// `non_compute_us`, `idle_us`, `idle_host_wait_us`, `idle_kernel_wait_us`,
/// `idle_other_us`) and, under `exact`, the same in exact nanoseconds; per
/// rank with kernels, their [`Launches`] (`kernels`, `shorter_than_launch`,
/// `median_launch_us`, `median_kernel_us`, `small_kernels` (shorter than
/// [`SMALL_KERNEL_NS`]), `small_kernel_us`, `kernel_us`).
fn pytorch_json<W: Write>(ranks: &[Rank], mut out: W) -> std::io::Result<W> {
    use serde_json::{Map, Value, json};
    let rows: Vec<Value> = ranks.iter().flat_map(|rank| rank.rows.iter().map(move |r| row_json(rank, r))).collect();
    let gpu_time: Vec<Value> = ranks.iter().flat_map(|rank| rank.gpu_time.iter().map(move |g| gpu_time_json(rank, g))).collect();
    let mut doc = Map::new();
    doc.insert("schema_version".into(), json!(1));
    doc.insert("steps".into(), Value::Array(rows));
    doc.insert("gpu_time".into(), Value::Array(gpu_time));
    doc.insert("launches".into(), Value::Array(ranks.iter().filter(|r| r.launches.kernels > 0).map(launches_json).collect()));
    serde_json::to_writer(&mut out, &Value::Object(doc))?;
    out.write_all(b"\n")?;
    Ok(out)
}

/// A header line, then a row per rank, step and GPU (the JSON rows' keys;
/// empty cells where there is no GPU work). The whole-trace split is in the
/// JSON only.
fn pytorch_csv<W: Write>(ranks: &[Rank], mut out: W) -> std::io::Result<W> {
    let mut header: Vec<String> = ["step", "rank", "device"].map(String::from).to_vec();
    header.extend(pytorch_number_names());
    writeln!(out, "{}", header.join(","))?;
    for rank in ranks {
        for r in &rank.rows {
            let mut cells = vec![csv_field(&r.step), csv_field(&rank.rank), r.gpu.as_ref().map_or(String::new(), |g| g.device.to_string())];
            cells.extend(numbers(r).into_iter().map(|c| c.map_or(String::new(), |v| v.to_string())));
            writeln!(out, "{}", cells.join(","))?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use rtfprof_model::test_random::XorShift;

    /// The steps of randomly corrupted traces, where they are analyzed at
    /// all, render without panicking.
    #[test]
    fn steps_of_corrupted_traces_render() {
        const TF_LOOP: &[u8] = include_bytes!("../../../../testdata/xplane/tf_loop/plugins/profile/run0/host0.xplane.pb");
        let mut rng = XorShift::new(0x57e9_5eed);
        for _ in 0..400 {
            let mut bytes = TF_LOOP.to_vec();
            rng.corrupt(&mut bytes, 4);
            if let Ok(host) = crate::steps::xplane::analyze(&bytes) {
                let steps = crate::steps::from_hosts(&[host.clone(), host]);
                let _ = super::render_text(&steps);
            }
        }
    }
}
