//! `rtfprof ranks`' outputs: the text table, JSON and CSV.

use std::io::{self, Write};

use serde_json::{Map, Value, json};

use super::Report;
use super::text::{csv_field, escape, push_table};
use crate::ranks::{MAD_SCALE, Rank, Ranks, STRAGGLER_FLOOR, STRAGGLER_K, Source};
use crate::show::format;

impl Report for Ranks {
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

/// What the traces do not tell, said once in every output.
pub const NO_WAIT_SPLIT: &str = "the traces do not tell waiting for other ranks from moving data: a collective kernel is one span from its start, however early its rank arrived, to the end of the transfer, so communication is reported whole";

/// The straggler rule, in words.
pub fn rule_text() -> String {
    format!(
        "a straggler's own time (mean over its steps of the step time less the exposed communication, i.e. the collectives' time that no computation overlapped) is more than {STRAGGLER_K} scaled MADs ({MAD_SCALE} x the median absolute deviation) above the median rank's, and at least {}% above it",
        STRAGGLER_FLOOR * 100.0
    )
}

fn us_or_dash(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), format::micros_f64)
}

fn json_f64(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

fn json_opt(v: Option<f64>) -> Value {
    v.map_or(Value::Null, json_f64)
}

/// The steps of every rank, in first-seen order (ranks may have different
/// steps).
pub fn step_names(ranks: &Ranks) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for rank in &ranks.ranks {
        for step in &rank.steps {
            if !names.contains(&step.step) {
                names.push(step.step.clone());
            }
        }
    }
    names
}

/// Steps shown in the text's per-step table (all of them in CSV and JSON).
const TEXT_STEPS: usize = 10;

fn source_words(ranks: &Ranks) -> String {
    let ids = if ranks.ids_from_traces { "rank ids from distributedInfo.rank" } else { "rank ids in the order of the file names" };
    match ranks.source {
        Source::PyTorch => format!("PyTorch traces, one a rank; {ids}; steps as rtfprof steps finds them on each trace alone"),
        Source::Xplane => {
            "XPlane hosts, one a rank, numbered in the order of their file names; steps as rtfprof steps finds them on each host alone".to_owned()
        }
    }
}

/// The text `ranks` prints.
pub fn render_text(ranks: &Ranks) -> String {
    let mut out = format!("Ranks ({} of them: {}):\n", ranks.ranks.len(), source_words(ranks));
    let header = [
        "rank",
        "name",
        "steps",
        "Step time",
        "std",
        "CV",
        "Own time",
        "Compute",
        "Communication",
        "Exposed comm.",
        "Idle",
        "Comm/compute overlap",
        "straggler",
    ];
    let mut table = vec![header.map(String::from).to_vec()];
    for r in &ranks.ranks {
        let (mean, std, cv) = r.step_time();
        let has_steps = !r.steps.is_empty();
        let overlap = r.overlap.map_or("-".to_owned(), |o| if o.percent.is_finite() { format!("{}%", format::percent(o.percent)) } else { "-".to_owned() });
        table.push(vec![
            r.rank.to_string(),
            escape(&r.name),
            r.steps.len().to_string(),
            if has_steps { format::micros_f64(mean) } else { "-".into() },
            if has_steps { format::micros_f64(std) } else { "-".into() },
            if has_steps { format!("{}%", format::percent(cv * 100.0)) } else { "-".into() },
            us_or_dash(r.own_us()),
            us_or_dash(r.mean(|s| s.compute_us)),
            us_or_dash(r.mean(|s| s.communication_us)),
            us_or_dash(r.mean(|s| s.exposed_communication_us)),
            us_or_dash(r.mean(|s| s.idle_us)),
            overlap,
            if r.straggler { "yes".into() } else { String::new() },
        ]);
    }
    push_table(&mut out, &table, |c| c < 2, None);
    out.push_str(
        "\n(Times are means over each rank's steps; own time is the step time less the exposed communication; the overlap is HTA's get_comm_comp_overlap",
    );
    out.push_str(match ranks.source {
        Source::PyTorch => ", HTA 0.5.0's number: events rounded to whole microseconds, the last step left out.)\n",
        Source::Xplane => "'s definition on the trace's picoseconds.)\n",
    });

    let names = step_names(ranks);
    if !names.is_empty() {
        let shown = &names[..names.len().min(TEXT_STEPS)];
        out.push_str(&if shown.len() < names.len() {
            format!("\nStep time by rank and step (the first {} of {} steps; --output csv or json for all):\n", shown.len(), names.len())
        } else {
            "\nStep time by rank and step:\n".to_owned()
        });
        let mut table = vec![std::iter::once("rank".to_owned()).chain(shown.iter().map(|s| escape(s))).collect::<Vec<_>>()];
        for r in &ranks.ranks {
            let mut row = vec![r.rank.to_string()];
            row.extend(shown.iter().map(|name| r.steps.iter().find(|s| &s.step == name).map_or("-".to_owned(), |s| format::micros_f64(s.step_us))));
            table.push(row);
        }
        push_table(&mut out, &table, |c| c < 1, None);
    }

    let with_transfers: Vec<&Rank> = ranks.ranks.iter().filter(|r| !r.transfers.is_empty()).collect();
    if !with_transfers.is_empty() {
        out.push_str("\nTransfers over each rank's steps (copies by direction: count, bytes, time copying, bytes per second of it):\n");
        let mut table = vec![["rank", "direction", "copies", "bytes", "time", "bandwidth"].map(String::from).to_vec()];
        for r in with_transfers {
            for t in &r.transfers {
                table.push(vec![
                    r.rank.to_string(),
                    t.direction.to_owned(),
                    t.count.to_string(),
                    t.bytes.map_or("-".to_owned(), format::bytes),
                    format::micros_f64(t.us),
                    t.gb_per_s().map_or("-".to_owned(), |g| format!("{g:.2} GB/s")),
                ]);
            }
        }
        push_table(&mut out, &table, |c| c < 2, None);
    }

    out.push_str(&format!("\nStraggler rule: {}.\n", rule_text()));
    match &ranks.rule {
        None => out.push_str("Stragglers: none named (the rule needs 3 or more ranks with steps).\n"),
        Some(rule) => {
            out.push_str(&format!(
                "Median own time {}, scaled MAD {}, threshold {}.\n",
                format::micros_f64(rule.median_us),
                format::micros_f64(rule.scaled_mad_us),
                format::micros_f64(rule.threshold_us)
            ));
            if ranks.stragglers.is_empty() {
                out.push_str("Stragglers: none.\n");
            } else {
                let named: Vec<String> = ranks
                    .ranks
                    .iter()
                    .filter(|r| r.straggler)
                    .map(|r| {
                        let own = r.own_us().unwrap_or(0.0);
                        format!(
                            "rank {} ({}, own time {}, {:+.1}% over the median)",
                            r.rank,
                            escape(&r.name),
                            format::micros_f64(own),
                            100.0 * (own / rule.median_us - 1.0)
                        )
                    })
                    .collect();
                out.push_str(&format!("Stragglers: {}.\n", named.join(", ")));
            }
        }
    }
    out.push_str(&format!("Communication: {NO_WAIT_SPLIT}.\n"));
    out
}

fn rank_json(r: &Rank) -> Value {
    let (mean, std, cv) = r.step_time();
    let has_steps = !r.steps.is_empty();
    let steps: Vec<Value> = r
        .steps
        .iter()
        .map(|s| {
            json!({
                "step": s.step,
                "step_time_us": s.step_us,
                "compute_us": json_opt(s.compute_us),
                "communication_us": json_opt(s.communication_us),
                "exposed_communication_us": json_opt(s.exposed_communication_us),
                "idle_us": json_opt(s.idle_us),
            })
        })
        .collect();
    let transfers: Vec<Value> = r
        .transfers
        .iter()
        .map(|t| json!({"direction": t.direction, "count": t.count, "bytes": t.bytes, "time_us": t.us, "gb_per_s": json_opt(t.gb_per_s())}))
        .collect();
    let mut m = Map::new();
    m.insert("rank".into(), json!(r.rank));
    m.insert("name".into(), json!(r.name));
    m.insert("world_size".into(), json!(r.world_size));
    m.insert("step_time_us".into(), if has_steps { json!({"mean": mean, "std": std, "cv": cv}) } else { Value::Null });
    m.insert("own_time_us".into(), json_opt(r.own_us()));
    m.insert("compute_us".into(), json_opt(r.mean(|s| s.compute_us)));
    m.insert("communication_us".into(), json_opt(r.mean(|s| s.communication_us)));
    m.insert("exposed_communication_us".into(), json_opt(r.mean(|s| s.exposed_communication_us)));
    m.insert("idle_us".into(), json_opt(r.mean(|s| s.idle_us)));
    m.insert("comm_comp_overlap_pctg".into(), r.overlap.map_or(Value::Null, |o| json_f64(o.percent)));
    m.insert("comm_comp_overlap_ratio_exact".into(), r.overlap.map_or(Value::Null, |o| json_f64(o.exact_ratio)));
    m.insert("transfers".into(), Value::Array(transfers));
    m.insert("straggler".into(), json!(r.straggler));
    m.insert("steps".into(), Value::Array(steps));
    Value::Object(m)
}

/// The JSON document: `{"schema_version": 1, "ranks": [...], "stragglers":
/// [rank ids], ...}` (the book's commands/ranks.md lists the keys).
pub fn to_json(ranks: &Ranks) -> Value {
    let mut doc = Map::new();
    doc.insert("schema_version".into(), json!(1));
    doc.insert(
        "source".into(),
        json!(match ranks.source {
            Source::PyTorch => "pytorch",
            Source::Xplane => "xplane",
        }),
    );
    doc.insert("rank_ids".into(), json!(if ranks.ids_from_traces { "distributedInfo" } else { "file_order" }));
    doc.insert("ranks".into(), Value::Array(ranks.ranks.iter().map(rank_json).collect()));
    doc.insert("stragglers".into(), json!(ranks.stragglers));
    let rule = json!({
        "measure": "own_time_us",
        "k": STRAGGLER_K,
        "mad_scale": MAD_SCALE,
        "floor": STRAGGLER_FLOOR,
        "median_us": ranks.rule.map(|r| r.median_us),
        "scaled_mad_us": ranks.rule.map(|r| r.scaled_mad_us),
        "threshold_us": ranks.rule.map(|r| r.threshold_us),
        "text": rule_text(),
    });
    doc.insert("straggler_rule".into(), rule);
    doc.insert("communication_split".into(), json!(NO_WAIT_SPLIT));
    Value::Object(doc)
}

pub fn write_json<W: Write>(ranks: &Ranks, mut out: W) -> std::io::Result<W> {
    serde_json::to_writer(&mut out, &to_json(ranks))?;
    out.write_all(b"\n")?;
    Ok(out)
}

/// The CSV columns: a row per rank and step, the rank's own numbers
/// repeated on each of its rows.
pub const CSV_COLUMNS: [&str; 14] = [
    "rank",
    "name",
    "step",
    "step_time_us",
    "compute_us",
    "communication_us",
    "exposed_communication_us",
    "idle_us",
    "step_time_mean_us",
    "step_time_std_us",
    "step_time_cv",
    "own_time_us",
    "comm_comp_overlap_pctg",
    "straggler",
];

pub fn write_csv<W: Write>(ranks: &Ranks, mut out: W) -> std::io::Result<W> {
    writeln!(out, "{}", CSV_COLUMNS.join(","))?;
    let cell = |v: Option<f64>| v.filter(|v| v.is_finite()).map_or(String::new(), |v| v.to_string());
    for r in &ranks.ranks {
        let (mean, std, cv) = r.step_time();
        for s in &r.steps {
            let cells = [
                r.rank.to_string(),
                csv_field(&r.name),
                csv_field(&s.step),
                s.step_us.to_string(),
                cell(s.compute_us),
                cell(s.communication_us),
                cell(s.exposed_communication_us),
                cell(s.idle_us),
                mean.to_string(),
                std.to_string(),
                cv.to_string(),
                cell(r.own_us()),
                cell(r.overlap.map(|o| o.percent)),
                r.straggler.to_string(),
            ];
            writeln!(out, "{}", cells.join(","))?;
        }
    }
    Ok(out)
}
