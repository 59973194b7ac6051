//! `rtfprof report` and `rtfprof diff --output html:outfile=PATH`.
//!
//! Without a browser: the page is written for every input kind (run
//! metadata, profile, XPlane traces, jobs), is one self-contained file
//! (nothing referenced outside it, a Content-Security-Policy that forbids
//! fetching), and bad flags write nothing.
//!
//! In headless Chromium (Debian's `chromium`; `RTFPROF_CHROMIUM` names
//! another binary; skipped with a message when there is none): what the page
//! draws, read from the DOM after its script ran (`--dump-dom`), never from
//! the embedded data, compared with what the library computes for the same
//! inputs. The page is driven by its URL fragment (`#tab=ops&sort=…`). Every
//! load runs with the resolver and proxy pointing nowhere and a NetLog,
//! which must show no request from the page.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use regex::Regex;
use rtfprof::show::{self, Displayed, Options, format};
use rtfprof::views::View;

use crate::common;

use common::{fixture_flags, fixture_stats, rtfprof, testdata, unescape_html};

/// Runs `rtfprof <args> --output html:outfile=<dir>/report.html`.
fn write_page(dir: &Path, args: &[String]) -> PathBuf {
    let page = dir.join("report.html");
    let mut args = args.to_vec();
    args.push(format!("--output=html:outfile={}", page.display()));
    let run = rtfprof(&args).run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok, "rtfprof {args:?} failed:\n{out}{err}");
    assert!(out.contains("written to"), "{out}");
    page
}

fn report(args: &[String]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec!["report".to_owned()];
    all.extend(args.iter().cloned());
    let page = write_page(dir.path(), &all);
    (dir, page)
}

fn s(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

fn path_flag(flag: &str, rel: &str) -> String {
    format!("--{flag}={}", testdata().join(rel).display())
}

/// An input kind of [`every_input_kind`]: its name, flags, whether it has
/// code traces, its device tabs, and whether it has several ranks.
type InputKind = (&'static str, Vec<String>, bool, &'static [&'static str], bool);

/// The input kinds: run metadata (+ graph, op log), a profile, XPlane
/// traces (TF, JAX on CPU and on a GPU; two hosts as jobs), `--job`
/// directories and PyTorch ranks; whether each has code traces, the
/// device tabs it has (XLA instructions, GPU kernels), and whether it has
/// several ranks (a ranks tab).
fn every_input_kind() -> Vec<InputKind> {
    vec![
        ("run_meta", fixture_flags("cnn"), true, &[], false),
        ("profile", vec![path_flag("profile_path", "cnn/profile")], true, &[], false),
        ("xplane tf", vec![path_flag("xplane_path", "xplane/tf_loop")], false, &[], false),
        ("xplane jax", vec![path_flag("xplane_path", "xplane/jax_jit")], true, &["hlo"], false),
        ("xplane jax gpu", vec![path_flag("xplane_path", "xplane/jax_gpu_mlp")], true, &["hlo", "kernels"], false),
        ("xplane hosts", vec![path_flag("xplane_path", "xplane/two_hosts")], false, &[], true),
        (
            "jobs",
            vec![format!("--job=w0={}", testdata().join("jobs/worker0").display()), format!("--job=w1={}", testdata().join("jobs/worker1").display())],
            false,
            &[],
            false,
        ),
        ("pytorch ranks", vec![path_flag("pytorch_path", "pytorch/gloo3")], false, &[], true),
    ]
}

/// The JSON document the page embeds (for the no-browser checks only).
fn embedded(page: &str) -> serde_json::Value {
    common::page_data(page).unwrap()
}

/// The one absolute URL the page may contain: the SVG namespace, a name
/// that `createElementNS` needs, never fetched.
const SVG_NAMESPACE: &str = "http://www.w3.org/2000/svg";

/// Checks the page's markup, styles and script; the data element's content
/// is JSON the page parses, never markup, so it is left out.
fn assert_self_contained(page: &str) {
    let data_start = page.find(r#"id="rtfprof-data">"#).expect("the data element");
    let data_end = data_start + page[data_start..].find("</script>").unwrap();
    let page = format!("{}{}", &page[..data_start], &page[data_end..]);
    let without_ns = page.replace(SVG_NAMESPACE, "");
    for needle in ["http:", "https:", "//cdn", " src=", " href=", "url(", "@import", "<link", "<iframe", "<img"] {
        assert!(!without_ns.contains(needle), "the page refers outside itself: {needle}");
    }
    assert!(page.contains("Content-Security-Policy\" content=\"default-src 'none'"), "no CSP forbidding fetches");
    assert_eq!(page.matches("<script").count(), 2, "one data and one code script");
    assert_eq!(page.matches("</script>").count(), 2);
}

#[test]
fn every_input_kind_gives_a_self_contained_page() {
    for (kind, args, has_code, device_tabs, ranks) in every_input_kind() {
        let (_dir, path) = report(&args);
        let page = std::fs::read_to_string(&path).unwrap();
        assert!(page.starts_with("<!DOCTYPE html>"), "{kind}");
        assert_self_contained(&page);
        let data = embedded(&page);
        assert_eq!(data["schema_version"], 1, "{kind}");
        let views: Vec<&str> = data["trees"].as_array().unwrap().iter().map(|t| t["view"].as_str().unwrap()).collect();
        assert_eq!(views, if has_code { vec!["scope", "code"] } else { vec!["scope"] }, "{kind}");
        assert!(data["trees"][0]["names"].as_array().unwrap().len() > 1, "{kind}: empty scope tree");
        assert_eq!(data.get("ranks").is_some(), ranks, "{kind}");
        if let Some(browser) = Browser::find() {
            let dom = browser.render(&path, "");
            assert!(dom.rects().len() > 1, "{kind}: no flame chart drawn");
            let tabs = dom.all(r#"<button[^>]* role="tab"[^>]* data-tab="([a-z]+)""#);
            let mut expected = vec!["scope", "ops"];
            if has_code {
                expected.insert(1, "code");
            }
            expected.extend(device_tabs);
            expected.push("steps");
            if ranks {
                expected.push("ranks");
            }
            expected.push("memory");
            assert_eq!(tabs, expected, "{kind}");
        }
    }
}

#[test]
fn bad_flags_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    let profile = path_flag("profile_path", "cnn/profile");
    for (args, message) in [
        (vec!["report".to_owned(), profile.clone()], "report writes one HTML file"),
        (vec!["report".to_owned(), profile.clone(), "--output=json:outfile=x.json".into()], "report writes one HTML file"),
        (vec!["scope".to_owned(), profile.clone(), format!("--output=html:outfile={}", page.display())], "html output is written by 'rtfprof report'"),
        (vec!["report".to_owned(), profile.clone(), "--step=7".into(), format!("--output=html:outfile={}", page.display())], "step not found"),
        (
            vec!["report".to_owned(), profile.clone(), "--hide_name_regexes=(".into(), format!("--output=html:outfile={}", page.display())],
            "--hide_name_regexes",
        ),
        (vec!["report".to_owned(), profile.clone(), format!("--output=html:outfile={}", dir.path().join("no/such/dir/r.html").display())], "--output"),
        (vec!["report".to_owned(), path_flag("profile_path", "cnn/missing"), format!("--output=html:outfile={}", page.display())], "--profile_path"),
    ] {
        let run = rtfprof(&args).run();
        let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
        assert!(!ok, "{args:?} succeeded");
        assert!(err.contains(message) && err.lines().count() == 1, "{args:?}: {err}");
        assert!(!out.contains("written to"), "{out}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "a file was left behind");
}

// ------------------------------------------------------------------ browser

/// Chromium runs one at a time: the machines running the tests are small.
static BROWSER_LOCK: Mutex<()> = Mutex::new(());

struct Browser(PathBuf);

impl Browser {
    fn find() -> Option<Browser> {
        common::chromium("the report's browser checks").map(Browser)
    }

    /// The page's DOM after its script ran, opened at `#fragment`; fails if
    /// the page fetched anything or did not finish drawing.
    fn render(&self, page: &Path, fragment: &str) -> Dom {
        let _one_at_a_time = BROWSER_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let profile = tempfile::tempdir().unwrap();
        let net_log = profile.path().join("net.json");
        let url = format!("file://{}#{fragment}", page.canonicalize().unwrap().display());
        let out = self.run(profile.path(), &net_log, &url);
        let dom = String::from_utf8(out).unwrap();
        assert!(dom.contains(r#"data-ready="1""#), "the page did not finish drawing at #{fragment}:\n{}", &dom[..dom.len().min(3000)]);
        let requests = page_requests(&net_log);
        assert!(requests.is_empty(), "the page fetched: {requests:?}");
        Dom(dom)
    }

    fn run(&self, profile: &Path, net_log: &Path, url: &str) -> Vec<u8> {
        let out = Command::new(&self.0)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--no-first-run",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--proxy-server=127.0.0.1:9",
                "--window-size=1280,900",
                "--virtual-time-budget=5000",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--log-net-log={}", net_log.display()))
            .arg("--dump-dom")
            .arg(url)
            .output()
            .expect("chromium runs");
        assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }
}

/// URLs the page asked for, from Chromium's NetLog: requests whose initiator
/// is an origin (a `file://` page's is `null`); the browser's own
/// background requests have none.
fn page_requests(net_log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(net_log).expect("chromium wrote its NetLog");
    // Chromium may leave the log's closing brackets off when it exits.
    let log: serde_json::Value =
        serde_json::from_str(&text).or_else(|_| serde_json::from_str(&format!("{}]}}", text.trim_end().trim_end_matches(',')))).expect("the NetLog parses");
    let types = &log["constants"]["logEventTypes"];
    let start_job = types["URL_REQUEST_START_JOB"].as_i64().expect("NetLog names its event types");
    log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"].as_i64() == Some(start_job))
        .filter_map(|e| {
            let params = &e["params"];
            let url = params["url"].as_str()?;
            (params["initiator"].as_str() != Some("not an origin")).then(|| url.to_owned())
        })
        .collect()
}

#[test]
fn the_network_check_sees_a_page_that_fetches() {
    let Some(browser) = Browser::find() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("fetches.html");
    std::fs::write(&page, "<!DOCTYPE html><img src=\"http://example.com/x.png\"><script>fetch('https://example.org/y').catch(() => {})</script>").unwrap();
    let profile = tempfile::tempdir().unwrap();
    let net_log = profile.path().join("net.json");
    let _ = browser.run(profile.path(), &net_log, &format!("file://{}", page.display()));
    let requests = page_requests(&net_log);
    assert!(requests.contains(&"http://example.com/x.png".to_owned()) && requests.contains(&"https://example.org/y".to_owned()), "{requests:?}");
}

/// A flame chart rectangle as drawn.
#[derive(Debug)]
struct Rect {
    index: usize,
    depth: usize,
    classes: Vec<String>,
    left: f64,
    width: f64,
    background: String,
    text: String,
}

struct Dom(String);

/// A data table: its column keys, and per row each cell's text and
/// `data-v` (for numbers).
type Table = (Vec<String>, Vec<Vec<(String, Option<f64>)>>);

fn attributes(tag: &str) -> std::collections::HashMap<String, String> {
    let attr = Regex::new(r#"([\w.-]+)="([^"]*)""#).unwrap();
    attr.captures_iter(tag).map(|c| (c[1].to_owned(), unescape_html(&c[2]))).collect()
}

impl Dom {
    /// Every first capture group of `pattern`.
    fn all(&self, pattern: &str) -> Vec<String> {
        Regex::new(pattern).unwrap().captures_iter(&self.0).map(|c| unescape_html(&c[1])).collect()
    }

    fn rects(&self) -> Vec<Rect> {
        let rect = Regex::new(r#"<div (class="fr[^"]*"[^>]*)>([^<]*)</div>"#).unwrap();
        let percent = |style: &str, key: &str| -> f64 {
            let at = style.find(&format!("{key}: ")).unwrap_or_else(|| panic!("no {key} in {style}")) + key.len() + 2;
            style[at..at + style[at..].find('%').unwrap()].parse().unwrap()
        };
        rect.captures_iter(&self.0)
            .map(|c| {
                let a = attributes(&c[1]);
                let style = &a["style"];
                let background = style.split("background: ").nth(1).unwrap_or("").trim_end_matches(';').to_owned();
                Rect {
                    index: a["data-i"].parse().unwrap(),
                    depth: a["data-d"].parse().unwrap(),
                    classes: a["class"].split(' ').map(str::to_owned).collect(),
                    left: percent(style, "left"),
                    width: percent(style, "width"),
                    background,
                    text: unescape_html(&c[2]),
                }
            })
            .collect()
    }

    /// The width in pixels the flame chart was drawn at.
    fn flame_px(&self) -> f64 {
        self.all(r#"class="flame-canvas"[^>]* data-px="([0-9.]+)""#)[0].parse().unwrap()
    }

    /// The rows of the table with class `class`: each cell's text, and
    /// `data-v` for numbers.
    fn table(&self, class: &str) -> Table {
        self.tables(class).into_iter().next().unwrap_or_else(|| panic!("no table {class}"))
    }

    /// Every table with class `class`, in page order (see [`Dom::table`]).
    fn tables(&self, class: &str) -> Vec<Table> {
        let opening = format!(r#"<table class="data {class}""#);
        self.0.match_indices(&opening).map(|(start, _)| Self::parse_table(&self.0[start..start + self.0[start..].find("</table>").unwrap()])).collect()
    }

    fn parse_table(table: &str) -> Table {
        let head = Regex::new(r#"<th [^>]*data-key="([^"]+)""#).unwrap();
        let keys = head.captures_iter(table).map(|c| c[1].to_owned()).collect();
        let row = Regex::new(r"(?s)<tr data-i=[^>]*>(.*?)</tr>").unwrap();
        let cell = Regex::new(r"(?s)<td([^>]*)>(.*?)</td>").unwrap();
        let rows = row
            .captures_iter(table)
            .map(|r| {
                cell.captures_iter(&r[1])
                    .map(|c| {
                        let a = attributes(&c[1]);
                        (unescape_html(&c[2]), a.get("data-v").map(|v| v.parse().unwrap()))
                    })
                    .collect()
            })
            .collect();
        (keys, rows)
    }
}

/// A displayed tree in the page's order (pre-order), with each node's parent.
fn preorder(root: &Displayed) -> Vec<(&Displayed, Option<usize>)> {
    let mut out = Vec::new();
    let mut stack = vec![(root, None)];
    while let Some((node, parent)) = stack.pop() {
        let index = out.len();
        out.push((node, parent));
        stack.extend(node.children.iter().rev().map(|c| (c, Some(index))));
    }
    out
}

/// The report's options: tfprof's defaults without a depth limit.
fn report_options() -> Options {
    Options { max_depth: i64::MAX, ..Options::default() }
}

/// The rectangles the chart must draw right below the root for `metric`:
/// each child as wide as its share, those under a pixel left out.
#[test]
fn the_scope_flame_chart_draws_the_top_nodes_by_time_and_by_bytes() {
    let Some(browser) = Browser::find() else { return };
    let stats = fixture_stats("cnn");
    let root = show::run(&stats, View::Scope, &report_options()).unwrap().root;
    let nodes = preorder(&root);
    let (_dir, page) = report(&fixture_flags("cnn"));
    let by_time: fn(&Displayed) -> i64 = |d| d.totals.exec_micros;
    let by_bytes: fn(&Displayed) -> i64 = |d| d.totals.requested_bytes;
    // (Bytes go almost all to `gradients` in this model.)
    for (fragment, metric, least) in [("tab=scope", by_time, 3), ("tab=scope&metric=requested_bytes", by_bytes, 1)] {
        let dom = browser.render(&page, fragment);
        let px = dom.flame_px();
        let rects = dom.rects();
        let top: Vec<&Rect> = rects.iter().filter(|r| r.depth == 1).collect();
        let children: Vec<(usize, &Displayed)> = nodes.iter().enumerate().filter(|(_, (_, p))| *p == Some(0)).map(|(i, (d, _))| (i, *d)).collect();
        let sum: i64 = children.iter().map(|(_, d)| metric(d).max(0)).sum();
        let denom = metric(&root).max(sum) as f64;
        let expected: Vec<(usize, f64, &str)> = children
            .iter()
            .map(|(i, d)| (*i, 100.0 * metric(d).max(0) as f64 / denom, d.name.as_str()))
            .filter(|(_, width, _)| width * px / 100.0 >= 1.0)
            .collect();
        assert!(expected.len() >= least, "{fragment}: too few top nodes to test");
        assert_eq!(top.len(), expected.len(), "{fragment}: rectangles below the root: {top:?}");
        let mut left = 0.0;
        for (index, width, name) in &expected {
            let r = top.iter().find(|r| r.index == *index).unwrap_or_else(|| panic!("{fragment}: {name} not drawn"));
            assert!((r.width - width).abs() < 1e-3, "{fragment}: {name} is {}% wide, not {width}%", r.width);
            // Children keep the view's order, left to right.
            assert!(r.left + 1e-6 >= left, "{fragment}: {name} out of order");
            left = r.left;
            let labelled = width * px / 100.0 >= 28.0;
            assert_eq!(r.text, if labelled { name.to_string() } else { String::new() }, "{fragment}: label of {name}");
        }
        let root_rect = rects.iter().find(|r| r.depth == 0).expect("the root is drawn");
        assert_eq!((root_rect.left, root_rect.width, root_rect.text.as_str()), (0.0, 100.0, "_TFProfRoot"));
        // Every node drawn is at least a pixel wide.
        assert!(rects.iter().all(|r| r.width * px / 100.0 >= 1.0 - 1e-9), "{fragment}");
    }
}

#[test]
fn zoom_search_and_hover_show_the_node() {
    let Some(browser) = Browser::find() else { return };
    let stats = fixture_stats("cnn");
    let root = show::run(&stats, View::Scope, &report_options()).unwrap().root;
    let nodes = preorder(&root);
    let (_dir, page) = report(&fixture_flags("cnn"));
    let hovered = "gradients/conv1/Conv2D_grad/Conv2DBackpropFilter";
    let dom = browser.render(&page, &format!("tab=scope&zoom.scope=gradients&search=backprop&hover={hovered}"));
    let rects = dom.rects();
    let zoomed = nodes.iter().position(|(d, _)| d.name == "gradients").unwrap();
    let z = rects.iter().find(|r| r.index == zoomed).expect("the zoomed node is drawn");
    assert_eq!((z.left, z.width), (0.0, 100.0));
    assert!(z.classes.iter().any(|c| c == "zoomed"));
    for r in &rects {
        let name = &nodes[r.index].0.name;
        if r.index == 0 {
            assert!(r.classes.iter().any(|c| c == "anc"), "the root is drawn as an ancestor");
        } else {
            assert!(*name == "gradients" || name.starts_with("gradients/"), "{name} is outside the zoomed node");
        }
        // Search is a case-insensitive regex over full names.
        let hit = name.to_lowercase().contains("backprop");
        assert_eq!(r.classes.iter().any(|c| c == "hit"), hit, "{name}");
    }
    assert!(rects.iter().filter(|r| r.classes.iter().any(|c| c == "hit")).count() >= 2);
    let matching = nodes.iter().filter(|(d, _)| d.name.to_lowercase().contains("backprop")).count();
    assert!(dom.0.contains(&format!("{matching} matching nodes")), "status line");
    // The info bar shows the hovered node's own and total time.
    let node = nodes.iter().find(|(d, _)| d.name == hovered).unwrap().0;
    let info = dom.all(r#"(?s)<div class="flame-info"[^>]*>(.*?)</div>"#).join("");
    let expected = format!("{} / {}", format::micros(node.own.exec_micros), format::micros(node.totals.exec_micros));
    assert!(info.contains(hovered) && info.contains(&expected), "info bar: {info}, expected {expected}");
}

#[test]
fn the_code_view_draws_python_frames_as_text() {
    let Some(browser) = Browser::find() else { return };
    let (_dir, page) = report(&fixture_flags("cnn"));
    let dom = browser.render(&page, "tab=code");
    let labels: Vec<String> = dom.rects().into_iter().map(|r| r.text).collect();
    // `<module>` is a frame's name, drawn as text, not an element.
    assert!(labels.iter().any(|l| l.ends_with(":<module>")), "{labels:?}");
    assert!(!dom.0.contains("<module>"));
}

#[test]
fn the_op_table_sorts_by_every_column_and_filters_by_name() {
    let Some(browser) = Browser::find() else { return };
    let stats = fixture_stats("cnn");
    let ops = show::run(&stats, View::Op, &report_options()).unwrap().root;
    let (_dir, page) = report(&fixture_flags("cnn"));
    let by_name: std::collections::HashMap<&str, &Displayed> = ops.children.iter().map(|d| (d.name.as_str(), d)).collect();
    let columns = [
        ("exec_micros", (|d: &Displayed| d.own.exec_micros) as fn(&Displayed) -> i64),
        ("requested_bytes", |d| d.own.requested_bytes),
        ("float_ops", |d| d.own.float_ops),
        ("graph_nodes", |d| d.graph_nodes.len() as i64),
    ];
    for (key, get) in columns {
        for dir in ["desc", "asc"] {
            let dom = browser.render(&page, &format!("tab=ops&sort={key}:{dir}"));
            let (keys, rows) = dom.table("ops");
            let col = keys.iter().position(|k| k == key).unwrap();
            assert_eq!(rows.len(), ops.children.len(), "every op type is listed");
            let values: Vec<f64> = rows.iter().map(|r| r[col].1.unwrap()).collect();
            for (row, value) in rows.iter().zip(&values) {
                let op = by_name[row[0].0.as_str()];
                assert_eq!(*value, get(op) as f64, "{key} of {}", row[0].0);
            }
            let sorted = values.windows(2).all(|w| if dir == "desc" { w[0] >= w[1] } else { w[0] <= w[1] });
            assert!(sorted, "{key}:{dir}: {values:?}");
        }
    }
    let dom = browser.render(&page, "tab=ops&filter=^conv2d");
    let (_, rows) = dom.table("ops");
    let mut shown: Vec<&str> = rows.iter().map(|r| r[0].0.as_str()).collect();
    shown.sort_unstable();
    let matching = Regex::new("(?i)^conv2d").unwrap();
    let mut expected: Vec<&str> = ops.children.iter().map(|d| d.name.as_str()).filter(|n| matching.is_match(n)).collect();
    expected.sort_unstable();
    assert!(expected.len() >= 2);
    assert_eq!(shown, expected);
}

#[test]
fn the_steps_panel_charts_step_times_and_ranks_varying_nodes() {
    let Some(browser) = Browser::find() else { return };
    let stats = fixture_stats("cnn");
    let opts = report_options();
    let root = show::run(&stats, View::Scope, &opts).unwrap().root;
    let per_step = show::per_step(&stats, View::Scope, &opts);
    let summary = rtfprof::jobs::summarize("", &stats);
    let (_dir, page) = report(&fixture_flags("cnn"));
    let dom = browser.render(&page, "tab=steps");
    let bars = |class: &str| -> Vec<i64> {
        dom.all(&format!(r#"<rect [^>]*class="bar {class}"[^>]* data-v="(-?[0-9]+)""#)).iter().map(|v| v.parse().unwrap()).collect()
    };
    let op_time: Vec<i64> = per_step.values.iter().map(|v| v[root.index].exec_micros).collect();
    assert_eq!(op_time.len(), 3);
    assert_eq!(bars("s-op"), op_time);
    assert_eq!(bars("s-wall"), summary.steps.iter().map(|s| s.wall_micros).collect::<Vec<_>>());
    // The table of nodes, by standard deviation of their time, largest first.
    let (keys, rows) = dom.table("steps");
    let std_col = keys.iter().position(|k| k == "std").unwrap();
    let stds: Vec<f64> = rows.iter().map(|r| r[std_col].1.unwrap()).collect();
    assert!(stds.windows(2).all(|w| w[0] >= w[1]), "{stds:?}");
    let mut largest = 0.0f64;
    let mut stack = vec![&root];
    while let Some(node) = stack.pop() {
        stack.extend(&node.children);
        if !node.graph_nodes.is_empty() {
            let values = per_step.values.iter().map(|v| v[node.index].exec_micros).collect();
            largest = largest.max(rtfprof::outputs::table::Summary::of(values).std);
        }
    }
    assert!((stds[0] - largest).abs() < 1e-3, "{} vs {largest}", stds[0]);
}

#[test]
fn hostile_names_stay_text() {
    let dir = tempfile::tempdir().unwrap();
    // File names and node names from a profile are data, whatever they hold
    // (allocator names too). 1125 bytes is a tie (1.125 KB, exactly a
    // double) that printf rounds to even.
    let allocator = r#"</script><i>alloc</i>'\""#;
    let allocations = |records: &[(i64, i64)]| {
        let records: Vec<String> = records.iter().map(|(at, bytes)| format!("allocation_records {{ alloc_micros: {at} alloc_bytes: {bytes} }}")).collect();
        format!("memory {{ allocator_name: \"{allocator}\" {} }}", records.join(" "))
    };
    let graph = dir.path().join("g<title><b id=\"t\">.pbtxt");
    let evil = r#"x</script><script>document.title='pwned'</script><b id=\"pwned\">b</b>"#;
    std::fs::write(&graph, format!("node {{ name: \"{evil}\" op: \"<img src=x onerror=alert(1)>\" }}\nnode {{ name: \"<module>&amp;\" op: \"Add\" }}\n"))
        .unwrap();
    let run_meta = dir.path().join("run_meta.pbtxt");
    std::fs::write(
        &run_meta,
        format!(
            "step_stats {{ dev_stats {{ device: \"/job:localhost/replica:0/task:0/device:CPU:0\"\n node_stats {{ node_name: \"{evil}\" all_start_micros: 1 op_end_rel_micros: 40 {} }}\n node_stats {{ node_name: \"<module>&amp;\" all_start_micros: 1 op_end_rel_micros: 30 {} }} }} }}\n",
            allocations(&[(2, 1125), (5, -1125)]),
            allocations(&[(3, 64)]),
        ),
    )
    .unwrap();
    let args = vec!["report".to_owned(), format!("--graph_path={}", graph.display()), format!("--run_meta_path={}", run_meta.display())];
    let page = write_page(dir.path(), &args);
    let text = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&text);
    assert!(text.contains("<title>rtfprof report: "), "{}", &text[..400]);
    assert!(!text.contains("<b id") && !text.contains("pwned'</script>"));
    let Some(browser) = Browser::find() else { return };
    let evil_name = evil.replace("\\\"", "\"");
    let dom = browser.render(&page, &format!("tab=scope&hover={}", urlencode(&evil_name)));
    assert!(!dom.0.contains("<b id="), "markup from a name became an element");
    assert!(!dom.0.contains("<img"), "markup from an op type became an element");
    assert_eq!(dom.0.matches("<script").count(), 2);
    let title = dom.all(r"<title>(.*?)</title>");
    assert!(title[0].starts_with("rtfprof report: ") && title[0].contains("g<title><b id=\"t\">.pbtxt"), "{title:?}");
    // The names are drawn, as text, and the op type shows in the info bar.
    let labels: Vec<String> = dom.rects().into_iter().map(|r| r.text).collect();
    assert!(labels.iter().any(|l| l == "<module>&amp;"), "{labels:?}");
    let info = dom.all(r#"(?s)<div class="flame-info"[^>]*>(.*?)</div>"#).join("");
    assert!(info.contains(&evil_name) && info.contains("<img src=x onerror=alert(1)>"), "{info}");
    let dom = browser.render(&page, "tab=ops");
    let (_, rows) = dom.table("ops");
    assert!(rows.iter().any(|r| r[0].0 == "<img src=x onerror=alert(1)>"));
    // The memory tab: the allocator's and the live nodes' names as text.
    let dom = browser.render(&page, "tab=memory");
    assert!(!dom.0.contains("<i>") && !dom.0.contains("<b id="), "markup from a name became an element");
    assert_eq!(dom.0.matches("<script").count(), 2);
    let allocator = allocator.replace("\\\"", "\"");
    assert_eq!(dom.all(r#"<h2>([^<]*)</h2><p class="mfacts""#), std::slice::from_ref(&allocator));
    let drawn = drawn_allocators(&dom);
    assert_eq!(drawn.len(), 1);
    let (name, peak, _, _, live) = &drawn[0];
    assert_eq!(*name, allocator);
    assert_eq!(*peak, ("1.19KB".to_owned(), 1189));
    assert_eq!(*live, [(evil_name.clone(), "1.12KB".to_owned(), 1125), ("<module>&amp;".to_owned(), "64B".to_owned(), 64)]);
    assert_eq!(format::bytes(1125), "1.12KB");
}

/// `rtfprof memory --output json` for the same inputs.
fn memory_json(inputs: &[String]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("memory.json");
    let mut args = vec!["memory".to_owned()];
    args.extend(inputs.iter().cloned());
    args.push(format!("--output=json:outfile={}", out.display()));
    let run = rtfprof(&args).run();
    let (stdout, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok, "rtfprof {args:?}: {stdout}{err}");
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

/// The memory tab's allocators as drawn: name, peak bytes (shown text and
/// number), peak time (text and number), the peak marker's bytes, and the
/// live-at-peak table's rows (name, text of the bytes, bytes).
type DrawnAllocator = (String, (String, i64), (String, i64), i64, Vec<(String, String, i64)>);

fn drawn_allocators(dom: &Dom) -> Vec<DrawnAllocator> {
    // (An allocator's section holds no other section.)
    let sections: Vec<&str> = dom.0.split(r#"<section class="allocator""#).skip(1).map(|s| &s[..s.find("</section>").unwrap()]).collect();
    sections
        .iter()
        .map(|section| {
            let part = Dom(section.to_string());
            let name = part.all(r#"^ data-allocator="([^"]*)""#).remove(0);
            let number = |pattern: &str| -> (String, i64) {
                let re = Regex::new(pattern).unwrap();
                let c = re.captures(section).unwrap_or_else(|| panic!("{name}: no {pattern}"));
                (unescape_html(&c[2]), c[1].parse().unwrap())
            };
            let peak = number(r#"<strong class="mpeak-bytes" data-v="(-?\d+)">([^<]*)</strong>"#);
            let at = number(r#"<span class="mpeak-micros" data-v="(-?\d+)">([^<]*)</span>"#);
            let marker = part.all(r#"<circle class="mpeak"[^>]* data-bytes="(-?\d+)""#)[0].parse().unwrap();
            let live = part
                .tables("live")
                .into_iter()
                .flat_map(|(keys, rows)| {
                    assert_eq!(keys, ["name", "bytes", "share"]);
                    rows.into_iter().map(|r| (r[0].0.clone(), r[1].0.clone(), r[1].1.unwrap() as i64))
                })
                .collect();
            (name, peak, at, marker, live)
        })
        .collect()
}

/// The memory tab shows, for each step, what `rtfprof memory` computes:
/// every allocator with its peak and its live nodes, largest first, in the
/// project's number formats; without a step chosen, the step with the
/// highest peak. Inputs: run metadata, an event log, a profile (its GPU
/// allocators) and an XPlane trace with allocator events.
#[test]
fn the_memory_panel_shows_each_allocators_peak_and_live_nodes() {
    let Some(browser) = Browser::find() else { return };
    let inputs = [
        ("run_meta", fixture_flags("cnn")),
        ("events", vec![path_flag("events_path", "events/tutorial")]),
        ("profile", vec![path_flag("profile_path", "gpu_synth/profile")]),
        ("xplane", vec![path_flag("xplane_path", "xplane/gpu_synth")]),
    ];
    for (kind, args) in inputs {
        let expected = memory_json(&args);
        let steps = expected["steps"].as_array().unwrap();
        let (_dir, page) = report(&args);
        // Unchosen, the step with the highest peak (the first of equals).
        let highest = |s: &serde_json::Value| s["allocators"].as_object().unwrap().values().map(|a| a["peak_bytes"].as_i64().unwrap()).max().unwrap_or(0);
        let top = steps.iter().fold(&steps[0], |best, s| if highest(s) > highest(best) { s } else { best });
        let mut shown = vec![(String::new(), top)];
        // And two steps by name.
        shown.extend(steps.iter().take(2).map(|s| (format!("&mstep={}", s["step"]), s)));
        for (fragment, step) in shown {
            let dom = browser.render(&page, &format!("tab=memory{fragment}"));
            let context = format!("{kind} step {}", step["step"]);
            if steps.len() > 1 {
                let selected = dom.all(r#"<option value="\d+" selected="">step (\d+) "#);
                assert_eq!(selected, [step["step"].to_string()], "{context}");
            }
            let allocators = step["allocators"].as_object().unwrap();
            assert!(!allocators.is_empty(), "{context}: no allocators to test");
            let drawn = drawn_allocators(&dom);
            assert_eq!(drawn.iter().map(|a| a.0.as_str()).collect::<Vec<_>>(), allocators.keys().map(String::as_str).collect::<Vec<_>>(), "{context}");
            for (name, (peak_text, peak), (at_text, at), marker, live) in drawn {
                let a = &allocators[&name];
                let context = format!("{context} {name}");
                assert_eq!(peak, a["peak_bytes"].as_i64().unwrap(), "{context}");
                assert_eq!(marker, peak, "{context}: the chart's peak");
                assert_eq!(peak_text, format::bytes(peak), "{context}");
                assert_eq!(at, a["peak_micros"].as_i64().unwrap(), "{context}");
                assert_eq!(at_text, format::micros(at), "{context}");
                // Every live node, largest first (then by name), as the
                // JSON has them, in the shared byte format.
                let expected_live: std::collections::BTreeMap<&str, i64> =
                    a["live_at_peak"].as_object().unwrap().iter().map(|(n, b)| (n.as_str(), b.as_i64().unwrap())).collect();
                assert!(!expected_live.is_empty(), "{context}");
                assert_eq!(live.iter().map(|(n, _, b)| (n.as_str(), *b)).collect::<std::collections::BTreeMap<_, _>>(), expected_live, "{context}");
                assert_eq!(live.len(), expected_live.len(), "{context}: a node listed twice");
                assert!(live.windows(2).all(|w| (-w[0].2, &w[0].0) < (-w[1].2, &w[1].0)), "{context}: order {live:?}");
                for (node, text, bytes) in &live {
                    assert_eq!(*text, format::bytes(*bytes), "{context} {node}");
                }
            }
        }
    }
}

/// Without allocation records the tab says why, in one line, and draws no
/// chart.
#[test]
fn the_memory_panel_says_when_there_are_no_records() {
    let Some(browser) = Browser::find() else { return };
    let (_dir, page) = report(&[path_flag("profile_path", "cnn/profile")]);
    let dom = browser.render(&page, "tab=memory");
    let panel = dom.all(r#"(?s)<section class="panel on" id="panel-memory"[^>]*>(.*?)</section>"#);
    assert_eq!(
        panel,
        [
            "<p class=\"note mnone\">No allocation records: a ProfileProto keeps only those of GPU allocators (tfprof drops the others); the RunMetadata files have them all.</p>"
        ]
    );
}

/// On a JAX trace the memory tab also lists the XLA programs that ran, as
/// `rtfprof memory --output json` has them: each program's peak and every
/// buffer live there (JAX op, instruction, kind, shape, bytes), largest
/// first; with no allocator events (JAX on CPU), after the note.
#[test]
fn the_memory_panel_lists_the_xla_programs() {
    let Some(browser) = Browser::find() else { return };
    for fixture in ["xplane/jax_gpu_mlp", "xplane/jax_jit"] {
        let args = vec![path_flag("xplane_path", fixture)];
        let expected = memory_json(&args);
        let programs = expected["programs"].as_array().unwrap();
        assert!(!programs.is_empty(), "{fixture}");
        let (_dir, page) = report(&args);
        let dom = browser.render(&page, "tab=memory&pall.0=1");
        let sections: Vec<&str> = dom.0.split(r#"<section class="program""#).skip(1).map(|s| &s[..s.find("</section>").unwrap()]).collect();
        assert_eq!(sections.len(), programs.len(), "{fixture}");
        for (section, program) in sections.iter().zip(programs) {
            let name = format!("{} ({})", program["module"].as_str().unwrap(), program["program_id"]);
            assert!(section.starts_with(&format!(r#" data-program="{name}""#)), "{fixture}: {section}");
            let peak = program["peak_bytes"].as_i64().unwrap();
            assert!(section.contains(&format!(r#"<strong class="ppeak-bytes" data-v="{peak}">{}</strong>"#, format::bytes(peak))), "{fixture} {name}");
            let tables = Dom(section.to_string()).tables("pbuffers");
            assert_eq!(tables.len(), 1, "{fixture} {name}");
            let (keys, rows) = &tables[0];
            assert_eq!(keys, &["op", "bytes", "share", "kind", "instruction", "shape"]);
            let shown: Vec<(String, String, String, String, i64)> =
                rows.iter().map(|r| (r[0].0.clone(), r[4].0.clone(), r[3].0.clone(), r[5].0.clone(), r[1].1.unwrap() as i64)).collect();
            for r in rows {
                assert_eq!(r[1].0, format::bytes(r[1].1.unwrap() as i64), "{fixture} {name}");
            }
            assert!(shown.windows(2).all(|w| w[0].4 >= w[1].4), "{fixture} {name}: largest first");
            let mut listed: Vec<(String, String, String, String, i64)> = program["live_at_peak"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    let index: Vec<String> = b["shape_index"].as_array().unwrap().iter().map(|i| i.to_string()).collect();
                    let instruction = b["instruction"].as_str().unwrap().to_owned();
                    let instruction = if index.is_empty() { instruction } else { format!("{instruction}{{{}}}", index.join(",")) };
                    let text = |k: &str| b[k].as_str().unwrap().to_owned();
                    (text("op_name"), instruction, text("kind"), text("shape"), b["bytes"].as_i64().unwrap())
                })
                .collect();
            let mut sorted = shown.clone();
            sorted.sort();
            listed.sort();
            assert_eq!(sorted, listed, "{fixture} {name}");
        }
    }
}

fn urlencode(text: &str) -> String {
    text.bytes().map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}

#[test]
fn the_diff_page_draws_the_diff_tree_and_a_differential_flame_chart() {
    let side = |name: &str, model: &str| -> Vec<String> {
        let d = testdata().join(model);
        vec![
            format!("--{name}_graph_path={}", d.join("graph.pb").display()),
            format!("--{name}_run_meta_path={}", (0..3).map(|i| d.join(format!("run_meta_{i}")).display().to_string()).collect::<Vec<_>>().join(",")),
        ]
    };
    let mut args = s(&["diff", "--metric=bytes", "--delta=0.3", "--max_depth=100", "--names=b8,b4"]);
    args.extend(side("left", "cnn_b8"));
    args.extend(side("right", "cnn"));
    let run = rtfprof(&args).run();
    let (text, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok, "{err}");
    let listed: Vec<String> = text.lines().skip(4).map(|l| l.trim_start().split(" (").next().unwrap().to_owned()).collect();
    assert!(listed.len() > 3);
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(dir.path(), &args);
    assert_self_contained(&std::fs::read_to_string(&page).unwrap());
    let Some(browser) = Browser::find() else { return };
    let dom = browser.render(&page, "");
    // The diff tree lists the text report's nodes, in its order.
    assert_eq!(dom.all(r#"<span class="dname">([^<]*)</span>"#), listed);
    // The flame chart: a batch of 8 needs more bytes than one of 4 (red);
    // each node is as wide as its larger side.
    let rects = dom.rects();
    assert!(rects.len() > 3);
    let rgb = |css: &str| -> (u32, u32, u32) {
        let n: Vec<u32> = css.trim_start_matches("rgb(").trim_end_matches(')').split(", ").map(|x| x.parse().unwrap()).collect();
        (n[0], n[1], n[2])
    };
    let grown = rects.iter().filter(|r| {
        let (red, _, blue) = rgb(&r.background);
        red > blue
    });
    assert!(grown.count() >= 3, "no node drawn as grown");
    let root = rects.iter().find(|r| r.depth == 0).unwrap();
    let (red, _, blue) = rgb(&root.background);
    assert!(red > blue, "the root grew: {}", root.background);
}

/// A JAX GPU trace: the HLO ops and kernels tabs list what `rtfprof hlo`
/// and `rtfprof kernels` list, and the steps tab stacks each of XProf's
/// steps (as `rtfprof steps` splits it) up to its step time.
#[test]
fn jax_gpu_pages_show_hlo_ops_kernels_and_xprofs_steps() {
    let Some(browser) = Browser::find() else { return };
    let flag = format!("--xplane_path={}", testdata().join("xplane/jax_gpu_cnn").display());
    let (_dir, page) = report(std::slice::from_ref(&flag));
    for (tab, command, key, name_key) in [("hlo", "hlo", "hlo_ops", "hlo_op_name"), ("kernels", "kernels", "kernels", "kernel_name")] {
        let listed = common::rtfprof([command, &flag]).json()[key].as_array().unwrap().clone();
        let dom = browser.render(&page, &format!("tab={tab}&{tab}all=1"));
        let (keys, rows) = dom.table(tab);
        assert_eq!(rows.len(), listed.len(), "{tab}: every row");
        let occurrences = keys.iter().position(|k| k == "occurrences").unwrap();
        let total = keys.iter().position(|k| k == "total_us").unwrap();
        let totals: Vec<f64> = rows.iter().map(|r| r[total].1.unwrap()).collect();
        assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{tab}: longest first");
        let mut shown: Vec<(String, i64)> = rows.iter().map(|r| (r[0].0.clone(), r[occurrences].1.unwrap() as i64)).collect();
        let mut expected: Vec<(String, i64)> = listed.iter().map(|r| (r[name_key].as_str().unwrap().to_owned(), r["occurrences"].as_i64().unwrap())).collect();
        shown.sort();
        expected.sort();
        assert_eq!(shown, expected, "{tab}");
    }
    let steps = common::rtfprof(["steps", &flag]).json()["steps"].as_array().unwrap().clone();
    assert_eq!(steps.len(), 2);
    let dom = browser.render(&page, "tab=steps");
    for step in &steps {
        let name = step["step"].as_str().unwrap();
        let stacked: f64 = dom
            .all(&format!(r#"<rect [^>]*class="bar cat[0-9]"[^>]* data-step="{name}" data-v="([0-9.e-]+)""#))
            .iter()
            .map(|v| v.parse::<f64>().unwrap())
            .sum();
        let total = step["step_time_us"].as_f64().unwrap();
        assert!((stacked - total).abs() < 1e-6 * total.max(1.0), "step {name}: {stacked} stacked, {total} step time");
    }
}

/// The ranks tab: the heat map has a cell per rank and step holding the
/// step time `rtfprof ranks` gives (own time and exposed communication
/// with the switch), the straggler's row and only it is marked, the rule's
/// numbers are shown, and the table of ranks sorts by own time with the
/// straggler first.
#[test]
fn the_ranks_panel_maps_step_times_and_marks_the_straggler() {
    let Some(browser) = Browser::find() else { return };
    let flag = path_flag("pytorch_path", "pytorch/ranks16");
    let doc = common::rtfprof(["ranks", &flag]).json();
    let (_dir, page) = report(std::slice::from_ref(&flag));
    let ranks = doc["ranks"].as_array().unwrap();
    let cells = |dom: &Dom| -> Vec<(i64, String, f64)> {
        dom.all(r#"(<rect [^>]*class="hm-cell[^"]*"[^>]*>)"#)
            .iter()
            .map(|tag| {
                let a = attributes(tag);
                (a["data-rank"].parse().unwrap(), a["data-step"].clone(), a["data-v"].parse().unwrap())
            })
            .collect()
    };
    for (metric, value) in [
        ("step", (|s: &serde_json::Value| s["step_time_us"].as_f64().unwrap()) as fn(&serde_json::Value) -> f64),
        ("own", |s| s["step_time_us"].as_f64().unwrap() - s["exposed_communication_us"].as_f64().unwrap()),
        ("exposed", |s| s["exposed_communication_us"].as_f64().unwrap()),
    ] {
        let dom = browser.render(&page, &format!("tab=ranks&rmetric={metric}"));
        let drawn = cells(&dom);
        let expected: Vec<(i64, String, f64)> = ranks
            .iter()
            .flat_map(|r| r["steps"].as_array().unwrap().iter().map(move |s| (r["rank"].as_i64().unwrap(), s["step"].as_str().unwrap().to_owned(), value(s))))
            .collect();
        assert_eq!(drawn.len(), 32, "{metric}");
        for ((rank, step, v), (er, es, ev)) in drawn.iter().zip(&expected) {
            assert_eq!((rank, step), (er, es), "{metric}");
            assert!((v - ev).abs() <= 1e-9 * ev.abs().max(1.0), "{metric}: rank {rank} {step}: {v} drawn, {ev}");
        }
        let marked: Vec<String> = dom.all(r#"<text [^>]*class="axis rank-label straggler"[^>]* data-rank="([0-9]+)""#);
        assert_eq!(marked, ["11"], "{metric}");
        if metric == "own" {
            // Rank 11's cells are the darkest: the longest own time.
            let longest = drawn.iter().max_by(|a, b| a.2.total_cmp(&b.2)).unwrap();
            assert_eq!(longest.0, 11);
        }
        let named: Vec<String> = dom.all(r#"<code class="straggler" data-rank="([0-9]+)""#);
        assert_eq!(named, ["11"]);
        let threshold = format::micros_f64(doc["straggler_rule"]["threshold_us"].as_f64().unwrap());
        assert!(dom.0.contains(&format!("threshold {threshold}.")), "{metric}: the rule's threshold {threshold}");
    }
    let dom = browser.render(&page, "tab=ranks&rsort=own:desc");
    let (keys, rows) = dom.table("ranks");
    let (rank_col, own_col, flag_col) =
        (keys.iter().position(|k| k == "rank").unwrap(), keys.iter().position(|k| k == "own").unwrap(), keys.iter().position(|k| k == "straggler").unwrap());
    assert_eq!(rows.len(), 16);
    assert_eq!(rows[0][rank_col].1, Some(11.0));
    assert_eq!(rows[0][flag_col].0, "yes");
    assert!(rows[1..].iter().all(|r| r[flag_col].0.is_empty()));
    let owns: Vec<f64> = rows.iter().map(|r| r[own_col].1.unwrap()).collect();
    assert!(owns.windows(2).all(|w| w[0] >= w[1]), "{owns:?}");
    for row in &rows {
        let rank = &ranks[row[rank_col].1.unwrap() as usize];
        assert_eq!(row[0].0, rank["name"].as_str().unwrap());
        assert_eq!(row[own_col].1, rank["own_time_us"].as_f64());
    }
}
