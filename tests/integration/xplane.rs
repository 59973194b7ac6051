//! XPlane traces (`--xplane_path`) against XProf's own numbers.
//!
//! `testdata/xplane/expected/<fixture>.framework_op_stats.json` is XProf's
//! `framework_op_stats` for each trace (made by `tools/xplane/xprof_goldens.py`).
//! For every op row XProf lists, rtfprof must have the node, with the same
//! number of executions and the same total self time within rounding: each
//! (node, step, device) sum is rounded once, so the error over a node is at
//! most 0.5 µs per step and device it ran in. Per op type (the op view), the
//! sums agree the same way. The shared accelerator traces in
//! `../shared/traces/` are checked too when that directory exists.

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::common;

use common::{jax_gpu_trace, rtfprof, shared_traces, testdata, xprof_golden};

fn xplane_dir() -> PathBuf {
    testdata().join("xplane")
}

/// One row of XProf's op table (without idle time).
#[derive(Debug)]
struct XprofRow {
    side: String,
    op_type: String,
    name: String,
    occurrences: i64,
    self_us: f64,
}

fn xprof_rows(fixture: &str) -> Vec<XprofRow> {
    let tables = xprof_golden(&format!("{fixture}.framework_op_stats"));
    let table = &tables[1];
    let column = |id: &str| table["cols"].as_array().unwrap().iter().position(|c| c["id"] == id).unwrap();
    let (side, op_type, name, occurrences, self_us) =
        (column("host_or_device"), column("type"), column("operation"), column("occurrences"), column("total_self_time"));
    table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let cell = |i: usize| &row["c"][i]["v"];
            XprofRow {
                side: cell(side).as_str().unwrap().to_owned(),
                op_type: cell(op_type).as_str().unwrap().to_owned(),
                name: cell(name).as_str().unwrap().to_owned(),
                occurrences: cell(occurrences).as_f64().unwrap() as i64,
                self_us: cell(self_us).as_f64().unwrap(),
            }
        })
        // XProf makes a row of any event with a `tf_op` stat, even one that
        // names no op (the TPU trace's host `dummy`: type "", no time);
        // rtfprof keeps to events that name an op.
        .filter(|r| !(r.op_type.is_empty() && r.self_us == 0.0))
        .collect()
}

/// A node's own totals over all steps, and in how many steps it ran.
#[derive(Debug, Default, Clone, Copy)]
struct Own {
    runs: i64,
    micros: i64,
    steps: usize,
}

fn run_json(view: &str, trace: &Path) -> Value {
    json_of(view, trace, &["--select=micros,occurrence"])
}

/// The JSON output of `rtfprof <view>` on a trace, whole tree, with `args`.
fn json_of(view: &str, trace: &Path, args: &[&str]) -> Value {
    let mut all = vec![view.to_owned(), "--max_depth=100000".to_owned()];
    all.extend(args.iter().map(|a| a.to_string()));
    all.push(format!("--xplane_path={}", trace.display()));
    rtfprof(&all).json()
}

/// Own values per node: the JSON's per-step values are totals over a node's
/// subtree, so its children's are taken off.
fn own_by_name(node: &Value, metric: &str, into: &mut HashMap<String, Own>) {
    if node.get("per_step").is_none() {
        // One step: the node's own values are its totals.
        let own = |m: &str| node["own"][m].as_i64().unwrap();
        let (runs, micros) = (own("run_count"), own(metric));
        let steps = usize::from(runs != 0 || micros != 0);
        into.insert(node["name"].as_str().unwrap().to_owned(), Own { runs, micros, steps });
        for child in node["children"].as_array().into_iter().flatten() {
            own_by_name(child, metric, into);
        }
        return;
    }
    let per_step = |n: &Value, metric: &str| -> Vec<i64> {
        n["per_step"]["metrics"][metric]["values"].as_array().map_or(vec![], |v| v.iter().map(|x| x.as_i64().unwrap()).collect())
    };
    let mut runs = per_step(node, "run_count");
    let mut micros = per_step(node, metric);
    for child in node["children"].as_array().into_iter().flatten() {
        for (i, v) in per_step(child, "run_count").into_iter().enumerate() {
            runs[i] -= v;
        }
        for (i, v) in per_step(child, metric).into_iter().enumerate() {
            micros[i] -= v;
        }
        own_by_name(child, metric, into);
    }
    let steps = runs.iter().zip(&micros).filter(|(r, m)| **r != 0 || **m != 0).count();
    into.insert(node["name"].as_str().unwrap().to_owned(), Own { runs: runs.iter().sum(), micros: micros.iter().sum(), steps });
}

/// rtfprof's node for an XProf row: the same name, or, for a host's file of
/// a run (`host0/<name>`) and XLA instructions without a framework op
/// (`<module>/<instruction>`), the nodes whose name ends in `/<name>`,
/// summed. Their executions too where they are `hosts`' (XProf adds up
/// the hosts' tables); instructions of several programs that share a name
/// are one framework op to XProf, which ran as often as the most of them
/// (`loop_convert_fusion` of both a training and an evaluation program).
fn matching(own: &HashMap<String, Own>, name: &str, hosts: bool) -> Option<Own> {
    if let Some(o) = own.get(name) {
        return Some(*o);
    }
    let suffix = format!("/{name}");
    let parts: Vec<&Own> = own.iter().filter(|(n, _)| n.ends_with(&suffix) && !n[..n.len() - suffix.len()].contains('/')).map(|(_, o)| o).collect();
    let runs = |a: i64, b: i64| if hosts { a + b } else { a.max(b) };
    (!parts.is_empty())
        .then(|| parts.iter().fold(Own::default(), |a, o| Own { runs: runs(a.runs, o.runs), micros: a.micros + o.micros, steps: a.steps + o.steps }))
}

/// Compares XProf's rows with rtfprof's nodes' own `metric` (exec_micros,
/// or cpu_micros for host rows only); returns the nodes' own totals.
fn check_against_xprof(fixture: &str, rows: &[XprofRow], trace: &Path, devices: usize, metric: &str) -> HashMap<String, Own> {
    assert!(!rows.is_empty(), "{fixture}: XProf lists no ops");
    let mut own = HashMap::new();
    own_by_name(&run_json("scope", trace)["root"], metric, &mut own);
    // (A run's folder of several hosts' files.)
    let files = std::fs::read_dir(trace).map_or(0, |d| d.filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "pb"))).count());
    let mut problems = Vec::new();
    for row in rows {
        let Some(ours) = matching(&own, &row.name, files > 1) else {
            problems.push(format!("{} {} ({}): no such node", row.side, row.name, row.op_type));
            continue;
        };
        if ours.runs != row.occurrences {
            problems.push(format!("{}: {} executions, XProf {}", row.name, ours.runs, row.occurrences));
        }
        let tolerance = 0.5 * (ours.steps.max(1) * devices) as f64 + 1e-6;
        if (ours.micros as f64 - row.self_us).abs() > tolerance {
            problems.push(format!("{}: {} us, XProf {} us (tolerance {tolerance})", row.name, ours.micros, row.self_us));
        }
    }
    assert!(problems.is_empty(), "{fixture}: {} of {} rows differ:\n{}", problems.len(), rows.len(), problems.join("\n"));
    own
}

/// Per op type: XProf's rows summed against rtfprof's op view, less the
/// eager ops (`(eager)/<type>` nodes in `own`), which XProf leaves out.
fn check_types_against_xprof(fixture: &str, trace: &Path, own: &HashMap<String, Own>) {
    let mut xprof: BTreeMap<String, (i64, f64, usize)> = BTreeMap::new();
    for row in xprof_rows(fixture) {
        let t = xprof.entry(row.op_type).or_default();
        t.0 += row.occurrences;
        t.1 += row.self_us;
        t.2 += 1;
    }
    let json = run_json("op", trace);
    let mut ours: HashMap<String, Own> = HashMap::new();
    for node in json["root"]["children"].as_array().unwrap() {
        let sum = |metric: &str| -> i64 { node["per_step"]["metrics"][metric]["values"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).sum() };
        let steps = node["per_step"]["steps_ran"].as_u64().unwrap() as usize;
        ours.insert(node["name"].as_str().unwrap().to_owned(), Own { runs: sum("run_count"), micros: sum("exec_micros"), steps });
    }
    for (op_type, (occurrences, self_us, rows)) in xprof {
        let o = ours.get(&op_type).unwrap_or_else(|| panic!("{fixture}: no op type {op_type}"));
        // Eager ops of the same type are rtfprof's own addition.
        let eager = own.get(&format!("(eager)/{op_type}")).map_or((0, 0), |e| (e.runs, e.micros));
        assert_eq!(o.runs - eager.0, occurrences, "{fixture} {op_type} executions");
        let tolerance = 0.5 * (o.steps.max(1) * rows) as f64 + 1e-6;
        assert!(((o.micros - eager.1) as f64 - self_us).abs() <= tolerance, "{fixture} {op_type}: {} us, XProf {self_us}", o.micros - eager.1);
    }
}

#[test]
fn tf_cpu_traces_match_xprof_per_op() {
    for fixture in ["tf_loop", "keras_fit", "while_loop", "tf_data_loop"] {
        let trace = xplane_dir().join(fixture);
        let rows = xprof_rows(fixture);
        assert!(rows.len() >= 17, "{fixture}: {} rows", rows.len());
        let own = check_against_xprof(fixture, &rows, &trace, 1, "exec_micros");
        check_types_against_xprof(fixture, &trace, &own);
    }
}

/// A bigger real trace (5,481 ops, one step): op by op. (Not per type:
/// XProf keeps 500 rows of each side, so its types' sums fall short.)
#[test]
fn a_cut_bench_trace_matches_xprof_per_op() {
    let fixture = "region_past_marker";
    let rows = xprof_rows(fixture);
    assert!(rows.len() > 400, "{} rows", rows.len());
    check_against_xprof(fixture, &rows, &xplane_dir().join(fixture), 1, "exec_micros");
}

#[test]
fn a_run_with_two_hosts_matches_xprof_summed_over_hosts() {
    let fixture = "two_hosts";
    check_against_xprof(fixture, &xprof_rows(fixture), &xplane_dir().join("two_hosts/plugins/profile/run0"), 1, "exec_micros");
}

#[test]
fn shared_tpu_trace_matches_xprof_per_op() {
    let trace = shared_traces().join("xla_tpu_inference/run/host0.xplane.pb");
    if !trace.exists() {
        eprintln!("skipped: {} is absent (it is not part of the repository)", trace.display());
        return;
    }
    let fixture = "xla_tpu_inference";
    check_against_xprof(fixture, &xprof_rows(fixture), &trace, 4, "exec_micros");
}

#[test]
fn shared_gpu_trace_matches_xprof_on_the_host() {
    let trace = shared_traces().join("tf2_bert_8gpu/run/host0.xplane.pb");
    if !trace.exists() {
        eprintln!("skipped: {} is absent (it is not part of the repository)", trace.display());
        return;
    }
    // XProf attributes no GPU time to ops on this older layout (its device
    // rows are only IDLE), so its host rows are compared with rtfprof's
    // cpu time; rtfprof's kernel time comes on top (`gpu_kernels_...`).
    let fixture = "tf2_bert_8gpu";
    let rows: Vec<XprofRow> = xprof_rows(fixture).into_iter().filter(|r| r.side == "Host").collect();
    assert!(rows.len() > 400);
    let mut accelerator = HashMap::new();
    own_by_name(&run_json("scope", &trace)["root"], "accelerator_micros", &mut accelerator);
    // XProf counts most ops that launched kernels twice (its time is the
    // host's alone), apparently once more for the device plane's derived
    // `TensorFlow Ops` event; rtfprof counts the launches, as tfprof counts
    // runs. So for those rows the count may be twice rtfprof's; times and
    // every other row must agree.
    let rows: Vec<XprofRow> = rows
        .into_iter()
        .map(|mut row| {
            let ran_kernels = accelerator.get(&row.name).is_some_and(|a| a.micros > 0);
            let ours = accelerator.get(&row.name).map_or(0, |a| a.runs);
            if ran_kernels && row.occurrences == 2 * ours {
                row.occurrences = ours;
            }
            row
        })
        .collect();
    check_against_xprof(fixture, &rows, &trace, 1, "cpu_micros");
}

/// GPU traces decoded with prost's generated types give the test's own
/// answers: per op, the kernel and memcpy time on the GPUs (named by the
/// `tf_op` stat, else the `level 0` annotation, memcpy details after `#`
/// dropped), and per op and step the bytes its allocator events held (a
/// plain replay: allocations in time order, a deallocation frees the
/// allocation at its address; steps from the `step_num` markers).
fn check_kernel_time_and_memory(trace: &Path) -> (usize, usize) {
    use prost::Message;
    use rtfprof::proto::tensorflow::profiler::{XSpace, XStat, x_event, x_stat};
    let space = XSpace::decode(std::fs::read(trace).unwrap().as_slice()).unwrap();
    let mut kernel_ps: HashMap<String, (i128, std::collections::HashSet<String>)> = HashMap::new();
    // (time, allocation?, allocator, addr, requested, bytes, tf_op)
    let mut memory: Vec<(i128, bool, String, i64, i64, i64, String)> = Vec::new();
    let mut markers: BTreeMap<i64, (i128, i128)> = BTreeMap::new();
    // TF's own attribution, where it wrote the derived `TensorFlow Ops` line.
    let mut derived_ps: HashMap<String, i128> = HashMap::new();
    for plane in &space.planes {
        let stat_name = |id: i64| plane.stat_metadata.get(&id).map_or("", |m| m.name.as_str());
        let text = |s: &XStat| match &s.value {
            Some(x_stat::Value::StrValue(v)) => v.clone(),
            Some(x_stat::Value::RefValue(r)) => stat_name(*r as i64).to_owned(),
            _ => String::new(),
        };
        let int = |s: &XStat| match &s.value {
            Some(x_stat::Value::Int64Value(v)) => *v,
            Some(x_stat::Value::Uint64Value(v)) => *v as i64,
            _ => 0,
        };
        for line in &plane.lines {
            let derived = ["TensorFlow Ops", "TensorFlow Name Scope", "Steps"].contains(&line.name.as_str());
            for event in &line.events {
                let offset = match event.data {
                    Some(x_event::Data::OffsetPs(o)) => o,
                    _ => 0,
                };
                let start = i128::from(line.timestamp_ns) * 1000 + i128::from(offset);
                let name = plane.event_metadata.get(&event.metadata_id).map_or("", |m| m.name.as_str());
                let stat = |wanted: &str| event.stats.iter().find(|s| stat_name(s.metadata_id) == wanted);
                if plane.name.starts_with("/device:GPU") && line.name == "TensorFlow Ops" {
                    *derived_ps.entry(name.split(':').next().unwrap().to_owned()).or_default() += i128::from(event.duration_ps);
                }
                if plane.name.starts_with("/device:GPU") && !derived {
                    if let Some(op) = stat("tf_op").or_else(|| stat("level 0")).map(text) {
                        let op = op.split('#').next().unwrap().to_owned();
                        if let Some((name, _)) = op.split_once(':') {
                            let entry = kernel_ps.entry(name.to_owned()).or_default();
                            entry.0 += i128::from(event.duration_ps);
                            entry.1.insert(plane.name.clone());
                        }
                    }
                } else if name == "MemoryAllocation" || name == "MemoryDeallocation" {
                    memory.push((
                        start,
                        name == "MemoryAllocation",
                        stat("allocator_name").map(text).unwrap_or_default(),
                        stat("addr").map(int).unwrap_or_default(),
                        stat("requested_bytes").map(int).unwrap_or_default(),
                        stat("allocation_bytes").map(int).unwrap_or_default(),
                        stat("tf_op").map(text).unwrap_or_default(),
                    ));
                } else if let Some(step) = stat("step_num").map(int) {
                    let span = markers.entry(step).or_insert((start, start));
                    span.0 = span.0.min(start);
                    span.1 = span.1.max(start + i128::from(event.duration_ps));
                }
            }
        }
    }
    let after_last = markers.keys().next_back().map_or(0, |s| s + 1);
    let step_of = |t: i128| {
        if markers.is_empty() {
            return 0;
        }
        markers.iter().find(|(_, (a, b))| *a <= t && t < *b).map_or(after_last, |(s, _)| *s)
    };

    let json = run_json_select("scope", trace, "micros,bytes,peak_bytes,residual_bytes");
    // The JSON lists steps only when there are several.
    let mut steps: Vec<i64> = json["steps"].as_array().map_or(vec![], |a| a.iter().map(|v| v.as_i64().unwrap()).collect());
    if steps.is_empty() {
        steps.push(0);
    }
    let mut accelerator = HashMap::new();
    own_by_name(&json["root"], "accelerator_micros", &mut accelerator);
    for (op, (ps, gpus)) in &kernel_ps {
        let ours = accelerator.get(op).unwrap_or_else(|| panic!("no node {op}"));
        // Rounded once per step and GPU the op ran in.
        let tolerance = 0.5 * (gpus.len() * ours.steps.max(1)) as f64 + 1e-6;
        assert!((ours.micros as f64 - *ps as f64 / 1e6).abs() <= tolerance, "{op}: {} us, events {} us", ours.micros, *ps as f64 / 1e6);
    }

    // How TF's derived line relates: each op's events there last exactly as
    // long as its kernels and memcpys (checked on the 8-GPU trace: 665 ops
    // on each of two GPUs; 19 more ops have only memcpys, not on that line),
    // so rtfprof's accelerator time equals TF's own per-op GPU time.
    for (op, ps) in &derived_ps {
        let (kernels, gpus) = &kernel_ps[op];
        assert_eq!(kernels, ps, "{op}: TF's derived line");
        let ours = accelerator[op].micros as f64;
        assert!((ours - *ps as f64 / 1e6).abs() <= 0.5 * gpus.len() as f64 + 1e-6, "{op}");
    }

    memory.sort_by_key(|m| (m.0, !m.1));
    // (op, step) -> (requested, peak, live)
    let mut expected: BTreeMap<(String, i64), (i64, i64, i64)> = BTreeMap::new();
    let mut live: HashMap<(i64, String, i64), (String, i64)> = HashMap::new();
    for (time, allocation, allocator, addr, requested, bytes, tf_op) in memory {
        let step = step_of(time);
        if allocation {
            if !accelerator.contains_key(&tf_op) {
                continue;
            }
            let e = expected.entry((tf_op.clone(), step)).or_default();
            e.0 += requested;
            e.2 += bytes;
            e.1 = e.1.max(e.2);
            live.insert((step, allocator, addr), (tf_op, bytes));
        } else if let Some((op, bytes)) = live.remove(&(step, allocator, addr)) {
            expected.get_mut(&(op, step)).unwrap().2 -= bytes;
        }
    }
    let mut per_step: HashMap<String, HashMap<&str, Vec<i64>>> = HashMap::new();
    own_per_step(&json["root"], &["requested_bytes", "peak_bytes", "residual_bytes"], &mut per_step);
    for ((op, step), (requested, peak, residual)) in &expected {
        let at = steps.iter().position(|s| s == step).unwrap_or_else(|| panic!("no step {step}"));
        let own = per_step.get(op).unwrap_or_else(|| panic!("no node {op}"));
        let got = (own["requested_bytes"][at], own["peak_bytes"][at], own["residual_bytes"][at]);
        assert_eq!(got, (*requested, *peak, *residual), "{op} step {step}");
    }
    (kernel_ps.len(), expected.len())
}

/// Own per-step values of `metrics` by node name (the subtree's less its
/// children's); one step without `per_step`: the `own` values.
fn own_per_step<'m>(node: &Value, metrics: &[&'m str], into: &mut HashMap<String, HashMap<&'m str, Vec<i64>>>) {
    let mut values = HashMap::new();
    for &metric in metrics {
        let of = |n: &Value| -> Vec<i64> {
            match n["per_step"]["metrics"][metric]["values"].as_array() {
                Some(v) => v.iter().map(|x| x.as_i64().unwrap()).collect(),
                None => vec![n["total"][metric].as_i64().unwrap()],
            }
        };
        let mut own = of(node);
        for child in node["children"].as_array().into_iter().flatten() {
            for (i, v) in of(child).into_iter().enumerate() {
                own[i] -= v;
            }
        }
        values.insert(metric, own);
    }
    into.insert(node["name"].as_str().unwrap().to_owned(), values);
    for child in node["children"].as_array().into_iter().flatten() {
        own_per_step(child, metrics, into);
    }
}

#[test]
fn gpu_shaped_trace_kernel_time_and_memory_per_op() {
    let (kernels, allocations) = check_kernel_time_and_memory(&xplane_dir().join("gpu_synth/plugins/profile/run0/host0.xplane.pb"));
    assert!(kernels >= 17 && allocations >= 60, "{kernels} ops with kernels, {allocations} with allocations");
}

#[test]
fn shared_gpu_trace_kernel_time_and_memory_per_op() {
    let trace = shared_traces().join("tf2_bert_8gpu/run/host0.xplane.pb");
    if !trace.exists() {
        eprintln!("skipped: {} is absent (it is not part of the repository)", trace.display());
        return;
    }
    let (kernels, allocations) = check_kernel_time_and_memory(&trace);
    assert!(kernels > 400 && allocations > 100, "{kernels} ops with kernels, {allocations} with allocations");
}

fn run_json_select(view: &str, trace: &Path, select: &str) -> Value {
    json_of(view, trace, &[&format!("--select={select}")])
}

/// JAX on CPU: XProf's op tables are empty for it, so the test computes its
/// own answer from the events (prost's generated types): each HLO
/// instruction event (`hlo_op`, `program_id` stats) is the op its
/// instruction's `op_name` metadata names in the program's HloProto (or
/// `<module>/<instruction>` without one); an op ran as often as the most any
/// of its instructions ran, and its time is the instructions' summed time.
#[test]
fn jax_cpu_trace_matches_its_events() {
    use prost::Message;
    use rtfprof::proto::tensorflow::profiler::{XSpace, XStat, x_event, x_stat};
    use rtfprof::proto::xla::HloProto;
    let trace = xplane_dir().join("jax_jit/plugins/profile/run0/host0.xplane.pb");
    let space = XSpace::decode(std::fs::read(&trace).unwrap().as_slice()).unwrap();
    // program id -> instruction -> op name
    let mut programs: HashMap<i64, HashMap<String, String>> = HashMap::new();
    for plane in space.planes.iter().filter(|p| p.name == "/host:metadata") {
        let stat_name = |id: i64| plane.stat_metadata.get(&id).map_or("", |m| m.name.as_str());
        for meta in plane.event_metadata.values() {
            let mut program = None;
            let mut proto = None;
            for s in &meta.stats {
                match (stat_name(s.metadata_id), &s.value) {
                    ("program_id", Some(x_stat::Value::Int64Value(v))) => program = Some(*v),
                    ("program_id", Some(x_stat::Value::Uint64Value(v))) => program = Some(*v as i64),
                    ("Hlo Proto", Some(x_stat::Value::BytesValue(b))) => proto = Some(HloProto::decode(b.as_slice()).unwrap()),
                    _ => {}
                }
            }
            let (Some(program), Some(proto)) = (program, proto) else { continue };
            let module = proto.hlo_module.unwrap();
            let ops = module
                .computations
                .iter()
                .flat_map(|c| &c.instructions)
                .map(|i| {
                    let op_name = i.metadata.as_ref().map_or("", |m| m.op_name.as_str());
                    let node = if op_name.is_empty() { format!("{}/{}", module.name, i.name) } else { op_name.to_owned() };
                    (i.name.clone(), node)
                })
                .collect();
            programs.insert(program, ops);
        }
    }
    assert!(!programs.is_empty(), "no HloProtos in /host:metadata");
    // op -> instruction -> (runs, ps)
    let mut ops: HashMap<String, HashMap<String, (i64, i128)>> = HashMap::new();
    for plane in space.planes.iter().filter(|p| p.name == "/host:CPU") {
        let stat_name = |id: i64| plane.stat_metadata.get(&id).map_or("", |m| m.name.as_str());
        let text = |s: &XStat| match &s.value {
            Some(x_stat::Value::StrValue(v)) => v.clone(),
            Some(x_stat::Value::RefValue(r)) => stat_name(*r as i64).to_owned(),
            _ => String::new(),
        };
        for event in plane.lines.iter().flat_map(|l| &l.events) {
            let stat = |wanted: &str| event.stats.iter().find(|s| stat_name(s.metadata_id) == wanted);
            let (Some(hlo_op), Some(program)) = (stat("hlo_op").map(text), stat("program_id")) else { continue };
            let program = match program.value {
                Some(x_stat::Value::Int64Value(v)) => v,
                Some(x_stat::Value::Uint64Value(v)) => v as i64,
                _ => continue,
            };
            let Some(node) = programs.get(&program).and_then(|p| p.get(&hlo_op)) else { continue };
            assert!(matches!(event.data, Some(x_event::Data::OffsetPs(_))));
            let entry = ops.entry(node.clone()).or_default().entry(hlo_op).or_default();
            entry.0 += 1;
            entry.1 += i128::from(event.duration_ps);
        }
    }
    assert!(ops.len() >= 5, "{} ops", ops.len());
    let mut own = HashMap::new();
    own_by_name(&run_json("scope", &xplane_dir().join("jax_jit"))["root"], "exec_micros", &mut own);
    for (op, instructions) in &ops {
        let ours = own.get(op).unwrap_or_else(|| panic!("no node {op}"));
        let runs = instructions.values().map(|v| v.0).max().unwrap();
        let ps: i128 = instructions.values().map(|v| v.1).sum();
        // (rtfprof takes the most per step and sums the steps; equal here,
        // where every instruction of an op runs once a step.)
        assert_eq!(ours.runs, runs, "{op}: runs");
        let tolerance = 0.5 * ours.steps.max(1) as f64 + 1e-6;
        assert!((ours.micros as f64 - ps as f64 / 1e6).abs() <= tolerance, "{op}: {} us, events {} us", ours.micros, ps as f64 / 1e6);
    }
}

fn run_json_args(view: &str, trace: &Path, args: &[&str]) -> Value {
    json_of(view, trace, &[&["--select=micros,occurrence,bytes,peak_bytes"], args].concat())
}

/// On every fixture, the view at `--step N` totals what the all-steps
/// JSON reports for step N, and an op type's row in the op view totals
/// what the scope view counts with only that type accounted.
#[test]
fn steps_and_views_agree_on_every_fixture() {
    for fixture in ["tf_loop", "keras_fit", "while_loop", "jax_jit", "gpu_synth", "two_hosts"] {
        let trace = xplane_dir().join(fixture);
        let all = run_json_args("scope", &trace, &[]);
        let steps: Vec<i64> = all["steps"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
        assert!(steps.len() >= 3, "{fixture}: steps {steps:?}");
        for (i, step) in steps.iter().enumerate() {
            let one = run_json_args("scope", &trace, &[&format!("--step={step}")]);
            for metric in ["exec_micros", "run_count", "requested_bytes", "peak_bytes"] {
                assert_eq!(one["root"]["total"][metric], all["root"]["per_step"]["metrics"][metric]["values"][i], "{fixture} step {step} {metric}");
            }
        }
        let op = run_json_args("op", &trace, &["--step=0"]);
        for row in op["root"]["children"].as_array().unwrap().iter().take(5) {
            let op_type = row["name"].as_str().unwrap();
            let pattern = regex::escape(op_type);
            let scope = run_json_args("scope", &trace, &["--step=0", &format!("--account_type_regexes={pattern}")]);
            // (An op row's `total` is cumulative over the rows after it, as in tfprof.)
            assert_eq!(scope["root"]["total"]["exec_micros"], row["own"]["exec_micros"], "{fixture} {op_type}");
        }
    }
}

/// The text views take every option on traces as on RunMetadata.
#[test]
fn text_views_take_the_options() {
    let option_sets: &[&[&str]] = &[
        &["--order_by=micros", "--select=micros,occurrence,device"],
        &["--min_micros=2", "--max_depth=3", "--select=micros,cpu_micros,accelerator_micros"],
        &["--show_name_regexes=.*MatMul.*", "--select=micros,op_types"],
        &["--hide_name_regexes=.*grad.*", "--account_displayed_op_only", "--step=1"],
        &["--order_by=occurrence", "--min_occurrence=2", "--select=occurrence,bytes"],
    ];
    for fixture in ["tf_loop", "jax_jit", "gpu_synth"] {
        for view in ["scope", "op"] {
            for options in option_sets {
                let out = rtfprof([view]).arg(format!("--xplane_path={}", xplane_dir().join(fixture).display())).args(*options).run();
                let stdout = out.stdout_lossy();
                assert!(out.success(), "{fixture} {view} {options:?}: {}", out.stderr_lossy());
                assert!(stdout.contains("Profile:\nnode name |"), "{fixture} {view} {options:?}:\n{stdout}");
            }
        }
    }
}

/// A directory holding a run directory (a copied `run/`, not a log with
/// `plugins/profile/`): the error names the run directory to give.
#[test]
fn a_parent_of_run_directories_names_them() {
    let parent = tempfile::tempdir().unwrap();
    let run = parent.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::copy(xplane_dir().join("tf_loop/plugins/profile/run0/host0.xplane.pb"), run.join("host0.xplane.pb")).unwrap();
    let output = rtfprof(["scope", &format!("--xplane_path={}", parent.path().display())]).run();
    assert_eq!(output.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = output.stderr_str();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("traces are in {}: give that directory", run.display())), "{stderr}");
    let output = rtfprof(["scope", &format!("--xplane_path={}", run.display())]).run();
    assert!(output.success());
}

/// Step markers: per step number, the marker's (start, end) in ps.
type Markers = BTreeMap<i64, (i128, i128)>;

/// The events of an XPlane trace, decoded by the generated decoder: per
/// step marker (events with a `step_num` stat), the marker's span, and
/// every event's (name, start ps), allocator events aside.
fn events_and_markers(trace: &Path) -> (Vec<(String, i128)>, Markers) {
    use prost::Message;
    use rtfprof::proto::tensorflow::profiler::{XSpace, x_event};
    let space = XSpace::decode(std::fs::read(trace).unwrap().as_slice()).unwrap();
    let (mut events, mut markers) = (Vec::new(), BTreeMap::new());
    for plane in &space.planes {
        let step_num: Vec<i64> = plane.stat_metadata.iter().filter(|(_, m)| m.name == "step_num").map(|(id, _)| *id).collect();
        for line in &plane.lines {
            for event in &line.events {
                let name = plane.event_metadata.get(&event.metadata_id).map_or("", |m| m.name.as_str());
                let offset = match event.data {
                    Some(x_event::Data::OffsetPs(o)) => o,
                    _ => 0,
                };
                let start = i128::from(line.timestamp_ns) * 1000 + i128::from(offset);
                if plane.name.starts_with("/host:CPU") {
                    for stat in event.stats.iter().filter(|s| step_num.contains(&s.metadata_id)) {
                        use rtfprof::proto::tensorflow::profiler::x_stat::Value;
                        let step = match stat.value {
                            Some(Value::Int64Value(v)) => v,
                            Some(Value::Uint64Value(v)) => v as i64,
                            _ => continue,
                        };
                        let end = start + i128::from(event.duration_ps);
                        let span = markers.entry(step).or_insert((start, end));
                        *span = (span.0.min(start), span.1.max(end));
                    }
                }
                if name != "MemoryAllocation" && name != "MemoryDeallocation" {
                    events.push((name.to_owned(), start));
                }
            }
        }
    }
    (events, markers)
}

/// The names of the slices of a timeline file, sorted.
fn timeline_slices(path: &Path) -> Vec<String> {
    let json: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut names: Vec<String> =
        json["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").map(|e| e["name"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

/// `--output timeline:outfile=` with `--step N` writes that step alone: the
/// events that start inside its marker (for the step after the last, those
/// outside every marker), as an independent decode of the trace finds them;
/// the steps together are the whole trace.
#[test]
fn a_steps_timeline_holds_its_events_alone() {
    for fixture in ["tf_loop", "keras_fit"] {
        let dir = xplane_dir().join(fixture).join("plugins/profile/run0");
        let trace = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).find(|p| p.to_string_lossy().ends_with(".xplane.pb")).unwrap();
        let (events, markers) = events_and_markers(&trace);
        assert!(markers.len() > 1, "{fixture}: markers");
        let outside = markers.keys().last().unwrap() + 1;
        let out = tempfile::tempdir().unwrap();
        let timeline = |step: i64| {
            let path = out.path().join("tl");
            rtfprof(["scope", &format!("--xplane_path={}", trace.display()), &format!("--step={step}")])
                .arg(format!("--output=timeline:outfile={}", path.display()))
                .run()
                .ok();
            timeline_slices(&out.path().join(format!("tl_{step}")))
        };
        let mut all_steps = Vec::new();
        for (&step, &(start, end)) in &markers {
            let mut expected: Vec<String> = events.iter().filter(|(_, t)| start <= *t && *t < end).map(|(n, _)| n.clone()).collect();
            expected.sort();
            let got = timeline(step);
            assert_eq!(got, expected, "{fixture}: step {step}");
            all_steps.extend(got);
        }
        let mut expected: Vec<String> = events.iter().filter(|(_, t)| !markers.values().any(|(s, e)| s <= t && t < e)).map(|(n, _)| n.clone()).collect();
        expected.sort();
        if !expected.is_empty() {
            let got = timeline(outside);
            assert_eq!(got, expected, "{fixture}: outside every marker (step {outside})");
            all_steps.extend(got);
        }
        all_steps.sort();
        assert_eq!(all_steps, timeline(-1), "{fixture}: the steps together are the trace");
    }
}

/// A trace cut short is an error naming the file and the byte where it
/// ends, found from the planes' framing (the file is not read twice); no
/// output. A file cut at a plane's end would be a whole, shorter trace.
#[test]
fn a_truncated_trace_names_the_byte_it_ends_at() {
    let source = xplane_dir().join("keras_fit/plugins/profile/run0");
    let source = std::fs::read_dir(&source).unwrap().map(|e| e.unwrap().path()).find(|p| p.to_string_lossy().ends_with(".xplane.pb")).unwrap();
    let bytes = std::fs::read(&source).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for cut in [1, 2, 100, bytes.len() / 2, bytes.len() - 1] {
        let path = dir.path().join(format!("cut{cut}.xplane.pb"));
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let out = dir.path().join("out.json");
        let run = rtfprof(["op", &format!("--xplane_path={}", path.display()), &format!("--output=json:outfile={}", out.display())]).run();
        let stderr = run.stderr_lossy();
        assert_eq!(run.code(), Some(1), "cut at {cut}: {stderr}");
        assert!(run.stdout.is_empty(), "cut at {cut}: stdout");
        assert!(!out.exists(), "cut at {cut}: no output file");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("--xplane_path") && stderr.contains(&path.display().to_string()), "{stderr}");
        assert!(stderr.contains(&format!("the file ends at byte {cut}")), "cut at {cut}: {stderr}");
    }
}

/// A trace copied through a text filter (invalid UTF-8 made U+FFFD, as a
/// published copy of a ROCm trace was) is refused in one line that says
/// what is wrong, and does not call the file truncated.
#[test]
fn a_trace_changed_by_a_text_filter_is_not_called_truncated() {
    let source = xplane_dir().join("rocm_te_fused_attn/plugins/profile/run0/934987a2fc2f.xplane.pb");
    let bytes = std::fs::read(&source).unwrap();
    let filtered = String::from_utf8_lossy(&bytes).into_owned().into_bytes();
    assert!(filtered.len() > bytes.len());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("filtered.xplane.pb");
    std::fs::write(&path, &filtered).unwrap();
    let run = rtfprof(["op", &format!("--xplane_path={}", path.display())]).run();
    let stderr = run.stderr_lossy();
    assert_eq!(run.code(), Some(1), "{stderr}");
    assert!(run.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&path.display().to_string()) && !stderr.contains("truncated"), "{stderr}");
}

/// JAX on an H200 where XProf attributes kernels (each names its HLO
/// instruction): per framework op, XProf's occurrences and self time,
/// device and host.
#[test]
fn jax_gpu_traces_match_xprof_per_op() {
    // The committed cuts first (tools/xplane/cut_jax_gpu.sh), then the
    // whole shared traces.
    let cuts = ["jax_gpu_mlp_nocb", "jax_gpu_lstm_nocb", "jax_gpu_xfer", "jax_gpu_cond_nocb"].map(|f| (f, Some(xplane_dir().join(f))));
    let shared = ["jax_mlp_nocb", "flax_cnn_nocb", "jax_lstm_nocb", "jax_xfer"].map(|f| (f, jax_gpu_trace(f)));
    let heldout = common::heldout_jax_gpu_by_twin().0;
    for (fixture, trace) in cuts.into_iter().chain(shared).chain(heldout.iter().map(|(f, t)| (f.as_str(), Some(t.clone())))) {
        let Some(trace) = trace else { continue };
        let rows = xprof_rows(fixture);
        assert!(rows.iter().filter(|r| r.side == "Device").count() >= 3, "{fixture}: {} rows", rows.len());
        check_against_xprof(fixture, &rows, &trace, 1, "exec_micros");
    }
}

/// Beyond XProf: under XLA's default command buffers every kernel of a
/// CUDA graph names only the buffer, and XProf attributes none of them.
/// rtfprof replays XLA's thunk numbering (inputs/xplane/thunks.rs), so the
/// same program recorded without command buffers (`*_nocb`: the same
/// HloProto) is the reference: every device op XProf lists there must be
/// rtfprof's on the command-buffer trace, with the same executions; all
/// of the trace's GPU time must land on those ops, less the transfers
/// (memcpys no instruction made, in neither trace's op rows). The times
/// themselves are two runs' (a graph runs its kernels closer together:
/// small kernels measured 0.4-1.7x their twin's), so they are held to the
/// run-to-run noise seen on these traces: each op within 2.5x of what the
/// twin's executions of its kernels took, the least to the most of them,
/// and the total within 15%. (The twin's own executions of a kernel can
/// spread: the held-out `multi_nocb` ran one 1 µs kernel 10 times for
/// 0.96-5.47 µs, 38 µs in all, which its twin with command buffers ran in
/// 10 µs.) Where the twin's kernel started before the one before it on
/// its stream ended (on Hopper XLA lets a kernel launch early and wait),
/// its time includes that wait, which a graph does not have: the held-out
/// `tx_flax_nocb` ran `wrapped_convert_9` for 59 µs, 54 of them beside
/// the gemm before it, and 5 µs in its twin's graph. The least is then
/// the twin's time less those waits.
#[test]
fn jax_gpu_command_buffers_land_on_the_ops_xprof_shows_without_them() {
    let cuts = ["jax_gpu_mlp", "jax_gpu_lstm", "jax_gpu_cond"].map(|f| (f, Some(xplane_dir().join(f))));
    let shared = ["jax_mlp", "flax_cnn", "jax_lstm"].map(|f| (f, jax_gpu_trace(f)));
    let heldout = common::heldout_jax_gpu_by_twin().1;
    for (fixture, trace) in cuts.into_iter().chain(shared).chain(heldout.iter().map(|(f, t)| (f.as_str(), Some(t.clone())))) {
        let Some(trace) = trace else { continue };
        let twin = format!("{fixture}_nocb");
        let rows: Vec<XprofRow> = xprof_rows(&twin).into_iter().filter(|r| r.side == "Device").collect();
        assert!(rows.len() >= 10, "{twin}: {} device rows", rows.len());
        // Per op, what the twin's executions of its kernels took, each at
        // its least and at its most.
        let mut spread: HashMap<String, (f64, f64)> = HashMap::new();
        for kernel in common::xprof_table_rows(&xprof_golden(&format!("{twin}.kernel_stats"))) {
            let us = |k: &str| kernel[k].as_f64().unwrap() * kernel["occurrences"].as_f64().unwrap();
            let op = spread.entry(kernel["op_name"].as_str().unwrap().to_owned()).or_default();
            op.0 += us("min_duration_us");
            op.1 += us("max_duration_us");
        }
        let twin_trace = if trace.is_dir() { xplane_dir().join(&twin) } else { trace.parent().unwrap().with_file_name(&twin).join("vm.xplane.pb") };
        let waited = waited_per_op(&twin, &twin_trace);
        let mut accelerator = HashMap::new();
        own_by_name(&run_json_select("scope", &trace, "accelerator_micros,occurrence")["root"], "accelerator_micros", &mut accelerator);
        let total: i64 = accelerator.iter().filter(|(n, _)| !n.starts_with("(transfer)")).map(|(_, o)| o.micros).sum();
        let (mut on_rows, mut xprof_total) = (0, 0.0);
        for row in &rows {
            let ours = matching(&accelerator, &row.name, false).unwrap_or_else(|| panic!("{fixture}: no node for {}", row.name));
            assert_eq!(ours.runs, row.occurrences, "{fixture}: {} executions", row.name);
            let (least, most) = spread.get(&row.name).map_or((row.self_us, row.self_us), |&(l, m)| (l.min(row.self_us), m.max(row.self_us)));
            let least = least.min(row.self_us - waited.get(&row.name).copied().unwrap_or(0.0));
            let us = ours.micros as f64;
            assert!(0.4 * least <= us && us <= 2.5 * most, "{fixture}: {} {us} us, twin {} us ({least}-{most})", row.name, row.self_us);
            on_rows += ours.micros;
            xprof_total += row.self_us;
        }
        assert!(on_rows as f64 >= 0.95 * total as f64, "{fixture}: {on_rows} of {total} us on XProf's ops");
        assert!((total as f64 / xprof_total - 1.0).abs() <= 0.15, "{fixture}: {total} us, twin {xprof_total} us");
        assert!(!accelerator.keys().any(|n| n.starts_with("(unattributed)")), "{fixture}: nothing unattributed");
    }
}

/// Per framework op of a trace recorded without command buffers, the µs
/// its GPU events spent beside the event before them on their stream
/// (started before it ended), from the trace's events and XProf's
/// hlo_stats of it (instruction → framework op).
fn waited_per_op(fixture: &str, trace: &Path) -> HashMap<String, f64> {
    use prost::Message;
    use rtfprof::proto::tensorflow::profiler::{XSpace, x_event, x_stat};
    let file = common::first_trace(trace);
    let op_of: HashMap<String, String> = common::xprof_table_rows(&xprof_golden(&format!("{fixture}.hlo_stats")))
        .into_iter()
        .map(|r| (r["hlo_op_name"].as_str().unwrap().to_owned(), r["tf_op_name"].as_str().unwrap().split(':').next().unwrap().to_owned()))
        .collect();
    let space = XSpace::decode(std::fs::read(&file).unwrap().as_slice()).unwrap();
    let mut waited: HashMap<String, f64> = HashMap::new();
    for plane in space.planes.iter().filter(|p| p.name.starts_with("/device:GPU")) {
        let hlo_op = plane.stat_metadata.iter().find(|(_, m)| m.name == "hlo_op").map(|(&id, _)| id);
        let text = |v: &Option<x_stat::Value>| match v {
            Some(x_stat::Value::StrValue(s)) => Some(s.clone()),
            Some(x_stat::Value::RefValue(r)) => plane.stat_metadata.get(&(*r as i64)).map(|m| m.name.clone()),
            _ => None,
        };
        for line in &plane.lines {
            let mut events: Vec<(i64, i64, Option<String>)> = line
                .events
                .iter()
                .map(|e| {
                    let stats = e.stats.iter().chain(plane.event_metadata.get(&e.metadata_id).into_iter().flat_map(|m| &m.stats));
                    let op = stats.filter(|s| Some(s.metadata_id) == hlo_op).find_map(|s| text(&s.value));
                    let start = match e.data {
                        Some(x_event::Data::OffsetPs(o)) => o,
                        _ => 0,
                    };
                    (start, e.duration_ps, op)
                })
                .collect();
            events.sort_by_key(|e| e.0);
            for pair in events.windows(2) {
                let (before, event) = (&pair[0], &pair[1]);
                let overlap = before.0 + before.1 - event.0;
                if let (true, Some(op)) = (overlap > 0, event.2.as_ref().and_then(|h| op_of.get(h))) {
                    *waited.entry(op.clone()).or_default() += overlap.min(event.1) as f64 / 1e6;
                }
            }
        }
    }
    waited
}

/// JAX's XLA programs record most instructions' Python frames: the code
/// view of a JAX GPU trace puts the GPU time of those under their lines
/// (on this trace 97%: the loss' fused `mul;broadcast_in_dim` names none,
/// and XProf shows no source for it either), and the lines are those
/// XProf's hlo_stats gives as the instructions' source.
#[test]
fn jax_gpu_code_view_puts_the_gpu_time_under_python_lines() {
    let trace = xplane_dir().join("jax_gpu_mlp_nocb");
    let code = json_of("code", &trace, &["--select=accelerator_micros"]);
    let scope = json_of("scope", &trace, &["--select=accelerator_micros"]);
    let total = |v: &Value| v["root"]["total"]["accelerator_micros"].as_i64().unwrap();
    assert!(total(&scope) > 0);
    assert!(total(&code) <= total(&scope) && total(&code) as f64 >= 0.95 * total(&scope) as f64, "{} of {}", total(&code), total(&scope));
    let mut names = Vec::new();
    let mut stack = vec![&code["root"]];
    while let Some(node) = stack.pop() {
        names.push(node["name"].as_str().unwrap().to_owned());
        stack.extend(node["children"].as_array().into_iter().flatten());
    }
    // XProf's source cells: `<div … title='FILE:LINE:COL…'>FILE:LINE</div>`.
    let golden: Value = xprof_golden("jax_gpu_mlp_nocb.hlo_stats");
    let column = golden["cols"].as_array().unwrap().iter().position(|c| c["id"] == "source_info").unwrap();
    let mut lines = 0;
    for row in golden["rows"].as_array().unwrap() {
        let cell = row["c"][column]["v"].as_str().unwrap();
        let Some(shown) = cell.strip_suffix("</div>").and_then(|c| c.rsplit('>').next()) else { continue };
        let (file, line) = shown.rsplit_once(':').unwrap();
        let base = file.rsplit('/').next().unwrap();
        assert!(names.iter().any(|n| n.starts_with(&format!("{base}:{line}:"))), "no code line {base}:{line}");
        lines += 1;
    }
    assert!(lines >= 5, "{lines} source lines");
}

/// XLA's `ThenExecuteCallback:<caller>` TraceMe, which XProf's name rule
/// reads as an op, is the runtime's: the scope view puts it under
/// `(runtime)/`, beside the JAX program's scopes, and the op view keeps
/// XProf's type for it.
#[test]
fn runtime_callbacks_are_under_runtime() {
    let trace = xplane_dir().join("jax_gpu_mlp");
    let scope = json_of("scope", &trace, &["--select=micros,occurrence"]);
    let top: Vec<&str> = scope["root"]["children"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(top.contains(&"(runtime)") && !top.contains(&"ThenExecuteCallback"), "{top:?}");
    let runtime = scope["root"]["children"].as_array().unwrap().iter().find(|c| c["name"] == "(runtime)").unwrap();
    assert_eq!(runtime["children"][0]["name"], "(runtime)/ThenExecuteCallback");
    let op = json_of("op", &trace, &["--select=micros,occurrence"]);
    let types: Vec<&str> = op["root"]["children"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(types.contains(&"GetEventForComputeStreamSyncPoint"), "{types:?}");
}
